# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Variables of this collection's namespaces that nothing reads (typos such as ``roce_vlan``).

Pure functions over variable names, so the action plugin stays thin and the unit tests need no
Ansible objects. Private to this collection."""

import difflib
import os

import yaml

COLLECTION = 'gpufabric.roce'
ROLES = ('preflight', 'host_network', 'network_operator', 'sriov_networks', 'rdma_verify')
PREFIXES = ('roce_',) + tuple('%s_' % r for r in ROLES)

# The shared inventory model of docs/inventory.md (one value read by several roles, not part of any
# single role's argument spec) and site.yml's rollout knobs (README, "Running at fleet scale").
# tests/unit/plugins/plugin_utils/test_unknown_vars.py keeps this list equal to what those documents name.
SHARED_ROCE_VARS = frozenset((
    'roce_pf', 'roce_sriov_pf', 'roce_num_vfs', 'roce_vfs', 'roce_vf_mode', 'roce_mtu', 'roce_vlan_id',
    'roce_pod_subnet', 'roce_pod_gateway', 'roce_node_name', 'roce_k8s_mode', 'roce_render_dir', 'roce_fabric_name',
    'roce_serial', 'roce_max_fail_percentage', 'roce_strategy',
    'roce_rails', 'roce_rail_overrides', 'roce_node_index',
))
SHOWN_HOSTS = 3
# Names users are known to reach for, and where that setting really lives.
MOVED = {
    'network_operator_image_pull_secrets': 'network_operator_airgap.image_pull_secrets',
}


def _load_yaml(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return yaml.safe_load(f)


def known_names(roles_dir, roles=ROLES):
    """Every variable a role declares: the options of all its argument-spec entry points and its
    defaults (a default without a spec entry is still read by the role)."""
    known = set(SHARED_ROCE_VARS)
    for role in roles:
        specs = (_load_yaml(os.path.join(roles_dir, role, 'meta', 'argument_specs.yml')) or {}).get('argument_specs') or {}
        for spec in specs.values():
            known.update((spec or {}).get('options') or {})
        known.update(_load_yaml(os.path.join(roles_dir, role, 'defaults', 'main.yml')) or {})
    return frozenset(known)


def in_namespace(name):
    return isinstance(name, str) and name.startswith(PREFIXES)


def find_unknown(host_var_names, known):
    """``host_var_names``: iterable of (host, names). Returns {name: [hosts]} in first-seen host order."""
    unknown = {}
    for host, names in host_var_names:
        for name in names:
            if in_namespace(name) and name not in known:
                unknown.setdefault(name, []).append(host)
    return unknown


def suggestion(name, known):
    if name in MOVED:
        return MOVED[name]
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
    if close:
        return close[0]
    # A prefix of a known name (roce_vlan -> roce_vlan_id) scores low on length alone.
    longer = sorted(k for k in known if k.startswith(name + '_'))
    return longer[0] if len(longer) == 1 else None


def warning_lines(unknown, known):
    """One line per unknown name: host(s), name, what happens, and the fix."""
    lines = []
    for name in sorted(unknown):
        hosts = unknown[name]
        shown = ', '.join(hosts[:SHOWN_HOSTS])
        if len(hosts) > SHOWN_HOSTS:
            shown += ' and %d other host%s' % (len(hosts) - SHOWN_HOSTS, '' if len(hosts) - SHOWN_HOSTS == 1 else 's')
        near = suggestion(name, known)
        fix = ('did you mean %s? Rename it' % near) if near else 'check its spelling against docs/inventory.md and the roles\' argument specs'
        lines.append('%s: %s is set but no role of %s reads it, so it has no effect. Fix: %s, or remove it'
                     % (shown, name, COLLECTION, fix))
    return lines

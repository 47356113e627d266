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
# single role's argument spec) and site.yml's rollout knobs (docs/fleet-scale.md).
# tests/unit/plugins/plugin_utils/test_unknown_vars.py keeps this list equal to what those documents name.
SHARED_ROCE_VARS = frozenset((
    'roce_pf', 'roce_sriov_pf', 'roce_num_vfs', 'roce_vfs', 'roce_vf_mode', 'roce_mtu', 'roce_vlan_id',
    'roce_pod_subnet', 'roce_pod_gateway', 'roce_node_name', 'roce_k8s_mode', 'roce_render_dir', 'roce_fabric_name',
    'roce_serial', 'roce_max_fail_percentage', 'roce_strategy', 'roce_teardown_crds', 'roce_teardown_remove_vfs',
    'roce_plan', 'roce_plan_out', 'roce_plan_artifact', 'roce_inventory_complete', 'roce_impact_out',
    'roce_impact',
    'roce_rails', 'roce_rail_overrides', 'roce_node_index',
    'roce_qos', 'roce_qos_via', 'roce_qos_unsupported', 'roce_nic_type', 'roce_pf_pci_address', 'roce_nic_config_node_selector',
))
SHOWN_HOSTS = 3
# How alike a name's leading words must be to a prefix to count as a typo of it (roc_ -> roce_: 0.86,
# sriov_network_ -> sriov_networks_: 0.96; rack_ -> roce_: 0.5).
NEAR_PREFIX = 0.75
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


def near_miss(name, known):
    """The known name ``name`` was meant to be when its prefix is a near miss of one of PREFIXES
    (``sriov_network_trust``, ``roc_mtu``, ``rdmaverify_tests``), else None. Only a name whose corrected
    form is known counts, so a variable of the user's own that merely looks alike is left alone."""
    if not isinstance(name, str) or in_namespace(name):
        return None
    parts = name.split('_')
    for prefix in PREFIXES:
        want = prefix[:-1]
        segments = want.count('_') + 1
        # The typo may drop or add an underscore inside the prefix (sriovnetworks_trust, rdma_ver_ify_tests).
        for n in (segments - 1, segments, segments + 1):
            if not 1 <= n < len(parts):
                continue
            head = '_'.join(parts[:n])
            if head != want and difflib.SequenceMatcher(None, head, want).ratio() >= NEAR_PREFIX:
                candidate = prefix + '_'.join(parts[n:])
                if candidate in known:
                    return candidate
    return None


def find_unknown(host_var_names, known):
    """``host_var_names``: iterable of (host, names). Returns {name: [hosts]} in first-seen host order: the unread
    names of the collection's namespaces and the near misses of its prefixes (see ``near_miss``)."""
    unknown, outside = {}, {}
    for host, names in host_var_names:
        for name in names:
            if in_namespace(name):
                if name in known:
                    continue
            elif not isinstance(name, str):
                continue
            else:
                # Inventories repeat the same names on every host: decide once per name.
                if name not in outside:
                    outside[name] = near_miss(name, known) is not None
                if not outside[name]:
                    continue
            unknown.setdefault(name, []).append(host)
    return unknown


def suggestion(name, known):
    if name in MOVED:
        return MOVED[name]
    near = near_miss(name, known)
    if near:
        return near
    # A prefix of a known name (roce_vlan -> roce_vlan_id) scores low on length alone, and lower than
    # a same-length name one letter away (roce_plan): the name the user began to write comes first.
    longer = sorted(k for k in known if k.startswith(name + '_'))
    if len(longer) == 1:
        return longer[0]
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
    return close[0] if close else None


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

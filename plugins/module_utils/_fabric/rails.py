# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rail model: a node's RoCE NICs, each on its own VLAN and pod subnet (see docs/inventory.md).

A rail-optimised GPU node has one ConnectX NIC per GPU; rail *i* of every node shares a switch
plane, a VLAN and an address plan. The inventory says it once for the cluster::

    roce_rails:
      - {name: rail0, pf: enp12s0np0, vlan: 101, subnet_pool: 10.101.0.0/16, subnet_prefix: 24}
      - {name: rail1, pf: enp18s0np0, vlan: 102, subnet_pool: 10.102.0.0/16, subnet_prefix: 24}

and each node gets the ``roce_node_index``-th subnet of every pool (index: the variable when set,
else the host's position in roce_nodes), its gateway the subnet's last host address. Explicit
per-node values win: ``roce_rail_overrides: {rail0: {pf: ens1f0np0, subnet: 10.101.9.0/24}}``.

Without ``roce_rails`` a node has the one rail of ``roce_pf``/``roce_vlan_id``/``roce_pod_subnet``/
``roce_pod_gateway`` and everything renders as before (:func:`node_rails` returns None).

The functions here only shape and derive; the address and webhook rules stay with the renderers,
which run them once per rail. Problems are returned as ``(field, value, problem, fix)`` tuples so
both error collectors (the gateway fabric's and the SR-IOV renderer's) can take them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import contextlib
import functools
import ipaddress
import re

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import (
    POD_SUBNET_EXAMPLE,
    GpufabricError,
    ident,
    pod_subnet_problem,
    shown_value,
    slug,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._common.vf_settings import VF_OPTIONS, validate_planned

RAIL_KEYS = ('name', 'pf', 'vlan', 'subnet', 'gateway', 'subnet_pool', 'subnet_prefix', 'num_vfs', 'mtu',
             'resource_name', 'network_name', 'routes', 'sriov_pf', 'vfs', 'qos', 'nic_type', 'pci_address', 'link_type', 'pkey')
# The pool describes the cluster, so a node overrides its own subnet instead of the pool. A rail's link_type is its
# switch plane's, the same on every node, so it is not a node's to override either.
OVERRIDE_KEYS = ('pf', 'vlan', 'subnet', 'gateway', 'num_vfs', 'mtu', 'resource_name', 'network_name', 'routes', 'sriov_pf',
                 'vfs', 'qos', 'nic_type', 'pci_address')
RAIL_NAME_RE = re.compile(r'[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?')
DEFAULT_SUBNET_PREFIX = 24
# A rail's link type: 'eth' (RoCE, the default) or 'ib' (InfiniBand: IPoIB on the VFs, no VLAN, no gateway).
LINK_TYPES = ('eth', 'ib')
# The largest IPoIB MTU of an InfiniBand rail, and its default: datagram mode on a 4K IB MTU (4096 less the 4-byte IPoIB
# header). SR-IOV VFs run mlx5's enhanced IPoIB, which has no connected mode (65520), so nothing larger works in a pod.
IPOIB_MTU_MAX = 4092
# What a key means on an Ethernet rail only: refused on an InfiniBand rail (or a one-rail InfiniBand node: ``what``),
# with why.
ETH_ONLY_REASONS = {
    'vlan': 'an InfiniBand {what} has no VLAN (its partition is the subnet manager\'s, by the VFs\' GUIDs)',
    'gateway': 'an InfiniBand {what} has no gateway: the pods of every node are on one IPoIB link and reach each other directly',
    'qos': 'DCB (trust, PFC, ECN) is Ethernet\'s; InfiniBand is lossless by its credit-based flow control, and its service '
           'levels are the subnet manager\'s',
    'vfs': 'per-VF settings are applied in host VF mode, which an InfiniBand {what} does not use (the operator gives its VFs their GUIDs)',
}
# pkey is a known key so that it is refused with the reason, not as a typo.
PKEY_PROBLEM = ('cannot be rendered: a SriovIBNetwork has no pkey field (sriov-network-operator v1.6.0, network-operator '
                '26.7), and the ib-sriov network the operator writes from it carries none, so the pods would not be in that partition')
PKEY_FIX = ('remove pkey; make the partition on the subnet manager (opensm partitions.conf or UFM) with the VFs\' GUIDs as '
            'members, or leave the rail in the default partition 0x7fff')
# The shared fabric variables' defaults when the inventory leaves them out: the one copy. The gateway planner, the
# SR-IOV and NicConfigurationTemplate renderers and the rails filter read it here, the roles' YAML through the
# gpufabric.roce.roce_default lookup (`roce_mtu | default(lookup('gpufabric.roce.roce_default', 'roce_mtu'))`).
# The last four are the rollout's: the Kubernetes mode and the host phases' batches (site.yml, teardown.yml).
ROCE_DEFAULTS = {'roce_num_vfs': 8, 'roce_mtu': 9000, 'roce_vlan_id': 100, 'roce_vf_mode': 'operator', 'roce_qos_via': 'host',
                 'roce_k8s_mode': 'apply', 'roce_serial': '100%', 'roce_strategy': 'linear', 'roce_max_fail_percentage': 0}

# What a rail's keys are called in the one-rail variables: the renderers' checks blame these,
# and rail_field() maps them back to the rail's own key for the message.
SHORTHAND_FIELDS = {
    'pf': 'roce_pf',
    'vlan': 'roce_vlan_id',
    'subnet': 'roce_pod_subnet',
    'gateway': 'roce_pod_gateway',
    'num_vfs': 'roce_num_vfs',
    'mtu': 'roce_mtu',
    'resource_name': 'sriov_networks_resource_name',
    'routes': 'sriov_networks_ipam_routes',
    'sriov_pf': 'roce_sriov_pf',
}
_FIELD_OF_SHORTHAND = {v: k for k, v in SHORTHAND_FIELDS.items()}


def rail_field(rail_name, field):
    """The inventory path a message names for ``field`` (a one-rail variable name) on rail ``rail_name``."""
    key = _FIELD_OF_SHORTHAND.get(field)
    if key is None:
        return field
    return 'roce_rails[%s].%s' % (rail_name, key)


def is_multirail(hv):
    rails = hv.get('roce_rails') if hv is not None else None
    return rails is not None and rails != []


def node_index(hv, position):
    """The node's index into every rail's subnet pool: ``roce_node_index`` or its place in roce_nodes."""
    raw = hv.get('roce_node_index')
    if raw is None:
        return position, None
    ok = (isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0) or (isinstance(raw, str) and raw.isascii() and raw.isdigit())
    if not ok:
        return None, ('roce_node_index', raw, 'is not a non-negative integer',
                      'set roce_node_index to this node\'s number in the cluster, 0 for the first node (or unset it to use the '
                      'host\'s position in roce_nodes, %d)' % position)
    return int(raw), None


def _pool_subnet(rail, index):
    """The ``index``-th subnet of the rail's pool, or a problem tuple."""
    # The types are part of the key: 24.0 and True are equal to 24 and 1 as keys, but no prefix length.
    args = (rail['name'], rail['subnet_pool'], rail.get('subnet_prefix'), type(rail['subnet_pool']), type(rail.get('subnet_prefix')))
    try:
        pool, prefix, problem = _pool(*args)
    except TypeError:  # a value that cannot be a cache key (a list where a prefix belongs): checked uncached
        pool, prefix, problem = _pool.__wrapped__(*args)
    if problem:
        return None, problem
    count = 1 << (prefix - pool.prefixlen)
    if index >= count:
        return None, ('roce_rails[%s].subnet_pool' % rail['name'], '%s' % pool,
                      'holds %d /%d subnets, but this node\'s index is %d' % (count, prefix, index),
                      'use a wider subnet_pool or a longer subnet_prefix, or set this rail\'s subnet for the node in '
                      'roce_rail_overrides.%s.subnet' % rail['name'])
    size = 1 << (pool.max_prefixlen - prefix)
    return ipaddress.ip_network((int(pool.network_address) + index * size, prefix)), None


# Every node of a rail shares its pool: parsed and checked once per pool, not once per node.
@functools.lru_cache(maxsize=1024)
def _pool(name, subnet_pool, raw_prefix, *_types):
    """The rail's pool and per-node prefix length, parsed and checked: ``(pool, prefix, problem tuple or None)``."""
    field = 'roce_rails[%s]' % name
    try:
        pool = ipaddress.ip_network('%s' % subnet_pool, strict=True)
    except ValueError:
        return None, None, (field + '.subnet_pool', subnet_pool, 'is not a network address in CIDR form',
                            'write it like 10.101.0.0/16 (no host bits set)')
    problem = pod_subnet_problem(pool)
    if problem:
        return None, None, (field + '.subnet_pool', subnet_pool, problem,
                            'set subnet_pool to %s, its own per rail, e.g. subnet_pool: 10.101.0.0/16 with subnet_prefix: 24' % POD_SUBNET_EXAMPLE)
    raw_prefix = DEFAULT_SUBNET_PREFIX if raw_prefix is None else raw_prefix
    longest = pool.max_prefixlen - (2 if pool.version == 4 else 1)
    prefix = _whole_number(raw_prefix)
    if prefix is None or not pool.prefixlen <= prefix <= longest:
        problem = 'is not a prefix length between the pool\'s /%d and /%d%s' % (
            pool.prefixlen, longest, '' if prefix is not None else ' (a whole number)')
        return None, None, (field + '.subnet_prefix', raw_prefix, problem,
                            'set subnet_prefix to the size of one node\'s pod subnet, e.g. %d' % max(pool.prefixlen, min(DEFAULT_SUBNET_PREFIX, longest)))
    return pool, prefix, None


def _whole_number(value):
    """``value`` as an int when it is a whole number (an int, or digits as a template renders them), else None: int()
    would take 24.5 as 24, or True as 1."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    return None


def last_host(subnet):
    # list(subnet.hosts()) would build 65k addresses for a /16; the last host is arithmetic.
    if subnet.num_addresses <= 2:
        return subnet[-1]
    return subnet[-2] if subnet.version == 4 else subnet[-1]


def _shape(rails, overrides):
    """Problems in the shape of roce_rails / roce_rail_overrides, before anything is derived."""
    problems = []
    if not isinstance(rails, list):
        return [('roce_rails', rails, 'must be a list of rails', 'write a YAML list of mappings with at least name and pf')]
    names = set()
    for i, rail in enumerate(rails):
        field = 'roce_rails[%d]' % i
        if not isinstance(rail, dict):
            problems.append((field, rail, 'must be a mapping', 'give at least name and pf, e.g. {name: rail%d, pf: enp12s0np0}' % i))
            continue
        unknown = sorted(set(rail) - set(RAIL_KEYS))
        if unknown:
            problems.append((field, unknown, 'unknown key(s)', 'use only: %s' % ', '.join(RAIL_KEYS)))
        name = rail.get('name')
        if not isinstance(name, str) or not RAIL_NAME_RE.fullmatch(name):
            problems.append((field + '.name', name, 'is not a rail name (1-15 lower-case letters, digits or "-")',
                             'name the rail like rail%d; it becomes part of object and resource names' % i))
        elif name in names:
            problems.append((field + '.name', name, 'is used by an earlier rail', 'give every rail its own name, e.g. rail%d' % i))
        else:
            names.add(name)
    if overrides is None:
        return problems
    if not isinstance(overrides, dict):
        return problems + [('roce_rail_overrides', overrides, 'must be a mapping of rail name to settings',
                            'write e.g. {rail0: {pf: ens1f0np0}}, or {} for none')]
    for name, values in overrides.items():
        field = 'roce_rail_overrides.%s' % name
        if name not in names:
            problems.append((field, name, 'names no rail of roce_rails (%s)' % ', '.join(sorted(names)) if names else 'roce_rails is empty',
                             'use one of the rail names of roce_rails'))
        elif not isinstance(values, dict):
            problems.append((field, values, 'must be a mapping', 'write e.g. {pf: ens1f0np0, subnet: 10.101.9.0/24}'))
        else:
            if 'link_type' in values:
                problems.append((field + '.link_type', values['link_type'], 'is the rail\'s for every node (a rail is one switch plane, '
                                 'Ethernet or InfiniBand), not a node\'s to override',
                                 'remove link_type from roce_rail_overrides.%s and set it on the rail in roce_rails' % name))
            unknown = sorted(set(values) - set(OVERRIDE_KEYS) - {'link_type'})
            if unknown:
                problems.append((field, unknown, 'unknown key(s)', 'a node may override only: %s' % ', '.join(OVERRIDE_KEYS)))
    return problems


def rail_link_type(rail):
    """The rail's link type as LINK_TYPES spells it, or None when ``link_type`` is not one (any case is taken, as the
    operator's linkType takes ETH and IB)."""
    raw = rail.get('link_type')
    if raw is None:
        return 'eth'
    value = raw.lower() if isinstance(raw, str) else None
    return value if value in LINK_TYPES else None


def is_ib(rail):
    return rail.get('link_type') == 'ib'


def _ib_problems(rail, override, field):
    """What an InfiniBand rail (after the node's overrides) has that only an Ethernet rail can use."""
    problems = []
    for key, why in ETH_ONLY_REASONS.items():
        for where, values in (('roce_rails', rail), ('roce_rail_overrides.%s' % rail['name'], override)):
            if values.get(key) is not None and not (key == 'vfs' and values[key] == []):  # qos: {} is QoS with its defaults
                problems.append((field + '.' + key, values[key], 'is set on an InfiniBand rail (link_type: ib): %s' % why.format(what='rail'),
                                 'remove %s from rail %s in %s' % (key, rail['name'], where)))
    return problems


def node_rails(hv, position, defaults=None):
    """The node's rails with the per-node values derived, or None for the one-rail shorthand.

    ``hv``: the node's variables (``roce_rails``, ``roce_rail_overrides``, ``roce_node_index``,
    ``roce_num_vfs``, ``roce_mtu``, ``roce_vlan_id``); ``position``: its index in roce_nodes;
    ``defaults``: fallbacks for num_vfs and mtu. Returns ``(rails, problems)``: each rail a dict of
    RAIL_KEYS minus subnet_prefix, plus qos_node (the node's own qos, when it has one) (subnet and gateway as strings,
    as an inventory would give them;
    routes default to the rail's pool),
    problems a list of ``(field, value, problem, fix)``. A rail with a problem is left out."""
    if not is_multirail(hv):
        return None, []
    defaults = defaults or {}
    rails, overrides = hv.get('roce_rails'), hv.get('roce_rail_overrides')
    problems = _shape(rails, overrides)
    if problems:
        return [], problems
    overrides = overrides or {}
    index, problem = node_index(hv, position)
    if problem:
        return [], [problem]
    if hv.get('roce_vfs'):
        # roce_vfs names VFs of the one PF; with rails it would set no rail's VFs, silently.
        problems.append(('roce_vfs', hv['roce_vfs'], 'is a one-rail setting and sets no VF when roce_rails is set',
                         "move each entry to the rail whose VFs it sets: roce_rail_overrides.<rail>.vfs for this node, "
                         "or vfs in roce_rails for every node"))
    # Likewise the one rail's pod network: each rail's subnet and gateway come from roce_rails.
    leftover = [k for k in ('roce_pod_subnet', 'roce_pod_gateway') if hv.get(k) not in (None, '')]
    if leftover:
        problems.append((leftover[0], hv[leftover[0]], 'is a one-rail setting and gives no rail its %s when roce_rails is set'
                         % ('subnet' if leftover[0] == 'roce_pod_subnet' else 'gateway'),
                         "remove %s from this node's variables: each rail's subnet and gateway come from its subnet_pool, or "
                         "for this node from roce_rail_overrides.<rail>.subnet and .gateway" % ' and '.join(leftover)))
    out = []
    for rail in rails:
        merged = dict(rail)
        override = overrides.get(rail['name'], {})
        # A node's qos is merged key by key over the rail's (_common.qos.effective_qos), not put in its place.
        merged.update({k: v for k, v in override.items() if v is not None and k != 'qos'})
        if override.get('qos') is not None:
            merged['qos_node'] = override['qos']
        field = 'roce_rails[%s]' % rail['name']
        if rail.get('pkey') is not None:
            problems.append((field + '.pkey', rail['pkey'], PKEY_PROBLEM, PKEY_FIX))
        link_type = rail_link_type(rail)
        if link_type is None:
            problems.append((field + '.link_type', rail['link_type'], 'is not a link type (%s)' % ' or '.join(LINK_TYPES),
                             'set link_type to eth (RoCE, the default) or ib (InfiniBand) on rail %s' % rail['name']))
            continue
        if link_type == 'ib':
            ib_problems = _ib_problems(rail, override, field)
            if ib_problems:
                problems.extend(ib_problems)
                continue
            merged['link_type'] = 'ib'
        else:
            merged.pop('link_type', None)  # the default: an Ethernet rail's data stays as it was before link types
        if not merged.get('pf'):
            problems.append((field + '.pf', merged.get('pf'), 'is not set',
                             'set pf in roce_rails (cluster-wide) or in roce_rail_overrides.%s.pf for this node' % rail['name']))
            continue
        for key, var in (('num_vfs', 'roce_num_vfs'), ('mtu', 'roce_mtu'), ('vlan', 'roce_vlan_id')):
            if link_type == 'ib' and key != 'num_vfs':
                continue  # no VLAN; roce_mtu is the Ethernet rails' (9000 would not fit IPoIB)
            if merged.get(key) is None:
                merged[key] = hv.get(var) if hv.get(var) is not None else defaults.get(var)
        if link_type == 'ib':
            if merged.get('mtu') is None:
                merged['mtu'] = IPOIB_MTU_MAX
            mtu = _whole_number(merged['mtu'])
            if mtu is not None and mtu > IPOIB_MTU_MAX:
                problems.append((field + '.mtu', merged['mtu'], 'is above %d, the largest IPoIB MTU of an InfiniBand VF (datagram mode on '
                                 'a 4K IB MTU; enhanced IPoIB has no connected mode)' % IPOIB_MTU_MAX,
                                 'set mtu of rail %s to %d or less, or leave it unset (%d)' % (rail['name'], IPOIB_MTU_MAX, IPOIB_MTU_MAX)))
                continue
        if merged.get('subnet') is None:
            if merged.get('subnet_pool') is None:
                problems.append((field + '.subnet', None, 'is not set and the rail has no subnet_pool',
                                 'set subnet_pool (and subnet_prefix) in roce_rails, or this node\'s subnet in roce_rail_overrides.%s.subnet'
                                 % rail['name']))
                continue
            subnet, problem = _pool_subnet(merged, index)
            if problem:
                problems.append(problem)
                continue
            merged['subnet'] = '%s' % subnet
            if merged.get('gateway') is None and link_type != 'ib':
                merged['gateway'] = '%s' % last_host(subnet)
        elif link_type == 'ib':
            pass  # no gateway
        elif merged.get('gateway') is None:
            # A bad subnet is left for the renderers' subnet check, which names it with its fix.
            with contextlib.suppress(ValueError):
                merged['gateway'] = '%s' % last_host(ipaddress.ip_network('%s' % merged['subnet'], strict=False))
        merged.pop('subnet_prefix', None)
        if merged.get('vfs') is not None:
            merged['vfs'], vf_problems = check_vfs(merged['vfs'], merged.get('num_vfs'), merged.get('sriov_pf') or merged['pf'], field + '.',
                                                   'in roce_rails or roce_rail_overrides.%s.vfs' % rail['name'])
            problems.extend(vf_problems)
        merged['routes'] = rail_routes(merged)
        out.append(merged)
    return out, problems


def rail_routes(rail):
    """The routes of the rail's pods: its own ``routes``, else the rail's plane only (the pool every node's subnet of the
    rail comes from): a pod has one net<N> per rail, and a default route on each would fight."""
    if rail.get('routes') is not None:
        return rail['routes']
    return [{'dst': '%s' % rail['subnet_pool']}] if rail.get('subnet_pool') else []


_VFS_SPEC = ArgumentSpecValidator({'vfs': {'type': 'list', 'elements': 'dict', 'options': VF_OPTIONS}})


def check_vfs(vfs, num_vfs, pf, prefix, fix_where):
    """Per-VF settings (sriov_vf's vfs option) converted as the module will, and checked against the VF count of ``pf``
    as sriov_vf checks them on the node: ``(vfs, problems)``. ``prefix``: what the fields are named under
    (``roce_rails[r0].`` for a rail, ``roce_`` for a one-rail node's roce_vfs); ``fix_where``: where they are set."""
    if not vfs:
        return [], []
    result = _VFS_SPEC.validate({'vfs': vfs})
    if result.error_messages:
        return [], [(prefix + 'vfs', vfs, '; '.join(result.error_messages),
                     'give each entry an integer id and only the sriov_vf vfs keys (%s), %s'
                     % (', '.join(VF_OPTIONS), fix_where))]
    vfs = [{k: v for k, v in vf.items() if v is not None} for vf in result.validated_parameters['vfs']]
    try:
        validate_planned('', pf, num_vfs=int(num_vfs) if num_vfs is not None else 0, vfs=vfs)
    except (TypeError, ValueError):
        return vfs, []  # num_vfs of the wrong type: the renderers' check names it
    except GpufabricError as exc:
        return vfs, [(prefix + exc.field, exc.value, exc.problem, '%s (%s)' % (exc.fix, fix_where))]
    return vfs, []


def shorthand_vars(rail):
    """The rail as the one-rail variables the renderers' per-node checks read."""
    out = {}
    for key, var in SHORTHAND_FIELDS.items():
        if rail.get(key) is not None:
            out[var] = rail[key]
    return out


def node_resource_name(name_prefix, node_name, per_node):
    """A one-rail node's default SR-IOV resourceName: ``<prefix>_<node>`` when each node has its own (host-local
    IPAM), else the cluster's one, ``<prefix>``."""
    return '%s_%s' % (ident(name_prefix), ident(node_name)) if per_node else ident(name_prefix)


def node_network_name(name_prefix, node_name):
    """A one-rail node's own SriovNetwork (host-local IPAM): ``<prefix>-<node>``."""
    return '%s-%s' % (name_prefix, slug(node_name))


def rail_resource_name(name_prefix, node_name, rail):
    """The rail's SR-IOV resourceName on a node (host-local IPAM: one per node and rail, so pods land
    on the node whose subnet they get): ``resource_name`` of the rail, else ``<prefix>_<node>_<rail>``."""
    return rail.get('resource_name') or '%s_%s_%s' % (ident(name_prefix), ident(node_name), ident(rail['name']))


def rail_network_name(name_prefix, node_name, rail):
    """The rail's SriovNetwork on a node: ``<network_name>-<node>``, else ``<prefix>-<node>-<rail>``."""
    if rail.get('network_name'):
        return '%s-%s' % (rail['network_name'], slug(node_name))
    return '%s-%s-%s' % (name_prefix, slug(node_name), rail['name'])


def rail_names_problems(names_by_host):
    """Every node must have the same rails, in the same order: a rail is one switch plane every node joins, routes
    stay on their rail, and verification tests rail *i* of a node against rail *i* of the next.
    ``names_by_host``: ``[(host, [rail names])]`` in roce_nodes order. The rails most nodes have are taken as
    meant (ties: the first node's), so one wrong host_vars line names that node, not the other 999.
    Returns ``(host, field, value, problem, fix)`` for the odd nodes."""
    counts, first = {}, {}
    for host, names in names_by_host:
        key = tuple(names)
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, host)
    if len(counts) < 2:
        return []
    order = {h: i for i, (h, _names) in enumerate(names_by_host)}
    meant = max(counts, key=lambda k: (counts[k], -order[first[k]]))
    others = counts[meant] - 1
    where = '%s%s' % (first[meant], ' and %d other node%s' % (others, '' if others == 1 else 's') if others else '')
    return [(host, 'roce_rails', list(names), 'the node\'s rails differ from the rails %s of %s: every node must have the same rails '
             'in the same order (a rail is one switch plane; verification tests rail i to rail i)' % (shown_value(list(meant)), where),
             'set roce_rails once for all nodes (group_vars/roce_nodes) and remove it from this node\'s host_vars; '
             'change a node\'s pf, subnet or gateway of a rail in roce_rail_overrides.<rail>')
            for host, names in names_by_host if tuple(names) != meant]


def odd_ones(rails_by_host, hosts, value_of, counted=lambda rail: True):
    """Per rail, the value most nodes give it (ties: the first node's) and the nodes that give another:
    ``[(rail, meant, first node with it, [(host, value)])]``. ``value_of(rail)``: a rail's value; ``counted(rail)``: whether
    the rail takes part."""
    per_rail = {}
    for host in hosts:
        for rail in rails_by_host.get(host) or []:
            if counted(rail):
                per_rail.setdefault(rail['name'], []).append((host, value_of(rail)))
    out = []
    for name, entries in per_rail.items():
        counts, first = {}, {}
        for host, value in entries:
            key = '%s' % value
            counts[key] = counts.get(key, 0) + 1
            first.setdefault(key, host)
        order = {h: i for i, (h, _v) in enumerate(entries)}
        meant = max(counts, key=lambda v: (counts[v], -order[first[v]]))
        odd = [(host, value) for host, value in entries if '%s' % value != meant]
        if odd:
            out.append((name, meant, first[meant], odd))
    return out


def vlan_problems(rails_by_host, hosts):
    """Every Ethernet rail must use one VLAN on every node: ``(host, field, value, problem, fix)`` for the odd ones.

    The majority VLAN of a rail is taken as meant (ties: the first node's), so one wrong host_vars
    line names that node, not the other 999. An InfiniBand rail has no VLAN; a rail whose link type differs between
    nodes is named by ``link_type_problems``."""
    return [(host, 'roce_rails[%s].vlan' % name, vlan,
             'differs from VLAN %s that %s and the other nodes use on rail %s' % (meant, first, name),
             'use one VLAN per rail on every node: drop the node\'s override or set it to %s' % meant)
            for name, meant, first, odd in odd_ones(rails_by_host, hosts, lambda r: r.get('vlan'), lambda r: not is_ib(r))
            for host, vlan in odd]


def link_type_problems(rails_by_host, hosts):
    """Every rail must have one link type on every node (a rail is one switch plane, Ethernet or InfiniBand): the
    majority's is taken as meant (ties: the first node's) and the odd nodes are named."""
    return [(host, 'roce_rails[%s].link_type' % name, link_type,
             'differs from link type %s that %s and the other nodes have on rail %s: a rail is one switch plane, Ethernet or '
             'InfiniBand, on every node' % (meant, first, name),
             'give rail %s one link_type for every node: set it once in roce_rails (group_vars/roce_nodes) and remove this '
             'node\'s own roce_rails from its host_vars' % name)
            for name, meant, first, odd in odd_ones(rails_by_host, hosts, lambda r: r.get('link_type') or 'eth')
            for host, link_type in odd]

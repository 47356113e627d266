# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Derive the nodes' vlan_gateway arguments from the shared roce_* inventory variables
(see docs/inventory.md). Pure logic behind the gpufabric.roce._vlan_gateway_fabric and
gpufabric.roce.vlan_gateway_plan filters.

At fleet scale the whole group is validated once (``fabric_table``: O(N log N), every problem
reported at once) and each node then reads its own slice (``gateway_args``: O(N) for its routes)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import ipaddress
import json

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import (
    IPV6_UNSUPPORTED,
    MTU_MAX,
    MTU_MIN,
    POD_SUBNET_EXAMPLE,
    GpufabricError,
    GpufabricErrors,
    check_ifname,
    pod_subnet_problem,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._common.qos import QosCache
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import (
    ETH_ONLY_REASONS,
    IPOIB_MTU_MAX,
    ROCE_DEFAULTS,
    check_vfs,
    is_ib,
    link_type_problems,
    node_rails,
    odd_ones,
    rail_field,
    rail_names_problems,
    shorthand_vars,
)

FABRIC_KIND = 'vlan_gateway_fabric'
PF_NAME_FIX = ('set %s to the PF netdev name as `ip link` shows it: at most 15 characters of letters, digits, "_", "." and "-", '
               'not starting with "-" or ".", e.g. enp157s0np0')
# Enough to fix a systematic mistake (a wrong group_vars line hits every node) without
# flooding the terminal with 1,000 identical lines.
MAX_LISTED = 20
# Why a node with InfiniBand (a rail, or its one rail) cannot use roce_vf_mode: host, and the fix.
IB_HOST_VF_MODE = 'host VF mode makes VFs without the GUIDs an InfiniBand VF needs (the sriov-network-operator assigns them)'
IB_HOST_VF_MODE_FIX = 'set roce_vf_mode to operator on this node'


class FabricErrors(GpufabricErrors):
    """Several nodes are wrong: one line per problem, each naming host, field, value and fix. ``where``: what the
    problems are in, for the first line."""

    def __init__(self, errors, where='the pod network of the nodes'):
        lines = ['%s' % e for e in errors[:MAX_LISTED]]
        if len(errors) > MAX_LISTED:
            lines.append('... and %d more problems of the same kinds' % (len(errors) - MAX_LISTED))
        super(FabricErrors, self).__init__(errors, '%d problems in %s:\n%s' % (len(errors), where, '\n'.join(lines)))


def _raise(errors):
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise FabricErrors(errors)


def _get(rows, host, key, default=None):
    try:
        value = rows[host][key]
    except KeyError:
        return default
    return default if value is None else value


SUBNET_FIX = ('set roce_pod_subnet to %s, disjoint from the other nodes\', and roce_pod_gateway to a host address in it, '
              'e.g. roce_pod_subnet: 10.255.0.0/30 with roce_pod_gateway: 10.255.0.2' % POD_SUBNET_EXAMPLE)


def node_fabric(rows, host, subnet_fix=SUBNET_FIX, ib=False):
    """Validated pod network of one node: pf, vlan_id, mtu, subnet, gateway, and sriov_pf (the PF whose VFs are made:
    roce_sriov_pf, else pf). ``subnet_fix``: how to fix a
    subnet outside the address rules, in the words of the variable the user wrote (a rail's own). ``ib``: an InfiniBand
    rail, which has neither VLAN nor gateway (pf, mtu, subnet only)."""
    pf = _get(rows, host, 'roce_pf')
    if not pf:
        raise GpufabricError(host, 'roce_pf', None, 'is not set', 'set roce_pf to the PF netdev carrying the fabric, e.g. enp157s0np0')
    # Refused here, in the validation play, not first on the node (vlan_gateway, sriov_vf): the names go into
    # ip commands and persisted units.
    check_ifname(host, 'roce_pf', pf, PF_NAME_FIX % 'roce_pf')
    sriov_pf = _get(rows, host, 'roce_sriov_pf')
    if sriov_pf not in (None, ''):
        check_ifname(host, 'roce_sriov_pf', sriov_pf, PF_NAME_FIX % 'roce_sriov_pf' + ' (or leave it unset: it defaults to roce_pf)')
    raw_vlan = None if ib else _get(rows, host, 'roce_vlan_id', ROCE_DEFAULTS['roce_vlan_id'])
    try:
        vlan_id = int(raw_vlan)
    except (TypeError, ValueError):
        vlan_id = -1
    if not ib and not 1 <= vlan_id <= 4094:
        raise GpufabricError(host, 'roce_vlan_id', raw_vlan, 'is not a VLAN id in 1..4094',
                             'set roce_vlan_id to 1..4094 (default %d)' % ROCE_DEFAULTS['roce_vlan_id'])
    raw_mtu = _get(rows, host, 'roce_mtu', IPOIB_MTU_MAX if ib else ROCE_DEFAULTS['roce_mtu'])
    try:
        mtu = int(raw_mtu)
    except (TypeError, ValueError):
        raise GpufabricError(host, 'roce_mtu', raw_mtu, 'is not an integer', 'set roce_mtu to the MTU of the VFs and gateway, e.g. 9000') from None
    if not MTU_MIN <= mtu <= MTU_MAX:
        # The SR-IOV render's rule (the VFs share the MTU): here too, so that a plan read back (roce_plan) is held to it.
        raise GpufabricError(host, 'roce_mtu', raw_mtu, 'must be between %d and %d (bytes)' % (MTU_MIN, MTU_MAX),
                             'set roce_mtu to the VF MTU, e.g. 9000 (must not exceed the PF MTU)')
    raw_subnet = _get(rows, host, 'roce_pod_subnet')
    if raw_subnet is None:
        raise GpufabricError(host, 'roce_pod_subnet', None, 'is not set', "set roce_pod_subnet to this node's pod subnet, e.g. 10.255.0.0/30")
    try:
        subnet = ipaddress.ip_network('%s' % raw_subnet, strict=False)
    except ValueError:
        raise GpufabricError(host, 'roce_pod_subnet', raw_subnet, 'is not a CIDR network', 'write it like 10.255.0.0/30') from None
    if '%s' % subnet != '%s' % raw_subnet:
        raise GpufabricError(host, 'roce_pod_subnet', raw_subnet, 'is not a network address in CIDR form (host bits set or no prefix)',
                             'use %s' % subnet if '/' in '%s' % raw_subnet else 'add the prefix length, e.g. %s/30' % raw_subnet)
    problem = pod_subnet_problem(subnet)
    if problem:
        raise GpufabricError(host, 'roce_pod_subnet', raw_subnet, problem, subnet_fix)
    if ib:
        return {'pf': '%s' % pf, 'mtu': mtu, 'subnet': subnet, 'link_type': 'ib', 'sriov_pf': sriov_pf or '%s' % pf}
    raw_gw = _get(rows, host, 'roce_pod_gateway')
    if raw_gw is None:
        raise GpufabricError(host, 'roce_pod_gateway', None, 'is not set',
                             "set roce_pod_gateway to this node's gateway address inside %s" % subnet)
    try:
        gateway = ipaddress.ip_address('%s' % raw_gw)
    except ValueError:
        raise GpufabricError(host, 'roce_pod_gateway', raw_gw, 'is not an IP address (no prefix length)',
                             'write the plain address, e.g. %s' % next(subnet.hosts(), subnet.network_address)) from None
    if gateway not in subnet:
        raise GpufabricError(host, 'roce_pod_gateway', raw_gw, 'is outside roce_pod_subnet %s' % subnet,
                             'set roce_pod_gateway to a host address inside %s, e.g. %s' % (subnet, _last_host(subnet)))
    if subnet.version == 4 and subnet.prefixlen < 31 and gateway in (subnet.network_address, subnet.broadcast_address):
        raise GpufabricError(host, 'roce_pod_gateway', raw_gw, 'is the network or broadcast address of %s' % subnet,
                             'use a host address of %s, e.g. %s' % (subnet, _last_host(subnet)))
    return {'pf': '%s' % pf, 'vlan_id': vlan_id, 'mtu': mtu, 'subnet': subnet, 'gateway': gateway, 'sriov_pf': sriov_pf or '%s' % pf}


def _last_host(subnet):
    # list(subnet.hosts()) would build 65k addresses for a /16; the last host is arithmetic.
    if subnet.num_addresses <= 2:
        return subnet[-1]
    return subnet[-2] if subnet.version == 4 else subnet[-1]


def _overlaps(nodes, fabric):
    """Every node whose pod subnet overlaps an earlier one, by one sweep over the sorted subnets.

    CIDR blocks are nested or disjoint, so after sorting by first address a block overlaps the
    group iff it starts before the furthest end seen so far: O(N log N), not N^2 comparisons."""
    order = {n: i for i, n in enumerate(nodes)}
    errors, reported = [], set()
    cur = None  # (version, last address, node) with the furthest end so far
    for node in sorted(nodes, key=lambda n: (fabric[n]['subnet'].version, int(fabric[n]['subnet'].network_address), order[n])):
        net = fabric[node]['subnet']
        first, last = int(net.network_address), int(net.broadcast_address)
        if cur is not None and cur[0] == net.version and first <= cur[1]:
            a, b = sorted((cur[2], node), key=order.get)
            # One line per node: the node a wide block overlaps several times is named once.
            if b not in reported:
                reported.add(b)
                errors.append(GpufabricError(b, 'roce_pod_subnet', '%s' % fabric[b]['subnet'],
                                             'overlaps roce_pod_subnet %s of %s' % (fabric[a]['subnet'], a),
                                             'give every node of roce_nodes a disjoint pod subnet, e.g. consecutive /30s'))
        if cur is None or cur[0] != net.version or last > cur[1]:
            cur = (net.version, last, node)
    return sorted(errors, key=lambda e: order[e.host])


def _vlan_errors(nodes, fabric):
    """Nodes whose VLAN differs from the one most nodes use (ties: the first node's)."""
    counts = {}
    for n in nodes:
        counts[fabric[n]['vlan_id']] = counts.get(fabric[n]['vlan_id'], 0) + 1
    first_of = {}
    for n in nodes:
        first_of.setdefault(fabric[n]['vlan_id'], n)
    vlan = max(counts, key=lambda v: (counts[v], -nodes.index(first_of[v])))
    ref = first_of[vlan]
    others = counts[vlan] - 1
    where = '%s and %d other node%s' % (ref, others, '' if others == 1 else 's') if others else ref
    return [GpufabricError(n, 'roce_vlan_id', fabric[n]['vlan_id'], 'differs from roce_vlan_id %d of %s' % (vlan, where),
                           'use one roce_vlan_id for all roce_nodes (set it in group_vars/roce_nodes)')
            for n in nodes if fabric[n]['vlan_id'] != vlan]


# What node_rails reads of a node; the plan builder's view of the inventory only answers lookups by key.
_RAIL_VARS = ('roce_rails', 'roce_rail_overrides', 'roce_node_index', 'roce_num_vfs', 'roce_mtu', 'roce_vlan_id', 'roce_vfs',
              'roce_pod_subnet', 'roce_pod_gateway')


def hosts_named(hosts):
    """The nodes that share one problem, as one message names them: the first, then how many others and which."""
    if len(hosts) == 1:
        return hosts[0]
    others = len(hosts) - 1
    return '%s (and %d other node%s: %s%s)' % (
        hosts[0], others, '' if others == 1 else 's', ', '.join(hosts[1:4]), ', ...' if len(hosts) > 4 else '')


def grouped(errors):
    """One error per distinct problem, naming every node that has it: a value edited, or changed in group_vars, on
    every node is one line, not one per node."""
    groups = {}
    for e in errors:
        groups.setdefault((e.field, json.dumps(e.value, sort_keys=True, default=str), e.problem, e.fix), []).append(e)
    return [same[0] if len(same) == 1 else
            GpufabricError(hosts_named([e.host for e in same]), same[0].field, same[0].value, same[0].problem, same[0].fix)
            for same in groups.values()]


def node_rail_fabric(rows, host, position, qos_cache=None):
    """Validated pod network of every rail of a node with ``roce_rails``, or None for a one-rail node.

    Each rail is checked by the one-rail rules (``node_fabric``) and blamed by its own key
    (``roce_rails[rail3].subnet``), so host, rail, field, value and fix are all in the message."""
    if not _get(rows, host, 'roce_rails'):
        return None, []  # the common one-rail node: one read, not six
    hv = {k: _get(rows, host, k) for k in _RAIL_VARS}
    rails, problems = node_rails(hv, position, ROCE_DEFAULTS)
    if rails is None:
        return None, []
    errors = [GpufabricError(host, field, value, problem, fix) for field, value, problem, fix in problems]
    ib_rails = [r['name'] for r in rails if is_ib(r)]
    if ib_rails and _get(rows, host, 'roce_vf_mode') == 'host':
        errors.append(GpufabricError(host, 'roce_vf_mode', 'host', 'is set on a node with InfiniBand rails (%s): %s'
                                     % (', '.join(ib_rails), IB_HOST_VF_MODE), IB_HOST_VF_MODE_FIX))
    cluster_qos = _get(rows, host, 'roce_qos')
    out = []
    for rail in rails:
        try:
            f = node_fabric({host: shorthand_vars(rail)}, host, subnet_fix=(
                'set the subnet of rail %s (roce_rail_overrides.%s.subnet for this node, or subnet_pool in roce_rails) to %s, '
                'disjoint from the other rails\' and nodes\', e.g. 10.101.0.0/24' % (rail['name'], rail['name'], POD_SUBNET_EXAMPLE)),
                ib=is_ib(rail))
        except GpufabricError as exc:
            errors.append(GpufabricError(host, rail_field(rail['name'], exc.field), exc.value, exc.problem, exc.fix))
            continue
        problem = _num_vfs_problem(host, rail_field(rail['name'], 'roce_num_vfs'), rail.get('num_vfs'),
                                   'set num_vfs of rail %s (roce_rails, or roce_rail_overrides.%s.num_vfs for this node) or roce_num_vfs '
                                   'to the number of VFs, e.g. 8' % (rail['name'], rail['name']))
        if problem:
            errors.append(problem)
            continue
        f['rail'] = rail['name']
        _with_vfs(f, rail.get('num_vfs'), rail.get('vfs'))
        if is_ib(rail):
            out.append(f)  # roce_qos is the Ethernet rails' (DCB); an InfiniBand rail's own qos is refused by node_rails
            continue
        qos, problems = (qos_cache or QosCache()).get(cluster_qos, rail.get('qos'), rail.get('qos_node'), rail['name'])
        errors.extend(GpufabricError(host, *p) for p in problems)
        if qos is not None:
            f['qos'] = qos
        out.append(f)
    return out, errors


def _num_vfs_problem(host, field, num_vfs, fix):
    """sriov_vf creates this many VFs in host mode: refused here, not first on the node."""
    if isinstance(num_vfs, bool) or not (isinstance(num_vfs, int) or (isinstance(num_vfs, str) and num_vfs.isascii() and num_vfs.isdigit())) \
            or int(num_vfs) < 0:
        return GpufabricError(host, field, num_vfs, 'is not a VF count (a whole number, 0 or more)', fix)
    return None


def _with_vfs(f, num_vfs, vfs):
    """A rail's VF settings, a one-rail node's as a rail's: the VF count and the per-VF settings, only when set (the
    table of 1,000 nodes x 8 rails stays small). The PF whose VFs are made is node_fabric's ``sriov_pf``."""
    f['num_vfs'] = num_vfs
    if vfs:
        f['vfs'] = vfs
    return f


def _one_rail_vfs(rows, host, f):
    """The VF settings of a one-rail node (roce_num_vfs, roce_sriov_pf, roce_vfs) into its entry ``f``, as node_rails
    gives a rail's; the problems found."""
    num_vfs = _get(rows, host, 'roce_num_vfs', ROCE_DEFAULTS['roce_num_vfs'])
    problem = _num_vfs_problem(host, 'roce_num_vfs', num_vfs, 'set roce_num_vfs to the number of VFs, e.g. 8')
    if problem:
        return [problem]
    vfs, problems = check_vfs(_get(rows, host, 'roce_vfs'), num_vfs, f['sriov_pf'], 'roce_', 'in roce_vfs')
    _with_vfs(f, num_vfs, vfs)
    return [GpufabricError(host, *p) for p in problems]


def _rail_overlaps(entries):
    """Overlapping pod subnets among ``(host, rail, fabric)`` entries (every rail of every node): one sweep,
    as in ``_overlaps``. Rails share no subnet either: a node routes each rail's plane by address."""
    errors, reported = [], set()
    cur = None
    for i, (host, rail, f) in sorted(enumerate(entries), key=lambda e: (e[1][2]['subnet'].version, int(e[1][2]['subnet'].network_address), e[0])):
        net = f['subnet']
        first, last = int(net.network_address), int(net.broadcast_address)
        if cur is not None and cur[0] == net.version and first <= cur[1] and (host, rail) not in reported:
            reported.add((host, rail))
            other_host, other_rail, other = entries[cur[2]]
            errors.append(GpufabricError(host, rail_field(rail, 'roce_pod_subnet') if rail else 'roce_pod_subnet', '%s' % net,
                                         'overlaps the subnet %s of %s%s' % (other['subnet'], other_host, ' (rail %s)' % other_rail if other_rail else ''),
                                         'give every rail a subnet_pool of its own, disjoint from the other rails\' and the one-rail nodes\' '
                                         'roce_pod_subnet, and every node its own roce_node_index' if rail else
                                         'give every node of roce_nodes a disjoint pod subnet, e.g. consecutive /30s'))
        if cur is None or cur[0] != net.version or last > cur[1]:
            cur = (net.version, last, i)
    return errors


def _rail_vlan_errors(entries):
    by_rail = {}
    for host, rail, f in entries:
        if rail and 'vlan_id' in f:  # an InfiniBand rail has none
            by_rail.setdefault(rail, []).append((host, f))
    errors = []
    for rail, members in by_rail.items():
        nodes = [h for h, _f in members]
        fabric = dict(members)
        for e in _vlan_errors(nodes, fabric):
            errors.append(GpufabricError(e.host, rail_field(rail, 'roce_vlan_id'), e.value, e.problem.replace('roce_vlan_id', 'the VLAN of rail %s,' % rail),
                                         'use one VLAN per rail on every node: drop the node\'s override of roce_rails[%s].vlan' % rail))
    return errors


def _multirail_table(nodes, rails):
    """fabric_table for an inventory whose nodes have roce_rails (every node: a mix is refused before): every rule per
    rail."""
    entries = [(n, f['rail'], f) for n in nodes for f in rails.get(n, [])]
    # A rail whose link type differs between nodes is named for that, not for a VLAN the InfiniBand nodes lack.
    link_types = {n: [{'name': f['rail'], 'link_type': f.get('link_type')} for f in rs] for n, rs in rails.items()}
    mixed = [GpufabricError(*p) for p in link_type_problems(link_types, nodes)]
    _raise(_rail_overlaps(entries) + (mixed or _rail_vlan_errors(entries)))
    profiles = _QosProfiles()
    table = {'kind': FABRIC_KIND, 'vlan_id': None, 'nodes': {n: {'rails': [profiles.rail(f, f['rail']) for f in rails[n]]} for n in nodes}}
    return profiles.into(table)


def _plain_fabric(f):
    if f.get('link_type') == 'ib':
        return {'pf': f['pf'], 'link_type': 'ib', 'mtu': f['mtu'], 'subnet': '%s' % f['subnet']}
    return {'pf': f['pf'], 'vlan_id': f['vlan_id'], 'mtu': f['mtu'], 'subnet': '%s' % f['subnet'], 'gateway': '%s' % f['gateway']}


class _QosProfiles:
    """The table's QoS settings by reference: each distinct setting once in ``qos_profiles``, each rail naming its
    profile by index (80,000 rails share a handful). No QoS anywhere: the table is as it was before QoS existed."""

    def __init__(self):
        self.profiles, self._index = [], {}

    def plain(self, f):
        out = _plain_fabric(f)
        if f.get('qos') is not None:
            key = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(f['qos'].items()))
            if key not in self._index:
                self._index[key] = len(self.profiles)
                self.profiles.append(f['qos'])
            out['qos'] = self._index[key]
        return out

    def rail(self, f, name):
        """A rail's entry in the table (a one-rail node's one rail is named '')."""
        out = dict(self.plain(f), rail=name, num_vfs=f['num_vfs'], sriov_pf=f['sriov_pf'])
        if f.get('vfs'):
            out['vfs'] = f['vfs']
        return out

    def into(self, table):
        if self.profiles:
            table['qos_profiles'] = self.profiles
        return table


def _mixed_rail_errors(nodes, rails, fabric):
    """A fabric is one-rail (roce_pf, roce_pod_subnet, ...) or rails (roce_rails) on every node, not both: a one-rail
    node shares no plane with the rails, so neither its routes nor the rails' would reach the other. The kind most
    nodes have is taken as meant (ties: rails), so the odd nodes are named. ``rails``: the nodes with roce_rails."""
    with_rails = [n for n in nodes if n in rails]
    if not with_rails or len(with_rails) == len(nodes):
        return []
    one_rail = [n for n in nodes if n not in rails]
    fix = ('use one kind for every node of roce_nodes: set roce_rails for all of them (group_vars/roce_nodes; a node\'s own pf, '
           'subnet and gateway of a rail go in roce_rail_overrides.<rail>), or remove roce_rails everywhere and give each node '
           'roce_pf, roce_pod_subnet and roce_pod_gateway')
    if len(with_rails) >= len(one_rail):
        ref = _with_others(with_rails)
        return [GpufabricError(n, 'roce_rails', None, 'is not set on this node (a one-rail node%s), but %s %s roce_rails; '
                               'one fabric cannot mix the two' % (
                                   ': roce_pod_subnet %s' % fabric[n]['subnet'] if n in fabric else '', ref,
                                   'has' if len(with_rails) == 1 else 'have'), fix)
                for n in one_rail]
    ref = _with_others(one_rail)
    return [GpufabricError(n, 'roce_rails', [f['rail'] for f in rails[n]],
                           'is set on this node, but %s %s the one-rail variables (roce_pf, roce_pod_subnet) and no roce_rails; '
                           'one fabric cannot mix the two' % (ref, 'uses' if len(one_rail) == 1 else 'use'), fix)
            for n in with_rails]


def _with_others(hosts):
    others = len(hosts) - 1
    return hosts[0] if not others else '%s (and %d other node%s)' % (hosts[0], others, '' if others == 1 else 's')


def _mixed_family(errors, nodes, fabric, rails):
    """``errors``, with the IPv6 ones saying so when other nodes are IPv4 (one fabric, one address family)."""
    v4 = [n for n in nodes if n in fabric or rails.get(n)]
    if not v4:
        return errors
    ref = fabric[v4[0]]['subnet'] if v4[0] in fabric else rails[v4[0]][0]['subnet']
    return [GpufabricError(e.host, e.field, e.value, '%s; %s uses IPv4 (%s), and one fabric is one address family' % (
        e.problem, _with_others(v4), ref), e.fix) if IPV6_UNSUPPORTED in e.problem else e for e in errors]


def fabric_table(rows, nodes=None, positions=None):
    """Validate the pod network of every node once; the result is what each node's plan reads.

    ``rows``: mapping host -> variables (the plan builder's view of the inventory, or a plain mapping); ``nodes``: the
    hosts of group roce_nodes (default: every key of ``rows``); ``positions``: each node's place in roce_nodes (its default
    roce_node_index) when ``nodes`` is part of the group only (default: its place in ``nodes``). Raises GpufabricError
    (one problem) or FabricErrors (several, one line each). Returns JSON-friendly data:
    ``{'kind': 'vlan_gateway_fabric', 'vlan_id': 100, 'nodes': {host: {pf, vlan_id, mtu, subnet, gateway}}}``."""
    nodes = list(nodes) if nodes is not None else list(rows.keys())
    fabric, rails, errors = {}, {}, []
    qos_cache = QosCache()
    for position, n in enumerate(nodes):
        node_rails_fabric, rail_errors = node_rail_fabric(rows, n, position if positions is None else positions[n], qos_cache)
        if node_rails_fabric is not None:
            rails[n] = node_rails_fabric
            errors.extend(rail_errors)
            continue
        ib = one_rail_link_type(rows, n) == 'ib'
        try:
            fabric[n] = node_fabric(rows, n, ib=ib)
        except GpufabricError as exc:
            errors.append(exc)
            continue
        errors.extend(_one_rail_vfs(rows, n, fabric[n]))
        if ib:
            errors.extend(_ib_node_problems(rows, n, fabric[n]))
            continue
        qos, problems = qos_cache.get(_get(rows, n, 'roce_qos'))
        errors.extend(GpufabricError(n, *p) for p in problems)
        if qos is not None:
            fabric[n]['qos'] = qos
    via = _qos_via(rows, nodes)
    # Every problem at once: the mix of rails and one-rail nodes, then each node's own (shared ones once).
    _raise(_mixed_rail_errors(nodes, rails, fabric) + grouped(_mixed_family(errors, nodes, fabric, rails)))
    if rails:
        _raise([GpufabricError(*p) for p in rail_names_problems([(n, [f['rail'] for f in rails[n]]) for n in nodes])])
        return _with_qos_via(_multirail_table(nodes, rails), via)
    eth = [n for n in nodes if 'vlan_id' in fabric[n]]
    # One rail is one plane: a node whose link type differs from the others' is named for that, not for its VLAN.
    mixed = _one_rail_link_type_errors(nodes, fabric)
    _raise(_overlaps(nodes, fabric) + (mixed or (_vlan_errors(eth, fabric) if eth else [])) if nodes else [])
    profiles = _QosProfiles()
    table = {
        'kind': FABRIC_KIND,
        'vlan_id': fabric[nodes[0]].get('vlan_id') if nodes else None,
        'nodes': {n: {'rails': [profiles.rail(f, '')]} for n, f in fabric.items()},
    }
    return _with_qos_via(profiles.into(table), via)


def one_rail_link_type(rows, host):
    """A one-rail node's link type, from the sriov_networks role's sriov_networks_link_type (eth unless set; the role's
    argument spec takes eth, ETH, ib and IB): 'ib' for an InfiniBand node, else 'eth'."""
    value = _get(rows, host, 'sriov_networks_link_type')
    return 'ib' if isinstance(value, str) and value.lower() == 'ib' else 'eth'


# What a one-rail InfiniBand node may not have: the Ethernet settings of its pod network, as the rails' keys.
_IB_NODE_REFUSED = (('roce_vlan_id', 'vlan'), ('roce_pod_gateway', 'gateway'), ('roce_qos', 'qos'), ('roce_vfs', 'vfs'))


def _ib_node_problems(rows, host, f):
    """A one-rail node with sriov_networks_link_type: ib: no VLAN, gateway, QoS or host VF mode, an IPoIB MTU."""
    out = []
    why = 'is set on an InfiniBand node (sriov_networks_link_type: ib): '
    for var, key in _IB_NODE_REFUSED:
        value = _get(rows, host, var)
        if value not in (None, [], ''):
            out.append(GpufabricError(host, var, value, why + ETH_ONLY_REASONS[key].format(what='node'),
                                      'remove %s from this node\'s variables, or set sriov_networks_link_type to eth (RoCE)' % var))
    if _get(rows, host, 'roce_vf_mode') == 'host':
        out.append(GpufabricError(host, 'roce_vf_mode', 'host', why + IB_HOST_VF_MODE, IB_HOST_VF_MODE_FIX))
    if f['mtu'] > IPOIB_MTU_MAX:
        out.append(GpufabricError(host, 'roce_mtu', f['mtu'], 'is above %d, the largest IPoIB MTU of an InfiniBand VF' % IPOIB_MTU_MAX,
                                  'set roce_mtu to %d or less on this node, or leave it unset (%d)' % (IPOIB_MTU_MAX, IPOIB_MTU_MAX)))
    return out


def _one_rail_link_type_errors(nodes, fabric):
    """One-rail nodes share one plane: one link type for all of them (the majority's; ties: the first node's)."""
    odd = odd_ones({n: [{'name': '', 'link_type': fabric[n].get('link_type', 'eth')}] for n in nodes}, nodes, lambda r: r['link_type'])
    return [GpufabricError(host, 'sriov_networks_link_type', value,
                           'differs from link type %s that %s and the other nodes have: the nodes\' one rail is one switch plane, '
                           'Ethernet or InfiniBand' % (meant, first),
                           'set sriov_networks_link_type to %s on this node%s, or the same on every node (group_vars/roce_nodes)'
                           % (meant, ' and remove its roce_vlan_id and roce_pod_gateway' if meant == 'ib' else ''))
            for _name, meant, first, hosts in odd for host, value in hosts]


def _qos_via(rows, nodes):
    """The nodes whose QoS the NIC Configuration Operator applies (roce_qos_via: operator), wherever the inventory sets
    it: the plan carries it, so the operator's phase deploys the NIC Configuration Operator for them. Its values are
    checked where they are rendered (_k8s.nic_config)."""
    return [n for n in nodes if _get(rows, n, 'roce_qos_via') == 'operator']


def _with_qos_via(table, nodes):
    for n in nodes:
        table['nodes'][n]['qos_via'] = 'operator'
    return table


def qos_via_operator(table):
    """Whether some node of the table has its QoS applied by the NIC Configuration Operator."""
    return any(entry.get('qos_via') == 'operator' for entry in table['nodes'].values())


def is_fabric_table(data):
    return isinstance(data, dict) and data.get('kind') == FABRIC_KIND and isinstance(data.get('nodes'), dict)


def route_to(entry):
    """The onlink route to a node's (or a node's rail's) pod subnet via its gateway: what every other node of the rail
    installs for it."""
    return {'dst': entry['subnet'], 'via': entry['gateway'], 'onlink': True}


def rail_entries(node):
    """A node's table entries, one per rail (a one-rail node's one rail is named '')."""
    return node['rails']


def gateway_entries(node):
    """A node's table entries that have a VLAN gateway: every rail but the InfiniBand ones."""
    return [r for r in node['rails'] if not is_ib(r)]


def _gateway(table, r):
    """The vlan_gateway arguments of one rail entry, without routes."""
    out = {
        'pf': r['pf'],
        'vlan_id': r['vlan_id'],
        'name': '%s.%d' % (r['pf'], r['vlan_id']),
        'mtu': r['mtu'],
        'addresses': ['%s/%s' % (r['gateway'], r['subnet'].rsplit('/', 1)[1])],
    }
    out.update(_qos_of(table, r))
    return out


def _routes(nodes, host, rail):
    """The onlink routes of ``host``'s gateway on ``rail``: to every other node's subnet on that rail only (never across
    rails)."""
    return [route_to(other) for n, f in nodes.items() if n != host for other in f['rails'] if other['rail'] == rail and not is_ib(other)]


def gateway_args(table, host, with_routes=True):
    """vlan_gateway arguments of a one-rail ``host`` from a validated ``fabric_table``: its gateway address on
    ``<pf>.<vlan>`` and an onlink route to every other node's pod subnet via that node's gateway
    (``with_routes=False``: without ``routes``, for a caller that takes them from ``_fabric.plan.route_index``)."""
    nodes = table['nodes']
    if host not in nodes:
        raise _not_a_node(host, nodes)
    rails = nodes[host]['rails']
    if rails[0]['rail']:
        raise GpufabricError(host, 'roce_rails', [r['rail'] for r in rails], 'the node has several rails, so several gateways',
                             'use the gpufabric.roce.vlan_gateway_plans filter (a list, one gateway per rail)')
    if is_ib(rails[0]):
        raise GpufabricError(host, 'sriov_networks_link_type', 'ib', 'an InfiniBand node has no VLAN gateway',
                             'use the gpufabric.roce.vlan_gateway_plans filter (a list: empty for an InfiniBand node)')
    out = _gateway(table, rails[0])
    if with_routes:
        out['routes'] = _routes(nodes, host, '')
    qos = out.pop('qos', None)
    return dict(out, **({'qos': qos} if qos is not None else {}))


def _qos_of(table, entry):
    """``{'qos': <the entry's QoS settings>}``, or {} when the entry has none (QoS off)."""
    if entry.get('qos') is None:
        return {}
    return {'qos': table['qos_profiles'][entry['qos']]}


def gateway_args_list(table, host, with_routes=True):
    """The vlan_gateway arguments of every rail of ``host`` that has a gateway (an InfiniBand rail has none), with the
    rail's name and VF settings: one gateway per rail, each with routes to the other nodes' subnets on that rail only.
    ``with_routes=False``: without ``routes`` (see ``gateway_args``)."""
    nodes = table['nodes']
    if host not in nodes:
        raise _not_a_node(host, nodes)
    out = []
    for r in gateway_entries(nodes[host]):
        gw = dict(_gateway(table, r), rail=r['rail'], num_vfs=r['num_vfs'], sriov_pf=r['sriov_pf'], vfs=r.get('vfs') or [])
        if with_routes:
            gw['routes'] = _routes(nodes, host, r['rail'])
        qos = gw.pop('qos', None)
        if qos is not None:
            gw['qos'] = qos
        out.append(gw)
    return out


def node_table(rows, host, nodes):
    """``rows`` as a validated ``fabric_table`` of ``nodes``, ``host`` being one of them
    (a ``fabric_table`` is returned as is: ``nodes`` ignored, nothing validated again)."""
    if is_fabric_table(rows):
        return rows
    nodes = list(nodes) if nodes is not None else list(rows.keys())
    if host not in nodes:
        raise _not_a_node(host, nodes)
    return fabric_table(rows, nodes)


def _not_a_node(host, nodes):
    return GpufabricError(host, 'host', host, 'is not in roce_nodes (%s)' % _names(nodes),
                          'add the host to group roce_nodes or call the filter only for its members')


def _names(nodes):
    names = list(nodes)
    if len(names) > 10:
        return '%s, ... %d nodes in all' % (', '.join(names[:10]), len(names))
    return ', '.join(names)


def vlan_gateway_plans(rows, host, nodes=None):
    """``vlan_gateway_plan`` for every rail of ``host`` (a list; one entry for a one-rail node)."""
    return gateway_args_list(node_table(rows, host, nodes), host)


def vlan_gateway_plan(rows, host, nodes=None):
    """vlan_gateway arguments of ``host``: its gateway address on ``<pf>.<vlan>`` and an onlink
    route to every other node's pod subnet via that node's gateway.

    ``rows``: mapping host -> variables (the plan builder's view of the inventory), or a ``fabric_table`` result
    (then ``nodes`` is ignored and nothing is validated again); ``nodes``: the hosts of group
    roce_nodes (default: every key of ``rows``)."""
    return gateway_args(node_table(rows, host, nodes), host)

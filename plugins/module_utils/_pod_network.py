# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Derive a node's vlan_gateway arguments from the shared roce_* inventory variables
(see docs/inventory.md). Pure logic behind the gpufabric.roce.vlan_gateway_plan filter."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import ipaddress

from ansible_collections.gpufabric.roce.plugins.module_utils._common import GpufabricError

DEFAULT_VLAN_ID = 100
DEFAULT_MTU = 9000


def _get(hostvars, host, key, default=None):
    try:
        value = hostvars[host][key]
    except KeyError:
        return default
    return default if value is None else value


def node_fabric(hostvars, host):
    """Validated pod network of one node: pf, vlan_id, mtu, subnet, gateway."""
    pf = _get(hostvars, host, 'roce_pf')
    if not pf:
        raise GpufabricError(host, 'roce_pf', None, 'is not set', 'set roce_pf to the PF netdev carrying the fabric, e.g. enp157s0np0')
    raw_vlan = _get(hostvars, host, 'roce_vlan_id', DEFAULT_VLAN_ID)
    try:
        vlan_id = int(raw_vlan)
    except (TypeError, ValueError):
        vlan_id = -1
    if not 1 <= vlan_id <= 4094:
        raise GpufabricError(host, 'roce_vlan_id', raw_vlan, 'is not a VLAN id in 1..4094', 'set roce_vlan_id to 1..4094 (default 100)')
    raw_mtu = _get(hostvars, host, 'roce_mtu', DEFAULT_MTU)
    try:
        mtu = int(raw_mtu)
    except (TypeError, ValueError):
        raise GpufabricError(host, 'roce_mtu', raw_mtu, 'is not an integer', 'set roce_mtu to the MTU of the VFs and gateway, e.g. 9000') from None
    raw_subnet = _get(hostvars, host, 'roce_pod_subnet')
    if raw_subnet is None:
        raise GpufabricError(host, 'roce_pod_subnet', None, 'is not set', "set roce_pod_subnet to this node's pod subnet, e.g. 10.255.0.0/30")
    try:
        subnet = ipaddress.ip_network('%s' % raw_subnet, strict=False)
    except ValueError:
        raise GpufabricError(host, 'roce_pod_subnet', raw_subnet, 'is not a CIDR network', 'write it like 10.255.0.0/30') from None
    if '%s' % subnet != '%s' % raw_subnet:
        raise GpufabricError(host, 'roce_pod_subnet', raw_subnet, 'is not a network address in CIDR form (host bits set or no prefix)',
                             'use %s' % subnet if '/' in '%s' % raw_subnet else 'add the prefix length, e.g. %s/30' % raw_subnet)
    raw_gw = _get(hostvars, host, 'roce_pod_gateway')
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
                             'set roce_pod_gateway to a host address inside %s, e.g. %s' % (subnet, list(subnet.hosts())[-1]))
    if subnet.version == 4 and subnet.prefixlen < 31 and gateway in (subnet.network_address, subnet.broadcast_address):
        raise GpufabricError(host, 'roce_pod_gateway', raw_gw, 'is the network or broadcast address of %s' % subnet,
                             'use a host address of %s, e.g. %s' % (subnet, list(subnet.hosts())[-1]))
    return {'pf': '%s' % pf, 'vlan_id': vlan_id, 'mtu': mtu, 'subnet': subnet, 'gateway': gateway}


def vlan_gateway_plan(hostvars, host, nodes=None):
    """vlan_gateway arguments of ``host``: its gateway address on ``<pf>.<vlan>`` and an onlink
    route to every other node's pod subnet via that node's gateway.

    ``hostvars``: mapping host -> variables (Ansible's ``hostvars``); ``nodes``: the hosts of
    group roce_nodes (default: every key of ``hostvars``)."""
    nodes = list(nodes) if nodes is not None else list(hostvars.keys())
    if host not in nodes:
        raise GpufabricError(host, 'host', host, 'is not in roce_nodes (%s)' % ', '.join(nodes),
                             'add the host to group roce_nodes or call the filter only for its members')
    fabric = {n: node_fabric(hostvars, n) for n in nodes}
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            if fabric[a]['subnet'].version == fabric[b]['subnet'].version and fabric[a]['subnet'].overlaps(fabric[b]['subnet']):
                raise GpufabricError(b, 'roce_pod_subnet', '%s' % fabric[b]['subnet'],
                                     'overlaps roce_pod_subnet %s of %s' % (fabric[a]['subnet'], a),
                                     'give every node of roce_nodes a disjoint pod subnet, e.g. consecutive /30s')
    me = fabric[host]
    for other in nodes:
        if fabric[other]['vlan_id'] != me['vlan_id']:
            raise GpufabricError(other, 'roce_vlan_id', fabric[other]['vlan_id'], 'differs from roce_vlan_id %d of %s' % (me['vlan_id'], host),
                                 'use one roce_vlan_id for all roce_nodes (set it in group_vars/roce_nodes)')
    routes = []
    for other in nodes:
        if other == host:
            continue
        routes.append({'dst': '%s' % fabric[other]['subnet'], 'via': '%s' % fabric[other]['gateway'], 'onlink': True})
    return {
        'pf': me['pf'],
        'vlan_id': me['vlan_id'],
        'name': '%s.%d' % (me['pf'], me['vlan_id']),
        'mtu': me['mtu'],
        'addresses': ['%s/%d' % (me['gateway'], me['subnet'].prefixlen)],
        'routes': routes,
    }

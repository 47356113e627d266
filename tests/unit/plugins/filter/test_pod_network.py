# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

import copy

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.filter.pod_network import FilterModule
from ansible_collections.gpufabric.roce.plugins.module_utils._common import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._pod_network import vlan_gateway_plan

# The reference cluster of docs/inventory.md
REFERENCE = {
    'node1': {'roce_pf': 'enp157s0np0', 'roce_pod_subnet': '10.255.0.0/30', 'roce_pod_gateway': '10.255.0.2'},
    'node2': {'roce_pf': 'enp157s0np0', 'roce_pod_subnet': '10.255.0.4/30', 'roce_pod_gateway': '10.255.0.6'},
    'controller': {},
}
NODES = ['node1', 'node2']


def test_reference_cluster():
    assert vlan_gateway_plan(REFERENCE, 'node1', NODES) == {
        'pf': 'enp157s0np0', 'vlan_id': 100, 'name': 'enp157s0np0.100', 'mtu': 9000,
        'addresses': ['10.255.0.2/30'], 'routes': [{'dst': '10.255.0.4/30', 'via': '10.255.0.6', 'onlink': True}]}
    node2 = vlan_gateway_plan(REFERENCE, 'node2', NODES)
    assert node2['addresses'] == ['10.255.0.6/30']
    assert node2['routes'] == [{'dst': '10.255.0.0/30', 'via': '10.255.0.2', 'onlink': True}]


def test_three_nodes_and_overrides():
    hv = copy.deepcopy(REFERENCE)
    hv['node3'] = {'roce_pf': 'ens1f0', 'roce_pod_subnet': '10.255.0.8/30', 'roce_pod_gateway': '10.255.0.10', 'roce_mtu': '4200'}
    plan = vlan_gateway_plan(hv, 'node3', NODES + ['node3'])
    assert (plan['name'], plan['mtu']) == ('ens1f0.100', 4200)
    assert [r['dst'] for r in plan['routes']] == ['10.255.0.0/30', '10.255.0.4/30']


def with_vars(host, **kw):
    hv = copy.deepcopy(REFERENCE)
    hv[host].update(kw)
    for k in [k for k, v in kw.items() if v is None]:
        del hv[host][k]
    return hv


BAD = [
    ('gateway-outside', with_vars('node2', roce_pod_gateway='10.255.1.6'),
     'node2: roce_pod_gateway="10.255.1.6": is outside roce_pod_subnet 10.255.0.4/30. '
     'Fix: set roce_pod_gateway to a host address inside 10.255.0.4/30, e.g. 10.255.0.6'),
    ('gateway-broadcast', with_vars('node1', roce_pod_gateway='10.255.0.3'),
     'node1: roce_pod_gateway="10.255.0.3": is the network or broadcast address of 10.255.0.0/30. Fix: use a host address of 10.255.0.0/30, e.g. 10.255.0.2'),
    ('gateway-with-prefix', with_vars('node1', roce_pod_gateway='10.255.0.2/30'),
     'node1: roce_pod_gateway="10.255.0.2/30": is not an IP address (no prefix length). Fix: write the plain address, e.g. 10.255.0.1'),
    ('overlap', with_vars('node2', roce_pod_subnet='10.255.0.0/29', roce_pod_gateway='10.255.0.6'),
     'node2: roce_pod_subnet="10.255.0.0/29": overlaps roce_pod_subnet 10.255.0.0/30 of node1. '
     'Fix: give every node of roce_nodes a disjoint pod subnet, e.g. consecutive /30s'),
    ('subnet-host-bits', with_vars('node1', roce_pod_subnet='10.255.0.1/30'),
     'node1: roce_pod_subnet="10.255.0.1/30": is not a network address in CIDR form (host bits set or no prefix). Fix: use 10.255.0.0/30'),
    ('subnet-missing', with_vars('node1', roce_pod_subnet=None),
     "node1: roce_pod_subnet=null: is not set. Fix: set roce_pod_subnet to this node's pod subnet, e.g. 10.255.0.0/30"),
    ('pf-missing', with_vars('node2', roce_pf=None),
     'node2: roce_pf=null: is not set. Fix: set roce_pf to the PF netdev carrying the fabric, e.g. enp157s0np0'),
    ('vlan-range', with_vars('node1', roce_vlan_id=5000),
     'node1: roce_vlan_id=5000: is not a VLAN id in 1..4094. Fix: set roce_vlan_id to 1..4094 (default 100)'),
    ('vlan-mismatch', with_vars('node2', roce_vlan_id=200),
     'node2: roce_vlan_id=200: differs from roce_vlan_id 100 of node1. Fix: use one roce_vlan_id for all roce_nodes (set it in group_vars/roce_nodes)'),
]


@pytest.mark.parametrize('hostvars,message', [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_inventory(hostvars, message):
    with pytest.raises(GpufabricError) as err:
        vlan_gateway_plan(hostvars, 'node1', NODES)
    assert str(err.value) == message


def test_host_not_in_group():
    with pytest.raises(GpufabricError) as err:
        vlan_gateway_plan(REFERENCE, 'controller', NODES)
    assert str(err.value) == ('controller: host="controller": is not in roce_nodes (node1, node2). '
                              'Fix: add the host to group roce_nodes or call the filter only for its members')


def test_filter_plugin_wraps_errors():
    f = FilterModule().filters()['vlan_gateway_plan']
    assert f(REFERENCE, 'node1', NODES)['name'] == 'enp157s0np0.100'
    with pytest.raises(AnsibleFilterError, match='roce_pod_gateway="10.255.1.6": is outside'):
        f(with_vars('node2', roce_pod_gateway='10.255.1.6'), 'node1', NODES)

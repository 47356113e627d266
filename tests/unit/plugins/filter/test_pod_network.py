# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

import copy

import pytest
from ansible.errors import AnsibleFilterError
from fake_hostvars import FakeHostVars

from ansible_collections.gpufabric.roce.plugins.filter.pod_network import FilterModule
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import vlan_gateway_plan

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


# ---- fleet scale: one validation pass, each node reads its slice ---------------------------------

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import (  # noqa: E402
    FabricErrors,
    fabric_table,
    gateway_args,
)


def fleet(count, **overrides):
    """count seed-shaped nodes, one consecutive /30 each; overrides: {host: {var: value}}."""
    import ipaddress  # noqa: PLC0415

    nets = ipaddress.ip_network('10.255.0.0/16').subnets(new_prefix=30)
    hv = {}
    for i in range(1, count + 1):
        net = next(nets)
        hv['n%04d' % i] = {'roce_pf': 'enp157s0np0', 'roce_pod_subnet': str(net), 'roce_pod_gateway': str(net[2])}
    for host, kw in overrides.items():
        hv[host].update(kw)
    return hv


def test_table_then_slice_equals_the_per_node_plan():
    hv = fleet(50)
    nodes = list(hv)
    table = fabric_table(hv, nodes)
    assert table['kind'] == 'vlan_gateway_fabric' and table['vlan_id'] == 100 and list(table['nodes']) == nodes
    for host in ('n0001', 'n0025', 'n0050'):
        assert gateway_args(table, host) == vlan_gateway_plan(hv, host, nodes)
        # the filter accepts the table as its input too (nodes then ignored)
        assert vlan_gateway_plan(table, host) == vlan_gateway_plan(hv, host, nodes)
    plan = gateway_args(table, 'n0002')
    assert plan['addresses'] == ['10.255.0.6/30'] and len(plan['routes']) == 49
    assert {'dst': '10.255.0.0/30', 'via': '10.255.0.2', 'onlink': True} in plan['routes']


def test_table_reads_each_node_once():
    class Counting(dict):
        reads = 0

        def __getitem__(self, host):
            Counting.reads += 1
            return dict.__getitem__(self, host)

    hv = Counting(fleet(200))
    fabric_table(hv, list(hv))
    # twelve variables per node (roce_rails, roce_sriov_pf, roce_num_vfs, roce_vfs, roce_qos, roce_qos_via and
    # sriov_networks_link_type included), read once per run (planning per node read 200 x 200 x 5)
    assert Counting.reads <= 200 * 12


def test_overlap_sweep_finds_every_overlap_and_names_the_earlier_node():
    hv = fleet(6, n0005={'roce_pod_subnet': '10.255.0.0/28', 'roce_pod_gateway': '10.255.0.14'},
               n0006={'roce_pod_subnet': '10.255.0.8/30', 'roce_pod_gateway': '10.255.0.10'})
    with pytest.raises(FabricErrors) as err:
        fabric_table(hv, list(hv))
    lines = str(err.value).splitlines()
    assert lines[0] == '2 problems in the pod network of the nodes:'
    # n0005's /28 covers n0001..n0004; n0006 duplicates n0003's /30 (and sits inside n0005's /28).
    assert lines[1] == ('n0005: roce_pod_subnet="10.255.0.0/28": overlaps roce_pod_subnet 10.255.0.0/30 of n0001. '
                        'Fix: give every node of roce_nodes a disjoint pod subnet, e.g. consecutive /30s')
    assert lines[2].startswith('n0006: roce_pod_subnet="10.255.0.8/30": overlaps roce_pod_subnet ')
    assert err.value.errors[0].host == 'n0005'


def test_disjoint_mixed_sizes_do_not_overlap():
    hv = {
        'a': {'roce_pf': 'p', 'roce_pod_subnet': '10.0.0.0/24', 'roce_pod_gateway': '10.0.0.1'},
        'b': {'roce_pf': 'p', 'roce_pod_subnet': '10.0.1.0/30', 'roce_pod_gateway': '10.0.1.2'},
        'd': {'roce_pf': 'p', 'roce_pod_subnet': '9.255.255.252/30', 'roce_pod_gateway': '9.255.255.254'},
    }
    table = fabric_table(hv, list(hv))
    assert gateway_args(table, 'd')['addresses'] == ['9.255.255.254/30']
    # IPv6 pod subnets are refused (tests/unit/plugins/filter/test_pod_network_addresses.py).


def test_vlan_reference_is_the_majority_not_the_first_node():
    hv = fleet(5, n0001={'roce_vlan_id': 200})
    with pytest.raises(GpufabricError) as err:
        fabric_table(hv, list(hv))
    assert str(err.value) == ('n0001: roce_vlan_id=200: differs from roce_vlan_id 100 of n0002 and 3 other nodes. '
                              'Fix: use one roce_vlan_id for all roce_nodes (set it in group_vars/roce_nodes)')


def test_every_problem_at_once_capped_at_twenty_lines():
    hv = fleet(30, **{'n%04d' % i: {'roce_pod_gateway': '10.9.9.9'} for i in range(1, 26)})
    hv['n0030']['roce_pf'] = None
    with pytest.raises(FabricErrors) as err:
        fabric_table(hv, list(hv))
    lines = str(err.value).splitlines()
    assert lines[0] == '26 problems in the pod network of the nodes:'
    assert len(lines) == 1 + 20 + 1 and lines[-1] == '... and 6 more problems of the same kinds'
    assert len(err.value.errors) == 26 and err.value.errors[-1].field == 'roce_pf'


def test_slice_of_a_host_outside_the_table():
    table = fabric_table(REFERENCE, NODES)
    with pytest.raises(GpufabricError, match='controller: host="controller": is not in roce_nodes'):
        gateway_args(table, 'controller')


def test_fabric_filter_plugin():
    filters = FilterModule().filters()
    table = filters['_vlan_gateway_fabric'](REFERENCE, NODES)
    assert filters['vlan_gateway_plan'](table, 'node2')['routes'] == [{'dst': '10.255.0.0/30', 'via': '10.255.0.2', 'onlink': True}]
    with pytest.raises(AnsibleFilterError, match='node2: roce_pod_gateway="10.255.1.6": is outside'):
        filters['_vlan_gateway_fabric'](with_vars('node2', roce_pod_gateway='10.255.1.6'), NODES)


def test_filter_reads_raw_host_variables_and_templates_only_templates():
    hv = FakeHostVars(fleet(3, n0002={'roce_pf': '{{ pf_of_rack }}'}), {'{{ pf_of_rack }}': 'ens1f0'})
    table = FilterModule().filters()['_vlan_gateway_fabric'](hv, list(hv))
    assert hv.rendered == [('n0002', 'roce_pf')]
    assert table['nodes']['n0002']['rails'][0]['pf'] == 'ens1f0' and table['nodes']['n0001']['rails'][0]['pf'] == 'enp157s0np0'


def test_filter_hands_the_planners_plain_containers_not_the_hosts_lazy_ones():
    # hostvars[host][key] of a list or dict is one of Ansible's lazy containers, which carries the host's whole
    # variable context: a rail's vfs then went through ArgumentSpecValidator's deepcopy with it, once per node and
    # rail (33 s for 40 nodes x 8 rails with per-node VFs). The view must hand over builtins only.
    from ansible_collections.gpufabric.roce.plugins.plugin_utils._raw_vars import view as _view  # noqa: PLC0415

    class Lazy(list):
        context = object()  # stands for the variables a lazy container drags along

    class LazyDict(dict):
        pass

    class FakeHostVars(dict):
        def raw_get(self, host):
            return dict.__getitem__(self, host)

        def __getitem__(self, host):
            return {k: Lazy(LazyDict(i) for i in v) if isinstance(v, list) else v for k, v in dict.__getitem__(self, host).items()}

    rails = [{'name': 'rail0', 'pf': 'enp1s0np0', 'vlan': 101, 'subnet_pool': '10.101.0.0/16', 'subnet_prefix': 24}]
    hv = FakeHostVars(n1={'roce_rails': rails, 'roce_node_index': 0})
    value = _view(hv)['n1']['roce_rails']
    assert isinstance(value, list) and not isinstance(value, Lazy) and not any(isinstance(r, LazyDict) for r in value)
    assert value == rails


def test_the_view_templates_a_value_only_when_a_template_is_in_it():
    # Before, every list or mapping went through hostvars[host] (the host's variables built again, and a template engine):
    # most of the fabric plan's time at 10,000 nodes, for group_vars that hold no template.
    from ansible_collections.gpufabric.roce.plugins.plugin_utils._raw_vars import view  # noqa: PLC0415

    shared = [{'name': 'rail0', 'pf': 'enp1s0np0', 'vlan': 101}]
    templated = [{'name': 'rail0', 'pf': '{{ pf }}', 'vlan': 101}]

    class Templating(dict):
        templated = []

        def raw_get(self, host):
            return dict.__getitem__(self, host)

        def __getitem__(self, host):
            Templating.templated.append(host)
            return {k: ([dict(r, pf='enp9s0np0') for r in v] if v is templated else v) for k, v in dict.__getitem__(self, host).items()}

    hv = Templating(n1={'roce_rails': shared, 'roce_node_index': 0}, n2={'roce_rails': templated, 'roce_node_index': 1})
    rows = view(hv)
    assert rows['n1']['roce_rails'] == shared and rows['n1']['roce_rails'] is not shared  # a copy, as plain data
    assert Templating.templated == []
    assert rows['n2']['roce_rails'][0]['pf'] == 'enp9s0np0' and Templating.templated == ['n2']
    assert 'n1' in rows and 'n3' not in rows

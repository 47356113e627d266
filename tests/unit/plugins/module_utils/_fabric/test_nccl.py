# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL settings from rdma_facts (nccl_env), the ConfigMap renderer and both filters, on the
derived two-socket layout of test_pci_topology (not a capture; no real GPU machine was used)."""

import json
import os
import re
import shlex

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.filter import nccl as nccl_filter
from ansible_collections.gpufabric.roce.plugins.filter import topology as topology_filter
from ansible_collections.gpufabric.roce.plugins.module_utils._host import rdma_facts as rf
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import RenderValidationError
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nccl import env_file, nccl_configmap
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.nccl import HOST_FACT_SETTINGS, gateway_rails, gid_ipv4, inventory_env, nccl_env

from test_rdma_facts import build_tree

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'fixtures')

DNS_SUBDOMAIN = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z')
CM_KEY = re.compile(r'^[-._a-zA-Z0-9]+\Z')


@pytest.fixture(scope='module')
def facts(tmp_path_factory):
    tree = tmp_path_factory.mktemp('gpu_host')
    with open(os.path.join(FIXTURES, 'sysfs_gpu_two_socket.json')) as f:
        build_tree(str(tree), json.load(f))
    return rf.gather(os.path.join(str(tree), 'sys'), os.path.join(str(tree), 'proc'), netns_mode_getter=None)


def test_gid_ipv4():
    assert str(gid_ipv4('0000:0000:0000:0000:0000:ffff:0a00:0002')) == '10.0.0.2'
    assert gid_ipv4('fe80:0000:0000:0000:0a00:00ff:fe00:0000') is None
    assert gid_ipv4('garbage') is None


def test_hca_in_gpu_order_and_gid_index(facts):
    # rail order in the input is not GPU order: mlx5_3 is next to GPU2, mlx5_0 to GPU0
    rails = [{'name': 'rail0', 'pf': 'ens84np0', 'ipv4': '10.0.3.2/24'},
             {'name': 'rail1', 'pf': 'ens1f0np0', 'ipv4': '10.0.0.2'}]
    result = nccl_env(facts, rails, socket_ifname='eth0', host='node1')
    assert result['env'] == {'NCCL_IB_HCA': '=mlx5_0:1,mlx5_3:1', 'NCCL_IB_GID_INDEX': '3', 'NCCL_SOCKET_IFNAME': 'eth0'}
    assert result['problems'] == []
    assert [(r['name'], r['rdma_device'], r['gpu'], r['gpu_index'], r['class'], r['gid_index']) for r in result['rails']] == [
        ('rail1', 'mlx5_0', '0000:03:00.0', 0, 'PIX', 3), ('rail0', 'mlx5_3', '0000:83:00.0', 2, 'PIX', 3)]
    assert result['rails'][1]['ipv4'] == '10.0.3.2'


def test_rails_of_one_gpu_keep_input_order(facts):
    rails = [{'name': 'b', 'pf': 'ens1f1np1'}, {'name': 'a', 'pf': 'ens1f0np0'}]
    result = nccl_env(facts, rails)
    # both are nearest to GPU0: input order; no ipv4 -> no GID index, and no socket ifname
    assert result['env'] == {'NCCL_IB_HCA': '=mlx5_4:1,mlx5_0:1'}
    assert result['problems'] == []


def test_gid_index_disagreement_is_reported(facts):
    rails = [{'name': 'rail0', 'pf': 'ens1f0np0', 'ipv4': '10.0.0.2'},
             {'name': 'rail1', 'pf': 'ens3np0', 'ipv4': '10.0.1.2'}]
    result = nccl_env(facts, rails)
    assert 'NCCL_IB_GID_INDEX' not in result['env']
    assert result['env']['NCCL_IB_HCA'] == '=mlx5_0:1,mlx5_1:1'
    assert len(result['problems']) == 1
    assert 'index 3 on rail0 (mlx5_0); index 5 on rail1 (mlx5_1)' in result['problems'][0]


def test_traffic_class_from_the_rails_qos(facts):
    rails = [{'name': 'rail0', 'pf': 'ens1f0np0', 'tos': 106}, {'name': 'rail1', 'pf': 'ens84np0', 'tos': 106}]
    result = nccl_env(facts, rails)
    assert result['env']['NCCL_IB_TC'] == '106' and result['problems'] == []
    # without QoS nothing is set (NCCL's own default stays)
    assert 'NCCL_IB_TC' not in nccl_env(facts, [{'name': 'rail0', 'pf': 'ens1f0np0', 'tos': None}])['env']


def test_what_the_inventory_determines_needs_no_facts_and_the_rails_come_from_the_gateways():
    """Issue 42 item 4: a render without the nodes (gpufabric.roce.render) gets these; NCCL_IB_HCA and NCCL_IB_GID_INDEX
    (HOST_FACT_SETTINGS) only with the node's facts."""
    gateways = [{'pf': 'ens1f0np0', 'vlan_id': 100, 'addresses': ['10.0.0.254/24'], 'qos': {'tos': 106, 'trust': 'dscp'}},
                {'rail': 'rail1', 'pf': 'ens84np0', 'vlan_id': 101, 'addresses': ['10.0.3.2/24']}]
    rails = gateway_rails(gateways)
    assert rails == [{'name': 'rail0', 'pf': 'ens1f0np0', 'ipv4': '10.0.0.254', 'tos': 106},
                     {'name': 'rail1', 'pf': 'ens84np0', 'ipv4': '10.0.3.2', 'tos': None}]
    assert nccl_filter.FilterModule().filters()['_nccl_rails'](gateways) == rails
    same = [dict(r, tos=106) for r in rails]
    assert inventory_env(same, 'eth0') == {'env': {'NCCL_IB_TC': '106', 'NCCL_SOCKET_IFNAME': 'eth0'}, 'problems': []}
    assert not set(inventory_env(same)['env']) & set(HOST_FACT_SETTINGS)
    # nccl_env is the facts' settings over these, the same problems included.
    assert nccl_env({}, same, 'eth0')['env'] == inventory_env(same, 'eth0')['env']
    differ = [same[0], dict(same[1], tos=98)]
    assert inventory_env(differ)['env'] == {} and nccl_env({}, differ)['problems'][-1] == inventory_env(differ)['problems'][0]
    with pytest.raises(AnsibleFilterError, match='each gateway needs pf and addresses'):
        nccl_filter.FilterModule().filters()['_nccl_rails']([{'pf': 'ens1f0np0'}])


def test_traffic_class_disagreement_is_reported(facts):
    rails = [{'name': 'rail0', 'pf': 'ens1f0np0', 'tos': 106}, {'name': 'rail1', 'pf': 'ens84np0', 'tos': 98}]
    result = nccl_env(facts, rails)
    assert 'NCCL_IB_TC' not in result['env']
    assert len(result['problems']) == 1 and 'rail0 106, rail1 98' in result['problems'][0]


def test_missing_gid_and_missing_device(facts):
    rails = [{'name': 'rail0', 'pf': 'ens1f0np0', 'ipv4': '10.9.9.9'}, {'name': 'rail1', 'pf': 'nosuch0'}]
    result = nccl_env(facts, rails)
    assert result['env'] == {'NCCL_IB_HCA': '=mlx5_0:1'}
    assert any('no RoCE v2 GID holding 10.9.9.9 (::ffff:10.9.9.9)' in p for p in result['problems'])
    assert any('no RDMA device is bound to nosuch0' in p for p in result['problems'])
    assert result['rails'][-1]['name'] == 'rail1'  # no GPU, last


def test_no_gpu_node_keeps_rail_order(tmp_path):
    with open(os.path.join(FIXTURES, 'sysfs_node.json')) as f:
        build_tree(str(tmp_path), json.load(f))
    lab = rf.gather(os.path.join(str(tmp_path), 'sys'), os.path.join(str(tmp_path), 'proc'), netns_mode_getter=None)
    result = nccl_env(lab, [{'name': 'r', 'pf': 'enp157s0np0', 'ipv4': '10.255.0.2'}])
    assert result['env'] == {'NCCL_IB_HCA': '=mlx5_8:1', 'NCCL_IB_GID_INDEX': '4'}


@pytest.mark.parametrize('rails, field', [
    ('rail0', 'rails'),
    ([{'name': 'a'}], 'rails[0].pf'),
    ([{'name': 'a', 'pf': 'x'}, {'name': 'a', 'pf': 'y'}], 'rails[1].name'),
    ([{'name': 'a', 'pf': 'x'}, {'name': 'b', 'pf': 'x'}], 'rails[1].pf'),
    ([{'name': 'a', 'pf': 'x', 'ipv4': '10.0.0.300'}], 'rails[0].ipv4'),
])
def test_bad_rails(facts, rails, field):
    with pytest.raises(GpufabricError) as err:
        nccl_env(facts, rails, host='node1')
    assert err.value.field == field
    assert str(err.value).startswith('node1: %s=' % field)


def _check_configmap_shape(cm):
    """The basic shape the API server checks for a v1 ConfigMap."""
    assert set(cm) == {'apiVersion', 'kind', 'metadata', 'data'}
    assert (cm['apiVersion'], cm['kind']) == ('v1', 'ConfigMap')
    assert DNS_SUBDOMAIN.match(cm['metadata']['name']) and len(cm['metadata']['name']) <= 253
    assert re.match(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z', cm['metadata']['namespace'])
    for key, value in cm['metadata']['labels'].items():
        assert isinstance(key, str) and isinstance(value, str) and len(value) <= 63
    for key, value in cm['data'].items():
        assert CM_KEY.match(key) and len(key) <= 253
        assert isinstance(value, str)
    json.dumps(cm)


def test_configmap(facts):
    rails = [{'name': 'rail0', 'pf': 'ens84np0', 'ipv4': '10.0.3.2'}, {'name': 'rail1', 'pf': 'ens1f0np0', 'ipv4': '10.0.0.2'}]
    node1 = nccl_env(facts, rails, socket_ifname='eth0')
    cm = nccl_configmap({'node1': node1, 'node2.example.com': {'NCCL_IB_HCA': '=mlx5_0:1', 'NCCL_IB_GID_INDEX': 3}},
                        namespace='training', labels={'team': 'ml'})
    _check_configmap_shape(cm)
    assert cm['metadata']['name'] == 'gpufabric-nccl'
    assert cm['metadata']['labels']['app.kubernetes.io/managed-by'] == 'gpufabric.roce'
    assert cm['metadata']['labels']['team'] == 'ml'
    assert sorted(cm['data']) == ['node1.env', 'node2.example.com.env', 'nodes']
    assert cm['data']['node1.env'] == 'NCCL_IB_GID_INDEX=3\nNCCL_IB_HCA==mlx5_0:1,mlx5_3:1\nNCCL_SOCKET_IFNAME=eth0\n'
    assert cm['data']['nodes'] == 'node1\nnode2.example.com\n'
    # the lines read back as the values through a shell-style parser
    parsed = dict(line.split('=', 1) for line in shlex.split(cm['data']['node1.env']))
    assert parsed['NCCL_IB_HCA'] == '=mlx5_0:1,mlx5_3:1'


def test_env_file_quotes():
    assert env_file({'NCCL_SOCKET_IFNAME': 'eth0 eth1'}) == "NCCL_SOCKET_IFNAME='eth0 eth1'\n"


def test_configmap_errors_listed_at_once():
    with pytest.raises(RenderValidationError) as err:
        nccl_configmap({'Node_1/x': {}, 'node2': {'bad-name': 'x', 'NCCL_IB_HCA': None}}, name='Bad_Name', namespace='a.b')
    fields = [e.field for e in err.value.errors]
    assert fields == ['name', 'namespace', 'node', 'env', 'env.NCCL_IB_HCA']
    with pytest.raises(RenderValidationError):
        nccl_configmap({})


def test_configmap_size_limit():
    big = {'node%04d' % i: {'NCCL_IB_HCA': 'x' * 2000} for i in range(600)}
    with pytest.raises(RenderValidationError) as err:
        nccl_configmap(big)
    assert 'above the 1 MiB limit' in str(err.value)


def test_filters(facts):
    rails = [{'name': 'rail0', 'pf': 'ens1f0np0', 'ipv4': '10.0.0.2'}]
    filters = nccl_filter.FilterModule().filters()
    env = filters['nccl_env'](facts, rails, 'eth0', 'node1')
    assert env['env']['NCCL_IB_HCA'] == '=mlx5_0:1'
    with pytest.raises(AnsibleFilterError, match='node1: rails=') as _err:
        filters['nccl_env'](facts, 'rail0', host='node1')
    with pytest.raises(AnsibleFilterError, match='NCCL settings incomplete'):
        filters['nccl_env'](facts, [{'name': 'r', 'pf': 'nosuch0'}], host='node1', strict=True)
    cm = filters['nccl_configmap']({'node1': env}, 'nccl', 'ml')
    assert (cm['metadata']['name'], cm['metadata']['namespace']) == ('nccl', 'ml')
    with pytest.raises(AnsibleFilterError, match='problem'):
        filters['nccl_configmap']({'node1': env}, 'Bad_Name')
    affinity = topology_filter.FilterModule().filters()['gpu_nic_affinity']
    assert affinity(facts, 'ens84np0')['rails'][0]['class'] == 'PIX'
    with pytest.raises(AnsibleFilterError):
        affinity(facts, [''])


def test_affinity_filter_takes_rails_with_overrides(facts):
    affinity = topology_filter.FilterModule().filters()['gpu_nic_affinity']
    rails = [{'name': 'rail0', 'pf': 'ens41np0'}, {'name': 'rail1', 'pf': 'ens3np0'}]
    judged = affinity(facts, rails, {'rail0': {'pf': 'ens1f0np0'}})
    assert [(r['pf'], r['class']) for r in judged['rails']] == [('ens1f0np0', 'PIX'), ('ens3np0', 'PHB')]
    with pytest.raises(AnsibleFilterError):
        affinity(facts, [{'name': 'rail0'}])

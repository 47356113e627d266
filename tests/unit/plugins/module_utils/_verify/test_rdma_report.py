# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_verify logic: ring plan, ping parsing (real iputils output), the matrix, its table and
JUnit reports, and the pod manifests (validated against the core Kubernetes schema)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import itertools
import json
import os
from xml.etree import ElementTree as ET

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._verify import perftest as pt
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_pods as rp
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_report as rr

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures')


def fixture(*parts):
    with open(os.path.join(FIXTURES, *parts)) as f:
        return f.read()


# ---------------------------------------------------------------- plan

@pytest.mark.parametrize('n', range(2, 12))
def test_ring_rounds_cover_the_ring_with_disjoint_pairs(n):
    nodes = ['n%d' % i for i in range(n)]
    rounds = rr.ring_rounds(nodes)
    pairs = [(p['client'], p['server']) for r in rounds for p in r]
    assert sorted(pairs) == sorted((nodes[i], nodes[(i + 1) % n]) for i in range(n))
    for r in rounds:
        members = [x for p in r for x in (p['client'], p['server'])]
        assert len(members) == len(set(members)), 'a node is in two pairs of one round'
    assert len(rounds) == (2 if n % 2 == 0 else 3)


def test_two_nodes_both_directions():
    assert rr.ring_rounds(['node1', 'node2']) == [[{'client': 'node1', 'server': 'node2'}],
                                                  [{'client': 'node2', 'server': 'node1'}]]


def test_ring_needs_two_distinct_nodes():
    with pytest.raises(rr.ReportError) as err:
        rr.ring_rounds(['node1'])
    assert str(err.value) == ('(play): rdma_verify_hosts=["node1"]: a ring needs at least two nodes. '
                              'Fix: run the role against two or more hosts of roce_nodes')
    with pytest.raises(rr.ReportError) as err:
        rr.ring_rounds(['a', 'b', 'a'])
    assert str(err.value) == '(play): rdma_verify_hosts=["a"]: a node is listed twice. Fix: list each node once'


def test_plan_duties_and_ports():
    p = rr.plan(['node1', 'node2', 'node3', 'node4'],
                {'node1': '10.255.0.2', 'node2': '10.255.0.6', 'node3': '10.255.0.10', 'node4': '10.255.0.14'})
    assert p['duties']['node1'][0] == {'round': 0, 'client_to': 'node2', 'server_for': None, 'peer_address': '10.255.0.6',
                                       'client_port': 18515, 'server_port': None, 'tcp_port': 18515}
    assert p['duties']['node3'][0] == {'round': 0, 'client_to': 'node4', 'server_for': None, 'peer_address': '10.255.0.14',
                                       'client_port': 18516, 'server_port': None, 'tcp_port': 18516}
    assert p['duties']['node4'][0]['server_for'] == 'node3'
    assert p['duties']['node4'][0]['server_port'] == p['duties']['node4'][0]['tcp_port'] == 18516
    assert p['duties']['node4'][1] == {'round': 1, 'client_to': 'node1', 'server_for': None, 'peer_address': '10.255.0.2',
                                       'client_port': 18516, 'server_port': None, 'tcp_port': 18516}
    assert p['duties']['node1'][1]['server_for'] == 'node4'


@pytest.mark.parametrize('n', range(2, 8))
def test_full_duplex_ring_is_one_round_every_node_client_once_and_server_once(n):
    nodes = ['n%d' % i for i in range(n)]
    rounds = rr.ring_rounds(nodes, full_duplex=True)
    assert len(rounds) == 1
    assert [(p['client'], p['server']) for p in rounds[0]] == [(nodes[i], nodes[(i + 1) % n]) for i in range(n)]
    assert sorted(p['client'] for p in rounds[0]) == sorted(nodes) == sorted(p['server'] for p in rounds[0])


def test_full_duplex_duties_give_each_side_its_own_pair_port():
    """A node is the client of one pair and the server of another in one round: its client connects to the next node's
    server on that pair's port, while its own server listens on the port of the pair it serves."""
    addresses = {'node1': '10.255.0.2', 'node2': '10.255.0.6', 'node3': '10.255.0.10'}
    p = rr.plan(['node1', 'node2', 'node3'], addresses, full_duplex=True)
    assert p['rounds'] == [[{'client': 'node1', 'server': 'node2'}, {'client': 'node2', 'server': 'node3'},
                            {'client': 'node3', 'server': 'node1'}]]
    assert p['duties']['node1'] == [{'round': 0, 'client_to': 'node2', 'server_for': 'node3', 'peer_address': '10.255.0.6',
                                     'client_port': 18515, 'server_port': 18517, 'tcp_port': None}]
    for node, (duty,) in p['duties'].items():
        # the port a client connects to is the one its server listens on
        assert p['duties'][duty['client_to']][0]['server_port'] == duty['client_port'], node
    two = rr.plan(['node1', 'node2'], addresses, full_duplex=True)['duties']
    assert (two['node1'][0]['client_port'], two['node1'][0]['server_port']) == (18515, 18516)
    assert (two['node2'][0]['client_port'], two['node2'][0]['server_port']) == (18516, 18515)


def test_full_duplex_with_rails_is_one_round_per_rail():
    rails = {n: [{'name': 'rail0', 'gateway': '10.255.%d.2' % i, 'pf': 'eth0', 'vlan': 100},
                 {'name': 'rail1', 'gateway': '10.254.%d.2' % i, 'pf': 'eth1', 'vlan': 200}] for i, n in enumerate(['a', 'b'])}
    p = rr.plan(['a', 'b'], {}, rails=rails, full_duplex=True)
    assert [[(x['client'], x['server'], x['rail']) for x in r] for r in p['rounds']] == [
        [('a', 'b', 'rail0'), ('b', 'a', 'rail0')], [('a', 'b', 'rail1'), ('b', 'a', 'rail1')]]
    assert [(d['rail'], d['netdev'], d['client_to'], d['server_for']) for d in p['duties']['a']] == [
        ('rail0', 'eth0.100', 'b', 'b'), ('rail1', 'eth1.200', 'b', 'b')]
    assert len(rr.plan(['a', 'b'], {}, rails=rails)['rounds']) == 4


def test_plan_refuses_missing_and_bad_addresses():
    with pytest.raises(rr.ReportError) as err:
        rr.plan(['node1', 'node2'], {'node1': '10.255.0.2', 'node2': ''})
    assert str(err.value).startswith('node2: rdma_verify_address="": no address to reach this node (1 node(s) without one: node2). '
                                     'Fix: set roce_pod_gateway')
    with pytest.raises(rr.ReportError) as err:
        rr.plan(['node1', 'node2'], {'node1': '10.255.0.2', 'node2': 'node2.example'})
    assert str(err.value) == ('node2: rdma_verify_address="node2.example": is not an IP address. '
                              'Fix: use the IPv4 address of the VLAN gateway of the node')


# ---------------------------------------------------------------- ping

def test_ping_ok_real_output():
    parsed = rr.parse_ping(fixture('rdma_verify', 'ping_ok.stdout'), int(fixture('rdma_verify', 'ping_ok.rc')))
    assert parsed == {'transmitted': 3, 'received': 3, 'loss_pct': 0.0, 'rtt_min_ms': 0.032, 'rtt_avg_ms': 0.123,
                      'rtt_max_ms': 0.304, 'ok': True}


def test_ping_unreachable_real_output():
    parsed = rr.parse_ping(fixture('rdma_verify', 'ping_unreachable.stdout'), int(fixture('rdma_verify', 'ping_unreachable.rc')))
    assert parsed == {'transmitted': 3, 'received': 0, 'loss_pct': 100.0, 'rtt_min_ms': None, 'rtt_avg_ms': None,
                      'rtt_max_ms': None, 'ok': False}


def test_ping_over_the_vlan_in_the_capture_vm():
    parsed = rr.parse_ping(fixture('rdma_verify', 'ping_vlan_ok.stdout'), int(fixture('rdma_verify', 'ping_vlan_ok.rc')))
    assert (parsed['ok'], parsed['received'], parsed['rtt_avg_ms'], parsed['rtt_max_ms']) == (True, 3, 1.768, 4.553)


def test_ping_no_route_in_the_capture_vm():
    rc = int(fixture('rdma_verify', 'ping_no_route.rc'))
    assert rc == 2
    assert fixture('rdma_verify', 'ping_no_route.stderr').strip() == 'ping: connect: Network is unreachable'
    assert rr.parse_ping(fixture('rdma_verify', 'ping_no_route.stdout'), rc) == {
        'transmitted': None, 'received': None, 'loss_pct': None, 'rtt_min_ms': None, 'rtt_avg_ms': None,
        'rtt_max_ms': None, 'ok': False}


def test_ping_no_output():
    assert rr.parse_ping('', 2)['ok'] is False


# ---------------------------------------------------------------- matrix and reports

def perftest_metrics(case):
    metrics = pt.parse_output(fixture('perftest', case + '.stdout'))['metrics']
    return pt.add_link_percentage(metrics, 10000)


def ok_records(client, server, ping_ok=True):
    ping = rr.parse_ping(fixture('rdma_verify', 'ping_ok.stdout' if ping_ok else 'ping_unreachable.stdout'), 0 if ping_ok else 1)
    return [
        {'kind': 'ping', 'side': 'client', 'client': client, 'server': server, 'ok': ping['ok'], 'ping': ping,
         'msg': '' if ping_ok else 'ping 10.255.0.2: rc=1, 0 of 3 replies'},
        {'kind': 'bw', 'side': 'client', 'test': 'ib_write_bw', 'client': client, 'server': server, 'ok': True, 'msg': '',
         'metrics': perftest_metrics('write_bw.client'), 'gid_index': 2, 'gid_ipv4': '10.255.0.1', 'netdev': 'va.100'},
        {'kind': 'bw', 'side': 'server', 'test': 'ib_write_bw', 'client': client, 'server': server, 'ok': True, 'msg': '',
         'metrics': perftest_metrics('write_bw.server'), 'gid_index': 2},
        {'kind': 'lat', 'side': 'client', 'test': 'ib_write_lat', 'client': client, 'server': server, 'ok': True, 'msg': '',
         'metrics': perftest_metrics('write_lat.client'), 'gid_index': 2},
    ]


ROUNDS = rr.ring_rounds(['node1', 'node2'])
TESTS = ['ib_write_bw', 'ib_write_lat']


def test_matrix_all_pass():
    m = rr.build_matrix(ROUNDS, ok_records('node1', 'node2') + ok_records('node2', 'node1'), TESTS)
    assert (m['passed'], m['total'], m['failed'], m['checks']) == (True, 2, 0, ['ping', 'bw', 'lat'])
    assert [r['pair'] for r in m['pairs']] == ['node1 -> node2', 'node2 -> node1']
    assert m['pairs'][0]['checks']['bw']['metrics']['bw_average_mib_s'] == 46.86
    bw = m['pairs'][0]['checks']['bw']
    assert (bw['gid_index'], bw['gid_ipv4'], bw['netdev']) == (2, '10.255.0.1', 'va.100')
    assert m['nodes'] == {'node1': {'passed': True, 'failed_pairs': []}, 'node2': {'passed': True, 'failed_pairs': []}}


def test_matrix_per_node_result_counts_both_sides_of_a_pair():
    nodes = ['node1', 'node2', 'node3']
    records = ok_records('node1', 'node2') + ok_records('node2', 'node3', ping_ok=False) + ok_records('node3', 'node1')
    m = rr.build_matrix(rr.ring_rounds(nodes), records, TESTS)
    assert m['nodes'] == {
        'node1': {'passed': True, 'failed_pairs': []},
        'node2': {'passed': False, 'failed_pairs': ['node2 -> node3']},
        'node3': {'passed': False, 'failed_pairs': ['node2 -> node3']},
    }


def test_matrix_missing_host_and_failures():
    records = ok_records('node1', 'node2', ping_ok=False)
    below = 'node1: ib_write_bw client to 10.255.0.6: average bandwidth 0.39 Gb/s (4096-byte messages) is below min_bw_gbps=100'
    records[1] = dict(records[1], ok=False, msg=below)
    m = rr.build_matrix(ROUNDS, records, TESTS)  # node2 left no record (unreachable)
    assert (m['passed'], m['failed']) == (False, 2)
    assert m['pairs'][0]['failures'] == [
        'ping: ping 10.255.0.2: rc=1, 0 of 3 replies',
        'ib_write_bw: node1: ib_write_bw client to 10.255.0.6: average bandwidth 0.39 Gb/s (4096-byte messages) is below min_bw_gbps=100',
    ]
    assert m['pairs'][1]['failures'] == ['ping: not run (no result from the client host)',
                                         'bw: not run (no result from the client host)',
                                         'lat: not run (no result from the client host)']


def test_matrix_server_failure_is_quoted_next_to_the_client_failure():
    records = ok_records('node1', 'node2')
    records[1] = dict(records[1], ok=False, msg="node1: ib_write_bw client to 10.255.0.6 failed (rc=1). perftest said: 'Failed to modify QP 19 to RTR'")
    records[2] = dict(records[2], ok=False, msg="node2: ib_write_bw server failed (rc=1). perftest said: 'ethernet_read_keys: Couldn't read remote address'")
    m = rr.build_matrix(ROUNDS[:1], records, TESTS)
    assert m['pairs'][0]['checks']['bw']['message'] == (
        "node1: ib_write_bw client to 10.255.0.6 failed (rc=1). perftest said: 'Failed to modify QP 19 to RTR'; "
        "server: node2: ib_write_bw server failed (rc=1). perftest said: 'ethernet_read_keys: Couldn't read remote address'")


def test_matrix_carries_each_side_s_error_class_of_a_failed_check():
    # What a retry selects on (molecule/lab/multirail.yml: perftest's clock calibration), rather than perftest's words.
    records = ok_records('node1', 'node2')
    records[1] = dict(records[1], ok=False, msg="node1: ib_write_bw client ... Can't produce a report", error_class='clock_calibration')
    records[2] = dict(records[2], ok=False, msg='node2: ib_write_bw server: the client went away', error_class='peer_gone')
    records[3] = dict(records[3], error_class=None)
    m = rr.build_matrix(ROUNDS[:1], records, TESTS)
    bw, lat = m['pairs'][0]['checks']['bw'], m['pairs'][0]['checks']['lat']
    assert (bw['error_class'], bw['server_error_class']) == ('clock_calibration', 'peer_gone')
    assert 'error_class' not in lat and 'server_error_class' not in lat
    # a check that passed carries no class, whatever its record says
    records[1] = dict(records[1], ok=True, error_class='clock_calibration')
    records[2] = dict(records[2], ok=True)
    assert 'error_class' not in rr.build_matrix(ROUNDS[:1], records, TESTS)['pairs'][0]['checks']['bw']


def test_table():
    records = ok_records('node1', 'node2') + ok_records('node2', 'node1', ping_ok=False)
    table = rr.render_table(rr.build_matrix(ROUNDS, records, TESTS))
    assert table.splitlines() == [
        'pair            ping         bw avg Gb/s  % of link  lat avg us  result',
        '--------------  -----------  -----------  ---------  ----------  ------',
        'node1 -> node2  ok 0.123 ms  0.39         3.9        4071.18     PASS',
        'node2 -> node1  FAIL         0.39         3.9        4071.18     FAIL',
        '1 of 2 pairs passed',
        'FAIL node2 -> node1: ping: ping 10.255.0.2: rc=1, 0 of 3 replies',
    ]


def test_junit():
    records = ok_records('node1', 'node2') + ok_records('node2', 'node1', ping_ok=False)
    xml = rr.render_junit(rr.build_matrix(ROUNDS, records, TESTS))
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')
    root = ET.fromstring(xml.split('\n', 1)[1])
    suite = root.find('testsuite')
    assert (suite.get('tests'), suite.get('failures')) == ('6', '1')
    names = [c.get('name') for c in suite.findall('testcase')]
    assert names == ['ping node1 -> node2', 'ib_write_bw node1 -> node2', 'ib_write_lat node1 -> node2',
                     'ping node2 -> node1', 'ib_write_bw node2 -> node1', 'ib_write_lat node2 -> node1']
    failed = [c for c in suite.findall('testcase') if c.find('failure') is not None]
    assert [(c.get('name'), c.find('failure').get('message')) for c in failed] == [
        ('ping node2 -> node1', 'ping 10.255.0.2: rc=1, 0 of 3 replies')]
    assert 'bw_average_gbps=' in suite.findall('testcase')[1].find('system-out').text
    assert suite.findall('testcase')[0].find('system-out').text == (
        'loss_pct=0.0, received=3, rtt_avg_ms=0.123, rtt_max_ms=0.304, rtt_min_ms=0.032, transmitted=3')


# ---------------------------------------------------------------- pod mode

NODES = [{'host': 'node1', 'node_name': 'node1', 'network': 'roce-node1', 'resource': 'nvidia.com/roce_node1'},
         {'host': 'node2', 'node_name': 'Node_2.lab', 'network': 'roce-node-2-lab', 'resource': 'nvidia.com/roce_Node_2_lab'}]
SETTINGS = {'namespace': 'rdma-test', 'image': 'registry.local/mirror/perftest:4.5', 'image_pull_secrets': ['mirror'],
            'name_prefix': 'rdma-verify', 'labels': {'app.kubernetes.io/managed-by': 'gpufabric.roce.rdma_verify'}}


def test_pod_manifests():
    pods = rp.pod_manifests(NODES, SETTINGS)
    assert [p['metadata']['name'] for p in pods] == ['rdma-verify-node1', 'rdma-verify-node-2-lab']
    pod = pods[0]
    assert pod['metadata']['annotations'] == {'k8s.v1.cni.cncf.io/networks': 'roce-node1'}
    # placed by kube-scheduler (resource fit), not pinned past it with nodeName
    assert 'nodeName' not in pod['spec']
    assert pod['spec']['nodeSelector'] == {'kubernetes.io/hostname': 'node1'}
    c = pod['spec']['containers'][0]
    assert c['resources'] == {'requests': {'nvidia.com/roce_node1': '1'}, 'limits': {'nvidia.com/roce_node1': '1'}}
    assert 'IPC_LOCK' in c['securityContext']['capabilities']['add']
    assert c['image'] == 'registry.local/mirror/perftest:4.5'
    assert pod['spec']['imagePullSecrets'] == [{'name': 'mirror'}]
    assert pod['metadata']['labels']['app.kubernetes.io/managed-by'] == 'gpufabric.roce.rdma_verify'


def test_pod_manifests_validate_against_the_kubernetes_schema():
    kv = pytest.importorskip('kubernetes_validate')
    for pod in rp.pod_manifests(NODES, SETTINGS):
        kv.validate(pod, '1.30', strict=True)


@pytest.mark.parametrize('node,settings,message', [
    (dict(NODES[0], resource='roce_node1'), SETTINGS,
     'node1: rdma_verify_pod_resource="roce_node1": must be <prefix>/<resourceName>. Fix: e.g. nvidia.com/roce_node1'),
    (dict(NODES[0], network=''), SETTINGS, 'node1: rdma_verify_pod_network="": is empty. Fix: set it per node (see the role README)'),
    (NODES[0], dict(SETTINGS, image=''), '(play): rdma_verify_pod_image="": no test image. Fix: set rdma_verify_pod_image to an '
                                         'image with perftest and ping (mirror it for air-gapped clusters)'),
    (dict(NODES[0], node_name='n' * 60), SETTINGS,
     'node1: roce_node_name="%s": the pod name rdma-verify-%s is longer than 63 characters. Fix: shorten rdma_verify_pod_name_prefix'
     % ('n' * 60, 'n' * 60)),
])
def test_pod_manifest_errors(node, settings, message):
    with pytest.raises(rp.PodError) as err:
        rp.pod_manifests([node], settings)
    assert str(err.value) == message


def test_pod_net1_address():
    status = ('[{"name": "cbr0", "interface": "eth0", "ips": ["10.42.0.7"], "default": true}, '
              '{"name": "default/roce-node1", "interface": "net1", "ips": ["10.255.0.1", "fe80::1"]}]')
    pod = {'metadata': {'annotations': {'k8s.v1.cni.cncf.io/network-status': status}}}
    assert rp.pod_net1_address(pod) == '10.255.0.1'
    assert rp.pod_net1_address({'metadata': {}}) is None
    assert rp.pod_net1_address({'metadata': {'annotations': {'k8s.v1.cni.cncf.io/network-status': 'not json'}}}) is None


def _pod(name, status):
    return {'metadata': {'name': name, 'annotations': {'k8s.v1.cni.cncf.io/network-status': json.dumps(status)}}}


# Multus lists the networks in the order the kubelet attached them, which need not be request order:
# the match is by network name, namespaced or bare.
RAIL_PODS = {
    'node1': _pod('rdma-verify-node1', [
        {'name': 'cbr0', 'interface': 'eth0', 'ips': ['10.42.0.7'], 'default': True},
        {'name': 'default/roce-node1-rail1', 'interface': 'net2', 'ips': ['fe80::2', '10.255.1.1']},
        {'name': 'default/roce-node1-rail0', 'interface': 'net1', 'ips': ['10.255.0.1']}]),
    'node2': _pod('rdma-verify-node2', [
        {'name': 'roce-node2-rail0', 'interface': 'net1', 'ips': ['10.255.0.5']},
        {'name': 'roce-node2-rail1', 'interface': 'net2', 'ips': ['10.255.1.5']}]),
}


def _attachments(node):
    return [{'rail': r, 'network': 'roce-%s-%s' % (node, r), 'resource': 'nvidia.com/roce_%s_%s' % (node, r)}
            for r in ('rail0', 'rail1')]


def test_pod_rail_addresses_match_by_network_name_not_position():
    assert rp.pod_rail_addresses(RAIL_PODS['node1'], _attachments('node1')) == [
        {'name': 'rail0', 'address': '10.255.0.1', 'netdev': 'net1'},
        {'name': 'rail1', 'address': '10.255.1.1', 'netdev': 'net2'}]
    # a rail whose network is not attached has no address, and the ring plan names the node
    missing = rp.pod_rail_addresses(RAIL_PODS['node2'], _attachments('node2') + [
        {'rail': 'rail2', 'network': 'roce-node2-rail2'}])
    assert missing[-1] == {'name': 'rail2', 'address': None, 'netdev': None}
    assert rp.pod_rail_addresses({'metadata': {}}, _attachments('node1'))[0]['address'] is None


def test_pod_rings_per_rail_test_rail_i_to_rail_i_over_the_pod_interfaces():
    rails = {n: rp.pod_rail_addresses(RAIL_PODS[n], _attachments(n)) for n in ('node1', 'node2')}
    p = rr.plan(['node1', 'node2'], {}, 18515, rails)
    assert p['rails'] == ['rail0', 'rail1']
    peers = {(d['rail'], d['netdev'], d['client_to'], d['peer_address']) for d in p['duties']['node1'] if d.get('client_to')}
    assert peers == {('rail0', 'net1', 'node2', '10.255.0.5'), ('rail1', 'net2', 'node2', '10.255.1.5')}
    # every pair of every round carries its rail, and no pair crosses rails
    for pairs in p['rounds']:
        for pair in pairs:
            duty = next(d for d in p['duties'][pair['client']] if d['round'] == p['rounds'].index(pairs))
            assert duty['rail'] == pair['rail'] and duty['peer_address'].startswith('10.255.%s.' % pair['rail'][-1])


def test_a_pod_without_a_rail_address_is_refused_by_name():
    rails = {n: rp.pod_rail_addresses(RAIL_PODS[n], _attachments(n)) for n in ('node1', 'node2')}
    rails['node2'][1]['address'] = None
    with pytest.raises(rr.ReportError) as err:
        rr.plan(['node1', 'node2'], {}, 18515, rails)
    assert 'node2' in str(err.value) and 'no address' in str(err.value)


def test_every_pair_of_a_big_ring_is_reported_once():
    nodes = ['node%d' % i for i in range(1, 8)]
    rounds = rr.ring_rounds(nodes)
    records = list(itertools.chain.from_iterable(ok_records(p['client'], p['server']) for r in rounds for p in r))
    m = rr.build_matrix(rounds, records, TESTS)
    assert m['passed'] is True
    assert sorted(r['pair'] for r in m['pairs']) == sorted('%s -> %s' % (nodes[i], nodes[(i + 1) % 7]) for i in range(7))


def test_schema_validation_catches_a_broken_pod():
    kv = pytest.importorskip('kubernetes_validate')
    pod = rp.pod_manifests(NODES[:1], SETTINGS)[0]
    pod['spec']['containers'][0]['securityContext']['capabilities']['add'] = 'IPC_LOCK'  # must be a list
    with pytest.raises(kv.ValidationError):
        kv.validate(pod, '1.30', strict=True)


def _pod_result(name, node=None, ready=False, scheduled_msg=None):
    conditions = []
    if scheduled_msg:
        conditions.append({'type': 'PodScheduled', 'status': 'False', 'reason': 'Unschedulable', 'message': scheduled_msg})
    if ready:
        conditions.append({'type': 'Ready', 'status': 'True'})
    spec = {'nodeName': node} if node else {}
    return {'metadata': {'name': name}, 'spec': spec, 'status': {'phase': 'Running' if ready else 'Pending', 'conditions': conditions}}


def test_pod_placement_reports_the_node_and_the_scheduler_reason():
    nodes = [{'host': h, 'node_name': h, 'network': 'roce-' + h, 'resource': 'nvidia.com/roce_' + h} for h in ('node1', 'node2', 'node3')]
    pods = rp.pod_manifests(nodes, {'image': 'perftest:1'})
    results = [
        _pod_result('rdma-verify-node1', 'node1', ready=True),
        _pod_result('rdma-verify-node2', scheduled_msg='0/3 nodes are available: 3 Insufficient nvidia.com/roce_node2.'),
        _pod_result('rdma-verify-node3', 'node1', ready=True),
    ]
    placement = rp.pod_placement(results, pods)
    assert [p['ok'] for p in placement] == [True, False, False]
    assert [p['line'] for p in placement] == [
        'rdma-verify-node1: Ready on node1 with 1 nvidia.com/roce_node1',
        'rdma-verify-node2: not scheduled: 0/3 nodes are available: 3 Insufficient nvidia.com/roce_node2.',
        'rdma-verify-node3: scheduled on node1 instead of node3',
    ]
    assert rp.pod_placement([], pods[:1])[0]['line'] == 'rdma-verify-node1: not found'


# One template: every node requests the same networks and resources (a cluster-wide IPAM, nv-ipam's per-rail pools).
SHARED = [dict(n, network='roce-rail0,roce-rail1', resource='nvidia.com/roce_rail0',
               rails=[{'rail': r, 'network': 'roce-' + r, 'resource': 'nvidia.com/roce_' + r} for r in ('rail0', 'rail1')])
          for n in NODES]


def _live(name, node, ready=True):
    return {'metadata': {'name': name}, 'spec': {'nodeName': node},
            'status': {'conditions': [{'type': 'Ready', 'status': 'True' if ready else 'False'}]}}


def test_nodes_with_the_same_attachments_get_one_pod_template_placed_by_the_scheduler():
    pods = rp.pod_manifests(SHARED, SETTINGS)
    assert [p['metadata']['name'] for p in pods] == ['rdma-verify-0', 'rdma-verify-1']
    # one template: everything but the name is the same, and no pod names its node
    strip = [dict(p, metadata=dict(p['metadata'], name=None)) for p in pods]
    assert strip[0] == strip[1]
    spec = pods[0]['spec']
    assert 'nodeSelector' not in spec and 'nodeName' not in spec
    terms = spec['affinity']['nodeAffinity']['requiredDuringSchedulingIgnoredDuringExecution']['nodeSelectorTerms']
    assert terms == [{'matchExpressions': [{'key': 'kubernetes.io/hostname', 'operator': 'In', 'values': ['node1', 'Node_2.lab']}]}]
    (anti,) = spec['affinity']['podAntiAffinity']['requiredDuringSchedulingIgnoredDuringExecution']
    assert anti['topologyKey'] == 'kubernetes.io/hostname'
    assert all(pods[0]['metadata']['labels'][k] == v for k, v in anti['labelSelector']['matchLabels'].items())
    assert spec['containers'][0]['resources']['requests'] == {'nvidia.com/roce_rail0': '1', 'nvidia.com/roce_rail1': '1'}
    assert pods[0]['metadata']['annotations'] == {'k8s.v1.cni.cncf.io/networks': 'roce-rail0,roce-rail1'}
    # host-local's per-node attachments keep one pinned pod per node
    assert [p['spec']['nodeSelector'] for p in rp.pod_manifests(NODES, SETTINGS)] == [
        {'kubernetes.io/hostname': 'node1'}, {'kubernetes.io/hostname': 'Node_2.lab'}]


def test_one_template_pods_are_ok_on_distinct_nodes_of_the_rollout_only():
    pods = rp.pod_manifests(SHARED, SETTINGS)
    spread = rp.pod_placement([_live('rdma-verify-0', 'Node_2.lab'), _live('rdma-verify-1', 'node1')], pods)
    assert [(p['ok'], p['node']) for p in spread] == [(True, 'Node_2.lab'), (True, 'node1')]
    assert spread[0]['line'] == 'rdma-verify-0: Ready on Node_2.lab with 1 nvidia.com/roce_rail0, nvidia.com/roce_rail1'
    twice = rp.pod_placement([_live('rdma-verify-0', 'node1'), _live('rdma-verify-1', 'node1')], pods)
    assert [p['ok'] for p in twice] == [True, False]
    assert twice[1]['line'] == 'rdma-verify-1: scheduled on node1, which another test pod already has'
    away = rp.pod_placement([_live('rdma-verify-0', 'node9'), _live('rdma-verify-1', 'node1')], pods)
    assert away[0]['line'] == 'rdma-verify-0: scheduled on node9 instead of node1 or Node_2.lab'


def test_dra_mode_pods_claim_through_the_rails_templates_instead_of_requesting():
    pods = rp.pod_manifests(SHARED, dict(SETTINGS, claims=True))
    spec = pods[0]['spec']
    assert spec['resourceClaims'] == [{'name': 'roce-rail0', 'resourceClaimTemplateName': 'roce-rail0'},
                                      {'name': 'roce-rail1', 'resourceClaimTemplateName': 'roce-rail1'}]
    assert spec['containers'][0]['resources'] == {'claims': [{'name': 'roce-rail0'}, {'name': 'roce-rail1'}]}
    assert pods[0]['metadata']['annotations'] == {'k8s.v1.cni.cncf.io/networks': 'roce-rail0,roce-rail1'}
    placed = rp.pod_placement([_live('rdma-verify-0', 'node1'), _live('rdma-verify-1', 'node1')], pods)
    assert [p['line'] for p in placed] == ['rdma-verify-0: Ready on node1 with the claims roce-rail0, roce-rail1',
                                           'rdma-verify-1: scheduled on node1, which another test pod already has']
    assert 'resourceClaims' not in rp.pod_manifests(SHARED, SETTINGS)[0]['spec']


def test_a_one_template_pod_name_too_long_blames_the_prefix_not_a_node():
    with pytest.raises(rp.PodError) as err:
        rp.pod_manifests(SHARED, dict(SETTINGS, name_prefix='p' * 62))
    assert str(err.value) == ('(play): rdma_verify_pod_name_prefix="%s": the pod name %s-0 is longer than 63 characters. '
                              'Fix: shorten rdma_verify_pod_name_prefix' % ('p' * 62, 'p' * 62))

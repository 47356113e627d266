# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Known-good isolation (_verify.rdma_isolation): from a failing ring to the node at fault."""

from __future__ import absolute_import, division, print_function

from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_isolation as iso
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_report as rr


def _records(pairs, bad, rail=None):
    """Ping and bw records of ``pairs``: a pair fails when a node of it is in ``bad`` (a broken node breaks its pairs)."""
    out = []
    for p in pairs:
        ok = p['client'] not in bad and p['server'] not in bad
        base = {'side': 'client', 'client': p['client'], 'server': p['server'], 'rail': p.get('rail', rail), 'ok': ok,
                'msg': '' if ok else 'Couldn\'t connect'}
        out.append(dict(base, kind='ping', ping={'received': 3 if ok else 0, 'transmitted': 3}))
        out.append(dict(base, kind='bw', metrics={'bw_average_gbps': 90.0} if ok else {}))
    return out


def _run(plan, bad):
    ring = rr.build_matrix(plan['rounds'], _records([p for r in plan['rounds'] for p in r], bad), ['ib_write_bw'])
    ip = iso.isolation_plan(plan, ring)
    iso_matrix = rr.build_matrix(ip['rounds'], _records([p for r in ip['rounds'] for p in r], bad), ['ib_write_bw'])
    return ring, ip, iso.verdicts(ip, iso_matrix)


def test_a_broken_node_in_a_ring_of_eight_is_named_in_one_extra_round():
    nodes = ['n%d' % i for i in range(8)]
    plan = rr.plan(nodes, {n: '10.0.0.%d' % (i + 1) for i, n in enumerate(nodes)})
    ring, ip, verdicts = _run(plan, {'n5'})
    assert ring['failed'] == 2 and len(ip['rounds']) == 1
    assert [(v['node'], v['verdict']) for v in verdicts] == [('n5', 'at fault'), ('n4', 'not at fault'), ('n6', 'not at fault')]
    # suspects n4, n5, n6 against the known-good n0, n1, n2, round-robin
    assert 'fails against n1' in verdicts[0]['reason']
    # every isolation duty has a round per node, as the ring's
    assert all(len(d) == len(ip['rounds']) for d in ip['duties'].values())
    assert ip['duties']['n5'][0]['peer_address'] == '10.0.0.2' and ip['duties']['n1'][0]['server_for'] == 'n5'


def test_two_nodes_without_a_known_good_one_test_themselves():
    plan = rr.plan(['node1', 'node2'], {'node1': '10.255.0.2', 'node2': '10.255.0.6'})
    ring, ip, verdicts = _run(plan, {'node2'})
    assert ring['failed'] == 2 and [t['kind'] for t in ip['tests']] == ['self', 'self']
    assert ip['duties']['node2'][0]['client_to'] == 'node2' and ip['duties']['node2'][0]['peer_address'] == '10.255.0.6'
    assert [(v['node'], v['verdict']) for v in verdicts] == [('node2', 'at fault'), ('node1', 'inconclusive')]
    assert 'fails even against itself' in verdicts[0]['reason']
    lines = iso.verdict_lines(verdicts)
    assert lines[0].startswith('AT FAULT node2: fails even against itself')


def test_rails_are_isolated_each_on_its_own_rail():
    rails = {n: [{'name': 'rail0', 'gateway': '10.1.0.%d' % i, 'pf': 'p0', 'vlan': 101},
                 {'name': 'rail1', 'gateway': '10.2.0.%d' % i, 'pf': 'p1', 'vlan': 102}] for i, n in enumerate(['a', 'b', 'c', 'd'], 1)}
    plan = rr.plan(list(rails), {}, 18515, rails)
    rounds = [p for r in plan['rounds'] for p in r]
    records = _records([p for p in rounds if p['rail'] == 'rail0'], set()) + _records([p for p in rounds if p['rail'] == 'rail1'], {'c'})
    ring = rr.build_matrix(plan['rounds'], records, ['ib_write_bw'])
    ip = iso.isolation_plan(plan, ring)
    assert {t['rail'] for t in ip['tests']} == {'rail1'}
    duty = next(d for d in ip['duties']['c'] if d['client_to'])
    assert duty['rail'] == 'rail1' and duty['netdev'] == 'p1.102' and duty['peer_address'].startswith('10.2.0.')


def test_a_node_at_fault_on_one_rail_and_known_good_on_another_has_one_duty_per_round():
    # Rail 0 loses n1, rail 1 loses n2: n3 and n4 are suspects on one rail and known-good partners on the other. A round
    # may hold each node in one pair only, or a node's single duty (one rail, netdev and port) is overwritten by the
    # second pair and its server listens on the other rail.
    nodes = ['n1', 'n2', 'n3', 'n4']
    rails = {n: [{'name': 'rail0', 'gateway': '10.1.0.%d' % i, 'pf': 'p0', 'vlan': 101},
                 {'name': 'rail1', 'gateway': '10.2.0.%d' % i, 'pf': 'p1', 'vlan': 102}] for i, n in enumerate(nodes, 1)}
    plan = rr.plan(nodes, {}, 18515, rails)
    pairs = [p for r in plan['rounds'] for p in r]
    records = (_records([p for p in pairs if p['rail'] == 'rail0'], {'n1'})
               + _records([p for p in pairs if p['rail'] == 'rail1'], {'n2'}))
    ip = iso.isolation_plan(plan, rr.build_matrix(plan['rounds'], records, ['ib_write_bw']))
    for rnd in ip['rounds']:
        members = [n for p in rnd for n in sorted({p['client'], p['server']})]
        assert len(members) == len(set(members)), rnd
    # every pair's two duties agree on its rail, netdev and port
    for r, rnd in enumerate(ip['rounds']):
        for p in rnd:
            client, server = ip['duties'][p['client']][r], ip['duties'][p['server']][r]
            assert client['client_to'] == p['server'] and server['server_for'] == p['client']
            assert client['rail'] == server['rail'] == p['rail'] and client['tcp_port'] == server['tcp_port']
            assert client['peer_address'] == plan['addresses'][p['rail']][p['server']]


def test_a_passing_ring_needs_no_isolation():
    plan = rr.plan(['a', 'b', 'c'], {'a': '10.0.0.1', 'b': '10.0.0.2', 'c': '10.0.0.3'})
    ring, ip, verdicts = _run(plan, set())
    assert ring['passed'] and ip['rounds'] == [] and verdicts == []


def test_many_suspects_share_the_known_good_nodes_round_robin():
    nodes = ['n%02d' % i for i in range(10)]
    plan = rr.plan(nodes, {n: '10.0.0.%d' % (i + 1) for i, n in enumerate(nodes)})
    _ring, ip, verdicts = _run(plan, {'n01', 'n03', 'n05', 'n07'})
    # suspects n00..n08 (9: every neighbour of a broken node) against the one node that passed every pair, n09
    assert len(ip['tests']) == 9 and {t['server'] for t in ip['tests']} == {'n09'}
    assert {v['node'] for v in verdicts if v['verdict'] == 'at fault'} == {'n01', 'n03', 'n05', 'n07'}

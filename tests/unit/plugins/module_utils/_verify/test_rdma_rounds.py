# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Extra rounds over chosen pairs (_verify.rdma_rounds): the pairs perftest measured nothing for, taken once more, and judged on
that run by the matrix."""

from __future__ import absolute_import, division, print_function

from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_report as rr
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_rounds as rounds
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_summary as _rdma_summary

CALIBRATION = 'clock_calibration'


def _records(pairs, outcome, remeasured=False):
    """Ping and bw records of ``pairs``; ``outcome`` maps a pair's client to (ping ok, client class, server class), every
    other pair passes."""
    out = []
    for p in pairs:
        ping_ok, client_class, server_class = outcome.get(p['client'], (True, None, None))
        base = {'side': 'client', 'client': p['client'], 'server': p['server'], 'rail': p.get('rail'), 'remeasured': remeasured}
        out.append(dict(base, kind='ping', ok=ping_ok, ping={'received': 3 if ping_ok else 0, 'transmitted': 3}))
        failed = client_class is not None or server_class is not None
        out.append(dict(base, kind='bw', test='ib_write_bw', ok=not failed, error_class=client_class,
                        msg='perftest failed' if failed else '', metrics={} if failed else {'bw_average_gbps': 90.0}))
        if server_class:
            out.append(dict(base, kind='bw', side='server', test='ib_write_bw', ok=False, error_class=server_class,
                            msg='Correlation coefficient r^2: 0.4 < 0.9'))
    return out


def _ring(nodes):
    return rr.plan(nodes, {n: '10.0.0.%d' % (i + 1) for i, n in enumerate(nodes)})


def test_only_the_pairs_perftest_measured_nothing_for_are_taken_again_one_pair_per_node_and_round():
    nodes = ['n%d' % i for i in range(6)]
    plan = _ring(nodes)
    pairs = [p for r in plan['rounds'] for p in r]
    outcome = {
        'n0': (True, CALIBRATION, None),        # the client could not calibrate: taken again
        'n1': (True, 'peer_gone', CALIBRATION),  # the server could not, the client saw it go: taken again
        'n2': (True, 'tcp_connect', None),       # a result: stands
        'n3': (False, CALIBRATION, None),        # its ping failed too: a result, stands
        'n4': (True, CALIBRATION, None),
    }
    matrix = rr.build_matrix(plan['rounds'], _records(pairs, outcome), ['ib_write_bw'])
    assert matrix['failed'] == 5
    again = rounds.remeasure_plan(plan, matrix, 20000)
    assert sorted(again['pairs']) == ['n0 -> n1', 'n1 -> n2', 'n4 -> n5'] and again['tests'] == ['ib_write_bw']
    # n1 is in two of them: two rounds, no node twice in one
    assert [sorted((p['client'], p['server']) for p in r) for r in again['rounds']] == [[('n0', 'n1'), ('n4', 'n5')], [('n1', 'n2')]]
    for r, rnd in enumerate(again['rounds']):
        busy = [n for p in rnd for n in (p['client'], p['server'])]
        assert len(busy) == len(set(busy))
        for i, p in enumerate(rnd):
            client, server = again['duties'][p['client']][r], again['duties'][p['server']][r]
            assert client['client_to'] == p['server'] and server['server_for'] == p['client']
            assert client['tcp_port'] == server['tcp_port'] == 20000 + i
            assert client['peer_address'] == plan['addresses'][p['server']]
    assert all(len(d) == 2 for d in again['duties'].values())
    idle = {'client_to': None, 'server_for': None, 'peer_address': None, 'client_port': None, 'server_port': None, 'tcp_port': None}
    assert again['duties']['n3'] == [dict(idle, round=0), dict(idle, round=1)]


def test_the_second_run_is_what_the_matrix_judges_and_the_report_says_so():
    plan = _ring(['node1', 'node2'])
    pairs = [p for r in plan['rounds'] for p in r]
    first = _records(pairs, {'node2': (True, CALIBRATION, None)})
    again = rounds.remeasure_plan(plan, rr.build_matrix(plan['rounds'], first, ['ib_write_bw']))
    assert again['pairs'] == ['node2 -> node1']
    second = _records([p for r in again['rounds'] for p in r], {}, remeasured=True)
    matrix = rr.build_matrix(plan['rounds'], first + second, ['ib_write_bw'])
    assert matrix['passed'] and matrix['remeasured'] == 1
    assert [r.get('remeasured', False) for r in matrix['pairs']] == [False, True]
    assert matrix['pairs'][1]['checks']['bw']['metrics'] == {'bw_average_gbps': 90.0}
    assert 'AGAIN node2 -> node1: perftest measured nothing the first time' in rr.render_table(matrix)
    assert _rdma_summary.summary(matrix)['remeasured_pairs'] == 1
    # measured nothing twice: it fails, on the second run's record
    twice = _records([p for r in again['rounds'] for p in r], {'node2': (True, CALIBRATION, None)}, remeasured=True)
    matrix = rr.build_matrix(plan['rounds'], first + twice, ['ib_write_bw'])
    assert not matrix['passed'] and matrix['pairs'][1]['remeasured'] and matrix['pairs'][1]['checks']['bw']['error_class'] == CALIBRATION


def test_rails_are_taken_again_on_their_own_rail_and_netdev():
    rails = {n: [{'name': 'rail0', 'gateway': '10.1.0.%d' % i, 'pf': 'p0', 'vlan': 101},
                 {'name': 'rail1', 'gateway': '10.2.0.%d' % i, 'pf': 'p1', 'vlan': 102}] for i, n in enumerate(['a', 'b', 'c', 'd'], 1)}
    plan = rr.plan(list(rails), {}, 18515, rails)
    pairs = [p for r in plan['rounds'] for p in r]
    records = [rec for rec in _records(pairs, {}) if rec['rail'] == 'rail0']
    records += _records([p for p in pairs if p['rail'] == 'rail1'], {'c': (True, None, CALIBRATION)})
    again = rounds.remeasure_plan(plan, rr.build_matrix(plan['rounds'], records, ['ib_write_bw']))
    assert again['pairs'] == ['rail1: c -> d'] and again['rounds'] == [[{'client': 'c', 'server': 'd', 'rail': 'rail1'}]]
    assert again['duties']['c'][0]['netdev'] == 'p1.102' and again['duties']['c'][0]['peer_address'] == '10.2.0.4'
    assert again['duties']['d'][0]['rail'] == 'rail1' and again['duties']['d'][0]['server_for'] == 'c'


def test_a_passing_ring_or_measured_failures_need_no_second_run():
    plan = _ring(['a', 'b', 'c'])
    pairs = [p for r in plan['rounds'] for p in r]
    assert rounds.remeasure_plan(plan, rr.build_matrix(plan['rounds'], _records(pairs, {}), ['ib_write_bw']))['rounds'] == []
    failed = rr.build_matrix(plan['rounds'], _records(pairs, {'a': (True, 'timeout', None)}), ['ib_write_bw'])
    assert rounds.remeasure_plan(plan, failed) == {'rounds': [], 'duties': {'a': [], 'b': [], 'c': []}, 'pairs': [], 'tests': []}
    # a check with no client record at all (the host failed): not run, not taken again
    missing = rr.build_matrix(plan['rounds'], [r for r in _records(pairs, {}) if r['client'] != 'b'], ['ib_write_bw'])
    assert not missing['passed'] and rounds.remeasure_plan(plan, missing)['pairs'] == []


def test_only_the_tests_that_measured_nothing_run_again():
    plan = _ring(['node1', 'node2'])
    pairs = [p for r in plan['rounds'] for p in r]
    records = _records(pairs, {})
    # node2's latency test could not calibrate; its bandwidth test and every ping measured
    records.append({'kind': 'lat', 'side': 'client', 'test': 'ib_write_lat', 'client': 'node1', 'server': 'node2', 'ok': True,
                    'metrics': {'t_avg_us': 5.0}})
    records.append({'kind': 'lat', 'side': 'client', 'test': 'ib_write_lat', 'client': 'node2', 'server': 'node1', 'ok': False,
                    'error_class': CALIBRATION, 'msg': "Can't produce a report"})
    matrix = rr.build_matrix(plan['rounds'], records, ['ib_write_bw', 'ib_write_lat'])
    again = rounds.remeasure_plan(plan, matrix)
    assert again['pairs'] == ['node2 -> node1'] and again['tests'] == ['ib_write_lat']
    # its second run: the latency test's records alone; the pair keeps its first ping and bandwidth figures
    second = [{'kind': 'lat', 'side': 'client', 'test': 'ib_write_lat', 'client': 'node2', 'server': 'node1', 'ok': True,
               'metrics': {'t_avg_us': 6.0}, 'remeasured': True}]
    matrix = rr.build_matrix(plan['rounds'], records + second, ['ib_write_bw', 'ib_write_lat'])
    row = matrix['pairs'][1]
    assert matrix['passed'] and row['remeasured'] and row['checks']['lat']['metrics'] == {'t_avg_us': 6.0}
    assert row['checks']['bw']['metrics'] == {'bw_average_gbps': 90.0} and row['checks']['ping']['ok']

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The set_stats summary of rdma_verify (issue 17): under AWX it is the only record of the verification, so
it names every failing pair (a pair not listed passed), and stays bounded at 10,000 nodes x 8 rails."""

import json

from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_isolation as iso
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_report as rr
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.rdma_summary import MAX_FAILURES, summary

from test_rdma_isolation import _records as _isolation_records
from test_rdma_report import ROUNDS, TESTS, ok_records


def test_summary_names_every_failing_pair_and_rail_figures():
    nodes = ['node1', 'node2', 'node3']
    records = ok_records('node1', 'node2') + ok_records('node2', 'node3', ping_ok=False) + ok_records('node3', 'node1')
    m = rr.build_matrix(rr.ring_rounds(nodes), records, TESTS)
    s = summary(m)
    assert (s['passed'], s['pairs'], s['failed_pairs'], s['failures_omitted']) == (False, 3, 1, 0)
    assert [f['pair'] for f in s['failures']] == ['node2 -> node3']
    assert s['failures'][0]['failures'][0] == 'ping: ping 10.255.0.2: rc=1, 0 of 3 replies'
    assert s['failed_nodes'] == ['node2', 'node3']
    rail = s['rails']['all']
    assert (rail['pairs'], rail['failed'], rail['passed']) == (3, 1, False)
    # Figures of the two passing pairs only.
    assert rail['bw_gbps']['pairs'] == 2 and rail['lat_us']['pairs'] == 2
    assert rail['bw_gbps']['min'] <= rail['bw_gbps']['avg'] <= rail['bw_gbps']['max']


def test_summary_all_pass():
    s = summary(rr.build_matrix(ROUNDS, ok_records('node1', 'node2') + ok_records('node2', 'node1'), TESTS))
    assert s['passed'] and s['failures'] == [] and s['failed_nodes'] == [] and s['rails']['all']['failed'] == 0


def _fleet_matrix(nodes, rails, failing_rail):
    """A matrix of ``nodes`` x ``rails`` ring pairs where every pair of ``failing_rail`` failed."""
    rows = []
    for rail in range(rails):
        name = 'rail%d' % rail
        for i in range(nodes):
            c, s = 'node%05d' % i, 'node%05d' % ((i + 1) % nodes)
            ok = name != failing_rail
            rows.append({'pair': '%s: %s -> %s' % (name, c, s), 'client': c, 'server': s, 'round': i % 3, 'rail': name,
                         'checks': {'ping': {'ok': ok, 'metrics': {'rtt_avg_ms': 0.05}},
                                    'bw': {'ok': ok, 'metrics': {'bw_average_gbps': 390.5, 'bw_pct_of_link': 97.6} if ok else {}}},
                         'failures': [] if ok else ['ib_write_bw: not run (no result from the client host); ' + 'x' * 500],
                         'passed': ok})
    failed = sum(1 for r in rows if not r['passed'])
    return {'pairs': rows, 'passed': failed == 0, 'total': len(rows), 'failed': failed, 'checks': ['ping', 'bw']}


def test_summary_is_bounded_at_fleet_scale():
    # 10,000 nodes x 8 rails, one whole rail failing: 10,000 failing pairs.
    s = summary(_fleet_matrix(10000, 8, 'rail3'))
    assert (s['pairs'], s['failed_pairs']) == (80000, 10000)
    assert len(s['failures']) == MAX_FAILURES and s['failures_omitted'] == 10000 - MAX_FAILURES
    assert len(s['failed_nodes']) == MAX_FAILURES and s['failed_nodes_omitted'] == 10000 - MAX_FAILURES
    assert all(len(msg) <= 300 for f in s['failures'] for msg in f['failures'])
    assert s['rails']['rail3'] == {'pairs': 10000, 'failed': 10000, 'passed': False}
    assert s['rails']['rail0']['bw_gbps'] == {'min': 390.5, 'avg': 390.5, 'max': 390.5, 'pairs': 10000}
    # Well under AWX's comfort for a job's artifacts, whatever the fleet size.
    assert len(json.dumps(s)) < 600 * 1024


def test_summary_names_the_node_at_fault_and_counts_flagged_pairs():
    # issue 19: AWX keeps only this summary, so the isolation's verdict and the lucky passes must be in it.
    nodes = ['n%d' % i for i in range(8)]
    plan = rr.plan(nodes, {n: '10.0.0.%d' % (i + 1) for i, n in enumerate(nodes)})
    pairs = [p for r in plan['rounds'] for p in r]
    ring = rr.build_matrix(plan['rounds'], _isolation_records(pairs, {'n5'}), ['ib_write_bw'])
    ip = iso.isolation_plan(plan, ring)
    iso_pairs = [p for r in ip['rounds'] for p in r]
    ring['isolation'] = iso.verdicts(ip, rr.build_matrix(ip['rounds'], _isolation_records(iso_pairs, {'n5'}), ['ib_write_bw']))
    ring['flagged'] = 3
    s = summary(ring)
    assert [(v['node'], v['rail']) for v in s['at_fault']] == [('n5', None)]
    assert 'fails against n1' in s['at_fault'][0]['reason']
    assert s['flagged_pairs'] == 3 and s['failed_nodes'] == ['n4', 'n5', 'n6']
    assert summary(rr.build_matrix(ROUNDS, ok_records('node1', 'node2') + ok_records('node2', 'node1'), TESTS))['at_fault'] == []

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter wrappers: names exposed, errors turned into AnsibleFilterError with the same text,
records gathered from hostvars (a host without records counts as not run)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import os

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.gpufabric.roce.plugins.filter.rdma_report import FilterModule

F = FilterModule().filters()
FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures')


def test_filter_names():
    assert sorted(F, key=lambda n: n.lstrip('_')) == [
        '_perftest_parse', '_perftest_thresholds', '_rdma_ping_parse', '_rdma_pod_net1_address', '_rdma_pod_placement',
        '_rdma_pod_rail_addresses', 'rdma_report_html', '_rdma_report_junit', '_rdma_report_summary', '_rdma_report_table',
        '_rdma_verify_isolation_plan', '_rdma_verify_matrix', '_rdma_verify_pcie_findings',
        '_rdma_verify_plan', '_rdma_verify_pod_manifests', '_rdma_verify_remeasure_plan', '_rdma_verify_round_records',
        '_rdma_verify_verdicts']
    # every filter has its ansible-doc file next to the plugin
    here = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'plugins', 'filter')
    assert all(os.path.exists(os.path.join(here, name + '.yml')) for name in F)


def test_plan_error_is_a_filter_error():
    with pytest.raises(AnsibleFilterError) as err:
        F['_rdma_verify_plan'](['node1'], {'node1': '10.255.0.2'})
    assert str(err.value) == ('(play): rdma_verify_hosts=["node1"]: a ring needs at least two nodes. '
                              'Fix: run the role against two or more hosts of roce_nodes')


def test_matrix_from_hostvars():
    plan = F['_rdma_verify_plan'](['node1', 'node2'], {'node1': '10.255.0.2', 'node2': '10.255.0.6'})
    with open(os.path.join(FIXTURES, 'perftest', 'write_bw.client.stdout')) as f:
        metrics = F['_perftest_parse'](f.read())['metrics']
    hostvars = {
        'node1': {'__rdma_verify_records': [
            {'kind': 'ping', 'side': 'client', 'client': 'node1', 'server': 'node2', 'ok': True,
             'ping': {'ok': True, 'rtt_avg_ms': 0.2}, 'msg': ''},
            {'kind': 'bw', 'side': 'client', 'test': 'ib_write_bw', 'client': 'node1', 'server': 'node2', 'ok': True,
             'msg': '', 'metrics': metrics, 'gid_index': 3}]},
        'node2': {},  # failed early: no records
    }
    matrix = F['_rdma_verify_matrix'](hostvars, ['node1', 'node2'], plan['rounds'], ['ib_write_bw'])
    assert [(r['pair'], r['passed']) for r in matrix['pairs']] == [('node1 -> node2', True), ('node2 -> node1', False)]
    assert matrix['pairs'][0]['checks']['bw']['gid_index'] == 3
    assert F['_rdma_report_table'](matrix).splitlines()[-3:] == [
        '1 of 2 pairs passed',
        'FAIL node2 -> node1: ping: not run (no result from the client host)',
        'FAIL node2 -> node1: bw: not run (no result from the client host)',
    ]


def test_thresholds_on_parsed_metrics():
    with open(os.path.join(FIXTURES, 'perftest', 'write_lat.client.stdout')) as f:
        metrics = F['_perftest_parse'](f.read())['metrics']
    out = F['_perftest_thresholds'](metrics, 'ib_write_lat', 'node1', '10.255.0.6', None, 100.0)
    assert out['failures'] == ['node1: ib_write_lat client to 10.255.0.6: average latency 4071.18 us (64-byte messages) '
                               'is above max_lat_us=100']
    assert F['_perftest_thresholds'](metrics, 'ib_write_lat', 'node1', '10.255.0.6', None, 5000.0)['failures'] == []


def test_pcie_findings_per_node():
    findings = [
        {'severity': 'problem', 'message': '0000:17:00.0 (mlx5_0): link 8.0 GT/s x8, capable of 16.0 GT/s x16 (downtrained: speed and width)'},
        {'severity': 'note', 'message': '0000:3b:00.0 (GPU): idle'},
    ]
    hv = {'n1': {'ansible_facts': {'rdma': {'pcie': {'findings': findings}}}}, 'n2': {'ansible_facts': {}}}
    out = F['_rdma_verify_pcie_findings'](hv, ['n1', 'n2', 'n3'])
    assert list(out) == ['n1'] and out['n1'][0].startswith('0000:17:00.0') and out['n1'][1] == 'note: 0000:3b:00.0 (GPU): idle'

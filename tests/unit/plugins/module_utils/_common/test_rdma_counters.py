# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Port counters around a test (_common.rdma_counters), on sysfs layouts of soft-RoCE and mlx5, and their place in the report."""

from __future__ import absolute_import, division, print_function

import os

from ansible_collections.gpufabric.roce.plugins.module_utils._common import rdma_counters as counters
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.rdma_report import build_matrix, render_table


def _tree(root, device, values, which='hw_counters'):
    base = os.path.join(root, 'class', 'infiniband', device, 'ports', '1', which)
    os.makedirs(base, exist_ok=True)
    for name, value in values.items():
        with open(os.path.join(base, name), 'w') as f:
            f.write('%d\n' % value)


def test_rxe_layout_deltas_and_problems(tmp_path):
    root = str(tmp_path)
    _tree(root, 'rxe0', {'sent_pkts': 10, 'rcvd_pkts': 12, 'out_of_seq_request': 0, 'duplicate_request': 0})
    before = counters.read(root, 'rxe0', 1)
    _tree(root, 'rxe0', {'sent_pkts': 5010, 'rcvd_pkts': 5020, 'out_of_seq_request': 3, 'duplicate_request': 0})
    d = counters.delta(before, counters.read(root, 'rxe0', 1))
    assert d == {'counters': {'out_of_seq_request': 3, 'rcvd_pkts': 5008, 'sent_pkts': 5000},
                 'problems': {'out_of_seq_request': 3}, 'congestion': {}, 'pause': {}}
    assert 'out_of_seq_request +3' in counters.flag_text('node1', 'client', d)


def test_mlx5_layout_both_sets_and_congestion(tmp_path):
    root = str(tmp_path)
    _tree(root, 'mlx5_0', {'np_cnp_sent': 0, 'np_ecn_marked_roce_packets': 0, 'out_of_sequence': 7})
    _tree(root, 'mlx5_0', {'port_xmit_data': 100, 'port_rcv_errors': 0}, which='counters')
    before = counters.read(root, 'mlx5_0', 1)
    _tree(root, 'mlx5_0', {'np_cnp_sent': 40, 'np_ecn_marked_roce_packets': 41, 'out_of_sequence': 7})
    _tree(root, 'mlx5_0', {'port_xmit_data': 900, 'port_rcv_errors': 0}, which='counters')
    d = counters.delta(before, counters.read(root, 'mlx5_0', 1))
    assert d['problems'] == {} and d['congestion'] == {'np_cnp_sent': 40, 'np_ecn_marked_roce_packets': 41}
    assert counters.flag_text('n', 'client', d) is None


def test_the_pfs_pause_frames_around_the_test(tmp_path):
    # mlx5's per-priority pause counters of the port's netdev (GID 0's), from the reader (the SIOCETHTOOL ioctl on a node)
    root = str(tmp_path)
    _tree(root, 'mlx5_0', {'out_of_sequence': 0})
    ndevs = os.path.join(root, 'class', 'infiniband', 'mlx5_0', 'ports', '1', 'gid_attrs', 'ndevs')
    os.makedirs(ndevs)
    with open(os.path.join(ndevs, '0'), 'w') as f:
        f.write('ens1f0np0\n')
    frames = iter([{'rx_prio3_pause': 10, 'tx_prio3_pause': 4, 'rx_pause_ctrl_phy': 0},
                   {'rx_prio3_pause': 25, 'tx_prio3_pause': 4, 'rx_pause_ctrl_phy': 0}])
    asked = []

    def reader(netdev):
        asked.append(netdev)
        return {'counters': next(frames), 'error': None}

    before = counters.read(root, 'mlx5_0', 1, reader)
    d = counters.delta(before, counters.read(root, 'mlx5_0', 1, reader))
    assert asked == ['ens1f0np0', 'ens1f0np0']
    assert d['pause'] == {'rx_prio3_pause': 15} and d['problems'] == {} and counters.flag_text('n', 'client', d) is None
    # a driver without pause counters (virtio, rxe) or a failed read: nothing added
    assert counters.read(root, 'mlx5_0', 1, lambda netdev: {'counters': None, 'error': 'no pyroute2'}) == {'out_of_sequence': 0}


def test_no_device_no_comparison(tmp_path):
    assert counters.read(str(tmp_path), 'rxe9', 1) is None and counters.delta(None, {}) is None


def test_a_lucky_pass_is_flagged_in_the_report():
    flag = 'node1: client passed, but the port counted out_of_seq_request +3 during the test'
    records = [{'kind': 'ping', 'client': 'node1', 'server': 'node2', 'ok': True, 'ping': {'received': 3, 'transmitted': 3}},
               {'kind': 'bw', 'client': 'node1', 'server': 'node2', 'ok': True, 'metrics': {'bw_average_gbps': 10.0},
                'counter_flags': [flag], 'port_counters': {'counters': {'out_of_seq_request': 3}}}]
    matrix = build_matrix([[{'client': 'node1', 'server': 'node2'}]], records, ['ib_write_bw'])
    assert matrix['passed'] and matrix['flagged'] == 1 and matrix['pairs'][0]['flags'] == [flag]
    table = render_table(matrix)
    assert 'PASS*' in table and ('PASS* node1 -> node2: ' + flag) in table

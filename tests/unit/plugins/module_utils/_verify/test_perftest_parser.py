# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The perftest parser and error classifier against REAL outputs captured with Debian perftest
4.5+0.17 over rdma_rxe on kernel 6.1.0-56 (tests/unit/fixtures/perftest/README.md).

Expected numbers are copied from the result lines of those files."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import os

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._verify import perftest as pt

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'perftest')
MIB = 1048576


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def capture(case, side=None):
    base = case if side is None else '%s.%s' % (case, side)
    stderr = fixture(base + '.stderr') if os.path.exists(os.path.join(FIXTURES, base + '.stderr')) else ''
    rc_path = os.path.join(FIXTURES, base + '.rc')
    rc = int(fixture(base + '.rc')) if os.path.exists(rc_path) else 0
    return fixture(base + '.stdout'), stderr, rc


# case, side, bytes, iterations, BW average as printed, unit printed, MsgRate
BW_CASES = [
    ('write_bw', 'client', 4096, 24000, 46.86, 'MB/sec', 0.011996),
    ('write_bw', 'server', 4096, 24000, 46.86, 'MB/sec', 0.011996),
    ('write_bw_gbits', 'client', 4096, 23700, 0.39, 'Gb/sec', 0.011848),
    ('write_bw_gbits', 'server', 4096, 23700, 0.39, 'Gb/sec', 0.011848),
    ('read_bw', 'client', 4096, 20700, 40.39, 'MB/sec', 0.010339),
    ('read_bw', 'server', 4096, 20700, 40.39, 'MB/sec', 0.010339),
    ('read_bw_gbits', 'client', 4096, 20500, 0.34, 'Gb/sec', 0.010248),
    ('read_bw_gbits', 'server', 4096, 20500, 0.34, 'Gb/sec', 0.010248),
    ('send_bw', 'client', 4096, 9700, 18.85, 'MB/sec', 0.004826),
    ('send_bw', 'server', 4096, 9812, 19.16, 'MB/sec', 0.004905),
    ('send_bw_gbits', 'client', 4096, 10500, 0.17, 'Gb/sec', 0.005249),
    ('send_bw_gbits', 'server', 4096, 10611, 0.17, 'Gb/sec', 0.005305),
    ('write_bw_rdma_cm', 'client', 4096, 10800, 21.09, 'MB/sec', 0.005399),
    ('write_bw_iters_qps2', 'client', 8192, 1000, 48.51, 'MB/sec', 0.006209),
]

# case, side, t_min, t_max, t_typical, t_avg, t_stdev, 99%, 99.9%
LAT_CASES = [
    ('write_lat', 'client', 3863.69, 6039.31, 4001.15, 4071.18, 369.39, 6024.93, 6039.31),
    ('write_lat', 'server', 3907.94, 6040.00, 3999.19, 4060.00, 339.61, 6019.03, 6040.00),
    ('read_lat', 'client', 35.51, 219.09, 38.95, 40.86, 11.22, 163.81, 219.09),
    ('send_lat', 'client', 3614.26, 5998.99, 4000.74, 4027.65, 240.93, 5981.90, 5998.99),
    ('send_lat', 'server', 3734.54, 6004.56, 3999.26, 4019.90, 186.88, 5872.71, 6004.56),
    ('write_lat_rdma_cm', 'client', 2949.68, 4301.07, 3999.34, 3992.51, 79.25, 4060.30, 4301.07),
]


@pytest.mark.parametrize('row', BW_CASES, ids=['%s.%s' % r[:2] for r in BW_CASES])
def test_bandwidth_table(row):
    case, side, size, iters, avg, unit, mpps = row
    stdout, stderr, rc = capture(case, side)
    assert rc == 0
    parsed = pt.parse_output(stdout, stderr)
    res = parsed['metrics']
    assert parsed['bw_unit'] == unit
    assert res['bytes'] == size
    assert res['iterations'] == iters
    assert res['msg_rate_mpps'] == pytest.approx(mpps)
    if unit == 'Gb/sec':
        assert res['bw_average_gbps'] == pytest.approx(avg)
        assert res['bw_average_mib_s'] == pytest.approx(avg * 1e9 / 8 / MIB, rel=1e-6)
    else:
        assert res['bw_average_mib_s'] == pytest.approx(avg)
        assert res['bw_average_gbps'] == pytest.approx(avg * MIB * 8 / 1e9, rel=1e-5)
    assert len(parsed['rows']) == 1


def test_mb_and_gbits_runs_agree_on_the_order_of_magnitude():
    # Two separate real runs of the same test, one per header variant: same rate within 10 %.
    mb = pt.parse_output(*capture('write_bw', 'client')[:2])['metrics']
    gb = pt.parse_output(*capture('write_bw_gbits', 'client')[:2])['metrics']
    assert gb['bw_average_gbps'] == pytest.approx(mb['bw_average_gbps'], rel=0.1)


def test_derived_mib_header_variant():
    # Not captured: write_bw.client.stdout with the newer upstream header (see the fixtures README).
    derived = pt.parse_output(fixture('derived_write_bw_mib.client.stdout'))
    captured = pt.parse_output(fixture('write_bw.client.stdout'))
    assert derived['bw_unit'] == 'MiB/sec'
    assert captured['bw_unit'] == 'MB/sec'
    assert derived['metrics'] == captured['metrics']
    assert derived['metrics']['bw_average_mib_s'] == 46.86


def test_duration_mode_reports_zero_peak():
    res = pt.parse_output(fixture('write_bw.client.stdout'))['metrics']
    assert res['bw_peak_gbps'] == 0.0
    assert res['bw_peak_mib_s'] == 0.0


def test_iterations_mode_reports_peak():
    res = pt.parse_output(fixture('write_bw_iters_qps2.client.stdout'))['metrics']
    assert res['bw_peak_mib_s'] == 50.50
    assert res['bw_peak_gbps'] == pytest.approx(50.50 * MIB * 8 / 1e9)


@pytest.mark.parametrize('row', LAT_CASES, ids=['%s.%s' % r[:2] for r in LAT_CASES])
def test_latency_table(row):
    case, side, tmin, tmax, typ, avg, stdev, p99, p999 = row
    stdout, stderr, rc = capture(case, side)
    assert rc == 0
    parsed = pt.parse_output(stdout, stderr)
    assert parsed['bw_unit'] is None
    assert parsed['metrics'] == {
        'bytes': 64, 'iterations': 200, 't_min_us': tmin, 't_max_us': tmax, 't_typical_us': typ,
        't_avg_us': avg, 't_stdev_us': stdev, 't_p99_us': p99, 't_p99_9_us': p999,
    }


def test_latency_duration_table():
    client = pt.parse_output(fixture('write_lat_duration.client.stdout'))['metrics']
    server = pt.parse_output(fixture('write_lat_duration.server.stdout'))['metrics']
    assert client == {'bytes': 64, 'iterations': 245, 't_avg_us': 4082.85, 'tps_average': 122.46}
    assert server == {'bytes': 64, 'iterations': 247, 't_avg_us': 4049.08, 'tps_average': 123.48}


def test_read_lat_server_prints_no_table_and_the_inline_warning_is_kept():
    stdout, stderr, rc = capture('read_lat', 'server')
    parsed = pt.parse_output(stdout, stderr)
    assert rc == 0
    assert parsed['metrics'] == {}
    assert parsed['rows'] == []
    assert parsed['test_name'] == 'RDMA_Read Latency Test'
    assert parsed['perftest_warnings'] == ['Device not recognized to implement inline feature. Disabling it']


def test_all_sizes_rows():
    parsed = pt.parse_output(fixture('write_bw_all_sizes.client.stdout'))
    sizes = [r['bytes'] for r in parsed['rows']]
    assert sizes == [2 ** n for n in range(1, 24)]
    assert parsed['metrics'] == parsed['rows'][-1]
    assert parsed['metrics']['bw_peak_mib_s'] == 52.97
    assert parsed['rows'][11] == {
        'bytes': 4096, 'iterations': 5, 'bw_peak_mib_s': 42.16, 'bw_peak_gbps': pytest.approx(42.16 * MIB * 8 / 1e9),
        'bw_average_mib_s': 24.53, 'bw_average_gbps': pytest.approx(24.53 * MIB * 8 / 1e9), 'msg_rate_mpps': 0.00628,
    }


def test_cpu_frequency_line_between_header_and_row_is_a_warning_not_a_row():
    # Synthetic edit of a real capture: newer perftest prints this line between header and row
    # (seen in published outputs); the row after it must still be read.
    lines = fixture('write_bw.client.stdout').splitlines()
    header = next(i for i, line in enumerate(lines) if '#bytes' in line)
    note = 'Conflicting CPU frequency values detected: 1846.550000 != 2596.396000. CPU Frequency is not max.'
    lines.insert(header + 1, note)
    parsed = pt.parse_output('\n'.join(lines))
    assert parsed['metrics']['bw_average_mib_s'] == 46.86
    assert len(parsed['rows']) == 1
    assert parsed['perftest_warnings'] == [note]


def test_preamble_bw_client():
    parsed = pt.parse_output(fixture('write_bw.client.stdout'))
    assert parsed['test_name'] == 'RDMA_Write BW Test'
    assert parsed['preamble'] == {
        'dual_port': False, 'device': 'rxe0', 'num_qps': 1, 'transport_type': 'IB', 'connection_type': 'RC',
        'using_srq': False, 'pcie_relax_order': True, 'ibv_wr_api': False, 'tx_depth': 128, 'cq_moderation': 100,
        'mtu_bytes': 1024, 'link_type': 'Ethernet', 'gid_index': 2, 'max_inline_data_bytes': 0,
        'rdma_cm_qps': False, 'data_exchange_method': 'Ethernet',
    }


def test_preamble_read_and_send_specific_keys():
    read = pt.parse_output(fixture('read_bw.client.stdout'))['preamble']
    send = pt.parse_output(fixture('send_bw.server.stdout'))['preamble']
    assert read['outstanding_reads'] == 128
    assert 'max_inline_data_bytes' not in read
    assert send['rx_depth'] == 512
    assert 'tx_depth' not in send


def test_preamble_rdma_cm():
    preamble = pt.parse_output(fixture('write_bw_rdma_cm.server.stdout'))['preamble']
    assert preamble['rdma_cm_qps'] is True
    assert preamble['data_exchange_method'] == 'rdma_cm'
    assert preamble['gid_index'] == 1


def test_connection_gids_and_qps():
    conn = pt.parse_output(fixture('write_bw_iters_qps2.client.stdout'))['connection']
    assert [q['qpn'] for q in conn['local']] == ['0x0026', '0x0027']
    assert [q['qpn'] for q in conn['remote']] == ['0x0025', '0x0028']
    assert conn['local'][0]['gid'] == '0000:0000:0000:0000:0000:ffff:0aff:0001'
    assert conn['local'][0]['gid_ipv4'] == '10.255.0.1'
    ll = pt.parse_output(fixture('write_bw.client.stdout').replace(
        '00:00:00:00:00:00:00:00:00:00:255:255:10:255:00:01', '254:128:00:00:00:00:00:00:08:23:88:255:254:101:176:73'))
    assert ll['connection']['local'][0]['gid'] == 'fe80:0000:0000:0000:0817:58ff:fe65:b049'
    assert ll['connection']['local'][0]['gid_ipv4'] is None


def test_empty_output():
    parsed = pt.parse_output('', '')
    assert parsed['metrics'] == {}
    assert parsed['preamble'] == {}
    assert parsed['test_name'] is None


# ---------------------------------------------------------------- failures

FAILURES = [
    ('nodevice', None, 'Unable to find the Infiniband/RoCE device'),
    ('nosuch_device_client', None, 'Unable to find the Infiniband/RoCE device'),
    ('nosuch_device_server', None, 'Unable to find the Infiniband/RoCE device'),
    ('no_server_client', None, "Couldn't connect to 10.255.0.1:18515"),
    ('no_server_client_lat', None, "Couldn't connect to 10.255.0.1:18515"),
    # Debian's perftest prints the event number: 8 is RDMA_CM_EVENT_REJECTED (nothing listens), the root cause
    ('no_server_client_rdma_cm', None, 'Unexpected CM event bl blka 8'),
    ('wrong_gid_client_other_netdev', 'client', 'Failed to modify QP 19 to RTR'),
    ('rtr_fail_two_rxe', 'client', 'Failed to modify QP 17 to RTR'),
    ('rtr_fail_two_rxe', 'server', "ethernet_read_keys: Couldn't read remote address"),
    ('wrong_gid_client_ipv6_ll', 'client', 'Found Incompatibility issue with GID types.'),
    ('wrong_gid_client_ipv6_ll', 'server', 'Found Incompatibility issue with GID types.'),
    ('wrong_gid_client_empty_slot', 'client', 'Found Incompatibility issue with GID types.'),
    ('write_bw_port_mismatch', 'client', 'Unable to query port 2 attributes'),
]


def test_lat_with_qps_is_quoted_as_perftest_said_it():
    stdout, stderr, rc = capture('lat_with_qps')
    assert rc == 1
    assert pt.classify_error(stdout, stderr) == (None, None)
    msg, quoted, hint = pt.failure_message('n', client_params(test='ib_write_lat'), rc, stdout, stderr)
    assert msg == ("n: ib_write_lat client to 10.255.0.1 failed (rc=1). "
                   "perftest said: 'Multiple QPs only available on bw tests | Parser function exited with Error'")
    assert hint is None


@pytest.mark.parametrize('case,side,quoted', FAILURES)
def test_failure_outputs_are_classified(case, side, quoted):
    stdout, stderr, rc = capture(case, side)
    assert rc == 1
    found, hint = pt.classify_error(stdout, stderr)
    assert found == quoted
    assert hint


def test_rtr_failure_hint_points_at_gid_auto():
    hint = pt.classify_error(*capture('wrong_gid_client_other_netdev', 'client')[:2])[1]
    assert 'gid_index: auto' in hint


def test_successful_outputs_classify_as_no_error():
    for case, side in (('write_bw', 'client'), ('read_lat', 'server'), ('write_bw_rdma_cm', 'server')):
        assert pt.classify_error(*capture(case, side)[:2]) == (None, None)


def client_params(**kw):
    params = dict(test='ib_write_bw', role='client', server='10.255.0.1', device='rxe0', ib_port=1, gid_index=2,
                  netdev=None, size=4096, duration=2, iterations=None, qps=None, report_gbits=False, rdma_cm=False,
                  tcp_port=None, timeout=60, extra_args=[], min_bw_gbps=None, min_bw_pct_of_link=None,
                  max_lat_us=None, sysfs_root=os.path.join(FIXTURES, 'sysfs'))
    params.update(kw)
    return params


def test_failure_message_rtr():
    stdout, stderr, rc = capture('wrong_gid_client_other_netdev', 'client')
    msg, quoted, hint = pt.failure_message('node2', client_params(gid_index=1), rc, stdout, stderr)
    assert msg == (
        "node2: ib_write_bw client to 10.255.0.1 failed (rc=1). perftest said: 'Failed to modify QP 19 to RTR' "
        "[stderr: Failed to modify QP 19 to RTR | Unable to Connect the HCA's through the link]. Fix: " + hint)
    assert quoted == 'Failed to modify QP 19 to RTR'


def test_failure_message_no_device():
    stdout, stderr, rc = capture('nosuch_device_server')
    msg = pt.failure_message('node1', client_params(role='server', server=None, device='nosuch'), rc, stdout, stderr)[0]
    assert msg.startswith("node1: ib_write_bw server failed (rc=1). perftest said: 'Unable to find the Infiniband/RoCE device' "
                          "[stderr: IB device nosuch not found | Unable to find the Infiniband/RoCE device]. Fix: ")


def test_failure_message_server_timeout():
    stdout, stderr, rc = capture('server_no_client_timeout')
    assert rc == 124
    msg, quoted = pt.failure_message('node1', client_params(role='server', server=None, timeout=30), rc, stdout, stderr)[:2]
    assert msg == ('node1: ib_write_bw server did not finish within timeout=30 s (no client connected). '
                   'Fix: start the client within the timeout, or raise timeout')
    assert quoted is None


def test_failure_message_unknown_error_quotes_stderr():
    # Synthetic text (not a perftest message): an unknown error is quoted as its stderr lines.
    msg, quoted, hint = pt.failure_message('n', client_params(), 1, '', ' first unknown line\n\n second unknown line\n')
    assert msg == "n: ib_write_bw client to 10.255.0.1 failed (rc=1). perftest said: 'first unknown line | second unknown line'"
    assert hint is None
    assert quoted == 'first unknown line | second unknown line'


# ---------------------------------------------------------------- issue 13: bidirectional runs
# Real captures of the fourth batch (capture/capture4.sh): -b on both sides.

# case, side, title, iterations printed, BW average printed (MB/sec), MsgRate
BIDIR_CASES = [
    ('write_bw_bidir', 'client', 'RDMA_Write Bidirectional BW Test', 3400, 13.62, 0.003487),
    ('write_bw_bidir', 'server', 'RDMA_Write Bidirectional BW Test', 3600, 13.62, 0.003487),
    ('send_bw_bidir', 'client', 'Send Bidirectional BW Test', 4830, 9.38, 0.002401),
    ('read_bw_bidir', 'client', 'RDMA_Read Bidirectional BW Test', 1000, 6.82, 0.001745),
]


@pytest.mark.parametrize('row', BIDIR_CASES, ids=['%s.%s' % r[:2] for r in BIDIR_CASES])
def test_bidirectional_title_fills_preamble_and_metrics(row):
    case, side, title, iters, avg, mpps = row
    stdout, stderr, rc = capture(case, side)
    assert rc == 0
    parsed = pt.parse_output(stdout, stderr)
    assert parsed['test_name'] == title
    assert parsed['bidirectional'] is True
    assert parsed['preamble']['device'] == 'rxe0'
    assert parsed['preamble']['num_qps'] == 1
    assert parsed['preamble']['gid_index'] == 2
    assert parsed['metrics']['iterations'] == iters
    assert parsed['metrics']['bw_average_mib_s'] == avg
    assert parsed['metrics']['msg_rate_mpps'] == mpps
    assert parsed['directions'] == {}


def test_unidirectional_title_is_not_bidirectional():
    parsed = pt.parse_output(fixture('write_bw.client.stdout'))
    assert (parsed['test_name'], parsed['bidirectional']) == ('RDMA_Write BW Test', False)


def test_bidirectional_figures_are_the_sum_of_both_directions():
    # -b --report-both prints the summed table, then each direction: 6.40 + 7.31 = 13.71 MB/s
    parsed = pt.parse_output(fixture('write_bw_bidir_report_both.client.stdout'))
    local, remote = parsed['directions']['local'], parsed['directions']['remote']
    assert parsed['metrics']['bw_average_mib_s'] == 13.71
    assert (local['bw_average_mib_s'], remote['bw_average_mib_s']) == (6.40, 7.31)
    assert local['bw_average_mib_s'] + remote['bw_average_mib_s'] == pytest.approx(parsed['metrics']['bw_average_mib_s'])
    # each figure is rounded to 6 decimals where perftest prints it
    assert local['msg_rate_mpps'] + remote['msg_rate_mpps'] == pytest.approx(parsed['metrics']['msg_rate_mpps'], abs=2e-6)
    assert len(parsed['rows']) == 1


def test_bidirectional_both_sides_print_the_same_sum():
    client = pt.parse_output(fixture('write_bw_bidir.client.stdout'))['metrics']
    server = pt.parse_output(fixture('write_bw_bidir.server.stdout'))['metrics']
    assert client['bw_average_mib_s'] == server['bw_average_mib_s'] == 13.62
    assert client['iterations'] != server['iterations']  # each side counts its own messages


def test_derived_newer_bidirectional_four_qps():
    parsed = pt.parse_output(fixture('derived_write_bw_bidir_newer.client.stdout'))
    assert parsed['test_name'] == 'RDMA_Write Bidirectional BW Test'
    assert parsed['bidirectional'] is True
    assert parsed['preamble'] == {
        'dual_port': False, 'device': 'mlx5_3', 'num_qps': 4, 'transport_type': 'IB', 'connection_type': 'RC',
        'using_srq': False, 'pcie_relax_order': True, 'lock_free': False, 'ibv_wr_api': True, 'using_ddp': False,
        'tx_depth': 128, 'cq_moderation': 1, 'cqe_poll_batch': 16, 'mtu_bytes': 4096, 'link_type': 'Ethernet',
        'cpu_freq_mhz': 2850, 'gid_index': 3, 'max_inline_data_bytes': 0, 'rdma_cm_qps': False,
        'data_exchange_method': 'Ethernet',
    }
    assert len(parsed['connection']['local']) == len(parsed['connection']['remote']) == 4
    assert parsed['metrics']['bw_average_gbps'] == 779.10
    assert parsed['metrics']['iterations'] == 7430070
    assert parsed['warnings'] == ['Using sampled CPU speed 2850 MHz over reported speed 3700 MHz',
                                  "WARNING: BW peak won't be measured in this run."]


# ---------------------------------------------------------------- issue 13: warnings

def test_pcie_relaxed_ordering_warnings_are_warnings_not_preamble_keys():
    # the two WARNING lines sit inside the preamble block; before, one became the key warning: 'You'
    parsed = pt.parse_output(fixture('derived_write_bw_cuda_pcie_ro.server.stdout'))
    assert parsed['warnings'] == [
        'WARNING: CPU is not PCIe relaxed ordering compliant.',
        'WARNING: You should disable PCIe RO with `--disable_pcie_relaxed` for both server and client.',
    ]
    assert sorted(parsed['preamble']) == [
        'connection_type', 'cq_moderation', 'data_exchange_method', 'device', 'dual_port', 'gid_index', 'ibv_wr_api',
        'link_type', 'max_inline_data_bytes', 'mtu_bytes', 'num_qps', 'pcie_relax_order', 'rdma_cm_qps',
        'transport_type', 'using_srq']
    assert parsed['preamble']['rdma_cm_qps'] is True
    assert parsed['metrics']['bw_average_gbps'] == 97.53
    assert parsed['perftest_warnings'] == parsed['warnings']


def test_gpu_banners_do_not_become_preamble_keys():
    # "CUDA device 0: PCIe address is 3B:00", "Using ROCm Device with ID: 0, Name: ..." have colons
    cuda = pt.parse_output(fixture('derived_write_bw_cuda_pcie_ro.server.stdout'))
    rocm = pt.parse_output(fixture('derived_write_bw_rocm.client.stdout'))
    assert not [k for k in cuda['preamble'] if 'cuda' in k or 'pcie_address' in k]
    assert rocm['preamble']['device'] == 'mlx5_4'
    assert not [k for k in rocm['preamble'] if 'rocm' in k or k in ('name', 'gcn_arch', 'pci_bus_id')]
    assert rocm['metrics']['bw_average_gbps'] == 196.12
    assert rocm['metrics']['bw_peak_gbps'] == 196.84
    assert rocm['warnings'] == []


def test_requested_mtu_warning_is_joined_with_its_continuation():
    stdout, stderr, rc = capture('write_bw_mtu_too_big', 'client')
    parsed = pt.parse_output(stdout, stderr)
    assert rc == 0
    assert parsed['warnings'] == ['Requested mtu is higher than active mtu Changing to active mtu - 3']
    assert parsed['preamble']['mtu_bytes'] == 1024
    assert parsed['metrics']['bw_average_mib_s'] == 8.98


def test_libibverbs_warnings_from_stderr():
    parsed = pt.parse_output(fixture('write_bw.server.stdout'), fixture('derived_libibverbs_warnings.server.stderr'))
    assert parsed['warnings'] == [
        "libibverbs: Warning: couldn't load driver 'libmana-rdmav34.so': libmana-rdmav34.so: cannot open shared "
        'object file: No such file or directory',
        "libibverbs: Warning: couldn't load driver 'liberdma-rdmav34.so': liberdma-rdmav34.so: cannot open shared "
        'object file: No such file or directory',
    ]
    assert parsed['metrics']['bw_average_mib_s'] == 46.86


@pytest.mark.parametrize('line', [
    'Warning: Large message requested and CQ moderation enabled',
    ' Max msg size in UD is MTU 4096',
    'Perftest doesn\'t supports CUDA tests with inline messages: inline size set to 0',
    ' Changing CQ moderation to min( rx depth , tx depth) = 64.',
    'Conflicting CPU frequency values detected: 1500.000000 != 3300.016000. CPU Frequency is not max.',
])
def test_other_perftest_warnings(line):
    # Inserted before the title of a real capture, where perftest prints them (formats from its source).
    parsed = pt.parse_output(line + '\n' + fixture('write_bw.client.stdout'))
    assert parsed['warnings'] == [line.strip()]
    assert parsed['metrics']['bw_average_mib_s'] == 46.86


def test_warning_between_header_and_row_creates_no_preamble_key():
    lines = fixture('write_bw.client.stdout').splitlines()
    header = next(i for i, line in enumerate(lines) if '#bytes' in line)
    lines.insert(header + 1, 'Conflicting CPU frequency values detected: 1846.550000 != 2596.396000. CPU Frequency is not max.')
    parsed = pt.parse_output('\n'.join(lines))
    assert parsed['preamble'] == pt.parse_output(fixture('write_bw.client.stdout'))['preamble']


def test_per_port_columns():
    metrics = pt.parse_output(fixture('derived_write_bw_dualport_per_port.client.stdout'))['metrics']
    assert metrics['bw_average_mib_s'] == 23012.44
    assert metrics['bw_port1_mib_s'] == metrics['bw_port2_mib_s'] == 11506.22
    assert metrics['msg_rate_port1_mpps'] == 0.1841
    assert metrics['bw_port1_gbps'] == pytest.approx(11506.22 * MIB * 8 / 1e9)


# ---------------------------------------------------------------- issue 13: --output=...

@pytest.mark.parametrize('case,side,value', [
    ('write_bw_output_bandwidth', 'client', 1.744047),
    ('write_bw_output_bandwidth', 'server', 1.744047),
    ('write_lat_output_latency', 'client', 13897.266612),
    ('write_lat_output_latency', 'server', 13929.323868),
])
def test_output_option_prints_one_unconverted_number(case, side, value):
    stdout, stderr, rc = capture(case, side)
    parsed = pt.parse_output(stdout, stderr)
    assert rc == 0
    assert parsed['terse_value'] == value
    assert parsed['metrics'] == {}
    assert parsed['test_name'] is None


def test_full_report_has_no_terse_value():
    assert pt.parse_output(fixture('write_bw.client.stdout'))['terse_value'] is None


def test_two_gid_indexes_perftest_uses_the_last():
    # client ran "-x 2 -x 3": perftest printed GID index 3 and failed against the server's index 2
    stdout, stderr, rc = capture('write_bw_two_gid_index', 'client')
    assert rc == 1
    assert pt.parse_output(stdout, stderr)['preamble']['gid_index'] == 3
    assert pt.classify(stdout, stderr)['error_class'] == 'gid_type_mismatch'


# ---------------------------------------------------------------- issue 13: error classes

# case, side, error class, perftest's message as quoted, detail
CLASSES = [
    ('derived_completion_retry_exceeded', 'client', 'completion_error',
     'Completion with error at client: Failed status 12: wr_id 0 syndrom 0x81',
     {'wc_status': 12, 'wc_status_name': 'IBV_WC_RETRY_EXC_ERR'}),
    ('derived_completion_rnr_exceeded', 'client', 'completion_error',
     'Completion with error at client: Failed status 13: wr_id 0 syndrom 0x82',
     {'wc_status': 13, 'wc_status_name': 'IBV_WC_RNR_RETRY_EXC_ERR'}),
    ('derived_completion_flush', 'server', 'completion_error',
     'Completion with error at server: Failed status 5: wr_id 0 syndrom 0xf5',
     {'wc_status': 5, 'wc_status_name': 'IBV_WC_WR_FLUSH_ERR'}),
    ('derived_completion_remote_access', 'client', 'completion_error',
     'Completion with error at client: Failed status 10: wr_id 0 syndrom 0x88',
     {'wc_status': 10, 'wc_status_name': 'IBV_WC_REM_ACCESS_ERR'}),
    ('derived_poll_cq_error', 'client', 'completion_error', 'Poll send CQ error status=12 qp 3',
     {'wc_status': 12, 'wc_status_name': 'IBV_WC_RETRY_EXC_ERR'}),
    ('derived_rdma_cm_rejected', 'client', 'rdma_cm_rejected', 'Event: RDMA_CM_EVENT_REJECTED; error: 8.',
     {'cm_event': 'RDMA_CM_EVENT_REJECTED', 'cm_status': 8}),
    ('derived_rdma_cm_unreachable', 'client', 'rdma_cm_unreachable', 'Event: RDMA_CM_EVENT_UNREACHABLE; error: -110.',
     {'cm_event': 'RDMA_CM_EVENT_UNREACHABLE', 'cm_status': -110}),
    ('derived_rdma_cm_addr_error', 'client', 'rdma_cm_addr_error', 'Event: RDMA_CM_EVENT_ADDR_ERROR; error: -19.',
     {'cm_event': 'RDMA_CM_EVENT_ADDR_ERROR', 'cm_status': -19}),
    ('no_server_client_rdma_cm', None, 'rdma_cm_rejected', 'Unexpected CM event bl blka 8',
     {'cm_event': 'RDMA_CM_EVENT_REJECTED'}),
    ('rdma_cm_no_rdma_route_client', None, 'rdma_cm_addr_error', 'Received 10 times ADDR_ERROR',
     {'cm_event': 'RDMA_CM_EVENT_ADDR_ERROR'}),
    ('rdma_cm_loopback_client', None, 'rdma_cm_route_error', 'rdma_resolve_route failed',
     {'cm_event': 'RDMA_CM_EVENT_ROUTE_ERROR'}),
    ('derived_qp_create', 'client', 'qp_create', "Couldn't create rdma new QP - Cannot allocate memory", {}),
    ('derived_device_context', 'server', 'device_context', "Couldn't get context for the device", {}),
    ('port_down_server', None, 'port_not_active', 'Port number 1 state is Down', {}),
    ('write_bw_port_mismatch', 'client', 'port_query', 'Unable to query port 2 attributes', {}),
    ('derived_tcp_port_in_use', 'server', 'tcp_listen', "Couldn't listen to port 18515", {}),
    ('no_server_client', None, 'tcp_connect', "Couldn't connect to 10.255.0.1:18515", {}),
    ('wrong_gid_client_other_netdev', 'client', 'qp_rtr', 'Failed to modify QP 19 to RTR', {}),
    ('nosuch_device_client', None, 'no_device', 'Unable to find the Infiniband/RoCE device', {}),
    ('rtr_fail_two_rxe', 'server', 'peer_gone', "ethernet_read_keys: Couldn't read remote address", {}),
]


@pytest.mark.parametrize('row', CLASSES, ids=['%s.%s' % r[:2] for r in CLASSES])
def test_error_classes(row):
    case, side, error_class, message, detail = row
    stdout, stderr, rc = capture(case, side)
    assert rc == 1
    found = pt.classify(stdout, stderr)
    assert (found['error_class'], found['message'], found['detail']) == (error_class, message, detail)
    assert found['hint']


# error class (or wc status) -> words the hint must contain for the user to act on it
HINT_WORDS = [
    ('derived_completion_retry_exceeded', 'client', ['IBV_WC_RETRY_EXC_ERR', 'GID', 'MTU', 'PFC', 'ECN', 'link flaps']),
    ('derived_completion_rnr_exceeded', 'client', ['receiver-not-ready', '--rx-depth']),
    ('derived_completion_flush', 'server', ['consequence', 'first error']),
    ('derived_completion_remote_access', 'client', ['same program on both sides']),
    ('derived_rdma_cm_rejected', 'client', ['rdma_cm: true', 'tcp_port', 'server first']),
    ('derived_rdma_cm_unreachable', 'client', ['firewall', 'UDP port 4791', 'PFC/ECN']),
    ('rdma_cm_no_rdma_route_client', None, ['ip route get', 'RDMA network']),
    ('derived_qp_create', 'client', ['ulimit -l', 'qps']),
    ('derived_device_context', 'server', ['/dev/infiniband/uverbs', 'ibv_devinfo']),
    ('port_down_server', None, ['link down', 'rdma link show', 'subnet manager']),
    ('derived_tcp_port_in_use', 'server', ['tcp_port']),
]


@pytest.mark.parametrize('case,side,words', HINT_WORDS, ids=[r[0] for r in HINT_WORDS])
def test_hints_name_what_to_check(case, side, words):
    hint = pt.classify(*capture(case, side)[:2])['hint']
    for word in words:
        assert word in hint


def test_failure_message_of_a_completion_error():
    stdout, stderr, rc = capture('derived_completion_retry_exceeded', 'client')
    msg, quoted, hint = pt.failure_message('node2', client_params(), rc, stdout, stderr)
    assert msg == (
        "node2: ib_write_bw client to 10.255.0.1 failed (rc=1). perftest said: 'Completion with error at client: "
        "Failed status 12: wr_id 0 syndrom 0x81' [stderr: Completion with error at client | Failed status 12: wr_id 0 "
        "syndrom 0x81 | scnt=128, ccnt=0 | Failed to complete run_iter_bw function successfully]. Fix: status 12 is "
        "IBV_WC_RETRY_EXC_ERR (transport retry counter exceeded): the peer stopped acknowledging: packets are lost on "
        "the path or the peer went away. Check that the peer is still running and that both sides use GIDs of the "
        "same subnet/VLAN (a wrong GID index or an MTU mismatch ends like this); check link flaps (ip -s link, "
        "ethtool -S <pf>: link_down_events, rx_discards), the MTU end to end (netdev MTU on both hosts and every "
        "switch port at least the RoCE MTU plus headers) and the lossless configuration of RoCE: PFC on the RoCE "
        "priority and ECN on the NICs and switch ports")
    assert quoted == 'Completion with error at client: Failed status 12: wr_id 0 syndrom 0x81'
    assert hint.startswith('status 12 is IBV_WC_RETRY_EXC_ERR')


def test_unknown_completion_status_still_named():
    found = pt.classify('', ' Completion with error at client\n Failed status 21: wr_id 3 syndrom 0x0\n')
    assert found['detail'] == {'wc_status': 21, 'wc_status_name': 'IBV_WC_GENERAL_ERR'}
    assert found['hint'].startswith('status 21 is IBV_WC_GENERAL_ERR')


def test_rdma_cm_silent_address_times_out():
    # -R towards an address in the subnet that nobody answers: perftest hangs, timeout kills it
    stdout, stderr, rc = capture('rdma_cm_silent_address_client')
    assert rc == 124
    msg, quoted, hint = pt.failure_message('n', client_params(rdma_cm=True, gid_index=None, timeout=20, duration=2,
                                                              server='10.255.0.2'), rc, stdout, stderr)
    assert msg == ('n: ib_write_bw client to 10.255.0.2 did not finish within timeout=20 s (the server did not answer '
                   'or the test ran longer than expected). Fix: check that the server side runs and answers, or '
                   'raise timeout')
    assert quoted is None


def test_peer_killed_mid_run():
    # capture6.sh: the server was SIGKILLed 10 s into a 30 s run; the client printed its (partial) table,
    # then failed at the final exchange
    stdout, stderr, rc = capture('peer_killed', 'client')
    assert rc == 1
    assert pt.parse_output(stdout, stderr)['rows'][0]['iterations'] == 1300
    found = pt.classify(stdout, stderr)
    assert (found['error_class'], found['message']) == ('peer_gone', "ethernet_read_keys: Couldn't read remote address")
    assert capture('peer_killed', 'server')[2] == 137


def test_a_failed_clock_calibration_is_named_and_not_blamed_on_the_fabric():
    # What a bandwidth client printed in a TCG lab VM on a loaded machine (molecule lab, 2026-11-28): perftest samples
    # the cycle counter against the system clock and gives up when they do not line up; its server saw the client go.
    client = pt.classify('', "Correlation coefficient r^2: 0.802271 < 0.9\nCan't produce a report\n")
    assert (client['error_class'], client['message']) == ('clock_calibration', 'Correlation coefficient r^2: 0.802271 < 0.9')
    for words in ('fabric was not judged', 'quieter node', 'pinned'):
        assert words in client['hint']
    server = pt.classify('', "ethernet_read_keys: Couldn't read remote address\n Unable to read to socket/rdma_cm\n"
                             "Failed to exchange data between server and clients\n")
    assert server['error_class'] == 'peer_gone'

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GID auto-selection (against the GID table copied from the capture VM), input validation,
the command line, thresholds and the whole ``run()`` with a runner replaying real outputs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import builtins
import errno
import json
import os
import shutil

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._verify import perftest as pt

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'perftest')
SYSFS = os.path.join(FIXTURES, 'sysfs')


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def params(**kw):
    base = dict(test='ib_write_bw', role='client', server='10.255.0.1', device='rxe0', ib_port=1, gid_index=None,
                netdev=None, size=None, duration=None, iterations=None, qps=None, report_gbits=False, rdma_cm=False,
                tcp_port=None, timeout=60, extra_args=[], min_bw_gbps=None, min_bw_pct_of_link=None,
                max_lat_us=None, sysfs_root=SYSFS)
    base.update(kw)
    return base


class Replay:
    """A runner that returns one captured side and records the argv it was given."""

    def __init__(self, case, rc=None):
        self.stdout = fixture(case + '.stdout')
        self.stderr = fixture(case + '.stderr')
        self.rc = int(fixture(case + '.rc')) if rc is None else rc
        self.calls = []

    def __call__(self, cmd):
        self.calls.append(cmd)
        return self.rc, self.stdout, self.stderr


# ---------------------------------------------------------------- GID table / auto

def test_gid_table_of_the_capture_vm():
    table = pt.read_gid_table(SYSFS, 'rxe0', 1)
    assert [(e['index'], e['type'], e['ndev'], e['ipv4']) for e in table] == [
        (0, 'RoCE v2', 'va', None),
        (1, 'RoCE v2', 'va', '192.0.2.1'),
        (2, 'RoCE v2', 'va.100', '10.255.0.1'),
        (3, 'RoCE v2', 'va.100', None),
    ]


def test_auto_picks_the_vlan_gid():
    device, entry = pt.select_gid('node1', SYSFS, 'rxe0', 1, 'va.100')
    assert device == 'rxe0'
    assert entry['index'] == 2
    assert entry['gid'] == '0000:0000:0000:0000:0000:ffff:0aff:0001'


def test_auto_picks_the_pf_gid_not_its_link_local():
    entry = pt.select_gid('node1', SYSFS, 'rxe0', 1, 'va')[1]
    assert entry['index'] == 1
    assert entry['ipv4'] == '192.0.2.1'


def test_auto_without_device_searches_all_devices():
    device, entry = pt.select_gid('node1', SYSFS, None, 1, 'va.100')
    assert (device, entry['index']) == ('rxe0', 2)


def test_auto_no_match_lists_what_was_found_and_the_fix():
    with pytest.raises(pt.PerftestError) as err:
        pt.select_gid('node1', SYSFS, 'rxe0', 1, 'vb')
    assert str(err.value) == (
        'node1: gid_index=auto: rxe0 has no RoCE v2 GID with an IPv4-mapped address on netdev vb. Found: '
        'rxe0 port 1 index 0: fe80:0000:0000:0000:0817:58ff:fe65:b049 (RoCE v2, ndev va); '
        'rxe0 port 1 index 1: 0000:0000:0000:0000:0000:ffff:c000:0201 (RoCE v2, ndev va); '
        'rxe0 port 1 index 2: 0000:0000:0000:0000:0000:ffff:0aff:0001 (RoCE v2, ndev va.100); '
        'rxe0 port 1 index 3: fe80:0000:0000:0000:0817:58ff:fe65:b049 (RoCE v2, ndev va.100). '
        'Fix: assign an IPv4 address to vb, and make sure vb is the RoCE netdev of the RDMA device or a VLAN on '
        'top of it (GIDs follow the addresses of the netdev and of its VLANs)')
    assert err.value.field == 'gid_index'


def copy_sysfs(tmp_path):
    root = tmp_path / 'sys'
    shutil.copytree(SYSFS, str(root))
    return root


def test_auto_netdev_with_only_ipv6_says_assign_ipv4(tmp_path):
    root = copy_sysfs(tmp_path)
    port = root / 'class' / 'infiniband' / 'rxe0' / 'ports' / '1'
    (port / 'gids' / '2').write_text('0000:0000:0000:0000:0000:0000:0000:0000\n')  # the VLAN lost its IPv4 address
    for sub in ('types', 'ndevs'):
        (port / 'gid_attrs' / sub / '2').unlink()
    with pytest.raises(pt.PerftestError) as err:
        pt.select_gid('node1', str(root), 'rxe0', 1, 'va.100')
    assert str(err.value).endswith('Fix: assign an IPv4 address to va.100 (only IPv6 GIDs are present there)')
    assert 'index 2' not in str(err.value)


def test_auto_roce_v1_only_says_enable_v2(tmp_path):
    root = copy_sysfs(tmp_path)
    types = root / 'class' / 'infiniband' / 'rxe0' / 'ports' / '1' / 'gid_attrs' / 'types'
    for i in ('2', '3'):
        (types / i).write_text('IB/RoCE v1\n')
    with pytest.raises(pt.PerftestError) as err:
        pt.select_gid('node1', str(root), 'rxe0', 1, 'va.100')
    assert '(IB/RoCE v1, ndev va.100)' in str(err.value)
    assert str(err.value).endswith('Fix: enable RoCE v2 GIDs (on mlx5: cma_roce_mode / the NIC firmware default), then retry')


def test_auto_unknown_device():
    with pytest.raises(pt.PerftestError) as err:
        pt.select_gid('node1', SYSFS, 'mlx5_0', 1, 'va.100')
    assert str(err.value) == (
        'node1: device="mlx5_0" ib_port=1: no such RDMA device/port (%s is missing). Fix: use a device and port '
        'from "rdma link show" / ansible_facts.rdma.devices' % os.path.join(SYSFS, 'class', 'infiniband', 'mlx5_0', 'ports', '1', 'gids'))


def test_auto_no_rdma_device_at_all(tmp_path):
    with pytest.raises(pt.PerftestError) as err:
        pt.select_gid('node1', str(tmp_path), None, 1, 'va.100')
    assert str(err.value).startswith('node1: gid_index=auto: no RDMA device under %s. Fix: load the RDMA driver'
                                     % os.path.join(str(tmp_path), 'class', 'infiniband'))


def test_einval_on_empty_slot_is_skipped(tmp_path, monkeypatch):
    # The kernel answers EINVAL when reading gid_attrs/{types,ndevs}/<i> of an empty slot; emulate it for a
    # slot whose gids file is NOT all-zero, so that only the EINVAL handling can skip it.
    root = copy_sysfs(tmp_path)
    port = root / 'class' / 'infiniband' / 'rxe0' / 'ports' / '1'
    (port / 'gids' / '5').write_text('0000:0000:0000:0000:0000:ffff:0aff:0009\n')
    for sub in ('types', 'ndevs'):
        (port / 'gid_attrs' / sub / '5').write_text('garbage\n')
    real_open = builtins.open

    def fake_open(path, *a, **kw):
        if str(path).endswith(os.path.join('gid_attrs', 'types', '5')) or str(path).endswith(os.path.join('gid_attrs', 'ndevs', '5')):
            raise OSError(errno.EINVAL, 'Invalid argument')
        return real_open(path, *a, **kw)

    monkeypatch.setattr(builtins, 'open', fake_open)
    assert [e['index'] for e in pt.read_gid_table(str(root), 'rxe0', 1)] == [0, 1, 2, 3]


def test_gid_entry_explicit_index():
    assert pt.gid_entry(SYSFS, 'rxe0', 1, 3)['ndev'] == 'va.100'
    assert pt.gid_entry(SYSFS, 'rxe0', 1, 7) is None
    assert pt.gid_entry(SYSFS, None, 1, 2) is None


@pytest.mark.parametrize('gid,ipv4', [
    ('0000:0000:0000:0000:0000:ffff:0aff:0001', '10.255.0.1'),
    ('0000:0000:0000:0000:0000:FFFF:C000:0201', '192.0.2.1'),
    ('fe80:0000:0000:0000:0817:58ff:fe65:b049', None),
    ('0000:0000:0000:0000:0000:0000:0000:0000', None),
    ('', None),
    (None, None),
])
def test_gid_to_ipv4(gid, ipv4):
    assert pt.gid_to_ipv4(gid) == ipv4


def test_link_speed(tmp_path):
    assert pt.read_link_speed(SYSFS, 'va.100') == 10000
    net = tmp_path / 'class' / 'net'
    for name, text in (('down', '-1\n'), ('junk', 'Unknown!\n')):
        (net / name).mkdir(parents=True)
        (net / name / 'speed').write_text(text)
    assert pt.read_link_speed(str(tmp_path), 'down') is None
    assert pt.read_link_speed(str(tmp_path), 'junk') is None
    assert pt.read_link_speed(str(tmp_path), 'missing') is None
    assert pt.read_link_speed(str(tmp_path), None) is None


# ---------------------------------------------------------------- validation

BAD_INPUT = [
    (dict(gid_index='abc'), 'node1: gid_index="abc": must be a GID table index (0, 1, ...) or "auto". '
                            'Fix: set gid_index: auto (with netdev) or the index of a RoCE v2 GID from rdma_facts'),
    (dict(gid_index=-1), 'node1: gid_index=-1: a GID index cannot be negative. '
                         'Fix: set gid_index: auto (with netdev) or the index of a RoCE v2 GID from rdma_facts'),
    (dict(gid_index=True), 'node1: gid_index=true: must be a GID table index (0, 1, ...) or "auto". '
                           'Fix: set gid_index: auto (with netdev) or the index of a RoCE v2 GID from rdma_facts'),
    (dict(gid_index='auto'), 'node1: netdev=null: gid_index=auto picks the RoCE v2 GID of an interface and needs its name. '
                             'Fix: set netdev to the interface that carries the RDMA traffic, e.g. the VLAN gateway <pf>.<vlan>'),
    (dict(netdev='eth0/1'), 'node1: netdev="eth0/1": is not a valid interface name. '
                            'Fix: use the kernel name of the interface, at most 15 characters, no "/" or spaces'),
    (dict(server='  '), 'node1: server="  ": the client needs the address of the server. '
                        "Fix: set server to the server node's address on the RDMA network"),
    (dict(server='-R'), 'node1: server="-R": is not a host name or IP address. '
                        "Fix: set server to the server node's address on the RDMA network, e.g. 10.255.0.6"),
    (dict(server='10.0.0.1 -a'), 'node1: server="10.0.0.1 -a": is not a host name or IP address. '
                                 "Fix: set server to the server node's address on the RDMA network, e.g. 10.255.0.6"),
    (dict(size=0), 'node1: size=0: must be between 1 and 8388608. Fix: use a message size between 1 and 8388608 bytes'),
    (dict(iterations=3), 'node1: iterations=3: must be between 5 and 100000000. '
                         'Fix: use at least 5 iterations (perftest refuses fewer)'),
    (dict(tcp_port=70000), 'node1: tcp_port=70000: must be between 1 and 65535. '
                           'Fix: use a free TCP port between 1 and 65535 (perftest default 18515)'),
    (dict(ib_port=0), 'node1: ib_port=0: must be between 1 and 255. Fix: use the port number of the RDMA device, usually 1'),
    (dict(duration=30, timeout=20), 'node1: timeout=20: is shorter than duration=30 plus 5 s for connecting and reporting. '
                                    'Fix: set timeout to at least 35'),
    (dict(max_lat_us=5.0), 'node1: max_lat_us=5.0: ib_write_bw measures bandwidth, not latency. Fix: use min_bw_gbps or '
                           'min_bw_pct_of_link for bandwidth tests, or run one of ib_write_lat, ib_read_lat, ib_send_lat'),
    (dict(test='ib_send_lat', min_bw_gbps=10.0), 'node1: min_bw_gbps=10.0: ib_send_lat measures latency, not bandwidth. '
                                                 'Fix: use max_lat_us for latency tests, or run one of ib_write_bw, ib_read_bw, ib_send_bw'),
    (dict(test='ib_write_lat', qps=1), 'node1: qps=1: ib_write_lat refuses -q ("Multiple QPs only available on bw tests"), even -q 1. '
                                       'Fix: leave qps unset for latency tests'),
    (dict(min_bw_gbps=0.0), 'node1: min_bw_gbps=0.0: must be greater than 0. Fix: set a bandwidth in Gb/s, e.g. 80'),
    (dict(min_bw_pct_of_link=150.0), 'node1: min_bw_pct_of_link=150.0: must be above 0 and at most 100. '
                                     'Fix: set a percentage of the link speed, e.g. 80'),
    (dict(extra_args=['--qp-timeout=14', '-x', '3']), 'node1: extra_args=["--qp-timeout=14", "-x", "3"]: -x 3 sets -x, which is '
                                                      'the module option gid_index. Fix: remove -x 3 from extra_args and set '
                                                      'gid_index: 3'),
    (dict(extra_args=['--size=64']), 'node1: extra_args=["--size=64"]: --size=64 sets -s, which is the module option size. '
                                     'Fix: remove --size=64 from extra_args and set size: 64'),
]


@pytest.mark.parametrize('override,message', BAD_INPUT)
def test_bad_input_is_refused_before_running(override, message):
    runner = Replay('write_bw.client')
    with pytest.raises(pt.PerftestError) as err:
        pt.run('node1', params(**override), runner)
    assert str(err.value) == message
    assert runner.calls == []


@pytest.mark.parametrize('value,expected', [(None, None), ('auto', 'auto'), ('AUTO', 'auto'), (3, 3), ('3', 3), (' 12 ', 12)])
def test_gid_index_forms(value, expected):
    assert pt.parse_gid_index('h', value) == expected


def test_pct_threshold_with_unknown_link_speed_is_refused_before_running(tmp_path):
    root = copy_sysfs(tmp_path)
    (root / 'class' / 'net' / 'va.100' / 'speed').write_text('-1\n')
    runner = Replay('write_bw.client')
    with pytest.raises(pt.PerftestError) as err:
        pt.run('node2', params(gid_index='auto', netdev='va.100', min_bw_pct_of_link=50.0, sysfs_root=str(root)), runner)
    assert str(err.value) == (
        'node2: min_bw_pct_of_link=50.0: the link speed is unknown (%s reads -1 or is missing). '
        'Fix: set netdev to an interface with a known speed, or use min_bw_gbps instead'
        % os.path.join(str(root), 'class', 'net', 'va.100', 'speed'))
    assert runner.calls == []


def test_pct_threshold_on_an_unknown_link_speed_can_be_skipped(tmp_path):
    # rdma_verify's default pass bar (90 % of link) on a virtual NIC: measured, the other thresholds applied, the skip named
    root = copy_sysfs(tmp_path)
    (root / 'class' / 'net' / 'va.100' / 'speed').write_text('-1\n')
    runner = Replay('write_bw.client')
    result, error = pt.run('node2', params(gid_index='auto', netdev='va.100', min_bw_pct_of_link=90.0, link_speed_unknown='skip',
                                           min_bw_gbps=0.1, sysfs_root=str(root)), runner)
    assert error is None and len(runner.calls) == 1
    assert [c['name'] for c in result['thresholds']] == ['min_bw_gbps']
    assert result['thresholds_skipped'] == ['min_bw_pct_of_link not checked: the link speed of va.100 is unknown']


# ---------------------------------------------------------------- command line

def test_command_client_all_options():
    p = params(gid_index=2, size=4096, iterations=500, qps=2, tcp_port=18600, report_gbits=True, rdma_cm=True,
               extra_args=['--use_hugepages'])
    assert pt.build_command(p, 2, binary='/usr/bin/ib_write_bw', timeout_bin='/usr/bin/timeout') == [
        '/usr/bin/timeout', '--kill-after=5', '60', '/usr/bin/ib_write_bw', '-d', 'rxe0', '-i', '1', '-x', '2',
        '-s', '4096', '-n', '500', '-q', '2', '-p', '18600', '--report_gbits', '-R', '--use_hugepages', '10.255.0.1']


@pytest.mark.parametrize('rdma_cm,flags', [(False, ['--tclass=106']), (True, ['-R', '-T', '106'])])
def test_command_traffic_class(rdma_cm, flags):
    # the QoS ToS: the GRH traffic class without RDMA-CM, RDMA-CM's ToS with it
    p = params(role='server', server=None, device=None, duration=5, rdma_cm=rdma_cm, tclass=106)
    assert pt.build_command(p, None) == ['ib_write_bw', '-i', '1', '-D', '5'] + flags


@pytest.mark.parametrize('extra', [['--tclass=98'], ['-T', '98'], ['--tos', '98']])
def test_a_traffic_class_in_extra_args_is_the_module_option(extra):
    problem, fix = pt.extra_args_problem(params(extra_args=extra), 2)
    assert 'tclass' in problem and 'set tclass: 98' in fix


def test_command_server_defaults():
    p = params(role='server', server=None, device=None, duration=5)
    assert pt.build_command(p, None) == ['ib_write_bw', '-i', '1', '-D', '5']


# ---------------------------------------------------------------- thresholds

def bw_results():
    parsed = pt.parse_output(fixture('write_bw.client.stdout'))
    return pt.add_link_percentage(parsed['metrics'], 10000)


def test_link_percentage():
    res = bw_results()
    assert res['link_speed_gbps'] == 10.0
    assert res['bw_pct_of_link'] == pytest.approx(46.86 * 1048576 * 8 / 1e9 / 10 * 100, abs=1e-4)
    assert res['bw_peak_pct_of_link'] == 0.0


def test_thresholds_fail_with_measured_and_limit():
    checks, failures = pt.check_thresholds('node2', params(min_bw_gbps=100.0, min_bw_pct_of_link=50.0), bw_results(), 10000, 'va.100')
    assert failures == [
        'node2: ib_write_bw client to 10.255.0.1: average bandwidth 0.39 Gb/s (4096-byte messages) is below min_bw_gbps=100',
        'node2: ib_write_bw client to 10.255.0.1: average bandwidth 0.39 Gb/s is 3.93% of the va.100 link (10000 Mb/s), '
        'below min_bw_pct_of_link=50',
    ]
    assert [(c['name'], c['passed']) for c in checks] == [('min_bw_gbps', False), ('min_bw_pct_of_link', False)]
    assert checks[0]['measured'] == bw_results()['bw_average_gbps']


def test_thresholds_pass():
    checks, failures = pt.check_thresholds('node2', params(min_bw_gbps=0.1, min_bw_pct_of_link=1.5), bw_results(), 10000, 'va.100')
    assert failures == []
    assert [c['passed'] for c in checks] == [True, True]


def test_latency_threshold():
    res = pt.parse_output(fixture('write_lat.client.stdout'))['metrics']
    p = params(test='ib_write_lat', max_lat_us=100.0)
    checks, failures = pt.check_thresholds('node2', p, res, None, None)
    assert failures == ['node2: ib_write_lat client to 10.255.0.1: average latency 4071.18 us (64-byte messages) is above max_lat_us=100']
    assert checks == [{'name': 'max_lat_us', 'limit': 100.0, 'measured': 4071.18, 'unit': 'us', 'passed': False}]
    assert pt.check_thresholds('node2', dict(p, max_lat_us=5000.0), res, None, None)[1] == []


# ---------------------------------------------------------------- run()

def test_run_client_auto_gid_success():
    runner = Replay('write_bw.client')
    result, error = pt.run('node2', params(gid_index='auto', netdev='va.100', size=4096, duration=2, timeout=30),
                           runner, binary='/usr/bin/ib_write_bw', timeout_bin='/usr/bin/timeout')
    assert error is None
    assert runner.calls == [['/usr/bin/timeout', '--kill-after=5', '30', '/usr/bin/ib_write_bw', '-d', 'rxe0', '-i', '1',
                             '-x', '2', '-s', '4096', '-D', '2', '10.255.0.1']]
    assert result['cmd'] == runner.calls[0]
    assert result['gid_index'] == 2
    assert result['gid_ipv4'] == '10.255.0.1'
    assert result['link_speed_mbps'] == 10000
    assert result['metrics']['bw_average_mib_s'] == 46.86
    assert result['metrics']['bw_unit_reported'] == 'MB/sec'
    assert result['metrics']['bw_pct_of_link'] == pytest.approx(3.9309, abs=1e-4)
    assert result['preamble']['gid_index'] == 2
    assert result['changed'] is False


def test_run_explicit_gid_speed_from_its_ndev():
    result, error = pt.run('node2', params(gid_index=2), Replay('write_bw.client'))
    assert error is None
    assert (result['netdev'], result['link_speed_mbps'], result['gid']) == ('va.100', 10000, '0000:0000:0000:0000:0000:ffff:0aff:0001')


def test_run_check_mode_does_not_run():
    runner = Replay('write_bw.client')
    result, error = pt.run('node2', params(gid_index='auto', netdev='va.100'), runner, check_mode=True)
    assert error is None
    assert runner.calls == []
    assert result['cmd'] == ['ib_write_bw', '-d', 'rxe0', '-i', '1', '-x', '2', '10.255.0.1']
    assert 'rc' not in result
    assert result['msg'].startswith('check mode: perftest not run')


def test_run_threshold_failure_keeps_results():
    result, error = pt.run('node2', params(gid_index=2, min_bw_gbps=100.0), Replay('write_bw.client'))
    assert error == ('node2: ib_write_bw client to 10.255.0.1: average bandwidth 0.39 Gb/s (4096-byte messages) '
                     'is below min_bw_gbps=100')
    assert result['metrics']['bw_average_mib_s'] == 46.86
    assert result['thresholds'][0]['passed'] is False


def test_run_rtr_failure():
    result, error = pt.run('node2', params(gid_index=1), Replay('wrong_gid_client_other_netdev.client'))
    assert error.startswith("node2: ib_write_bw client to 10.255.0.1 failed (rc=1). perftest said: 'Failed to modify QP 19 to RTR'")
    assert result['perftest_error'] == 'Failed to modify QP 19 to RTR'
    assert result['rc'] == 1
    assert result['preamble']['gid_index'] == 1


def test_run_read_lat_server_without_table_is_ok():
    result, error = pt.run('node1', params(test='ib_read_lat', role='server', server=None, gid_index=2),
                           Replay('read_lat.server'))
    assert error is None
    assert result['metrics'] == {}
    assert result['msg'] == 'ib_read_lat prints its results on the client side only'
    assert result['perftest_warnings'] == ['Device not recognized to implement inline feature. Disabling it']


def test_run_client_without_table_fails():
    # read_lat.server's output given to a client: exit 0 but no table is an error on the client side.
    result, error = pt.run('node2', params(test='ib_read_lat', gid_index=2), Replay('read_lat.server'))
    assert error == ('node2: ib_read_lat client to 10.255.0.1 exited 0 but printed no result table. Fix: check stdout; '
                     'this perftest output format is not known to the parser')


def test_run_server_timeout():
    result, error = pt.run('node1', params(role='server', server=None, gid_index=2, timeout=4), Replay('server_no_client_timeout'))
    assert error == ('node1: ib_write_bw server did not finish within timeout=4 s (no client connected). '
                     'Fix: start the client within the timeout, or raise timeout')
    assert result['rc'] == 124


# ---------------------------------------------------------------- issue 13: extra_args next to the module's options
# (override, exact message, the parameters after following the fix): the fix must pass validation.

def _refused(args, problem, fix):
    return 'node1: extra_args=%s: %s. Fix: %s' % (json.dumps(args), problem, fix)


EXTRA_ARGS_REFUSED = [
    (dict(gid_index=2, extra_args=['-x3']),
     _refused(['-x3'], '-x3 repeats -x, which the module already passes for gid_index=2; perftest keeps only the last '
              'one given, so gid_index would be silently ignored', 'remove -x3 from extra_args and set gid_index: 3'),
     dict(gid_index=3, extra_args=[])),
    (dict(gid_index=2, extra_args=['-x', '3']),
     _refused(['-x', '3'], '-x 3 repeats -x, which the module already passes for gid_index=2; perftest keeps only the '
              'last one given, so gid_index would be silently ignored', 'remove -x 3 from extra_args and set gid_index: 3'),
     dict(gid_index=3, extra_args=[])),
    (dict(gid_index='auto', netdev='va.100', extra_args=['--gid-index=3']),
     _refused(['--gid-index=3'], '--gid-index=3 repeats -x, which the module already passes for gid_index=auto; '
              'perftest keeps only the last one given, so gid_index would be silently ignored',
              'remove --gid-index=3 from extra_args and set gid_index: 3'),
     dict(gid_index=3, netdev='va.100', extra_args=[])),
    (dict(gid_index=2, extra_args=['--gid-index', '3']),
     _refused(['--gid-index', '3'], '--gid-index 3 repeats -x, which the module already passes for gid_index=2; '
              'perftest keeps only the last one given, so gid_index would be silently ignored',
              'remove --gid-index 3 from extra_args and set gid_index: 3'),
     dict(gid_index=3, extra_args=[])),
    (dict(gid_index=2, extra_args=['--gid=3']),  # getopt_long takes unambiguous abbreviations
     _refused(['--gid=3'], '--gid=3 repeats -x, which the module already passes for gid_index=2; perftest keeps only '
              'the last one given, so gid_index would be silently ignored', 'remove --gid=3 from extra_args and set gid_index: 3'),
     dict(gid_index=3, extra_args=[])),
    (dict(gid_index=2, extra_args=['-Fx3']),  # a cluster: -F then -x 3
     _refused(['-Fx3'], '-Fx3 repeats -x, which the module already passes for gid_index=2; perftest keeps only the '
              'last one given, so gid_index would be silently ignored', 'replace -Fx3 with -F in extra_args and set gid_index: 3'),
     dict(gid_index=3, extra_args=['-F'])),
    (dict(extra_args=['-d', 'mlx5_1']),
     _refused(['-d', 'mlx5_1'], '-d mlx5_1 repeats -d, which the module already passes for device=rxe0; perftest keeps '
              'only the last one given, so device would be silently ignored',
              'remove -d mlx5_1 from extra_args and set device: mlx5_1'),
     dict(device='mlx5_1', extra_args=[])),
    (dict(gid_index='auto', netdev='va.100', device=None, extra_args=['--ib-dev=rxe0']),
     _refused(['--ib-dev=rxe0'], '--ib-dev=rxe0 repeats -d, which the module already passes for gid_index=auto (which '
              'passes the device it finds); perftest keeps only the last one given, so device would be silently ignored',
              'remove --ib-dev=rxe0 from extra_args and set device: rxe0'),
     dict(gid_index='auto', netdev='va.100', device='rxe0', extra_args=[])),
    (dict(extra_args=['-i2']),
     _refused(['-i2'], '-i2 repeats -i, which the module already passes for ib_port=1; perftest keeps only the last '
              'one given, so ib_port would be silently ignored', 'remove -i2 from extra_args and set ib_port: 2'),
     dict(ib_port=2, extra_args=[])),
    (dict(extra_args=['-p', '18600']),
     _refused(['-p', '18600'], '-p 18600 sets -p, which is the module option tcp_port',
              'remove -p 18600 from extra_args and set tcp_port: 18600'),
     dict(tcp_port=18600, extra_args=[])),
    (dict(qps=2, extra_args=['-q4']),
     _refused(['-q4'], '-q4 repeats -q, which the module already passes for qps=2; perftest keeps only the last one '
              'given, so qps would be silently ignored', 'remove -q4 from extra_args and set qps: 4'),
     dict(qps=4, extra_args=[])),
    (dict(test='ib_write_lat', extra_args=['-q', '2']),
     _refused(['-q', '2'], 'ib_write_lat refuses -q 2 ("Multiple QPs only available on bw tests")',
              'remove -q 2 from extra_args'),
     dict(test='ib_write_lat', extra_args=[])),
    (dict(rdma_cm=True, extra_args=['-bR']),
     _refused(['-bR'], '-bR repeats -R, which the module already passes for rdma_cm=true',
              'replace -bR with -b in extra_args and set rdma_cm: true'),
     dict(rdma_cm=True, extra_args=['-b'])),
    (dict(extra_args=['--rdma_cm']),
     _refused(['--rdma_cm'], '--rdma_cm sets -R, which is the module option rdma_cm',
              'remove --rdma_cm from extra_args and set rdma_cm: true'),
     dict(rdma_cm=True, extra_args=[])),
    (dict(extra_args=['--report_gbits']),
     _refused(['--report_gbits'], '--report_gbits sets --report_gbits, which is the module option report_gbits',
              'remove --report_gbits from extra_args and set report_gbits: true'),
     dict(report_gbits=True, extra_args=[])),
    (dict(iterations=1000, timeout=20, extra_args=['-D', '30']),
     _refused(['-D', '30'], '-D 30 sets -D, which is the module option duration',
              'remove -D 30 from extra_args and set duration: 30 instead of iterations, and timeout: 35 or more'),
     dict(duration=30, timeout=35, extra_args=[])),
    (dict(duration=5, extra_args=['--iters=2000']),
     _refused(['--iters=2000'], '--iters=2000 sets -n, which is the module option iterations',
              'remove --iters=2000 from extra_args and set iterations: 2000 instead of duration'),
     dict(iterations=2000, extra_args=[])),
    (dict(extra_args=['-s', '64K']),
     _refused(['-s', '64K'], '-s 64K sets -s, which is the module option size',
              'remove -s 64K from extra_args and set size: 65536'),
     dict(size=65536, extra_args=[])),
    (dict(extra_args=['--output=bandwidth']),
     _refused(['--output=bandwidth'], '--output=bandwidth makes perftest print a single number instead of the report '
              'this module reads (sizes, iterations, peak and average, latency percentiles)',
              'remove --output=bandwidth from extra_args: metrics returns bw_average_gbps, bw_average_mib_s, '
              'msg_rate_mpps and t_avg_us'),
     dict(extra_args=[])),
    (dict(test='ib_write_lat', extra_args=['--output', 'latency']),
     _refused(['--output', 'latency'], '--output latency makes perftest print a single number instead of the report '
              'this module reads (sizes, iterations, peak and average, latency percentiles)',
              'remove --output latency from extra_args: metrics returns bw_average_gbps, bw_average_mib_s, '
              'msg_rate_mpps and t_avg_us'),
     dict(test='ib_write_lat', extra_args=[])),
    (dict(extra_args=['--run_infinitely']),
     _refused(['--run_infinitely'], '--run_infinitely runs no measurement the module can report (it runs until killed)',
              'remove --run_infinitely from extra_args and use duration or iterations'),
     dict(extra_args=[])),
    (dict(test='ib_send_lat', extra_args=['-b']),
     _refused(['-b'], 'ib_send_lat refuses -b ("Bidirectional is only available in BW test")',
              'remove -b from extra_args, or run one of ib_write_bw, ib_read_bw, ib_send_bw'),
     dict(test='ib_send_lat', extra_args=[])),
]


@pytest.mark.parametrize('override,message,fixed', EXTRA_ARGS_REFUSED, ids=[' '.join(r[0]['extra_args']) for r in EXTRA_ARGS_REFUSED])
def test_extra_args_refused_before_running_and_the_fix_passes(override, message, fixed):
    runner = Replay('write_bw.client')
    with pytest.raises(pt.PerftestError) as err:
        pt.run('node1', params(**override), runner)
    assert str(err.value) == message
    assert (err.value.field, err.value.value) == ('extra_args', override['extra_args'])
    assert runner.calls == []
    pt.validate('node1', params(**fixed))


@pytest.mark.parametrize('extra', [
    ['--qp-timeout=14', '-F'], ['-b'], ['--bidirectional', '--report-both'], ['--qp-timeout', '14'], ['-t', '256'],
    ['--report-both'], ['--inline_size', '0'], ['-a'], ['--use_cuda=0', '--use_cuda_dmabuf'],
])
def test_extra_args_that_do_not_clash_pass(extra):
    assert pt.validate('node1', params(gid_index=2, qps=2, extra_args=extra)) == 2


def test_perftest_options_reads_like_getopt():
    assert pt.perftest_options(['-Fx3', '--gid-index', '4', '--qp-timeout=14', '-bR', '--', '-x', '5']) == [
        ('F', '-Fx3', None), ('x', '-Fx3', '3'), ('x', '--gid-index 4', '4'), (None, '--qp-timeout=14', '14'),
        ('b', '-bR', None), ('R', '-bR', None)]


# ---------------------------------------------------------------- issue 13: bidirectional runs end to end

def test_run_bidirectional_percentages_are_of_twice_the_link():
    result, error = pt.run('node2', params(gid_index=2, extra_args=['-b'], duration=2, size=4096),
                           Replay('write_bw_bidir.client'))
    assert error is None
    assert result['bidirectional'] is True
    assert result['cmd'][-2:] == ['-b', '10.255.0.1']
    metrics = result['metrics']
    assert (metrics['link_speed_gbps'], metrics['link_capacity_gbps']) == (10.0, 20.0)
    assert metrics['bw_pct_of_link'] == pytest.approx(metrics['bw_average_gbps'] / 20.0 * 100, abs=1e-4)


def test_run_bidirectional_threshold_message_says_both_directions():
    result, error = pt.run('node2', params(gid_index=2, extra_args=['-b'], min_bw_pct_of_link=50.0),
                           Replay('write_bw_bidir.client'))
    assert error == ('node2: ib_write_bw client to 10.255.0.1: average bandwidth 0.11 Gb/s (sum of both directions) '
                     'is 0.57% of twice the va.100 link (2 x 10000 Mb/s), below min_bw_pct_of_link=50')
    assert result['thresholds'][0]['passed'] is False


def test_run_report_both_directions_against_the_single_link():
    result, error = pt.run('node2', params(gid_index=2, extra_args=['-b', '--report-both'], iterations=2000),
                           Replay('write_bw_bidir_report_both.client'))
    assert error is None
    local = result['directions']['local']
    assert local['bw_average_mib_s'] == 6.40
    assert local['bw_pct_of_link'] == pytest.approx(local['bw_average_gbps'] / 10.0 * 100, abs=1e-4)
    assert 'link_capacity_gbps' not in local


def test_run_warnings_are_returned():
    result, error = pt.run('node2', params(gid_index=2), Replay('write_bw_mtu_too_big.client'))
    assert error is None
    assert result['perftest_warnings'] == ['Requested mtu is higher than active mtu Changing to active mtu - 3']


def test_run_completion_error_class_detail_and_hint():
    result, error = pt.run('node2', params(gid_index=3, device='mlx5_2'), Replay('derived_completion_retry_exceeded.client'))
    assert error.startswith("node2: ib_write_bw client to 10.255.0.1 failed (rc=1). perftest said: 'Completion with "
                            "error at client: Failed status 12: wr_id 0 syndrom 0x81'")
    assert result['error_class'] == 'completion_error'
    assert result['error_detail'] == {'wc_status': 12, 'wc_status_name': 'IBV_WC_RETRY_EXC_ERR'}
    assert result['hint'] in error


def test_run_unknown_failure_class():
    result, error = pt.run('node2', params(test='ib_write_lat', gid_index=2), Replay('lat_with_qps'))
    assert result['error_class'] == 'unknown'
    assert result['hint'] is None
    assert error == ("node2: ib_write_lat client to 10.255.0.1 failed (rc=1). perftest said: 'Multiple QPs only "
                     "available on bw tests | Parser function exited with Error'")


def test_run_server_timeout_class():
    result = pt.run('node1', params(role='server', server=None, gid_index=2, timeout=4), Replay('server_no_client_timeout'))[0]
    assert (result['error_class'], result['error_detail']) == ('timeout', {})

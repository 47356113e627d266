# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node's part of a round (``_verify.perftest_round.run_round``), with the processes played from real perftest captures
(tests/unit/fixtures/perftest) on a clock of their own; ``LocalProcesses`` against real processes and sockets; and the
records the role makes of a round's result (``_verify.rdma_report.round_records``). The lab runs the module for real
(molecule/lab: threshold.yml, isolation.yml, multirail.yml)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import os
import socket

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._verify import perftest_round as pr
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.perftest import PerftestError
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.rdma_report import round_records

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'perftest')
SYSFS = os.path.join(FIXTURES, 'sysfs')
PING_OK = ('3 packets transmitted, 3 received, 0% packet loss, time 402ms\n'
           'rtt min/avg/max/mdev = 0.512/0.700/0.901/0.160 ms\n')
PING_LOST = '3 packets transmitted, 0 received, 100% packet loss, time 2040ms\n'


def capture(case):
    def read(ext):
        with open(os.path.join(FIXTURES, '%s.%s' % (case, ext))) as f:
            return f.read()
    return int(read('rc')), read('stdout'), read('stderr')


def params(**kw):
    base = dict(tests=['ib_write_bw', 'ib_send_lat'], peer='10.255.0.1', client_ports=[18515, 18517],
                server_ports=[18516, 18518], ping=True, ping_count=3, ping_timeout=2, device=None, ib_port=1,
                gid_index='auto', netdev='va.100', bw_size=4096, bw_duration=2, qps=1, lat_size=64, lat_iterations=200,
                rdma_cm=False, tclass=None, client_timeout=20, server_timeout=30, connect_timeout=9, min_bw_gbps=None,
                min_bw_pct_of_link=None, link_speed_unknown='skip', max_lat_us=None, sysfs_root=SYSFS)
    base.update(kw)
    return base


class Procs:
    """The node's processes, played: ``clients`` maps a program to the outputs of its successive runs, ``servers`` to
    its server's output and how long it runs (None: it listens until stopped). Time passes only when a process runs
    or someone waits."""

    def __init__(self, clients=None, servers=None, ping=(0, PING_OK, '')):
        self.clients = {k: list(v) for k, v in (clients or {}).items()}
        self.servers = dict(servers or {})
        self.ping = ping
        self.t = 1000.0
        self.runs, self.spawned, self.stopped, self.sleeps = [], [], [], []

    def now(self):
        return self.t

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.t += seconds

    def run(self, cmd):
        self.runs.append(cmd)
        if 'ping' in cmd[0]:
            return self.ping
        program = os.path.basename(cmd[cmd.index('--kill-after=5') + 2])
        out = self.clients[program]
        self.t += 3
        return out.pop(0) if len(out) > 1 else out[0]

    def spawn(self, cmd):
        program = os.path.basename(cmd[cmd.index('--kill-after=5') + 2])
        output, runs_for = self.servers[program]
        handle = {'cmd': cmd, 'output': output, 'ends': None if runs_for is None else self.t + runs_for,
                  'port': int(cmd[cmd.index('-p') + 1])}
        self.spawned.append(handle)
        return handle

    def wait(self, handle, timeout):
        if handle['ends'] is not None and handle['ends'] <= self.t:
            return True
        self.t += timeout
        return handle['ends'] is not None and handle['ends'] <= self.t

    def listening(self, port):
        return any(h['port'] == port and h['ends'] is None for h in self.spawned)

    def stop(self, handle):
        self.stopped.append(handle['port'])
        handle['ends'], handle['output'] = self.t, (-15, 'waiting for client\n', '')

    def result(self, handle):
        return handle['output']


def round_(procs, check_mode=False, **kw):
    return pr.run_round('node2', params(**kw), procs, binaries={}, timeout_bin='timeout', ping_bin='ping',
                        check_mode=check_mode)


def healthy():
    return Procs(clients={'ib_write_bw': [capture('write_bw.client')], 'ib_send_lat': [capture('send_lat.client')]},
                 servers={'ib_write_bw': (capture('write_bw.server'), 10), 'ib_send_lat': (capture('send_lat.server'), 20)})


def test_a_round_serves_and_runs_every_test_in_one_run():
    procs = healthy()
    out = round_(procs)
    assert out['ping']['rc'] == 0 and out['ping']['cmd'] == ['ping', '-c', '3', '-W', '2', '-i', '0.2', '10.255.0.1']
    assert [r['test'] for r in out['clients']] == ['ib_write_bw', 'ib_send_lat']
    assert [r['test'] for r in out['servers']] == ['ib_write_bw', 'ib_send_lat']
    assert all(r['ok'] for r in out['clients'] + out['servers']), out
    assert out['clients'][0]['metrics']['bw_average_gbps'] > 0 and out['clients'][1]['metrics']['t_avg_us'] > 0
    assert out['clients'][0]['gid_ipv4'] == '192.0.2.1' or out['clients'][0]['gid_index'] == 2
    # Both servers were started before the first client ran, each on its port, the later one waiting longer.
    assert [h['port'] for h in procs.spawned] == [18516, 18518]
    assert [h['cmd'][2] for h in procs.spawned] == ['30', '50']
    assert [c[c.index('-p') + 1] for c in procs.runs[1:]] == ['18515', '18517']
    assert procs.runs[1][-1] == '10.255.0.1' and not procs.stopped and not procs.sleeps


def test_a_client_retries_while_its_server_may_still_be_starting():
    procs = healthy()
    procs.clients['ib_write_bw'] = [capture('no_server_client'), capture('no_server_client'), capture('write_bw.client')]
    out = round_(procs, connect_timeout=30)
    assert out['clients'][0]['ok'] and out['clients'][0]['attempts'] == 3
    assert procs.sleeps == [pr.CONNECT_RETRY_DELAY] * 2


def test_a_client_stops_retrying_at_the_connect_timeout():
    procs = healthy()
    procs.clients['ib_write_bw'] = [capture('no_server_client')]
    out = round_(procs, connect_timeout=9)
    client = out['clients'][0]
    assert not client['ok'] and client['error_class'] == 'tcp_connect' and client['attempts'] == 2, client
    assert "Couldn't connect to 10.255.0.1:18515" in client['msg']
    assert out['clients'][1]['ok'], 'the round\'s next test still ran'


def test_no_retry_after_a_ping_without_replies():
    procs = healthy()
    procs.ping = (1, PING_LOST, '')
    procs.clients['ib_write_bw'] = [capture('no_server_client')]
    out = round_(procs)
    assert out['clients'][0]['attempts'] == 1 and not procs.sleeps


def test_a_server_whose_client_never_comes_is_stopped_after_the_connect_window():
    procs = healthy()
    procs.servers['ib_write_bw'] = (capture('server_no_client_timeout'), None)
    out = round_(procs, connect_timeout=9)
    server = out['servers'][0]
    assert procs.stopped == [18516]
    assert not server['ok'] and server['stopped'] and server['error_class'] == 'client_failed', server
    # stopped once the peer's client should have connected: the connect window plus the ping's time, not its timeout
    assert 'no client connected within 11 s of the round\'s start' in server['msg'], server['msg']
    assert out['servers'][1]['ok']


def test_a_later_tests_server_waits_through_the_earlier_tests():
    procs = healthy()
    procs.servers['ib_send_lat'] = (capture('server_no_client_timeout'), None)
    out = round_(procs, connect_timeout=9)
    assert 'within 31 s' in out['servers'][1]['msg'], out['servers'][1]['msg']


def test_with_rdma_cm_a_server_runs_to_its_timeout():
    procs = healthy()
    procs.servers['ib_write_bw'] = (capture('server_no_client_timeout'), 35)
    out = round_(procs, rdma_cm=True, gid_index=None, netdev=None, device='rxe0')
    assert not procs.stopped
    assert not out['servers'][0]['ok'] and out['servers'][0]['error_class'] == 'timeout'


def test_a_side_that_cannot_start_fails_alone():
    # no RoCE v2 GID on the netdev (its address gone): every side fails with the GID table, the ping still runs
    procs = healthy()
    out = round_(procs, netdev='nosuch0')
    assert [r['ok'] for r in out['clients'] + out['servers']] == [False] * 4
    assert 'netdev nosuch0' in out['clients'][0]['msg'] and not procs.spawned
    assert out['ping']['rc'] == 0


@pytest.mark.parametrize('kw, field', [
    ({'client_ports': [18515]}, 'client_ports'),
    ({'server_ports': [1, 2, 3]}, 'server_ports'),
    ({'client_ports': None}, 'client_ports'),
    ({'netdev': 'bad name'}, 'netdev'),
    ({'client_timeout': 3}, 'timeout'),
])
def test_bad_input_fails_before_anything_runs(kw, field):
    procs = healthy()
    with pytest.raises(PerftestError) as exc:
        round_(procs, **kw)
    assert exc.value.field == field and 'Fix:' in str(exc.value)
    assert not procs.runs and not procs.spawned


def test_only_the_sides_the_node_has():
    procs = healthy()
    out = round_(procs, peer=None, client_ports=None)
    assert out['ping'] is None and out['clients'] == [] and len(out['servers']) == 2
    procs = healthy()
    out = round_(procs, server_ports=None)
    assert out['servers'] == [] and not procs.spawned and len(out['clients']) == 2


def test_check_mode_runs_nothing():
    procs = healthy()
    out = round_(procs, check_mode=True)
    assert not procs.runs and not procs.spawned
    assert all(r['ok'] and r['cmd'] for r in out['clients'] + out['servers'])
    assert out['ping']['rc'] is None


# ---------------------------------------------------------------- the real processes

def test_local_processes_stop_the_whole_session_and_read_the_output(tmp_path):
    procs = pr.LocalProcesses(run_command=None)
    marker = tmp_path / 'child'
    handle = procs.spawn(['sh', '-c', 'echo started; echo oops >&2; sh -c "sleep 60; touch %s" & wait' % marker])
    assert not procs.wait(handle, 0.2)
    procs.stop(handle)
    rc, out, err = procs.result(handle)
    assert rc != 0 and out == 'started\n' and err == 'oops\n'
    assert not marker.exists()


def test_local_processes_see_a_listening_socket():
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    try:
        assert not pr.LocalProcesses.listening(port)
        sock.listen(1)
        assert pr.LocalProcesses.listening(port)
    finally:
        sock.close()


def test_listening_reads_both_socket_tables(tmp_path):
    (tmp_path / 'net').mkdir()
    header = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n'
    (tmp_path / 'net' / 'tcp').write_text(header + '   0: 0100007F:4853 00000000:0000 01 00000000:00000000 00:00000000 '
                                          '00000000     0        0 1 1\n')
    (tmp_path / 'net' / 'tcp6').write_text(header + '   0: 00000000000000000000000000000000:4854 '
                                           '00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 '
                                           '00000000     0        0 2 1\n')
    assert not pr.LocalProcesses.listening(0x4853, proc_root=str(tmp_path)), 'established, not listening'
    assert pr.LocalProcesses.listening(0x4854, proc_root=str(tmp_path))


# ---------------------------------------------------------------- the role's records of a round

DUTY = {'client_to': 'node1', 'server_for': 'node3', 'peer_address': '10.255.0.1', 'rail': None}


def test_records_of_a_round():
    out = round_(healthy())
    records = round_records('node2', DUTY, ['ib_write_bw', 'ib_send_lat'], out)
    assert [(r['kind'], r['side'], r['client'], r['server']) for r in records] == [
        ('ping', 'client', 'node2', 'node1'),
        ('bw', 'client', 'node2', 'node1'), ('bw', 'server', 'node3', 'node2'),
        ('lat', 'client', 'node2', 'node1'), ('lat', 'server', 'node3', 'node2')]
    assert all(r['ok'] for r in records) and records[0]['ping']['rtt_avg_ms'] == 0.7
    assert records[1]['metrics']['bw_average_gbps'] > 0 and not records[1]['remeasured']


def test_records_of_a_remeasure_keep_the_first_ping():
    out = round_(healthy())
    records = round_records('node2', DUTY, ['ib_write_bw', 'ib_send_lat'], out, remeasure=True)
    assert [r['kind'] for r in records] == ['bw', 'bw', 'lat', 'lat'] and records[0]['remeasured']


def test_records_of_a_lost_round_fail_every_side_with_its_reason():
    result = {'unreachable': True, 'msg': 'Failed to connect to the host via ssh: timed out'}
    records = round_records('node2', DUTY, ['ib_write_bw'], result)
    assert [(r['kind'], r['side'], r['ok']) for r in records] == [
        ('ping', 'client', False), ('bw', 'client', False), ('bw', 'server', False)]
    assert all(r['msg'] == 'node2: Failed to connect to the host via ssh: timed out' for r in records)


def test_records_of_a_failed_ping():
    out = round_(healthy())
    out['ping'] = {'rc': 2, 'stdout': '', 'stderr': 'ping: connect: Network is unreachable\n'}
    records = round_records('node2', DUTY, ['ib_write_bw', 'ib_send_lat'], out)
    assert records[0]['msg'] == 'ping 10.255.0.1: rc=2, ? of ? replies (ping: connect: Network is unreachable)'

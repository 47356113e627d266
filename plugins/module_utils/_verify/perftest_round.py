# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node's part of a round of an RDMA verification, in one module run (the ``perftest_round`` module): the ping of
its peer, a perftest server for every test of the round (all listening at once, each on a port of its own), and its
clients, one test after the other. Every node of the round runs its part at the same time (one task), so the servers
of one node and the clients of another meet without Ansible between them.

A module run on a node costs a Python start and the module's imports; a round used to cost eight of them per node.

The processes are reached through ``procs`` (``LocalProcesses`` on a node), so unit tests can play them. Private to
this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import contextlib
import os
import signal
import subprocess
import tempfile
import time

from ansible_collections.gpufabric.roce.plugins.module_utils._verify.perftest import (
    BW_TESTS,
    PerftestError,
    classify,
    complete,
    prepare,
    read_counters,
    validate,
)

# A client retries "Couldn't connect" this often while its server may still be starting.
CONNECT_RETRY_DELAY = 3
# ping's interval (-i): the shortest an unprivileged ping may use, and short enough for a round.
PING_INTERVAL = 0.2
# How often the servers are looked at while they run.
POLL = 0.5


def side_params(params, test, index, role):
    """The ``perftest`` module's parameters of test ``index`` of the round, on the ``role`` side."""
    bw = test in BW_TESTS
    client = role == 'client'
    ports = params['client_ports' if client else 'server_ports']
    return {
        'test': test, 'role': role, 'server': params['peer'] if client else None,
        'device': params.get('device'), 'ib_port': params.get('ib_port') or 1, 'gid_index': params.get('gid_index'),
        'netdev': params.get('netdev'),
        'size': params['bw_size'] if bw else params['lat_size'],
        'duration': params['bw_duration'] if bw else None,
        'iterations': None if bw else params['lat_iterations'],
        'qps': params['qps'] if bw else None,
        'report_gbits': False, 'rdma_cm': params.get('rdma_cm', False), 'tclass': params.get('tclass'),
        'tcp_port': ports[index],
        # A later test's server waits through this node's and its peer's earlier clients.
        'timeout': params['client_timeout'] if client else params['server_timeout'] + index * params['client_timeout'],
        'extra_args': [],
        'min_bw_gbps': params.get('min_bw_gbps') if bw and client else None,
        'min_bw_pct_of_link': params.get('min_bw_pct_of_link') if bw and client else None,
        'link_speed_unknown': params.get('link_speed_unknown') or 'fail',
        'max_lat_us': params.get('max_lat_us') if client and not bw else None,
        'sysfs_root': params.get('sysfs_root') or '/sys',
    }


def check_params(host, params):
    """Every side's parameters, validated before anything runs: ``[(role, index, test, side_params)]``. Raises
    PerftestError naming the first problem."""
    tests = params['tests']
    sides = []
    for role, ports in (('server', params.get('server_ports')), ('client', params.get('client_ports'))):
        if role == 'client' and not params.get('peer'):
            continue
        if ports is None:
            if role == 'server':
                continue
            raise PerftestError('%s: client_ports: unset, but peer=%s runs a client per test. Fix: give one TCP port '
                                'per test (%d), the ports of the peer\'s servers' % (host, params['peer'], len(tests)),
                                field='client_ports', value=None)
        if len(ports) != len(tests):
            raise PerftestError('%s: %s_ports=%s: %d port(s) for %d test(s) (%s). Fix: give one TCP port per test, in the '
                                'order of tests' % (host, role, ports, len(ports), len(tests), ', '.join(tests)),
                                field='%s_ports' % role, value=ports)
        for index, test in enumerate(tests):
            sparams = side_params(params, test, index, role)
            validate(host, sparams)
            sides.append((role, index, test, sparams))
    return sides


def _failed(test, role, msg, error_class=None, **extra):
    out = {'test': test, 'role': role, 'ok': False, 'msg': msg, 'error_class': error_class, 'metrics': {},
           'gid_index': None, 'gid_ipv4': None, 'netdev': None, 'thresholds_skipped': [], 'port_counters': None,
           'counter_flags': [], 'perftest_warnings': []}
    out.update(extra)
    return out


def _record(test, role, result, error):
    out = dict(result, test=test, role=role, ok=error is None, msg=error or result.get('msg', ''))
    out.setdefault('error_class', None)
    return out


def ping_command(ping_bin, params):
    return [ping_bin, '-c', str(params['ping_count']), '-W', str(params['ping_timeout']), '-i', str(PING_INTERVAL),
            params['peer']]


def run_round(host, params, procs, *, binaries, timeout_bin, ping_bin, check_mode=False, pause_reader=None):
    """This node's part of the round: ``{'ping', 'servers', 'clients'}`` (one record per test in each list, in the
    order of ``tests``; ``ping`` is ``{cmd, rc, stdout, stderr}`` or None). A failure of a test is its record's, never
    the run's: the round's other tests and the peer's still run. Raises PerftestError for bad input, before anything
    runs."""
    sides = check_params(host, params)
    peer = params.get('peer')
    want_ping = bool(peer) and params.get('ping', True)
    out = {'ping': None, 'servers': [], 'clients': []}
    if check_mode:
        for role, _index, test, sparams in sides:
            try:
                result = prepare(host, sparams, binary=binaries.get(test), timeout_bin=timeout_bin)[1]
            except PerftestError as exc:
                out[role + 's'].append(_failed(test, role, str(exc)))
                continue
            out[role + 's'].append(dict(_record(test, role, result, None), ok=True,
                                        msg='check mode: perftest not run (a benchmark changes nothing)'))
        if want_ping:
            out['ping'] = {'cmd': ping_command(ping_bin, params), 'rc': None, 'stdout': '', 'stderr': ''}
        return out

    start = procs.now()
    servers = []
    for role, index, test, given in sides:
        if role != 'server':
            continue
        try:
            sparams, result = prepare(host, given, binary=binaries.get(test), timeout_bin=timeout_bin)
        except PerftestError as exc:
            servers.append((index, test, given, None, _failed(test, 'server', str(exc))))
            continue
        servers.append((index, test, sparams, result, procs.spawn(result['cmd'])))

    ping_ok = True
    ping_allowance = 0
    if want_ping:
        cmd = ping_command(ping_bin, params)
        rc, stdout, stderr = procs.run(cmd)
        out['ping'] = {'cmd': cmd, 'rc': rc, 'stdout': stdout, 'stderr': stderr}
        ping_ok = rc == 0
        ping_allowance = params['ping_count'] * PING_INTERVAL + params['ping_timeout']

    for role, _index, test, sparams in sides:
        if role != 'client':
            continue
        out['clients'].append(_run_client(host, test, sparams, procs, binaries=binaries, timeout_bin=timeout_bin,
                                          pause_reader=pause_reader,
                                          connect_timeout=params['connect_timeout'] if ping_ok else 0))

    for index, test, sparams, prepared, handle in servers:
        if prepared is None:
            out['servers'].append(handle)
            continue
        # The peer's client of this test starts after its own ping and earlier tests, and retries connecting for a
        # while: a server still listening after that has no client coming (perftest stops listening once one
        # connects), and is stopped rather than left to its timeout.
        accept_by = start + params['connect_timeout'] + ping_allowance + index * params['client_timeout']
        stopped = False
        while not procs.wait(handle, POLL):
            if procs.now() > accept_by and not params.get('rdma_cm') and procs.listening(sparams['tcp_port']):
                procs.stop(handle)
                stopped = True
        output = procs.result(handle)
        if stopped:
            out['servers'].append(_failed(test, 'server', '%s: %s server on TCP port %d stopped: no client connected '
                                          'within %d s of the round\'s start. Fix: see the failure of its client, on the '
                                          'peer' % (host, test, sparams['tcp_port'], int(accept_by - start)),
                                          'client_failed', stopped=True, cmd=prepared['cmd'], rc=output[0],
                                          stdout=output[1], stderr=output[2], gid_index=prepared['gid_index']))
            continue
        result, error = complete(host, sparams, prepared, output)
        out['servers'].append(_record(test, 'server', result, error))
    return out


def _run_client(host, test, sparams, procs, *, binaries, timeout_bin, pause_reader, connect_timeout):
    try:
        sparams, result = prepare(host, sparams, binary=binaries.get(test), timeout_bin=timeout_bin)
    except PerftestError as exc:
        return _failed(test, 'client', str(exc))
    # The peer's server may still be starting (its module started when this one did, on a node as slow as this one);
    # once the ping failed, the route is the answer and waiting would not change it.
    connect_by = procs.now() + connect_timeout
    attempts = 0
    while True:
        attempts += 1
        before = read_counters(sparams, result, pause_reader)
        output = procs.run(result['cmd'])
        if output[0] == 0 or (classify(output[1], output[2]) or {}).get('error_class') != 'tcp_connect' \
                or procs.now() + CONNECT_RETRY_DELAY > connect_by:
            break
        procs.sleep(CONNECT_RETRY_DELAY)
    result, error = complete(host, sparams, result, output, before=before, pause_reader=pause_reader)
    record = _record(test, 'client', result, error)
    record['attempts'] = attempts
    return record


class LocalProcesses(object):
    """The processes of a round on this node. ``run`` is the module's ``run_command``; servers are spawned in a
    session of their own, so a stop reaches perftest under ``timeout``."""

    def __init__(self, run_command):
        self._run = run_command

    @staticmethod
    def now():
        return time.monotonic()

    @staticmethod
    def sleep(seconds):
        time.sleep(seconds)

    def run(self, cmd):
        return self._run(cmd)

    @staticmethod
    def spawn(cmd):
        # closed by result(), once the server has ended
        out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # noqa: SIM115
        env = dict(os.environ, LC_ALL='C', LANG='C')
        # A server runs beside the clients, ended by result() or stop(): run_command waits for its process, so this is
        # Popen (ansible-test 2.21 and later flag subprocess in module_utils).
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, close_fds=True, env=env,  # pylint: disable=ansible-bad-function
                                start_new_session=True)
        return {'proc': proc, 'out': out, 'err': err}

    @staticmethod
    def wait(handle, timeout):
        try:
            handle['proc'].wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    @staticmethod
    def stop(handle):
        proc = handle['proc']
        for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, sig)
            try:
                proc.wait(grace)
                return
            except subprocess.TimeoutExpired:
                continue

    @staticmethod
    def result(handle):
        handle['proc'].wait()
        texts = []
        for f in (handle['out'], handle['err']):
            f.seek(0)
            texts.append(f.read().decode('utf-8', 'replace'))
            f.close()
        return handle['proc'].returncode, texts[0], texts[1]

    @staticmethod
    def listening(port, proc_root='/proc'):
        """Whether a TCP socket listens on ``port`` (any address), from the kernel's socket tables."""
        want = '%04X' % port
        for name in ('tcp', 'tcp6'):
            try:
                with open(os.path.join(proc_root, 'net', name)) as f:
                    next(f, None)
                    for line in f:
                        fields = line.split()
                        # local_address is ADDR:PORT in hex; state 0A is LISTEN
                        if len(fields) > 3 and fields[3] == '0A' and fields[1].rsplit(':', 1)[-1] == want:
                            return True
            except OSError:
                continue
        return False

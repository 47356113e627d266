# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of the ``perftest`` module: input validation (including what ``extra_args`` may
carry), GID auto-selection from sysfs, the command line, failure messages and thresholds.  The
reading of perftest's output lives in ``_verify.perftest_output``.

Nothing here runs a process; ``run()`` takes the runner as an argument so that unit tests can
feed it captured outputs.  Private to this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import json
import os
import re

from ansible_collections.gpufabric.roce.plugins.module_utils._common import rdma_counters as counters
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import format_error
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.perftest_cmdline import (
    BW_TESTS,
    DURATION_MARGIN,
    LAT_TESTS,
    TESTS,
    build_command,
    extra_args_problem,
    perftest_options,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.perftest_output import (
    MIB,
    classify,
    classify_error,
    collect_warnings,
    gid_to_ipv4,
    parse_output,
)


# the module, the filters and the tests use this one name space; the command line and the output
# reading live in _verify.perftest_cmdline and _verify.perftest_output
__all__ = ['BW_TESTS', 'DURATION_MARGIN', 'LAT_TESTS', 'MIB', 'TESTS', 'PerftestError', 'add_link_percentage',
           'build_command', 'check_thresholds', 'classify', 'classify_error', 'collect_warnings', 'describe_side',
           'extra_args_problem', 'failure_details', 'failure_message', 'gid_entry', 'gid_to_ipv4', 'input_error',
           'list_devices', 'parse_gid_index', 'parse_output', 'perftest_options', 'read_gid_table', 'read_link_speed',
           'complete', 'prepare', 'read_counters', 'run', 'select_gid', 'threshold_problem', 'validate']

# perftest's own limits (src/perftest_parameters.h: MAX_SIZE, MIN_ITER, MAX_QP_NUM)
MAX_SIZE = 8388608
MIN_ITERS = 5
MAX_QPS = 16384
TIMEOUT_RC = 124

ZERO_GID = '0000:0000:0000:0000:0000:0000:0000:0000'


class PerftestError(Exception):
    """A failure whose message names host, what went wrong and the fix.

    ``field``/``value`` are set for bad input, ``perftest_message`` for failures quoted from perftest.
    """

    def __init__(self, msg, field=None, value=None, perftest_message=None, hint=None):
        self.field = field
        self.value = value
        self.perftest_message = perftest_message
        self.hint = hint
        super(PerftestError, self).__init__(msg)


def input_error(host, field, value, problem, fix):
    return PerftestError(format_error(host, field, value, problem, fix), field=field, value=value)


# ---------------------------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------------------------

def parse_gid_index(host, value):
    """``None``, ``'auto'`` or a non-negative int (given as int or digit string)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise input_error(host, 'gid_index', value, 'must be a GID table index (0, 1, ...) or "auto"',
                          'set gid_index: auto (with netdev) or the index of a RoCE v2 GID from rdma_facts')
    if isinstance(value, int):
        index = value
    else:
        text = str(value).strip()
        if text.lower() == 'auto':
            return 'auto'
        if not re.match(r'^[0-9]+$', text):
            raise input_error(host, 'gid_index', value, 'must be a GID table index (0, 1, ...) or "auto"',
                              'set gid_index: auto (with netdev) or the index of a RoCE v2 GID from rdma_facts')
        index = int(text)
    if index < 0:
        raise input_error(host, 'gid_index', value, 'a GID index cannot be negative',
                          'set gid_index: auto (with netdev) or the index of a RoCE v2 GID from rdma_facts')
    return index


# The thresholds' rule, one place: the module checks it here, and site.yml's validation play through
# gpufabric.roce.validate_role_arguments (plugin_utils/_role_checks.py) for rdma_verify_<name>, before phase 1.
# 0 is refused: it would pass every pair, which is "unset", not a threshold.
THRESHOLDS = {
    'min_bw_gbps': (lambda v: v > 0, 'must be greater than 0', 'set a bandwidth in Gb/s, e.g. 80'),
    'min_bw_pct_of_link': (lambda v: 0 < v <= 100, 'must be above 0 and at most 100', 'set a percentage of the link speed, e.g. 80'),
    'max_lat_us': (lambda v: v > 0, 'must be greater than 0', 'set a latency in microseconds, e.g. 10'),
}


def threshold_problem(name, value):
    """``(problem, fix)`` when ``value`` is no valid threshold ``name`` (a key of THRESHOLDS), else None."""
    ok, problem, fix = THRESHOLDS[name]
    return None if ok(value) else (problem, fix)


def validate(host, params):
    """Checks the values Ansible's argument_spec cannot; raises PerftestError before anything runs.

    Returns the normalized gid_index (None, 'auto' or int).
    """
    gid_index = parse_gid_index(host, params.get('gid_index'))
    test = params['test']

    if gid_index == 'auto' and not params.get('netdev'):
        raise input_error(host, 'netdev', params.get('netdev'),
                          'gid_index=auto picks the RoCE v2 GID of an interface and needs its name',
                          'set netdev to the interface that carries the RDMA traffic, e.g. the VLAN gateway <pf>.<vlan>')
    if params.get('netdev') is not None and not _valid_ifname(params['netdev']):
        raise input_error(host, 'netdev', params['netdev'], 'is not a valid interface name',
                          'use the kernel name of the interface, at most 15 characters, no "/" or spaces')
    if params.get('device') is not None and (not params['device'] or '/' in params['device']):
        raise input_error(host, 'device', params['device'], 'is not a valid RDMA device name',
                          'use a name from "rdma link show" / ansible_facts.rdma.devices, e.g. mlx5_0 or rxe0')
    if params['role'] == 'client' and not (params.get('server') or '').strip():
        raise input_error(host, 'server', params.get('server'), 'the client needs the address of the server',
                          "set server to the server node's address on the RDMA network")
    server = params.get('server')
    if server and (server.startswith('-') or not re.match(r'^[A-Za-z0-9_.:%\[\]-]+$', server)):
        raise input_error(host, 'server', params['server'], 'is not a host name or IP address',
                          "set server to the server node's address on the RDMA network, e.g. 10.255.0.6")

    for field, low, high, fix in (
            ('ib_port', 1, 255, 'use the port number of the RDMA device, usually 1'),
            ('size', 1, MAX_SIZE, 'use a message size between 1 and %d bytes' % MAX_SIZE),
            ('qps', 1, MAX_QPS, 'use between 1 and %d queue pairs' % MAX_QPS),
            ('tcp_port', 1, 65535, 'use a free TCP port between 1 and 65535 (perftest default 18515)'),
            ('tclass', 0, 255, 'use the IP ToS of the rail\'s QoS, e.g. 106 (DSCP 26, ECT(0))'),
            ('duration', 1, 86400, 'use a duration in seconds, e.g. 5'),
            ('iterations', MIN_ITERS, 100000000, 'use at least %d iterations (perftest refuses fewer)' % MIN_ITERS),
            ('timeout', 1, 86400, 'use a timeout in seconds, e.g. 60')):
        value = params.get(field)
        if value is not None and not low <= value <= high:
            raise input_error(host, field, value, 'must be between %d and %d' % (low, high), fix)

    if params.get('qps') is not None and test in LAT_TESTS:
        raise input_error(host, 'qps', params['qps'], '%s refuses -q ("Multiple QPs only available on bw tests"), even -q 1' % test,
                          'leave qps unset for latency tests')

    duration = params.get('duration')
    if duration is not None and params['timeout'] < duration + DURATION_MARGIN:
        raise input_error(host, 'timeout', params['timeout'],
                          'is shorter than duration=%d plus %d s for connecting and reporting' % (duration, DURATION_MARGIN),
                          'set timeout to at least %d' % (duration + DURATION_MARGIN))

    for field, tests, other in (('min_bw_gbps', BW_TESTS, ('latency, not bandwidth', 'max_lat_us for latency tests')),
                                ('min_bw_pct_of_link', BW_TESTS, ('latency, not bandwidth', 'max_lat_us for latency tests')),
                                ('max_lat_us', LAT_TESTS, ('bandwidth, not latency', 'min_bw_gbps or min_bw_pct_of_link for bandwidth tests'))):
        if params.get(field) is None:
            continue
        if test not in tests:
            raise input_error(host, field, params[field], '%s measures %s' % (test, other[0]),
                              'use %s, or run one of %s' % (other[1], ', '.join(tests)))
        problem = threshold_problem(field, params[field])
        if problem:
            raise input_error(host, field, params[field], *problem)

    problem = extra_args_problem(params, gid_index)
    if problem:
        raise input_error(host, 'extra_args', params.get('extra_args') or [], *problem)
    return gid_index


def _valid_ifname(name):
    return bool(name) and len(name) <= 15 and not re.search(r'[/\s:]', name) and name not in ('.', '..')


# ---------------------------------------------------------------------------------------------
# sysfs: GID table, link speed
# ---------------------------------------------------------------------------------------------

def _read(path):
    """File content stripped, or None when missing or refused (EINVAL on empty GID slots)."""
    try:
        with open(path) as f:
            return f.read().strip()
    except (OSError, UnicodeDecodeError):
        return None


def read_gid_table(sysfs_root, device, ib_port):
    """Populated GID slots of one port: ``[{index, gid, type, ndev, ipv4}]`` sorted by index.

    Empty slots (all-zero GID, or EINVAL when reading their type/ndev) are skipped.
    Returns None when the port does not exist.
    """
    base = os.path.join(sysfs_root, 'class', 'infiniband', device, 'ports', str(ib_port))
    gids_dir = os.path.join(base, 'gids')
    try:
        names = os.listdir(gids_dir)
    except OSError:
        return None
    entries = []
    for name in sorted((n for n in names if n.isdigit()), key=int):
        gid = _read(os.path.join(gids_dir, name))
        if gid is None or gid == ZERO_GID:
            continue
        gid_type = _read(os.path.join(base, 'gid_attrs', 'types', name))
        ndev = _read(os.path.join(base, 'gid_attrs', 'ndevs', name))
        if gid_type is None and ndev is None:
            continue
        entries.append({'index': int(name), 'gid': gid, 'type': gid_type, 'ndev': ndev, 'ipv4': gid_to_ipv4(gid)})
    return entries


def list_devices(sysfs_root):
    try:
        return sorted(os.listdir(os.path.join(sysfs_root, 'class', 'infiniband')))
    except OSError:
        return []


def select_gid(host, sysfs_root, device, ib_port, netdev):
    """GID ``auto``: the lowest index whose type is RoCE v2, whose ndev is ``netdev`` and whose
    GID is IPv4-mapped.  With ``device`` None every RDMA device is searched.

    Returns ``(device, entry)``; raises PerftestError listing what was found otherwise.
    """
    devices = [device] if device else list_devices(sysfs_root)
    if not devices:
        raise PerftestError(
            '%s: gid_index=auto: no RDMA device under %s. Fix: load the RDMA driver (e.g. mlx5_ib) '
            'or create a soft-RoCE device (rdma link add rxe0 type rxe netdev <pf>)'
            % (host, os.path.join(sysfs_root, 'class', 'infiniband')), field='device', value=device)
    found = []
    for dev in devices:
        table = read_gid_table(sysfs_root, dev, ib_port)
        if table is None:
            if device:
                raise PerftestError(
                    '%s: device=%s ib_port=%d: no such RDMA device/port (%s is missing). Fix: use a device and port '
                    'from "rdma link show" / ansible_facts.rdma.devices'
                    % (host, json.dumps(dev), ib_port,
                       os.path.join(sysfs_root, 'class', 'infiniband', dev, 'ports', str(ib_port), 'gids')),
                    field='device', value=dev)
            continue
        for entry in table:
            if entry['type'] == 'RoCE v2' and entry['ndev'] == netdev and entry['ipv4']:
                return dev, entry
        found.extend(dict(entry, device=dev) for entry in table)

    listing = '; '.join('%s port %d index %d: %s (%s, ndev %s)' % (
        e['device'], ib_port, e['index'], e['gid'], e['type'], e['ndev']) for e in found) or 'no populated GID slot'
    on_netdev = [e for e in found if e['ndev'] == netdev]
    if not on_netdev:
        fix = ('assign an IPv4 address to %s, and make sure %s is the RoCE netdev of the RDMA device or a VLAN on top '
               'of it (GIDs follow the addresses of the netdev and of its VLANs)' % (netdev, netdev))
    elif not any(e['type'] == 'RoCE v2' for e in on_netdev):
        fix = 'enable RoCE v2 GIDs (on mlx5: cma_roce_mode / the NIC firmware default), then retry'
    else:
        fix = 'assign an IPv4 address to %s (only IPv6 GIDs are present there)' % netdev
    raise PerftestError(
        '%s: gid_index=auto: %s has no RoCE v2 GID with an IPv4-mapped address on netdev %s. Found: %s. Fix: %s'
        % (host, device or 'no RDMA device', netdev, listing, fix) if device else
        '%s: gid_index=auto: no RDMA device has a RoCE v2 GID with an IPv4-mapped address on netdev %s. Found: %s. Fix: %s'
        % (host, netdev, listing, fix), field='gid_index', value='auto')


def gid_entry(sysfs_root, device, ib_port, index):
    """The GID table entry of an explicit index, or None (unknown device, empty slot)."""
    if not device:
        return None
    for entry in read_gid_table(sysfs_root, device, ib_port) or []:
        if entry['index'] == index:
            return entry
    return None


def read_link_speed(sysfs_root, netdev):
    """Link speed in Mb/s from ``/sys/class/net/<netdev>/speed``; None when unknown (-1, missing, not a number)."""
    if not netdev:
        return None
    value = _read(os.path.join(sysfs_root, 'class', 'net', netdev, 'speed'))
    try:
        speed = int(value)
    except (TypeError, ValueError):
        return None
    return speed if speed > 0 else None


def _stderr_summary(stderr, limit=6):
    lines = [ln.strip() for ln in (stderr or '').splitlines() if ln.strip()]
    return ' | '.join(lines[-limit:])


def describe_side(params):
    if params['role'] == 'client':
        return '%s client to %s' % (params['test'], params['server'])
    return '%s server' % params['test']


def failure_details(host, params, rc, stdout, stderr):
    """A failed run: ``{msg, perftest_error, hint, error_class, error_detail}``.

    ``msg`` quotes perftest and ends with the fix; ``error_class`` is one of the classes of
    ``_verify.perftest_output.classify``, ``timeout`` or ``unknown``.
    """
    side = describe_side(params)
    found = classify(stdout, stderr) or {}
    quoted, hint = found.get('message'), found.get('hint')
    details = {'perftest_error': quoted, 'hint': hint, 'error_class': found.get('error_class'),
               'error_detail': found.get('detail', {})}
    if rc in (TIMEOUT_RC, 137):
        server = params['role'] == 'server'
        msg = '%s: %s did not finish within timeout=%d s (%s)' % (
            host, side, params['timeout'],
            'no client connected' if server else 'the server did not answer or the test ran longer than expected')
        if quoted:
            msg += ". perftest said: '%s'" % quoted
        fix = hint or ('start the client within the timeout, or raise timeout' if server else
                       'check that the server side runs and answers, or raise timeout')
        details.update(msg=msg + '. Fix: ' + fix, error_class=details['error_class'] or 'timeout')
        return details
    if quoted:
        msg = "%s: %s failed (rc=%d). perftest said: '%s'" % (host, side, rc, quoted)
        summary = _stderr_summary(stderr)
        if summary and summary != quoted:
            msg += ' [stderr: %s]' % summary
        details['msg'] = msg + '. Fix: ' + hint
        return details
    summary = _stderr_summary(stderr) or _stderr_summary(stdout)
    details.update(msg="%s: %s failed (rc=%d). perftest said: '%s'" % (host, side, rc, summary or '(no output)'),
                   perftest_error=summary, error_class='unknown')
    return details


def failure_message(host, params, rc, stdout, stderr):
    """``(message, perftest's own message, hint)`` of a failed perftest run."""
    details = failure_details(host, params, rc, stdout, stderr)
    return details['msg'], details['perftest_error'], details['hint']


# ---------------------------------------------------------------------------------------------
# thresholds
# ---------------------------------------------------------------------------------------------

def check_thresholds(host, params, metrics, link_speed_mbps, speed_netdev, *, bidirectional=False):
    """Evaluates min_bw_gbps, min_bw_pct_of_link and max_lat_us.

    Returns ``(checks, failures)``: every evaluated threshold as ``{name, limit, measured, unit, passed}``
    and the messages of those that failed.  A bidirectional run's bandwidth is the sum of both
    directions (as perftest reports it) and its percentage is of twice the link speed.
    """
    checks = []
    failures = []
    side = describe_side(params)
    size = metrics.get('bytes')
    both = ' (sum of both directions)' if bidirectional else ''
    if params.get('min_bw_gbps') is not None and 'bw_average_gbps' in metrics:
        measured = metrics['bw_average_gbps']
        ok = measured >= params['min_bw_gbps']
        checks.append({'name': 'min_bw_gbps', 'limit': params['min_bw_gbps'], 'measured': measured,
                       'unit': 'Gb/s', 'passed': ok})
        if not ok:
            failures.append('%s: %s: average bandwidth %.2f Gb/s%s (%d-byte messages) is below min_bw_gbps=%s'
                            % (host, side, measured, both, size, _num(params['min_bw_gbps'])))
    if params.get('min_bw_pct_of_link') is not None and 'bw_average_gbps' in metrics and link_speed_mbps:
        pct = metrics.get('bw_pct_of_link')
        ok = pct >= params['min_bw_pct_of_link']
        checks.append({'name': 'min_bw_pct_of_link', 'limit': params['min_bw_pct_of_link'], 'measured': pct,
                       'unit': '%', 'passed': ok})
        if not ok:
            link = ('the %s link (%d Mb/s)' % (speed_netdev, link_speed_mbps) if not bidirectional else
                    'twice the %s link (2 x %d Mb/s)' % (speed_netdev, link_speed_mbps))
            failures.append('%s: %s: average bandwidth %.2f Gb/s%s is %.2f%% of %s, below min_bw_pct_of_link=%s'
                            % (host, side, metrics['bw_average_gbps'], both, pct, link,
                               _num(params['min_bw_pct_of_link'])))
    if params.get('max_lat_us') is not None and 't_avg_us' in metrics:
        measured = metrics['t_avg_us']
        ok = measured <= params['max_lat_us']
        checks.append({'name': 'max_lat_us', 'limit': params['max_lat_us'], 'measured': measured,
                       'unit': 'us', 'passed': ok})
        if not ok:
            failures.append('%s: %s: average latency %.2f us (%d-byte messages) is above max_lat_us=%s'
                            % (host, side, measured, size, _num(params['max_lat_us'])))
    return checks, failures


def _num(value):
    return ('%f' % value).rstrip('0').rstrip('.') if isinstance(value, float) else str(value)


def add_link_percentage(metrics, link_speed_mbps, bidirectional=False):
    """Adds the link speed and the bandwidth as a percentage of it; of twice it for a bidirectional
    run, whose figures are the sum of both directions (``link_capacity_gbps`` then says so)."""
    if link_speed_mbps and 'bw_average_gbps' in metrics:
        capacity = link_speed_mbps * (2 if bidirectional else 1)
        metrics['link_speed_gbps'] = link_speed_mbps / 1000.0
        if bidirectional:
            metrics['link_capacity_gbps'] = capacity / 1000.0
        metrics['bw_pct_of_link'] = round(metrics['bw_average_gbps'] * 1000.0 / capacity * 100.0, 4)
        if 'bw_peak_gbps' in metrics:
            metrics['bw_peak_pct_of_link'] = round(metrics['bw_peak_gbps'] * 1000.0 / capacity * 100.0, 4)
    return metrics


# ---------------------------------------------------------------------------------------------
# the whole task
# ---------------------------------------------------------------------------------------------

def prepare(host, params, *, binary=None, timeout_bin=None):
    """Validates and resolves the GID: ``(params, result)``, the parameters the run is judged with and the result
    skeleton, whose ``cmd`` is the command to run. Raises PerftestError for bad input (nothing has run then)."""
    gid_index = validate(host, params)
    sysfs_root = params.get('sysfs_root') or '/sys'
    device = params.get('device')
    gid = None
    if gid_index == 'auto':
        device, gid = select_gid(host, sysfs_root, device, params['ib_port'], params['netdev'])
        gid_index = gid['index']
    elif gid_index is not None:
        gid = gid_entry(sysfs_root, device, params['ib_port'], gid_index)

    speed_netdev = params.get('netdev') or (gid or {}).get('ndev')
    link_speed = read_link_speed(sysfs_root, speed_netdev)
    if params.get('min_bw_pct_of_link') is not None and not link_speed and params.get('link_speed_unknown') == 'skip':
        # The pass bar is a default (rdma_verify): a link whose speed the kernel does not report is measured, not judged.
        params = dict(params, min_bw_pct_of_link=None)
        skipped_pct = 'min_bw_pct_of_link not checked: the link speed of %s is unknown' % (speed_netdev or 'the GID\'s netdev')
    else:
        skipped_pct = None
    if params.get('min_bw_pct_of_link') is not None and not link_speed:
        raise input_error(host, 'min_bw_pct_of_link', params['min_bw_pct_of_link'],
                          'the link speed is unknown (%s)' % (
                              'no netdev given and the GID has none' if not speed_netdev else
                              '%s reads -1 or is missing' % os.path.join(sysfs_root, 'class', 'net', speed_netdev, 'speed')),
                          'set netdev to an interface with a known speed, or use min_bw_gbps instead')

    effective = dict(params, device=device)
    cmd = build_command(effective, gid_index, binary=binary, timeout_bin=timeout_bin)
    result = {
        'changed': False,
        'cmd': cmd,
        'device': device,
        'gid_index': gid_index,
        'gid': gid['gid'] if gid else None,
        'gid_ipv4': gid['ipv4'] if gid else None,
        'netdev': speed_netdev,
        'link_speed_mbps': link_speed,
        'metrics': {},
        'rows': [],
        'preamble': {},
        'connection': {'local': [], 'remote': []},
        'thresholds': [],
        'thresholds_skipped': [skipped_pct] if skipped_pct else [],
        'port_counters': None,
        'counter_flags': [],
        'perftest_warnings': [],
        'bidirectional': False,
        'directions': {},
        'stdout': '',
        'stderr': '',
    }
    return params, result


def read_counters(params, result, pause_reader=None):
    """The RDMA port's counters of the run's device, read before and after it (``complete``)."""
    return counters.read(params.get('sysfs_root') or '/sys', result['device'], params.get('ib_port') or 1, pause_reader)


def complete(host, params, result, output, *, before=None, pause_reader=None):
    """Fills the ``prepare``d ``result`` from perftest's ``(rc, stdout, stderr)``, with the port counters' change
    since ``before`` (``read_counters``) when given: ``(result, error_message)``, None on success."""
    result, error = _finish(host, params, result, output)
    if before is not None:
        # Read after perftest exits: its QPs are gone, so nothing of this test is still on the way.
        result['port_counters'] = counters.delta(before, read_counters(params, result, pause_reader))
        flag = counters.flag_text(host, describe_side(params), result['port_counters']) if error is None else None
        result['counter_flags'] = [flag] if flag else []
    return result, error


def run(host, params, runner, *, check_mode=False, binary=None, timeout_bin=None, pause_reader=None):
    """Validates, resolves the GID, runs perftest through ``runner(argv) -> (rc, stdout, stderr)``
    and returns ``(result, error_message)``; ``error_message`` is None on success.

    ``pause_reader(netdev)`` (``_common.pause_stats.read``, on a live node) adds the port netdev's pause frames to the counters.

    Raises PerftestError for bad input (nothing has run then).
    """
    params, result = prepare(host, params, binary=binary, timeout_bin=timeout_bin)
    if check_mode:
        result['msg'] = 'check mode: perftest not run (a benchmark changes nothing); cmd is the planned command'
        return result, None
    before = read_counters(params, result, pause_reader)
    return complete(host, params, result, runner(result['cmd']), before=before, pause_reader=pause_reader)


def _finish(host, params, result, output):
    """Fills ``result`` from perftest's ``(rc, stdout, stderr)``; ``(result, error_message)``."""
    rc, stdout, stderr = output
    result.update(rc=rc, stdout=stdout, stderr=stderr)
    parsed = parse_output(stdout, stderr)
    bidirectional = parsed['bidirectional']
    result.update(preamble=parsed['preamble'], connection=parsed['connection'], rows=parsed['rows'],
                  perftest_warnings=parsed['perftest_warnings'], bidirectional=bidirectional,
                  directions=parsed['directions'])
    if rc != 0:
        failure = failure_details(host, params, rc, stdout, stderr)
        msg = failure.pop('msg')
        result.update(failure)
        return result, msg

    link_speed, speed_netdev = result['link_speed_mbps'], result['netdev']
    metrics = add_link_percentage(parsed['metrics'], link_speed, bidirectional)
    for row in parsed['directions'].values():
        add_link_percentage(row, link_speed)
    if metrics and parsed['bw_unit']:
        metrics['bw_unit_reported'] = parsed['bw_unit']
    result['metrics'] = metrics
    if not metrics:
        if params['role'] == 'client':
            return result, ('%s: %s exited 0 but printed no result table. Fix: check stdout; this perftest output '
                            'format is not known to the parser' % (host, describe_side(params)))
        result['msg'] = '%s prints its results on the client side only' % params['test']
        return result, None
    checks, failures = check_thresholds(host, params, metrics, link_speed, speed_netdev, bidirectional=bidirectional)
    result['thresholds'] = checks
    if failures:
        return result, '; '.join(failures)
    return result, None

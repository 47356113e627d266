# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""perftest's command line: the programs, the argv the ``perftest`` module builds, and ``extra_args``
read the way perftest's getopt_long reads them, so that options clashing with the module's own are
refused before anything runs.  Private to this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import re

TESTS = ('ib_write_bw', 'ib_read_bw', 'ib_send_bw', 'ib_write_lat', 'ib_read_lat', 'ib_send_lat')
BW_TESTS = ('ib_write_bw', 'ib_read_bw', 'ib_send_bw')
LAT_TESTS = ('ib_write_lat', 'ib_read_lat', 'ib_send_lat')
# seconds the timeout must leave on top of the duration: connection set-up and the report
DURATION_MARGIN = 5


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------

def build_command(params, gid_index, binary=None, timeout_bin=None):
    """The perftest argv, wrapped in ``timeout`` when ``timeout_bin`` is given."""
    cmd = [binary or params['test']]
    if params.get('device'):
        cmd += ['-d', params['device']]
    cmd += ['-i', str(params.get('ib_port') or 1)]
    if gid_index is not None:
        cmd += ['-x', str(gid_index)]
    if params.get('size') is not None:
        cmd += ['-s', str(params['size'])]
    if params.get('duration') is not None:
        cmd += ['-D', str(params['duration'])]
    elif params.get('iterations') is not None:
        cmd += ['-n', str(params['iterations'])]
    if params.get('qps') is not None:
        cmd += ['-q', str(params['qps'])]
    if params.get('tcp_port') is not None:
        cmd += ['-p', str(params['tcp_port'])]
    if params.get('report_gbits'):
        cmd.append('--report_gbits')
    if params.get('rdma_cm'):
        cmd.append('-R')
    if params.get('tclass') is not None:
        # RDMA-CM QPs take the ToS with -T; the others carry it as the GRH traffic class (the IP ToS on RoCE v2).
        cmd += ['-T', str(params['tclass'])] if params.get('rdma_cm') else ['--tclass=%d' % params['tclass']]
    cmd += list(params.get('extra_args') or [])
    if params['role'] == 'client':
        cmd.append(params['server'])
    if timeout_bin:
        cmd = [timeout_bin, '--kill-after=5', str(params['timeout'])] + cmd
    return cmd


# ---------------------------------------------------------------------------------------------
# extra_args: read them the way perftest's getopt_long does, refuse what would clash
# ---------------------------------------------------------------------------------------------

# perftest's short options that take a value (src/perftest_parameters.c, the optstring of parser())
_SHORT_WITH_VALUE = frozenset('wypdimsntuSxcqIoMrQAlDfBTLEJjKkXW')
# long options this module cares about -> (short equivalent or the long name, takes a value)
_LONG_OPTIONS = {
    'ib-dev': ('d', True), 'ib-port': ('i', True), 'gid-index': ('x', True), 'size': ('s', True),
    'duration': ('D', True), 'iters': ('n', True), 'qp': ('q', True), 'port': ('p', True),
    'rdma_cm': ('R', False), 'report_gbits': ('report_gbits', False), 'output': ('output', True),
    'bidirectional': ('b', False), 'run_infinitely': ('run_infinitely', False), 'help': ('h', False),
    'version': ('V', False), 'tclass': ('tclass', True), 'tos': ('T', True),
}
# option -> (module option, perftest's name for it)
_MODULE_OPTIONS = {
    'd': ('device', '-d'), 'i': ('ib_port', '-i'), 'x': ('gid_index', '-x'), 's': ('size', '-s'),
    'D': ('duration', '-D'), 'n': ('iterations', '-n'), 'q': ('qps', '-q'), 'p': ('tcp_port', '-p'),
    'R': ('rdma_cm', '-R'), 'report_gbits': ('report_gbits', '--report_gbits'),
    'T': ('tclass', '-T'), 'tclass': ('tclass', '--tclass'),
}


def _long_option(name):
    """getopt_long accepts any unambiguous abbreviation: ``--gid=3`` is ``--gid-index=3``."""
    if name in _LONG_OPTIONS:
        return _LONG_OPTIONS[name]
    matches = set(_LONG_OPTIONS[n] for n in _LONG_OPTIONS if name and n.startswith(name))
    return matches.pop() if len(matches) == 1 else (None, False)


def perftest_options(args):
    """``[(option, as written, value)]`` for every option in ``args``: option is the short letter
    (``x``) or, for long-only options, the long name; clusters such as ``-bR`` or ``-Fx3`` are split."""
    found = []
    args = list(args or [])
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == '--':
            break
        if arg.startswith('--'):
            name, eq, value = arg[2:].partition('=')
            option, takes_value = _long_option(name)
            written = arg
            if takes_value and not eq and i + 1 < len(args):
                i += 1
                value = args[i]
                written = '%s %s' % (arg, value)
            found.append((option, written, value if (eq or takes_value) else None))
        elif arg.startswith('-') and len(arg) > 1:
            for j, letter in enumerate(arg[1:], 1):
                if letter not in _SHORT_WITH_VALUE:
                    found.append((letter, arg, None))
                    continue
                value, written = arg[j + 1:], arg
                if not value and i + 1 < len(args):
                    i += 1
                    value = args[i]
                    written = '%s %s' % (arg, value)
                found.append((letter, written, value))
                break
        i += 1
    return found


def _passed_by_module(option, params, gid_index):
    """``field=value`` of the module option that already puts ``option`` on the command line, or None."""
    field = _MODULE_OPTIONS[option][0]
    if option == 'd' and not params.get('device') and gid_index == 'auto':
        return 'gid_index=auto (which passes the device it finds)'
    if option == 'x':
        value = gid_index
    elif option == 'i':
        value = params.get('ib_port') or 1
    elif option in ('R', 'report_gbits'):
        value = 'true' if params.get(field) else None
    else:
        value = params.get(field)
    return None if value is None else '%s=%s' % (field, value)


def _module_option_fix(written, option, setting, params):
    """The fix for an extra_args option the module has, written so that applying it passes validation."""
    field = _MODULE_OPTIONS[option][0]
    m = re.match(r'^(\d+)([KM])$', setting) if option == 's' else None
    if m:  # perftest's -s takes 64K / 1M; the module option is in bytes
        setting = str(int(m.group(1)) * (1024 if m.group(2) == 'K' else 1048576))
    fix = 'remove %s from extra_args and set %s: %s' % (written, field, setting)
    cluster = written.split(' ')[0]
    if not cluster.startswith('--') and len(cluster) > 2 and option in cluster[1:]:
        at = cluster.index(option, 1)  # -bR / -Fx3: keep the other options of the cluster
        rest = cluster[1:at] + ('' if option in _SHORT_WITH_VALUE else cluster[at + 1:])
        if rest:
            fix = 'replace %s with -%s in extra_args and set %s: %s' % (written, rest, field, setting)
    if option == 'D' and params.get('iterations') is not None:
        fix += ' instead of iterations'
    if option == 'n' and params.get('duration') is not None:
        fix += ' instead of duration'
    if option == 'D' and setting.isdigit() and params['timeout'] < int(setting) + DURATION_MARGIN:
        fix += ', and timeout: %d or more' % (int(setting) + DURATION_MARGIN)
    return fix


def extra_args_problem(params, gid_index):
    """``(problem, fix)`` for the first option of extra_args that must be refused, else None: one that
    repeats an option the module sets (perftest keeps the last of two ``-x``, so one would be silently
    ignored), one that replaces perftest's report, or one perftest refuses for this test."""
    for option, written, value in perftest_options(params.get('extra_args') or []):
        if option == 'q' and params['test'] in LAT_TESTS:
            return ('%s refuses %s ("Multiple QPs only available on bw tests")' % (params['test'], written),
                    'remove %s from extra_args' % written)
        if option in _MODULE_OPTIONS:
            field, flag = _MODULE_OPTIONS[option]
            setting = 'true' if value is None else (value or '<value>')
            passed = _passed_by_module(option, params, gid_index)
            if passed is None:
                problem = '%s sets %s, which is the module option %s' % (written, flag, field)
            elif value is None:
                problem = '%s repeats %s, which the module already passes for %s' % (written, flag, passed)
            else:
                problem = ('%s repeats %s, which the module already passes for %s; perftest keeps only the last one '
                           'given, so %s would be silently ignored' % (written, flag, passed, field))
            return problem, _module_option_fix(written, option, setting, params)
        if option == 'output':
            return ('%s makes perftest print a single number instead of the report this module reads '
                    '(sizes, iterations, peak and average, latency percentiles)' % written,
                    'remove %s from extra_args: metrics returns bw_average_gbps, bw_average_mib_s, '
                    'msg_rate_mpps and t_avg_us' % written)
        if option in ('run_infinitely', 'h', 'V'):
            why = 'it runs until killed' if option == 'run_infinitely' else 'help/version only'
            return ('%s runs no measurement the module can report (%s)' % (written, why),
                    'remove %s from extra_args and use duration or iterations' % written)
        if option == 'b' and params['test'] in LAT_TESTS:
            return ('%s refuses %s ("Bidirectional is only available in BW test")' % (params['test'], written),
                    'remove %s from extra_args, or run one of %s' % (written, ', '.join(BW_TESTS)))
    return None

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading perftest's text output: the result tables, the preamble, the warnings perftest prints
while succeeding, and the classification of a failure into a class with a hint the user can act on.

Pure text processing shared by the ``perftest`` module and the ``perftest_parse`` filter; the
formats are those of perftest's ``src/perftest_parameters.[ch]`` (Debian 4.5 up to current
upstream, see tests/unit/fixtures/perftest/README.md).  Private to this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import re

MIB = 1048576.0
IPV4_MAPPED_PREFIX = '0000:0000:0000:0000:0000:ffff:'


def gid_to_ipv4(gid):
    """``0000:...:ffff:0aff:0001`` -> ``10.255.0.1``; None for any other GID."""
    if not gid or not gid.lower().startswith(IPV4_MAPPED_PREFIX):
        return None
    tail = gid.lower()[len(IPV4_MAPPED_PREFIX):].split(':')
    if len(tail) != 2 or not all(re.match(r'^[0-9a-f]{4}$', t) for t in tail):
        return None
    raw = tail[0] + tail[1]
    return '.'.join(str(int(raw[i:i + 2], 16)) for i in (0, 2, 4, 6))


# ---------------------------------------------------------------------------------------------
# preamble, title, tables
# ---------------------------------------------------------------------------------------------

# preamble labels -> (result key, converter)
_PREAMBLE_KEYS = {
    'Dual-port': ('dual_port', 'onoff'),
    'Device': ('device', 'str'),
    'Number of qps': ('num_qps', 'int'),
    'Transport type': ('transport_type', 'str'),
    'Connection type': ('connection_type', 'str'),
    'Using SRQ': ('using_srq', 'onoff'),
    'PCIe relax order': ('pcie_relax_order', 'onoff'),
    'ibv_wr* API': ('ibv_wr_api', 'onoff'),
    'Lock-free': ('lock_free', 'onoff'),
    'Using DDP': ('using_ddp', 'onoff'),
    'Using Enhanced Reorder': ('using_enhanced_reorder', 'onoff'),
    'TX depth': ('tx_depth', 'int'),
    'RX depth': ('rx_depth', 'int'),
    'Post List': ('post_list', 'int'),
    'Recv Post List': ('recv_post_list', 'int'),
    'CQ Moderation': ('cq_moderation', 'int'),
    'CQE Poll Batch': ('cqe_poll_batch', 'int'),
    'Mtu': ('mtu_bytes', 'bytes'),
    'Link type': ('link_type', 'str'),
    'CPU freq': ('cpu_freq_mhz', 'mhz'),
    'Buffer size': ('buffer_size_bytes', 'bytes'),
    'GID index': ('gid_index', 'int'),
    'Gid index': ('gid_index', 'int'),
    'GID index2': ('gid_index2', 'int'),
    'Max inline data': ('max_inline_data_bytes', 'bytes'),
    'Outstand reads': ('outstanding_reads', 'int'),
    'rdma_cm QPs': ('rdma_cm_qps', 'onoff'),
    'Data ex. method': ('data_exchange_method', 'str'),
    'TOS': ('tos', 'int'),
}

# ctx_print_test_info(): "<verb> [<atomic type>] [Bidirectional] [Post List] BW|Latency [forwarding] [Multicast] Test"
_TITLE_RE = re.compile(r'^\s*(RDMA_Write|RDMA_Read|Send|Atomic)\s+(?:(?:CMP_AND_SWAP|FETCH_AND_ADD)\s+)?'
                       r'(Bidirectional\s+)?(?:Post List\s+)?(BW|Latency)\s+(?:forwarding\s+)?(?:Multicast\s+)?Test\s*$')
_PAIR_RE = re.compile(r'([A-Za-z][^:\t]*?)\s*:\s*(\S+)')
_ADDR_RE = re.compile(r'^\s*(local|remote) address:\s*LID\s+(\S+)\s+QPN\s+(\S+)\s+PSN\s+(\S+)')
_GID_RE = re.compile(r'^\s*GID:\s*((?:\d{1,3}:){15}\d{1,3})\s*$')
# --report-both (bidirectional runs) prints each direction after the summed table
_SECTION_RE = re.compile(r'^\s*(Local|Remote) results:\s*$')

# result table columns: header regex -> key
_COLUMNS = (
    (r'#bytes', 'bytes'),
    (r'#sl', 'sl'),
    (r'#iterations', 'iterations'),
    (r'BW peak\[(MB|MiB|Gb)/sec\]', 'bw_peak'),
    (r'BW average\[(MB|MiB|Gb)/sec\]', 'bw_average'),
    (r'MsgRate\[Mpps\]', 'msg_rate_mpps'),
    (r'BW Port1\[(MB|MiB|Gb)/sec\]', 'bw_port1'),
    (r'MsgRate Port1\[Mpps\]', 'msg_rate_port1_mpps'),
    (r'BW Port2\[(MB|MiB|Gb)/sec\]', 'bw_port2'),
    (r'MsgRate Port2\[Mpps\]', 'msg_rate_port2_mpps'),
    (r't_min\[usec\]', 't_min_us'),
    (r't_max\[usec\]', 't_max_us'),
    (r't_typical\[usec\]', 't_typical_us'),
    (r't_avg\[usec\]', 't_avg_us'),
    (r't_stdev\[usec\]', 't_stdev_us'),
    (r'99% percentile\[usec\]', 't_p99_us'),
    (r'99\.9% percentile\[usec\]', 't_p99_9_us'),
    (r'tps average', 'tps_average'),
    (r'CPU_Util\[%\]', 'cpu_util_pct'),
)
_BW_KEYS = ('bw_peak', 'bw_average', 'bw_port1', 'bw_port2')
_COLUMN_RE = re.compile('|'.join('(?:%s)' % c[0] for c in _COLUMNS))
_NUMBER_RE = re.compile(r'^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$')

# ---------------------------------------------------------------------------------------------
# warnings: lines perftest (or libibverbs) prints while the run goes on
# ---------------------------------------------------------------------------------------------

_WARNING_RES = (
    re.compile(r'^\s*warning\b', re.I),            # " WARNING: BW peak won't be measured", PCIe RO, CQ moderation
    re.compile(r'^\s*lib\w+:\s*warning\b', re.I),  # "libibverbs: Warning: couldn't load driver ..."
) + tuple(re.compile(p) for p in (
    r'Requested mtu is higher than active mtu',
    r'Invalid MTU - \d+',
    r'Device not recognized to implement inline feature',
    r'Conflicting CPU frequency values detected',
    r'CPU Frequency is not max',
    r'Using sampled CPU speed',
    r"Perftest doesn't supports? CUDA tests with inline messages",
    r'Max msg size in UD is MTU',
    r'Changing CQ moderation to min',
    r'Post List requested - CQ moderation',
    r'Actual inline-size\(\d+\) > requested',
    r'Setting inline size to \d+',
    r'Unable to validat\w* PKey Index',
    r'rate_limit type is forced to SW',
    r'mac_fwd should run in duplex mode only',
    r'Number of outstanding reads is above max',
))
# lines that finish the warning above them ("Requested mtu is higher ..." / "Changing to active mtu - 3")
_CONTINUATION_RE = re.compile(r'^\s*(Changing\b|Please choose mtu|Will run with the port active mtu)')


def _is_warning(line):
    return any(p.search(line) for p in _WARNING_RES)


def collect_warnings(stdout, stderr=''):
    """Every warning line of stderr then stdout, once each, continuation lines joined."""
    found = []
    for text in (stderr or '', stdout or ''):
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            if _is_warning(lines[i]):
                parts = [lines[i].strip()]
                while i + 1 < len(lines) and _CONTINUATION_RE.match(lines[i + 1]):
                    i += 1
                    parts.append(lines[i].strip())
                warning = ' '.join(parts)
                if warning not in found:
                    found.append(warning)
            i += 1
    return found


# ---------------------------------------------------------------------------------------------
# the parser
# ---------------------------------------------------------------------------------------------

def _convert(kind, text):
    if kind == 'int':
        try:
            return int(text)
        except ValueError:
            return text
    if kind in ('bytes', 'mhz'):
        m = re.match(r'^(\d+)\[%s\]$' % ('B' if kind == 'bytes' else 'MHz'), text)
        return int(m.group(1)) if m else text
    if kind == 'onoff':
        return {'ON': True, 'OFF': False}.get(text, text)
    return text


def _gid_from_decimal(text):
    """perftest prints GIDs as 16 decimal bytes; return the sysfs hex form."""
    octets = [int(x) for x in text.split(':')]
    return ':'.join('%02x%02x' % (octets[i], octets[i + 1]) for i in range(0, 16, 2))


def _parse_header(line):
    """Column keys of a result table header, with the bandwidth unit; None if not a header."""
    if '#bytes' not in line:
        return None
    keys = []
    unit = None
    for m in _COLUMN_RE.finditer(line):
        text = m.group(0)
        for pattern, key in _COLUMNS:
            mm = re.match('^%s$' % pattern, text)
            if mm:
                keys.append(key)
                if key in _BW_KEYS:
                    unit = mm.group(1) + '/sec'
                break
    if len(keys) < 3:
        return None
    return keys, unit


def _bw_fields(key, value, unit):
    """A bandwidth in the header's unit -> the same value in Gb/s and MiB/s.

    perftest's MB is 2^20 bytes (its --help says so), the same as MiB; Gb is 10^9 bits.
    """
    if unit == 'Gb/sec':
        gbps = value
        mib = value * 1e9 / 8 / MIB
    else:
        mib = value
        gbps = value * MIB * 8 / 1e9
    return {key + '_gbps': round(gbps, 9), key + '_mib_s': round(mib, 9)}


def _row(columns, tokens, bw_unit):
    row = {}
    for key, token in zip(columns, tokens):
        if key in ('bytes', 'iterations', 'sl'):
            row[key] = int(float(token))
        elif key in _BW_KEYS:
            row.update(_bw_fields(key, float(token), bw_unit))
        else:
            row[key] = float(token)
    return row


class _Reader:
    """One pass over stdout.  The preamble is the block between the title and the next dashed line,
    so lines with a colon elsewhere (CUDA banners, "Connected: <date>", timings) never become keys."""

    def __init__(self):
        self.preamble = {}
        self.connection = {'local': [], 'remote': []}
        self.rows = []
        self.directions = {}
        self.test_name = None
        self.bidirectional = False
        self.columns = None
        self.bw_unit = None
        self.section = None
        self.in_preamble = False
        self.last_addr = None

    def feed(self, line):
        for step in (self._title, self._preamble, self._section, self._address, self._gid, self._table):
            if step(line):
                return

    def _title(self, line):
        m = _TITLE_RE.match(line)
        if not m:
            return False
        self.test_name = ' '.join(line.split())
        self.bidirectional = bool(m.group(2))
        self.in_preamble = True
        return True

    def _preamble(self, line):
        if not self.in_preamble:
            return False
        if line.lstrip().startswith('---'):
            self.in_preamble = False
        elif not _is_warning(line):
            for mm in _PAIR_RE.finditer(line):
                label = mm.group(1).strip()
                key, kind = _PREAMBLE_KEYS.get(label, (re.sub(r'[^a-z0-9]+', '_', label.lower()).strip('_'), 'str'))
                self.preamble[key] = _convert(kind, mm.group(2))
        return True

    def _section(self, line):
        m = _SECTION_RE.match(line)
        if m:
            self.section = m.group(1).lower()
            self.columns = None
        return bool(m)

    def _address(self, line):
        m = _ADDR_RE.match(line)
        if m:
            self.last_addr = {'lid': m.group(2), 'qpn': m.group(3), 'psn': m.group(4)}
            self.connection[m.group(1)].append(self.last_addr)
        return bool(m)

    def _gid(self, line):
        m = _GID_RE.match(line)
        if m and self.last_addr is not None:
            gid = _gid_from_decimal(m.group(1))
            self.last_addr['gid'] = gid
            self.last_addr['gid_ipv4'] = gid_to_ipv4(gid)
        return bool(m)

    def _table(self, line):
        header = _parse_header(line)
        if header:
            self.columns, unit = header
            self.bw_unit = unit or self.bw_unit
            return True
        tokens = line.split()
        if self.columns and tokens and len(tokens) == len(self.columns) and all(_NUMBER_RE.match(t) for t in tokens):
            row = _row(self.columns, tokens, self.bw_unit)
            if self.section:
                self.directions[self.section] = row
            else:
                self.rows.append(row)
            return True
        return False


def _terse_value(stdout, reader):
    """The single number ``--output=bandwidth|message_rate|latency`` prints instead of the report."""
    if reader.test_name or reader.rows:
        return None
    lines = [ln.strip() for ln in (stdout or '').splitlines() if ln.strip() and not _is_warning(ln)]
    lines = [ln for ln in lines if not _CONTINUATION_RE.match(ln)]
    if len(lines) == 1 and _NUMBER_RE.match(lines[0]):
        return float(lines[0])
    return None


def parse_output(stdout, stderr=''):
    """Parses one side's perftest output.

    Returns ``{'test_name', 'bidirectional', 'preamble', 'connection', 'rows', 'metrics', 'directions',
    'bw_unit', 'warnings', 'perftest_warnings', 'terse_value'}``.  ``metrics`` is the last row (the
    largest size with ``-a``) or ``{}`` when the output has no table.  For a bidirectional run (``-b``)
    perftest reports the sum of both directions; with ``--report-both`` it adds one table per
    direction, returned as ``directions.local`` and ``directions.remote``.  ``perftest_warnings`` is
    ``warnings`` under the name the module returns it.
    """
    reader = _Reader()
    for raw in (stdout or '').splitlines():
        line = raw.rstrip()
        if line.strip():
            reader.feed(line)
    warnings = collect_warnings(stdout, stderr)
    return {
        'test_name': reader.test_name,
        'bidirectional': reader.bidirectional,
        'preamble': reader.preamble,
        'connection': reader.connection,
        'rows': reader.rows,
        'metrics': dict(reader.rows[-1]) if reader.rows else {},
        'directions': reader.directions,
        'bw_unit': reader.bw_unit,
        'warnings': warnings,
        'perftest_warnings': list(warnings),
        'terse_value': _terse_value(stdout, reader),
    }


# ---------------------------------------------------------------------------------------------
# failures: perftest's own message -> an error class and a hint the user can act on
# ---------------------------------------------------------------------------------------------

_GID_HINT = ('use gid_index: auto with netdev set to the interface that carries the route between the nodes '
             '(e.g. the VLAN gateway) on both sides')
_LOSSLESS_HINT = ('check link flaps (ip -s link, ethtool -S <pf>: link_down_events, rx_discards), the MTU end to end '
                  '(netdev MTU on both hosts and every switch port at least the RoCE MTU plus headers) and the '
                  'lossless configuration of RoCE: PFC on the RoCE priority and ECN on the NICs and switch ports')

# enum ibv_wc_status (rdma-core verbs.h): number -> (name, what it means, what to do)
_WC_STATUS = {
    1: ('IBV_WC_LOC_LEN_ERR', 'local length error',
        'a message is longer than the posted buffer or the path MTU allows (UD: size must not exceed the MTU); run '
        'both sides with the same size'),
    2: ('IBV_WC_LOC_QP_OP_ERR', 'local QP operation error',
        'the work request exceeds what the QP accepts (inline size, SGEs): drop the tuning options from extra_args'),
    4: ('IBV_WC_LOC_PROT_ERR', 'local protection error',
        'the buffer is not registered for this access: with GPU memory check GPUDirect RDMA (nvidia-peermem or '
        'dma-buf) and the memory options in extra_args'),
    5: ('IBV_WC_WR_FLUSH_ERR', 'work request flushed',
        'the QP had already failed, so this is a consequence: look for the first error on this side and on the peer '
        '(the peer process may have exited or been killed)'),
    8: ('IBV_WC_LOC_ACCESS_ERR', 'local access error',
        'the local memory registration does not allow this operation: check the memory options in extra_args'),
    9: ('IBV_WC_REM_INV_REQ_ERR', 'remote invalid request',
        'the peer refused the request: run the same test with the same size and options on both sides (e.g. -a on both)'),
    10: ('IBV_WC_REM_ACCESS_ERR', 'remote access error',
         'the peer refused access to its memory: run the same program on both sides (ib_write_bw against '
         'ib_write_bw, not ib_read_bw) with the same size'),
    11: ('IBV_WC_REM_OP_ERR', 'remote operation error',
         'the peer could not complete the operation: run the same test and options on both sides and check that '
         'both ends use the same MTU'),
    12: ('IBV_WC_RETRY_EXC_ERR', 'transport retry counter exceeded',
         'the peer stopped acknowledging: packets are lost on the path or the peer went away. Check that the peer '
         'is still running and that both sides use GIDs of the same subnet/VLAN (a wrong GID index or an MTU '
         'mismatch ends like this); ' + _LOSSLESS_HINT),
    13: ('IBV_WC_RNR_RETRY_EXC_ERR', 'receiver-not-ready retry counter exceeded',
         'the peer had no receive buffer posted in time (send tests): run both sides with the same test, size and '
         'iterations/duration, check the peer did not finish or die first, and raise its receive queue '
         '(extra_args: ["--rx-depth=1024"])'),
    19: ('IBV_WC_FATAL_ERR', 'fatal error', 'the device reported a fatal error: check dmesg for the NIC driver'),
    20: ('IBV_WC_RESP_TIMEOUT_ERR', 'response timeout', 'the peer did not respond: ' + _LOSSLESS_HINT),
}
_WC_NAMES = ('IBV_WC_SUCCESS', 'IBV_WC_LOC_LEN_ERR', 'IBV_WC_LOC_QP_OP_ERR', 'IBV_WC_LOC_EEC_OP_ERR',
             'IBV_WC_LOC_PROT_ERR', 'IBV_WC_WR_FLUSH_ERR', 'IBV_WC_MW_BIND_ERR', 'IBV_WC_BAD_RESP_ERR',
             'IBV_WC_LOC_ACCESS_ERR', 'IBV_WC_REM_INV_REQ_ERR', 'IBV_WC_REM_ACCESS_ERR', 'IBV_WC_REM_OP_ERR',
             'IBV_WC_RETRY_EXC_ERR', 'IBV_WC_RNR_RETRY_EXC_ERR', 'IBV_WC_LOC_RDD_VIOL_ERR',
             'IBV_WC_REM_INV_RD_REQ_ERR', 'IBV_WC_REM_ABORT_ERR', 'IBV_WC_INV_EECN_ERR', 'IBV_WC_INV_EEC_STATE_ERR',
             'IBV_WC_FATAL_ERR', 'IBV_WC_RESP_TIMEOUT_ERR', 'IBV_WC_GENERAL_ERR')

# enum rdma_cm_event_type (librdmacm rdma_cma.h); older perftest prints only the number
_CM_EVENTS = ('ADDR_RESOLVED', 'ADDR_ERROR', 'ROUTE_RESOLVED', 'ROUTE_ERROR', 'CONNECT_REQUEST', 'CONNECT_RESPONSE',
              'CONNECT_ERROR', 'UNREACHABLE', 'REJECTED', 'ESTABLISHED', 'DISCONNECTED', 'DEVICE_REMOVAL',
              'MULTICAST_JOIN', 'MULTICAST_ERROR', 'ADDR_CHANGE', 'TIMEWAIT_EXIT')
_CM_HINTS = {
    'REJECTED': 'the peer answered with a reject: no perftest server with rdma_cm listens on that address and port. '
                'Start the server first with rdma_cm: true and the same tcp_port, test and qps (a server started '
                'without rdma_cm rejects too)',
    'UNREACHABLE': "the peer's connection manager did not answer: server is not the peer's address on the RDMA "
                   'network, the peer is down, or the CM packets (RoCE v2: UDP port 4791) are dropped on the path by a '
                   'firewall or switch ACL or lost (PFC/ECN); check that ping over that interface works',
    'ADDR_ERROR': 'rdma_cm could not resolve the address to an RDMA device: the route to server leaves through an '
                  'interface without an RDMA device, or ARP gets no answer. Use the peer address on the RDMA network '
                  '(check ip route get <server> and ping) and make sure that interface has a RoCE GID',
    'ROUTE_ERROR': 'rdma_cm resolved the address but no path to it: on RoCE the interface of the route has no usable '
                   'GID (assign its IPv4 address, check the GID table in rdma_facts); on InfiniBand, check the subnet '
                   'manager',
    'CONNECT_ERROR': 'the connection failed during establishment: see the error of the other side of this test',
}

_HINTS = {
    'qp_rtr': 'the QP could not reach the peer through the chosen GID: both sides must use the RoCE v2 GID of the '
              'interface that carries the route between them (same VLAN/subnet). ' + _GID_HINT[0].upper() + _GID_HINT[1:],
    'gid_type_mismatch': 'the two sides use GIDs of different types or IP versions (e.g. IPv6 link-local on one side, '
                         'IPv4-mapped on the other, or an empty GID slot). ' + _GID_HINT[0].upper() + _GID_HINT[1:],
    'no_device': 'the RDMA device does not exist on this host: check device against "rdma link show" '
                 '(ansible_facts.rdma.devices) and that the RDMA driver is loaded',
    'port_query': 'the RDMA device has no such port: check ib_port (usually 1)',
    'port_not_active': 'the RDMA port is not ACTIVE (link down): check the cable and the switch port, that the netdev '
                       'is up (ip link), "rdma link show" and, on InfiniBand, that a subnet manager runs',
    'qp_create': 'the device refused the queue pair: the requested queue sizes exceed its limits. Lower qps or the '
                 'depth/inline options in extra_args (-t, -I, --rx-depth), raise the locked-memory limit (ulimit -l, '
                 'LimitMEMLOCK, container memlock) and, on a VF, check its QP limit',
    'device_context': 'perftest could not open or set up the RDMA device: check that "ibv_devinfo -d <device>" works, '
                      'that /dev/infiniband/uverbs* exists and is accessible (in a pod: the RDMA shared device plugin '
                      'resource), and that ib_port is a port of that device',
    'tcp_listen': 'the TCP port is already in use (an earlier server still running?): stop it or use another tcp_port',
    'tcp_connect': 'nothing listens on the server address and TCP port: start the server side first (async) and make '
                   'sure server/tcp_port are right and the TCP port is not blocked by a firewall',
    'rdma_cm_client': 'rdma_cm could not connect: the server is not running with rdma_cm, or the server address is '
                      'not on an RDMA-capable interface',
    'peer_gone': 'the peer went away during the exchange: see the failure reported by the other side of this test',
    'clock_calibration': 'perftest could not calibrate the CPU clock it times the test with (its samples of the cycle '
                         'counter against the system clock did not line up, r^2 below 0.9), so it reported nothing; '
                         'the fabric was not judged. The node was too busy, or its clock is unsteady (a VM whose vCPUs '
                         'wait for the host, CPU frequency changes). Run the test again on a quieter node; on a VM, '
                         'give it dedicated (pinned) vCPUs',
}

# (class, pattern): the first class whose pattern matches a line of stderr or stdout wins, so the
# root cause is listed before the follow-up messages perftest prints after it.
_CLASSES = (
    ('completion_error', re.compile(r'Failed status (\d+): wr_id|CQ error status=(\d+)|Bad wc status (?:-- )?(\d+)')),
    ('rdma_cm_event', re.compile(r'Event: RDMA_CM_EVENT_([A-Z_]+); error: (-?\d+)|[Uu]nexpected CM event(?: bl blka)? (\d+)'
                                 r'|Received \d+ times (ADDR_ERROR)|(?:rdma_resolve_route failed|Failed to resolve RDMA CM route)')),
    ('qp_rtr', re.compile(r'Failed to modify QP \S+ to RTR')),
    ('gid_type_mismatch', re.compile(r'Found Incompatibility issue with GID types')),
    ('no_device', re.compile(r'Unable to find the Infiniband/RoCE device')),
    ('port_query', re.compile(r'Unable to query port \S+ attributes')),
    ('port_not_active', re.compile(r'Port number \d+ state is \w+')),
    ('qp_create', re.compile(r"Couldn't create (?:rdma (?:new|old) )?QP\b|Failed to create QP|Unable to create QP"
                             r'|Requested QP size might be too big')),
    ('device_context', re.compile(r"Couldn't get (?:device )?context(?: for the device)?")),
    ('tcp_listen', re.compile(r"Couldn't listen to port \d+")),
    ('tcp_connect', re.compile(r"Couldn't connect to \S+")),
    ('rdma_cm_client', re.compile(r'Unable to perform rdma_client function')),
    ('peer_gone', re.compile(r"Couldn't read remote address")),
    # The side that failed its calibration; the other side then reports peer_gone.
    ('clock_calibration', re.compile(r'Correlation coefficient r\^2: \S+ < 0\.9|Can.t produce a report')),
)


def _completion_error(lines, index, match):
    status = int(next(g for g in match.groups() if g is not None))
    name = _WC_NAMES[status] if 0 <= status < len(_WC_NAMES) else 'IBV_WC_%d' % status
    meaning, fix = _WC_STATUS.get(status, (name, 'completion error', 'see ibv_wc_status_str(%d)' % status))[1:]
    side = next((ln.strip() for ln in reversed(lines[max(0, index - 2):index]) if 'Completion with error' in ln), None)
    message = '%s: %s' % (side, lines[index].strip()) if side else lines[index].strip()
    hint = 'status %d is %s (%s): %s' % (status, name, meaning, fix)
    return {'error_class': 'completion_error', 'message': message, 'hint': hint,
            'detail': {'wc_status': status, 'wc_status_name': name}}


def _cm_event(lines, index, match):
    name, error, number, addr_error = match.groups()
    if number is not None:
        name = _CM_EVENTS[int(number)] if int(number) < len(_CM_EVENTS) else 'EVENT_%s' % number
    name = name or addr_error or 'ROUTE_ERROR'
    hint = _CM_HINTS.get(name, 'rdma_cm reported RDMA_CM_EVENT_%s while connecting: see the other side of this test' % name)
    detail = {'cm_event': 'RDMA_CM_EVENT_' + name}
    if error is not None:
        detail['cm_status'] = int(error)
    return {'error_class': 'rdma_cm_' + name.lower() if name in _CM_HINTS else 'rdma_cm_event',
            'message': lines[index].strip(), 'hint': hint, 'detail': detail}


def classify(stdout, stderr=''):
    """The failure perftest reported: ``{error_class, message, hint, detail}``, or None when no known message."""
    lines = (stderr or '').splitlines() + (stdout or '').splitlines()
    for error_class, pattern in _CLASSES:
        for index, line in enumerate(lines):
            m = pattern.search(line)
            if not m:
                continue
            if error_class == 'completion_error':
                return _completion_error(lines, index, m)
            if error_class == 'rdma_cm_event':
                return _cm_event(lines, index, m)
            return {'error_class': error_class, 'message': line.strip(), 'hint': _HINTS[error_class], 'detail': {}}
    return None


def classify_error(stdout, stderr):
    """``(perftest's own message, hint)`` for a failed run, or ``(None, None)``."""
    found = classify(stdout, stderr)
    return (found['message'], found['hint']) if found else (None, None)

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An RDMA port's counters around a measurement: what a bandwidth figure alone cannot tell (issue 19).

A pair can reach its bandwidth on a lossy fabric by luck, or while the NIC retransmits; the port's counters show it.
The kernel exposes two sets per port: ``counters/`` (the IB PMA counters; ConnectX) and ``hw_counters/`` (the driver's:
mlx5's ``out_of_sequence``, ``np_cnp_sent``, ...; soft-RoCE's ``sent_pkts``, ``out_of_seq_request``, ...). Both are read
before and after, and the deltas are classified:

- ``problems``: counters that only move when packets are lost, reordered or retransmitted (``FLAGGED``); a pair that
  passes its thresholds with one of them moving is flagged;
- ``congestion``: ECN marks and CNPs (mlx5 only), the evidence that DCQCN acted, reported, not judged;
- ``pause``: the pause frames of the port's netdev (the PF; mlx5's ``rx_prio3_pause``, ``tx_prio3_pause``...), read with
  ``_common.pause_stats`` when a reader is given (a live node): PFC at work on the lossless priority, reported, not judged.

The deltas are the port's, not the pair's: in a round a node is the client of one pair and the server of another, on
the same port, so both pairs' traffic is in them. The counter names are the kernels'; which are real-NIC-only is in
docs/qos.md."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import Sysfs

SETS = ('hw_counters', 'counters')
# Counters that move only on loss, reordering or retransmission. mlx5 (Documentation/.../mlx5/counters.rst): out_of_sequence,
# packet_seq_err, local_ack_timeout_err, implied_nak_seq_err, duplicate_request, rnr_nak_retry_err,
# req_transport_retries_exceeded, roce_slow_restart...; rxe (drivers/infiniband/sw/rxe/rxe_hw_counters.c): out_of_seq_request,
# duplicate_request, rcvd_seq_err, retry_exceeded_err, retry_rnr_exceeded_err, completer_retry_err, send_err.
FLAGGED = frozenset((
    'out_of_sequence', 'packet_seq_err', 'local_ack_timeout_err', 'implied_nak_seq_err', 'duplicate_request',
    'rnr_nak_retry_err', 'req_transport_retries_exceeded', 'roce_slow_restart', 'req_cqe_error', 'resp_cqe_error',
    'rx_icrc_encapsulated', 'out_of_seq_request', 'rcvd_seq_err', 'retry_exceeded_err', 'retry_rnr_exceeded_err',
    'completer_retry_err', 'send_err', 'link_downed', 'port_rcv_errors', 'port_xmit_discards', 'symbol_error',
))
CONGESTION = frozenset(('np_ecn_marked_roce_packets', 'np_cnp_sent', 'rp_cnp_handled', 'rp_cnp_ignored'))
PAUSE_PREFIX = 'pause.'


def port_counters(fs, dev, port):
    """``{'hw_counters': {name: int}, 'counters': {name: int}}`` of a port (``fs``: a ``_common.core.Sysfs``): the driver's
    counters (mlx5's ``out_of_sequence``, ``np_cnp_sent``...; rxe's ``retry_exceeded_err``...) and the IB PMA ones
    (``port_xmit_data``...). A counter that refuses reads (EINVAL on some firmware) or is not an integer is left out."""
    result = {}
    for which in SETS:
        rel = 'class/infiniband/%s/ports/%s/%s' % (dev, port, which)
        values = {}
        for name in fs.listdir(rel):
            value = fs.read_int('%s/%s' % (rel, name))
            if value is not None:
                values[name] = value
        result[which] = values
    return result


def read(sysfs_root, device, port, pause_reader=None):
    """``{name: value}`` of the port's counters (both sets), or None when the device has no such port (nothing to compare).
    With ``pause_reader(netdev) -> {counters, error}`` (``_common.pause_stats.read``) also the pause counters of the port's netdev
    (GID 0's, the PF's), as ``pause.<name>``."""
    fs = Sysfs(sysfs_root)
    base = 'class/infiniband/%s/ports/%s' % (device, port)
    if not device or not fs.exists(base):
        return None
    values = {}
    for which in SETS:
        values.update(port_counters(fs, device, port)[which])
    netdev = fs.read(base + '/gid_attrs/ndevs/0') if pause_reader else None
    if netdev:
        values.update((PAUSE_PREFIX + name, value) for name, value in (pause_reader(netdev).get('counters') or {}).items())
    return values


def delta(before, after):
    """What moved, and how it reads: ``{counters, problems, congestion}``; None without both readings."""
    if before is None or after is None:
        return None
    moved = {k: after[k] - before[k] for k in sorted(set(before) & set(after)) if after[k] != before[k]}
    return {
        'counters': moved,
        'problems': {k: v for k, v in moved.items() if k in FLAGGED and v > 0},
        'congestion': {k: v for k, v in moved.items() if k in CONGESTION},
        'pause': {k[len(PAUSE_PREFIX):]: v for k, v in moved.items() if k.startswith(PAUSE_PREFIX)},
    }


def flag_text(host, side, deltas):
    """One line for a pair that passed while its port's problem counters moved, or None."""
    if not deltas or not deltas['problems']:
        return None
    return '%s: %s passed, but the port counted %s during the test (loss, reordering or retransmission on the path)' % (
        host, side, ', '.join('%s +%d' % kv for kv in sorted(deltas['problems'].items())))

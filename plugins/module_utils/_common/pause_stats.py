# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pause (PFC and link pause) counters of a PF, read the way ``ethtool -S`` reads them but without running it: the
``SIOCETHTOOL`` ioctl's ``ETHTOOL_GSSET_INFO``/``ETHTOOL_GSTRINGS``/``ETHTOOL_GSTATS`` requests (binary structs, through
pyroute2's ``IoctlEthtool``; nothing is parsed from command output).

The per-priority counters exist only in the driver's own statistics (mlx5: ``rx_prio3_pause``, ``tx_prio3_pause``,
``rx_prio3_pause_duration``, ``rx_prio3_pause_transition``; the link pause ``rx_pause_ctrl_phy``/``tx_pause_ctrl_phy``):
the ethtool netlink STATS request carries the IEEE 802.3 groups only, and its PAUSE_GET statistics are link pause, not per
priority. So this is the only way to them. Which names a driver has is its own; virtio, rxe and netdevsim have none.

Private to this collection."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import contextlib
import re

try:
    from pyroute2.ethtool.ioctl import IoctlEthtool
    HAS_IOCTL = True
except ImportError:
    IoctlEthtool = None
    HAS_IOCTL = False

# mlx5 (Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst): rx/tx_prio<N>_pause[_duration|
# _transition], rx/tx_pause_ctrl_phy; other drivers name theirs with pause, pfc, xon or xoff.
PAUSE_RE = re.compile(r'pause|pfc|xon|xoff', re.IGNORECASE)


def select(pairs):
    """``{name: int}`` of the pause counters among ``(name, value)`` statistics."""
    return {name: int(value) for name, value in pairs if PAUSE_RE.search(name)}


def read(ifname, ioctl_class=None):
    """``{counters, error}`` of one netdev: ``counters`` the pause counters (``{}`` when the driver has none), or V(None)
    with ``error`` saying why they could not be read (no pyroute2, a driver without statistics, no such device)."""
    cls = ioctl_class or IoctlEthtool
    if cls is None:
        return {'counters': None, 'error': 'pyroute2 (pyroute2.ethtool.ioctl) is not importable'}
    try:
        eth = cls(ifname)
    except Exception as exc:  # pylint: disable=broad-except  # socket creation: a fact, never a failure
        return {'counters': None, 'error': '%s' % exc}
    try:
        return {'counters': select(eth.get_statistics()), 'error': None}
    except Exception as exc:  # pylint: disable=broad-except  # EOPNOTSUPP (no statistics), ENODEV, a set that changed size
        text = ('%s' % exc).replace('\x00', '').strip()
        if type(exc).__name__ == 'NotSupportedError':
            text = 'the driver has no ethtool statistics (EOPNOTSUPP)'
        return {'counters': None, 'error': text or type(exc).__name__}
    finally:
        with contextlib.suppress(Exception):
            eth.close()


def gather(netdevs, ioctl_class=None):
    """``{netdev: {counters, error}}`` for each netdev name."""
    return {name: read(name, ioctl_class) for name in sorted(set(netdevs))}

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roce_qos module's body: the kernel interfaces (rtnetlink DCB, ethtool netlink) behind the two small backends
that ``_host.roce_qos`` takes, so its logic is tested against fakes and the lab's kernel alike."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible_collections.gpufabric.roce.plugins.module_utils._host import dcbnl as _dcbnl
from ansible_collections.gpufabric.roce.plugins.module_utils._host import ethtool_pause as _ethtool_pause
from ansible_collections.gpufabric.roce.plugins.module_utils._host.netlink import run_netlink_module
from ansible_collections.gpufabric.roce.plugins.module_utils._host.roce_qos import Unsupported, run


class NetlinkDcb:
    """DCB of a PF over one rtnetlink socket (``_dcbnl``), its "no DCB" answers as Unsupported."""

    def __init__(self, sock):
        self.sock = sock

    def _call(self, fn, *args):
        try:
            return getattr(_dcbnl, fn)(self.sock, *args)
        except _dcbnl.DcbUnsupported as exc:
            raise Unsupported('%s has no DCB support (%s): DCB needs a DCB-capable NIC such as a ConnectX; soft-RoCE (rxe) and '
                              'virtual NICs have none' % (args[0], exc)) from None
        except _dcbnl.DcbError as exc:
            # Any other refusal (ENODEV, EPERM, a driver's error) is an error of the node, reported as an OSError.
            raise OSError(exc.errno or 0, 'DCB: %s' % exc) from None

    def read(self, iface):
        return self._call('read_dcb', iface)

    def set_pfc(self, iface, priorities):
        return self._call('set_pfc', iface, priorities)

    def set_dscp_prio(self, iface, mapping):
        return self._call('set_dscp_prio', iface, mapping)

    def del_dscp_prio(self, iface, mapping):
        return self._call('del_dscp_prio', iface, mapping)


class EthtoolPause:
    """Link pause over ethtool netlink (``_ethtool_pause``), its "not supported" answers as Unsupported."""

    def _call(self, fn, *args):
        try:
            return getattr(_ethtool_pause, fn)(*args)
        except _ethtool_pause.PauseUnsupported as exc:
            raise Unsupported('%s does not support link pause settings (%s)' % (args[0], exc)) from None
        except _ethtool_pause.PauseError as exc:
            raise OSError(exc.errno or 0, 'link pause: %s' % exc) from None

    def read(self, iface):
        return self._call('read_pause', iface)

    def set(self, iface, on):
        return self._call('set_pause', iface, on, on)


def run_module(module):
    """main() of the roce_qos module: one rtnetlink session for every rail, the collection's error format."""
    run_netlink_module(module, lambda host, params, _ipr, check_mode, **kw: run(host, params, check_mode, **kw),
                       backends=lambda ipr: {'dcb': NetlinkDcb(ipr), 'pause': EthtoolPause()})

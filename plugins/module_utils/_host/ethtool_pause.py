# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Link pause (IEEE 802.3x global flow control) over ethtool netlink, as ``ethtool -A`` does it.

Message layout from include/uapi/linux/ethtool_netlink.h and net/ethtool/pause.c (Linux 6.1): generic netlink
family "ethtool", request ETHTOOL_MSG_PAUSE_GET/SET, reply ETHTOOL_MSG_PAUSE_GET_REPLY (the request and reply
enums are numbered separately), ETHTOOL_A_PAUSE_HEADER nesting the device name, u8 AUTONEG/RX/TX.

Semantics worth knowing before calling set_pause:

* PAUSE_SET only touches the attributes it carries (ethnl_update_bool32 on the driver's current values) and
  skips the driver when nothing changes; it has no reply message, only the netlink ACK.
* mlx5 never reports autoneg and refuses autoneg on with EINVAL (mlx5e_ethtool_set_pauseparam): leave it None.
  A function that is not the port's vport group manager (a VF) answers EOPNOTSUPP.
* A device without get_pauseparam/set_pauseparam (lo, virtio) answers EOPNOTSUPP: PauseUnsupported.

Private to this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import struct

try:
    from pyroute2.netlink import genlmsg
    from pyroute2.netlink.exceptions import NetlinkError
    from pyroute2.netlink.generic import GenericNetlinkSocket
    from pyroute2.netlink.generic.ethtool import ethtoolheader
    try:
        from pyroute2.netlink.marshal import Marshal
    except ImportError:  # pyroute2 < 0.9 (Debian 12's python3-pyroute2 is 0.7.2)
        from pyroute2.netlink.nlsocket import Marshal
    HAS_PYROUTE2 = True
except ImportError:
    HAS_PYROUTE2 = False

NLM_F_REQUEST = 0x1
NLM_F_ACK = 0x4
NLMSG_ERROR = 0x2
NLMSG_MIN_TYPE = 0x10
ETHTOOL_GENL_NAME = 'ethtool'
ETHTOOL_GENL_VERSION = 1
ETHTOOL_MSG_PAUSE_GET = 21
ETHTOOL_MSG_PAUSE_SET = 22
ETHTOOL_MSG_PAUSE_GET_REPLY = 22
ETHTOOL_A_PAUSE_HEADER = 1
ETHTOOL_A_PAUSE_AUTONEG = 2
ETHTOOL_A_PAUSE_RX = 3
ETHTOOL_A_PAUSE_TX = 4
ETHTOOL_A_HEADER_DEV_NAME = 2


class PauseError(Exception):
    """The kernel or the driver refused a pause request; ``errno`` is the positive error code."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.errno = code


class PauseUnsupported(PauseError):
    """Link pause cannot be read or set on this device (or this kernel has no ethtool netlink)."""


if HAS_PYROUTE2:
    class ethtool_pause_msg(genlmsg):
        nla_map = (('ETHTOOL_A_PAUSE_UNSPEC', 'none'),
                   ('ETHTOOL_A_PAUSE_HEADER', 'ethtoolheader'),
                   ('ETHTOOL_A_PAUSE_AUTONEG', 'uint8'),
                   ('ETHTOOL_A_PAUSE_RX', 'uint8'),
                   ('ETHTOOL_A_PAUSE_TX', 'uint8'),
                   ('ETHTOOL_A_PAUSE_STATS', 'none'))
        # pyroute2's own header nla (DEV_INDEX, DEV_NAME, FLAGS), flagged NLA_F_NESTED as strict policies demand.
        ethtoolheader = ethtoolheader


def _request(cmd, ifname, values=()):
    msg = ethtool_pause_msg()
    msg['cmd'] = cmd
    msg['version'] = ETHTOOL_GENL_VERSION
    msg['attrs'] = [('ETHTOOL_A_PAUSE_HEADER', {'attrs': [('ETHTOOL_A_HEADER_DEV_NAME', ifname)]})]
    for name, value in values:
        if value is not None:
            msg['attrs'].append((name, int(bool(value))))
    return msg


def _set_request(ifname, rx, tx, autoneg):
    # None leaves the attribute out, and the kernel keeps the driver's current value.
    return _request(ETHTOOL_MSG_PAUSE_SET, ifname,
                    (('ETHTOOL_A_PAUSE_AUTONEG', autoneg), ('ETHTOOL_A_PAUSE_RX', rx), ('ETHTOOL_A_PAUSE_TX', tx)))


# PAUSE_GET is answered by a reply message; PAUSE_SET only by the ACK, so it must ask for one.
GET_FLAGS = NLM_F_REQUEST
SET_FLAGS = NLM_F_REQUEST | NLM_F_ACK


def _encode(msg, family_id, flags, seq):
    msg['header'] = {'type': family_id, 'flags': flags, 'sequence_number': seq, 'pid': 0}
    msg.encode()
    return bytes(msg.data)


def encode_pause_get(ifname, seq, family_id):
    """The PAUSE_GET request for ``ifname`` as bytes; ``family_id`` is the kernel's id of the "ethtool" family."""
    return _encode(_request(ETHTOOL_MSG_PAUSE_GET, ifname), family_id, GET_FLAGS, seq)


def encode_pause_set(ifname, rx, tx, seq, family_id, *, autoneg=None):
    """The PAUSE_SET request as bytes; a None value is left out (unchanged)."""
    return _encode(_set_request(ifname, rx, tx, autoneg), family_id, SET_FLAGS, seq)


def _kernel_message(exc):
    # pyroute2 puts the extack text (NLMSGERR_ATTR_MSG) second, or strerror when the kernel sent none.
    message = exc.args[1] if len(exc.args) > 1 else None
    return None if message == os.strerror(exc.code) else message


def _error(code, ifname, message=None):
    text = os.strerror(code) + (': %s' % message if message else '')
    if code == errno.EOPNOTSUPP:
        return PauseUnsupported('%s: link pause is not supported (%s)' % (ifname, text), code)
    return PauseError('%s: ethtool pause request refused (%s)' % (ifname, text), code)


def _check(messages, ifname):
    for msg in messages:
        error = msg['header'].get('error')
        if error is not None:
            if getattr(error, 'code', None) is None:
                raise PauseError('%s: undecodable ethtool answer: %s' % (ifname, error))
            raise _error(error.code, ifname, _kernel_message(error))
    return messages


def _state(messages, ifname):
    for msg in _check(messages, ifname):
        if msg.get('cmd') == ETHTOOL_MSG_PAUSE_GET_REPLY and msg.get_attr('ETHTOOL_A_PAUSE_RX') is not None:
            return {'autoneg': bool(msg.get_attr('ETHTOOL_A_PAUSE_AUTONEG')), 'rx': bool(msg.get_attr('ETHTOOL_A_PAUSE_RX')),
                    'tx': bool(msg.get_attr('ETHTOOL_A_PAUSE_TX'))}
    raise PauseError('%s: no PAUSE_GET_REPLY in the answer' % ifname)


def _parse(data):
    marshal = Marshal()
    # The family id is the kernel's choice; every non-control message here is an ethtool one.
    marshal.default_message_class = ethtool_pause_msg
    # pyroute2 < 0.9 has no default class and looks classes up by type: map each non-control type in the buffer.
    offset = 0
    while offset <= len(data) - 16:
        length, msg_type = struct.unpack_from('=IH', data, offset)
        if not length:
            break
        if msg_type >= NLMSG_MIN_TYPE:
            marshal.msg_map[msg_type] = ethtool_pause_msg
        offset += (length + 3) & ~3
    return list(marshal.parse(data))


def decode_pause(reply_bytes, ifname=None):
    """The kernel's answer to PAUSE_GET (bytes) as {'autoneg': bool, 'rx': bool, 'tx': bool}."""
    return _state(_parse(reply_bytes), ifname)


def _acked(messages, ifname):
    if not any(msg['header']['type'] == NLMSG_ERROR for msg in _check(messages, ifname)):
        raise PauseError('%s: no ACK for PAUSE_SET in the answer' % ifname)


def decode_pause_ack(reply_bytes, ifname=None):
    """Raise PauseError/PauseUnsupported unless the kernel's answer to PAUSE_SET (bytes) is a plain ACK."""
    _acked(_parse(reply_bytes), ifname)


def _talk(ifname, msg, flags):
    with GenericNetlinkSocket(ext_ack=True) as sock:
        try:
            sock.bind(ETHTOOL_GENL_NAME, ethtool_pause_msg)
        except NetlinkError as exc:
            if exc.code == errno.ENOENT:
                raise PauseUnsupported('%s: this kernel has no ethtool netlink family' % ifname, exc.code) from exc
            raise _error(exc.code, ifname) from exc
        try:
            return list(sock.nlm_request(msg, msg_type=sock.prid, msg_flags=flags))
        except NetlinkError as exc:
            raise _error(exc.code, ifname, _kernel_message(exc)) from exc


def read_pause(ifname):
    """The link pause settings of ``ifname``: {'autoneg': bool, 'rx': bool, 'tx': bool}."""
    return _state(_talk(ifname, _request(ETHTOOL_MSG_PAUSE_GET, ifname), GET_FLAGS), ifname)


def set_pause(ifname, rx, tx, autoneg=None):
    """Set link pause of ``ifname``; a None value is left unchanged (keep autoneg None for mlx5)."""
    _acked(_talk(ifname, _set_request(ifname, rx, tx, autoneg), SET_FLAGS), ifname)

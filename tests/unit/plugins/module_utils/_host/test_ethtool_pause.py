# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_ethtool_pause against the kernel's wire format, written out here with struct from
include/uapi/linux/ethtool_netlink.h and genetlink.h."""

import errno
import os
import socket
import struct
import subprocess
import sys

import pytest

pyroute2 = pytest.importorskip('pyroute2')

from pyroute2.netlink.generic import GenericNetlinkSocket  # noqa: E402

from ansible_collections.gpufabric.roce.plugins.module_utils._host import ethtool_pause as ep  # noqa: E402

IFNAME = 'enp157s0np0'
FAMILY = 0x1B  # the kernel picks the id at boot; any value above the control family's 0x10 will do
NLA_F_NESTED = 0x8000
NETLINK_GENERIC = 16  # the socket module has no name for it


def nla(nla_type, payload, nested=False):
    return struct.pack('=HH', 4 + len(payload), nla_type | (NLA_F_NESTED if nested else 0)) + payload + b'\0' * (-len(payload) % 4)


def nlmsg(msg_type, seq, body, flags=1, pid=0):
    return struct.pack('=IHHII', 16 + len(body), msg_type, flags, seq, pid) + body


def genl(cmd):
    return struct.pack('=BBH', cmd, 1, 0)  # struct genlmsghdr: cmd, version (ETHTOOL_GENL_VERSION), reserved


def header(ifname=IFNAME, ifindex=None):
    attrs = (nla(1, struct.pack('=I', ifindex)) if ifindex is not None else b'') + nla(2, ifname.encode() + b'\0')
    return nla(1, attrs, nested=True)  # ETHTOOL_A_PAUSE_HEADER { DEV_INDEX, DEV_NAME }


def u8(attr, value):
    return nla(attr, struct.pack('=B', value))


def kernel_reply(autoneg, rx, tx, seq=4):
    # pause_fill_reply() after ethnl_fill_reply_header(): header nest (flagged by nla_nest_start), then u8s.
    return nlmsg(FAMILY, seq, genl(22) + header(ifindex=7) + u8(2, autoneg) + u8(3, rx) + u8(4, tx), flags=0)


def nlmsg_error(code, request, flags=0):
    return nlmsg(2, struct.unpack_from('=I', request, 8)[0], struct.pack('=i', -code) + request, flags=flags)


# --- encoding, byte for byte -------------------------------------------------------------------------------------

def test_uapi_numbers():
    # request and reply enums are separate: PAUSE_SET and PAUSE_GET_REPLY are both 22
    assert (ep.ETHTOOL_MSG_PAUSE_GET, ep.ETHTOOL_MSG_PAUSE_SET, ep.ETHTOOL_MSG_PAUSE_GET_REPLY) == (21, 22, 22)


def test_encode_pause_get():
    assert ep.encode_pause_get(IFNAME, 5, FAMILY) == nlmsg(FAMILY, 5, genl(21) + header())


@pytest.mark.parametrize('rx, tx, autoneg, attrs', [
    (False, False, None, u8(3, 0) + u8(4, 0)),
    (True, True, False, u8(2, 0) + u8(3, 1) + u8(4, 1)),
    (None, False, None, u8(4, 0)),
    (None, None, None, b''),
])
def test_encode_pause_set(rx, tx, autoneg, attrs):
    # NLM_F_REQUEST | NLM_F_ACK: PAUSE_SET has no reply message, the ACK is the answer
    assert ep.encode_pause_set(IFNAME, rx, tx, 6, FAMILY, autoneg=autoneg) == nlmsg(FAMILY, 6, genl(22) + header() + attrs, flags=5)


# --- decoding ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('values', [(0, 0, 0), (0, 1, 1), (1, 1, 0), (0, 0, 1)])
def test_decode_kernel_shaped_reply(values):
    assert ep.decode_pause(kernel_reply(*values)) == dict(zip(('autoneg', 'rx', 'tx'), map(bool, values)))


def test_decode_reply_with_stats_nest():
    stats = nla(5, nla(2, struct.pack('=Q', 10)) + nla(3, struct.pack('=Q', 20)), nested=True)
    reply = nlmsg(FAMILY, 4, genl(22) + header() + u8(2, 0) + u8(3, 1) + u8(4, 0) + stats, flags=0)
    assert ep.decode_pause(reply) == {'autoneg': False, 'rx': True, 'tx': False}


@pytest.mark.parametrize('code, cls', [(errno.EOPNOTSUPP, ep.PauseUnsupported), (errno.ENODEV, ep.PauseError), (errno.EPERM, ep.PauseError)])
def test_decode_nlmsg_error(code, cls):
    with pytest.raises(ep.PauseError) as exc:
        ep.decode_pause(nlmsg_error(code, ep.encode_pause_get('lo', 3, FAMILY)), 'lo')
    assert (type(exc.value), exc.value.errno) == (cls, code)
    with pytest.raises(ep.PauseError) as exc:
        ep.decode_pause_ack(nlmsg_error(code, ep.encode_pause_set('lo', False, False, 3, FAMILY)), 'lo')
    assert (type(exc.value), exc.value.errno) == (cls, code)


def test_decode_ack():
    request = ep.encode_pause_set(IFNAME, False, False, 8, FAMILY)
    ep.decode_pause_ack(nlmsg_error(0, request[:16], flags=0x100))  # NLM_F_CAPPED: only the request's header
    with pytest.raises(ep.PauseError):
        ep.decode_pause_ack(b'')


def test_round_trip():
    request = ep.encode_pause_set(IFNAME, True, False, 1, FAMILY, autoneg=False)
    as_reply = request[:16] + struct.pack('=B', 22) + request[17:]
    assert ep.decode_pause(as_reply) == {'autoneg': False, 'rx': True, 'tx': False}


# --- the real kernel: lo has no get_pauseparam, so the answer proves the request got through the policy ------------

def family_id():
    try:
        with GenericNetlinkSocket() as sock:
            sock.bind(ep.ETHTOOL_GENL_NAME, ep.ethtool_pause_msg)
            return sock.prid
    except OSError as exc:
        pytest.skip('no ethtool generic netlink family here: %s' % exc)


def kernel_answer(request):
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC) as sock:
        sock.settimeout(5)
        sock.send(request)
        return sock.recv(65536)


def test_kernel_get_on_lo_raw():
    with pytest.raises(ep.PauseUnsupported) as exc:
        ep.decode_pause(kernel_answer(ep.encode_pause_get('lo', 1, family_id())), 'lo')
    assert exc.value.errno == errno.EOPNOTSUPP


def test_read_pause_lo():
    family_id()
    with pytest.raises(ep.PauseUnsupported) as exc:
        ep.read_pause('lo')
    assert exc.value.errno == errno.EOPNOTSUPP


def test_read_pause_unknown_device():
    family_id()
    with pytest.raises(ep.PauseError) as exc:
        ep.read_pause('gpfnosuchdev0')
    assert (type(exc.value), exc.value.errno) == (ep.PauseError, errno.ENODEV)


def test_set_pause_lo():
    family_id()
    # PAUSE_SET is GENL_UNS_ADMIN_PERM; with it, lo fails the set_pauseparam check before anything changes.
    expected = (ep.PauseUnsupported, errno.EOPNOTSUPP) if os.geteuid() == 0 else (ep.PauseError, errno.EPERM)
    with pytest.raises(ep.PauseError) as exc:
        ep.set_pause('lo', False, False)
    assert (type(exc.value), exc.value.errno) == expected


def test_importable_without_pyroute2():
    code = ('import sys; sys.modules["pyroute2"] = None; sys.path[:0] = %r\n'
            'from ansible_collections.gpufabric.roce.plugins.module_utils._host import ethtool_pause as _ethtool_pause\n'
            'assert _ethtool_pause.HAS_PYROUTE2 is False' % sys.path)
    subprocess.run([sys.executable, '-c', code], check=True)

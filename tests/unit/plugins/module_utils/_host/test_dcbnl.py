# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_dcbnl against the kernel's wire format, written out here with struct from include/uapi/linux/dcbnl.h."""

import errno
import os
import socket
import struct
import subprocess
import sys
import types

import pytest

pyroute2 = pytest.importorskip('pyroute2')

from ansible_collections.gpufabric.roce.plugins.module_utils._host import dcbnl as d  # noqa: E402

IFNAME = 'enp157s0np0'
NLA_F_NESTED = 0x8000
# struct ieee_pfc / struct dcb_app with the compiler's natural alignment ('@'), then the same spelled out.
PFC_NATIVE, PFC_FMT = '@BBBH8Q8Q', '=BBBxH2x8Q8Q'
APP_FMT = '=BBH'


def nla(nla_type, payload, nested=False):
    return struct.pack('=HH', 4 + len(payload), nla_type | (NLA_F_NESTED if nested else 0)) + payload + b'\0' * (-len(payload) % 4)


def nlmsg(msg_type, seq, body, flags=1, pid=0):
    return struct.pack('=IHHII', 16 + len(body), msg_type, flags, seq, pid) + body


def dcbmsg(cmd):
    return struct.pack('=BBH', 0, cmd, 0)  # dcb_family AF_UNSPEC, cmd, dcb_pad


def pfc(pfc_cap, pfc_en, delay=0, counters=0):
    return struct.pack(PFC_FMT, pfc_cap, pfc_en, 0, delay, *([counters] * 16))


def app(selector, protocol, priority):
    return struct.pack(APP_FMT, selector, priority, protocol)


def name_attr(ifname=IFNAME):
    return nla(1, ifname.encode() + b'\0')


def kernel_get_reply(pfc_payload, apps, seq=9, newer=b''):
    """What dcbnl_ieee_fill() builds for an mlx5 port: the nests without NLA_F_NESTED (nla_nest_start_noflag),
    ETS/MAXRATE/DCB_BUFFER around the PFC, the APP table, then DCB_ATTR_DCBX outside DCB_ATTR_IEEE."""
    ieee = (nla(1, bytes(59)) + nla(7, bytes(64)) + (nla(2, pfc_payload) if pfc_payload else b'') + nla(10, bytes(44))
            + nla(3, b''.join(nla(1, app(*a)) for a in apps) + newer))
    return nlmsg(78, seq, dcbmsg(21) + name_attr() + nla(13, ieee) + nla(14, b'\x0c'))


def status_reply(err, cmd=20):
    # dcbnl_ieee_set/del: nla_put_u8(skb, DCB_ATTR_IEEE, err) in an RTM_SETDCB message
    return nlmsg(79, 3, dcbmsg(cmd) + nla(13, struct.pack('=B', err & 0xFF)))


def nlmsg_error(code, request):
    return nlmsg(2, struct.unpack_from('=I', request, 8)[0], struct.pack('=i', -code) + request, flags=0)


# --- struct sizes ------------------------------------------------------------------------------------------------

def test_struct_sizes_follow_the_c_layout():
    assert struct.calcsize(PFC_NATIVE) == struct.calcsize(PFC_FMT) == 136
    assert struct.calcsize('@BBH') == struct.calcsize(APP_FMT) == 4
    encoded = d.encode_set_pfc(IFNAME, [3], 1)
    assert struct.unpack_from('=HH', encoded, 16 + 4 + 16 + 4) == (4 + 136, 2)  # after the header, dcbmsg, name, nest


# --- encoding, byte for byte -------------------------------------------------------------------------------------

def test_encode_ieee_get():
    assert d.encode_ieee_get(IFNAME, 42) == nlmsg(78, 42, dcbmsg(21) + name_attr())


@pytest.mark.parametrize('priorities, bitmap, cap', [([3], 0x08, 8), ([], 0, 8), ([0, 7], 0x81, 8), ([3, 4, 3], 0x18, 8), (range(8), 0xFF, 4)])
def test_encode_set_pfc(priorities, bitmap, cap):
    body = dcbmsg(20) + name_attr() + nla(13, nla(2, pfc(cap, bitmap)), nested=True)
    assert d.encode_set_pfc(IFNAME, priorities, 7, pfc_cap=cap) == nlmsg(79, 7, body)


def apps_body(cmd, apps):
    return dcbmsg(cmd) + name_attr() + nla(13, nla(3, b''.join(nla(1, app(*a)) for a in apps), nested=True), nested=True)


def test_encode_set_and_del_apps():
    wanted = [(5, 26, 3), (5, 48, 6)]
    assert d.encode_set_apps(IFNAME, {48: 6, 26: 3}, 11) == nlmsg(79, 11, apps_body(20, wanted))
    assert d.encode_set_apps(IFNAME, [(5, 48, 6), (5, 26, 3)], 11) == nlmsg(79, 11, apps_body(20, wanted))
    assert d.encode_del_apps(IFNAME, {26: 3, 48: 6}, 12) == nlmsg(79, 12, apps_body(27, wanted))
    assert d.encode_set_apps(IFNAME, [(1, 0x8915, 3)], 13) == nlmsg(79, 13, apps_body(20, [(1, 0x8915, 3)]))


@pytest.mark.parametrize('call', [
    lambda: d.encode_set_pfc(IFNAME, [8], 1),
    lambda: d.encode_set_pfc(IFNAME, [True], 1),
    lambda: d.encode_set_apps(IFNAME, {64: 3}, 1),
    lambda: d.encode_set_apps(IFNAME, {26: 8}, 1),
    lambda: d.encode_set_apps(IFNAME, [(5, 26)], 1),
    lambda: d.encode_del_apps(IFNAME, [(256, 1, 1)], 1),
])
def test_encode_rejects_out_of_range(call):
    with pytest.raises(ValueError):
        call()


# --- decoding ----------------------------------------------------------------------------------------------------

EXPECTED = {'pfc_cap': 8, 'pfc_priorities': [3], 'dscp_prio': {26: 3, 48: 6}, 'apps': [(5, 26, 3), (5, 48, 6)]}


def test_decode_kernel_shaped_reply():
    reply = kernel_get_reply(pfc(8, 0x08, delay=7, counters=12345), [(5, 48, 6), (5, 26, 3)])
    assert d.decode_ieee(reply) == EXPECTED


def test_decode_reply_without_pfc_or_apps():
    assert d.decode_ieee(kernel_get_reply(None, [])) == {'pfc_cap': None, 'pfc_priorities': [], 'dscp_prio': {}, 'apps': []}


def test_decode_keeps_every_app_and_the_highest_priority_per_dscp():
    # newer kernels (6.3+) also put non-standard entries (DCB_ATTR_DCB_APP, PCP selector 255) in the table: ignored
    state = d.decode_ieee(kernel_get_reply(pfc(8, 0), [(5, 26, 3), (5, 26, 1), (1, 0x8915, 3)], newer=nla(2, app(255, 11, 3))))
    assert state['apps'] == [(1, 0x8915, 3), (5, 26, 1), (5, 26, 3)]
    assert state['dscp_prio'] == {26: 3}


@pytest.mark.parametrize('code, cls', [(errno.EOPNOTSUPP, d.DcbUnsupported), (errno.ENODEV, d.DcbError), (errno.EPERM, d.DcbError)])
def test_decode_nlmsg_error(code, cls):
    request = d.encode_ieee_get('lo', 5)
    with pytest.raises(d.DcbError) as exc:
        d.decode_ieee(nlmsg_error(code, request), 'lo')
    assert exc.value.__class__ is cls  # exactly cls: DcbUnsupported is a DcbError too
    assert exc.value.errno == code


@pytest.mark.parametrize('code, cls', [(errno.EOPNOTSUPP, d.DcbUnsupported), (errno.ENOENT, d.DcbError), (errno.EEXIST, d.DcbError)])
def test_set_reply_status(code, cls):
    d.decode_set_reply(status_reply(0))
    d.decode_set_reply(status_reply(0, cmd=27))
    with pytest.raises(d.DcbError) as exc:
        d.decode_set_reply(status_reply(-code, cmd=27), IFNAME)
    assert (type(exc.value), exc.value.errno) == (cls, code)


# --- round trips: a SET request carries the IEEE nest exactly as a GET reply does ---------------------------------

def as_get_reply(request):
    return struct.pack('=IH', len(request), 78) + request[6:]


@pytest.mark.parametrize('priorities', [[], [3], [0, 1, 2, 3, 4, 5, 6, 7], [4, 6]])
def test_pfc_round_trip(priorities):
    state = d.decode_ieee(as_get_reply(d.encode_set_pfc(IFNAME, priorities, 1)))
    assert (state['pfc_cap'], state['pfc_priorities']) == (8, sorted(priorities))


def test_apps_round_trip():
    mapping = dict((dscp, dscp % 8) for dscp in range(64))
    state = d.decode_ieee(as_get_reply(d.encode_set_apps(IFNAME, mapping, 1)))
    assert state['dscp_prio'] == mapping and state['pfc_cap'] is None


# --- the socket helpers against a simulated DCB port ----------------------------------------------------------------

class FakePort:
    """Answers like dcbnl in front of mlx5 (replace=True) or of a driver using the generic APP list."""

    def __init__(self, pfc_en=0, apps=(), *, replace=True, applies_pfc=True, fail=0, pfc_cap=8):
        self.marshal = types.SimpleNamespace(msg_map={})
        self.status, self.sent, self.pfc_cap, self.pfc_en, self.apps = {}, [], pfc_cap, pfc_en, set(apps)
        self.replace, self.applies_pfc, self.fail = replace, applies_pfc, fail

    def nlm_request(self, msg, msg_type, msg_flags):
        assert (msg_flags, self.status['nlm_generator']) == (1, True)
        msg['header'] = {'type': msg_type, 'flags': msg_flags, 'sequence_number': 1, 'pid': 0}
        msg.encode()
        request = as_get_reply(bytes(msg.data))  # decode the request's IEEE nest with the reply parser
        cmd = request[17]
        if cmd == 21:
            return d._parse(kernel_get_reply(pfc(self.pfc_cap, self.pfc_en), sorted(self.apps)))
        state = d.decode_ieee(request)
        self.sent.append((cmd, state['apps'] or (state['pfc_cap'], state['pfc_priorities'])))
        if self.fail:
            return d._parse(status_reply(self.fail, cmd))
        err = 0
        if state['pfc_cap'] is not None and self.applies_pfc:
            self.pfc_en = sum(1 << p for p in state['pfc_priorities'])
        for entry in state['apps']:
            if cmd == 20 and self.replace:
                self.apps = set(a for a in self.apps if a[:2] != entry[:2]) | {entry}
            elif cmd == 20:
                err = err or (-errno.EEXIST if entry in self.apps else 0)
                self.apps.add(entry)
            elif entry in self.apps:
                self.apps.discard(entry)
            else:
                err = err or -errno.ENOENT
        return d._parse(status_reply(err, cmd))


@pytest.mark.parametrize('replace', [True, False])
def test_set_dscp_prio_replaces(replace):
    port = FakePort(apps=[(5, 26, 4), (5, 10, 1)], replace=replace)
    assert d.set_dscp_prio(port, IFNAME, {26: 3, 48: 6}) is True
    assert port.apps == {(5, 26, 3), (5, 48, 6), (5, 10, 1)}
    assert port.sent == [(20, [(5, 26, 3), (5, 48, 6)])] + ([] if replace else [(27, [(5, 26, 4)])])
    port.sent = []
    assert d.set_dscp_prio(port, IFNAME, {26: 3, 48: 6}) is False
    assert port.sent == []


def test_del_dscp_prio_deletes_what_exists():
    port = FakePort(apps=[(5, 26, 3), (5, 48, 6)])
    assert d.del_dscp_prio(port, IFNAME, {26: 3, 48: 5, 46: 5}) is True
    assert (port.apps, port.sent) == ({(5, 48, 6)}, [(27, [(5, 26, 3)])])
    assert d.del_dscp_prio(port, IFNAME, {26: 3}) is False


def test_set_pfc_is_idempotent_and_verified():
    port = FakePort(pfc_en=0x10, pfc_cap=4)
    assert d.set_pfc(port, IFNAME, [3]) is True
    assert (port.pfc_en, port.sent) == (0x08, [(20, (4, [3]))])  # pfc_cap goes back as the driver reported it
    assert d.set_pfc(port, IFNAME, [3]) is False
    assert len(port.sent) == 1
    with pytest.raises(d.DcbUnsupported):
        d.set_pfc(FakePort(applies_pfc=False), IFNAME, [3])


@pytest.mark.parametrize('fail, cls', [(errno.EOPNOTSUPP, d.DcbUnsupported), (errno.EINVAL, d.DcbError)])
def test_setters_raise_the_driver_error(fail, cls):
    # mlx5 answers EOPNOTSUPP on a function that is not the vport group manager, inside the RTM_SETDCB reply.
    port = FakePort(fail=-fail)
    for call in (lambda: d.set_dscp_prio(port, IFNAME, {26: 3}), lambda: d.set_pfc(port, IFNAME, [3]),
                 lambda: d.del_dscp_prio(FakePort(apps=[(5, 26, 3)], fail=-fail), IFNAME, {26: 3})):
        with pytest.raises(d.DcbError) as exc:
            call()
        assert (type(exc.value), exc.value.errno) == (cls, fail)


# --- the real kernel: no DCB device here, but lo proves the request gets past parsing to the dcbnl_ops check ---------

def kernel_answer(request):
    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    except OSError as exc:
        pytest.skip('no NETLINK_ROUTE socket here: %s' % exc)
    with sock:
        sock.settimeout(5)
        sock.send(request)
        return sock.recv(65536)


def test_kernel_lo_has_no_dcb():
    with pytest.raises(d.DcbUnsupported) as exc:
        d.decode_ieee(kernel_answer(d.encode_ieee_get('lo', 77)), 'lo')
    assert exc.value.errno == errno.EOPNOTSUPP


def test_kernel_unknown_device():
    with pytest.raises(d.DcbError) as exc:
        d.decode_ieee(kernel_answer(d.encode_ieee_get('gpfnosuchdev0', 78)), 'gpfnosuchdev0')
    assert (type(exc.value), exc.value.errno) == (d.DcbError, errno.ENODEV)


def test_kernel_set_on_lo():
    # RTM_SETDCB needs CAP_NET_ADMIN before dcb_doit looks at the device.
    expected = (d.DcbUnsupported, errno.EOPNOTSUPP) if os.geteuid() == 0 else (d.DcbError, errno.EPERM)
    with pytest.raises(d.DcbError) as exc:
        d.decode_set_reply(kernel_answer(d.encode_set_pfc('lo', [3], 79)), 'lo')
    assert (type(exc.value), exc.value.errno) == expected


def test_read_dcb_through_iproute():
    try:
        ipr = pyroute2.IPRoute()
    except OSError as exc:
        pytest.skip('no NETLINK_ROUTE socket here: %s' % exc)
    with ipr:
        with pytest.raises(d.DcbUnsupported):
            d.read_dcb(ipr, 'lo')
        with pytest.raises(d.DcbError) as exc:
            d.read_dcb(ipr, 'gpfnosuchdev0')
        assert exc.value.errno == errno.ENODEV
        assert ipr.link('get', index=1)[0].get_attr('IFLA_IFNAME') == 'lo'  # the session stays usable


def test_importable_without_pyroute2():
    code = ('import sys; sys.modules["pyroute2"] = None; sys.path[:0] = %r\n'
            'from ansible_collections.gpufabric.roce.plugins.module_utils._host import dcbnl as _dcbnl\n'
            'assert _dcbnl.HAS_PYROUTE2 is False and issubclass(_dcbnl.DcbUnsupported, _dcbnl.DcbError)' % sys.path)
    subprocess.run([sys.executable, '-c', code], check=True)

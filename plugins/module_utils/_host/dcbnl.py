# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DCB (IEEE 802.1Qaz) over rtnetlink: PFC and the APP table, as ``dcb pfc`` / ``dcb app`` (iproute2) do it.

Message layout from include/uapi/linux/dcbnl.h and net/dcb/dcbnl.c (Linux 6.1): an rtnetlink message
RTM_GETDCB/RTM_SETDCB whose body is ``struct dcbmsg`` followed by DCB_ATTR_IFNAME and a nested DCB_ATTR_IEEE
holding DCB_ATTR_IEEE_PFC (``struct ieee_pfc``) and DCB_ATTR_IEEE_APP_TABLE (``struct dcb_app`` entries).

Semantics worth knowing before calling the setters:

* ``trust dscp`` has no knob of its own in this API. mlx5 (mlx5e_dcbnl_ieee_setapp/delapp in en_dcbnl.c)
  switches the port to DSCP trust when the first DSCP APP entry is added and back to PCP trust when the last
  one is deleted; it accepts only the DSCP selector (anything else is EINVAL).
* mlx5 toggles the port link when pfc_en changes (mlx5e_dcbnl_ieee_setpfc): expect a short link flap.
* The kernel answers IEEE_SET/IEEE_DEL with an RTM_SETDCB message, not an NLMSG_ERROR: the driver's error is
  a u8 in DCB_ATTR_IEEE. A driver without ieee_setpfc ignores DCB_ATTR_IEEE_PFC without an error, so read back.
* A device without dcbnl_ops (lo, veth, virtio) is answered with EOPNOTSUPP: DcbUnsupported.

Private to this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os

try:
    from pyroute2.netlink import NLA_F_NESTED, nla, nlmsg
    from pyroute2.netlink.exceptions import NetlinkError
    try:
        from pyroute2.netlink.marshal import Marshal
    except ImportError:  # pyroute2 < 0.9 (Debian 12's python3-pyroute2 is 0.7.2)
        from pyroute2.netlink.nlsocket import Marshal
    HAS_PYROUTE2 = True
except ImportError:
    HAS_PYROUTE2 = False

NLM_F_REQUEST = 0x1
RTM_GETDCB = 78
RTM_SETDCB = 79
DCB_CMD_IEEE_SET = 20
DCB_CMD_IEEE_GET = 21
DCB_CMD_IEEE_DEL = 27
DCB_ATTR_IFNAME = 1
DCB_ATTR_IEEE = 13
DCB_ATTR_DCBX = 14
DCB_ATTR_IEEE_PFC = 2
DCB_ATTR_IEEE_APP_TABLE = 3
DCB_ATTR_IEEE_APP = 1
IEEE_8021QAZ_MAX_TCS = 8
IEEE_8021QAZ_APP_SEL_DSCP = 5


class DcbError(Exception):
    """The kernel or the driver refused a DCB request; ``errno`` is the positive error code."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.errno = code


class DcbUnsupported(DcbError):
    """The device has no DCB support (no dcbnl_ops, or the driver lacks the operation)."""


if HAS_PYROUTE2:
    class ieee_pfc(nla):
        # Explicit padding: pyroute2 packs fields one by one, the kernel uses the C layout (136 bytes, and
        # dcbnl's policy rejects a shorter attribute).
        fields = (('pfc_cap', 'B'), ('pfc_en', 'B'), ('mbc', 'B'), ('__pad0', 'x'), ('delay', 'H'), ('__pad1', '2x'),
                  ('requests', '8Q'), ('indications', '8Q'))
        defaults = {'requests': (0,) * IEEE_8021QAZ_MAX_TCS, 'indications': (0,) * IEEE_8021QAZ_MAX_TCS}

    class dcb_app(nla):
        fields = (('selector', 'B'), ('priority', 'B'), ('protocol', 'H'))

    class ieee_app_table(nla):
        nla_flags = NLA_F_NESTED
        nla_map = ((DCB_ATTR_IEEE_APP, 'DCB_ATTR_IEEE_APP', 'dcb_app'),)
        dcb_app = dcb_app

    class ieee_attrs(nla):
        nla_flags = NLA_F_NESTED
        nla_map = ((DCB_ATTR_IEEE_PFC, 'DCB_ATTR_IEEE_PFC', 'ieee_pfc'),
                   (DCB_ATTR_IEEE_APP_TABLE, 'DCB_ATTR_IEEE_APP_TABLE', 'ieee_app_table'))
        ieee_pfc = ieee_pfc
        ieee_app_table = ieee_app_table

    class dcbmsg(nlmsg):
        """Requests, and the kernel's RTM_GETDCB replies: DCB_ATTR_IEEE is the nested IEEE configuration."""
        fields = (('family', 'B'), ('cmd', 'B'), ('pad', 'H'))
        nla_map = ((DCB_ATTR_IFNAME, 'DCB_ATTR_IFNAME', 'asciiz'),
                   (DCB_ATTR_IEEE, 'DCB_ATTR_IEEE', 'ieee_attrs'),
                   (DCB_ATTR_DCBX, 'DCB_ATTR_DCBX', 'uint8'))
        ieee_attrs = ieee_attrs

    class dcbmsg_status(nlmsg):
        """The kernel's RTM_SETDCB replies, where dcbnl_ieee_set/del put the driver's error into DCB_ATTR_IEEE."""
        fields = (('family', 'B'), ('cmd', 'B'), ('pad', 'H'))
        nla_map = ((DCB_ATTR_IFNAME, 'DCB_ATTR_IFNAME', 'asciiz'),
                   (DCB_ATTR_IEEE, 'DCB_ATTR_IEEE', 'uint8'))

    MSG_MAP = {RTM_GETDCB: dcbmsg, RTM_SETDCB: dcbmsg_status}


def _priorities_bitmap(priorities):
    bitmap = 0
    for prio in priorities:
        if isinstance(prio, bool) or not isinstance(prio, int) or not 0 <= prio < IEEE_8021QAZ_MAX_TCS:
            raise ValueError('priority %r is not an integer 0-7' % (prio,))
        bitmap |= 1 << prio
    return bitmap


def app_entries(apps):
    """``apps`` as sorted (selector, protocol, priority) tuples. A dict is the DSCP shorthand {dscp: priority}."""
    if isinstance(apps, dict):
        apps = [(IEEE_8021QAZ_APP_SEL_DSCP, dscp, prio) for dscp, prio in apps.items()]
    entries = set()
    for entry in apps:
        selector, protocol, priority = entry
        for value, high in ((selector, 255), (protocol, 65535), (priority, IEEE_8021QAZ_MAX_TCS - 1)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
                raise ValueError('APP entry %r: %r is not an integer 0-%d' % (entry, value, high))
        if selector == IEEE_8021QAZ_APP_SEL_DSCP and protocol > 63:
            raise ValueError('APP entry %r: DSCP %d is not 0-63' % (entry, protocol))
        entries.add((selector, protocol, priority))
    return sorted(entries)


def _request(cmd, ifname, ieee=None):
    msg = dcbmsg()
    msg['family'] = 0  # AF_UNSPEC: dcbnl registers its handlers for PF_UNSPEC only
    msg['cmd'] = cmd
    msg['attrs'] = [('DCB_ATTR_IFNAME', ifname)]
    if ieee is not None:
        msg['attrs'].append(('DCB_ATTR_IEEE', {'attrs': ieee}))
    return msg


def _pfc_request(ifname, priorities, pfc_cap):
    # pfc_cap is read-only for the drivers we know (mlx5 ignores it on set and reports max_tc + 1 on get);
    # delay 0 tells mlx5 to keep its cable length; requests/indications are counters the drivers ignore.
    # The arrays given: pyroute2 < 0.9 ignores the nla's defaults.
    zeros = [0] * IEEE_8021QAZ_MAX_TCS
    pfc = {'pfc_cap': pfc_cap, 'pfc_en': _priorities_bitmap(priorities), 'mbc': 0, 'delay': 0, 'requests': zeros,
           'indications': list(zeros)}
    return _request(DCB_CMD_IEEE_SET, ifname, [('DCB_ATTR_IEEE_PFC', pfc)])


def _apps_request(cmd, ifname, apps):
    table = [('DCB_ATTR_IEEE_APP', {'selector': s, 'protocol': p, 'priority': q}) for s, p, q in app_entries(apps)]
    return _request(cmd, ifname, [('DCB_ATTR_IEEE_APP_TABLE', {'attrs': table})])


def _encode(msg, msg_type, seq):
    # No NLM_F_ACK: dcb_doit answers every command with its own unicast message, an ACK would only trail it.
    msg['header'] = {'type': msg_type, 'flags': NLM_F_REQUEST, 'sequence_number': seq, 'pid': 0}
    msg.encode()
    return bytes(msg.data)


def encode_ieee_get(ifname, seq):
    """The DCB_CMD_IEEE_GET request for ``ifname``, as bytes."""
    return _encode(_request(DCB_CMD_IEEE_GET, ifname), RTM_GETDCB, seq)


def encode_set_pfc(ifname, priorities, seq, pfc_cap=IEEE_8021QAZ_MAX_TCS):
    """The DCB_CMD_IEEE_SET request enabling PFC on exactly ``priorities`` (0-7; [] disables PFC)."""
    return _encode(_pfc_request(ifname, priorities, pfc_cap), RTM_SETDCB, seq)


def encode_set_apps(ifname, apps, seq):
    """The DCB_CMD_IEEE_SET request adding APP entries (see app_entries for the shapes of ``apps``)."""
    return _encode(_apps_request(DCB_CMD_IEEE_SET, ifname, apps), RTM_SETDCB, seq)


def encode_del_apps(ifname, apps, seq):
    """The DCB_CMD_IEEE_DEL request removing APP entries (see app_entries for the shapes of ``apps``)."""
    return _encode(_apps_request(DCB_CMD_IEEE_DEL, ifname, apps), RTM_SETDCB, seq)


def _error(code, ifname):
    if code in (errno.EOPNOTSUPP, 524):  # 524: the kernel-internal ENOTSUPP a few drivers leak
        return DcbUnsupported('%s: the device does not support DCB (%s)' % (ifname, os.strerror(code)), code)
    # ENODEV is a wrong or detached interface, not a device without DCB: the caller must not skip it.
    return DcbError('%s: DCB request refused (%s)' % (ifname, os.strerror(code)), code)


def _ieee_state(msg):
    ieee = msg.get_attr('DCB_ATTR_IEEE')
    if ieee is None:
        raise DcbError('%s: the IEEE_GET reply carries no DCB_ATTR_IEEE' % msg.get_attr('DCB_ATTR_IFNAME'))
    pfc = ieee.get_attr('DCB_ATTR_IEEE_PFC')
    table = ieee.get_attr('DCB_ATTR_IEEE_APP_TABLE')
    apps = app_entries([(a['selector'], a['protocol'], a['priority']) for a in table.get_attrs('DCB_ATTR_IEEE_APP')]
                       if table is not None else [])
    # The generic APP list allows several priorities per DSCP (only mlx5 & co. replace); keep the highest here,
    # 'apps' has them all.
    dscp_prio = dict((p, q) for s, p, q in apps if s == IEEE_8021QAZ_APP_SEL_DSCP)
    return {'pfc_cap': pfc['pfc_cap'] if pfc is not None else None,
            'pfc_priorities': [i for i in range(IEEE_8021QAZ_MAX_TCS) if pfc is not None and pfc['pfc_en'] >> i & 1],
            'dscp_prio': dscp_prio, 'apps': apps}


def _check_status(msg, ifname):
    status = msg.get_attr('DCB_ATTR_IEEE')
    if status:
        # dcbnl_ieee_set/del store the negative errno in a u8.
        raise _error(256 - status, ifname)


def _parse(data):
    marshal = Marshal()
    marshal.msg_map = dict(MSG_MAP)
    return list(marshal.parse(data))


def _first_reply(messages, ifname, msg_type):
    for msg in messages:
        error = msg['header'].get('error')
        if error is not None:
            if getattr(error, 'code', None) is None:
                raise DcbError('%s: undecodable DCB answer: %s' % (ifname, error))
            raise _error(error.code, ifname)
        if msg['header']['type'] == msg_type:
            return msg
    raise DcbError('%s: no DCB reply in the answer' % ifname)


def decode_ieee(reply_bytes, ifname=None):
    """The kernel's answer to IEEE_GET (bytes) as {'pfc_cap': int or None when the driver reports no PFC,
    'pfc_priorities': [int], 'dscp_prio': {dscp: priority}, 'apps': [(selector, protocol, priority)]}."""
    return _ieee_state(_first_reply(_parse(reply_bytes), ifname, RTM_GETDCB))


def decode_set_reply(reply_bytes, ifname=None):
    """Raise DcbError/DcbUnsupported unless the kernel's answer to IEEE_SET/IEEE_DEL (bytes) reports success."""
    _check_status(_first_reply(_parse(reply_bytes), ifname, RTM_SETDCB), ifname)


def _talk(sock, msg, msg_type, ifname):
    for key, cls in MSG_MAP.items():
        sock.marshal.msg_map[key] = cls
    status = getattr(sock, 'status', None)  # pyroute2 < 0.9 has none (and no such bug)
    if isinstance(status, dict) and 'nlm_generator' not in status:
        # pyroute2 0.9.7's IPRoute inherits NetlinkSocket.nlm_request but never sets the key it reads (KeyError).
        status['nlm_generator'] = True
    try:
        replies = list(sock.nlm_request(msg, msg_type=msg_type, msg_flags=NLM_F_REQUEST))
    except NetlinkError as exc:
        raise _error(exc.code, ifname) from exc
    return _first_reply(replies, ifname, msg_type)


def read_dcb(sock, ifname):
    """The IEEE DCB state of ``ifname`` (the shape of decode_ieee) through ``sock``, an open pyroute2
    NETLINK_ROUTE socket such as IPRoute."""
    return _ieee_state(_talk(sock, _request(DCB_CMD_IEEE_GET, ifname), RTM_GETDCB, ifname))


def set_pfc(sock, ifname, priorities):
    """Enable PFC on exactly ``priorities`` of ``ifname`` (the others off), then read it back. True when it
    changed; DcbUnsupported when the driver reports no PFC or does not apply it."""
    wanted = [i for i in range(IEEE_8021QAZ_MAX_TCS) if _priorities_bitmap(priorities) >> i & 1]
    before = read_dcb(sock, ifname)
    if before['pfc_cap'] is None:
        raise DcbUnsupported('%s: the driver reports no IEEE PFC' % ifname, errno.EOPNOTSUPP)
    if before['pfc_priorities'] == wanted:
        return False
    _check_status(_talk(sock, _pfc_request(ifname, wanted, before['pfc_cap']), RTM_SETDCB, ifname), ifname)
    if read_dcb(sock, ifname)['pfc_priorities'] != wanted:
        raise DcbUnsupported('%s: the driver ignored the PFC setting (no ieee_setpfc?)' % ifname, errno.EOPNOTSUPP)
    return True


def set_dscp_prio(sock, ifname, mapping):
    """Make each DSCP of ``mapping`` ({dscp: priority}) map to exactly that priority, the way ``dcb app replace``
    does: add the missing entries, then delete other priorities left for those DSCPs. True when anything changed."""
    wanted = app_entries(mapping)
    current = read_dcb(sock, ifname)['apps']
    missing = [app for app in wanted if app not in current]
    if missing:
        _check_status(_talk(sock, _apps_request(DCB_CMD_IEEE_SET, ifname, missing), RTM_SETDCB, ifname), ifname)
        # Read again: mlx5 has already dropped the entries it replaced, deleting them again would be ENOENT.
        current = read_dcb(sock, ifname)['apps']
    stale = [app for app in current if app[0] == IEEE_8021QAZ_APP_SEL_DSCP and app[1] in mapping and app not in wanted]
    if stale:
        _check_status(_talk(sock, _apps_request(DCB_CMD_IEEE_DEL, ifname, stale), RTM_SETDCB, ifname), ifname)
    return bool(missing or stale)


def del_dscp_prio(sock, ifname, mapping):
    """Delete the DSCP APP entries of ``mapping`` ({dscp: priority}) that exist. True when anything changed."""
    present = [app for app in app_entries(mapping) if app in read_dcb(sock, ifname)['apps']]
    if present:
        _check_status(_talk(sock, _apps_request(DCB_CMD_IEEE_DEL, ifname, present), RTM_SETDCB, ifname), ifname)
    return bool(present)

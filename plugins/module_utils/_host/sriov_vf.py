# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Logic of gpufabric.roce.sriov_vf: read the VF state (sysfs + one netlink dump),
validate, compute the difference and apply only that."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import errno
import os

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import (
    GpufabricError,
    Sysfs,
    ifname_problem,
    netdev_device_unit,
    oserror_text,
    unit_quote,
    valid_unit_name,
    write_sysfs,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._common.vf_settings import U32_MAX, VF_KEYS, validate

LINK_STATE_BY_ID = {0: 'auto', 1: 'enable', 2: 'disable'}
LINK_STATE_ID = {v: k for k, v in LINK_STATE_BY_ID.items()}
VLAN_PROTO_BY_ID = {0x8100: '802.1Q', 0x88A8: '802.1ad'}
VLAN_PROTO_ID = {v: k for k, v in VLAN_PROTO_BY_ID.items()}
# What a freshly created VF looks like (used to predict in check mode).
NEW_VF = {'mac': '00:00:00:00:00:00', 'vlan': 0, 'qos': 0, 'vlan_proto': '802.1Q', 'trust': False,
          'spoofchk': True, 'link_state': 'auto', 'min_tx_rate': 0, 'max_tx_rate': 0}


def _fix_vlan_info():
    # Imported here, not at the top: pyroute2's package imports all of its ~340 modules, and the unit tests and
    # benchmarks that import this file for its logic alone need none of them.
    try:
        from pyroute2.netlink.rtnl.ifinfmsg import ifinfmsg  # noqa: PLC0415 - see above
    except ImportError:  # the module reports missing pyroute2 with missing_required_lib
        return
    fix_pyroute2_vlan_info(ifinfmsg.vflist.vfinfo.vf_vlist.ivvi)


# --- reading -----------------------------------------------------------------

def parse_vfinfo_list(vflist):
    """IFLA_VFINFO_LIST (pyroute2 nla) -> {vf_id: {setting: value}} in module terms."""
    result = {}
    if vflist is None:
        return result
    for info in vflist.get_attrs('IFLA_VF_INFO'):
        mac = info.get_attr('IFLA_VF_MAC')
        if mac is None:
            continue
        vf_id = mac['vf']
        vf = {'mac': mac['mac'].lower()}
        vlan = info.get_attr('IFLA_VF_VLAN')
        if vlan is not None:
            vf['vlan'] = vlan['vlan']
            vf['qos'] = vlan['qos']
        vf['vlan_proto'] = '802.1Q'
        vlist = info.get_attr('IFLA_VF_VLAN_LIST')
        if vlist is not None:
            for ivvi in vlist.get_attrs('IFLA_VF_VLAN_INFO'):
                # Drivers that never had a protocol set (netdevsim) report 0: that is 802.1Q.
                vf['vlan_proto'] = VLAN_PROTO_BY_ID.get(ivvi['proto'] or 0x8100, hex(ivvi['proto']))
                break
        for attr, key in (('IFLA_VF_TRUST', 'trust'), ('IFLA_VF_SPOOFCHK', 'spoofchk')):
            nla = info.get_attr(attr)
            # The kernel reports -1 (u32 max) when the driver cannot tell.
            if nla is not None and nla[key] != U32_MAX:
                vf[key] = bool(nla[key])
        ls = info.get_attr('IFLA_VF_LINK_STATE')
        if ls is not None:
            vf['link_state'] = LINK_STATE_BY_ID.get(ls['link_state'], str(ls['link_state']))
        rate = info.get_attr('IFLA_VF_RATE')
        if rate is not None:
            vf['min_tx_rate'] = rate['min_tx_rate']
            vf['max_tx_rate'] = rate['max_tx_rate']
        result[vf_id] = vf
    return result


def read_pf(fs, pf):
    """sysfs view of the PF: exists, numvfs / totalvfs (None when absent)."""
    dev = 'class/net/%s/device' % pf
    return {
        'exists': fs.exists('class/net/%s' % pf),
        'sriov_capable': fs.exists(dev + '/sriov_numvfs'),
        'num_vfs': fs.read_int(dev + '/sriov_numvfs'),
        'total_vfs': fs.read_int(dev + '/sriov_totalvfs'),
        'numvfs_path': fs.path(dev + '/sriov_numvfs'),
        'ifindex': fs.read_int('class/net/%s/ifindex' % pf),
    }


def dump_vfs(ipr, index):
    """All VF settings of a PF in one RTM_GETLINK (ext_mask=RTEXT_FILTER_VF)."""
    msgs = ipr.link('get', index=index, ext_mask=1)
    return parse_vfinfo_list(msgs[0].get_attr('IFLA_VFINFO_LIST'))


# --- validation and planning -------------------------------------------------

def normalize_vfs(vfs):
    """Module ``vfs`` entries -> {id: {only the keys that were given}}."""
    result = {}
    for vf in vfs or []:
        want = {k: vf.get(k) for k in VF_KEYS if vf.get(k) is not None}
        if 'mac' in want:
            want['mac'] = str(want['mac']).lower().replace('-', ':')
        result[vf['id']] = want
    return result


def numvfs_writes(current, requested):
    """The sysfs writes that take sriov_numvfs from current to requested."""
    if requested is None or requested == current:
        return []
    if current and requested:
        return [0, requested]
    return [requested]


def vf_changes(current_vfs, desired, recreated):
    """Per-VF differences. Returns [(id, before, after, changes)], only VFs with changes.

    ``recreated``: the VFs are (or will be) new, so their current state is the default
    of a fresh VF, not what the dump said."""
    out = []
    for vid in sorted(desired):
        want = dict(desired[vid])
        before = dict(NEW_VF) if recreated else dict(current_vfs.get(vid) or NEW_VF)
        # Rates are set together (IFLA_VF_RATE carries both): keep the other one.
        after = dict(before)
        after.update(want)
        changes = {k: after[k] for k in want if before.get(k) != after[k]}
        out.append((vid, before, after, changes))
    return out


def fix_pyroute2_vlan_info(ivvi_class):
    """pyroute2 (0.9.7) encodes IFLA_VF_VLAN_INFO as 14 bytes, but the kernel wants
    sizeof(struct ifla_vf_vlan_info) == 16 and answers EINVAL otherwise. Add the trailing
    padding (process-local; only needed for vlan_proto 802.1ad). Returns True when patched."""
    names = [name for name, _fmt in ivvi_class.fields]
    if names == ['vf', 'vlan', 'qos', 'proto']:
        ivvi_class.fields = tuple(ivvi_class.fields) + (('_pad', 'H'),)
        return True
    return False


def build_vf_requests(changes_list):
    """pyroute2 ``vf=`` specs for one RTM_SETLINK carrying every changed VF."""
    requests = []
    for vid, _before, after, changes in changes_list:
        if not changes:
            continue
        req = {'vf': vid}
        if 'mac' in changes:
            req['mac'] = after['mac']
        if {'vlan', 'qos', 'vlan_proto'} & set(changes):
            proto = after.get('vlan_proto') or '802.1Q'
            if proto == '802.1Q':
                req['vlan'] = {'vlan': after['vlan'], 'qos': after['qos']}
            else:
                req['vlan'] = [{'vlan': after['vlan'], 'qos': after['qos'], 'proto': VLAN_PROTO_ID[proto]}]
        if 'trust' in changes:
            req['trust'] = int(after['trust'])
        if 'spoofchk' in changes:
            req['spoofchk'] = int(after['spoofchk'])
        if 'link_state' in changes:
            req['link_state'] = LINK_STATE_ID[after['link_state']]
        if {'min_tx_rate', 'max_tx_rate'} & set(changes):
            req['rate'] = {'min_tx_rate': after['min_tx_rate'], 'max_tx_rate': after['max_tx_rate']}
        requests.append(req)
    return requests


# The order in which the kernel applies one VF's attributes (rtnetlink do_setvfinfo), stopping at the
# first the driver refuses: what precedes the refused one is already set.
# Within a group the kernel sets all or nothing; the first listed is the likelier cause (an 802.1ad tag
# rather than its VLAN id, a minimum rather than the ceiling beside it).
KERNEL_ORDER = (('mac',), ('vlan_proto', 'vlan', 'qos'), ('min_tx_rate', 'max_tx_rate'), ('spoofchk',), ('link_state',), ('trust',))
REFUSAL_FIX = {
    'link_state': 'leave link_state out of the VFs of this PF (its driver cannot set it; ConnectX NICs can), or move the VF to a PF whose driver supports it',
    'min_tx_rate': 'leave min_tx_rate out (or 0) for the VFs of this PF (its driver has no minimum rate; ConnectX NICs have)',
    'vlan_proto': 'use vlan_proto 802.1Q (or leave it out) for the VFs of this PF (its driver cannot tag 802.1ad; ConnectX NICs can)',
}


def netlink_error_text(exc):
    """``Operation not supported (EOPNOTSUPP)`` from a pyroute2 NetlinkError (``code``) or an OSError."""
    code = getattr(exc, 'code', None) or getattr(exc, 'errno', None)
    if isinstance(code, int) and code in errno.errorcode:
        # Linux's ENOTSUP is EOPNOTSUPP, the name the kernel's drivers return.
        name = 'EOPNOTSUPP' if code == errno.EOPNOTSUPP else errno.errorcode[code]
        return '%s (%s)' % (os.strerror(code), name)
    return str(exc)


def refused_setting(requested, now):
    """The (vf id, setting) the kernel refused: in the first VF of ``requested`` (the changes list, in
    request order) not fully applied, the first setting in kernel order whose value ``now`` (a dump
    taken after the refusal) does not show. None when every requested value shows."""
    for vid, _before, after, changes in requested:
        state = now.get(vid) or {}
        for group in KERNEL_ORDER:
            for key in group:
                if key in changes and state.get(key) != after[key]:
                    return vid, key
    return None


def restore_vfs(ipr, index, planned, now):
    """Set back, VF by VF, every requested setting the kernel applied before it refused one. Returns the
    VF ids whose restore failed (empty when everything is as before)."""
    undo = []
    for vid, before, _after, changes in planned:
        state = now.get(vid) or {}
        back = {k: before[k] for k in changes if state.get(k) != before[k]}
        if back:
            undo.append((vid, state, dict(state, **back), back))
    failed = []
    for request in build_vf_requests(undo):
        try:
            ipr.link('set', index=index, vf=[request])
        except Exception:  # pyroute2 NetlinkError or OSError: reported in the refusal message
            failed.append(request['vf'])
    return failed


def diff_view(num_vfs, vf_list, side):
    idx = 1 if side == 'before' else 2
    return {'num_vfs': num_vfs, 'vfs': [dict(item[idx], id=item[0]) for item in vf_list]}


def refusal(host, pf, exc, *, ipr, index, fs, pf_state, planned, writes, current):
    """The GpufabricError for VF settings the PF's driver refused, after setting back what the same
    request had already applied (and the VF count, when this run changed it): nothing stays half-applied."""
    try:
        now = dump_vfs(ipr, index)
    except Exception:  # noqa: BLE001 - the refusal below still names the setting as requested
        now = {}
    culprit = refused_setting(planned, now)
    not_restored = restore_vfs(ipr, index, planned, now) if now else sorted(vid for vid, _b, _a, c in planned if c)
    undone = ''
    if writes and not not_restored:
        try:
            for value in numvfs_writes(fs.read_int('class/net/%s/device/sriov_numvfs' % pf) or 0, current):
                write_sysfs(pf_state['numvfs_path'], value)
            undone = '; sriov_numvfs was set back to %d' % current
        except OSError as oexc:
            undone = '; setting sriov_numvfs back to %d failed too: %s' % (current, oserror_text(oexc))
    state = ('nothing was changed (what the request had set before the refusal was set back%s)' % undone if not not_restored
             else 'the settings of VF(s) %s could not be set back, read them with ip link show %s' % (not_restored, pf))
    reason = netlink_error_text(exc)
    if culprit is None:
        return GpufabricError(host, 'vfs', sorted(vid for vid, _b, _a, c in planned if c),
                              'the driver of PF %s refused these VF settings: %s; %s' % (pf, reason, state),
                              'check the driver log (dmesg) for the setting it refuses and leave it out for this PF')
    vid, key = culprit
    value = next(a[key] for v, _b, a, _c in planned if v == vid)
    return GpufabricError(host, 'vfs[id=%d].%s' % (vid, key), value,
                          'the driver of PF %s refused it: %s; %s' % (pf, reason, state),
                          REFUSAL_FIX.get(key, 'leave %s out for the VFs of this PF, or use a value its driver accepts (dmesg says why it refused)' % key))


# --- persistence -------------------------------------------------------------

def _onoff(value):
    return 'on' if value else 'off'


def ip_vf_args(vid, settings):
    """Arguments of ``ip link set dev PF vf N ...`` for the persisted unit."""
    args = ['vf', str(vid)]
    if 'mac' in settings:
        args += ['mac', settings['mac']]
    if {'vlan', 'qos', 'vlan_proto'} & set(settings):
        args += ['vlan', str(settings.get('vlan', 0))]
        if settings.get('qos'):
            args += ['qos', str(settings['qos'])]
        if settings.get('vlan_proto', '802.1Q') != '802.1Q':
            args += ['proto', settings['vlan_proto']]
    if {'min_tx_rate', 'max_tx_rate'} & set(settings):
        args += ['min_tx_rate', str(settings.get('min_tx_rate', 0)), 'max_tx_rate', str(settings.get('max_tx_rate', 0))]
    if 'spoofchk' in settings:
        args += ['spoofchk', _onoff(settings['spoofchk'])]
    if 'trust' in settings:
        args += ['trust', _onoff(settings['trust'])]
    if 'link_state' in settings:
        args += ['state', settings['link_state']]
    return args


def unit_name(pf):
    unit = 'gpufabric-sriov-%s.service' % pf
    if not valid_unit_name(unit):
        raise ValueError('unsafe unit name %r' % (unit,))
    return unit


def render_unit(pf, num_vfs, desired, vf_after):
    """systemd oneshot unit that recreates the VFs and their settings at boot.

    ``vf_after``: {id: full settings after the run}; for vlan/qos/proto and the rates the
    unit writes the full tuple, since ip sets them together."""
    # A validated name passes shlex.quote unchanged; an unvalidated one raises here
    # rather than reach "/bin/sh -c" (defence in depth behind validate).
    pf = unit_quote(pf)
    numvfs = '/sys/class/net/%s/device/sriov_numvfs' % pf
    dev_unit = netdev_device_unit(pf)
    lines = [
        '# Managed by Ansible (gpufabric.roce.sriov_vf). Local edits are overwritten.',
        '[Unit]',
        'Description=gpufabric.roce SR-IOV: %d VFs on %s' % (num_vfs, pf),
        # Bound to the PF's device and started by it ([Install] below) whenever it appears: at
        # boot, or later (a driver that probes late, a PF created by a service, a driver reload).
        # Requires= with WantedBy=multi-user.target queued a device job at boot that fails after
        # the default device timeout (90 s), and the unit was never started when the PF came later.
        'BindsTo=%s' % dev_unit,
        'After=%s' % dev_unit,
        'Before=network-pre.target',
        'Wants=network-pre.target',
        '',
        '[Service]',
        'Type=oneshot',
        'RemainAfterExit=yes',
        # $$ is a literal $ for systemd; the count is only rewritten when it differs.
        "ExecStart=/bin/sh -c 'if [ \"$$(cat %s)\" != %d ]; then echo 0 > %s && echo %d > %s; fi'"
        % (numvfs, num_vfs, numvfs, num_vfs, numvfs),
    ]
    for vid in sorted(desired):
        settings = dict(desired[vid])
        after = vf_after.get(vid, {})
        if {'vlan', 'qos', 'vlan_proto'} & set(settings):
            for k in ('vlan', 'qos', 'vlan_proto'):
                settings.setdefault(k, after.get(k, NEW_VF[k]))
        if {'min_tx_rate', 'max_tx_rate'} & set(settings):
            for k in ('min_tx_rate', 'max_tx_rate'):
                settings.setdefault(k, after.get(k, 0))
        if settings:
            lines.append('ExecStart=/sbin/ip link set dev %s %s' % (pf, ' '.join(ip_vf_args(vid, settings))))
    lines += ['', '[Install]', 'WantedBy=%s' % dev_unit, '']
    return '\n'.join(lines)


# --- the run -----------------------------------------------------------------

def check_state(host, params, absent):
    """num_vfs or vfs with state=present; neither (but num_vfs: 0) with state=absent."""
    num_vfs, vfs = params.get('num_vfs'), params.get('vfs') or []
    if absent and (vfs or num_vfs not in (None, 0)):
        field, value = ('vfs', [v.get('id') for v in vfs]) if vfs else ('num_vfs', num_vfs)
        raise GpufabricError(host, field, value, 'state=absent removes every VF of the PF, so it takes no VF count or settings',
                             'drop %s, or use state: present' % field)
    if not absent and num_vfs is None and not vfs:
        raise GpufabricError(host, 'num_vfs', None, 'neither num_vfs nor vfs is given, so there is nothing to set',
                             'set num_vfs (0 removes the VFs), vfs, or state: absent')
    if not absent and num_vfs is None and params.get('persist'):
        raise GpufabricError(host, 'num_vfs', None, 'persist: true writes the VF count into the boot unit, so it needs num_vfs',
                             'set num_vfs, or persist: false')


def summary(results):
    """The module's top-level keys over every rail's result (``rails``): a VF reset on any rail resets the node's."""
    return {'vf_reset': any(r['vf_reset'] for r in results)}


def run(host, params, ipr, check_mode, *, fs=None, persist_fn=None):
    """Do the whole module run; returns the result dict. Raises GpufabricError."""
    fs = fs or Sysfs(params.get('sysfs_root') or '/sys')
    pf = params['pf']
    num_vfs = params.get('num_vfs')
    vfs = params.get('vfs') or []
    absent = params.get('state') == 'absent'
    check_state(host, params, absent)
    if absent:
        num_vfs = 0
    pf_state = {'exists': False} if ifname_problem(pf) else read_pf(fs, pf)
    validate(host, pf, pf_state, num_vfs=num_vfs, vfs=vfs, allow_vf_reset=params.get('allow_vf_reset'))
    current = pf_state['num_vfs'] or 0
    desired = normalize_vfs(vfs)

    index = pf_state.get('ifindex') or (ipr.link_lookup(ifname=pf) or [None])[0]
    if index is None:
        raise GpufabricError(host, 'pf', pf, 'no such network interface in this network namespace',
                             'run the module in the namespace that owns the PF')
    current_vfs = dump_vfs(ipr, index) if current else {}

    writes = numvfs_writes(current, num_vfs)
    final = num_vfs if num_vfs is not None else current
    planned = vf_changes(current_vfs, desired, recreated=bool(writes))
    before_view = {'num_vfs': current,
                   'vfs': [dict(current_vfs[vid], id=vid) if vid in current_vfs else {'id': vid} for vid in sorted(desired)]}
    changed = bool(writes) or any(c for _v, _b, _a, c in planned)

    if not check_mode:
        for value in writes:
            try:
                write_sysfs(pf_state['numvfs_path'], value)
            except OSError as exc:
                raise GpufabricError(host, 'num_vfs', num_vfs, 'writing %d to %s failed: %s' % (value, pf_state['numvfs_path'], oserror_text(exc)),
                                     'check the driver log (dmesg); the PF may support fewer VFs than requested') from exc
        if writes:
            # Re-read what the fresh VFs really look like, then set only what differs.
            current_vfs = dump_vfs(ipr, index) if final else {}
            planned = vf_changes(current_vfs, desired, recreated=False)
        requests = build_vf_requests(planned)
        if any(isinstance(r.get('vlan'), list) for r in requests):
            _fix_vlan_info()
        if requests:
            try:
                ipr.link('set', index=index, vf=requests)
            except Exception as exc:  # pyroute2 NetlinkError or OSError
                raise refusal(host, pf, exc, ipr=ipr, index=index, fs=fs, pf_state=pf_state,
                              planned=planned, writes=writes, current=current) from exc
            changed = True
        # Read back only when something was written; otherwise the first dump is the state.
        after_vfs = (dump_vfs(ipr, index) if final else {}) if changed else current_vfs
        after_view = {'num_vfs': final, 'vfs': [dict(after_vfs.get(vid, {}), id=vid) for vid in sorted(desired)]}
    else:
        after_view = diff_view(final, planned, 'after')

    result = {
        'changed': changed,
        'pf': pf,
        'num_vfs': final,
        'total_vfs': pf_state['total_vfs'],
        'vf_reset': bool(writes) and current > 0,
        'vfs': after_view['vfs'],
        'diff': {'before': before_view, 'after': after_view},
    }
    if params.get('persist') or absent:
        vf_after = {v['id']: v for v in after_view['vfs']}
        content = None if absent else render_unit(pf, final, desired, vf_after)
        presult = persist_fn(unit_name(pf), content, 'absent' if absent else 'present') if persist_fn else None
        if presult is not None:
            result['persist'] = {k: presult[k] for k in ('unit', 'path', 'changed', 'daemon_reload', 'systemd_running')}
            if presult['changed']:
                result['changed'] = True
                result['diff']['before']['unit'] = presult['before']
                result['diff']['after']['unit'] = presult['after']
            if presult.get('warning'):
                result['warnings'] = [presult['warning']]
    return result

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The logic of the roce_qos module: a rail's QoS (``_common.qos``) applied to its PF where the kernel exposes it.

Each setting has its own kernel interface, and not every NIC or kernel has every one:

- ``tos``: RDMA-CM's default ToS of the PF's RDMA device, in configfs
  (``/sys/kernel/config/rdma_cm/<dev>/ports/<n>/default_roce_tos``). Any RDMA device, soft-RoCE included.
- ``trust`` and ``pfc_priorities``: DCB over rtnetlink (``_host.dcbnl``), the IEEE 802.1Qaz API that iproute2's ``dcb``
  uses. ``trust: dscp`` is the DSCP APP entries of the RoCE and CNP DSCPs (mlx5 switches its trust state to dscp
  with the first one); ``trust: pcp`` removes the DSCP APP entries. Needs a DCB-capable NIC (ConnectX): neither
  rxe nor netdevsim implements DCB.
- ``pause_frames``: link pause over ethtool netlink (``_host.ethtool_pause``).
- ``ecn_priorities``, ``cnp_dscp``, ``cnp_priority``: the ``ecn`` sysfs directory of the PF, which NVIDIA's
  mlx5 driver (DOCA-OFED/MLNX_OFED) has; the upstream mlx5 and rxe drivers have none.

What the NIC cannot do is ``unsupported``: a failure naming the setting and what exposes it, or with
``unsupported=warn`` a warning, and the rest applied. Everything is read and checked before the first write."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import os

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import (
    GpufabricError,
    Sysfs,
    check_ifname,
    netdev_device_unit,
    oserror_text,
    unit_quote,
    valid_unit_name,
    write_sysfs,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._common.qos import DEFAULTS as QOS_DEFAULTS, roce_priority

CONFIGFS = 'kernel/config/rdma_cm'
ECN_DIR = 'class/net/%s/ecn'
SETTINGS = ('tos', 'trust', 'pfc_priorities', 'pause_frames', 'ecn_priorities', 'cnp_dscp', 'cnp_priority')
PF_FIX = 'set interface to the PF netdev of the rail as `ip link` shows it, e.g. enp157s0np0'


class Unsupported(Exception):
    """A setting the kernel or the NIC does not expose; the message says what would."""


def validate_params(host, params):
    check_ifname(host, 'interface', params['interface'], PF_FIX)
    desired = {k: params.get(k) for k in SETTINGS}
    for key in ('pfc_priorities', 'ecn_priorities'):
        values = desired[key]
        if values is not None:
            if any(not 0 <= p <= 7 for p in values) or len(set(values)) != len(values):
                raise GpufabricError(host, key, values, 'is not a list of distinct priorities 0-7', 'write e.g. [3], or [] for none')
            desired[key] = sorted(values)
    for key, high in (('tos', 255), ('cnp_dscp', 63), ('cnp_priority', 7)):
        if desired[key] is not None and not 0 <= desired[key] <= high:
            raise GpufabricError(host, key, desired[key], 'is out of range 0-%d' % high, 'give a value from 0 to %d' % high)
    if desired['trust'] == 'dscp' and desired['tos'] is None:
        raise GpufabricError(host, 'trust', 'dscp', 'needs tos: the DSCP APP entry that selects dscp trust is the RoCE traffic\'s DSCP',
                             'give tos too (the role passes the rail\'s whole QoS)')
    if desired['trust'] == 'dscp' and desired['cnp_dscp'] is not None and desired['cnp_dscp'] == desired['tos'] >> 2:
        # One DSCP APP entry per DSCP: wanted_dscp_apps would keep RoCE's and drop the CNPs' (the fabric plan refuses it first).
        raise GpufabricError(host, 'cnp_dscp', desired['cnp_dscp'], 'is RoCE\'s own DSCP (tos %d >> 2): its DSCP APP entry cannot '
                             'map CNPs to cnp_priority too' % desired['tos'],
                             'give CNPs a DSCP of their own, e.g. %d' % (QOS_DEFAULTS['cnp_dscp'] if QOS_DEFAULTS['cnp_dscp'] != desired['cnp_dscp']
                                                                         else QOS_DEFAULTS['cnp_dscp'] - 2))
    return desired


# --- reading ------------------------------------------------------------------

def rdma_device(fs, iface):
    """The RDMA device and ports bound to ``iface``: ``(dev, [ports])`` or ``(None, [])``."""
    for dev in fs.listdir('class/infiniband'):
        ports = [p for p in fs.listdir('class/infiniband/%s/ports' % dev)
                 if p.isdigit() and fs.read('class/infiniband/%s/ports/%s/gid_attrs/ndevs/0' % (dev, p)) == iface]
        if ports:
            return dev, [int(p) for p in ports]
    return None, []


def read_tos(fs, iface):
    dev, ports = rdma_device(fs, iface)
    if dev is None:
        raise Unsupported('%s has no RDMA device (no /sys/class/infiniband/*/ports/*/gid_attrs/ndevs/0 names it): load the NIC\'s '
                          'RDMA driver (mlx5_ib), or for soft-RoCE add an rxe link on it' % iface)
    if not fs.exists(CONFIGFS):
        raise Unsupported('RDMA-CM\'s configfs (/sys/kernel/config/rdma_cm) is missing: load rdma_cm (modprobe rdma_cm) and mount '
                          'configfs (mount -t configfs none /sys/kernel/config)')
    if not fs.exists('%s/%s' % (CONFIGFS, dev)):
        # No group for the device yet: RDMA-CM uses its built-in default ToS, 0.
        return dev, dict.fromkeys(ports, 0)
    base = '%s/%s/ports' % (CONFIGFS, dev)
    return dev, {p: fs.read_int('%s/%d/default_roce_tos' % (base, p)) for p in ports}


def read_ecn(fs, iface):
    base = ECN_DIR % iface
    if not fs.exists(base + '/roce_np'):
        raise Unsupported('%s has no ECN sysfs (/sys/class/net/%s/ecn/roce_np): NVIDIA\'s mlx5 driver (DOCA-OFED) has it; the '
                          'upstream mlx5 and rxe drivers do not' % (iface, iface))
    enabled = [p for p in range(8) if fs.read_int('%s/roce_np/enable/%d' % (base, p)) == 1
               and fs.read_int('%s/roce_rp/enable/%d' % (base, p)) == 1]
    return {'ecn_priorities': enabled, 'cnp_dscp': fs.read_int(base + '/roce_np/cnp_dscp'),
            'cnp_priority': fs.read_int(base + '/roce_np/cnp_802p_prio')}


def wanted_dscp_apps(desired):
    """The DSCP APP entries trust dscp puts on the PF: the RoCE DSCP to its priority, the CNP DSCP to the CNP's."""
    apps = {desired['tos'] >> 2: roce_priority(desired['tos'])}
    if desired['cnp_dscp'] is not None:
        apps.setdefault(desired['cnp_dscp'], desired['cnp_priority'] if desired['cnp_priority'] is not None else desired['cnp_dscp'] >> 3)
    return apps


def read_state(fs, iface, dcb, pause, desired):
    """What the PF has now, for the settings asked for; each unsupported one as its reason."""
    if not fs.exists('class/net/%s' % iface):
        raise GpufabricError(None, 'interface', iface, 'is not a network interface on this node', PF_FIX)
    state, unsupported = {}, {}
    wants = {k for k, v in desired.items() if v is not None}
    if 'tos' in wants:
        try:
            state['rdma_device'], state['tos'] = read_tos(fs, iface)
        except Unsupported as exc:
            unsupported['tos'] = '%s' % exc
    if wants & {'trust', 'pfc_priorities'}:
        try:
            state['dcb'] = dcb.read(iface)
        except Unsupported as exc:
            for key in wants & {'trust', 'pfc_priorities'}:
                unsupported[key] = '%s' % exc
    if 'pause_frames' in wants:
        try:
            state['pause'] = pause.read(iface)
        except Unsupported as exc:
            unsupported['pause_frames'] = '%s' % exc
    if wants & {'ecn_priorities', 'cnp_dscp', 'cnp_priority'}:
        try:
            state['ecn'] = read_ecn(fs, iface)
        except Unsupported as exc:
            for key in wants & {'ecn_priorities', 'cnp_dscp', 'cnp_priority'}:
                unsupported[key] = '%s' % exc
    return state, unsupported


# --- planning -------------------------------------------------------------------

def plan(desired, state, unsupported):
    """``(actions, before, after)``: each action a tuple naming what it writes; before/after per setting."""
    actions, before, after = [], {}, {}

    def want(key):
        return desired[key] is not None and key not in unsupported

    if want('tos'):
        before['tos'] = dict(state['tos'])
        after['tos'] = {p: desired['tos'] for p in state['tos']}
        for port, tos in sorted(state['tos'].items()):
            if tos != desired['tos']:
                actions.append(('tos', state['rdma_device'], port, desired['tos']))
    if want('trust'):
        apps = state['dcb']['dscp_prio']
        before['dscp_prio'] = dict(sorted(apps.items()))
        if desired['trust'] == 'dscp':
            wanted = wanted_dscp_apps(desired)
            missing = {d: p for d, p in wanted.items() if apps.get(d) != p}
            after['dscp_prio'] = dict(sorted({**apps, **wanted}.items()))
            if missing:
                actions.append(('dscp_prio_set', missing))
        else:
            after['dscp_prio'] = {}
            if apps:
                actions.append(('dscp_prio_del', dict(apps)))
    if want('pfc_priorities'):
        before['pfc_priorities'] = state['dcb']['pfc_priorities']
        after['pfc_priorities'] = desired['pfc_priorities']
        if state['dcb']['pfc_priorities'] != desired['pfc_priorities']:
            actions.append(('pfc', desired['pfc_priorities']))
    if want('pause_frames'):
        cur = state['pause']
        before['pause_frames'] = bool(cur['rx'] or cur['tx'])
        after['pause_frames'] = desired['pause_frames']
        if cur['rx'] != desired['pause_frames'] or cur['tx'] != desired['pause_frames']:
            actions.append(('pause', desired['pause_frames']))
    for key in ('ecn_priorities', 'cnp_dscp', 'cnp_priority'):
        if want(key):
            before[key], after[key] = state['ecn'][key], desired[key]
            if state['ecn'][key] != desired[key]:
                actions.append((key, desired[key], state['ecn'][key]))
    return actions, before, after


def describe(action):
    kind = action[0]
    if kind == 'tos':
        return 'set RDMA-CM default ToS of %s port %d to %d' % action[1:]
    if kind == 'dscp_prio_set':
        return 'add DSCP APP entries %s (dscp:priority; trust dscp)' % ' '.join('%d:%d' % i for i in sorted(action[1].items()))
    if kind == 'dscp_prio_del':
        return 'remove DSCP APP entries %s (trust pcp)' % ' '.join('%d:%d' % i for i in sorted(action[1].items()))
    if kind == 'pfc':
        return 'set PFC on priorities %s' % (action[1] or 'none')
    if kind == 'pause':
        return 'turn link pause %s' % ('on' if action[1] else 'off')
    return 'set %s to %s (was %s)' % (kind, action[1], action[2])


# --- applying -------------------------------------------------------------------

def apply(host, fs, iface, backends, actions):
    dcb, pause = backends
    for action in actions:
        kind = action[0]
        try:
            if kind == 'tos':
                _write_tos(fs, *action[1:])
            elif kind == 'dscp_prio_set':
                dcb.set_dscp_prio(iface, action[1])
            elif kind == 'dscp_prio_del':
                dcb.del_dscp_prio(iface, action[1])
            elif kind == 'pfc':
                dcb.set_pfc(iface, action[1])
            elif kind == 'pause':
                pause.set(iface, action[1])
            else:
                _write_ecn(fs, iface, kind, action[1])
        except (OSError, Unsupported) as exc:
            text = oserror_text(exc) if isinstance(exc, OSError) else '%s' % exc
            raise GpufabricError(host, 'interface', iface, 'could not %s: %s' % (describe(action), text),
                                 'check the NIC driver and firmware; the settings before this one are applied, run again to resume') from None


def _write_tos(fs, dev, port, tos):
    group = fs.path('%s/%s' % (CONFIGFS, dev))
    if not os.path.isdir(group):
        # RDMA-CM creates the device's ports/ group when the directory is made (configfs).
        os.mkdir(group)
    write_sysfs(fs.path('%s/%s/ports/%d/default_roce_tos' % (CONFIGFS, dev, port)), tos)


def _write_ecn(fs, iface, key, value):
    base = fs.path(ECN_DIR % iface)
    if key == 'ecn_priorities':
        for p in range(8):
            for point in ('roce_np', 'roce_rp'):
                write_sysfs('%s/%s/enable/%d' % (base, point, p), int(p in value))
    elif key == 'cnp_dscp':
        write_sysfs(base + '/roce_np/cnp_dscp', value)
    else:
        write_sysfs(base + '/roce_np/cnp_802p_prio', value)


# --- persistence ------------------------------------------------------------------

def unit_name(iface):
    unit = 'gpufabric-qos-%s.service' % iface
    if not valid_unit_name(unit):
        raise ValueError('unsafe unit name %r' % (unit,))
    return unit


def render_unit(iface, desired, applied, rdma_dev):
    """A oneshot unit applying the same settings at boot with iproute2's dcb, ethtool and configfs/sysfs writes.
    ``applied``: the settings the NIC supports (an unsupported one has no line). Rendered from the arguments."""
    pf = unit_quote(iface)
    dev_unit = netdev_device_unit(pf)
    lines = [
        '# Managed by Ansible (gpufabric.roce.roce_qos). Local edits are overwritten.',
        '[Unit]',
        'Description=gpufabric.roce RoCE QoS of %s' % pf,
        'BindsTo=%s' % dev_unit,
        'Wants=sys-kernel-config.mount',
        'After=%s sys-kernel-config.mount' % dev_unit,
        '',
        '[Service]',
        'Type=oneshot',
        'RemainAfterExit=yes',
    ]
    if 'trust' in applied and desired['trust'] == 'dscp':
        lines.append('ExecStart=/sbin/dcb app replace dev %s dscp-prio %s' % (
            pf, ' '.join('%d:%d' % i for i in sorted(wanted_dscp_apps(desired).items()))))
    elif 'trust' in applied:
        lines.append('ExecStart=/sbin/dcb app flush dev %s dscp-prio' % pf)
    if 'pfc_priorities' in applied:
        lines.append('ExecStart=/sbin/dcb pfc set dev %s prio-pfc %s' % (
            pf, ' '.join('%d:%s' % (p, 'on' if p in desired['pfc_priorities'] else 'off') for p in range(8))))
    if 'pause_frames' in applied:
        onoff = 'on' if desired['pause_frames'] else 'off'
        lines.append('ExecStart=/sbin/ethtool -A %s autoneg off rx %s tx %s' % (pf, onoff, onoff))
    ecn = '/sys/class/net/%s/ecn' % pf
    if 'ecn_priorities' in applied:
        for p in range(8):
            on = int(p in desired['ecn_priorities'])
            lines.append("ExecStart=/bin/sh -c 'echo %d > %s/roce_np/enable/%d; echo %d > %s/roce_rp/enable/%d'" % (on, ecn, p, on, ecn, p))
    if 'cnp_dscp' in applied:
        lines.append("ExecStart=/bin/sh -c 'echo %d > %s/roce_np/cnp_dscp'" % (desired['cnp_dscp'], ecn))
    if 'cnp_priority' in applied:
        lines.append("ExecStart=/bin/sh -c 'echo %d > %s/roce_np/cnp_802p_prio'" % (desired['cnp_priority'], ecn))
    if 'tos' in applied and rdma_dev:
        dev = unit_quote(rdma_dev)
        group = '/sys/kernel/config/rdma_cm/%s' % dev
        lines.append('ExecStart=-/sbin/modprobe rdma_cm')
        # The RDMA device may come after the netdev (mlx5_ib loads after mlx5_core): wait for it, as for the netdev.
        lines.append("ExecStart=/bin/sh -c 'for i in $$(seq 60); do [ -e /sys/class/infiniband/%s ] && break; sleep 1; done; "
                     "mkdir -p %s && for p in %s/ports/*; do echo %d > $$p/default_roce_tos; done'" % (dev, group, group, desired['tos']))
    lines += ['', '[Install]', 'WantedBy=%s' % dev_unit, '']
    return '\n'.join(lines)


def remove(host, params, check_mode, fs, persist_fn):
    """state=absent, the way back: the persisted unit goes, and so does the RDMA-CM ToS group this module made in
    configfs (RDMA-CM is back at its default ToS, 0). DCB, pause and ECN settings stay as they are: nothing records what
    they were before, and guessing would change a NIC the module may not have set; the result names them."""
    iface = params['interface']
    check_ifname(host, 'interface', iface, PF_FIX)
    dev, _ports = rdma_device(fs, iface)
    group = '%s/%s' % (CONFIGFS, dev) if dev else None
    actions = ['remove the RDMA-CM ToS group of %s (default ToS 0 again)' % dev] if group and fs.exists(group) else []
    result = {'changed': bool(actions), 'interface': iface, 'actions': actions, 'rdma_device': dev, 'unsupported': {},
              'warnings': [], 'left': ['trust', 'pfc_priorities', 'pause_frames', 'ecn_priorities', 'cnp_dscp', 'cnp_priority'],
              'diff': {'before': {'tos_group': bool(actions)}, 'after': {'tos_group': False}}}
    if actions and not check_mode:
        try:
            os.rmdir(fs.path(group))
        except OSError as exc:
            raise GpufabricError(host, 'interface', iface, 'could not remove %s: %s' % (fs.path(group), oserror_text(exc)),
                                 'check that no RDMA-CM user holds the group and run again') from None
    if persist_fn:
        presult = persist_fn(unit_name(iface), None, 'absent')
        result['persist'] = {k: presult[k] for k in ('unit', 'path', 'changed', 'daemon_reload', 'systemd_running')}
        if presult['changed']:
            result['changed'] = True
            result['diff']['before']['unit'], result['diff']['after']['unit'] = presult['before'], presult['after']
    return result


def run(host, params, check_mode, *, dcb, pause, fs=None, persist_fn=None):
    fs = fs or Sysfs(params.get('sysfs_root') or '/sys')
    iface = params['interface']
    if params.get('state') == 'absent':
        return remove(host, params, check_mode, fs, persist_fn)
    desired = validate_params(host, params)
    try:
        state, unsupported = read_state(fs, iface, dcb, pause, desired)
    except GpufabricError as exc:
        raise GpufabricError(host, exc.field, exc.value, exc.problem, exc.fix) from None
    except OSError as exc:
        raise GpufabricError(host, 'interface', iface, 'could not read its QoS settings: %s' % oserror_text(exc),
                             'check that %s is the rail\'s PF and that the task runs as root' % iface) from None
    if unsupported and params.get('unsupported', 'fail') == 'fail':
        key = sorted(unsupported, key=SETTINGS.index)[0]
        raise GpufabricError(host, key, desired[key], 'cannot be applied on %s: %s' % (iface, unsupported[key]),
                             'apply it with a NIC and driver that expose it, or pass unsupported=warn (roce_qos_unsupported: warn) to apply '
                             'the rest (%d setting(s) unsupported: %s)' % (len(unsupported), ', '.join(sorted(unsupported))))
    actions, before, after = plan(desired, state, unsupported)
    result = {'changed': bool(actions), 'interface': iface, 'actions': [describe(a) for a in actions],
              'rdma_device': state.get('rdma_device'), 'unsupported': unsupported,
              'warnings': ['%s: %s not applied: %s' % (iface, k, v) for k, v in sorted(unsupported.items())]}
    if actions and not check_mode:
        apply(host, fs, iface, (dcb, pause), actions)
    result['diff'] = {'before': before, 'after': after}
    if params.get('persist') and persist_fn:
        applied = [k for k in SETTINGS if desired[k] is not None and k not in unsupported]
        presult = persist_fn(unit_name(iface), render_unit(iface, desired, applied, state.get('rdma_device')), 'present')
        result['persist'] = {k: presult[k] for k in ('unit', 'path', 'changed', 'daemon_reload', 'systemd_running')}
        if presult['changed']:
            result['changed'] = True
            before['unit'], after['unit'] = presult['before'], presult['after']
        if presult.get('warning'):
            result['warnings'].append(presult['warning'])
    return result

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What gpufabric.roce.vlan_gateway persists: a oneshot unit that recreates the gateway at boot, and its routes in a
file beside it for one ``ip -batch``. Rendered from the arguments only, so the text is stable."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import hashlib
import re

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import (
    GpufabricError,
    netdev_device_unit,
    unit_quote,
    valid_unit_name,
)

_SAFE_PATH = re.compile(r'^/[A-Za-z0-9/._-]*$')


def unit_name(name):
    unit = 'gpufabric-vlan-%s.service' % name
    if not valid_unit_name(unit):
        raise ValueError('unsafe unit name %r' % (unit,))
    return unit


def routes_file_name(name):
    """The file of the gateway's routes, beside its unit: systemd loads only files named like units."""
    return unit_name(name)[:-len('.service')] + '.routes'


def routes_file_path(host, unit_dir, name):
    """Where the unit's ``ip -batch`` reads the routes. The path goes into an ExecStart line, so a unit_dir that
    would need quoting or a systemd specifier there is refused, not escaped."""
    if not _SAFE_PATH.match(unit_dir or ''):
        raise GpufabricError(host, 'unit_dir', unit_dir, 'is not an absolute path of letters, digits, "/", ".", "_" and "-" '
                             '(the unit reads its routes file by this path)', 'use a plain path such as /etc/systemd/system')
    return '%s/%s' % (unit_dir.rstrip('/'), routes_file_name(name))


def render_routes(desired):
    """The routes as ``ip -batch`` lines, one per route: a boot runs one ``ip`` for all of them, where one ExecStart
    line each would fork 80,000 processes on a node of a 10,000-node fabric, and the unit text (and its diff) would
    grow with the fleet."""
    name = unit_quote(desired['name'])
    lines = []
    for r in desired['routes'] or []:
        cmd = 'route replace %s' % r['dst']
        if r['via']:
            cmd += ' via %s' % r['via']
        cmd += ' dev %s proto static metric %d' % (name, r['metric'])
        if r['onlink']:
            cmd += ' onlink'
        lines.append(cmd)
    return '\n'.join(lines) + '\n' if lines else None


def render_unit(desired, routes_path=None):
    """A oneshot unit recreating the gateway with idempotent ip commands at boot; its routes from ``routes_path``
    (``render_routes``), read by one ``ip -batch`` (``-force``: every line is tried, and a failed one fails the unit).

    Rendered from the arguments only (not from the live state), so it is stable."""
    # Validated names pass through shlex.quote unchanged; an unvalidated one raises here
    # rather than reach "/bin/sh -c" (defence in depth behind validate_params).
    pf, name = unit_quote(desired['pf']), unit_quote(desired['name'])
    dev_unit = netdev_device_unit(pf)
    lines = [
        '# Managed by Ansible (gpufabric.roce.vlan_gateway). Local edits are overwritten.',
        '[Unit]',
        'Description=gpufabric.roce VLAN gateway %s (VLAN %d on %s)' % (name, desired['vlan_id'], pf),
        # Bound to the PF's device and started whenever it appears (see the sriov_vf unit).
        'BindsTo=%s' % dev_unit,
        'After=%s gpufabric-sriov-%s.service' % (dev_unit, pf),
        'Before=network-online.target',
        '',
        '[Service]',
        'Type=oneshot',
        'RemainAfterExit=yes',
        # "-": the link may already exist; the following commands converge it.
        'ExecStart=-/sbin/ip link add link %s name %s type vlan id %d' % (pf, name, desired['vlan_id']),
        'ExecStart=/sbin/ip link set dev %s up' % pf,
        'ExecStart=/sbin/ip link set dev %s%s up' % (name, ' mtu %d' % desired['mtu'] if desired['mtu'] else ''),
    ]
    for addr in desired['addresses'] or []:
        lines.append('ExecStart=/sbin/ip address replace %s dev %s' % (addr, name))
    if desired['routes'] and routes_path:
        lines.append('ExecStart=/sbin/ip -force -batch %s' % routes_path)
    conf = '/proc/sys/net/ipv4/conf'
    if desired.get('forwarding') is not None:
        lines.append("ExecStart=/bin/sh -c 'echo %d > %s/%s/forwarding'" % (int(desired['forwarding']), conf, name))
    if desired.get('rp_filter') is not None:
        rp = desired['rp_filter']
        lines.append("ExecStart=/bin/sh -c 'echo %d > %s/%s/rp_filter'" % (rp, conf, name))
        # The kernel applies max(all, interface): lower all only when it is higher.
        lines.append("ExecStart=/bin/sh -c '[ $$(cat %s/all/rp_filter) -le %d ] || echo %d > %s/all/rp_filter'" % (conf, rp, rp, conf))
    if desired.get('send_redirects') is not None:
        sr = int(desired['send_redirects'])
        lines.append("ExecStart=/bin/sh -c 'echo %d > %s/%s/send_redirects'" % (sr, conf, name))
        if not sr:
            lines.append("ExecStart=/bin/sh -c 'echo 0 > %s/all/send_redirects'" % conf)
    lines += ['', '[Install]', 'WantedBy=%s' % dev_unit, '']
    return '\n'.join(lines)


def _file_summary(text):
    # The routes file grows with the fleet; the diff names it by its size and digest (the routes are in the diff already).
    if text is None:
        return None
    return {'routes': text.count('\n'), 'sha256': hashlib.sha256(text.encode('utf-8')).hexdigest()}


def persist(desired, result, path, persist_fn, file_fn):
    """The unit and its routes file into ``result`` (its ``persist``, ``changed``, diff and warnings): the file written
    before the unit that reads it, removed after it."""
    before, after = result['diff']['before'], result['diff']['after']
    present = desired['state'] == 'present'
    routes_text = render_routes(desired) if present else None
    fresult = file_fn(path, routes_text) if file_fn and present else None
    content = render_unit(desired, path) if present else None
    presult = persist_fn(unit_name(desired['name']), content, desired['state']) if persist_fn else None
    if file_fn and not present:
        fresult = file_fn(path, None)
    if presult is not None:
        result['persist'] = {k: presult[k] for k in ('unit', 'path', 'changed', 'daemon_reload', 'systemd_running')}
        if presult['changed']:
            result['changed'] = True
            before['unit'] = presult['before']
            after['unit'] = presult['after']
        if presult.get('warning'):
            result['warnings'].append(presult['warning'])
    if fresult is not None:
        result.setdefault('persist', {})['routes_file'] = path
        if fresult['changed']:
            result['changed'] = result['persist']['changed'] = True
            before['routes_file'] = _file_summary(fresult['before'])
            after['routes_file'] = _file_summary(fresult['after'])

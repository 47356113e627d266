# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCIe health of the RDMA NICs and NVIDIA GPUs (issue 19): negotiated against maximum link speed and width, Max_Read_Request
and Max_Payload size, relaxed ordering, ATS, and ACS on the bridges above the device.

Read from sysfs only (``/sys/bus/pci/devices/<bdf>/{current,max}_link_{speed,width}`` and ``config``); nothing is run and
no ``lspci`` output is parsed. The config space layout is the PCI Express Base Specification's (rev. 5.0 section numbers in
the comments); there is no lightweight parser of it on PyPI or in Debian that the nodes would have, so this is a small
reader of the standard registers, tested against config space bytes built per the spec.

Without CAP_SYS_ADMIN the kernel returns only the first 64 bytes of ``config`` (the header, not the capabilities): the
values read from config space are then V(None) with ``config_reason`` saying so, never guessed. The link speed and width
files are world-readable."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import re
import struct

from ansible_collections.gpufabric.roce.plugins.module_utils._common import pci_topology as topo

# PCI Express Capability structure (PCIe 5.0, 7.5.3), offsets from the capability.
PCI_EXP_DEVCAP = 0x04          # Device Capabilities (7.5.3.3): bits 2:0 Max_Payload_Size Supported (128 << value)
PCI_EXP_DEVCTL = 0x08          # Device Control (7.5.3.4)
DEVCTL_RELAX_EN = 0x0010       # bit 4: Enable Relaxed Ordering
DEVCTL_PAYLOAD_SHIFT = 5       # bits 7:5: Max_Payload_Size (128 << value)
DEVCTL_READRQ_SHIFT = 12       # bits 14:12: Max_Read_Request_Size (128 << value)
LOW_MAX_READ_REQUEST = 256      # fwts maxreadreq: below this, a note
# ATS Extended Capability (PCIe 5.0, 10.5.1): header, ATS Capability register (16 bits) at +0x04,
# ATS Control register (16 bits) at +0x06, bit 15 Enable.
PCI_EXT_CAP_ID_ATS = 0x000F
PCI_ATS_CTRL = 0x06
ATS_CTRL_ENABLE = 0x8000

SPEED_RE = re.compile(r'^\s*([0-9]+(?:\.[0-9]+)?)\s*GT/s')


def parse_speed(text):
    """``16.0 GT/s PCIe`` (Linux 5.x and later), ``8 GT/s`` (older kernels) -> 16.0, 8.0; ``Unknown``, absent -> None."""
    m = SPEED_RE.match(text or '')
    return float(m.group(1)) if m else None


def _width(text):
    """``16`` -> 16; 0 (link down: no lanes negotiated) and anything unreadable -> None."""
    try:
        value = int((text or '').strip())
    except ValueError:
        return None
    return value if value > 0 else None


def link_state(fs, bdf, port=None):
    """Negotiated and maximum link of a function (the kernel's ``current_link_*`` from Link Status, ``max_link_*`` from Link
    Capabilities), and the maximum of the port above it, ``port``: a card that can do more than its slot runs at the slot's
    maximum, which is a limit of the platform, not a link that trained down. All V(None) when the function is not PCIe."""
    base = 'bus/pci/devices/%s/' % bdf
    speed, max_speed = fs.read(base + 'current_link_speed'), fs.read(base + 'max_link_speed')
    width, max_width = _width(fs.read(base + 'current_link_width')), _width(fs.read(base + 'max_link_width'))
    port_speed = fs.read('bus/pci/devices/%s/max_link_speed' % port) if port else None
    port_width = _width(fs.read('bus/pci/devices/%s/max_link_width' % port)) if port else None
    gts, max_gts, port_gts = parse_speed(speed), parse_speed(max_speed), parse_speed(port_speed)
    # What the link should train to: the lower maximum of the two ends (the device's alone when the port's is unknown).
    want_gts = min(x for x in (max_gts, port_gts) if x is not None) if max_gts is not None else None
    want_width = min(x for x in (max_width, port_width) if x is not None) if max_width is not None else None
    down_speed = gts < want_gts if gts is not None and want_gts is not None else None
    down_width = width < want_width if width is not None and want_width is not None else None
    return {
        'speed': speed, 'max_speed': max_speed, 'width': width, 'max_width': max_width,
        'speed_gts': gts, 'max_speed_gts': max_gts,
        'port': port, 'port_max_speed': port_speed, 'port_max_width': port_width,
        'downtrained_speed': down_speed, 'downtrained_width': down_width,
        'downtrained': None if down_speed is None and down_width is None else bool(down_speed or down_width),
        'slot_limited': bool((port_gts is not None and max_gts is not None and port_gts < max_gts)
                             or (port_width is not None and max_width is not None and port_width < max_width)),
    }


def config_reason(config):
    """Why the capabilities cannot be read from ``config`` bytes, or None when they can (at least 256 bytes)."""
    if config is None:
        return 'config space not readable'
    if len(config) <= topo.CONFIG_HEADER_BYTES:
        return ('unreadable (needs root): only %d bytes of config space readable, the kernel returns the header alone to a '
                'reader without CAP_SYS_ADMIN; run rdma_facts with become' % len(config))
    if len(config) < topo.CONFIG_LEGACY_BYTES:
        return 'only %d bytes of config space readable' % len(config)
    return None


def device_control(config):
    """Max_Read_Request, Max_Payload (and the supported maximum) and relaxed ordering from the PCI Express capability:
    ``{pcie_capability, max_read_request, max_payload, max_payload_supported, relaxed_ordering}``, V(None) each when
    unknown (short config space, no capability list, a conventional PCI function)."""
    out = {'pcie_capability': None, 'max_read_request': None, 'max_payload': None, 'max_payload_supported': None,
           'relaxed_ordering': None}
    if config_reason(config):
        return out
    cap = topo.find_cap(config, topo.PCI_CAP_ID_EXP)
    if cap is None or cap + PCI_EXP_DEVCTL + 2 > len(config):
        return out
    devcap = struct.unpack_from('<I', config, cap + PCI_EXP_DEVCAP)[0]
    devctl = struct.unpack_from('<H', config, cap + PCI_EXP_DEVCTL)[0]
    out.update({
        'pcie_capability': '0x%02x' % cap,
        'max_read_request': 128 << ((devctl >> DEVCTL_READRQ_SHIFT) & 0x7),
        'max_payload': 128 << ((devctl >> DEVCTL_PAYLOAD_SHIFT) & 0x7),
        'max_payload_supported': 128 << (devcap & 0x7),
        'relaxed_ordering': bool(devctl & DEVCTL_RELAX_EN),
    })
    return out


def ats_state(config):
    """``present`` (V(None) when the extended config space cannot be read), ``enabled`` (the control register's Enable bit)
    and ``control`` (hex) of the ATS extended capability."""
    if config is None or len(config) < topo.CONFIG_EXTENDED_BYTES:
        return {'present': None, 'enabled': None, 'control': None}
    off = topo.find_ext_cap(config, PCI_EXT_CAP_ID_ATS)
    if off is None:
        return {'present': False, 'enabled': None, 'control': None}
    ctrl = struct.unpack_from('<H', config, off + PCI_ATS_CTRL)[0]
    return {'present': True, 'enabled': bool(ctrl & ATS_CTRL_ENABLE), 'control': '0x%04x' % ctrl}


def _link_text(gts_text, width):
    speed = (gts_text or 'unknown speed').replace(' PCIe', '')
    return '%s x%s' % (speed, width if width is not None else '?')


def _findings(entry):
    """Plain-language findings of one device entry, each ``{pci_address, device, role, kind, severity, message}``.

    ``downtrained`` (a problem: the link trained below what both ends support - the classic silent halving of bandwidth) is
    what preflight_pcie_downtrained judges; a GPU whose link only runs slower than its maximum is ``gpu_link_speed`` (a note:
    NVIDIA GPUs lower the link speed when idle); ``slot_limited`` (a note) a card that can do more than its slot;
    ``max_read_request`` (a note) a MaxReadReq below 256 bytes."""
    link = entry['link']
    label = '%s (%s)' % (entry['pci_address'], ', '.join(entry['names']) or entry['role'])
    now = _link_text(link['speed'], link['width'])
    found = []

    def add(kind, severity, message):
        found.append({'pci_address': entry['pci_address'], 'device': ', '.join(entry['names']), 'role': entry['role'],
                      'kind': kind, 'severity': severity, 'message': message})

    speed_down, width_down = link['downtrained_speed'], link['downtrained_width']
    if entry['role'] == 'gpu' and speed_down and not width_down:
        add('gpu_link_speed', 'note',
            '%s: link %s, capable of %s; NVIDIA GPUs lower the link speed when idle, so recheck under load '
            '(nvidia-smi -q -d PCIE)' % (label, now, _link_text(link['max_speed'], link['max_width'])))
    elif speed_down or width_down:
        what = ' and '.join(w for w, on in (('speed', speed_down), ('width', width_down)) if on)
        add('downtrained', 'problem', '%s: link %s, capable of %s (downtrained: %s)'
            % (label, now, _link_text(link['max_speed'], link['max_width']), what))
    if link['slot_limited']:
        add('slot_limited', 'note', '%s: the card supports %s but the port above it (%s) only %s'
            % (label, _link_text(link['max_speed'], link['max_width']), link['port'],
               _link_text(link['port_max_speed'], link['port_max_width'])))
    # The firmware test suite's rule (fwts maxreadreq, LowMaxReadReq): below 256 bytes the device splits every DMA read
    # into so many requests that throughput suffers. Firmware usually sets it; a note, not a problem, as it is a trade-off.
    mrrs = entry.get('max_read_request')
    if mrrs is not None and mrrs < LOW_MAX_READ_REQUEST:
        add('max_read_request', 'note', '%s: MaxReadReq %d bytes, below %d: each DMA read is split into %d-byte requests '
            '(set by the firmware or BIOS; the driver may raise it)' % (label, mrrs, LOW_MAX_READ_REQUEST, mrrs))
    return found


def device_health(fs, bdf, role, names, *, config_of, acs_of):
    """The ``pcie`` entry of one function: ``link``, ``config_reason``, the Device Control values, ``ats`` and ``acs`` (the
    state of every bridge above it, from ``_common.pci_topology.acs_state``)."""
    node = topo.pci_node(fs, bdf)
    bridges = node['bridges']
    config = config_of(bdf)
    entry = {
        'pci_address': bdf, 'role': role, 'names': list(names),
        'link': link_state(fs, bdf, bridges[-1] if bridges else None),
        'config_bytes': len(config) if config is not None else 0,
        'config_reason': config_reason(config),
    }
    entry.update(device_control(config))
    entry['ats'] = ats_state(config)
    entry['acs'] = {b: acs_of(b) for b in bridges}
    return entry


def gather(fs, nics, gpus, config_of=None, acs_of=None):
    """``{devices, findings, ...}``: ``devices`` per PCI address, the RDMA NICs' PCI functions (``nics``: the
    ``gpu_nic_topology.nics`` of ``_common.pci_topology``, VFs left out, by RDMA device name; several names may share a function)
    and the GPUs (``gpus``: ``_common.pci_topology.nvidia_gpus`` entries); ``findings`` of them all.

    ``config_of(bdf)`` gives config space bytes (a cache shared with the topology), ``acs_of(bdf)`` a bridge's ACS state."""
    if config_of is None:
        cache = {}

        def config_of(bdf):
            if bdf not in cache:
                cache[bdf] = topo.read_config(fs, bdf)
            return cache[bdf]
    if acs_of is None:
        def acs_of(bdf):
            return topo.acs_state(config_of(bdf))['acs']
    wanted = {}
    for name, nic in sorted(nics.items()):
        if nic.get('pci_address'):
            role, names, netdevs = wanted.setdefault(nic['pci_address'], ('nic', [], []))
            names.append(name)
            netdevs.extend(n for n in nic.get('netdevs') or [] if n not in netdevs)
    for gpu in gpus:
        wanted.setdefault(gpu['pci_address'], ('gpu', [], []))[1].append(gpu.get('name') or 'GPU')
    devices = {}
    for bdf, (role, names, netdevs) in sorted(wanted.items()):
        devices[bdf] = device_health(fs, bdf, role, names, config_of=config_of, acs_of=acs_of)
        devices[bdf]['netdevs'] = netdevs
    findings = [f for bdf in sorted(devices) for f in _findings(devices[bdf])]
    unreadable = sorted(b for b, d in devices.items() if d['config_reason'])
    return {
        'devices': devices,
        'findings': findings,
        'downtrained': [f['pci_address'] for f in findings if f['kind'] == 'downtrained'],
        'config_unreadable': unreadable,
        'config_reason': devices[unreadable[0]]['config_reason'] if unreadable else None,
    }

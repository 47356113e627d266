# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU<->NIC PCIe topology from sysfs, classified as ``nvidia-smi topo -m`` does, ACS state of the
bridges on those paths (from config space) and whether nvidia_peermem is loaded.

Pure functions over the ``Sysfs`` abstraction of ``_common.core`` (fixture testable); nothing is run.

Classes, best first (NVML's ``nvmlGpuTopologyLevel_t``, the legend of ``nvidia-smi topo -m``):

- ``PIX``  at most a single PCIe bridge/switch between the two (same switch, or same bridge);
- ``PXB``  several PCIe bridges/switches, without traversing the host bridge;
- ``PHB``  through a PCIe host bridge (same root complex ``pciDDDD:BB``, different root ports);
- ``NODE`` through the interconnect between host bridges within one NUMA node;
- ``SYS``  across NUMA nodes (the SMP interconnect: QPI/UPI, Infinity Fabric).

A PCIe switch appears in sysfs as an upstream port with its downstream ports below it; both are
bridges, and a path through one switch crosses up to three of them (down port, up port, down
port). Like NVML, a switch counts once: the bridges of a path are grouped into switches, from the
PCIe port type in config space when readable (root), otherwise from their position in the chain
(root port, then upstream/downstream pairs), and ``port_type_source`` says which.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import re
import struct

NVIDIA_VENDOR = '0x10de'
DISPLAY_CLASS_PREFIX = '0x03'  # 0x0300 VGA, 0x0302 3D controller, 0x0380 other display controller
PEERMEM_MODULES = ('nvidia_peermem', 'nv_peer_mem')

CLASSES = ('PIX', 'PXB', 'PHB', 'NODE', 'SYS')
CLASS_RANK = {c: i for i, c in enumerate(CLASSES)}
AFFINE_CLASSES = ('PIX', 'PXB')

ROOT_COMPLEX_RE = re.compile(r'^pci([0-9a-f]{4}):([0-9a-f]{2})$')
BDF_RE = re.compile(r'^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$')

# Config space
CONFIG_HEADER_BYTES = 64          # what an unprivileged read of .../config returns
CONFIG_LEGACY_BYTES = 256         # standard config space (capability list)
CONFIG_EXTENDED_BYTES = 4096      # PCIe extended config space (ACS lives here)
PCI_STATUS = 0x06
PCI_STATUS_CAP_LIST = 0x10
PCI_CAPABILITY_LIST = 0x34
PCI_CAP_ID_EXP = 0x10
PCI_EXT_CAP_START = 0x100
PCI_EXT_CAP_ID_ACS = 0x000D
PCIE_PORT_TYPES = {
    0x0: 'endpoint', 0x1: 'legacy_endpoint', 0x4: 'root_port', 0x5: 'upstream_port',
    0x6: 'downstream_port', 0x7: 'pcie_to_pci_bridge', 0x8: 'pci_to_pcie_bridge',
    0x9: 'rc_integrated_endpoint', 0xa: 'rc_event_collector',
}
# ACS Control register bits (PCIe base spec 7.7.8.3)
ACS_BITS = (
    ('source_validation', 0x01),
    ('translation_blocking', 0x02),
    ('request_redirect', 0x04),
    ('completion_redirect', 0x08),
    ('upstream_forwarding', 0x10),
    ('egress_control', 0x20),
    ('direct_translated_p2p', 0x40),
)


# --- sysfs paths --------------------------------------------------------------------------------

def parse_pci_path(resolved):
    """``/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:05:00.0`` ->
    ``('pci0000:00', ['0000:00:01.0', '0000:01:00.0', '0000:02:08.0', '0000:05:00.0'])``.

    The chain runs from the device on the root bus down to the device itself; every element but
    the last is an upstream bridge. The last ``pciDDDD:BB`` component is the root complex (under
    Hyper-V it follows VMBus components). ``(None, [])`` when the path has no root complex."""
    if not resolved:
        return None, []
    parts = [p for p in resolved.split('/') if p]
    root_index = None
    for i, part in enumerate(parts):
        if ROOT_COMPLEX_RE.match(part):
            root_index = i
    if root_index is None:
        return None, []
    chain = [p for p in parts[root_index + 1:] if BDF_RE.match(p)]
    return parts[root_index], chain


def read_config(fs, bdf, size=CONFIG_EXTENDED_BYTES):
    """Config space bytes of a PCI function, as many as the kernel returns (64 for a reader without
    CAP_SYS_ADMIN, 256 for conventional PCI, 4096 for PCIe with privileges), or None."""
    try:
        with open(fs.path('bus/pci/devices/%s/config' % bdf), 'rb') as f:
            return f.read(size)
    except OSError:
        return None


def pcie_port_type(config):
    """PCIe Device/Port Type from the PCI Express capability, or None when it cannot be read
    (short config space, no capability list, no PCIe capability)."""
    if config is None or len(config) < CONFIG_LEGACY_BYTES:
        return None
    ptr = find_cap(config, PCI_CAP_ID_EXP)
    if ptr is None:
        return None
    flags = struct.unpack_from('<H', config, ptr + 2)[0]  # PCI Express Capabilities register, bits 7:4 port type
    return PCIE_PORT_TYPES.get((flags >> 4) & 0xF, 'type_%d' % ((flags >> 4) & 0xF))


def find_cap(config, cap_id):
    """Offset of a capability in the standard capability list, or None (PCI Local Bus 3.0, 6.7; PCIe 5.0, 7.5.1.1.x):
    Status bit 4 says a list exists, its pointer is at 0x34, each entry is ``id`` (byte 0) and ``next`` (byte 1), offsets
    are dword aligned and at or above 0x40 (past the header), and 48 entries at most fit in 256 bytes. A list that runs past
    the bytes read (64 for a reader without root) ends the walk: the caller tells a short read apart by its length."""
    if config is None or len(config) <= PCI_CAPABILITY_LIST:
        return None
    if not struct.unpack_from('<H', config, PCI_STATUS)[0] & PCI_STATUS_CAP_LIST:
        return None
    ptr = config[PCI_CAPABILITY_LIST] & 0xFC
    seen = 0
    while ptr >= 0x40 and ptr + 4 <= len(config) and seen < 48:
        if config[ptr] == cap_id:
            return ptr
        ptr = config[ptr + 1] & 0xFC
        seen += 1
    return None


def find_ext_cap(config, cap_id):
    """Offset of a PCIe extended capability (list from 0x100), or None."""
    off = PCI_EXT_CAP_START
    seen = 0
    while off and PCI_EXT_CAP_START <= off <= len(config) - 4 and seen < 512:
        header = struct.unpack_from('<I', config, off)[0]
        if header in (0, 0xFFFFFFFF):
            return None
        if header & 0xFFFF == cap_id:
            return off
        off = (header >> 20) & 0xFFC
        seen += 1
    return None


def acs_state(config):
    """ACS of a bridge from its config space bytes.

    ``acs`` is ``redirect`` (P2P Request or Completion Redirect on: peer-to-peer through this
    bridge is sent up to the root complex), ``no_redirect`` (ACS present, neither redirect on),
    ``absent`` (no ACS extended capability) or ``unknown`` (``reason`` says why)."""
    result = {'acs': 'unknown', 'reason': None, 'capability': None, 'control': None}
    result.update({name: None for name, _bit in ACS_BITS})
    if config is None:
        result['reason'] = 'config space not readable'
        return result
    if len(config) < CONFIG_EXTENDED_BYTES:
        result['reason'] = ('only %d bytes of config space readable (the kernel returns the first 64 to a reader '
                            'without CAP_SYS_ADMIN; run rdma_facts with become)' % len(config)
                            if len(config) <= CONFIG_HEADER_BYTES else
                            'only %d bytes of config space readable (no PCIe extended config space)' % len(config))
        return result
    off = find_ext_cap(config, PCI_EXT_CAP_ID_ACS)
    if off is None:
        result['acs'] = 'absent'
        return result
    cap, ctrl = struct.unpack_from('<HH', config, off + 4)
    result['capability'] = '0x%04x' % cap
    result['control'] = '0x%04x' % ctrl
    for name, bit in ACS_BITS:
        result[name] = bool(ctrl & bit)
    result['acs'] = 'redirect' if ctrl & 0x0C else 'no_redirect'
    return result


# --- devices ------------------------------------------------------------------------------------

def _numa(fs, bdf):
    value = fs.read_int('bus/pci/devices/%s/numa_node' % bdf)
    return value if value is not None and value >= 0 else None


def pci_node(fs, bdf):
    """Where a PCI function sits: root complex, chain of upstream bridges, NUMA node."""
    root, chain = parse_pci_path(fs.realpath('bus/pci/devices/%s' % bdf))
    if chain and chain[-1] != bdf:
        chain = chain + [bdf]
    numa = _numa(fs, bdf)
    if numa is None:
        for bridge in reversed(chain[:-1]):
            numa = _numa(fs, bridge)
            if numa is not None:
                break
    return {
        'pci_address': bdf,
        'root_complex': root,
        'bridges': chain[:-1],
        'numa_node': numa,
    }


def nvidia_display_functions(fs):
    """Each NVIDIA display-class PCI function (vendor 0x10de, class 0x03xxxx: VGA, 3D controller,
    other display controller) as ``(pci_address, sysfs directory, class)``, in PCI bus order, which
    is the order of ``nvidia-smi`` and of CUDA with ``CUDA_DEVICE_ORDER=PCI_BUS_ID``. The one
    enumeration of GPUs: ``nvidia_gpus`` here and in ``_host.rdma_facts`` describe what it yields."""
    for bdf in fs.listdir('bus/pci/devices'):
        base = 'bus/pci/devices/%s' % bdf
        if fs.read(base + '/vendor') != NVIDIA_VENDOR:
            continue
        cls = fs.read(base + '/class') or ''
        if cls.startswith(DISPLAY_CLASS_PREFIX):
            yield bdf, base, cls


def nvidia_gpus(fs):
    """The NVIDIA GPUs (``nvidia_display_functions``) with their place in the PCI tree
    (``pci_node``), index and ``GPU<index>`` name."""
    gpus = []
    for bdf, base, cls in nvidia_display_functions(fs):
        gpu = pci_node(fs, bdf)
        gpu.update({
            'index': len(gpus),
            'name': 'GPU%d' % len(gpus),
            'device_id': fs.read(base + '/device'),
            'class': cls,
            'driver': fs.link_name(base + '/driver'),
        })
        gpus.append(gpu)
    return gpus


def rdma_nics(fs, devices):
    """The RDMA devices that have a PCI function (``rdma_devices`` of ``_host.rdma_facts``), by name.
    SR-IOV VFs are left out: they share their PF's path, and rails are PFs."""
    nics = {}
    for name in sorted(devices):
        dev = devices[name]
        if not dev.get('pci_address') or fs.exists('bus/pci/devices/%s/physfn' % dev['pci_address']):
            continue
        nic = pci_node(fs, dev['pci_address'])
        nic.update({'name': name, 'netdevs': list(dev.get('netdevs') or []),
                    'pci_address_source': dev.get('pci_address_source')})
        nics[name] = nic
    return nics


# --- classification -----------------------------------------------------------------------------

class PortTypes:
    """PCIe port type of each bridge: config space when readable, else position in the chain."""

    def __init__(self, fs):
        self.fs = fs
        self.cache = {}
        self.configs = {}

    def config(self, bdf):
        """Config space bytes, read once per bridge (ACS reads them again from here)."""
        if bdf not in self.configs:
            self.configs[bdf] = read_config(self.fs, bdf)
        return self.configs[bdf]

    def of(self, bdf):
        if bdf not in self.cache:
            self.cache[bdf] = pcie_port_type(self.config(bdf))
        return self.cache[bdf]


_PortTypes = PortTypes  # the name it had


def _switch_units(bridges, chains, port_types):
    """Group bridges into units a path crosses: a PCIe switch (upstream port plus its downstream
    ports) is one unit, any other bridge (root port, PCI bridge) is its own. Returns (units, source)."""
    positions = {}
    for chain in chains:
        for i, bdf in enumerate(chain):
            positions[bdf] = (i, chain[i - 1] if i else None)
    types = {b: port_types.of(b) for b in bridges}
    source = 'config' if bridges and all(types[b] for b in bridges) else 'position'
    units = []
    for b in bridges:
        index, parent = positions.get(b, (0, None))
        if source == 'config':
            # a downstream port belongs to the switch of its upstream port
            unit = parent if types[b] == 'downstream_port' and parent and port_types.of(parent) == 'upstream_port' else b
        elif index == 0:
            unit = b                                  # root port
        elif index % 2 == 1:
            unit = b                                  # switch upstream port
        else:
            unit = parent                             # switch downstream port: its upstream port's switch
        if unit not in units:
            units.append(unit)
    return units, source


def _relation(cls, hops, via, switches=None, source=None):
    return {'class': cls, 'hops': hops, 'via': via, 'switches': switches, 'port_type_source': source}


def classify(a, b, port_types):
    """Class, hop count and crossed bridges between two ``pci_node`` results: ``{class, hops, via,
    switches, port_type_source}`` (the last two only below a shared bridge, else None)."""
    chain_a = a['bridges'] + [a['pci_address']]
    chain_b = b['bridges'] + [b['pci_address']]
    if a['root_complex'] is None or b['root_complex'] is None:
        return _relation(None, None, [])
    if a['root_complex'] != b['root_complex']:
        via = a['bridges'] + b['bridges']
        # NUMA node unknown on either side (-1: NUMA off or not reported): taken as the same node
        same_node = a['numa_node'] == b['numa_node'] or a['numa_node'] is None or b['numa_node'] is None
        return _relation('NODE', len(via) + 2, via) if same_node else _relation('SYS', len(via) + 3, via)
    common = 0
    while common < min(len(chain_a), len(chain_b)) and chain_a[common] == chain_b[common]:
        common += 1
    if common == 0:
        via = a['bridges'] + b['bridges']
        return _relation('PHB', len(via) + 1, via)
    # Deepest shared element; below it, each side's own upstream bridges.
    via = [chain_a[common - 1]] + chain_a[common:-1] + chain_b[common:-1]
    via = [x for x in via if x not in (a['pci_address'], b['pci_address'])]
    units, source = _switch_units(via, [chain_a, chain_b], port_types)
    return _relation('PIX' if len(units) <= 1 else 'PXB', len(via), via, len(units), source)


def _best(candidates):
    """Best of ``(class, hops, tiebreak, payload)``: best class, then fewest hops, then tiebreak."""
    ranked = [c for c in candidates if c[0] is not None]
    if not ranked:
        return None
    return min(ranked, key=lambda c: (CLASS_RANK[c[0]], c[1], c[2]))[3]


def topology(fs, devices, port_types=None):
    """GPUs, RDMA NICs and the class of every GPU<->NIC pair, each GPU's nearest NIC, each NIC's
    nearest GPU, and the ACS state of every bridge on those paths. ``port_types`` (a ``PortTypes``)
    lets a caller share the config space reads."""
    port_types = port_types or PortTypes(fs)
    gpus = nvidia_gpus(fs)
    nics = rdma_nics(fs, devices)
    matrix = {}
    pairs = []
    for gpu in gpus:
        row = matrix.setdefault(gpu['pci_address'], {})
        for name, nic in nics.items():
            result = classify(gpu, nic, port_types)
            row[name] = result['class']
            pair = {'gpu': gpu['pci_address'], 'gpu_name': gpu['name'], 'nic': name,
                    'nic_pci_address': nic['pci_address']}
            pair.update(result)
            pairs.append(pair)
    for gpu in gpus:
        mine = [p for p in pairs if p['gpu'] == gpu['pci_address']]
        gpu['nearest_nic'] = _best([(p['class'], p['hops'], (p['nic_pci_address'], p['nic']),
                                     {'nic': p['nic'], 'pci_address': p['nic_pci_address'],
                                      'class': p['class'], 'hops': p['hops']}) for p in mine])
    for name, nic in nics.items():
        mine = [p for p in pairs if p['nic'] == name]
        nic['nearest_gpu'] = _best([(p['class'], p['hops'], (p['gpu'],),
                                     {'gpu': p['gpu'], 'name': p['gpu_name'],
                                      'index': int(p['gpu_name'][3:]), 'class': p['class'],
                                      'hops': p['hops']}) for p in mine])
    for bdf in set(b for p in pairs for b in p['via']):
        port_types.of(bdf)
    return {
        'gpus': gpus,
        'nics': nics,
        'matrix': matrix,
        'pairs': pairs,
        'port_types': dict(sorted(port_types.cache.items())),
        'config': port_types.config,
    }


def acs_report(fs, pairs, config=None):
    """ACS state of every bridge crossed by a GPU<->NIC pair; ``redirect`` lists the bridges with
    P2P request or completion redirect on (each with the GPUs and NICs whose paths cross it),
    ``unknown`` those whose extended config space could not be read."""
    bridges = {}
    users = {}
    for pair in pairs:
        for bdf in pair['via']:
            if bdf not in bridges:
                bridges[bdf] = acs_state(config(bdf) if config else read_config(fs, bdf))
            gpus, nics = users.setdefault(bdf, ([], []))
            if pair['gpu'] not in gpus:
                gpus.append(pair['gpu'])
            if pair['nic'] not in nics:
                nics.append(pair['nic'])
    findings = []
    for bdf in sorted(bridges):
        state = bridges[bdf]
        if state['acs'] == 'redirect':
            findings.append({'bridge': bdf, 'request_redirect': state['request_redirect'],
                             'completion_redirect': state['completion_redirect'],
                             'control': state['control'], 'gpus': sorted(users[bdf][0]),
                             'nics': sorted(users[bdf][1])})
    unknown = sorted(b for b, s in bridges.items() if s['acs'] == 'unknown')
    return {
        'bridges': {b: bridges[b] for b in sorted(bridges)},
        'redirect': findings,
        'unknown': unknown,
        'unknown_reason': bridges[unknown[0]]['reason'] if unknown else None,
    }


def peermem_state(fs, gpus_present):
    """nvidia_peermem (or the older nv_peer_mem) loaded: /sys/module, else /proc/modules."""
    loaded, source = None, None
    for name in PEERMEM_MODULES:
        if fs.exists('module/%s' % name):
            loaded, source = name, 'sysfs'
            break
    if loaded is None:
        modules = fs.read_proc('modules') or ''
        names = set(line.split(' ', 1)[0] for line in modules.splitlines())
        for name in PEERMEM_MODULES:
            if name in names:
                loaded, source = name, 'procfs'
                break
    return {
        'gpus_present': gpus_present,
        'loaded': loaded is not None,
        'module': loaded,
        'source': source,
        'missing': gpus_present and loaded is None,
    }


def gather(fs, devices, port_types=None):
    """The facts ``rdma_facts`` returns for the topology: ``gpus``, ``gpu_nic_topology``,
    ``nearest_nic``, ``acs`` and ``nvidia_peermem``."""
    topo = topology(fs, devices, port_types)
    gpus = topo['gpus']
    return {
        'gpus': gpus,
        'gpu_nic_topology': {
            'classes': list(CLASSES),
            'gpus': [g['pci_address'] for g in gpus],
            'nics': topo['nics'],
            'matrix': topo['matrix'],
            'pairs': topo['pairs'],
            'port_types': topo['port_types'],
        },
        'nearest_nic': {g['pci_address']: g['nearest_nic'] for g in gpus},
        'acs': acs_report(fs, topo['pairs'], topo['config']),
        'nvidia_peermem': peermem_state(fs, bool(gpus)),
    }


# --- judgement for preflight --------------------------------------------------------------------

def rdma_device_of_netdev(devices, netdev):
    """The RDMA device bound to a netdev: a hardware one (own PCI function) before a soft one."""
    matches = [d for d in devices.values() if netdev in (d.get('netdevs') or [])]
    matches.sort(key=lambda d: (d.get('pci_address_source') != 'device', d['name']))
    return matches[0]['name'] if matches else None


def rail_affinity(facts, pfs):
    """Judge the rails' NICs (PF netdev names) against the node's topology facts.

    Returns ``{gpus_present, skipped, rails, problems}``: ``rails`` one entry per PF (its RDMA
    device, nearest GPU and class), ``problems`` messages (without the host) for NICs not PIX/PXB
    to their nearest GPU, nvidia_peermem missing, and ACS redirect on a bridge between a rail's
    NIC and its nearest GPU; ``notes`` for what could not be judged (ACS unreadable)."""
    devices = facts.get('devices') or {}
    gpus = facts.get('gpus') or []
    topo = facts.get('gpu_nic_topology') or {}
    nics = topo.get('nics') or {}
    result = {'gpus_present': bool(gpus), 'skipped': None, 'rails': [], 'problems': [], 'notes': []}
    if not gpus:
        result['skipped'] = 'no NVIDIA GPU found; topology checks skipped'
        return result
    peermem = facts.get('nvidia_peermem') or {}
    if not peermem.get('loaded'):
        result['problems'].append(
            'nvidia_peermem is not loaded while %d NVIDIA GPU(s) are present, so GPUDirect RDMA is off '
            '(NCCL stages through host memory). Fix: modprobe nvidia_peermem (NVIDIA driver 470 or later; '
            'the GPU Operator loads it with driver.rdma.enabled=true) and add it to /etc/modules-load.d' % len(gpus))
    acs = facts.get('acs') or {}
    redirect = {f['bridge']: f for f in acs.get('redirect') or []}
    pairs = topo.get('pairs') or []
    for pf in pfs or []:
        dev = rdma_device_of_netdev(devices, pf)
        nic = nics.get(dev) if dev else None
        nearest = nic.get('nearest_gpu') if nic else None
        rail = {'pf': pf, 'rdma_device': dev, 'nearest_gpu': nearest,
                'class': nearest['class'] if nearest else None, 'acs_redirect': []}
        result['rails'].append(rail)
        if dev is None:
            result['problems'].append('%s has no RDMA device, so its GPU affinity cannot be judged. Fix: load the '
                                      'RDMA driver of %s (mlx5_ib)' % (pf, pf))
            continue
        if nic is None or nearest is None:
            result['problems'].append('no PCIe path between %s (%s) and any GPU could be traced (the NIC is not a PCI '
                                      'function, or its or the GPUs\' /sys/bus/pci/devices links lead to no PCI root '
                                      'complex), so its GPU affinity is unknown' % (pf, dev))
            continue
        if nearest['class'] not in AFFINE_CLASSES:
            result['problems'].append(
                '%s (%s, %s) is %s to its nearest GPU %s (%s): GPUDirect RDMA crosses %s. Fix: use a NIC on the '
                'same PCIe switch as a GPU (PIX/PXB) for this rail; see gpu_nic_topology.matrix'
                % (pf, dev, nic['pci_address'], nearest['class'], nearest['name'], nearest['gpu'],
                   {'PHB': 'the CPU host bridge', 'NODE': 'the interconnect between host bridges',
                    'SYS': 'the socket interconnect'}.get(nearest['class'], 'the CPU')))
        unknown = []
        for pair in pairs:
            if pair['nic'] != dev or pair['gpu'] != nearest['gpu']:
                continue
            for bdf in pair['via']:
                if bdf in redirect:
                    rail['acs_redirect'].append(bdf)
                    f = redirect[bdf]
                    kinds = [n for n, on in (('request', f['request_redirect']), ('completion', f['completion_redirect'])) if on]
                    result['problems'].append(
                        'ACS %s redirect is on at PCIe bridge %s (control %s) between %s (%s) and %s: peer-to-peer '
                        'is redirected to the root complex, GPUDirect RDMA breaks or slows down. Fix: disable ACS '
                        'in the BIOS, or clear it (setpci -s %s ECAP_ACS+0x6.w=0000) at boot'
                        % ('/'.join(kinds), bdf, f['control'], pf, dev, nearest['name'], bdf))
                elif bdf in (acs.get('unknown') or []):
                    unknown.append(bdf)
        if unknown:
            reasons = sorted(set(str((acs.get('bridges') or {}).get(b, {}).get('reason')) for b in unknown))
            result['notes'].append('ACS unknown on %d bridge(s) between %s and %s (%s): %s'
                                   % (len(unknown), dev, nearest['name'], ', '.join(unknown), '; '.join(reasons)))
    return result


def rail_data_direct(facts, pfs):
    """The rails (PF netdev names) whose NIC may be ConnectX-8 Data Direct with its GPU on another PCIe root than its own:
    each ``{pf, rdma_device, pci_address, root_complex, data_direct}`` (the NIC's address and root, and its ``data_direct``
    fact: the function the kernel pairs it with on another root, or ``pairing: unknown`` with the candidates and why).

    A rail is left out when the node has no Data Direct function, when the NIC has none (``data_direct`` null), and when
    its function is under the NIC's own root (``root_differs`` false: the NIC's pcieRoot is then the GPU's). On a node
    with such functions, a rail whose PF has no RDMA device with a PCI function may be Data Direct: it is listed, unknown."""
    functions = (facts.get('data_direct') or {}).get('functions') or []
    if not functions:
        return []
    devices = facts.get('devices') or {}
    nics = (facts.get('gpu_nic_topology') or {}).get('nics') or {}
    out = []
    for pf in pfs or []:
        dev = rdma_device_of_netdev(devices, pf)
        nic = nics.get(dev) if dev else None
        if nic is None:
            entry = {'device': None, 'root_complex': None, 'root_differs': None, 'pairing': 'unknown',
                     'candidates': [{'device': f['pci_address'], 'root_complex': f['root_complex']} for f in functions],
                     'reason': 'no RDMA device with a PCI function was found on %s' % pf}
        else:
            entry = nic.get('data_direct')
            if entry is None or entry.get('root_differs') is False:
                continue
        out.append({'pf': pf, 'rdma_device': dev, 'pci_address': nic['pci_address'] if nic else None,
                    'root_complex': nic['root_complex'] if nic else None, 'data_direct': entry})
    return out

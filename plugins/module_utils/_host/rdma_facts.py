# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fact gathering for gpufabric.roce.rdma_facts: sysfs/procfs parsing (pure, fixture
testable) and one RDMA netlink query (the netns mode)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import socket
import struct

from ansible_collections.gpufabric.roce.plugins.module_utils._host import data_direct as _data_direct
from ansible_collections.gpufabric.roce.plugins.module_utils._host import pci_health as _pci_health
from ansible_collections.gpufabric.roce.plugins.module_utils._common import pci_topology as _pci_topology
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import Sysfs, pci_address_of
from ansible_collections.gpufabric.roce.plugins.module_utils._common.rdma_counters import port_counters

PEERMEM_MODULES = ('nvidia_peermem', 'nv_peer_mem')
IOMMU_CMDLINE_KEYS = ('intel_iommu', 'amd_iommu', 'iommu', 'iommu.passthrough', 'iommu.strict')

# <rdma/rdma_netlink.h>
NETLINK_RDMA = 20
RDMA_NL_NLDEV = 5
RDMA_NLDEV_CMD_SYS_GET = 6
RDMA_NLDEV_SYS_ATTR_NETNS_MODE = 66
NLM_F_REQUEST = 1
NLMSG_ERROR = 2


def _state_text(raw):
    """``4: ACTIVE`` -> ``ACTIVE``; ``5: LinkUp`` -> ``LinkUp``."""
    if raw is None:
        return None
    return raw.split(':', 1)[1].strip() if ':' in raw else raw


def _zero_gid(gid):
    return gid.replace(':', '').strip('0') == ''


def gid_table(fs, dev, port):
    """Populated GID entries of a port. Empty slots fail with EINVAL (or read as
    all-zero on older kernels) and are skipped."""
    base = 'class/infiniband/%s/ports/%s' % (dev, port)
    entries = []
    for name in fs.listdir(base + '/gids'):
        if not name.isdigit():
            continue
        gid = fs.read('%s/gids/%s' % (base, name))
        if gid is None or _zero_gid(gid):
            continue
        entries.append({
            'index': int(name),
            'gid': gid,
            'type': fs.read('%s/gid_attrs/types/%s' % (base, name)),
            'ndev': fs.read('%s/gid_attrs/ndevs/%s' % (base, name)),
        })
    entries.sort(key=lambda e: e['index'])
    return entries


def _pci_numa(fs, pci):
    if pci is None:
        return None
    return fs.read_int('bus/pci/devices/%s/numa_node' % pci)


def netdev_pci_address(fs, ifname):
    return pci_address_of(fs.realpath('class/net/%s/device' % ifname))


def rdma_devices(fs):
    devices = {}
    for dev in fs.listdir('class/infiniband'):
        base = 'class/infiniband/%s' % dev
        ports = []
        netdevs = []
        for port in fs.listdir(base + '/ports'):
            if not port.isdigit():
                continue
            pbase = '%s/ports/%s' % (base, port)
            gids = gid_table(fs, dev, port)
            # GID 0 is the port's own (link-local) GID: its ndev is the port's netdev.
            netdev = fs.read(pbase + '/gid_attrs/ndevs/0')
            if netdev and netdev not in netdevs:
                netdevs.append(netdev)
            ports.append({
                'port': int(port),
                'state': _state_text(fs.read(pbase + '/state')),
                'phys_state': _state_text(fs.read(pbase + '/phys_state')),
                'link_layer': fs.read(pbase + '/link_layer'),
                'rate': fs.read(pbase + '/rate'),
                'netdev': netdev,
                'gids': gids,
            })
            ports[-1].update(port_counters(fs, dev, port))
        ports.sort(key=lambda p: p['port'])
        # The RDMA device's own PCI function; soft devices (rxe, siw) have none,
        # so fall back to the netdev they are bound to.
        pci = pci_address_of(fs.realpath(base + '/device'))
        pci_source = 'device' if pci else None
        for nd in fs.listdir(base + '/device/net'):
            if nd not in netdevs:
                netdevs.append(nd)
        if pci is None and netdevs:
            pci = netdev_pci_address(fs, netdevs[0])
            pci_source = 'netdev' if pci else None
        devices[dev] = {
            'name': dev,
            'node_type': _state_text(fs.read(base + '/node_type')),
            'node_guid': fs.read(base + '/node_guid'),
            'fw_ver': fs.read(base + '/fw_ver'),
            'pci_address': pci,
            'pci_address_source': pci_source,
            'numa_node': _pci_numa(fs, pci),
            'netdevs': netdevs,
            'ports': ports,
        }
    return devices


def _vf_list(fs, ifname):
    vfs = []
    for entry in fs.listdir('class/net/%s/device' % ifname):
        if not entry.startswith('virtfn') or not entry[6:].isdigit():
            continue
        rel = 'class/net/%s/device/%s' % (ifname, entry)
        vfs.append({
            'id': int(entry[6:]),
            'pci_address': pci_address_of(fs.realpath(rel)),
            'netdevs': fs.listdir(rel + '/net'),
        })
    vfs.sort(key=lambda v: v['id'])
    return vfs


def pf_netdevs(fs):
    """Netdevs that could serve as a PF: backed by a device (not virtual), not a VF."""
    result = {}
    for ifname in fs.listdir('class/net'):
        dev = 'class/net/%s/device' % ifname
        if not fs.exists(dev) or fs.exists(dev + '/physfn'):
            continue
        speed = fs.read_int('class/net/%s/speed' % ifname)
        if speed is not None and speed < 0:
            speed = None
        pci = pci_address_of(fs.realpath(dev))
        result[ifname] = {
            'name': ifname,
            'pci_address': pci,
            'numa_node': _pci_numa(fs, pci),
            'driver': fs.link_name(dev + '/driver'),
            'mtu': fs.read_int('class/net/%s/mtu' % ifname),
            'speed': speed,
            'operstate': fs.read('class/net/%s/operstate' % ifname),
            'address': fs.read('class/net/%s/address' % ifname),
            'sriov_numvfs': fs.read_int(dev + '/sriov_numvfs'),
            'sriov_totalvfs': fs.read_int(dev + '/sriov_totalvfs'),
            'vfs': _vf_list(fs, ifname),
        }
    return result


def parse_cmdline(cmdline):
    """IOMMU-related kernel arguments, last occurrence wins (as in the kernel)."""
    args = {}
    for token in (cmdline or '').split():
        key, sep, value = token.partition('=')
        if key in IOMMU_CMDLINE_KEYS:
            args[key] = value if sep else True
    return args


def iommu_facts(fs):
    cmdline = fs.read_proc('cmdline')
    args = parse_cmdline(cmdline)
    units = fs.listdir('class/iommu')
    groups = len([g for g in fs.listdir('kernel/iommu_groups') if g.isdigit()])
    passthrough = None
    if args.get('iommu') == 'pt' or args.get('iommu.passthrough') in ('1', 'on', 'y'):
        passthrough = True
    elif args.get('iommu.passthrough') in ('0', 'off', 'n'):
        passthrough = False
    return {
        'cmdline': args,
        'cmdline_readable': cmdline is not None,
        'units': units,
        'groups': groups,
        'enabled': bool(units) or groups > 0,
        'passthrough': passthrough,
    }


def nvidia_gpus(fs):
    """The NVIDIA GPUs as gpudirect_facts reports them: the functions ``_pci_topology`` enumerates,
    with the NUMA node as sysfs has it (-1 when the platform does not say)."""
    return [{
        'pci_address': pci,
        'device_id': fs.read(base + '/device'),
        'class': cls,
        'numa_node': fs.read_int(base + '/numa_node'),
        'driver': fs.link_name(base + '/driver'),
    } for pci, base, cls in _pci_topology.nvidia_display_functions(fs)]


def gpudirect_facts(fs, devices):
    loaded = [m for m in PEERMEM_MODULES if fs.exists('module/%s' % m)]
    nics = [{'name': d['name'], 'pci_address': d['pci_address'], 'numa_node': d['numa_node']}
            for d in devices.values()]
    gpus = nvidia_gpus(fs)
    nic_numa = sorted({n['numa_node'] for n in nics if n['numa_node'] is not None and n['numa_node'] >= 0})
    gpu_numa = sorted({g['numa_node'] for g in gpus if g['numa_node'] is not None and g['numa_node'] >= 0})
    numa_aligned = None
    if nic_numa and gpu_numa:
        numa_aligned = bool(set(nic_numa) & set(gpu_numa))
    return {
        'peermem_loaded': bool(loaded),
        'peermem_module': loaded[0] if loaded else None,
        'rdma_nics': nics,
        'gpus': gpus,
        'nic_numa_nodes': nic_numa,
        'gpu_numa_nodes': gpu_numa,
        'numa_aligned': numa_aligned,
    }


def parse_sys_get_reply(data):
    """Netns mode from an RDMA_NLDEV_CMD_SYS_GET reply: 'shared', 'exclusive' or None."""
    offset = 0
    while offset + 16 <= len(data):
        length, msg_type, _flags, _seq, _pid = struct.unpack_from('=IHHII', data, offset)
        if length < 16:
            return None
        if msg_type == NLMSG_ERROR:
            return None
        pos = offset + 16
        end = offset + length
        while pos + 4 <= end:
            nla_len, nla_type = struct.unpack_from('=HH', data, pos)
            if nla_len < 4:
                break
            if nla_type & 0x3FFF == RDMA_NLDEV_SYS_ATTR_NETNS_MODE and nla_len >= 5:
                return 'shared' if data[pos + 4] else 'exclusive'
            pos += (nla_len + 3) & ~3
        offset += (length + 3) & ~3
    return None


def rdma_netns_mode():
    """Query the RDMA subsystem netns mode over NETLINK_RDMA (what ``rdma system``
    shows). pyroute2 has no RDMA netlink family, so this is one raw request.
    None when RDMA netlink is unavailable (ib_core not loaded, old kernel)."""
    af_netlink = getattr(socket, 'AF_NETLINK', None)
    if af_netlink is None:
        return None
    msg_type = (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_SYS_GET
    try:
        sock = socket.socket(af_netlink, socket.SOCK_RAW, NETLINK_RDMA)
    except OSError:
        return None
    try:
        sock.settimeout(2.0)
        sock.bind((0, 0))
        sock.send(struct.pack('=IHHII', 16, msg_type, NLM_F_REQUEST, 1, 0))
        data = sock.recv(65536)
    except OSError:
        return None
    finally:
        sock.close()
    return parse_sys_get_reply(data)


def gather(sys_root='/sys', proc_root='/proc', netns_mode_getter=rdma_netns_mode, pause_getter=None, data_direct_pairing=None):
    """The facts; ``pause_getter(netdevs)`` (``_common.pause_stats.gather`` on a live node) reads the pause counters of the RDMA
    NICs' netdevs, which only the running kernel can answer (None: not read); ``data_direct_pairing(names)``
    (``_host.data_direct.mlx5dv_pairing`` on a live node) asks the kernel which Data Direct function serves each NIC
    (None: not asked, the pairing is unknown where the node has such a function)."""
    fs = Sysfs(sys_root, proc_root)
    devices = rdma_devices(fs)
    facts = {
        'devices': devices,
        'netdevs': pf_netdevs(fs),
        'iommu': iommu_facts(fs),
        'netns_mode': netns_mode_getter() if netns_mode_getter else None,
        'gpudirect': gpudirect_facts(fs, devices),
    }
    # gpus, gpu_nic_topology, nearest_nic, acs, nvidia_peermem
    port_types = _pci_topology.PortTypes(fs)
    facts.update(_pci_topology.gather(fs, devices, port_types))
    acs_bridges = facts['acs']['bridges']

    def acs_of(bdf):
        state = acs_bridges.get(bdf) or _pci_topology.acs_state(port_types.config(bdf))
        return state['acs']

    # link speed/width, MaxReadReq, relaxed ordering, ATS and ACS of the RDMA NICs and GPUs
    nics = facts['gpu_nic_topology']['nics']
    # each NIC's data_direct: the PCI function its DMA goes through on a ConnectX-8 Data Direct system, and its root
    facts['data_direct'] = _data_direct.annotate(fs, nics, data_direct_pairing)
    facts['pcie'] = _pci_health.gather(fs, nics, facts['gpus'], port_types.config, acs_of)
    facts['pause_counters'] = pause_getter([n for nic in nics.values() for n in nic['netdevs']]) if pause_getter else None
    return facts

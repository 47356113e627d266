#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: rdma_facts
short_description: Gather RDMA, SR-IOV, IOMMU, GPUDirect, GPU-NIC topology and PCIe health facts of a node
version_added: "0.1.0"
description:
  - Collects what an operator checks by hand before rolling out RoCE (C(rdma link show),
    the GID tables under C(/sys/class/infiniband), C(readlink .../device), the C(sriov_*) files of a PF,
    C(/proc/cmdline)) and returns it under C(ansible_facts.rdma).
  - Everything is read from sysfs and procfs, except the RDMA netns mode, which is one
    C(RDMA_NLDEV_CMD_SYS_GET) request on the C(NETLINK_RDMA) socket (the query C(rdma system) makes), and, only on a node
    with a ConnectX-8 Data Direct PCI function, one C(mlx5dv_get_data_direct_sysfs_path()) call per Mellanox RDMA device
    through rdma-core's libmlx5 (the kernel's pairing of NIC and Data Direct function, which sysfs does not show).
    No command is run.
  - Empty GID slots (the kernel answers EINVAL, older kernels an all-zero GID) are skipped.
  - C(pci_address) fields are the nearest PCI function in the resolved C(device) link; for a
    virtio NIC that is the virtio PCI function (the parent of C(virtioN)); for devices not on
    PCI (netdevsim, soft RDMA devices without a bound netdev) it is V(null). A soft RDMA device
    (rxe, siw) has no C(device) link; its PCI address is taken from the netdev it is bound to
    and C(pci_address_source) says so.
author:
  - gpufabric.roce maintainers (@gpufabric)
requirements:
  - Linux with sysfs and procfs on the target node; no command or package is needed for the facts themselves
  - pyroute2 on the target node, optional - only RV(ansible_facts.rdma.pause_counters) are read with it (V(null) with
    C(error) without it)
  - rdma-core's C(libibverbs.so.1) and C(libmlx5.so.1) (rdma-core 55 or later) on the target node, optional - only on a
    node with a ConnectX-8 Data Direct function, to learn which NIC it serves (RV(ansible_facts.rdma.data_direct));
    without them that pairing is reported as unknown, with the reason
  - root (C(become)), optional - the kernel gives the whole PCIe config space (ACS, port types, Max_Read_Request, relaxed
    ordering, ATS) only to root; without it those facts say C(unknown) and why
extends_documentation_fragment:
  - gpufabric.roce.roce
  - gpufabric.roce.roce.actiongroup
options:
  procfs_root:
    description:
      - Root of the procfs tree to read C(cmdline) and the kernel release from.
    type: path
    default: /proc
  lib_modules_root:
    description:
      - Directory holding C(<kernel release>/modules.dep) and C(modules.builtin), read to tell whether a kernel module that is
        not loaded can be loaded.
    type: path
    default: /lib/modules
attributes:
  check_mode:
    description: Can run in check_mode and return the same facts.
    support: full
  diff_mode:
    description: Returns no diff; it changes nothing.
    support: none
  facts:
    description: Sets C(ansible_facts.rdma).
    support: full
notes:
  - Read-only; runs the same in check mode.
  - When O(sysfs_root) is not C(/sys), RV(ansible_facts.rdma.netns_mode) is not queried and is V(null), since the RDMA
    netlink socket answers for the module's own kernel, not for the tree read.
  - Speed is V(null) when the kernel reports none (link down, virtual NIC).
  - The GPU-NIC topology is read from sysfs only (the resolved C(/sys/bus/pci/devices) links, C(numa_node) and
    C(config)); no C(nvidia-smi) or C(lspci) is run. ACS and PCIe port types need the whole config space, which the kernel
    gives only to root (use C(become)); otherwise RV(ansible_facts.rdma.acs) says C(unknown) with the reason and switches are
    told apart by position. The same holds for Max_Read_Request, relaxed ordering and ATS in RV(ansible_facts.rdma.pcie); the
    link speed and width files are readable by anyone.
"""

EXAMPLES = r"""
- name: Gather RDMA facts
  gpufabric.roce.rdma_facts:

- name: The RoCE v2 GIDs of rxe0 port 1 that sit on the VLAN gateway
  ansible.builtin.debug:
    msg: "{{ ansible_facts.rdma.devices.rxe0.ports[0].gids
             | selectattr('type', 'eq', 'RoCE v2') | selectattr('ndev', 'eq', 'eth0.100') | list }}"

- name: Read a host's sysfs mounted into a container, for every module of the group
  module_defaults:
    group/gpufabric.roce.roce:
      sysfs_root: /host/sys
  block:
    - name: Facts from /host/sys
      gpufabric.roce.rdma_facts:

    - name: VF count of a PF, written below /host/sys
      gpufabric.roce.sriov_vf:
        pf: enp157s0np0
        num_vfs: 8

- name: Each GPU's nearest RDMA NIC and their PCIe class (PIX, PXB, PHB, NODE, SYS)
  ansible.builtin.debug:
    msg: "{{ ansible_facts.rdma.gpus | map(attribute='name') | zip(ansible_facts.rdma.gpus | map(attribute='nearest_nic')) }}"

- name: Flag RDMA NICs and GPUs on different NUMA nodes
  ansible.builtin.assert:
    that: ansible_facts.rdma.gpudirect.numa_aligned is not false
    fail_msg: "RDMA NICs on NUMA {{ ansible_facts.rdma.gpudirect.nic_numa_nodes }}, GPUs on {{ ansible_facts.rdma.gpudirect.gpu_numa_nodes }}"
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: complex
  contains:
    rdma:
      description: RDMA facts of the node.
      returned: always
      type: complex
      contains:
        devices:
          description:
            - RDMA devices keyed by name. Each has C(name), C(node_type), C(node_guid), C(fw_ver),
              C(pci_address), C(pci_address_source) (C(device), C(netdev) or V(null)), C(numa_node),
              C(netdevs) and C(ports).
            - Each port has C(port), C(state) (C(ACTIVE), C(DOWN), ...), C(phys_state) (C(LinkUp), ...),
              C(link_layer), C(rate), C(netdev) (ndev of GID 0) and C(gids), a list of
              C({index, gid, type, ndev}) where type is C(RoCE v2) or C(IB/RoCE v1).
            - Each port also has C(hw_counters) (the driver's, C(/sys/class/infiniband/<dev>/ports/<n>/hw_counters) - mlx5's
              C(out_of_sequence), C(np_cnp_sent)..., rxe's C(retry_exceeded_err)...) and C(counters) (the IB PMA ones,
              C(port_xmit_data)...), name to integer; a counter that refuses reads is left out, C({}) when there are none.
          returned: always
          type: dict
          sample:
            rxe0:
              name: rxe0
              node_type: CA
              pci_address: "0000:00:02.0"
              pci_address_source: netdev
              numa_node: -1
              netdevs: [eth0]
              ports:
                - port: 1
                  state: ACTIVE
                  phys_state: LinkUp
                  link_layer: Ethernet
                  netdev: eth0
                  gids:
                    - {index: 2, gid: "0000:0000:0000:0000:0000:ffff:0aff:0002", type: RoCE v2, ndev: eth0.100}
        netdevs:
          description:
            - Netdevs that could serve as a PF (they have a C(device) link and are not VFs), keyed by
              name, with C(pci_address), C(numa_node), C(driver), C(mtu), C(speed) (Mb/s or V(null)),
              C(operstate), C(address), C(sriov_numvfs) and C(sriov_totalvfs) (V(null) when the file
              is absent) and C(vfs), a list of C({id, pci_address, netdevs}) from C(virtfn*).
          returned: always
          type: dict
          sample:
            eni10np1: {name: eni10np1, pci_address: null, driver: netdevsim, mtu: 1500, speed: null,
                       sriov_numvfs: 8, sriov_totalvfs: null, vfs: []}
        iommu:
          description:
            - C(cmdline) (IOMMU arguments of C(/proc/cmdline) as a dict), C(units) (C(/sys/class/iommu)),
              C(groups) (number of IOMMU groups), C(enabled) (units or groups exist) and
              C(passthrough) (V(true) for C(iommu=pt), V(null) when not stated).
          returned: always
          type: dict
        netns_mode:
          description: RDMA subsystem netns mode, C(shared) or C(exclusive); V(null) when RDMA netlink is unavailable.
          returned: always
          type: str
          sample: shared
        prerequisites:
          description:
            - What the later phases need on the node. C(pyroute2) (C(importable), C(python) the interpreter asked) for the
              host modules. C(binaries), the path of each perftest program (V(null) when not found). C(kernel.release)
              and C(kernel.modules), per module (C(8021q), C(ib_uverbs), C(mlx5_ib), C(rdma_rxe), C(nvidia_peermem)) -
              C(loaded), C(available) (loaded, loadable or built in) and C(builtin). C(rdma_drivers), per PF netdev, the
              kernel module of its RDMA driver (C(mlx5_ib) for C(mlx5_core), C(rdma_rxe) for soft-RoCE on any other).
          returned: always
          type: dict
          sample:
            pyroute2: {importable: true, python: /usr/bin/python3}
            binaries: {ib_write_bw: /usr/bin/ib_write_bw, ib_write_lat: /usr/bin/ib_write_lat, ib_read_bw: null, ib_send_bw: null}
            kernel:
              release: 6.1.0-56-amd64
              modules: {"8021q": {loaded: false, available: true, builtin: false}}
            rdma_drivers: {enp157s0np0: mlx5_ib}
        gpudirect:
          description:
            - C(peermem_loaded) and C(peermem_module) (C(nvidia_peermem) or C(nv_peer_mem)), C(rdma_nics)
              and C(gpus) (NVIDIA vendor 0x10de, class 0x0300/0x0302) with PCI address and NUMA node,
              C(nic_numa_nodes), C(gpu_numa_nodes) and C(numa_aligned) (V(null) unless both sides
              report a NUMA node).
            - GPUs are NVIDIA functions of any display class (0x03xxxx - 0x0300 VGA, 0x0302 3D controller, 0x0380 other),
              the same list as RV(ansible_facts.rdma.gpus).
          returned: always
          type: dict
        gpus:
          description:
            - NVIDIA GPUs (vendor 0x10de, display class 0x03xxxx) in PCI bus order, the order of C(nvidia-smi) and of CUDA
              with C(CUDA_DEVICE_ORDER=PCI_BUS_ID). Empty on a node without GPUs.
            - Each has C(index) and C(name) (C(GPU<index>)), C(pci_address), C(device_id), C(class), C(driver),
              C(numa_node) (V(null) when the kernel reports none), C(root_complex) (the host bridge, C(pciDDDD:BB)),
              C(bridges) (the upstream PCI bridges from the root port down, from the resolved
              C(/sys/bus/pci/devices/<address>) link) and C(nearest_nic) (as in RV(ansible_facts.rdma.nearest_nic)).
          returned: always
          type: list
          elements: dict
          sample:
            - index: 0
              name: GPU0
              pci_address: "0000:03:00.0"
              device_id: "0x2330"
              class: "0x030200"
              driver: nvidia
              numa_node: 0
              root_complex: "pci0000:00"
              bridges: ["0000:00:01.0", "0000:01:00.0", "0000:02:00.0"]
              nearest_nic: {nic: mlx5_0, pci_address: "0000:04:00.0", class: PIX, hops: 3}
        gpu_nic_topology:
          description:
            - The PCIe relation of every GPU to every RDMA device that has a PCI function (SR-IOV VFs left out - they share
              their PF's path), classified as
              C(nvidia-smi topo -m) does, best first - C(PIX) (at most one PCIe bridge or switch between them),
              C(PXB) (several bridges or switches, not through the host bridge), C(PHB) (through the PCIe host bridge,
              same root complex), C(NODE) (across host bridges of one NUMA node), C(SYS) (across NUMA nodes).
              A PCIe switch (upstream port and its downstream ports) counts as one bridge.
            - C(classes) (that order), C(gpus) (PCI addresses in GPU order), C(matrix) (GPU address to RDMA device name
              to class; the class is V(null) when a path has no root complex), C(nics) (per RDMA device - C(name),
              C(pci_address), C(pci_address_source), C(netdevs), C(numa_node), C(root_complex), C(bridges),
              C(nearest_gpu) C({gpu, name, index, class, hops}) or V(null), and C(data_direct), as described under
              RV(ansible_facts.rdma.data_direct)), C(pairs) (one per GPU and NIC -
              C(gpu), C(gpu_name), C(nic), C(nic_pci_address), C(class), C(hops) (bridges crossed, plus 1 for the host
              bridge, 2 between host bridges, 3 between sockets), C(via) (the bridges crossed), C(switches) and
              C(port_type_source) (V(null) unless the two share a bridge)), C(port_types) (PCIe port type of each bridge crossed, V(null) when config space
              is not readable).
            - Switches are told apart by the PCIe port type in config space when it can be read (C(port_type_source=config),
              needs root), otherwise by position (root port, then upstream and downstream port pairs; C(position)).
            - Nearest means best class, then fewest bridges crossed, then lowest PCI address.
          returned: always
          type: dict
          sample:
            classes: [PIX, PXB, PHB, NODE, SYS]
            gpus: ["0000:03:00.0", "0000:83:00.0"]
            matrix:
              "0000:03:00.0": {mlx5_0: PIX, mlx5_3: SYS}
              "0000:83:00.0": {mlx5_0: SYS, mlx5_3: PIX}
        data_direct:
          description:
            - ConnectX-8 Data Direct (GB300, Vera Rubin) - the NIC's DMA goes through a separate PCI function (Mellanox device
              0x2100, driver C(mlx5_data_direct)) under another PCIe root than the NIC's own, and the root that pairs NIC and
              GPU is that function's. C(functions), the node's Data Direct functions (C(pci_address), C(device_id), C(driver),
              C(root_complex), C(bridges), C(numa_node)), C([]) on other nodes; C(pairing), how the NICs were paired with them
              (C(mlx5dv), V(null) when there was nothing to pair, C(unknown)) and C(reason) (why unknown).
            - Each NIC of RV(ansible_facts.rdma.gpu_nic_topology) C(nics) has C(data_direct) - V(null) when the NIC has no
              Data Direct function (none on the node, not a Mellanox PCI function, or the kernel says so), else
              C(device) and C(root_complex) (the function the kernel pairs it with, and its PCIe root), C(root_differs)
              (V(true) when that root is not the NIC's own C(root_complex) - the NIC's VFs then publish a
              C(resource.kubernetes.io/pcieRoot) that is not the root of the GPU they pair with), C(pairing) (C(mlx5dv) or
              C(unknown)), C(candidates) (when unknown, every Data Direct function of the node, C({device, root_complex}),
              any of which may serve it) and C(reason).
            - sysfs shows the functions but not which NIC each serves. The kernel pairs them by a VUID, the function's from
              its VPD and the NIC's from a firmware command that no sysfs attribute shows, and tells only through the mlx5
              ioctl rdma-core wraps as C(mlx5dv_get_data_direct_sysfs_path()). It is asked through libmlx5 when the facts
              are read from the running kernel's C(/sys); unknown without rdma-core 55 or later, without read and write
              access to C(/dev/infiniband/uverbs*), on a kernel before 6.12, or when O(sysfs_root) is not C(/sys).
          returned: always
          type: dict
          sample:
            functions:
              - {pci_address: "0000:82:00.0", device_id: "0x2100", driver: mlx5_data_direct, root_complex: "pci0000:80",
                 bridges: ["0000:80:01.0"], numa_node: 0}
            pairing: mlx5dv
            reason: null
        nearest_nic:
          description:
            - Per GPU PCI address, its nearest RDMA device - C({nic, pci_address, class, hops}), V(null) when there is none.
          returned: always
          type: dict
          sample:
            "0000:03:00.0": {nic: mlx5_0, pci_address: "0000:04:00.0", class: PIX, hops: 3}
        acs:
          description:
            - Access Control Services of every PCI bridge crossed by a GPU-NIC path, read from the bridge's config space
              (C(/sys/bus/pci/devices/<address>/config), the ACS extended capability 0x000D, its control register).
              ACS P2P Request or Completion Redirect sends peer-to-peer traffic up to the root complex, which breaks or
              slows GPUDirect RDMA between a GPU and a NIC below that bridge.
            - C(bridges) per bridge address - C(acs) (C(redirect), C(no_redirect), C(absent) (no ACS capability) or
              C(unknown)), C(reason) (why unknown - without root the kernel returns only the first 64 bytes of config
              space), C(capability) and C(control) (hex) and one boolean per control bit - C(source_validation),
              C(translation_blocking), C(request_redirect), C(completion_redirect), C(upstream_forwarding),
              C(egress_control), C(direct_translated_p2p).
            - C(redirect), the bridges with redirect on, each C({bridge, request_redirect, completion_redirect, control,
              gpus, nics}) (the GPUs and NICs whose paths cross it); C(unknown), the bridges that could not be read, and
              C(unknown_reason).
          returned: always
          type: dict
          sample:
            redirect:
              - {bridge: "0000:02:01.0", request_redirect: true, completion_redirect: true, control: "0x001d",
                 gpus: ["0000:03:00.0"], nics: [mlx5_0]}
            unknown: []
            unknown_reason: null
        nvidia_peermem:
          description:
            - Whether the GPUDirect RDMA kernel module is loaded - C(loaded), C(module) (C(nvidia_peermem) or the older
              C(nv_peer_mem)), C(source) (C(sysfs) for C(/sys/module), C(procfs) for C(/proc/modules)), C(gpus_present)
              and C(missing) (GPUs present and the module not loaded).
          returned: always
          type: dict
          sample: {gpus_present: true, loaded: false, module: null, source: null, missing: true}
        pcie:
          description:
            - PCIe health of every RDMA NIC's PCI function (SR-IOV VFs left out) and every NVIDIA GPU, read from sysfs and
              config space; nothing is run.
            - C(devices) per PCI address - C(pci_address), C(role) (C(nic) or C(gpu)), C(names) (RDMA devices, or
              C(GPU<index>)), C(netdevs); C(link) - C(speed), C(max_speed) (the kernel's text, C(16.0 GT/s PCIe), or
              C(Unknown)), C(speed_gts), C(max_speed_gts), C(width), C(max_width) (V(null) when the link is down or the
              function is not PCIe), C(port) (the bridge above) with C(port_max_speed) and C(port_max_width),
              C(downtrained_speed), C(downtrained_width), C(downtrained) (below what both the card and its port support;
              V(null) when unknown) and C(slot_limited) (the card supports more than its port);
              C(config_bytes) and C(config_reason) (why config space values are V(null) - without root the kernel returns
              only the first 64 bytes, and the reason starts with C(unreadable) and says it needs root); from the PCI
              Express capability's Device Control register C(pcie_capability) (its offset), C(max_read_request) and C(max_payload) (bytes),
              C(max_payload_supported) and C(relaxed_ordering); C(ats) - C(present), C(enabled) and C(control) of the ATS
              extended capability (V(null) without the extended config space); C(acs) - per bridge above the device, its
              ACS state as in RV(ansible_facts.rdma.acs) (C(redirect), C(no_redirect), C(absent), C(unknown)).
            - C(findings), plain-language findings, each C({pci_address, device, role, kind, severity, message}) - kind
              C(downtrained) (severity C(problem), what C(preflight_pcie_downtrained) judges), C(slot_limited) and
              C(gpu_link_speed) (an idle NVIDIA GPU lowers its link speed to save power; checked only under load) and
              C(max_read_request) (a MaxReadReq below 256 bytes, the firmware test suite's C(LowMaxReadReq) rule) (severity
              C(note)).
            - C(downtrained) (the PCI addresses with a downtrained link), C(config_unreadable) (those whose config space
              could not be read) and C(config_reason).
          returned: always
          type: dict
          sample:
            devices:
              "0000:08:00.0":
                pci_address: "0000:08:00.0"
                role: nic
                names: [mlx5_1]
                netdevs: [ens3np0]
                link: {speed: 8.0 GT/s PCIe, max_speed: 16.0 GT/s PCIe, width: 8, max_width: 16, speed_gts: 8.0,
                       max_speed_gts: 16.0, port: "0000:00:03.0", port_max_speed: 16.0 GT/s PCIe, port_max_width: 16,
                       downtrained_speed: true, downtrained_width: true, downtrained: true, slot_limited: false}
                config_bytes: 4096
                config_reason: null
                pcie_capability: "0x60"
                max_read_request: 512
                max_payload: 256
                max_payload_supported: 512
                relaxed_ordering: true
                ats: {present: true, enabled: false, control: "0x0000"}
                acs: {"0000:00:03.0": no_redirect}
            findings:
              - {pci_address: "0000:08:00.0", device: mlx5_1, role: nic, kind: downtrained, severity: problem,
                 message: "0000:08:00.0 (mlx5_1): link 8.0 GT/s x8, capable of 16.0 GT/s x16 (downtrained: speed and width)"}
            downtrained: ["0000:08:00.0"]
            config_unreadable: []
            config_reason: null
        pause_counters:
          description:
            - Per netdev of the RDMA NICs, C(counters) - the driver's pause and PFC counters (names with C(pause), C(pfc),
              C(xon) or C(xoff); mlx5 - C(rx_prio<N>_pause), C(tx_prio<N>_pause), C(rx_prio<N>_pause_duration),
              C(rx_pause_ctrl_phy)...) to integers, C({}) when the driver has none (virtio, rxe, netdevsim) - or V(null) with
              C(error) (no pyroute2, no statistics).
            - Read with the C(SIOCETHTOOL) statistics ioctl (what C(ethtool -S) uses; the ethtool netlink STATS request has
              no per-priority counters) through pyroute2, only on a live node - V(null) when O(sysfs_root) is not C(/sys).
          returned: always
          type: dict
          sample:
            ens1f0np0: {counters: {rx_prio3_pause: 5, tx_prio3_pause: 2, rx_pause_ctrl_phy: 0}, error: null}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufabric.roce.plugins.module_utils._host import data_direct as _data_direct
from ansible_collections.gpufabric.roce.plugins.module_utils._host import node_prereqs as _node_prereqs
from ansible_collections.gpufabric.roce.plugins.module_utils._common import pause_stats as _pause_stats
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import Sysfs
from ansible_collections.gpufabric.roce.plugins.module_utils._host.rdma_facts import gather, rdma_netns_mode


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysfs_root=dict(type='path', default='/sys'),
            procfs_root=dict(type='path', default='/proc'),
            lib_modules_root=dict(type='path', default='/lib/modules'),
        ),
        supports_check_mode=True,
    )
    live = module.params['sysfs_root'] == '/sys'
    facts = gather(module.params['sysfs_root'], module.params['procfs_root'],
                   netns_mode_getter=rdma_netns_mode if live else None,
                   pause_getter=_pause_stats.gather if live else None,
                   data_direct_pairing=_data_direct.mlx5dv_pairing if live else None)
    facts['prerequisites'] = _node_prereqs.gather(Sysfs(module.params['sysfs_root'], module.params['procfs_root']),
                                                  module.get_bin_path, module.params['lib_modules_root'], facts['netdevs'])
    module.exit_json(changed=False, ansible_facts={'rdma': facts})


if __name__ == '__main__':
    main()

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

import json
import os
import struct

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._host import rdma_facts as rf

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'fixtures')


def build_tree(root, spec):
    """files: {path: content}; links: {path: target inside the tree}; dirs: [path];
    unreadable: [path] (a directory where a file is expected, so reading it fails the
    way an empty GID slot does with EINVAL)."""
    for path in spec.get('dirs', []) + spec.get('unreadable', []):
        os.makedirs(os.path.join(root, path), exist_ok=True)
    for path, content in spec.get('files', {}).items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w') as f:
            f.write(content + '\n')
    for path, target in spec.get('links', {}).items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        os.symlink(os.path.relpath(os.path.join(root, target), os.path.dirname(full)), full)
    return root


@pytest.fixture
def lab_tree(tmp_path):
    """sys/ and proc/ of a node: an mlx5-like PF with one VF and mlx5_8, rxe0 on a virtio
    NIC, the lab's netdevsim PF, one NVIDIA GPU, an NVSwitch-class device, nvidia_peermem."""
    with open(os.path.join(FIXTURES, 'sysfs_node.json')) as f:
        build_tree(str(tmp_path), json.load(f))
    return tmp_path


def gather(tree):
    return rf.gather(os.path.join(str(tree), 'sys'), os.path.join(str(tree), 'proc'), netns_mode_getter=None)


def test_gid_table_skips_unreadable_and_zero_slots(lab_tree):
    port = gather(lab_tree)['devices']['mlx5_8']['ports'][0]
    assert [g['index'] for g in port['gids']] == [0, 1, 4]
    assert port['gids'][0] == {'index': 0, 'gid': 'fe80:0000:0000:0000:ba3f:d2ff:fe00:0001', 'type': 'IB/RoCE v1', 'ndev': 'enp157s0np0'}
    assert port['gids'][2]['type'] == 'RoCE v2'
    assert port['gids'][2]['ndev'] == 'enp157s0np0.100'
    assert (port['state'], port['phys_state'], port['netdev']) == ('ACTIVE', 'LinkUp', 'enp157s0np0')


def test_rdma_device_pci_numa_and_netdev(lab_tree):
    dev = gather(lab_tree)['devices']['mlx5_8']
    assert dev['pci_address'] == '0000:9d:00.0'
    assert dev['pci_address_source'] == 'device'
    assert dev['numa_node'] == 1
    assert dev['netdevs'] == ['enp157s0np0']
    assert dev['node_type'] == 'CA'


def test_soft_rdma_device_takes_pci_of_its_netdev(lab_tree):
    rxe = gather(lab_tree)['devices']['rxe0']
    # rxe0 has no device link; its netdev is a virtio NIC whose device is virtio2 under 0000:00:0a.0
    assert (rxe['pci_address'], rxe['pci_address_source'], rxe['numa_node']) == ('0000:00:0a.0', 'netdev', -1)


def test_pf_netdevs(lab_tree):
    netdevs = gather(lab_tree)['netdevs']
    # lo has no device, enp157s0v0 is a VF (physfn): neither can be a PF
    assert sorted(netdevs) == ['eni10np1', 'enp0s10', 'enp157s0np0']
    pf = netdevs['enp157s0np0']
    assert (pf['pci_address'], pf['driver'], pf['mtu'], pf['speed']) == ('0000:9d:00.0', 'mlx5_core', 9000, 200000)
    assert (pf['sriov_numvfs'], pf['sriov_totalvfs']) == (1, 16)
    assert pf['vfs'] == [{'id': 0, 'pci_address': '0000:9d:00.2', 'netdevs': ['enp157s0v0']}]
    nds = netdevs['eni10np1']
    # netdevsim: not on PCI, no sriov_totalvfs file
    assert (nds['pci_address'], nds['driver'], nds['sriov_numvfs'], nds['sriov_totalvfs']) == (None, 'netdevsim', 8, None)
    virtio = netdevs['enp0s10']
    assert (virtio['pci_address'], virtio['driver'], virtio['speed'], virtio['sriov_numvfs']) == ('0000:00:0a.0', 'virtio_net', None, None)


def test_iommu(lab_tree):
    iommu = gather(lab_tree)['iommu']
    assert iommu['cmdline'] == {'intel_iommu': 'on', 'iommu': 'pt'}
    assert (iommu['units'], iommu['groups'], iommu['enabled'], iommu['passthrough']) == (['dmar0'], 2, True, True)


def test_parse_cmdline_last_wins_and_flags():
    assert rf.parse_cmdline('iommu=off amd_iommu=on iommu=pt iommu.strict=0 quiet') == {'iommu': 'pt', 'amd_iommu': 'on', 'iommu.strict': '0'}
    assert rf.parse_cmdline(None) == {}


def test_gpudirect(lab_tree):
    gd = gather(lab_tree)['gpudirect']
    assert (gd['peermem_loaded'], gd['peermem_module']) == (True, 'nvidia_peermem')
    # the NVSwitch-class device (0x0680) is not a GPU
    assert [g['pci_address'] for g in gd['gpus']] == ['0000:b1:00.0']
    assert gd['gpus'][0]['numa_node'] == 1
    assert gd['nic_numa_nodes'] == [1]
    assert gd['numa_aligned'] is True


def test_empty_tree_gives_empty_facts(tmp_path):
    facts = rf.gather(str(tmp_path), str(tmp_path), netns_mode_getter=None)
    assert facts['devices'] == {} and facts['netdevs'] == {}
    assert facts['iommu']['cmdline_readable'] is False
    assert facts['gpudirect']['numa_aligned'] is None
    assert facts['netns_mode'] is None


def _nlmsg(msg_type, payload):
    return struct.pack('=IHHII', 16 + len(payload), msg_type, 0, 1, 0) + payload


def _nla(nla_type, payload):
    raw = struct.pack('=HH', 4 + len(payload), nla_type) + payload
    return raw + b'\0' * ((4 - len(raw) % 4) % 4)


def test_parse_sys_get_reply():
    msg_type = (rf.RDMA_NL_NLDEV << 10) + rf.RDMA_NLDEV_CMD_SYS_GET
    other = _nla(67, b'\x01')  # copy-on-fork, ignored
    assert rf.parse_sys_get_reply(_nlmsg(msg_type, other + _nla(66, b'\x01'))) == 'shared'
    assert rf.parse_sys_get_reply(_nlmsg(msg_type, _nla(66, b'\x00'))) == 'exclusive'
    assert rf.parse_sys_get_reply(_nlmsg(rf.NLMSG_ERROR, struct.pack('=i', -95))) is None
    assert rf.parse_sys_get_reply(b'') is None

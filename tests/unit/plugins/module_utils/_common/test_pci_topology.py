# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU<->NIC topology, ACS and nvidia_peermem from a sysfs tree.

The tree (tests/unit/fixtures/sysfs_gpu_two_socket.json) is a DERIVED layout written to mimic a
two-socket rail-optimised GPU server; it is not a capture, and no real GPU machine was used. The
config space files are laid out here by config_space() the way PCIe switch ports lay them out
(a power-management and a PCI Express capability in standard space, AER then ACS in extended space).
"""

import json
import os
import struct

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._common import pci_topology as pt
from ansible_collections.gpufabric.roce.plugins.module_utils._host import rdma_facts as rf
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import Sysfs

from test_data_direct import DD_PATH, Kernel, build
from test_rdma_facts import build_tree

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'fixtures')

PORT_TYPE = {'root_port': 0x4, 'upstream_port': 0x5, 'downstream_port': 0x6, 'endpoint': 0x0}

GPU0, GPU1, GPU2 = '0000:03:00.0', '0000:07:00.0', '0000:83:00.0'


def config_space(port_type, acs_control=None, size=4096, vendor=0x1000, device=0xC030):
    """Config space of a PCIe function: header, PM capability at 0x40, PCI Express capability at
    0x68 (its Device/Port Type), extended AER at 0x100 and, when acs_control is given, ACS at 0x148
    (capability 0x005f: SV, TB, RR, CR, UF, DT supported). ``size`` truncates it as the kernel does
    (64 bytes for an unprivileged reader)."""
    cfg = bytearray(4096)
    struct.pack_into('<HH', cfg, 0, vendor, device)
    struct.pack_into('<H', cfg, 0x06, 0x0010)        # status: capability list
    cfg[0x0E] = 0x01 if port_type != 'endpoint' else 0x00
    cfg[0x34] = 0x40
    cfg[0x40], cfg[0x41] = 0x01, 0x68                # PM -> PCIe
    cfg[0x68], cfg[0x69] = 0x10, 0x00                # PCI Express capability, last
    struct.pack_into('<H', cfg, 0x6A, 0x0002 | (PORT_TYPE[port_type] << 4))
    nxt = 0x148 if acs_control is not None else 0
    struct.pack_into('<I', cfg, 0x100, 0x0001 | (2 << 16) | (nxt << 20))   # AER
    if acs_control is not None:
        struct.pack_into('<I', cfg, 0x148, 0x000D | (1 << 16))           # ACS, last
        struct.pack_into('<HH', cfg, 0x14C, 0x005F, acs_control)
    return bytes(cfg[:size])


# Bridges of the fixture and their port types.
BRIDGES = {
    '0000:00:01.0': 'root_port', '0000:01:00.0': 'upstream_port', '0000:02:00.0': 'downstream_port',
    '0000:02:01.0': 'downstream_port', '0000:02:02.0': 'downstream_port', '0000:05:00.0': 'upstream_port',
    '0000:06:00.0': 'downstream_port', '0000:00:03.0': 'root_port', '0000:40:01.0': 'root_port',
    '0000:80:01.0': 'root_port', '0000:81:00.0': 'upstream_port', '0000:82:00.0': 'downstream_port',
    '0000:82:01.0': 'downstream_port',
}


def write_config(tree, bdf, data):
    path = os.path.join(str(tree), 'sys', 'bus', 'pci', 'devices', bdf, 'config')
    with open(path, 'wb') as f:
        f.write(data)


@pytest.fixture
def host(tmp_path):
    with open(os.path.join(FIXTURES, 'sysfs_gpu_two_socket.json')) as f:
        build_tree(str(tmp_path), json.load(f))
    return tmp_path


@pytest.fixture
def host_cfg(host):
    """The same host read with privileges: every bridge's full config space. ACS as Linux sets it on
    switch downstream ports when an IOMMU is on (SV, RR, CR, UF = 0x001d) on S1's port to the NIC,
    ACS present but no redirect on the others, no ACS on the upstream ports."""
    for bdf, kind in BRIDGES.items():
        acs = None
        if kind == 'downstream_port':
            acs = 0x001D if bdf == '0000:02:01.0' else 0x0001
        write_config(host, bdf, config_space(kind, acs))
    return host


def facts(tree):
    return rf.gather(os.path.join(str(tree), 'sys'), os.path.join(str(tree), 'proc'), netns_mode_getter=None)


EXPECTED = {
    GPU0: {'mlx5_0': 'PIX', 'mlx5_4': 'PIX', 'mlx5_1': 'PHB', 'mlx5_2': 'NODE', 'mlx5_3': 'SYS'},
    GPU1: {'mlx5_0': 'PXB', 'mlx5_4': 'PXB', 'mlx5_1': 'PHB', 'mlx5_2': 'NODE', 'mlx5_3': 'SYS'},
    GPU2: {'mlx5_0': 'SYS', 'mlx5_4': 'SYS', 'mlx5_1': 'SYS', 'mlx5_2': 'SYS', 'mlx5_3': 'PIX'},
}


def test_parse_pci_path():
    assert pt.parse_pci_path('/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:05:00.0') == (
        'pci0000:00', ['0000:00:01.0', '0000:01:00.0', '0000:02:08.0', '0000:05:00.0'])
    hyperv = '/devices/LNXSYSTM:00/LNXSYBUS:00/PNP0A03:00/device:07/VMBUS:01/47505500-0001/pci0001:00/0001:00:00.0'
    assert pt.parse_pci_path(hyperv) == ('pci0001:00', ['0001:00:00.0'])
    assert pt.parse_pci_path('/devices/netdevsim10') == (None, [])
    assert pt.parse_pci_path(None) == (None, [])


def test_gpus_paths_and_numa(host):
    gpus = facts(host)['gpus']
    # the NVSwitch-class function (0x0680) is not a GPU; GPUs numbered in PCI bus order
    assert [(g['name'], g['pci_address']) for g in gpus] == [('GPU0', GPU0), ('GPU1', GPU1), ('GPU2', GPU2)]
    assert gpus[1]['root_complex'] == 'pci0000:00'
    assert gpus[1]['bridges'] == ['0000:00:01.0', '0000:01:00.0', '0000:02:02.0', '0000:05:00.0', '0000:06:00.0']
    assert [g['numa_node'] for g in gpus] == [0, 0, 1]
    assert gpus[0]['driver'] == 'nvidia'


@pytest.mark.parametrize('privileged', [False, True], ids=['position', 'config'])
def test_matrix_like_nvidia_smi(request, privileged):
    tree = request.getfixturevalue('host_cfg' if privileged else 'host')
    topo = facts(tree)['gpu_nic_topology']
    assert topo['matrix'] == EXPECTED
    assert topo['gpus'] == [GPU0, GPU1, GPU2]
    pix = [p for p in topo['pairs'] if p['gpu'] == GPU0 and p['nic'] == 'mlx5_0'][0]
    # one switch: down port, up port, down port
    assert pix['via'] == ['0000:01:00.0', '0000:02:00.0', '0000:02:01.0']
    assert pix['switches'] == 1
    assert pix['port_type_source'] == ('config' if privileged else 'position')
    pxb = [p for p in topo['pairs'] if p['gpu'] == GPU1 and p['nic'] == 'mlx5_0'][0]
    assert pxb['switches'] == 2
    if privileged:
        assert topo['port_types']['0000:02:01.0'] == 'downstream_port'


def test_config_port_types_beat_position(host):
    """With config space readable, switches come from the port types, not from the position: when
    the bridge above two downstream ports is not an upstream port, nothing groups them."""
    for bdf, kind in BRIDGES.items():
        write_config(host, bdf, config_space(kind))
    port_types = pt._PortTypes(Sysfs(os.path.join(str(host), 'sys')))
    a = {'pci_address': GPU0, 'root_complex': 'pci0000:00', 'numa_node': 0,
         'bridges': ['0000:00:01.0', '0000:01:00.0', '0000:02:00.0']}
    b = {'pci_address': '0000:04:00.0', 'root_complex': 'pci0000:00', 'numa_node': 0,
         'bridges': ['0000:00:01.0', '0000:01:00.0', '0000:02:01.0']}
    assert pt.classify(a, b, port_types)['class'] == 'PIX'
    # 01:00.0 reads as another kind of port: the path crosses it and each down port separately
    write_config(host, '0000:01:00.0', config_space('root_port'))
    port_types = pt._PortTypes(Sysfs(os.path.join(str(host), 'sys')))
    assert pt.classify(a, b, port_types)['class'] == 'PXB'


def test_nearest_nic_and_tie_break(host):
    f = facts(host)
    # GPU0: mlx5_0 and mlx5_4 are both PIX with the same path (two functions of one NIC): lower PCI address wins
    assert f['nearest_nic'][GPU0] == {'nic': 'mlx5_0', 'pci_address': '0000:04:00.0', 'class': 'PIX', 'hops': 3}
    assert f['nearest_nic'][GPU1]['nic'] == 'mlx5_0' and f['nearest_nic'][GPU1]['class'] == 'PXB'
    assert f['nearest_nic'][GPU2]['nic'] == 'mlx5_3'
    nics = f['gpu_nic_topology']['nics']
    # mlx5_1 is PHB to GPU0 and GPU1: GPU0 wins on the shorter path, not on its address
    assert nics['mlx5_1']['nearest_gpu'] == {'gpu': GPU0, 'name': 'GPU0', 'index': 0, 'class': 'PHB', 'hops': 5}
    assert nics['mlx5_2']['nearest_gpu']['class'] == 'NODE' and nics['mlx5_2']['nearest_gpu']['gpu'] == GPU0
    assert nics['mlx5_3']['nearest_gpu']['gpu'] == GPU2
    assert nics['mlx5_0']['netdevs'] == ['ens1f0np0']


def test_best_prefers_class_then_hops_then_address():
    best = pt._best([('PXB', 2, ('0000:01:00.0',), 'a'), ('PIX', 9, ('0000:ff:00.0',), 'b'),
                     ('PIX', 3, ('0000:09:00.0',), 'c'), ('PIX', 3, ('0000:08:00.0',), 'd'), (None, 0, ('0',), 'e')])
    assert best == 'd'
    assert pt._best([(None, 0, ('0',), 'x')]) is None


def test_acs_redirect_on_downstream_port(host_cfg):
    acs = facts(host_cfg)['acs']
    assert [r['bridge'] for r in acs['redirect']] == ['0000:02:01.0']
    finding = acs['redirect'][0]
    assert (finding['request_redirect'], finding['completion_redirect'], finding['control']) == (True, True, '0x001d')
    assert finding['nics'] == ['mlx5_0', 'mlx5_4']
    assert GPU0 in finding['gpus']
    assert acs['bridges']['0000:02:00.0']['acs'] == 'no_redirect'
    assert acs['bridges']['0000:02:00.0']['source_validation'] is True
    assert acs['bridges']['0000:01:00.0']['acs'] == 'absent'
    assert acs['unknown'] == []


def test_acs_unknown_when_unprivileged(host_cfg):
    write_config(host_cfg, '0000:82:01.0', config_space('downstream_port', 0x001D, size=64))
    acs = facts(host_cfg)['acs']
    state = acs['bridges']['0000:82:01.0']
    assert state['acs'] == 'unknown'
    assert 'only 64 bytes' in state['reason'] and 'CAP_SYS_ADMIN' in state['reason']
    assert '0000:82:01.0' in acs['unknown']
    assert acs['unknown_reason'] == state['reason']


def test_acs_state_edge_cases():
    assert pt.acs_state(None)['reason'] == 'config space not readable'
    assert 'no PCIe extended config space' in pt.acs_state(config_space('downstream_port', size=256))['reason']
    assert pt.acs_state(config_space('downstream_port', 0x0011))['acs'] == 'no_redirect'
    only_rr = pt.acs_state(config_space('downstream_port', 0x0004))
    assert (only_rr['acs'], only_rr['request_redirect'], only_rr['completion_redirect']) == ('redirect', True, False)
    # a looping extended capability list ends
    cfg = bytearray(config_space('downstream_port'))
    struct.pack_into('<I', cfg, 0x100, 0x0001 | (1 << 16) | (0x100 << 20))
    assert pt.acs_state(bytes(cfg))['acs'] == 'absent'
    assert pt.pcie_port_type(config_space('upstream_port')) == 'upstream_port'
    assert pt.pcie_port_type(config_space('upstream_port', size=64)) is None


def test_no_config_file_means_unknown(host):
    acs = facts(host)['acs']
    assert acs['redirect'] == []
    assert acs['unknown'] and acs['bridges'][acs['unknown'][0]]['reason'] == 'config space not readable'


def test_nvidia_peermem(host):
    f = facts(host)
    assert f['nvidia_peermem'] == {'gpus_present': True, 'loaded': False, 'module': None, 'source': None, 'missing': True}
    with open(os.path.join(str(host), 'proc', 'modules'), 'a') as fh:
        fh.write('nvidia_peermem 16384 0 - Live 0x0000000000000000\n')
    f = facts(host)
    assert (f['nvidia_peermem']['loaded'], f['nvidia_peermem']['source']) == (True, 'procfs')
    os.makedirs(os.path.join(str(host), 'sys', 'module', 'nvidia_peermem'))
    assert facts(host)['nvidia_peermem']['source'] == 'sysfs'


def test_no_gpu_node(tmp_path):
    f = rf.gather(str(tmp_path), str(tmp_path), netns_mode_getter=None)
    assert f['gpus'] == [] and f['nearest_nic'] == {} and f['gpu_nic_topology']['matrix'] == {}
    assert f['nvidia_peermem'] == {'gpus_present': False, 'loaded': False, 'module': None, 'source': None, 'missing': False}
    judged = pt.rail_affinity(f, ['eth0'])
    assert judged['skipped'] == 'no NVIDIA GPU found; topology checks skipped'
    assert judged['problems'] == []


def test_rail_affinity(host_cfg):
    f = facts(host_cfg)
    judged = pt.rail_affinity(f, ['ens1f0np0', 'ens84np0', 'ens41np0', 'ens3np0', 'nosuch0'])
    assert [(r['pf'], r['rdma_device'], r['class']) for r in judged['rails']] == [
        ('ens1f0np0', 'mlx5_0', 'PIX'), ('ens84np0', 'mlx5_3', 'PIX'), ('ens41np0', 'mlx5_2', 'NODE'),
        ('ens3np0', 'mlx5_1', 'PHB'), ('nosuch0', None, None)]
    problems = judged['problems']
    assert problems[0].startswith('nvidia_peermem is not loaded while 3 NVIDIA GPU(s) are present')
    assert any('ACS request/completion redirect is on at PCIe bridge 0000:02:01.0' in p and 'ens1f0np0' in p for p in problems)
    assert any(p.startswith('ens41np0 (mlx5_2, 0000:41:00.0) is NODE to its nearest GPU GPU0') for p in problems)
    assert any(p.startswith('ens3np0 (mlx5_1, 0000:08:00.0) is PHB') for p in problems)
    assert any(p.startswith('nosuch0 has no RDMA device') for p in problems)
    assert judged['rails'][0]['acs_redirect'] == ['0000:02:01.0']
    assert not any('ens84np0' in p for p in problems)


def test_rail_affinity_clean_and_unknown_acs(host):
    os.makedirs(os.path.join(str(host), 'sys', 'module', 'nvidia_peermem'))
    judged = pt.rail_affinity(facts(host), ['ens84np0'])
    assert judged['problems'] == []
    assert judged['notes'] and 'unknown' in judged['notes'][0]


def test_existing_gpudirect_keys_unchanged(host):
    gd = facts(host)['gpudirect']
    assert [g['pci_address'] for g in gd['gpus']] == [GPU0, GPU1, GPU2]
    assert gd['peermem_loaded'] is False
    assert gd['numa_aligned'] is True


def test_vfs_are_not_topology_nics(host):
    """An RDMA device on an SR-IOV VF of mlx5_0 (host-mode VFs) shares its PF's path: left out."""
    pf = os.path.join(str(host), 'sys', 'devices', 'pci0000:00', '0000:00:01.0', '0000:01:00.0', '0000:02:01.0')
    vf = os.path.join(pf, '0000:04:00.2')
    os.makedirs(vf)
    os.symlink(os.path.join(pf, '0000:04:00.0'), os.path.join(vf, 'physfn'))
    os.symlink(vf, os.path.join(str(host), 'sys', 'bus', 'pci', 'devices', '0000:04:00.2'))
    ib = os.path.join(str(host), 'sys', 'class', 'infiniband', 'mlx5_10')
    os.makedirs(ib)
    os.symlink(vf, os.path.join(ib, 'device'))
    f = facts(host)
    assert f['devices']['mlx5_10']['pci_address'] == '0000:04:00.2'
    assert 'mlx5_10' not in f['gpu_nic_topology']['nics']
    assert 'mlx5_10' not in f['gpu_nic_topology']['matrix'][GPU0]


def test_gpu_without_pci_path_is_reported(tmp_path):
    """The lab-like fixture's GPU has no /sys/bus/pci/devices link into /sys/devices: no class, no nearest."""
    with open(os.path.join(FIXTURES, 'sysfs_node.json')) as f:
        build_tree(str(tmp_path), json.load(f))
    f = facts(tmp_path)
    assert f['gpu_nic_topology']['matrix'] == {'0000:b1:00.0': {'mlx5_8': None, 'rxe0': None}}
    assert f['nearest_nic'] == {'0000:b1:00.0': None}
    judged = pt.rail_affinity(f, ['enp157s0np0'])
    assert judged['problems'] == ['no PCIe path between enp157s0np0 (mlx5_8) and any GPU could be traced (the NIC is not a '
                                  "PCI function, or its or the GPUs' /sys/bus/pci/devices links lead to no PCI root complex), "
                                  'so its GPU affinity is unknown']


# --- ConnectX-8 Data Direct: the rails whose GPU is on another root (the trees of _host/test_data_direct.py) ------------

def _dd_facts(tmp_path, pairing, **tree):
    root = build(tmp_path, **tree)
    return rf.gather(os.path.join(root, 'sys'), os.path.join(root, 'proc'), netns_mode_getter=None, data_direct_pairing=pairing)


def test_rail_data_direct_lists_the_rail_whose_nic_the_kernel_pairs_under_another_root(tmp_path):
    got = pt.rail_data_direct(_dd_facts(tmp_path, Kernel({'mlx5_0': DD_PATH, 'mlx5_1': None})), ['ens1np0', 'ens2np0'])
    assert got == [{'pf': 'ens1np0', 'rdma_device': 'mlx5_0', 'pci_address': '0000:03:00.0', 'root_complex': 'pci0000:00',
                    'data_direct': {'device': '0000:82:00.0', 'root_complex': 'pci0000:80', 'root_differs': True,
                                    'pairing': 'mlx5dv', 'candidates': [], 'reason': None}}]


def test_rail_data_direct_lists_every_rail_when_the_pairing_is_unknown(tmp_path):
    got = pt.rail_data_direct(_dd_facts(tmp_path, None), ['ens1np0', 'ens2np0'])
    assert [(r['pf'], r['data_direct']['pairing']) for r in got] == [('ens1np0', 'unknown'), ('ens2np0', 'unknown')]


def test_rail_data_direct_takes_a_pf_without_rdma_device_as_maybe_data_direct_on_such_a_node(tmp_path):
    [rail] = pt.rail_data_direct(_dd_facts(tmp_path, Kernel({'mlx5_0': None, 'mlx5_1': None})), ['ens1np0', 'ens9np0'])
    assert (rail['pf'], rail['rdma_device'], rail['pci_address']) == ('ens9np0', None, None)
    assert rail['data_direct']['pairing'] == 'unknown'
    assert rail['data_direct']['candidates'] == [{'device': '0000:82:00.0', 'root_complex': 'pci0000:80'}]
    assert rail['data_direct']['reason'] == 'no RDMA device with a PCI function was found on ens9np0'


def test_rail_data_direct_is_empty_without_data_direct_functions_or_under_the_nics_own_root(tmp_path):
    assert pt.rail_data_direct(_dd_facts(tmp_path / 'plain', None, data_direct=False), ['ens1np0', 'ens9np0']) == []
    facts = _dd_facts(tmp_path / 'dd', None)
    facts['gpu_nic_topology']['nics']['mlx5_0']['data_direct'].update(root_differs=False, pairing='mlx5dv')
    assert [r['pf'] for r in pt.rail_data_direct(facts, ['ens1np0', 'ens2np0'])] == ['ens2np0']

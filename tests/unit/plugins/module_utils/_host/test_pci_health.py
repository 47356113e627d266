# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCIe health (issue 19): link speed/width, MaxReadReq, relaxed ordering, ATS and ACS of the RDMA NICs and GPUs, and the RDMA
port counters, from the derived two-socket sysfs tree (tests/unit/fixtures/sysfs_gpu_two_socket.json, not a capture) with
config space bytes built here per the PCI Express Base Specification 5.0 layout."""

import json
import os
import struct

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._common import pause_stats as ps
from ansible_collections.gpufabric.roce.plugins.module_utils._host import pci_health as ph
from ansible_collections.gpufabric.roce.plugins.module_utils._common import pci_topology as pt
from ansible_collections.gpufabric.roce.plugins.module_utils._host import rdma_facts as rf

from test_pci_topology import config_space, write_config
from test_rdma_facts import build_tree

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'fixtures')
MLX5_0, MLX5_1, MLX5_2, MLX5_3 = '0000:04:00.0', '0000:08:00.0', '0000:41:00.0', '0000:84:00.0'
GPU0, GPU1, GPU2 = '0000:03:00.0', '0000:07:00.0', '0000:83:00.0'


def endpoint_config(mrrs=512, mps=256, relaxed=True, ats=None, *, pcie_first=False, size=4096):
    """Config space of an endpoint: header; standard capabilities PM (0x40) -> MSI-X (0x50) -> PCI Express (0x60) - or the
    PCI Express capability first at 0x40 with ``pcie_first``; extended AER (0x100) then, when ``ats`` is not None, ATS at
    0x150 with its Enable bit set to ``ats``. Device Control (PCIe cap + 0x08, 7.5.3.4): bits 14:12 Max_Read_Request_Size,
    bits 7:5 Max_Payload_Size (both 128 << value), bit 4 Enable Relaxed Ordering; Device Capabilities (cap + 0x04) bits 2:0
    Max_Payload_Size Supported = 512."""
    cfg = bytearray(4096)
    struct.pack_into('<HH', cfg, 0x00, 0x15B3, 0x101D)        # vendor, device
    struct.pack_into('<H', cfg, 0x06, 0x0010)                 # Status: Capabilities List
    pcie = 0x40 if pcie_first else 0x60
    cfg[0x34] = 0x40                                          # Capabilities Pointer
    if pcie_first:
        cfg[0x40], cfg[0x41] = 0x10, 0x50                     # PCI Express -> MSI-X
        cfg[0x50], cfg[0x51] = 0x11, 0x00                     # MSI-X, last
    else:
        cfg[0x40], cfg[0x41] = 0x01, 0x50                     # PM -> MSI-X
        cfg[0x50], cfg[0x51] = 0x11, 0x60                     # MSI-X -> PCI Express
        cfg[0x60], cfg[0x61] = 0x10, 0x00                     # PCI Express, last
    struct.pack_into('<H', cfg, pcie + 0x02, 0x0002)          # PCIe Capabilities: version 2, endpoint
    struct.pack_into('<I', cfg, pcie + 0x04, 0x2)             # Device Capabilities: MPS supported 512
    devctl = ((mrrs.bit_length() - 8) << 12) | ((mps.bit_length() - 8) << 5) | (0x10 if relaxed else 0)
    struct.pack_into('<H', cfg, pcie + 0x08, devctl)
    nxt = 0x150 if ats is not None else 0
    struct.pack_into('<I', cfg, 0x100, 0x0001 | (2 << 16) | (nxt << 20))  # AER (id 0x0001, version 2)
    if ats is not None:
        struct.pack_into('<I', cfg, 0x150, 0x000F | (1 << 16))            # ATS (id 0x000F), last
        struct.pack_into('<HH', cfg, 0x154, 0x0020, 0x8000 if ats else 0x0000)
    return bytes(cfg[:size])


@pytest.fixture
def host(tmp_path):
    with open(os.path.join(FIXTURES, 'sysfs_gpu_two_socket.json')) as f:
        build_tree(str(tmp_path), json.load(f))
    return tmp_path


def gather(tree):
    return rf.gather(os.path.join(str(tree), 'sys'), os.path.join(str(tree), 'proc'), netns_mode_getter=None)


# --- config space readers -----------------------------------------------------------------------

@pytest.mark.parametrize('mrrs', [128, 256, 512, 1024, 2048, 4096])
def test_max_read_request_values(mrrs):
    assert ph.device_control(endpoint_config(mrrs=mrrs))['max_read_request'] == mrrs


def test_device_control_with_pcie_cap_later_in_the_list():
    later = ph.device_control(endpoint_config(mrrs=4096, mps=256, relaxed=False))
    assert later == {'pcie_capability': '0x60', 'max_read_request': 4096, 'max_payload': 256,
                     'max_payload_supported': 512, 'relaxed_ordering': False}
    first = ph.device_control(endpoint_config(mrrs=512, mps=128, relaxed=True, pcie_first=True))
    assert (first['pcie_capability'], first['max_read_request'], first['max_payload'], first['relaxed_ordering']) == \
        ('0x40', 512, 128, True)
    assert pt.find_cap(endpoint_config(), 0x11) == 0x50          # MSI-X, second in the list
    assert pt.find_cap(endpoint_config(), 0x05) is None          # no MSI


def test_unreadable_config_space_is_not_guessed():
    short = endpoint_config(size=64)
    assert ph.config_reason(short).startswith('unreadable (needs root)')
    assert set(ph.device_control(short).values()) == {None}
    assert ph.ats_state(short) == {'present': None, 'enabled': None, 'control': None}
    assert ph.config_reason(None) == 'config space not readable'
    # conventional PCI (256 bytes): device control readable, extended space (ATS) is not
    legacy = endpoint_config(size=256, ats=True)
    assert ph.config_reason(legacy) is None
    assert ph.device_control(legacy)['max_read_request'] == 512
    assert ph.ats_state(legacy)['present'] is None


def test_no_capability_list():
    cfg = bytearray(endpoint_config())
    struct.pack_into('<H', cfg, 0x06, 0)
    assert ph.device_control(bytes(cfg))['max_read_request'] is None


def test_ats_present_enabled_absent():
    assert ph.ats_state(endpoint_config(ats=True)) == {'present': True, 'enabled': True, 'control': '0x8000'}
    assert ph.ats_state(endpoint_config(ats=False)) == {'present': True, 'enabled': False, 'control': '0x0000'}
    assert ph.ats_state(endpoint_config(ats=None)) == {'present': False, 'enabled': None, 'control': None}


@pytest.mark.parametrize('text,gts', [('16.0 GT/s PCIe', 16.0), ('8.0 GT/s PCIe', 8.0), ('2.5 GT/s PCIe', 2.5),
                                      ('8 GT/s', 8.0), ('5 GT/s', 5.0), ('Unknown', None), ('Unknown speed', None),
                                      (None, None), ('', None)])
def test_parse_speed(text, gts):
    assert ph.parse_speed(text) == gts


# --- the fixture node ---------------------------------------------------------------------------

def test_downtrained_nic_speed_and_width(host):
    pcie = gather(host)['pcie']
    link = pcie['devices'][MLX5_1]['link']
    assert (link['speed'], link['width'], link['max_speed'], link['max_width']) == ('8.0 GT/s PCIe', 8, '16.0 GT/s PCIe', 16)
    assert (link['downtrained_speed'], link['downtrained_width'], link['downtrained']) == (True, True, True)
    assert link['port'] == '0000:00:03.0'
    found = [f for f in pcie['findings'] if f['pci_address'] == MLX5_1]
    assert found == [{'pci_address': MLX5_1, 'device': 'mlx5_1', 'role': 'nic', 'kind': 'downtrained', 'severity': 'problem',
                      'message': '0000:08:00.0 (mlx5_1): link 8.0 GT/s x8, capable of 16.0 GT/s x16 (downtrained: speed and width)'}]
    assert pcie['downtrained'] == [MLX5_1, GPU2]


def test_gpu_width_downtrained_and_idle_gpu_speed(host):
    pcie = gather(host)['pcie']
    by = {(f['pci_address'], f['kind']): f for f in pcie['findings']}
    assert by[(GPU2, 'downtrained')]['message'] == \
        '0000:83:00.0 (GPU2): link 16.0 GT/s x8, capable of 16.0 GT/s x16 (downtrained: width)'
    # an idle GPU lowers its link speed: a note, not a downtrained link
    assert by[(GPU1, 'gpu_link_speed')]['severity'] == 'note'
    assert (GPU1, 'downtrained') not in by
    assert pcie['devices'][GPU0]['role'] == 'gpu' and pcie['devices'][GPU0]['link']['downtrained'] is False


def test_slot_limited_and_unknown_links(host):
    devices = gather(host)['pcie']['devices']
    slot = devices[MLX5_3]['link']
    assert (slot['max_speed_gts'], slot['port_max_speed'], slot['slot_limited'], slot['downtrained']) == \
        (32.0, '16.0 GT/s PCIe', True, False)
    down = devices[MLX5_2]['link']
    assert (down['speed_gts'], down['width'], down['downtrained']) == (None, None, None)
    # the dual-port NIC's two functions are two devices; the NVSwitch-class function is neither NIC nor GPU
    assert sorted(devices) == [GPU0, MLX5_0, '0000:04:00.1', GPU1, MLX5_1, MLX5_2, GPU2, MLX5_3]
    assert devices[MLX5_0]['names'] == ['mlx5_0'] and devices[MLX5_0]['netdevs'] == ['ens1f0np0']


def test_without_config_files_everything_from_config_is_unknown(host):
    pcie = gather(host)['pcie']
    nic = pcie['devices'][MLX5_0]
    assert (nic['config_bytes'], nic['max_read_request'], nic['relaxed_ordering'], nic['ats']['present']) == (0, None, None, None)
    assert nic['acs'] == {'0000:00:01.0': 'unknown', '0000:01:00.0': 'unknown', '0000:02:01.0': 'unknown'}
    assert pcie['config_unreadable'] == sorted(pcie['devices']) and pcie['config_reason'] == 'config space not readable'


def test_config_values_and_acs_as_root(host):
    write_config(host, MLX5_0, endpoint_config(mrrs=4096, mps=256, relaxed=True, ats=True))
    write_config(host, MLX5_1, endpoint_config(mrrs=512, relaxed=False, ats=False, pcie_first=True))
    write_config(host, GPU0, endpoint_config(mrrs=512, ats=None))
    write_config(host, GPU1, endpoint_config(size=64))
    write_config(host, '0000:02:01.0', config_space('downstream_port', acs_control=0x001D))
    write_config(host, '0000:01:00.0', config_space('upstream_port'))
    write_config(host, '0000:00:01.0', config_space('root_port', acs_control=0x0000))
    facts = gather(host)
    devices = facts['pcie']['devices']
    nic = devices[MLX5_0]
    assert (nic['max_read_request'], nic['max_payload'], nic['relaxed_ordering'], nic['config_reason']) == (4096, 256, True, None)
    assert nic['ats'] == {'present': True, 'enabled': True, 'control': '0x8000'}
    # ACS from the topology's report, the same states
    assert nic['acs'] == {'0000:00:01.0': 'no_redirect', '0000:01:00.0': 'absent', '0000:02:01.0': 'redirect'}
    assert facts['acs']['bridges']['0000:02:01.0']['acs'] == 'redirect'
    slow = devices[MLX5_1]
    assert (slow['pcie_capability'], slow['max_read_request'], slow['relaxed_ordering'], slow['ats']['present']) == \
        ('0x40', 512, False, True)
    assert slow['ats']['enabled'] is False
    assert devices[GPU0]['ats'] == {'present': False, 'enabled': None, 'control': None}
    assert devices[GPU1]['config_reason'].startswith('unreadable (needs root)') and devices[GPU1]['max_read_request'] is None
    assert facts['pcie']['config_unreadable'] == ['0000:04:00.1', GPU1, MLX5_2, GPU2, MLX5_3]
    assert facts['pcie']['config_reason'] == 'config space not readable'


def test_a_low_max_read_request_is_a_note(host):
    write_config(host, MLX5_0, endpoint_config(mrrs=128))
    write_config(host, GPU0, endpoint_config(mrrs=256))
    by = {(f['pci_address'], f['kind']): f for f in gather(host)['pcie']['findings']}
    assert by[(MLX5_0, 'max_read_request')] == {
        'pci_address': MLX5_0, 'device': 'mlx5_0', 'role': 'nic', 'kind': 'max_read_request', 'severity': 'note',
        'message': '0000:04:00.0 (mlx5_0): MaxReadReq 128 bytes, below 256: each DMA read is split into 128-byte requests '
                   '(set by the firmware or BIOS; the driver may raise it)'}
    assert (GPU0, 'max_read_request') not in by


def test_lab_shaped_node_has_no_problem(tmp_path):
    """The lab's devices (virtio, igb behind a QEMU root port, netdevsim) must not make the warn policy say anything: rxe on
    a virtio function without PCIe link files, an igb-like function whose link equals its maximum."""
    with open(os.path.join(FIXTURES, 'sysfs_node.json')) as f:
        build_tree(str(tmp_path), json.load(f))
    pcie = gather(tmp_path)['pcie']
    assert [f for f in pcie['findings'] if f['severity'] == 'problem'] == []
    rxe = pcie['devices']['0000:00:0a.0']
    assert (rxe['names'], rxe['link']['speed'], rxe['link']['downtrained']) == (['rxe0'], None, None)


# --- counters -----------------------------------------------------------------------------------

def test_port_counters(host):
    port = gather(host)['devices']['mlx5_0']['ports'][0]
    assert port['hw_counters'] == {'np_cnp_sent': 120, 'out_of_sequence': 3, 'rp_cnp_handled': 7}
    assert port['counters'] == {'port_rcv_data': 987654321, 'port_xmit_data': 123456789012}
    assert gather(host)['devices']['mlx5_1']['ports'][0]['hw_counters'] == {}


class FakeEthtool:
    STATS = {'ens1f0np0': [('rx_packets', 10), ('rx_prio3_pause', 5), ('tx_prio3_pause', 2), ('rx_prio3_pause_duration', 40),
                           ('rx_pause_ctrl_phy', 1), ('tx_pause_ctrl_phy', 0)]}

    def __init__(self, ifname):
        self.ifname = ifname

    def get_statistics(self):
        if self.ifname not in self.STATS:
            raise OSError(95, 'Operation not supported')
        return self.STATS[self.ifname]

    def close(self):
        pass


def test_pause_counters_through_the_getter(host):
    facts = rf.gather(os.path.join(str(host), 'sys'), os.path.join(str(host), 'proc'), netns_mode_getter=None,
                      pause_getter=lambda names: ps.gather(names, FakeEthtool))
    pause = facts['pause_counters']
    assert pause['ens1f0np0'] == {'counters': {'rx_prio3_pause': 5, 'tx_prio3_pause': 2, 'rx_prio3_pause_duration': 40,
                                               'rx_pause_ctrl_phy': 1, 'tx_pause_ctrl_phy': 0}, 'error': None}
    assert pause['ens3np0']['counters'] is None and 'Operation not supported' in pause['ens3np0']['error']
    assert gather(host)['pause_counters'] is None


def test_pause_counters_without_pyroute2(monkeypatch):
    monkeypatch.setattr(ps, 'IoctlEthtool', None)
    assert ps.read('eth0') == {'counters': None, 'error': 'pyroute2 (pyroute2.ethtool.ioctl) is not importable'}


@pytest.mark.skipif(not ps.HAS_IOCTL or not os.path.exists('/sys/class/net/lo'), reason='needs pyroute2 and a kernel')
def test_pause_counters_live_loopback():
    # lo has no ethtool statistics: an error, not an exception
    assert ps.read('lo') == {'counters': None, 'error': 'the driver has no ethtool statistics (EOPNOTSUPP)'}

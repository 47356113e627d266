# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ConnectX-8 Data Direct in rdma_facts: fake sysfs trees of a Data Direct node (the NIC's PF under root pci0000:00, its
Data Direct function 15b3:2100 under pci0000:80 with the GPU) and of a node without one; the kernel's pairing is played
by a stand-in of mlx5dv_get_data_direct_sysfs_path (no ConnectX-8 here)."""

import ctypes
import errno
import os

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._host import data_direct as dd
from ansible_collections.gpufabric.roce.plugins.module_utils._host import rdma_facts as rf

PF = 'devices/pci0000:00/0000:00:01.0/0000:03:00.0'          # mlx5_0, ConnectX-8 PF (Data Direct)
OTHER = 'devices/pci0000:00/0000:00:02.0/0000:05:00.0'       # mlx5_1, a NIC without Data Direct
DD_FN = 'devices/pci0000:80/0000:80:01.0/0000:82:00.0'       # the Data Direct function, 15b3:2100
GPU = 'devices/pci0000:80/0000:80:02.0/0000:84:00.0'         # the GPU on the Data Direct function's root
BRIDGES = ('devices/pci0000:00/0000:00:01.0', 'devices/pci0000:00/0000:00:02.0',
           'devices/pci0000:80/0000:80:01.0', 'devices/pci0000:80/0000:80:02.0')
DD_PATH = '/' + DD_FN  # what the kernel returns: kobject_get_path, below /sys


def _write(root, path, content):
    full = os.path.join(root, 'sys', path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, 'w') as f:
        f.write(content + '\n')


def _link(root, path, target):
    full = os.path.join(root, 'sys', path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    os.symlink(os.path.relpath(os.path.join(root, 'sys', target), os.path.dirname(full)), full)


def _function(root, path, ids, driver=None):
    vendor, device, cls = ids
    for name, value in (('vendor', vendor), ('device', device), ('class', cls), ('numa_node', '0')):
        _write(root, '%s/%s' % (path, name), value)
    _link(root, 'bus/pci/devices/%s' % os.path.basename(path), path)
    if driver:
        os.makedirs(os.path.join(root, 'sys', 'bus/pci/drivers', driver), exist_ok=True)
        _link(root, '%s/driver' % path, 'bus/pci/drivers/%s' % driver)
        _link(root, 'bus/pci/drivers/%s/%s' % (driver, os.path.basename(path)), path)


def _rdma_nic(root, name, path, netdev):
    _function(root, path, ('0x15b3', '0x1023', '0x020000'), 'mlx5_core')
    os.makedirs(os.path.join(root, 'sys', path, 'net', netdev))
    _link(root, 'class/infiniband/%s/device' % name, path)
    _link(root, 'class/net/%s/device' % netdev, path)


def build(root, data_direct=True, dd_driver='mlx5_data_direct'):
    root = str(root)
    for bridge in BRIDGES:
        _function(root, bridge, ('0x8086', '0x1234', '0x060400'), 'pcieport')
    _rdma_nic(root, 'mlx5_0', PF, 'ens1np0')
    _rdma_nic(root, 'mlx5_1', OTHER, 'ens2np0')
    _function(root, GPU, ('0x10de', '0x2901', '0x030200'), 'nvidia')
    if data_direct:
        _function(root, DD_FN, ('0x15b3', '0x2100', '0x020000'), dd_driver)
    os.makedirs(os.path.join(root, 'proc'), exist_ok=True)
    return root


class Kernel:
    """Stand-in for mlx5dv_pairing: the kernel's answer per RDMA device, and the names it was asked about."""

    def __init__(self, answers, reason=None):
        self.answers, self.reason, self.asked = answers, reason, []

    def __call__(self, names):
        self.asked.append(list(names))
        return (dict((n, self.answers.get(n)) for n in names) if self.answers is not None else None), self.reason


def facts(root, pairing=None):
    return rf.gather(os.path.join(root, 'sys'), os.path.join(root, 'proc'), netns_mode_getter=None,
                     data_direct_pairing=pairing)


def test_the_kernels_pairing_gives_the_data_direct_root_that_differs_from_the_nics_own(tmp_path):
    kernel = Kernel({'mlx5_0': DD_PATH, 'mlx5_1': None})
    got = facts(build(tmp_path), kernel)
    nics = got['gpu_nic_topology']['nics']
    assert kernel.asked == [['mlx5_0', 'mlx5_1']]
    assert nics['mlx5_0']['root_complex'] == 'pci0000:00'
    assert nics['mlx5_0']['data_direct'] == {'device': '0000:82:00.0', 'root_complex': 'pci0000:80', 'root_differs': True,
                                             'pairing': 'mlx5dv', 'candidates': [], 'reason': None}
    # ENODEV from the kernel: mlx5_1 has no Data Direct function, exactly
    assert nics['mlx5_1']['data_direct'] is None
    [fn] = got['data_direct']['functions']
    assert (fn['pci_address'], fn['device_id'], fn['driver'], fn['root_complex'], fn['bridges']) == (
        '0000:82:00.0', '0x2100', 'mlx5_data_direct', 'pci0000:80', ['0000:80:01.0'])
    assert (got['data_direct']['pairing'], got['data_direct']['reason']) == ('mlx5dv', None)
    # the GPU is on the Data Direct function's root, and the NIC's own topology is unchanged by it
    assert got['gpus'][0]['root_complex'] == 'pci0000:80'
    assert nics['mlx5_0']['nearest_gpu']['class'] == 'NODE'


def test_a_tree_read_without_the_kernel_leaves_every_mellanox_nic_unknown_with_the_candidates(tmp_path):
    got = facts(build(tmp_path))
    for name in ('mlx5_0', 'mlx5_1'):
        entry = got['gpu_nic_topology']['nics'][name]['data_direct']
        assert entry['pairing'] == 'unknown' and entry['device'] is None and entry['root_differs'] is None
        assert entry['candidates'] == [{'device': '0000:82:00.0', 'root_complex': 'pci0000:80'}]
        assert 'not queried' in entry['reason']
    assert got['data_direct']['pairing'] == 'unknown'


def test_without_rdma_core_the_pairing_is_unknown_and_says_why(tmp_path):
    reason = "libmlx5.so.1 has no mlx5dv_get_data_direct_sysfs_path (rdma-core before 55)"
    got = facts(build(tmp_path), Kernel(None, reason))
    entry = got['gpu_nic_topology']['nics']['mlx5_0']['data_direct']
    assert (entry['pairing'], entry['reason']) == ('unknown', reason)
    assert (got['data_direct']['pairing'], got['data_direct']['reason']) == ('unknown', reason)


def test_an_error_for_one_device_leaves_that_one_unknown(tmp_path):
    kernel = Kernel({'mlx5_0': DD_PATH, 'mlx5_1': {'error': 'ibv_open_device failed: Permission denied'}})
    nics = facts(build(tmp_path), kernel)['gpu_nic_topology']['nics']
    assert nics['mlx5_0']['data_direct']['pairing'] == 'mlx5dv'
    assert nics['mlx5_1']['data_direct']['pairing'] == 'unknown'
    assert nics['mlx5_1']['data_direct']['reason'] == 'ibv_open_device failed: Permission denied'


def test_a_data_direct_function_under_the_nics_own_root_does_not_differ(tmp_path):
    root = build(tmp_path, data_direct=False)
    _function(root, 'devices/pci0000:00/0000:00:01.0/0000:03:00.1', ('0x15b3', '0x2100', '0x020000'), 'mlx5_data_direct')
    kernel = Kernel({'mlx5_0': '/devices/pci0000:00/0000:00:01.0/0000:03:00.1', 'mlx5_1': None})
    entry = facts(root, kernel)['gpu_nic_topology']['nics']['mlx5_0']['data_direct']
    assert (entry['device'], entry['root_complex'], entry['root_differs']) == ('0000:03:00.1', 'pci0000:00', False)


def test_an_unbound_data_direct_function_is_found_by_its_id(tmp_path):
    """A kernel before 6.12 has no mlx5_data_direct driver: the function is there, bound to nothing."""
    got = facts(build(tmp_path, dd_driver=None))
    [fn] = got['data_direct']['functions']
    assert (fn['pci_address'], fn['driver']) == ('0000:82:00.0', None)
    assert got['gpu_nic_topology']['nics']['mlx5_0']['data_direct']['pairing'] == 'unknown'


def test_a_node_without_a_data_direct_function_asks_nothing_and_reports_null(tmp_path):
    def never(names):
        raise AssertionError('the kernel was asked on a node without a Data Direct function: %r' % names)
    got = facts(build(tmp_path, data_direct=False), never)
    assert [n['data_direct'] for n in got['gpu_nic_topology']['nics'].values()] == [None, None]
    assert got['data_direct'] == {'functions': [], 'pairing': None, 'reason': None}


# --- the rdma-core call, against stand-ins of the two libraries and against the machine's own ----------------------

class _Lib:
    """A ctypes library stand-in: attributes are plain functions (argtypes/restype are set on them)."""

    def __init__(self, **functions):
        for name, fn in functions.items():
            setattr(self, name, fn)


def _libraries(answers, open_fails=()):
    names = list(answers)

    def get_device_list(count):
        count._obj.value = len(names)
        return [n.encode() for n in names]

    def open_device(device):
        if device.decode() in open_fails:
            ctypes.set_errno(errno.EACCES)
            return None
        return device

    def query(context, buf, size):
        answer = answers[context.decode()]
        if isinstance(answer, int):
            return answer
        buf.value = answer.encode()
        return 0

    verbs = _Lib(ibv_get_device_list=get_device_list, ibv_free_device_list=lambda d: None,
                 ibv_get_device_name=lambda d: d, ibv_open_device=open_device, ibv_close_device=lambda c: 0)
    mlx5 = _Lib(mlx5dv_is_supported=lambda d: not d.startswith(b'rxe'), mlx5dv_get_data_direct_sysfs_path=query)
    return {dd.LIBIBVERBS: verbs, dd.LIBMLX5: mlx5}


def test_mlx5dv_pairing_reads_path_enodev_and_errors(monkeypatch):
    libs = _libraries({'mlx5_0': DD_PATH, 'mlx5_1': errno.ENODEV, 'mlx5_2': errno.EOPNOTSUPP, 'mlx5_3': DD_PATH,
                       'rxe0': DD_PATH, 'mlx5_9': DD_PATH}, open_fails=('mlx5_3',))
    monkeypatch.setattr(dd.ctypes, 'CDLL', lambda name, use_errno=False: libs[name])
    answers, reason = dd.mlx5dv_pairing(['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3', 'rxe0'])
    assert reason is None
    assert answers['mlx5_0'] == DD_PATH
    assert answers['mlx5_1'] is None and answers['rxe0'] is None  # ENODEV; not an mlx5 device
    assert 'Operation not supported' in answers['mlx5_2']['error']
    assert 'ibv_open_device failed: Permission denied' in answers['mlx5_3']['error']
    assert 'mlx5_9' not in answers  # not asked about


def test_mlx5dv_pairing_without_the_libraries_says_so(monkeypatch):
    def missing(name, use_errno=False):
        raise OSError('%s: cannot open shared object file' % name)
    monkeypatch.setattr(dd.ctypes, 'CDLL', missing)
    answers, reason = dd.mlx5dv_pairing(['mlx5_0'])
    assert answers is None and 'not loadable' in reason and 'libibverbs.so.1' in reason


def test_mlx5dv_pairing_with_this_machines_rdma_core():
    """The real libraries when installed: rdma-core before 55 lacks the call and says so; a newer one lists no RDMA
    device here (no NIC), so nothing is answered."""
    try:
        lib = ctypes.CDLL(dd.LIBMLX5)
        ctypes.CDLL(dd.LIBIBVERBS)
    except OSError:
        pytest.skip('rdma-core is not installed here')
    answers, reason = dd.mlx5dv_pairing(['mlx5_0'])
    if hasattr(lib, 'mlx5dv_get_data_direct_sysfs_path'):
        assert reason is None and answers == {}
    else:
        assert answers is None and reason == 'libmlx5.so.1 has no mlx5dv_get_data_direct_sysfs_path (rdma-core before 55)'

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/module_utils/_host/node_prereqs.py: pyroute2, perftest and kernel modules, read without changing anything."""

import os

from ansible_collections.gpufabric.roce.plugins.module_utils._host import node_prereqs as np
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import Sysfs

RELEASE = '6.1.0-56-amd64'


def tree(tmp_path, loaded=(), dep=(), builtin=()):
    sys_root, proc_root, lib = tmp_path / 'sys', tmp_path / 'proc', tmp_path / 'lib' / 'modules'
    for name in loaded:
        (sys_root / 'module' / name).mkdir(parents=True)
    (proc_root / 'sys' / 'kernel').mkdir(parents=True)
    (proc_root / 'sys' / 'kernel' / 'osrelease').write_text(RELEASE + '\n')
    (lib / RELEASE).mkdir(parents=True)
    (lib / RELEASE / 'modules.dep').write_text(''.join('%s: kernel/drivers/dep.ko\n' % p for p in dep))
    (lib / RELEASE / 'modules.builtin').write_text(''.join('%s\n' % p for p in builtin))
    return Sysfs(str(sys_root), str(proc_root)), str(lib)


def test_a_module_is_available_when_loaded_loadable_or_built_in(tmp_path):
    fs, lib = tree(tmp_path, loaded=['rdma_rxe'], dep=['kernel/net/8021q/8021q.ko.xz', 'kernel/drivers/infiniband/core/ib_uverbs.ko'],
                   builtin=['kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko'])
    kernel = np.kernel_modules(fs, lib, names=('8021q', 'ib_uverbs', 'rdma_rxe', 'mlx5_ib', 'mlx5_core'))
    assert kernel['release'] == RELEASE
    assert kernel['modules'] == {
        '8021q': {'loaded': False, 'available': True, 'builtin': False},
        'ib_uverbs': {'loaded': False, 'available': True, 'builtin': False},
        'rdma_rxe': {'loaded': True, 'available': True, 'builtin': False},
        'mlx5_ib': {'loaded': False, 'available': False, 'builtin': False},
        'mlx5_core': {'loaded': False, 'available': True, 'builtin': True},
    }


def test_no_modules_directory_means_only_loaded_modules_count(tmp_path):
    fs, _lib = tree(tmp_path, loaded=['8021q'])
    kernel = np.kernel_modules(fs, str(tmp_path / 'nowhere'), names=('8021q', 'mlx5_ib'))
    assert kernel['modules']['8021q']['available'] is True
    assert kernel['modules']['mlx5_ib']['available'] is False


def test_gather_reports_pyroute2_and_the_perftest_binaries(tmp_path):
    fs, lib = tree(tmp_path)
    found = {'ib_write_bw': '/usr/bin/ib_write_bw'}
    out = np.gather(fs, found.get, lib, {'enp157s0np0': {'driver': 'mlx5_core'}, 'fab0': {'driver': 'virtio_net'}})
    assert out['rdma_drivers'] == {'enp157s0np0': 'mlx5_ib', 'fab0': 'rdma_rxe'}
    assert set(out['kernel']['modules']) == {'8021q', 'ib_uverbs', 'mlx5_ib', 'rdma_rxe', 'nvidia_peermem'}
    assert out['binaries'] == {'ib_write_bw': '/usr/bin/ib_write_bw', 'ib_write_lat': None, 'ib_read_bw': None, 'ib_send_bw': None}
    # the interpreter running the tests has pyroute2 (requirements.txt); a module name that does not exist is not importable
    assert out['pyroute2']['importable'] is True and os.path.isabs(out['pyroute2']['python'])
    assert np.python_module('gpufabric_no_such_module')['importable'] is False


def test_rdma_driver_follows_the_pf_driver():
    assert np.rdma_driver_for('mlx5_core') == 'mlx5_ib'
    assert np.rdma_driver_for('virtio_net') == 'rdma_rxe'
    assert np.rdma_driver_for(None) == 'rdma_rxe'

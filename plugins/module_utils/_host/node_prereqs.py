# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the later phases need on a node, read without changing anything: pyroute2 for the host modules,
perftest for the verification, and the kernel modules for the VLAN gateway and the RDMA driver.

A kernel module counts as present when it is loaded (``/sys/module/<name>``) or the running kernel can
load it (listed in ``modules.dep`` or built in, ``modules.builtin``, under ``/lib/modules/<release>``):
the kernel loads 8021q by itself when the first VLAN interface is created.
"""

from __future__ import absolute_import, division, print_function

import importlib.util
import os
import sys

__metaclass__ = type  # noqa: UP001

PERFTEST_BINARIES = ('ib_write_bw', 'ib_write_lat', 'ib_read_bw', 'ib_send_bw')
# The kernel module of the RDMA driver, by the PF's netdev driver; anything else is taken for soft-RoCE.
RDMA_DRIVER_OF = {'mlx5_core': 'mlx5_ib', 'mlx4_en': 'mlx4_ib', 'bnxt_en': 'bnxt_re', 'ice': 'irdma', 'i40e': 'irdma'}
SOFT_ROCE = 'rdma_rxe'
KERNEL_MODULES = ('8021q', 'ib_uverbs', 'mlx5_ib', 'rdma_rxe', 'nvidia_peermem')


def python_module(name):
    """Whether this (the node's) Python can import ``name``, with the interpreter that was asked."""
    return {'importable': importlib.util.find_spec(name) is not None, 'python': sys.executable}


def _module_names(text, builtin):
    """Module names of a modules.dep (``kernel/net/8021q/8021q.ko.xz: deps``) or modules.builtin file."""
    names = set()
    for line in (text or '').splitlines():
        path = line.split(':', 1)[0].strip() if not builtin else line.strip()
        base = os.path.basename(path)
        if '.ko' in base:
            # the kernel treats - and _ alike in module names
            names.add(base.split('.ko', 1)[0].replace('-', '_'))
    return names


def kernel_modules(fs, lib_modules='/lib/modules', names=KERNEL_MODULES):
    """Per module: ``loaded`` (in /sys/module) and ``available`` (loaded, loadable or built in)."""
    release = (fs.read_file(fs.proc('sys/kernel/osrelease')) or '').strip()
    base = os.path.join(lib_modules, release)
    loadable = _module_names(fs.read_file(os.path.join(base, 'modules.dep')), builtin=False)
    builtin = _module_names(fs.read_file(os.path.join(base, 'modules.builtin')), builtin=True)
    out = {}
    for name in names:
        loaded = os.path.isdir(fs.path('module/%s' % name))
        out[name] = {'loaded': loaded, 'available': loaded or name in loadable or name in builtin, 'builtin': name in builtin}
    return {'release': release or None, 'modules': out}


def rdma_driver_for(netdev_driver):
    return RDMA_DRIVER_OF.get(netdev_driver or '', SOFT_ROCE)


def gather(fs, bin_path, lib_modules='/lib/modules', netdevs=None):
    """``bin_path(name)`` finds an executable (AnsibleModule.get_bin_path) or returns None; ``netdevs`` are the
    PF netdevs of rdma_facts, whose RDMA driver module is reported for each (``rdma_drivers``)."""
    drivers = {name: rdma_driver_for((nd or {}).get('driver')) for name, nd in (netdevs or {}).items()}
    names = tuple(sorted(set(KERNEL_MODULES) | set(drivers.values())))
    return {
        'pyroute2': python_module('pyroute2'),
        'binaries': {name: bin_path(name) for name in PERFTEST_BINARIES},
        'kernel': kernel_modules(fs, lib_modules, names),
        'rdma_drivers': drivers,
    }

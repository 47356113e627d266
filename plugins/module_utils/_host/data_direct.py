# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ConnectX-8 "Data Direct": which RDMA NIC does its DMA through a separate PCI function, and on which PCIe root.

On a Data Direct system (GB300, Vera Rubin) the NIC's PF sits under one PCIe root and its DMA goes through another
PCI function, Mellanox device 0x2100, bound to the kernel driver ``mlx5_data_direct`` (Linux 6.12,
drivers/infiniband/hw/mlx5/data_direct.c), which sits under another root, near the GPU. The root that pairs NIC and
GPU is that function's, not the PF's.

What sysfs shows: the Data Direct functions themselves (vendor and device ID, driver, place in the PCI tree). What it
does not show: which NIC each one serves. The kernel pairs them by a "VUID": the Data Direct function's is in its VPD
(keyword ``VU``), the NIC's comes from a firmware command (QUERY_VUID), and no sysfs attribute holds the NIC's. The
pairing is exposed only through the mlx5 uverbs ioctl that rdma-core wraps as ``mlx5dv_get_data_direct_sysfs_path()``
(libmlx5, rdma-core 55 and later): 0 and the function's sysfs path (``/devices/pci.../<address>``), or ENODEV when the
device has no Data Direct function. ``mlx5dv_pairing`` calls it through ctypes, only on a node that has a Data Direct
function; without the library, the symbol or access to the uverbs device the pairing is reported as unknown, with why.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import ctypes
import errno
import os

from ansible_collections.gpufabric.roce.plugins.module_utils._common import pci_topology as _pci_topology

MELLANOX_VENDOR = '0x15b3'
# The kernel's mlx5_data_direct PCI table: ConnectX-8 Data Direct.
DATA_DIRECT_DEVICE_IDS = ('0x2100',)
DATA_DIRECT_DRIVER = 'mlx5_data_direct'
LIBIBVERBS, LIBMLX5 = 'libibverbs.so.1', 'libmlx5.so.1'
PATH_BUFFER = 4096  # a sysfs device path; a short buffer gets ENOSPC


def data_direct_functions(fs):
    """The node's Data Direct PCI functions, by PCI address: a Mellanox function with a Data Direct device ID, or any
    function bound to ``mlx5_data_direct``; each with ``pci_node``'s place in the tree, ``device_id`` and ``driver``."""
    found = set()
    for bdf in fs.listdir('bus/pci/devices'):
        base = 'bus/pci/devices/%s' % bdf
        if fs.read(base + '/vendor') == MELLANOX_VENDOR and fs.read(base + '/device') in DATA_DIRECT_DEVICE_IDS:
            found.add(bdf)
    found.update(b for b in fs.listdir('bus/pci/drivers/%s' % DATA_DIRECT_DRIVER) if _pci_topology.BDF_RE.match(b))
    functions = {}
    for bdf in sorted(found):
        base = 'bus/pci/devices/%s' % bdf
        node = _pci_topology.pci_node(fs, bdf)
        node.update({'device_id': fs.read(base + '/device'), 'driver': fs.link_name(base + '/driver')})
        functions[bdf] = node
    return functions


def _may_be_data_direct(fs, nic):
    """An RDMA device that owns a Mellanox PCI function (Data Direct is mlx5's); a soft device on a netdev is not."""
    return (nic.get('pci_address_source') == 'device'
            and fs.read('bus/pci/devices/%s/vendor' % nic['pci_address']) == MELLANOX_VENDOR)


def _pair(fs, nic, path, functions):
    """The NIC's ``data_direct`` from the path the kernel gave (``/devices/pci0000:80/.../0000:82:00.0``)."""
    root, chain = _pci_topology.parse_pci_path(path)
    bdf = chain[-1] if chain else None
    where = functions.get(bdf) or (_pci_topology.pci_node(fs, bdf) if bdf else {})
    root = where.get('root_complex') or root
    return {'device': bdf, 'root_complex': root,
            'root_differs': None if root is None or nic.get('root_complex') is None else root != nic['root_complex'],
            'pairing': 'mlx5dv', 'candidates': [], 'reason': None}


def _unknown(functions, reason):
    return {'device': None, 'root_complex': None, 'root_differs': None, 'pairing': 'unknown',
            'candidates': [{'device': f['pci_address'], 'root_complex': f['root_complex']} for f in functions.values()],
            'reason': reason}


def annotate(fs, nics, pairing=None):
    """Set ``data_direct`` on every NIC of ``nics`` (``gpu_nic_topology.nics``) and return the node's summary.

    A NIC's ``data_direct`` is None when it has no Data Direct function (none on the node, not a Mellanox PCI
    function, or the kernel says ENODEV); otherwise ``{device, root_complex, root_differs, pairing, candidates,
    reason}``: ``pairing`` ``mlx5dv`` (the kernel's pairing, ``device`` and ``root_complex`` its function's) or
    ``unknown`` (``candidates``: the node's Data Direct functions, any of which may serve the NIC; ``reason``: why
    the pairing is unknown). ``pairing(names)`` answers ``(answers, reason)``: per RDMA device name the sysfs path,
    None (ENODEV) or ``{'error': text}``; ``answers`` None when nothing could be asked (``reason`` says why)."""
    functions = data_direct_functions(fs)
    summary = {'functions': list(functions.values()), 'pairing': None, 'reason': None}
    candidates = sorted(n for n, nic in nics.items() if functions and _may_be_data_direct(fs, nic))
    answers, reason = ({}, None)
    if candidates:
        if pairing is None:
            answers, reason = None, 'not queried (the facts are read from a sysfs tree other than the running kernel\'s)'
        else:
            answers, reason = pairing(candidates)
        summary.update({'pairing': 'mlx5dv' if answers is not None else 'unknown', 'reason': reason})
    for name, nic in nics.items():
        if name not in candidates:
            nic['data_direct'] = None
            continue
        answer = answers.get(name, {'error': 'not listed by libibverbs'}) if answers is not None else {'error': reason}
        if answer is None:
            nic['data_direct'] = None
        elif isinstance(answer, dict):
            nic['data_direct'] = _unknown(functions, answer['error'])
        else:
            nic['data_direct'] = _pair(fs, nic, answer, functions)
    return summary


# --- rdma-core ----------------------------------------------------------------------------------

def _bind(verbs, mlx5):
    vp, cp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
    verbs.ibv_get_device_list.argtypes, verbs.ibv_get_device_list.restype = [ctypes.POINTER(ctypes.c_int)], cp
    verbs.ibv_free_device_list.argtypes, verbs.ibv_free_device_list.restype = [cp], None
    verbs.ibv_get_device_name.argtypes, verbs.ibv_get_device_name.restype = [vp], ctypes.c_char_p
    verbs.ibv_open_device.argtypes, verbs.ibv_open_device.restype = [vp], vp
    verbs.ibv_close_device.argtypes, verbs.ibv_close_device.restype = [vp], ctypes.c_int
    mlx5.mlx5dv_is_supported.argtypes, mlx5.mlx5dv_is_supported.restype = [vp], ctypes.c_bool
    query = mlx5.mlx5dv_get_data_direct_sysfs_path
    query.argtypes, query.restype = [vp, ctypes.c_char_p, ctypes.c_size_t], ctypes.c_int
    return query


def _ask(verbs, mlx5, query, device):
    """The answer for one ``ibv_device``: its Data Direct function's path, None (ENODEV) or ``{'error': text}``."""
    if not mlx5.mlx5dv_is_supported(device):
        return None
    context = verbs.ibv_open_device(device)
    if not context:
        code = ctypes.get_errno()
        return {'error': 'ibv_open_device failed: %s (the uverbs device needs read and write access)' % os.strerror(code)}
    try:
        buf = ctypes.create_string_buffer(PATH_BUFFER)
        rc = query(context, buf, PATH_BUFFER)
    finally:
        verbs.ibv_close_device(context)
    if rc == 0:
        return buf.value.decode('utf-8', 'replace')
    if rc == errno.ENODEV:
        return None
    return {'error': 'mlx5dv_get_data_direct_sysfs_path failed: %s (a kernel without the Data Direct ioctl, before 6.12?)'
                     % os.strerror(rc)}


def mlx5dv_pairing(names):
    """Ask rdma-core which Data Direct function serves each RDMA device of ``names``: ``(answers, reason)`` as
    ``annotate`` takes them. Loads libibverbs and libmlx5 by soname (no command is run)."""
    try:
        verbs = ctypes.CDLL(LIBIBVERBS, use_errno=True)
        mlx5 = ctypes.CDLL(LIBMLX5, use_errno=True)
    except OSError as exc:
        return None, 'rdma-core\'s %s and %s are not loadable (%s)' % (LIBIBVERBS, LIBMLX5, exc)
    try:
        query = _bind(verbs, mlx5)
    except AttributeError:
        return None, '%s has no mlx5dv_get_data_direct_sysfs_path (rdma-core before 55)' % LIBMLX5
    count = ctypes.c_int(0)
    devices = verbs.ibv_get_device_list(ctypes.byref(count))
    if not devices:
        return None, 'ibv_get_device_list failed: %s' % os.strerror(ctypes.get_errno())
    answers = {}
    try:
        for i in range(count.value):
            name = (verbs.ibv_get_device_name(devices[i]) or b'').decode('utf-8', 'replace')
            if name in names:
                answers[name] = _ask(verbs, mlx5, query, devices[i])
    finally:
        verbs.ibv_free_device_list(devices)
    return answers, None

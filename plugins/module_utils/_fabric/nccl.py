# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What NCCL needs on one node for RoCE on its rails, derived from the node's ``rdma_facts``.

Pure: no Ansible import, no I/O. ``nccl_env(facts, rails)`` returns the environment
(``NCCL_IB_HCA``, ``NCCL_IB_GID_INDEX``, ``NCCL_IB_TC``, ``NCCL_SOCKET_IFNAME``), the rails in GPU order and the
problems found (each a message, never an exception, so a whole fleet is reported at once); only
malformed input raises ``GpufabricError``.

Two of them need the node's facts (``HOST_FACT_SETTINGS``: its RDMA devices, their GPUs and GID tables, which only
host_network's read of ``rdma_facts`` gives); the others the inventory determines alone (``inventory_env``), so a
render without the nodes (gpufabric.roce.render) has them too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import ipaddress

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._common.pci_topology import rdma_device_of_netdev

ROCE_V2 = 'RoCE v2'
# What only a node's rdma_facts give; the rest of nccl_env's settings come from the inventory (inventory_env).
HOST_FACT_SETTINGS = ('NCCL_IB_HCA', 'NCCL_IB_GID_INDEX')
# The name of a one-rail node's rail (vlan_gateway arguments name none).
ONE_RAIL_NAME = 'rail0'


def _ipv4(value):
    """``10.0.0.2`` or ``10.0.0.2/24`` -> IPv4Address, None when unset; ValueError when invalid."""
    if value is None or value == '':
        return None
    return ipaddress.IPv4Address(str(value).split('/', 1)[0].strip())


def gid_ipv4(gid):
    """IPv4 address of an IPv4-mapped GID (``0000:...:ffff:0a00:0002`` = ``::ffff:10.0.0.2``), else None."""
    try:
        return ipaddress.IPv6Address(str(gid)).ipv4_mapped
    except ValueError:
        return None


def _check_rails(rails, host):
    if not isinstance(rails, (list, tuple)):
        raise GpufabricError(host, 'rails', rails, 'must be a list of rails',
                             'pass a list of dicts with at least name and pf, e.g. [{name: rail0, pf: enp12s0np0}]')
    seen_names, seen_pfs = set(), set()
    for i, rail in enumerate(rails):
        field = 'rails[%d]' % i
        if not isinstance(rail, dict):
            raise GpufabricError(host, field, rail, 'must be a dict', 'give each rail as {name, pf, ipv4}')
        for key in ('name', 'pf'):
            if not isinstance(rail.get(key), str) or not rail.get(key):
                raise GpufabricError(host, '%s.%s' % (field, key), rail.get(key), 'is missing or not a string',
                                     'set %s of every rail' % key)
        if rail['name'] in seen_names:
            raise GpufabricError(host, field + '.name', rail['name'], 'is used by two rails', 'give every rail its own name')
        if rail['pf'] in seen_pfs:
            raise GpufabricError(host, field + '.pf', rail['pf'], 'is the PF of two rails', 'give every rail its own PF')
        seen_names.add(rail['name'])
        seen_pfs.add(rail['pf'])
        try:
            _ipv4(rail.get('ipv4'))
        except ValueError:
            raise GpufabricError(host, field + '.ipv4', rail.get('ipv4'), 'is not an IPv4 address',
                                 "set the rail's IPv4 address on this node (a.b.c.d or a.b.c.d/prefix), or leave it out") from None


def _rail_port(device, pf):
    """Port of the RDMA device whose netdev is the PF (first port when none says so)."""
    ports = device.get('ports') or []
    for port in ports:
        if port.get('netdev') == pf:
            return port
    return ports[0] if ports else None


def _gid_for(device, ipv4):
    """(port, index) of the RoCE v2 GID holding ``ipv4`` (IPv4-mapped) on any port of the device."""
    for port in device.get('ports') or []:
        for gid in port.get('gids') or []:
            if gid.get('type') == ROCE_V2 and gid_ipv4(gid.get('gid')) == ipv4:
                return port, gid
    return None, None


def nccl_env(facts, rails, socket_ifname=None, host='node'):
    """NCCL settings of one node.

    ``facts``: the node's ``ansible_facts.rdma``. ``rails``: list of ``{name, pf, ipv4?, tos?}``, ``ipv4``
    the rail's address on this node (its RoCE v2 GID), ``tos`` its QoS ToS (NCCL_IB_TC). ``socket_ifname``: NCCL_SOCKET_IFNAME, set
    only when given.

    Returns ``{env, rails, problems}``: ``env`` has string values only for what could be derived;
    ``rails`` (in GPU order) each ``{name, pf, rdma_device, port, hca, gpu, gpu_index, class,
    ipv4, gid_index}``; ``problems`` messages without the host (the caller prefixes it)."""
    _check_rails(rails, host)
    facts = facts or {}
    devices = facts.get('devices') or {}
    nics = (facts.get('gpu_nic_topology') or {}).get('nics') or {}
    problems = []
    out = []
    for position, rail in enumerate(rails):
        pf = rail['pf']
        entry = {'name': rail['name'], 'pf': pf, 'rdma_device': None, 'port': None, 'hca': None,
                 'gpu': None, 'gpu_index': None, 'class': None,
                 'ipv4': str(_ipv4(rail.get('ipv4'))) if rail.get('ipv4') else None, 'gid_index': None}
        out.append((position, entry))
        dev_name = rdma_device_of_netdev(devices, pf)
        if dev_name is None:
            problems.append('rail %s: no RDMA device is bound to %s (devices: %s), so it is not in NCCL_IB_HCA. '
                            'Fix: load the RDMA driver of %s (mlx5_ib) or correct the rail\'s pf'
                            % (rail['name'], pf, ', '.join(sorted(devices)) or 'none', pf))
            continue
        device = devices[dev_name]
        entry['rdma_device'] = dev_name
        port = _rail_port(device, pf)
        ip = _ipv4(rail.get('ipv4'))
        if ip is not None:
            gid_port, gid = _gid_for(device, ip)
            if gid is None:
                problems.append('rail %s: %s has no RoCE v2 GID holding %s (::ffff:%s), so NCCL_IB_GID_INDEX cannot be '
                                'derived for it. Fix: put %s on %s (or its VLAN) and bring it up; the kernel adds the GID'
                                % (rail['name'], dev_name, ip, ip, ip, pf))
            else:
                port = gid_port
                entry['gid_index'] = gid['index']
        if port is not None:
            entry['port'] = port['port']
            entry['hca'] = '%s:%d' % (dev_name, port['port'])
        nearest = (nics.get(dev_name) or {}).get('nearest_gpu')
        if nearest:
            entry.update({'gpu': nearest['gpu'], 'gpu_index': nearest['index'], 'class': nearest['class']})
    # GPU order: rails whose NIC is nearest to a lower-numbered GPU first; rails of the same GPU, and
    # rails without a GPU (no GPU on the node), keep their input order, the latter last.
    ordered = [e for _p, e in sorted(out, key=lambda pe: (pe[1]['gpu_index'] is None, pe[1]['gpu_index'] or 0, pe[0]))]
    env = {}
    hcas = [e['hca'] for e in ordered if e['hca']]
    if hcas:
        # '=' makes NCCL match the names exactly: without it mlx5_1 also selects mlx5_10..mlx5_19.
        env['NCCL_IB_HCA'] = '=' + ','.join(hcas)
    indexes = {}
    for e in ordered:
        if e['gid_index'] is not None:
            indexes.setdefault(e['gid_index'], []).append(e)
    if len(indexes) == 1:
        env['NCCL_IB_GID_INDEX'] = str(next(iter(indexes)))
    elif len(indexes) > 1:
        problems.append('the rails disagree on the RoCE v2 GID index (%s), and NCCL_IB_GID_INDEX is one value for all '
                        'HCAs, so it is not set. Fix: give each rail\'s address to its PF the same way (same VLAN '
                        'layout, no extra addresses before it) so the GID lands at the same index on every NIC'
                        % '; '.join('index %d on %s' % (idx, ', '.join('%s (%s)' % (e['name'], e['rdma_device']) for e in es))
                                    for idx, es in sorted(indexes.items())))
    known = inventory_env(rails, socket_ifname)
    env.update(known['env'])
    problems.extend(known['problems'])
    return {'env': env, 'rails': ordered, 'problems': problems}


def gateway_rails(gateways):
    """A node's rails as ``nccl_env`` takes them, from its vlan_gateway arguments (``_fabric.pod_network.gateway_args_list``, a
    node slice's ``rails``): the rail's address is its gateway address (the one whose GID NCCL uses), its ToS the QoS's."""
    return [{'name': g.get('rail') or ONE_RAIL_NAME, 'pf': g['pf'], 'ipv4': g['addresses'][0].split('/', 1)[0],
             'tos': (g.get('qos') or {}).get('tos')} for g in gateways]


def inventory_env(rails, socket_ifname=None):
    """The settings the inventory determines without the node's facts: ``NCCL_IB_TC`` from the rails' QoS and
    ``NCCL_SOCKET_IFNAME`` when given. ``{env, problems}``; ``nccl_env`` adds HOST_FACT_SETTINGS to them."""
    env, problems = {}, []
    _traffic_class(rails, env, problems)
    if socket_ifname:
        env['NCCL_SOCKET_IFNAME'] = str(socket_ifname)
    return {'env': env, 'problems': problems}


def _traffic_class(rails, env, problems):
    """NCCL_IB_TC from the rails' QoS ToS (docs/qos.md): NCCL sets it on its QPs itself (it does not use RDMA-CM, so
    the default ToS the roce_qos module puts in configfs does not reach it). One value for all HCAs, like the GID index."""
    tos = {r['tos'] for r in rails if r.get('tos') is not None}
    if len(tos) == 1:
        env['NCCL_IB_TC'] = str(next(iter(tos)))
    elif len(tos) > 1:
        problems.append('the rails\' QoS disagree on the ToS (%s), and NCCL_IB_TC is one value for all HCAs, so it is not set. '
                        'Fix: give every rail the same tos in roce_qos (docs/qos.md)'
                        % ', '.join('%s %s' % (r['name'], r['tos']) for r in rails if r.get('tos') is not None))

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The VF settings model: what a PF's VFs may be set to, checked the same way by the rail model on the controller
(before any node is reached) and by gpufabric.roce.sriov_vf on the node (against the PF it reads)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import re

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, check_ifname

VF_KEYS = ('mac', 'vlan', 'qos', 'vlan_proto', 'trust', 'spoofchk', 'link_state', 'min_tx_rate', 'max_tx_rate')
MAC_RE = re.compile(r'^[0-9a-f]{2}(:[0-9a-f]{2}){5}$')
PF_FIX = ('give the PF netdev name (roce_sriov_pf), at most 15 characters of letters, digits, "_", "." and "-" '
          'not starting with "-" or ".", e.g. enp157s0np0')
U32_MAX = 0xFFFFFFFF


# The sriov_vf module's vfs suboptions; the rail model checks roce_rails[].vfs with the same spec.
VF_OPTIONS = dict(
    id=dict(type='int', required=True),
    mac=dict(type='str'),
    vlan=dict(type='int'),
    qos=dict(type='int'),
    vlan_proto=dict(type='str', choices=['802.1Q', '802.1ad']),
    trust=dict(type='bool'),
    spoofchk=dict(type='bool'),
    link_state=dict(type='str', choices=['auto', 'enable', 'disable']),
    min_tx_rate=dict(type='int'),
    max_tx_rate=dict(type='int'),
)
# What each PF of the module takes (at the top level, or per entry of its rails).
RAIL_OPTIONS = dict(
    num_vfs=dict(type='int'),
    vfs=dict(type='list', elements='dict', options=VF_OPTIONS),
)


def validate(host, pf, pf_state, *, num_vfs, vfs, allow_vf_reset):
    """Raise GpufabricError for anything the kernel would refuse or that is unsafe.

    Runs before any write, so a failure leaves the node untouched."""
    check_ifname(host, 'pf', pf, PF_FIX)
    if not pf_state['exists']:
        raise GpufabricError(host, 'pf', pf, 'no such network interface',
                             'set pf (roce_sriov_pf) to an existing PF netdev, see ansible_facts.rdma.netdevs')
    if not pf_state['sriov_capable']:
        raise GpufabricError(host, 'pf', pf, 'has no device/sriov_numvfs, so it is not an SR-IOV PF',
                             'enable SR-IOV in the NIC firmware/BIOS or choose a PF listed with sriov_numvfs in ansible_facts.rdma.netdevs')
    current = pf_state['num_vfs'] or 0
    total = pf_state['total_vfs']
    if num_vfs is not None:
        if num_vfs < 0:
            raise GpufabricError(host, 'num_vfs', num_vfs, 'must not be negative', 'use 0 to remove all VFs')
        if total is not None and num_vfs > total:
            raise GpufabricError(host, 'num_vfs', num_vfs, 'exceeds sriov_totalvfs=%d of PF %s' % (total, pf),
                                 'request at most %d VFs, or raise the VF limit in the NIC firmware' % total)
        if current > 0 and num_vfs == 0 and not allow_vf_reset:
            raise GpufabricError(
                host, 'num_vfs', num_vfs,
                'removing the %d VFs of PF %s destroys them (pods using them lose their interfaces); nothing was changed' % (current, pf),
                'set allow_vf_reset: true to accept the removal (the teardown playbook: -e roce_teardown_remove_vfs=true)')
        if current > 0 and num_vfs != current and not allow_vf_reset:
            raise GpufabricError(
                host, 'num_vfs', num_vfs,
                'PF %s has %d VFs and changing to %d needs a write of 0 first, which destroys the existing VFs '
                '(pods using them lose their interfaces); nothing was changed' % (pf, current, num_vfs),
                'set allow_vf_reset: true to accept the VF reset, or keep num_vfs: %d' % current)
    final = num_vfs if num_vfs is not None else current
    seen = set()
    for vf in vfs or []:
        vid = vf['id']
        field = 'vfs[id=%s]' % vid
        if vid in seen:
            raise GpufabricError(host, field, vid, 'VF id listed twice', 'merge the settings of VF %s into one entry' % vid)
        seen.add(vid)
        if vid < 0 or vid >= final:
            if final == 0:
                raise GpufabricError(host, field + '.id', vid, 'PF %s has no VFs' % pf, 'set num_vfs to create VFs first')
            raise GpufabricError(host, field + '.id', vid, 'PF %s will have %d VFs (ids 0..%d)' % (pf, final, final - 1),
                                 'use a VF id below %d or raise num_vfs' % final)
        mac = vf.get('mac')
        if mac is not None:
            norm = str(mac).lower().replace('-', ':')
            if not MAC_RE.match(norm):
                raise GpufabricError(host, field + '.mac', mac, 'is not a MAC address', 'write it as six hex pairs, e.g. 02:00:00:00:00:06')
            if int(norm[:2], 16) & 1:
                raise GpufabricError(host, field + '.mac', mac, 'is a multicast address',
                                     'use a unicast MAC (first octet even), e.g. 02:00:00:00:00:06')
        vlan = vf.get('vlan')
        if vlan is not None and not 0 <= vlan <= 4094:
            raise GpufabricError(host, field + '.vlan', vlan, 'is outside 0..4094', 'use 1..4094, or 0 for no VLAN')
        qos = vf.get('qos')
        if qos is not None:
            if not 0 <= qos <= 7:
                raise GpufabricError(host, field + '.qos', qos, 'is outside 0..7', 'use an 802.1p priority 0..7')
            if qos and vlan == 0:
                raise GpufabricError(host, field + '.qos', qos, 'a priority needs a VLAN but vlan is 0', 'set vlan to 1..4094 or qos to 0')
        if vf.get('vlan_proto') == '802.1ad' and vlan == 0:
            raise GpufabricError(host, field + '.vlan_proto', '802.1ad', 'needs a VLAN but vlan is 0', 'set vlan to 1..4094 or drop vlan_proto')
        for key in ('min_tx_rate', 'max_tx_rate'):
            v = vf.get(key)
            if v is not None and not 0 <= v <= U32_MAX:
                raise GpufabricError(host, '%s.%s' % (field, key), v, 'must be 0..4294967295 (Mb/s)', 'use 0 for no limit')
        lo, hi = vf.get('min_tx_rate'), vf.get('max_tx_rate')
        if lo is not None and hi is not None and hi and lo > hi:
            raise GpufabricError(host, field + '.min_tx_rate', lo, 'is above max_tx_rate=%d' % hi,
                                 'set min_tx_rate <= max_tx_rate, or max_tx_rate: 0 for no ceiling')


# A PF as the controller pictures it before phase 1: present, SR-IOV capable, no VFs yet. What only
# the node knows (its totalvfs, whether a VF reset is needed) sriov_vf checks there.
_PLANNED_PF = {'exists': True, 'sriov_capable': True, 'num_vfs': 0, 'total_vfs': None}


def validate_planned(host, pf, *, num_vfs, vfs):
    """``validate`` for VF settings read from the inventory, before any node is reached."""
    validate(host, pf, dict(_PLANNED_PF), num_vfs=num_vfs, vfs=vfs, allow_vf_reset=True)

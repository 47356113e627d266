#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: sriov_vf
short_description: Set the SR-IOV VF count and per-VF settings of a PF
version_added: "0.1.0"
description:
  - Sets C(sriov_numvfs) of a PF through sysfs and the per-VF settings (MAC, VLAN, trust, spoof
    check, link state, rates) through netlink (pyroute2, one session per run). No command is run.
  - All VF settings are read in one C(RTM_GETLINK) dump (C(IFLA_VFINFO_LIST)); only the settings
    that differ are written, all in one C(RTM_SETLINK).
  - Changing a non-zero VF count needs a write of 0 first (the kernel answers EBUSY otherwise),
    which destroys the existing VFs and whatever pods use them. Without O(allow_vf_reset=true)
    the module fails before changing anything.
  - Every input is validated before the first write; a bad value changes nothing.
  - What the PF's driver cannot do (Intel igb refuses C(link_state), C(min_tx_rate) and 802.1ad, which ConnectX
    NICs support) only the kernel's answer tells. The kernel applies a VF's settings in order and stops at the
    one the driver refuses; the module then sets back what that request had already set (and the VF count,
    when this run changed it) and fails naming the host, the refused setting as O(vfs[].id) and its field,
    the value, the driver's error and a fix.
author:
  - gpufabric.roce maintainers (@gpufabric)
requirements:
  - pyroute2 on the target node
extends_documentation_fragment:
  - gpufabric.roce.roce
  - gpufabric.roce.roce.actiongroup
  - gpufabric.roce.roce.rails
options:
  pf:
    description:
      - PF netdev whose VFs are managed (the inventory's C(roce_sriov_pf)). Required unless O(rails) is given.
      - At most 15 characters of letters, digits, C(_), C(.) and C(-), not starting with C(-) or C(.). The name is written
        into the persisted unit's shell lines, so shell and systemd metacharacters are refused before anything changes.
    type: str
  num_vfs:
    description:
      - Number of VFs (C(sriov_numvfs)). Omit to keep the current count and only set O(vfs).
      - Must not exceed C(sriov_totalvfs) when the PF reports it (netdevsim does not).
    type: int
  vfs:
    description:
      - Per-VF settings. Any key except O(vfs[].id) may be omitted to leave that setting alone.
    type: list
    elements: dict
    suboptions: &vf_suboptions
      id:
        description: VF index, 0 .. num_vfs-1.
        type: int
        required: true
      mac:
        description: Unicast MAC address of the VF.
        type: str
      vlan:
        description: VLAN id the PF tags the VF's traffic with, 1..4094; 0 for none.
        type: int
      qos:
        description: 802.1p priority (0..7) of that VLAN tag.
        type: int
      vlan_proto:
        description: VLAN protocol of the tag.
        type: str
        choices: ['802.1Q', '802.1ad']
      trust:
        description: Trusted VF (may change its MAC, enter promiscuous mode).
        type: bool
      spoofchk:
        description: MAC/VLAN spoof checking.
        type: bool
      link_state:
        description: Link state the VF sees; V(auto) follows the PF.
        type: str
        choices: [auto, enable, disable]
      min_tx_rate:
        description: Minimum TX rate in Mb/s, 0 for none. Set together with O(vfs[].max_tx_rate) by the kernel; an omitted one keeps its value.
        type: int
      max_tx_rate:
        description: Maximum TX rate in Mb/s, 0 for none.
        type: int
  rails:
    description:
      - Every PF of the node in one module run (one Python start, one netlink session), a GPU node's rails. Each entry
        takes O(pf), O(num_vfs) and O(vfs) as above, and the other options (O(allow_vf_reset), O(state), O(persist),
        O(unit_dir), O(sysfs_root)) from the top level. Not together with O(pf), O(num_vfs) or O(vfs). See the notes.
    type: list
    elements: dict
    version_added: "0.1.0"
    suboptions:
      rail:
        description: The rail's name (the inventory's C(roce_rails[].name)), used in messages and results only.
        type: str
      pf:
        description: The rail's PF netdev, as O(pf).
        type: str
        required: true
      num_vfs:
        description: As O(num_vfs).
        type: int
      vfs:
        description: As O(vfs).
        type: list
        elements: dict
        suboptions: *vf_suboptions
  allow_vf_reset:
    description:
      - Allow changing a non-zero VF count, which destroys and recreates all VFs of the PF (also to 0, and V(absent) with VFs present).
    type: bool
    default: false
  state:
    description:
      - V(present) sets O(num_vfs) and O(vfs) (one of them is required).
      - V(absent) (teardown) removes every VF of the PF (C(sriov_numvfs) to 0; with VFs present this needs
        O(allow_vf_reset=true), checked before anything changes) and the persisted unit with its C(*.wants) links,
        whatever O(persist) says. O(num_vfs) (other than 0) and O(vfs) are refused with it.
    type: str
    choices: [present, absent]
    default: present
  persist:
    description:
      - Also install C(/etc/systemd/system/gpufabric-sriov-<pf>.service), a oneshot unit that at boot
        writes C(sriov_numvfs) (only when it differs) and runs one C(ip link set dev <pf> vf <id> ...)
        per VF in O(vfs), and its C(sys-subsystem-net-devices-<pf>.device.wants) symlink (what C(systemctl enable) creates);
        the unit is bound to the PF's device and started whenever it appears, at boot or later (a late driver, a reload).
      - C(systemctl daemon-reload) runs only when systemd is running (C(/run/systemd/system) exists);
        otherwise the files are still written and take effect at the next boot under systemd.
      - V(false) leaves an existing unit alone.
      - With V(true) and O(state=present), O(num_vfs) is required (the unit writes the count).
    type: bool
    default: false
  unit_dir:
    description: Directory of the persisted unit.
    type: path
    default: /etc/systemd/system
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details: Writes nothing; predicts C(changed) and the diff (new VFs are predicted with kernel defaults).
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
notes:
  - O(sysfs_root) is where C(sriov_numvfs) is read and written during the run. The persisted unit always writes
    C(/sys/class/net/<pf>/device/sriov_numvfs), the path at boot on the node.
  - Without O(allow_vf_reset) and with VFs present, only O(num_vfs) equal to the current count (or omitted) is accepted.
  - When C(sriov_totalvfs) is unknown, a count the driver refuses fails at the write; with O(allow_vf_reset) the old VFs are gone by then.
"""

EXAMPLES = r"""
- name: 8 VFs, VF 6 on VLAN 100, trusted, no spoof check, link forced up
  gpufabric.roce.sriov_vf:
    pf: "{{ roce_sriov_pf | default(roce_pf) }}"
    num_vfs: 8
    vfs:
      - id: 6
        vlan: 100
        trust: true
        spoofchk: false
        link_state: enable
    persist: true

- name: Every rail of an 8-rail node in one module run (one netlink session; a bad value on any rail changes none)
  gpufabric.roce.sriov_vf:
    rails:
      - {rail: rail0, pf: enp12s0np0, num_vfs: 8}
      - {rail: rail1, pf: enp18s0np0, num_vfs: 8, vfs: [{id: 0, trust: true}]}
    persist: true

- name: Teardown - remove the VFs made on the host and their unit (destroys the VFs)
  gpufabric.roce.sriov_vf:
    pf: eni10np1
    state: absent
    allow_vf_reset: true

- name: Shrink to 4 VFs (destroys and recreates the VFs)
  gpufabric.roce.sriov_vf:
    pf: eni10np1
    num_vfs: 4
    allow_vf_reset: true
"""

RETURN = r"""
pf:
  description: The PF.
  returned: without O(rails)
  type: str
  sample: eni10np1
num_vfs:
  description: VF count after the run (predicted in check mode).
  returned: without O(rails)
  type: int
  sample: 8
total_vfs:
  description: C(sriov_totalvfs) of the PF, V(null) when the PF does not report it.
  returned: without O(rails)
  type: int
  sample: 64
vf_reset:
  description:
    - Whether existing VFs were (or, in check mode, would be) destroyed to change the count.
    - With O(rails), whether that holds for any rail.
  returned: always
  type: bool
rails:
  description:
    - With O(rails), one result per rail, with the keys above (RV(pf), RV(num_vfs), RV(total_vfs), RV(vf_reset),
      RV(vfs), RV(persist)); see the notes.
  returned: with O(rails)
  type: list
  elements: dict
  sample:
    - {rail: rail0, pf: enp12s0np0, num_vfs: 8, total_vfs: 64, vf_reset: false, vfs: [], changed: true}
vfs:
  description: Settings of the VFs named in O(vfs) after the run (predicted in check mode).
  returned: without O(rails)
  type: list
  elements: dict
  sample:
    - {id: 6, mac: "00:00:00:00:00:00", vlan: 100, qos: 0, vlan_proto: 802.1Q, trust: true,
       spoofchk: false, link_state: enable, min_tx_rate: 0, max_tx_rate: 0}
persist:
  description: The persisted unit, its path, whether it changed, whether systemd was running and reloaded.
  returned: when O(persist=true) or O(state=absent) (in RV(rails) with O(rails))
  type: dict
  sample: {unit: gpufabric-sriov-eni10np1.service, path: /etc/systemd/system/gpufabric-sriov-eni10np1.service,
           changed: true, systemd_running: false, daemon_reload: false}
diff:
  description:
    - C(num_vfs) and the per-VF settings before and after (and the unit text when it changed).
    - With O(rails), a list of them, one per rail in the order of RV(rails), each headed by its rail.
  returned: always
  type: raw
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufabric.roce.plugins.module_utils._host.netlink import rails_option, run_netlink_module
from ansible_collections.gpufabric.roce.plugins.module_utils._common.vf_settings import RAIL_OPTIONS
from ansible_collections.gpufabric.roce.plugins.module_utils._host.sriov_vf import run, summary


def main():
    module = AnsibleModule(
        argument_spec=dict(
            RAIL_OPTIONS,
            pf=dict(type='str'),
            rails=rails_option(dict(RAIL_OPTIONS, pf=dict(type='str', required=True))),
            allow_vf_reset=dict(type='bool', default=False),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            persist=dict(type='bool', default=False),
            unit_dir=dict(type='path', default='/etc/systemd/system'),
            sysfs_root=dict(type='path', default='/sys'),
        ),
        required_one_of=[('pf', 'rails')],
        mutually_exclusive=[('rails', 'pf'), ('rails', 'num_vfs'), ('rails', 'vfs')],
        # num_vfs or vfs with state=present, num_vfs with persist: checked in run(), with the collection's error format
        supports_check_mode=True,
    )
    run_netlink_module(module, run, summary=summary)


if __name__ == '__main__':
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: roce_qos
short_description: Lossless RoCE QoS of a PF - RDMA-CM ToS, DSCP trust, PFC, link pause, ECN and CNPs
version_added: "0.2.0"
description:
  - Applies one rail's QoS to its PF where the kernel exposes it, reading everything before the first write
    and writing only what differs. The roles derive the arguments from the inventory's C(roce_qos) model
    (docs/qos.md), validated once for the whole cluster.
  - O(tos) is RDMA-CM's default ToS of the PF's RDMA device, written in configfs
    (C(/sys/kernel/config/rdma_cm/<dev>/ports/<n>/default_roce_tos)); it works on any RDMA device, soft-RoCE included.
  - O(trust) and O(pfc_priorities) use DCB over rtnetlink (the IEEE 802.1Qaz API that iproute2's C(dcb) uses).
    V(dscp) trust is the DSCP APP entries of the RoCE and CNP DSCPs; V(pcp) removes the DSCP APP entries.
    They need a DCB-capable NIC (ConnectX); soft-RoCE and netdevsim have no DCB.
  - O(pause_frames) is link pause over ethtool netlink.
  - O(ecn_priorities), O(cnp_dscp) and O(cnp_priority) are written in the PF's C(ecn) sysfs directory, which NVIDIA's
    mlx5 driver (DOCA-OFED) has and the upstream mlx5 driver has not.
  - A setting the NIC or kernel does not expose fails the task before anything changes, naming what would expose it;
    with O(unsupported=warn) it is reported (RV(unsupported), a warning) and the other settings are applied.
  - An omitted setting is left alone.
author:
  - gpufabric.roce maintainers (@gpufabric)
requirements:
  - pyroute2 on the target node
extends_documentation_fragment:
  - gpufabric.roce.roce
  - gpufabric.roce.roce.actiongroup
  - gpufabric.roce.roce.rails
options:
  interface:
    description: The PF netdev of the rail (the inventory's C(roce_pf) or the rail's C(pf)). Required unless O(rails) is given.
    type: str
  tos:
    description: IP ToS of RDMA-CM connections (DSCP x 4 plus the ECN bits), 0-255, e.g. V(106) (DSCP 26, ECT(0)).
    type: int
  trust:
    description: How the NIC classifies received traffic into priorities. V(dscp) needs O(tos).
    type: str
    choices: [dscp, pcp]
  pfc_priorities:
    description: Priorities with PFC on (0-7); V([]) turns PFC off.
    type: list
    elements: int
  pause_frames:
    description: Link pause (802.3x) in both directions. A ConnectX port runs link pause or PFC, not both.
    type: bool
  ecn_priorities:
    description: Priorities with ECN (DCQCN notification and reaction points) on; V([]) turns ECN off.
    type: list
    elements: int
  cnp_dscp:
    description: DSCP of the congestion notification packets the NIC sends (0-63).
    type: int
  cnp_priority:
    description: 802.1p priority of the congestion notification packets (0-7).
    type: int
  rails:
    description:
      - Every rail of the node in one module run (one Python start, one rtnetlink session). Each entry takes
        O(interface) and the settings above, and O(unsupported), O(state), O(persist), O(unit_dir) and O(sysfs_root)
        from the top level. Not together with O(interface) or a setting at the top level. A setting the NIC does not
        expose (with O(unsupported=fail)) on any rail changes no rail. See the notes.
    type: list
    elements: dict
    version_added: "0.1.0"
    suboptions:
      rail:
        description: The rail's name (the inventory's C(roce_rails[].name)), used in messages and results only.
        type: str
      interface:
        description: As O(interface).
        type: str
        required: true
      tos:
        description: As O(tos).
        type: int
      trust:
        description: As O(trust).
        type: str
        choices: [dscp, pcp]
      pfc_priorities:
        description: As O(pfc_priorities).
        type: list
        elements: int
      pause_frames:
        description: As O(pause_frames).
        type: bool
      ecn_priorities:
        description: As O(ecn_priorities).
        type: list
        elements: int
      cnp_dscp:
        description: As O(cnp_dscp).
        type: int
      cnp_priority:
        description: As O(cnp_priority).
        type: int
  unsupported:
    description: What a setting the NIC or kernel does not expose does. V(fail) fails the task before any change; V(warn) skips it with a warning.
    type: str
    choices: [fail, warn]
    default: fail
  state:
    description:
      - V(absent) is the way back - it removes the persisted unit and the RDMA-CM ToS group the module made in configfs
        (RDMA-CM's default ToS is 0 again). DCB, link pause and ECN settings are left as they are, listed in RV(left) -
        nothing records what they were before.
    type: str
    choices: [present, absent]
    default: present
  persist:
    description:
      - Write a systemd unit applying the same settings at boot (C(gpufabric-qos-<interface>.service), bound to the PF's
        device). RDMA-CM ToS, DCB and ECN settings do not survive a reboot or a driver reload.
      - The unit uses iproute2's C(dcb), C(ethtool) and configfs/sysfs writes, with a line only for the settings the NIC supports.
    type: bool
    default: false
  unit_dir:
    description: Where the unit is written.
    type: path
    default: /etc/systemd/system
  sysfs_root:
    description: Root of sysfs (and of configfs below it); tests point it at a fixture tree.
    type: path
    default: /sys
notes:
  - Check mode reads everything and predicts RV(ignore:changed) and the diff without writing.
seealso:
  - name: docs/qos.md
    description: The QoS model, its defaults and their sources, and what needs a ConnectX NIC and a switch.
    link: https://github.com/gpufabric/roce/blob/main/docs/qos.md
"""

EXAMPLES = r"""
- name: A rail's QoS, as the host_network role passes it
  gpufabric.roce.roce_qos:
    interface: enp157s0np0
    trust: dscp
    pfc_priorities: [3]
    tos: 106
    ecn_priorities: [3]
    cnp_dscp: 48
    cnp_priority: 6
    pause_frames: false
    persist: true

- name: Two rails in one module run
  gpufabric.roce.roce_qos:
    rails:
      - {rail: rail0, interface: enp12s0np0, trust: dscp, tos: 106, pfc_priorities: [3]}
      - {rail: rail1, interface: enp18s0np0, trust: dscp, tos: 106, pfc_priorities: [3]}
    persist: true

- name: The way back - the unit and the RDMA-CM ToS group go
  gpufabric.roce.roce_qos:
    interface: enp157s0np0
    state: absent

- name: Only the RDMA-CM ToS (any RDMA device, soft-RoCE included)
  gpufabric.roce.roce_qos:
    interface: eth1
    tos: 106
"""

RETURN = r"""
interface:
  description: The PF.
  returned: without O(rails)
  type: str
  sample: enp157s0np0
rdma_device:
  description: The RDMA device bound to the PF, when O(tos) was asked for and one exists.
  returned: without O(rails)
  type: str
  sample: mlx5_0
actions:
  description: What was (in check mode, would be) written, in order.
  returned: without O(rails)
  type: list
  elements: str
  sample: ["set RDMA-CM default ToS of mlx5_0 port 1 to 106", "set PFC on priorities [3]"]
unsupported:
  description: The settings not applied, each with what would expose it (only with O(unsupported=warn)).
  returned: without O(rails)
  type: dict
  sample: {pfc_priorities: "eth1 has no DCB support (the driver implements no dcbnl operations)"}
left:
  description: With O(state=absent), the settings left as they are on the NIC.
  returned: when O(state=absent) (in RV(rails) with O(rails))
  type: list
  elements: str
persist:
  description: The persisted unit, its path, whether it changed, whether systemd was running and reloaded.
  returned: when O(persist=true) or O(state=absent) (in RV(rails) with O(rails))
  type: dict
rails:
  description:
    - With O(rails), one result per rail, with the keys above; see the notes.
  returned: with O(rails)
  type: list
  elements: dict
  sample:
    - {rail: rail0, interface: enp12s0np0, rdma_device: mlx5_0, actions: ["set PFC on priorities [3]"], unsupported: {}, changed: true}
diff:
  description:
    - Each setting before and after (and the unit text when it changed).
    - With O(rails), a list of them, one per rail in the order of RV(rails), each headed by its rail.
  returned: always
  type: raw
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufabric.roce.plugins.module_utils._host.netlink import rails_option
from ansible_collections.gpufabric.roce.plugins.module_utils._host.roce_qos_kernel import run_module

# A rail's settings (at the top level, or per entry of rails).
QOS_OPTIONS = dict(
    tos=dict(type='int'),
    trust=dict(type='str', choices=['dscp', 'pcp']),
    pfc_priorities=dict(type='list', elements='int'),
    pause_frames=dict(type='bool'),
    ecn_priorities=dict(type='list', elements='int'),
    cnp_dscp=dict(type='int'),
    cnp_priority=dict(type='int'),
)
TRUST_NEEDS_TOS = [('trust', 'dscp', ('tos',))]


def main():
    module = AnsibleModule(
        argument_spec=dict(
            QOS_OPTIONS,
            interface=dict(type='str'),
            rails=rails_option(dict(QOS_OPTIONS, interface=dict(type='str', required=True)), required_if=TRUST_NEEDS_TOS),
            unsupported=dict(type='str', choices=['fail', 'warn'], default='fail'),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            persist=dict(type='bool', default=False),
            unit_dir=dict(type='path', default='/etc/systemd/system'),
            sysfs_root=dict(type='path', default='/sys'),
        ),
        required_if=TRUST_NEEDS_TOS,
        required_one_of=[('interface', 'rails')],
        mutually_exclusive=[('rails', 'interface')] + [('rails', k) for k in QOS_OPTIONS],
        supports_check_mode=True,
    )
    run_module(module)


if __name__ == '__main__':
    main()

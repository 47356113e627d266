#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: vlan_gateway
short_description: VLAN interface on a PF holding the pod-subnet gateway, with routes to the other nodes
version_added: "0.1.0"
description:
  - Creates or updates a VLAN interface on a PF, its addresses, routes and IPv4 forwarding
    sysctls, so that pods on VFs tagged with that VLAN can reach pods on other nodes.
    The roles take the arguments from the node's slice of the fabric plan (P(gpufabric.roce.fabric_plan_node#filter)).
  - Uses netlink (pyroute2, one session per run) and C(/proc/sys) files. No command is run.
  - Everything is validated before the first change (VLAN range, CIDRs, next hops reachable on a
    connected subnet or C(onlink), MTU no larger than the PF's, PF present, name not taken by
    another interface); a bad value changes nothing.
  - The administrative state of the PF is set up when it is down (a VLAN cannot be up on a down PF).
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
      - Parent PF netdev (the inventory's C(roce_pf)). Required unless O(rails) is given.
      - At most 15 characters of letters, digits, C(_), C(.) and C(-), not starting with C(-) or C(.). The name is written
        into the persisted unit's shell lines, so shell and systemd metacharacters are refused before anything changes.
    type: str
  vlan_id:
    description: VLAN id, 1..4094 (C(roce_vlan_id)). Required with O(pf).
    type: int
  name:
    description: Interface name. Defaults to C(<pf>.<vlan_id>); at most 15 characters, the same characters as O(pf).
    type: str
  mtu:
    description: MTU of the VLAN interface; at most the PF's MTU. Omit to leave it (a new VLAN inherits the PF's).
    type: int
  addresses:
    description:
      - Addresses in CIDR form (C(10.255.0.2/30)). When given, the list is exact - other addresses on the
        interface are removed (IPv6 link-local ones excepted). Omit to leave addresses alone.
    type: list
    elements: str
  routes:
    description:
      - Routes through the interface in the main table. When given, the list is exact for the routes this
        module could own - static routes on the interface that are not listed are removed; kernel, RA and
        DHCP routes are left alone (with O(purge_routes=false) nothing is removed). Omit to leave routes alone.
    type: list
    elements: dict
    suboptions: &route_suboptions
      dst:
        description: Destination network in CIDR form, without host bits (C(10.255.0.4/30)).
        type: str
        required: true
      via:
        description: Next hop. Must be inside a subnet of O(addresses) unless O(routes[].onlink=true).
        type: str
      onlink:
        description: Treat the next hop as directly reachable on the VLAN though it is on no connected subnet.
        type: bool
        default: false
      metric:
        description: Route metric (priority). Defaults to 0 for IPv4 and 1024 for IPv6, the kernel's defaults.
        type: int
      count:
        description:
          - This entry stands for O(routes[].count) routes, the k-th (from 0) to O(routes[].dst) advanced by k times its
            size, via O(routes[].via) advanced by as much; O(routes[].onlink) and O(routes[].metric) are the same for all.
          - A node's routes to every other node's pod subnet, carved from a pool with the gateway at the same offset in
            each, are two such entries, however large the fleet. The roles pass them so
            (O(gpufabric.roce.fabric_plan_node#filter:route_ranges)). Each route is still checked and installed on its
            own, and an error names the entry.
        type: int
        default: 1
  rails:
    description:
      - Every gateway of the node in one module run (one Python start, one netlink session), one per rail of a GPU node.
        Each entry takes O(pf), O(vlan_id), O(name), O(mtu), O(addresses) and O(routes) as above, and the other options
        (O(purge_routes), the sysctls, O(state), O(persist), O(unit_dir)) from the top level. Not together with O(pf).
        See the notes.
    type: list
    elements: dict
    version_added: "0.1.0"
    suboptions:
      rail:
        description: The rail's name (the inventory's C(roce_rails[].name)), used in messages and results only.
        type: str
      pf:
        description: As O(pf).
        type: str
        required: true
      vlan_id:
        description: As O(vlan_id).
        type: int
        required: true
      name:
        description: As O(name).
        type: str
      mtu:
        description: As O(mtu).
        type: int
      addresses:
        description: As O(addresses).
        type: list
        elements: str
      routes:
        description: As O(routes).
        type: list
        elements: dict
        suboptions: *route_suboptions
  purge_routes:
    description:
      - With V(true), O(routes) is exact, as described there. With V(false), the listed routes are added or
        corrected and every other route on the interface is kept, also in the persisted unit; the routes kept
        are returned as RV(kept_routes).
      - The roles set V(false) when the run cannot know the whole fabric (an AWX job slice, a fabric plan marked
        incomplete; see C(docs/awx.md)), so that it never removes a route to a node it cannot see.
    type: bool
    default: true
  forwarding:
    description:
      - Sets C(net.ipv4.conf.<name>.forwarding). IPv4 forwards a packet when forwarding is on for the interface
        it arrived on, and gateway traffic arrives and leaves on this interface, so the global C(ip_forward)
        (which flips every interface) is not touched. Omit to leave it alone.
    type: bool
  rp_filter:
    description:
      - Sets C(net.ipv4.conf.<name>.rp_filter) (0 off, 1 strict, 2 loose). The kernel applies
        max(C(conf.all), interface), so when C(conf.all.rp_filter) is higher it is lowered to this value too,
        with a warning. The routes this module installs make the return path symmetric, so strict mode
        works; use 2 when other paths are asymmetric. Omit to leave it alone.
    type: int
    choices: [0, 1, 2]
  send_redirects:
    description:
      - Sets C(net.ipv4.conf.<name>.send_redirects). The kernel sends ICMP redirects when C(conf.all) OR the
        interface allows it, so V(false) also sets C(conf.all.send_redirects=0). A gateway forwarding back out
        of the interface a packet came in on would otherwise redirect pods to the other node's gateway.
    type: bool
  state:
    description:
      - V(absent) deletes the interface (with its addresses and routes) only if it is VLAN O(vlan_id) on O(pf),
        and removes the persisted unit. Sysctls of C(conf.all) are left as they are.
    type: str
    choices: [present, absent]
    default: present
  persist:
    description:
      - Also install C(/etc/systemd/system/gpufabric-vlan-<name>.service), a oneshot unit of idempotent
        C(ip link add)/C(ip address replace) commands, one C(ip -force -batch) of the routes and sysctl writes, and its
        C(sys-subsystem-net-devices-<pf>.device.wants) symlink (what C(systemctl enable) creates), bound to the PF's device,
        started whenever it appears. A unit works the same under
        NetworkManager, systemd-networkd or ifupdown, which leave an unconfigured VLAN alone.
      - The routes are in C(gpufabric-vlan-<name>.routes) beside the unit (systemd loads no such file), one
        C(route replace) line each, so that a boot runs one C(ip) for all of them and the unit's text does not grow
        with the fleet. The diff names that file by its route count and sha256, not its text.
      - C(systemctl daemon-reload) runs only when systemd is running (C(/run/systemd/system) exists);
        otherwise the files are still written.
    type: bool
    default: false
  unit_dir:
    description:
      - Directory of the persisted unit and its routes file.
      - An absolute path of letters, digits, C(/), C(.), C(_) and C(-) (the unit names its routes file by it).
    type: path
    default: /etc/systemd/system
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details: Writes nothing; predicts C(changed), the actions and the diff.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
notes:
  - Only IPv4 sysctls are managed; IPv6 addresses and routes are supported.
  - This module reads netlink and C(/proc/sys) only. It accepts O(sysfs_root) so that C(module_defaults) of the
    C(gpufabric.roce.roce) group apply to it, and does not read it.
"""

EXAMPLES = r"""
- name: Gateway of node1's pod subnet, route to node2's pod subnet
  gpufabric.roce.vlan_gateway:
    pf: enp157s0np0
    vlan_id: 100
    mtu: 9000
    addresses: [10.255.0.2/30]
    routes:
      - {dst: 10.255.0.4/30, via: 10.255.0.6, onlink: true}
    forwarding: true
    persist: true

- name: Plan the fabric once, from the roce_* variables of group roce_nodes (every node validated together)
  ansible.builtin.set_fact:
    plan: "{{ hostvars | gpufabric.roce.fabric_plan(groups['roce_nodes']) }}"
  run_once: true

- name: This node's gateways from its slice of the plan, every rail in one module run
  gpufabric.roce.vlan_gateway:
    rails: >-
      {{ (plan | gpufabric.roce.fabric_plan_node(inventory_hostname, route_ranges=true)).rails
         | map('dict2items') | map('selectattr', 'key', 'in', ['rail', 'pf', 'vlan_id', 'name', 'mtu', 'addresses', 'routes'])
         | map('items2dict') }}
    forwarding: true

- name: The gateways of a two-rail node in one module run
  gpufabric.roce.vlan_gateway:
    rails:
      - {rail: rail0, pf: enp12s0np0, vlan_id: 101, mtu: 9000, addresses: [10.101.0.254/24],
         routes: [{dst: 10.101.1.0/24, via: 10.101.1.254, onlink: true}]}
      - {rail: rail1, pf: enp18s0np0, vlan_id: 102, mtu: 9000, addresses: [10.102.0.254/24],
         routes: [{dst: 10.102.1.0/24, via: 10.102.1.254, onlink: true}]}
    forwarding: true
    persist: true

- name: Remove the gateway
  gpufabric.roce.vlan_gateway:
    pf: enp157s0np0
    vlan_id: 100
    state: absent
"""

RETURN = r"""
interface:
  description: Name of the VLAN interface.
  returned: without O(rails)
  type: str
  sample: enp157s0np0.100
ifindex:
  description: Its ifindex (V(null) in check mode before it exists).
  returned: when O(state=present) (in RV(rails) with O(rails))
  type: int
  sample: 7
actions:
  description: The changes made (or, in check mode, that would be made), in order.
  returned: without O(rails)
  type: list
  elements: str
  sample: [create, up, addr_add 10.255.0.2/30, route_replace 10.255.0.4/30 via 10.255.0.6 metric 0 onlink,
           route_replace 10.255.1.0/24 via 10.255.1.254 metric 0 onlink .. 10.255.9.0/24 via 10.255.9.254 (9 routes),
           sysctl net/ipv4/conf/enp157s0np0.100/forwarding=1]
kept_routes:
  description: The routes on the interface that O(routes) does not list and O(purge_routes=false) kept.
  returned: when O(purge_routes=false) kept a route (in RV(rails) with O(rails))
  type: list
  elements: str
  sample: [route_kept 10.255.0.8/30 via 10.255.0.10 metric 0 onlink]
persist:
  description:
    - The persisted unit, its path, whether it changed, whether systemd was running and reloaded, and the path of its
      routes file (C(routes_file)).
  returned: when O(persist=true) or O(state=absent) (in RV(rails) with O(rails))
  type: dict
route_changes:
  description:
    - The routes added, removed, and changed (another next hop or O(routes[].onlink)), each in range form (see
      O(routes[].count)); with O(purge_routes=false), also C(kept), the unlisted routes kept. The change-impact report
      of C(playbooks/site.yml) reads these.
  returned: when O(state=present) and O(routes) is given (in RV(rails) with O(rails))
  type: dict
  sample: {added: [{dst: 10.255.0.8/30, via: 10.255.0.10, onlink: true, metric: 0}], removed: [], changed: []}
rails:
  description:
    - With O(rails), one result per rail, with the keys above (RV(interface), RV(ifindex), RV(actions),
      RV(kept_routes), RV(persist), RV(route_changes)); see the notes.
  returned: with O(rails)
  type: list
  elements: dict
  sample:
    - {rail: rail0, interface: enp12s0np0.101, ifindex: 9, changed: true, actions: [create, up, addr_add 10.101.0.254/24]}
diff:
  description:
    - With O(rails), a list of the per-rail diffs described next, one per rail in the order of RV(rails), each headed
      by its rail.
    - Interface, MTU, addresses, routes and sysctls before and after (and the unit text when it changed, and the
      routes file as its route count and sha256 when it changed).
    - The routes are in range form (see O(routes[].count)). Consecutive routes whose next hops sit at the same
      offset are one entry with C(count), so the diff of a gateway stays small at any fleet size.
  returned: always
  type: raw
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufabric.roce.plugins.module_utils._host.netlink import rails_option, run_netlink_module
from ansible_collections.gpufabric.roce.plugins.module_utils._host.vlan_gateway import run

# What each gateway takes (at the top level, or per entry of rails).
GATEWAY_OPTIONS = dict(
    name=dict(type='str'),
    mtu=dict(type='int'),
    addresses=dict(type='list', elements='str'),
    routes=dict(type='list', elements='dict', options=dict(
        dst=dict(type='str', required=True),
        via=dict(type='str'),
        onlink=dict(type='bool', default=False),
        metric=dict(type='int'),
        count=dict(type='int', default=1),
    )),
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            GATEWAY_OPTIONS,
            pf=dict(type='str'),
            vlan_id=dict(type='int'),
            rails=rails_option(dict(GATEWAY_OPTIONS, pf=dict(type='str', required=True), vlan_id=dict(type='int', required=True))),
            purge_routes=dict(type='bool', default=True),
            forwarding=dict(type='bool'),
            rp_filter=dict(type='int', choices=[0, 1, 2]),
            send_redirects=dict(type='bool'),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            persist=dict(type='bool', default=False),
            unit_dir=dict(type='path', default='/etc/systemd/system'),
            sysfs_root=dict(type='path', default='/sys'),
        ),
        required_one_of=[('pf', 'rails')],
        required_together=[('pf', 'vlan_id')],
        mutually_exclusive=[('rails', 'pf')] + [('rails', k) for k in GATEWAY_OPTIONS],
        supports_check_mode=True,
    )
    run_netlink_module(module, run, files=True)


if __name__ == '__main__':
    main()

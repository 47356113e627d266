#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: sriov_render
short_description: Internal (sriov_networks role) - validate every node and render all its SR-IOV objects, in one task on the controller
version_added: "0.1.0"
description:
  - Reads the variables of every host of O(hosts) once and renders, in one pass, the SriovNetworkNodePolicies and
    SriovNetworks (and nv-ipam's CIDRPools), the SriovNetworkPoolConfigs of the operator's drain pools and the
    NicConfigurationTemplates of the nodes with C(roce_qos_via=operator). Any invalid host fails the task, with one line
    per problem naming the host, the variable, its value and the fix, before anything is written or applied.
  - A variable is templated only when it holds a template; plain inventory values are read as they are.
  - The objects are returned as one JSON text (RV(objects)) rather than as nested data, which Ansible would rebuild for
    every task that passes them on (160,000 objects at 10,000 nodes x 8 rails). The role
    P(gpufabric.roce.sriov_networks#role) writes them with M(gpufabric.roce.manifest_files) (O(gpufabric.roce.manifest_files#module:objects))
    or parses them once to apply them.
  - The NicConfigurationTemplates use the fabric table of this run's plan (site.yml's validation play sets it as
    C(__site_plan) on the hosts of that play, and the name of one of them as C(__site_plan_host) on the controller)
    when it covers every host; otherwise the table is made from the hosts' variables.
  - This is an action plugin; the module file only holds the documentation. It changes nothing.
author:
  - gpufabric.roce maintainers (@gpufabric)
options:
  hosts:
    description: The inventory hosts to render (the role's C(sriov_networks_hosts)).
    type: list
    elements: str
    required: true
  defaults:
    description: The cluster-wide settings of the policies and networks (the role's C(__sriov_networks_defaults)); missing
      keys come from the role's defaults.
    type: dict
    default: {}
  pool_defaults:
    description: The drain pools' settings (the role's C(__sriov_networks_pool_defaults)).
    type: dict
    default: {}
  nic_config_defaults:
    description: The NicConfigurationTemplates' settings (the role's C(__sriov_networks_nic_config_defaults)).
    type: dict
    default: {}
  whole_fabric:
    description:
      - The objects are to be applied or written (site.yml's sriov phase), which replaces and prunes the fabric's objects
        in the cluster or the rendered tree. Check first, before rendering, that this run's plan lets it.
      - Refused when the plan is incomplete (an AWX job without C(roce_inventory_complete=true), which may be a job
        slice, or C(roce_inventory_complete=false)), since the run would replace the objects of every node with its share.
      - "With a plan read back (C(roce_plan)): refused when a node of the plan is not in O(hosts), and when this run's
        variables give any node of the plan another PF, VLAN, MTU, subnet, gateway, VF count, VF settings or QoS than
        the plan, which the host phases configured the nodes with. Each difference is named: host, field, the value now
        and the plan's."
      - Without a plan (the role used on its own) there is nothing to check.
    type: bool
    default: false
  nccl:
    description:
      - Also return what the inventory determines of every node's NCCL settings (RV(nccl)), for the NCCL ConfigMap of a
        render that has no node's facts (gpufabric.roce.render). C(NCCL_IB_HCA) and C(NCCL_IB_GID_INDEX) need the node's
        RDMA facts and are never among them; see P(gpufabric.roce.nccl_env#filter).
    type: bool
    default: false
    version_added: "0.1.0"
extends_documentation_fragment:
  - gpufabric.roce.roce.readonly
notes:
  - The result is not shown at C(-v) (it can be very large); the role prints the counts.
seealso:
  - module: gpufabric.roce.manifest_files
"""

EXAMPLES = r"""
- name: Validate the inventory and render every SR-IOV object
  gpufabric.roce.sriov_render:
    hosts: "{{ groups['roce_nodes'] }}"
  register: render

- name: Write them for GitOps
  gpufabric.roce.manifest_files:
    dest: /srv/gitops/roce/sriov-networks
    files: {}
    objects: "{{ render.objects }}"
    object_files:
      sriov-network-node-policies.yaml: policies
      sriov-networks.yaml: networks

- name: Or use them as data
  ansible.builtin.debug:
    msg: "{{ (render.objects | from_json).policies | map(attribute='metadata.name') | list }}"
"""

RETURN = r"""
objects:
  description:
    - The JSON text of a mapping with the lists C(policies), C(networks), C(ip_pools) (nv-ipam CIDRPools),
      C(pool_configs), C(nic_config_templates) (the objects), C(nodes) (per node its host, node name, policies and the
      resources it must publish) and C(nic_config_devices) (the rail NICs the templates select).
  returned: success
  type: str
counts:
  description: The length of each list of RV(objects).
  returned: success
  type: dict
  sample: {policies: 16, networks: 16, ip_pools: 0, pool_configs: 1, nic_config_templates: 0, nodes: 2, nic_config_devices: 0}
pools:
  description: Per drain pool its name, node count, the requested and the effective maxUnavailable, and whether it was raised to 1.
  returned: success
  type: list
  elements: dict
node_names:
  description: Kubernetes node name of each host.
  returned: success
  type: dict
  sample: {node1: node1, node2: node2}
nic_config_nodes:
  description: How many nodes have rail NICs with a NicConfigurationTemplate.
  returned: success
  type: int
nccl:
  description:
    - C(env) - per Kubernetes node name, the NCCL settings its inventory determines - C(NCCL_IB_TC) from its rails' QoS ToS
      (when they agree), C(NCCL_SOCKET_IFNAME) from C(host_network_nccl_socket_ifname).
    - C(host_qos) - the nodes whose QoS the host_network phase applies (C(roce_qos) with C(roce_qos_via=host)); nothing
      rendered carries it.
  returned: with O(nccl)
  type: dict
  sample: {env: {node1: {NCCL_IB_TC: "106"}, node2: {NCCL_IB_TC: "106"}}, host_qos: [node1, node2]}
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(hosts=dict(type="list", elements="str", required=True), defaults=dict(type="dict", default={}),
                           pool_defaults=dict(type="dict", default={}), nic_config_defaults=dict(type="dict", default={}),
                           whole_fabric=dict(type="bool", default=False), nccl=dict(type="bool", default=False)),
        supports_check_mode=True,
    )
    module.fail_json(msg="gpufabric.roce.sriov_render is an action plugin: it runs on the controller, not as a module")


if __name__ == "__main__":
    main()

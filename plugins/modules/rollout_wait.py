#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: rollout_wait
short_description: Internal (network_operator, sriov_networks roles) - wait for the network operator or the SR-IOV sync, with one line of progress per poll
version_added: "0.1.0"
description:
  - Polls the cluster through M(gpufabric.roce.k8s_info_many) (every read of a poll in one module run) until the
    rollout has converged, printing one progress line per poll (what is ready, what is still pending and why), and
    fails with the reason when the timeout passes or when a node reports a failure that will not clear by itself.
  - C(check=nic_cluster_policy) waits until the NicClusterPolicy C(nic-cluster-policy) is ready and every Deployment of
    O(namespace) is available. From network-operator 26.7 (O(chart_version)) ready means its C(Ready) condition and every
    C(<Component>Ready) condition C(True), for the policy's current generation; each one that is not names the component,
    the reason (C(ComponentNotReady), C(ComponentError)) and the message. Before 26.7 it means C(status.state=ready) with
    every C(appliedStates) entry ready. A policy without status yet says that no network-operator has reconciled it.
  - C(check=sriov_sync) waits until every node of O(expected) has a SriovNetworkNodeState whose
    C(spec.interfaces) carry each PF with the policies' numVfs and MTU, whose C(status.interfaces) report those
    VFs, and whose C(syncStatus) is C(Succeeded); then until each node's C(status.allocatable) has the VFs of
    every resource. The config daemon reports C(Succeeded) for an empty spec before the operator has written
    the policies into the state, so C(Succeeded) alone is never taken as synced.
  - A node whose state carries these policies and reports C(syncStatus=Failed) fails the task at once, with
    its C(lastSyncError) and the node's name.
  - C(check=sriov_drain) (teardown) waits until every node of O(expected) (the P(gpufabric.roce._sriov_drain_plan#filter)
    filter's result, read before the policies were deleted) has a SriovNetworkNodeState whose C(spec.interfaces) carry no
    VF group of the deleted policies and whose C(syncStatus) is C(Succeeded), and until each released PF the operator had made VFs on
    reports none in C(status.interfaces) (VFs made on the host, C(externallyManaged), stay, and the host half of the teardown
    removes them). A node whose state is gone has nothing left to release.
  - C(check=nic_config) waits until every rail NIC of O(expected) (the C(devices) of the
    P(gpufabric.roce._nic_config_templates#filter) filter) is listed in its NicConfigurationTemplate's C(status.nicDevices) -
    a NicDevice of the node has a port at the rail's PCI address and the NIC Configuration Operator matched it to that
    template alone (a NIC two templates select is listed by neither). It does not wait for the firmware - a device whose
    nvconfig changes stays C(PendingReboot) until the operator's maintenance reboots the node; the progress line counts the
    devices per C(ConfigUpdateInProgress) reason. A device whose spec the daemon refuses (C(IncorrectSpec)) fails the task at once.
  - This is an action plugin; the module file only holds the documentation. In check mode it waits for nothing.
author:
  - gpufabric.roce maintainers (@gpufabric)
options:
  check:
    description: What to wait for.
    type: str
    required: true
    choices: [nic_cluster_policy, sriov_sync, sriov_drain, nic_config]
  namespace:
    description: The network-operator namespace (Deployments, SriovNetworkNodeStates).
    type: str
    required: true
  expected:
    description:
      - For C(check=sriov_sync), the C(nodes) list returned by the P(gpufabric.roce.sriov_manifests#filter)
        filter, each with C(node_name), C(interfaces) (C(name), C(numVfs), C(mtu)) and C(resources)
        (resource name to VF count). Nodes without C(resources) skip the allocatable check.
      - For C(check=sriov_drain), the P(gpufabric.roce._sriov_drain_plan#filter) filter's result, with each node's C(node_name),
        the deleted C(policies) and the C(interfaces) (C(name), C(externallyManaged)) they configured.
      - For C(check=nic_config), the C(devices) of the P(gpufabric.roce._nic_config_templates#filter) filter, each with
        C(node_name), C(rail), C(pci_address) and C(template).
    type: list
    elements: dict
    default: []
  chart_version:
    description:
      - For C(check=nic_cluster_policy), the network-operator chart version; 26.7 and later are judged by the
        NicClusterPolicy's C(status.conditions), older ones by C(status.state). Without it, by the conditions when the
        policy carries them.
    type: str
  timeout:
    description: Seconds to wait in all, for the sync and the allocatable resources together.
    type: int
    default: 900
  interval:
    description: Seconds between polls.
    type: int
    default: 10
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details: Waits for nothing in check mode, since nothing was applied.
extends_documentation_fragment:
  - gpufabric.roce.roce.readonly
  - gpufabric.roce.roce.k8s_auth
requirements:
  - kubernetes.core (the C(kubernetes) Python package on the host the task runs on)
"""

EXAMPLES = r"""
- name: Wait for the NicClusterPolicy and the operator deployments
  gpufabric.roce.rollout_wait:
    check: nic_cluster_policy
    namespace: nvidia-network-operator
    chart_version: "26.7.1"
    timeout: 900

- name: Wait until every node has taken the SR-IOV policies in and publishes its VFs
  gpufabric.roce.rollout_wait:
    check: sriov_sync
    namespace: nvidia-network-operator
    expected: "{{ rendered.nodes }}"
    timeout: 1800
    interval: 20

- name: Wait until the node states no longer carry the deleted policies' VFs (teardown)
  gpufabric.roce.rollout_wait:
    check: sriov_drain
    namespace: nvidia-network-operator
    expected: "{{ node_states | gpufabric.roce._sriov_drain_plan(['roce-node1', 'roce-node2']) }}"
    timeout: 1800
"""

RETURN = r"""
polls:
  description: How many times the cluster was read (0 in check mode, which reads nothing).
  returned: always
  type: int
  sample: 4
elapsed:
  description: Seconds spent waiting.
  returned: always
  type: int
  sample: 61
problems:
  description: What was still not as expected when the task ended (empty on success and in check mode).
  returned: always
  type: list
  elements: str
  sample: ["node2: syncStatus=Failed lastSyncError: numVfs 8 > totalvfs 4"]
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(
            check=dict(type="str", required=True, choices=["nic_cluster_policy", "sriov_sync", "sriov_drain", "nic_config"]),
            namespace=dict(type="str", required=True),
            expected=dict(type="list", elements="dict", default=[]),
            timeout=dict(type="int", default=900),
            interval=dict(type="int", default=10),
            chart_version=dict(type="str"),
            kubeconfig=dict(type="raw", no_log=True),
            context=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    module.fail_json(msg="gpufabric.roce.rollout_wait runs as an action plugin on the controller; this module file only holds its documentation")


if __name__ == "__main__":
    main()

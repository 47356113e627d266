# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001


class ModuleDocFragment(object):
    # The options every module of the gpufabric.roce.roce action group accepts, so that one
    # module_defaults entry for group/gpufabric.roce.roce is valid for each of them (Ansible fails
    # a module given a default it does not take with "Unsupported parameters").
    DOCUMENTATION = r"""
options:
  sysfs_root:
    description:
      - Where the node's sysfs is mounted. M(gpufabric.roce.rdma_facts) and M(gpufabric.roce.perftest) read
        C(class/net), C(class/infiniband) and the PCI device files below it, M(gpufabric.roce.sriov_vf) reads and
        writes C(sriov_numvfs) there, M(gpufabric.roce.vlan_gateway) does not use it.
      - Keep the default on a node. Set it when the modules run in a container that sees the host's sysfs
        elsewhere (for example C(/host/sys)), or to a fixture tree in tests. Netlink requests still go to the
        network namespace the module runs in.
      - Shared by the C(gpufabric.roce.roce) action group; set it once for all of them with
        C(module_defaults) (see EXAMPLES of M(gpufabric.roce.rdma_facts)).
    type: path
    default: /sys
"""

    ACTIONGROUP = r"""
options: {}
attributes:
  action_group:
    description: Use C(group/gpufabric.roce.roce) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - gpufabric.roce.roce
"""

    # What the host modules (sriov_vf, vlan_gateway, roce_qos) do with their rails option: every rail of a node in one run.
    RAILS = r"""
options: {}
notes:
  - With O(rails), every rail is validated and predicted before the first change, so a bad value on one rail changes no
    rail. A refusal only the kernel or the driver can give comes while a rail is applied - that rail sets back what it
    can, the rails before it keep their changes, and the error names them.
  - With O(rails), errors name the field as C(rails[<rail>].<field>), C(<rail>) being O(rails[].rail) or else the
    rail's interface; the result has each rail's result, with C(rail) and C(changed), in C(rails), in the order given,
    and their diffs as a list in C(diff), in the same order, each headed by its rail.
"""

    # The attributes of the modules that change nothing: the actions that only read variables on the controller
    # (validate_role_arguments, unknown_variables, role_view, sriov_render) and the cluster reads (k8s_info_many, k8s_tools,
    # rollout_wait, which adds its own check-mode details).
    READONLY = r"""
options: {}
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details: Changes nothing in any mode.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
"""

    # How the modules that talk to the Kubernetes API find it, in kubernetes.core's words (k8s_apply, k8s_info_many,
    # k8s_tools, rollout_wait). The roles pass the kubeconfig they were given, a path or a mapping.
    K8S_AUTH = r"""
options:
  kubeconfig:
    description:
      - Path to a kubeconfig, or its content as a mapping (never logged), as M(kubernetes.core.k8s_info) takes it.
      - Without it, the kubernetes client's defaults (C(K8S_AUTH_KUBECONFIG), C(KUBECONFIG), C(~/.kube/config), in-cluster).
    type: raw
  context:
    description: The kubeconfig context to use.
    type: str
"""

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: k8s_apply
short_description: Internal (the Kubernetes roles) - apply many Kubernetes objects in one run and show each changed object's diff
version_added: "0.1.0"
description:
  - Applies every object of O(definition) with one run of M(kubernetes.core.k8s) (C(state=present), C(apply=true)),
    so that a thousand SriovNetworkNodePolicies cost one module start, not a thousand.
  - With C(--diff), shows one diff per changed object, headed C(<kind>/<name>); M(kubernetes.core.k8s) given a list keeps
    those diffs nested in its result, where Ansible does not show them. In check mode the API server computes the
    change (dry run) and nothing is written.
  - The diffs leave out what the API server sets (C(uid), C(creationTimestamp), C(resourceVersion), C(generation),
    C(managedFields)), the object's C(status) and the C(kubectl.kubernetes.io/last-applied-configuration) annotation, so
    they show what the run changes.
  - In check mode, objects whose API the cluster does not serve yet (their CRD comes with a chart that is not installed) are
    reported in RV(pending_objects) and in the diff as created once the chart is installed, instead of failing.
  - This is an action plugin; the module file only holds the documentation.
author:
  - gpufabric.roce maintainers (@gpufabric)
options:
  definition:
    description: The objects to apply.
    type: list
    elements: dict
    required: true
  namespace:
    description: Namespace for the objects that do not name one.
    type: str
  labels:
    description:
      - Labels added to every object's C(metadata.labels) when it is applied (the definitions themselves are not changed).
      - The roles put the rollout's identity here (C(gpufabric.roce/fabric)), so that pruning touches only that rollout's objects.
    type: dict
    default: {}
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
extends_documentation_fragment:
  - gpufabric.roce.roce.k8s_auth
requirements:
  - kubernetes.core (the C(kubernetes) Python package on the host the task runs on)
"""

EXAMPLES = r"""
- name: Apply the rendered policies, showing the drift of each in --check --diff
  gpufabric.roce.k8s_apply:
    namespace: nvidia-network-operator
    definition: "{{ rendered.policies }}"
"""

RETURN = r"""
changed_objects:
  description: C(<kind>/<name>) of every object that changed (or would change in check mode).
  returned: always
  type: list
  elements: str
  sample: ["SriovNetwork/roce-node1"]
pending_objects:
  description: >-
    Check mode only: C(<kind>/<name>) of the objects whose API the cluster does not serve yet; they would be created once the
    chart that brings their CRD is installed. Also listed in RV(changed_objects).
  returned: always
  type: list
  elements: str
  sample: ["NicClusterPolicy/nic-cluster-policy"]
applied:
  description: How many objects were applied.
  returned: when O(definition) is not empty
  type: int
  sample: 3
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(
            definition=dict(type="list", elements="dict", required=True),
            namespace=dict(type="str"),
            kubeconfig=dict(type="raw", no_log=True),
            context=dict(type="str"),
            labels=dict(type="dict", default={}),
        ),
        supports_check_mode=True,
    )
    module.fail_json(msg="gpufabric.roce.k8s_apply runs as an action plugin on the controller; this module file only holds its documentation")


if __name__ == "__main__":
    main()

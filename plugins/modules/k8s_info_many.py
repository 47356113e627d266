#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: k8s_info_many
short_description: Internal (sriov_networks role) - several kubernetes.core.k8s_info reads in one module run
version_added: "0.1.0"
description:
  - Answers every query of O(queries) exactly as M(kubernetes.core.k8s_info) answers it (the same client, the same
    C(find)), in one module run. The kubernetes client starts once and one API client serves them all, where a loop
    of M(kubernetes.core.k8s_info) pays a module start per kind.
  - A kind the cluster does not serve (its CRD is not installed) is answered with RV(answers.api_found=false) and no
    resources, as M(kubernetes.core.k8s_info) answers it. Any other failure fails the task.
  - Read-only; the same in check mode.
author:
  - gpufabric.roce maintainers (@gpufabric)
options:
  queries:
    description: The reads, each answered under its O(queries[].id) in RV(answers).
    type: list
    elements: dict
    required: true
    suboptions:
      id:
        description: The key of this query's answer in RV(answers); unique among the queries.
        type: str
        required: true
      api_version:
        description: The kind's API version.
        type: str
        default: v1
      kind:
        description: The kind to read.
        type: str
        required: true
      name:
        description: One object by name; all objects of the kind when not given.
        type: str
      namespace:
        description: The namespace to read; all namespaces (or a cluster-scoped kind) when not given.
        type: str
      label_selectors:
        description: Label selectors, as M(kubernetes.core.k8s_info) takes them.
        type: list
        elements: str
        default: []
      field_selectors:
        description: Field selectors, as M(kubernetes.core.k8s_info) takes them.
        type: list
        elements: str
        default: []
extends_documentation_fragment:
  - gpufabric.roce.roce.readonly
  - gpufabric.roce.roce.k8s_auth
requirements:
  - kubernetes.core (the C(kubernetes) Python package on the host the task runs on)
"""

EXAMPLES = r"""
- name: Read the operator's config and every SriovNetworkNodeState in one module run
  gpufabric.roce.k8s_info_many:
    queries:
      - id: operator_config
        api_version: sriovnetwork.openshift.io/v1
        kind: SriovOperatorConfig
        name: default
        namespace: nvidia-network-operator
      - id: states
        api_version: sriovnetwork.openshift.io/v1
        kind: SriovNetworkNodeState
        namespace: nvidia-network-operator
  register: reads

- name: Use the answers
  ansible.builtin.debug:
    msg: "{{ reads.answers.states.resources | length }} node states; config found: {{ reads.answers.operator_config.resources | length > 0 }}"
"""

RETURN = r"""
answers:
  description: Per query id, its answer as M(kubernetes.core.k8s_info) gives it.
  returned: always
  type: dict
  contains:
    api_found:
      description: Whether the cluster serves the query's kind.
      type: bool
    resources:
      description: The objects read.
      type: list
      elements: dict
  sample: {"states": {"api_found": true, "resources": [{"kind": "SriovNetworkNodeState", "metadata": {"name": "node1"}}]}}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.info_many import check_ids, read_all

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService
except ImportError:  # kubernetes.core absent: fail with the fix, below
    AnsibleK8SModule = None

QUERY_SPEC = dict(
    id=dict(type="str", required=True),
    api_version=dict(type="str", default="v1"),
    kind=dict(type="str", required=True),
    name=dict(type="str"),
    namespace=dict(type="str"),
    label_selectors=dict(type="list", elements="str", default=[]),
    field_selectors=dict(type="list", elements="str", default=[]),
)


# The roles' connection options (kubeconfig, context), as k8s_apply takes them; kubernetes.core's client reads only
# the options it is given.
ARGUMENT_SPEC = dict(
    queries=dict(type="list", elements="dict", required=True, options=QUERY_SPEC),
    kubeconfig=dict(type="raw", no_log=True),
    context=dict(type="str"),
)


def main():
    if AnsibleK8SModule is None:
        AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True).fail_json(
            msg="gpufabric.roce.k8s_info_many needs the kubernetes.core collection. Fix: ansible-galaxy collection install kubernetes.core")
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    queries = module.params["queries"]
    try:
        check_ids(queries)
    except ValueError as err:
        module.fail_json(msg="gpufabric.roce.k8s_info_many: %s" % err)
    try:
        answers = read_all(K8sService(get_api_client(module), module), queries)
    except CoreException as err:
        module.fail_from_exception(err)
    module.exit_json(changed=False, answers=answers)


if __name__ == "__main__":
    main()

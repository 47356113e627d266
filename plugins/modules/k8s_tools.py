#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: k8s_tools
short_description: Internal (site.yml, teardown.yml) - check that the Kubernetes phases can run (kubernetes.core, the kubernetes client, the cluster, helm)
version_added: "0.1.0"
description:
  - Checks, before the first change of a run, what the apply-mode Kubernetes phases need on the host they run on, and fails
    with every missing piece and its fix at once.
  - The collection C(kubernetes.core); the C(kubernetes) Python client and the cluster access (one C(kubernetes.core.k8s_info)
    read of the C(default) Namespace with O(kubeconfig) and O(context)), with O(cluster); C(helm version), with O(helm).
  - Changes nothing. Run it with C(check_mode=false) so that C(helm version) also runs in check mode.
  - This is an action plugin; the module file only holds the documentation.
author:
  - gpufabric.roce maintainers (@gpufabric)
options:
  cluster:
    description: Check the C(kubernetes) client and the cluster access.
    type: bool
    default: true
  helm:
    description: Check that helm runs.
    type: bool
    default: false
  helm_binary:
    description: The helm binary; empty means C(helm) on the PATH.
    type: str
    default: ""
extends_documentation_fragment:
  - gpufabric.roce.roce.readonly
  - gpufabric.roce.roce.k8s_auth
"""

EXAMPLES = r"""
- name: Check the tools of the Kubernetes phases before the first change
  gpufabric.roce.k8s_tools:
    helm: true
    helm_binary: "{{ network_operator_helm_binary }}"
    kubeconfig: "{{ network_operator_kubeconfig or omit }}"
  check_mode: false
"""

RETURN = r"""
checked:
  description: What was checked.
  returned: always
  type: list
  elements: str
  sample: ["kubernetes client and cluster access", "helm"]
problems:
  description: One message per missing piece, each with its fix.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(
            cluster=dict(type="bool", default=True),
            helm=dict(type="bool", default=False),
            helm_binary=dict(type="str", default=""),
            kubeconfig=dict(type="raw", no_log=True),
            context=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    module.fail_json(msg="gpufabric.roce.k8s_tools runs as an action plugin on the controller; this module file only holds its documentation")


if __name__ == "__main__":
    main()

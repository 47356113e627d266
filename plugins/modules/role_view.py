#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: role_view
short_description: Internal (site.yml) - read variables of a role of this collection as another host would see them
version_added: "0.1.0"
description:
  - Returns the variables of O(names) as the role O(role) would see them on the host O(host) when entered from a play
    without play variables - the host's variables (inventory, group_vars, host_vars, facts, extra vars) over the role's
    C(vars/main.yml) and C(defaults/main.yml), templated in that host's context.
  - Ansible resolves a role's variables only for the host a task runs on. C(playbooks/site.yml) needs the
    C(k8s_controller) host's view while that host is outside the run (C(--limit) to a rack of nodes), to validate
    the SR-IOV render with the controller's settings before the first change. The role's defaults are read from the
    role's own files, never repeated in the playbook.
  - This is an action plugin; the module file only holds the documentation.
author:
  - gpufabric.roce maintainers (@gpufabric)
options:
  role:
    description: A role of this collection (C(sriov_networks) or C(gpufabric.roce.sriov_networks)) with an argument spec.
    type: str
    required: true
  host:
    description: The inventory host whose view to read; it need not be in the play or the C(--limit).
    type: str
    required: true
  names:
    description:
      - Variables to return. Each must be a variable of O(host) or a default or var of O(role); a value that is
        omitted (C(omit)) is left out of RV(vars).
    type: list
    elements: str
    required: true
extends_documentation_fragment:
  - gpufabric.roce.roce.readonly
notes:
  - Play, block and role parameters of another play are not seen, only what the inventory and extra vars give the host.
  - The result can carry whatever the variables hold; do not name secret-bearing variables, or set C(no_log) on the task.
"""

EXAMPLES = r"""
- name: The controller's settings of the SR-IOV render, from a play on the nodes
  gpufabric.roce.role_view:
    role: gpufabric.roce.sriov_networks
    host: "{{ groups['k8s_controller'] | first }}"
    names: [sriov_networks_hosts, __sriov_networks_defaults]
  register: controller_view
  run_once: true
"""

RETURN = r"""
host:
  description: The host whose view was read.
  returned: always
  type: str
  sample: controller
role:
  description: The role's fully qualified name.
  returned: always
  type: str
  sample: gpufabric.roce.sriov_networks
vars:
  description: Each variable of O(names) with its templated value.
  returned: always
  type: dict
  sample:
    sriov_networks_hosts: [node1, node2]
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(role=dict(type="str", required=True), host=dict(type="str", required=True),
                           names=dict(type="list", elements="str", required=True)),
        supports_check_mode=True,
    )
    module.fail_json(msg="gpufabric.roce.role_view is an action plugin: it runs on the controller, not as a module")


if __name__ == "__main__":
    main()

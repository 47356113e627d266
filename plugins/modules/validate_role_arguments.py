#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: validate_role_arguments
short_description: Internal (the playbooks and roles) - check the role arguments of every host against the roles' argument specs, in one task
version_added: "0.1.0"
description:
  - Validates, for each host of O(hosts), the variables each role of O(roles) would see (the host's variables over the
    role's C(defaults/main.yml), templated in that host's context) against the role's C(meta/argument_specs.yml), with
    the same validator Ansible uses for a role's automatic argument-spec task.
  - Ansible runs that automatic task once per host and role, each in its own worker process; at 1,000 nodes and three
    roles that is 3,000 task runs before the first change. This action does it in one task on the controller. Hosts that
    share their values (their group_vars) are templated and validated once, so the cost grows with the number of hosts
    only through reading their variables.
  - After a role's argument spec, the role's cross-field rules run on the converted values (once per distinct set of
    values) - for host_network each C(roce_vfs) entry against the VF count (id, MAC, rates, VLAN and priority), for
    network_operator the renderer's rules (chart, repository URL, air-gap registry, pull secrets, images, the
    NicClusterPolicy CRD schema), positive timeouts, the Flux interval and, in apply mode, that a kubeconfig path
    exists on the controller, for rdma_verify thresholds, ports, tests, sizes, timeouts and that C(rdma_verify_hosts)
    are inventory hosts. An option the spec refuses is left to the spec's message. See C(docs/inventory.md).
  - Fails listing every problem, each naming the host (and how many others share it), the option, its value, the
    validator's message and the fix - the option itself, or the inventory variable its role default reads.
  - C(playbooks/site.yml) runs it in its validation play for the host roles and then enters them through their
    C(prevalidated) entry point, which has no argument spec, so no per-host argument-spec task runs again.
  - This is an action plugin; the module file only holds the documentation.
author:
  - gpufabric.roce maintainers (@gpufabric)
options:
  roles:
    description:
      - Roles of this collection whose argument specs to check. Each item is a role name (C(preflight) or
        C(gpufabric.roce.preflight)) or a mapping with the keys C(name) (required), C(entry_point) (default C(main))
        and C(when).
      - C(when) is a condition (a Jinja expression without braces, like a task's C(when)) evaluated per host in the
        role's context; the role is only checked on hosts where it is true. Mirror the C(when) the role runs with.
    type: list
    elements: raw
    required: true
  hosts:
    description: Hosts to check. Defaults to the play's hosts (C(ansible_play_hosts_all)), so C(--limit) applies.
    type: list
    elements: str
extends_documentation_fragment:
  - gpufabric.roce.roce.readonly
notes:
  - Run it once (C(run_once=true)); it reads every host's variables itself.
  - Role parameters and play or block C(vars) are not seen (this is the check of what the inventory and extra vars give
    each host); a role invoked with such variables still validates them itself through its C(main) entry point.
"""

EXAMPLES = r"""
- name: Validate the host roles of every node in one pass
  gpufabric.roce.validate_role_arguments:
    roles:
      - gpufabric.roce.preflight
      - gpufabric.roce.host_network
      - name: gpufabric.roce.rdma_verify
        when: (rdma_verify_mode | default('host')) == 'host'
  run_once: true
"""

RETURN = r"""
hosts:
  description: Number of hosts checked.
  returned: always
  type: int
  sample: 1000
checked:
  description: Host and role pairs checked (pairs whose C(when) was false are counted in RV(skipped_pairs)).
  returned: always
  type: int
  sample: 3000
skipped_pairs:
  description:
    - Host and role pairs skipped by their C(when).
    - Not named C(skipped), which Ansible reads as the task's own skipped flag.
  returned: always
  type: int
  sample: 0
templated:
  description: Distinct templates rendered (values shared by many hosts count once).
  returned: always
  type: int
  sample: 14
validated:
  description: Distinct sets of role values validated.
  returned: always
  type: int
  sample: 3
problems:
  description: One entry per distinct problem, with the hosts that have it.
  returned: always
  type: list
  elements: dict
  sample:
    - role: gpufabric.roce.preflight
      field: preflight_num_vfs
      value: ten
      hosts: [gpu-0001, gpu-0002]
      problem: "argument 'preflight_num_vfs' is of type str and we were unable to convert to int: ..."
      fix: "the role default of preflight_num_vfs is {{ roce_num_vfs | default(8) }}: set roce_num_vfs to an integer, or set preflight_num_vfs itself"
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(roles=dict(type="list", elements="raw", required=True), hosts=dict(type="list", elements="str")),
        supports_check_mode=True,
    )
    module.fail_json(msg="gpufabric.roce.validate_role_arguments runs as an action plugin on the controller; this module file only holds its documentation")


if __name__ == "__main__":
    main()

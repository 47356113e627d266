#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: unknown_variables
short_description: Internal (site.yml, render.yml) - warn about roce_* and role-prefixed variables that no role of the collection reads
version_added: "0.1.0"
description:
  - Reads the names of the variables of every host of O(hosts) (inventory, group_vars, host_vars and extra vars; nothing
    is templated) and warns about each one whose name starts with C(roce_), C(preflight_), C(host_network_),
    C(network_operator_), C(sriov_networks_) or C(rdma_verify_) but that no role of gpufabric.roce knows, such as the
    typo C(roce_vlan) for C(roce_vlan_id). Such a variable does nothing, silently.
  - A typo in the prefix itself is caught too when the name with the prefix corrected is a known variable, such as
    C(sriov_network_trust) for C(sriov_networks_trust) or C(roc_mtu) for C(roce_mtu); other variables outside the
    prefixes are left alone.
  - Known are the options of every entry point of each role's C(meta/argument_specs.yml), the keys of its
    C(defaults/main.yml), and the shared C(roce_*) variables of C(docs/inventory.md) with the rollout knobs of
    C(playbooks/site.yml) (C(roce_serial), C(roce_max_fail_percentage), C(roce_strategy)).
  - Each warning names the hosts (the first three and how many others), the variable, and the fix, with the closest
    known name when there is one. It never fails the play.
  - C(playbooks/site.yml) runs it once per run in its validation plays, before the first change.
  - This is an action plugin; the module file only holds the documentation.
author:
  - gpufabric.roce maintainers (@gpufabric)
options:
  hosts:
    description:
      - Hosts whose variables to read. Defaults to every host of the inventory (C(groups['all'])), whatever C(--limit)
        says, since an unknown variable is as ineffective on a host outside the limit.
    type: list
    elements: str
  ignore:
    description: Variable names not to warn about (your own variables that happen to share a prefix).
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - gpufabric.roce.roce.readonly
notes:
  - Run it once (C(run_once=true)); it reads every host's variables itself.
  - Variables given as play, block or role parameters are not seen; only what the inventory and extra vars give each host.
"""

EXAMPLES = r"""
- name: Warn about variables that no role reads (typos)
  gpufabric.roce.unknown_variables:
  run_once: true

- name: The same, for the nodes only, with a variable of your own
  gpufabric.roce.unknown_variables:
    hosts: "{{ groups['roce_nodes'] }}"
    ignore: [roce_site_owner]
  run_once: true
"""

RETURN = r"""
hosts:
  description: Number of hosts whose variables were read.
  returned: always
  type: int
  sample: 1000
unknown:
  description: Each unknown variable with the hosts it is set on.
  returned: always
  type: dict
  sample:
    roce_vlan: [node1, node2]
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(hosts=dict(type="list", elements="str"), ignore=dict(type="list", elements="str", default=[])),
        supports_check_mode=True,
    )
    module.fail_json(msg="gpufabric.roce.unknown_variables is an action plugin: it runs on the controller, not as a module")


if __name__ == "__main__":
    main()

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test double of kubernetes.core.k8s: records the call, applies nothing."""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.stub_cluster import COMMON, record


def main():
    spec = dict(COMMON, state=dict(type="str", default="present"), apply=dict(type="bool", default=False), definition=dict(type="raw"))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    record("k8s", module.params)
    defs = module.params["definition"]
    module.exit_json(changed=True, result=defs if isinstance(defs, dict) else {"results": defs})


if __name__ == "__main__":
    main()

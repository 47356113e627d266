# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test double of kubernetes.core.k8s_info: answers from the scripted cluster state."""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.stub_cluster import COMMON, read, record


def main():
    module = AnsibleModule(argument_spec=dict(COMMON), supports_check_mode=True)
    record("k8s_info", module.params)
    module.exit_json(changed=False, api_found=True, resources=read(module.params["kind"], module.params["name"]))


if __name__ == "__main__":
    main()

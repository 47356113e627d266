# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test double of kubernetes.core.helm: records the call, installs nothing."""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.stub_cluster import COMMON, record


def main():
    spec = dict(COMMON)
    for key in ("chart_repo_url", "chart_ref", "chart_version", "release_name", "release_namespace", "release_state"):
        spec[key] = dict(type="str")
    spec.update(create_namespace=dict(type="bool"), release_values=dict(type="dict", default={}))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    record("helm", module.params)
    module.exit_json(changed=True, status={"status": "deployed", "chart": "%s-%s" % (module.params["chart_ref"], module.params["chart_version"])})


if __name__ == "__main__":
    main()

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpufabric.roce.sriov_render: validate every node and render every SR-IOV object, in one task on the
controller, from one read of the nodes' variables (plugin_utils/_sriov_render.py)."""

from ansible.plugins.action import ActionBase
from ansible_collections.gpufabric.roce.plugins.module_utils._common import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_common import RenderValidationError
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _raw_vars as raw_vars
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _sriov_render as sr

ARGUMENT_SPEC = {
    "hosts": {"type": "list", "elements": "str", "required": True},
    "defaults": {"type": "dict", "default": {}},
    "pool_defaults": {"type": "dict", "default": {}},
    "nic_config_defaults": {"type": "dict", "default": {}},
}

# site.yml's validation play plans the fabric before the render (docs/awx.md, "One fabric plan"); the
# NicConfigurationTemplates read its table, when the host this task runs for has the plan.
PLAN_VAR = "__site_plan"


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)

        def table():
            plan = task_vars.get(PLAN_VAR)
            return plan.get("fabric") if isinstance(plan, dict) else None

        try:
            out = sr.render_all(raw_vars.view(task_vars["hostvars"]), args["hosts"], args["defaults"], args["pool_defaults"],
                                args["nic_config_defaults"], table=table)
        except (RenderValidationError, GpufabricError, ValueError) as exc:
            result.update(failed=True, msg=str(exc))
            return result
        result.update(out, changed=False)
        # The objects' JSON text is for the tasks that write or apply them, not for the screen: the default callback
        # shows a result at -v, and this one is about 100 MB at 10,000 nodes x 8 rails. The counts are shown by the next task.
        result["_ansible_verbose_override"] = True
        return result

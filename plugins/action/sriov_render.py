# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpufabric.roce.sriov_render: validate every node and render every SR-IOV object, in one task on the
controller, from one read of the nodes' variables (plugin_utils/_sriov_render.py)."""

from ansible.plugins.action import ActionBase
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import RenderValidationError
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _findings
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _raw_vars as raw_vars
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _sriov_render as sr

ARGUMENT_SPEC = {
    "hosts": {"type": "list", "elements": "str", "required": True},
    "defaults": {"type": "dict", "default": {}},
    "pool_defaults": {"type": "dict", "default": {}},
    "nic_config_defaults": {"type": "dict", "default": {}},
    "whole_fabric": {"type": "bool", "default": False},
    "nccl": {"type": "bool", "default": False},
}

# site.yml's validation play plans the fabric before the render (docs/awx.md, "One fabric plan"); the
# NicConfigurationTemplates read its table, and whole_fabric checks the run against it. The plan is a fact of that
# play's nodes; the controller's play has the name of one of them instead (PLAN_HOST_VAR): a copy of the plan would be
# about 15 MB more to carry at 10,000 nodes.
PLAN_VAR = "__site_plan"
PLAN_HOST_VAR = "__site_plan_host"


def plan_vars(task_vars):
    """The variables of the host that holds this run's plan (PLAN_VAR, and the roce_inventory_complete it was made with):
    this task's own, or those of the node PLAN_HOST_VAR names, or {}."""
    if PLAN_VAR in task_vars:
        return task_vars
    host = task_vars.get(PLAN_HOST_VAR)
    if host is None:
        return {}
    hostvars = task_vars["hostvars"]
    return (hostvars.raw_get(host) if hasattr(hostvars, "raw_get") else hostvars.get(host)) or {}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)

        held = plan_vars(task_vars)

        def table():
            plan = held.get(PLAN_VAR)
            return plan.get("fabric") if isinstance(plan, dict) else None

        try:
            rows = raw_vars.view(task_vars["hostvars"])
            if args["whole_fabric"]:
                sr.whole_fabric(rows, sr.str_hosts(args["hosts"]), held.get(PLAN_VAR), held.get("roce_inventory_complete"))
            out = sr.render_all(rows, args["hosts"], args["defaults"], args["pool_defaults"],
                                args["nic_config_defaults"], table=table, nccl=args["nccl"])
        except RenderValidationError as exc:
            # One line per distinct problem: a bad value in group_vars is one line naming its nodes and where it is set.
            result.update(failed=True, msg=_findings.render_errors(exc.errors, task_vars["hostvars"]))
            return result
        except (GpufabricError, ValueError) as exc:
            result.update(failed=True, msg=str(exc))
            return result
        result.update(out, changed=False)
        # The objects' JSON text is for the tasks that write or apply them, not for the screen: the default callback
        # shows a result at -v, and this one is about 100 MB at 10,000 nodes x 8 rails. The counts are shown by the next task.
        result["_ansible_verbose_override"] = True
        return result

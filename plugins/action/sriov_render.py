# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpufabric.roce.sriov_render: validate every node and render every SR-IOV object, in one task on the
controller, from what this run's fabric plan carries of each node (plugin_utils/_sriov_render.py)."""

from ansible.plugins.action import ActionBase
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, plain
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import RenderValidationError
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _findings
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _sriov_render as sr
from ansible_collections.gpufabric.roce.plugins.plugin_utils._plan_builder import Inventory

ARGUMENT_SPEC = {
    "hosts": {"type": "list", "elements": "str", "required": True},
    "defaults": {"type": "dict", "default": {}},
    "pool_defaults": {"type": "dict", "default": {}},
    "nic_config_defaults": {"type": "dict", "default": {}},
    "whole_fabric": {"type": "bool", "default": False},
    "nccl": {"type": "bool", "default": False},
}

# site.yml's validation play plans the fabric before the render (docs/awx.md, "One fabric plan"); the render reads each
# node's inputs and the fabric table from it, and whole_fabric checks the run against it. The plan is a fact of that
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


def render_source(plan, hosts, hostvars):
    """``(inputs, table)`` the render reads: from ``plan`` when it has every host of ``hosts``; else (no pod network to
    plan, the role run on its own, hosts outside roce_nodes) from the inventory, through the plan builder. A plan read
    back (roce_plan) must have every host: the host phases configured the nodes from it."""
    if fp.is_plan(plan):
        head = {"inputs": plain(plan.get("inputs")) or {"common": {}, "nodes": {}}, fp.READ_FROM: plain(plan.get(fp.READ_FROM))}
        fp.check_rendered_hosts(head, hosts)
        if fp.has_inputs(head, hosts):
            return fp.node_inputs(head, hosts), lambda: plain(plan["fabric"])
    inventory = Inventory(hostvars, hosts)
    return inventory.inputs, inventory.table


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
        hosts = sr.str_hosts(args["hosts"])
        try:
            if args["whole_fabric"]:
                sr.whole_fabric(hosts, held.get(PLAN_VAR), held.get("roce_inventory_complete"))
            inputs, table = render_source(held.get(PLAN_VAR), hosts, task_vars["hostvars"])
            out = sr.render_all(inputs, hosts, args["defaults"], args["pool_defaults"],
                                args["nic_config_defaults"], table=table, nccl=args["nccl"])
        except RenderValidationError as exc:
            # One line per distinct problem: a bad value in group_vars is one line naming its nodes and where it is set.
            # The inventory is read here only to say which file set a value, not for the value itself (the plan's).
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

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpufabric.roce.k8s_tools: check, before the first change, what the Kubernetes phases need."""

from ansible.module_utils.common.parameters import remove_values
from ansible.plugins.action import ActionBase
from ansible.plugins.loader import module_loader
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.tools import (
    client_problem,
    collection_problem,
    helm_problem,
    kubeconfig_desc,
    secret_strings,
)

ARGUMENT_SPEC = {
    "cluster": {"type": "bool", "default": True},
    "helm": {"type": "bool", "default": False},
    "helm_binary": {"type": "str", "default": ""},
    "kubeconfig": {"type": "raw", "no_log": True},
    "context": {"type": "str"},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        host = (task_vars or {}).get("inventory_hostname", "?")
        checked, problems = [], []
        found = module_loader.find_plugin_with_context("kubernetes.core.k8s_info").resolved
        problem = collection_problem(found)
        if problem:
            problems.append(problem)
        elif args["cluster"]:
            checked.append("kubernetes client and cluster access")
            probe = {"api_version": "v1", "kind": "Namespace", "name": "default"}
            probe.update({k: args[k] for k in ("kubeconfig", "context") if args.get(k)})
            res = self._execute_module(module_name="kubernetes.core.k8s_info", module_args=probe, task_vars=task_vars)
            tvars = task_vars or {}
            interpreter = tvars.get("ansible_python_interpreter") or (tvars.get("ansible_facts") or {}).get("discovered_interpreter_python")
            problem = client_problem(host, res, kubeconfig_desc(args.get("kubeconfig")), interpreter)
            if problem:
                problems.append(problem)
        if args["helm"]:
            binary = args["helm_binary"] or "helm"
            checked.append("helm")
            res = self._execute_module(module_name="ansible.legacy.command", module_args={"argv": [binary, "version", "--short"]}, task_vars=task_vars)
            problem = helm_problem(host, binary, res)
            if problem:
                problems.append(problem)
        result.update(changed=False, checked=checked, problems=problems)
        if problems:
            result.update(failed=True, msg="The Kubernetes phases cannot run; nothing has changed yet:\n  - " + "\n  - ".join(problems))
        else:
            result["msg"] = "ok: " + ", ".join(checked) if checked else "nothing to check"
        # The client's own messages may quote what it was given: every string of the kubeconfig is masked.
        secrets = {s for s in secret_strings(args.get("kubeconfig")) if len(s) >= 8}
        return remove_values(result, secrets) if secrets else result

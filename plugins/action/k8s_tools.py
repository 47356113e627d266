# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpufabric.roce.k8s_tools: check, before the first change, what the Kubernetes phases need."""

import json

from ansible.plugins.action import ActionBase
from ansible.plugins.loader import module_loader
from ansible_collections.gpufabric.roce.plugins.module_utils._common.secrets import keep_secrets_out
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.tools import (
    KUBECONFIG_OPTION,
    client_problem,
    collection_problem,
    helm_problem,
    kubeconfig_desc,
    kubeconfig_secrets,
)

ARGUMENT_SPEC = {
    "cluster": {"type": "bool", "default": True},
    "helm": {"type": "bool", "default": False},
    "helm_binary": {"type": "str", "default": ""},
    "kubeconfig": KUBECONFIG_OPTION,
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
            res = self._probe(probe, task_vars)
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
        # The client's own messages may quote what it was given: the kubeconfig's credentials are kept out.
        return keep_secrets_out(result, kubeconfig_secrets(args.get("kubeconfig")))

    def _probe(self, probe, task_vars):
        """kubernetes.core.k8s_info's read of the probe. A kubeconfig mapping goes to it as the path of a file in the
        task's private temporary directory (removed here), as the roles give theirs: its kubeconfig option is no_log, which
        on ansible-core 2.22 registers every string of a mapping (v1, Config, user names) as a secret for the whole run."""
        if not isinstance(probe.get("kubeconfig"), dict):
            return self._execute_module(module_name="kubernetes.core.k8s_info", module_args=probe, task_vars=task_vars)
        tmpdir = self._make_tmp_path()
        try:
            path = self._connection._shell.join_path(tmpdir, "kubeconfig")
            self._transfer_data(path, json.dumps(probe["kubeconfig"]))
            self._fixup_perms2((tmpdir, path))
            return self._execute_module(module_name="kubernetes.core.k8s_info", module_args=dict(probe, kubeconfig=path), task_vars=task_vars)
        finally:
            self._remove_tmp_path(tmpdir, force=True)

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpufabric.roce.rollout_wait: poll the cluster with one line of progress per poll."""

import time

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible_collections.gpufabric.roce.plugins.module_utils._common.secrets import keep_secrets_out
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.operator import chart_has
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.tools import KUBECONFIG_OPTION, kubeconfig_secrets
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.wait import judge, reads_for

display = Display()

ARGUMENT_SPEC = {
    "check": {"type": "str", "required": True, "choices": ["nic_cluster_policy", "sriov_sync", "sriov_drain", "nic_config"]},
    "namespace": {"type": "str", "required": True},
    "expected": {"type": "list", "elements": "dict", "default": []},
    "timeout": {"type": "int", "default": 900},
    "interval": {"type": "int", "default": 10},
    "kubeconfig": KUBECONFIG_OPTION,
    "context": {"type": "str"},
    "chart_version": {"type": "str"},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(
            argument_spec=ARGUMENT_SPEC,
            required_if=[("check", "sriov_sync", ("expected",)), ("check", "sriov_drain", ("expected",)), ("check", "nic_config", ("expected",))],
        )
        if args["timeout"] < 1 or args["interval"] < 1:
            result.update(failed=True, msg="timeout and interval must be positive whole seconds (got %s, %s)" % (args["timeout"], args["interval"]))
            return result
        if self._task.check_mode:
            # Check mode applied nothing, so there is nothing to converge to: ok without a poll. Not skipped=True, which
            # ansible-core 2.22 deprecates returning from an action (a skip is the task's when, not the plugin's).
            result.update(changed=False, polls=0, elapsed=0, problems=[], msg="check mode: nothing was applied, so nothing to wait for")
            return result
        # A read's error (shown on every poll, and in the result) may quote the kubeconfig.
        return keep_secrets_out(self._poll(result, args, task_vars), kubeconfig_secrets(args.get("kubeconfig")))

    def _poll(self, result, args, task_vars):
        check, expected = args["check"], args["expected"]
        conditions = chart_has(args["chart_version"], "conditions") if args.get("chart_version") else None
        auth = {k: args[k] for k in ("kubeconfig", "context") if args.get(k)}
        start = time.monotonic()
        polls, judged = 0, False
        while True:
            polls += 1
            reads = reads_for(check, args["namespace"], expected, first=not judged)
            resources, error = self._read(reads, auth, task_vars)
            elapsed = int(time.monotonic() - start)
            if error:
                # A kind whose CRD the chart has not installed yet, or a brief API outage: keep polling.
                summary, verdict = "read failed: %s" % error, None
            else:
                verdict, judged = judge(check, resources, expected, conditions), True
                summary = verdict.summary
            line = "%s: poll %d, %ds of %ds: %s" % (check, polls, elapsed, args["timeout"], summary)
            display.display(keep_secrets_out(line, kubeconfig_secrets(args.get("kubeconfig"))))
            if verdict is not None and verdict.failed:
                result.update(failed=True, polls=polls, elapsed=elapsed, problems=verdict.failed, msg="%s failed: %s" % (check, "; ".join(verdict.failed)))
                return result
            if verdict is not None and verdict.done:
                result.update(changed=False, polls=polls, elapsed=elapsed, problems=[], msg="%s: %s" % (check, summary))
                return result
            if elapsed + args["interval"] > args["timeout"]:
                problems = verdict.pending if verdict is not None else [summary]
                result.update(
                    failed=True,
                    polls=polls,
                    elapsed=elapsed,
                    problems=problems,
                    msg="%s not reached after %ds: %s" % (check, elapsed, "; ".join(problems)),
                )
                return result
            time.sleep(args["interval"])

    def _read(self, reads, auth, task_vars):
        """Every read of one poll in one module run ({name: objects}), or the error that stopped it."""
        queries = [dict(query, id=name) for name, query in reads.items()]
        res = self._execute_module(module_name="gpufabric.roce.k8s_info_many", module_args=dict(auth, queries=queries), task_vars=task_vars)
        if res.get("failed"):
            return {}, res.get("msg") or "gpufabric.roce.k8s_info_many failed"
        answers = res.get("answers") or {}
        return {name: (answers.get(name) or {}).get("resources") or [] for name in reads}, None

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpufabric.roce.k8s_apply: apply many objects in one kubernetes.core.k8s run and show
each changed object's diff. With a list of definitions kubernetes.core.k8s nests the diffs under
result.results, where --diff does not show them; a loop would cost one module start per object."""

from ansible.plugins.action import ActionBase
from ansible_collections.gpufabric.roce.plugins.module_utils._common.secrets import keep_secrets_out
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.fabric import with_labels
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.tools import KUBECONFIG_OPTION, kubeconfig_secrets

ARGUMENT_SPEC = {
    "definition": {"type": "list", "elements": "dict", "required": True},
    "namespace": {"type": "str"},
    "kubeconfig": KUBECONFIG_OPTION,
    "context": {"type": "str"},
    "labels": {"type": "dict", "default": {}},
}


# Metadata the API server sets (and changes on every write): left out so that a diff shows only what the run changes.
_NOISE = ("managedFields", "resourceVersion", "generation", "uid", "creationTimestamp")
# kubernetes.core.k8s's copy of the whole applied object, in both before and after: the diff of the object itself says it.
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _meaningful(obj):
    """An object as a diff shows it: without the server's metadata and its status (the operators', not ours)."""
    if not isinstance(obj, dict):
        return obj or {}
    out = {k: v for k, v in obj.items() if k != "status"}
    if isinstance(obj.get("metadata"), dict):
        meta = {k: v for k, v in obj["metadata"].items() if k not in _NOISE}
        if isinstance(meta.get("annotations"), dict) and _LAST_APPLIED in meta["annotations"]:
            meta["annotations"] = {k: v for k, v in meta["annotations"].items() if k != _LAST_APPLIED}
            if not meta["annotations"]:
                del meta["annotations"]
        out["metadata"] = meta
        if not meta:
            del out["metadata"]
    return out


def object_diffs(items):
    """Per changed object: its name and the before/after of kubernetes.core.k8s, as the diff callback shows them."""
    names, diffs = [], []
    for item in items:
        if not item.get("changed"):
            continue
        obj = item.get("result") or {}
        meta = obj.get("metadata") or {}
        name = "%s/%s" % (obj.get("kind", "?"), meta.get("name", "?"))
        names.append(name)
        diff = item.get("diff") or {}
        before = diff.get("before") if diff else {}
        after = diff.get("after") if diff else obj
        diffs.append({"before_header": name, "after_header": name, "before": _meaningful(before), "after": _meaningful(after)})
    return names, diffs


def _api(obj):
    return (obj.get("apiVersion"), obj.get("kind"))


def pending_diffs(pending):
    """The objects whose API the cluster does not serve yet, as check mode reports them (created once their CRD is installed)."""
    names, diffs = [], []
    for obj in pending:
        name = "%s/%s" % (obj.get("kind", "?"), (obj.get("metadata") or {}).get("name", "?"))
        names.append(name)
        header = "%s (created once the chart is installed: %s %s is not served yet)" % (name, obj.get("apiVersion"), obj.get("kind"))
        diffs.append({"before_header": header, "after_header": header, "before": {}, "after": obj})
    return names, diffs


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        # A failure of kubernetes.core.k8s is returned as it is, and the client's messages may quote the kubeconfig.
        return keep_secrets_out(self._apply(result, args, task_vars), kubeconfig_secrets(args.get("kubeconfig")))

    def _apply(self, result, args, task_vars):
        if not args["definition"]:
            result.update(changed=False, changed_objects=[], pending_objects=[], msg="nothing to apply")
            return result
        access = {k: args[k] for k in ("kubeconfig", "context") if args.get(k) is not None}
        definitions = with_labels(args["definition"], args["labels"])
        pending = []
        if self._task.check_mode:
            # A dry run before the first install: the chart brings the CRDs. kubernetes.core.k8s would fail on
            # "Failed to find exact match"; report those objects as created once the chart is installed instead.
            missing, failed = self._unserved_apis({_api(o) for o in definitions}, access, task_vars)
            if failed:
                return dict(result, **failed)
            pending = [o for o in definitions if _api(o) in missing]
            definitions = [o for o in definitions if _api(o) not in missing]
        names, diffs, items, changed = [], [], [], False
        if definitions:
            module_args = dict(access, definition=definitions, state="present", apply=True)
            if args.get("namespace") is not None:
                module_args["namespace"] = args["namespace"]
            res = self._execute_module(module_name="kubernetes.core.k8s", module_args=module_args, task_vars=task_vars)
            if res.get("failed"):
                return dict(result, **res)
            inner = res.get("result") or {}
            items = inner.get("results", [res])
            names, diffs = object_diffs(items)
            changed = bool(res.get("changed"))
        pending_names, pending_diff = pending_diffs(pending)
        result.update(changed=changed or bool(pending), changed_objects=names + pending_names, applied=len(items), pending_objects=pending_names)
        diffs += pending_diff
        if self._task.diff and diffs:
            result["diff"] = diffs
        return result

    def _unserved_apis(self, apis, access, task_vars):
        """(apiVersion, kind) pairs of ``apis`` the cluster does not serve: every kind in one module run (a cheap read of each,
        with a selector nothing matches)."""
        probes = sorted(apis, key=str)
        queries = [{"id": str(i), "api_version": api_version, "kind": kind, "label_selectors": ["gpufabric.roce/api-probe=none"]}
                   for i, (api_version, kind) in enumerate(probes)]
        res = self._execute_module(module_name="gpufabric.roce.k8s_info_many", module_args=dict(access, queries=queries), task_vars=task_vars)
        if res.get("failed"):
            return set(), res
        answers = res.get("answers") or {}
        return {api for i, api in enumerate(probes) if not (answers.get(str(i)) or {}).get("api_found", True)}, None

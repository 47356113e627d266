# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpufabric.roce.k8s_apply: apply many objects in one kubernetes.core.k8s run and show
each changed object's diff. With a list of definitions kubernetes.core.k8s nests the diffs under
result.results, where --diff does not show them; a loop would cost one module start per object."""

from ansible.plugins.action import ActionBase

ARGUMENT_SPEC = {
    "definition": {"type": "list", "elements": "dict", "required": True},
    "namespace": {"type": "str"},
    "kubeconfig": {"type": "raw", "no_log": True},
    "context": {"type": "str"},
}


# Server bookkeeping that changes on every write: left out so that a diff shows only real drift.
_NOISE = ("managedFields", "resourceVersion", "generation")


def _meaningful(obj):
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        return obj or {}
    out = dict(obj)
    out["metadata"] = {k: v for k, v in obj["metadata"].items() if k not in _NOISE}
    if not out["metadata"]:
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


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        if not args["definition"]:
            result.update(changed=False, changed_objects=[], msg="nothing to apply")
            return result
        module_args = {k: v for k, v in args.items() if v is not None}
        module_args.update(state="present", apply=True)
        res = self._execute_module(module_name="kubernetes.core.k8s", module_args=module_args, task_vars=task_vars)
        if res.get("failed"):
            return dict(result, **res)
        inner = res.get("result") or {}
        items = inner.get("results", [res])
        names, diffs = object_diffs(items)
        result.update(changed=bool(res.get("changed")), changed_objects=names, applied=len(items))
        if self._task.diff and diffs:
            result["diff"] = diffs
        return result

"""docs/awx-project/awx/sliced-rollout.yml, the AWX configuration of docs/awx.md section 8: every option it gives an
awx.awx module is one of that module's (its DOCUMENTATION), the workflow chains plan -> sliced host phases -> cluster,
and only the host phases are sliced and none but them lacks the declaration of a whole inventory."""

import importlib
import os

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(REPO, "docs", "awx-project", "awx", "sliced-rollout.yml")


def _tasks():
    with open(CONFIG) as fh:
        return yaml.safe_load(fh)[0]["tasks"]


def _options(module):
    try:
        mod = importlib.import_module("ansible_collections.awx.awx.plugins.modules.%s" % module)
    except ImportError:
        pytest.skip("awx.awx is not installed (it comes with the ansible package)")
    return yaml.safe_load(mod.DOCUMENTATION)["options"]


def test_every_option_is_the_modules():
    for task in _tasks():
        module = next(k for k in task if k.startswith("awx.awx."))
        options = _options(module.split(".")[-1])
        assert set(task[module]) <= set(options), (task["name"], set(task[module]) - set(options))


def test_the_workflow_plans_unsliced_then_slices_the_host_phases_only():
    templates = {t["awx.awx.job_template"]["name"]: t["awx.awx.job_template"] for t in _tasks() if "awx.awx.job_template" in t}
    sliced = [name for name, jt in templates.items() if jt["job_slice_count"] != 1]
    assert sliced == ["RoCE 2 host phases"]
    for name, jt in templates.items():
        # A sliced job must never declare its inventory whole; the others do (they see every node).
        assert jt.get("extra_vars", {}).get("roce_inventory_complete", False) is (name not in sliced), name
    assert templates["RoCE 1 plan"]["job_tags"] == "never" and templates["RoCE 1 plan"]["extra_vars"]["roce_plan_artifact"] is True
    wf = next(t["awx.awx.workflow_job_template"] for t in _tasks() if "awx.awx.workflow_job_template" in t)
    chain = {n["identifier"]: [s["identifier"] for s in n.get("related", {}).get("success_nodes", [])] for n in wf["workflow_nodes"]}
    assert chain == {"plan": ["hosts"], "hosts": ["cluster"], "cluster": []}

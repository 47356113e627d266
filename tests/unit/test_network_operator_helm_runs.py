# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubernetes.core.helm runs only when the plan says the release would change (issue 42, item 10): without the helm-diff
plugin every run on an installed release warned "Install helm diff >= 3.4.1 for better results", though the plan
(network_operator_release) had already compared the chart, the release's status and its values."""

import pathlib

import yaml

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import helm_release as hr

REPO = pathlib.Path(__file__).resolve().parents[2]
TASKS = REPO / "roles" / "network_operator" / "tasks" / "apply.yml"


def _helm_block():
    tasks = yaml.safe_load(TASKS.read_text())
    blocks = [t for t in tasks if any("kubernetes.core.helm" in b for b in t.get("block") or [])]
    assert len(blocks) == 1
    return blocks[0]


def test_helm_runs_only_when_the_plan_says_the_release_would_change():
    when = " ".join(_helm_block()["when"].split())
    assert "not ansible_check_mode" in when and "__network_operator_release.would_change" in when
    # The plan is registered under that name by the task before.
    tasks = yaml.safe_load(TASKS.read_text())
    plan = [t for t in tasks if "gpufabric.roce.network_operator_release" in t]
    assert plan and plan[0]["register"] == "__network_operator_release"


def test_the_plan_says_no_change_only_for_the_same_chart_deployed_with_the_same_values():
    rel = {"name": "network-operator", "namespace": "nvidia-network-operator", "chart": "network-operator-26.4.1", "revision": 3,
           "status": "deployed"}
    values = {"nfd": {"enabled": True}}
    assert not hr.plan(rel, values, values, "network-operator", "26.4.1")["changed"]
    assert hr.plan(rel, values, values, "network-operator", "26.7.0")["changed"]  # a chart upgrade
    assert hr.plan(rel, values, {"nfd": {"enabled": False}}, "network-operator", "26.4.1")["changed"]  # a value
    assert hr.plan(dict(rel, status="failed"), values, values, "network-operator", "26.4.1")["changed"]  # a failed release
    assert hr.plan(None, {}, values, "network-operator", "26.4.1")["changed"]  # not installed

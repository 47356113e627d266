# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml through ansible-runner, the engine AWX/Tower job templates use.

A job template hands ansible-runner a private data dir (inventory, env/extravars,
env/envvars) and a playbook. This test builds one the same way, from the example inventory,
and runs the Kubernetes phases in render mode (no cluster exists here): the validation
play, the operator and the SR-IOV phases. It checks the run's status, its events, and the
manifests written.
"""

import os
import shutil

import ansible_runner
import pytest
import yaml
from _runner import REPO, collection_env, venv_path


@pytest.fixture
def job(tmp_path):
    pdd = tmp_path / "pdd"
    (pdd / "env").mkdir(parents=True)
    shutil.copytree(os.path.join(REPO, "inventories", "example"), pdd / "inventory")
    render_dir = tmp_path / "manifests"
    # What a job template's survey/extra vars would carry.
    (pdd / "env" / "extravars").write_text(yaml.safe_dump({"roce_k8s_mode": "render", "roce_render_dir": str(render_dir)}))
    (pdd / "env" / "envvars").write_text(
        # The ansible-playbook of the interpreter running the tests (the venv) comes first, whatever PATH says.
        yaml.safe_dump(dict(collection_env(), PATH=venv_path()))
    )
    return pdd, render_dir


def test_bad_extravars_fail_the_job_before_anything_is_written(job):
    pdd, render_dir = job
    # A survey answer out of range must stop the job with a message naming it.
    (pdd / "env" / "extravars").write_text(
        yaml.safe_dump({"roce_k8s_mode": "render", "roce_render_dir": str(render_dir), "roce_vlan_id": 5000})
    )
    result = ansible_runner.run(
        private_data_dir=str(pdd),
        playbook=os.path.join(REPO, "playbooks", "site.yml"),
        tags="operator,sriov",
        quiet=True,
    )
    assert result.status == "failed"
    msgs = " ".join(
        str(e["event_data"].get("res", {}).get("msg", "")) for e in result.events if e.get("event") == "runner_on_failed"
    )
    assert "roce_vlan_id" in msgs and "5000" in msgs, msgs
    assert not render_dir.exists() or not any(render_dir.rglob("sriov-networks*.yaml"))


def test_webhook_rule_violation_stops_site_yml_before_any_node_is_touched(job):
    pdd, render_dir = job
    # trust must be the string "on"/"off"; a YAML boolean is what the operator's webhook rejects.
    (pdd / "env" / "extravars").write_text(
        yaml.safe_dump({"roce_k8s_mode": "render", "roce_render_dir": str(render_dir), "sriov_networks_trust": True})
    )
    result = ansible_runner.run(private_data_dir=str(pdd), playbook=os.path.join(REPO, "playbooks", "site.yml"), quiet=True)
    assert result.status == "failed"
    plays = [e["event_data"]["play"] for e in result.events if e.get("event") == "playbook_on_play_start"]
    # Only the validation plays ran: no preflight, no host networking, no operator.
    assert plays and all(p.startswith("Validate") for p in plays), plays
    msgs = " ".join(
        str(e["event_data"].get("res", {}).get("msg", "")) for e in result.events if e.get("event") == "runner_on_failed"
    )
    # one mistake in group_vars, one message naming both nodes (issue 42, item 8)
    assert "node1 (and 1 other node: node2): sriov_networks_trust=true" in msgs and "Fix: quote it" in msgs, msgs


def _artifacts(result):
    """What AWX keeps as the job's artifacts: the set_stats data of the playbook_on_stats event."""
    stats = [e for e in result.events if e.get("event") == "playbook_on_stats"]
    assert stats, "no playbook_on_stats event"
    return stats[-1]["event_data"].get("artifact_data") or {}


def test_site_yml_runs_under_ansible_runner_and_its_summary_reaches_the_job_artifacts(job):
    pdd, render_dir = job
    kwargs = dict(private_data_dir=str(pdd), playbook=os.path.join(REPO, "playbooks", "site.yml"), tags="operator,sriov", quiet=True)
    first = ansible_runner.run(**kwargs)
    failed = [e for e in first.events if e.get("event") == "runner_on_failed"]
    assert first.status == "successful", "ansible-runner status %s rc %s, failures: %s" % (
        first.status, first.rc, [f["event_data"].get("res", {}).get("msg") for f in failed])
    assert first.rc == 0
    assert first.stats["failures"] == {} and first.stats["dark"] == {}
    # Both Kubernetes phases ran on the controller.
    plays = [e["event_data"]["play"] for e in first.events if e.get("event") == "playbook_on_play_start"]
    assert any("Phase 3" in p for p in plays) and any("Phase 4" in p for p in plays)
    docs = []
    for root, _dirs, files in os.walk(render_dir):
        for name in files:
            if name.endswith((".yaml", ".yml")):
                with open(os.path.join(root, name)) as f:
                    docs += [d for d in yaml.safe_load_all(f) if d]
    kinds = sorted({d.get("kind") for d in docs if isinstance(d, dict) and "kind" in d})
    assert {"NicClusterPolicy", "SriovNetworkNodePolicy", "SriovNetwork"} <= set(kinds), kinds
    policies = [d for d in docs if d.get("kind") == "SriovNetworkNodePolicy"]
    assert sorted(p["spec"]["nodeSelector"]["kubernetes.io/hostname"] for p in policies) == ["node1", "node2"]

    # What AWX keeps of the run.
    summary = _artifacts(first)["gpufabric_roce"]
    assert summary["check_mode"] is False
    assert summary["manifests"] == {
        "network_operator": str(render_dir / "network-operator"),
        "sriov_networks": str(render_dir / "sriov-networks"),
    }
    assert sorted(os.path.basename(p) for p in summary["changes"]["network_operator"]) == [
        "application.yaml", "helm-chart.yaml", "helm-release.yaml", "helm-values.yaml", "kustomization.yaml", "kustomization.yaml",
        "kustomization.yaml", "kustomization.yaml", "kustomization.yaml", "kustomizations.yaml", "namespace.yaml", "namespace.yaml",
        "nic-cluster-policy.yaml"]
    assert sorted(os.path.basename(p) for p in summary["changes"]["sriov_networks"]) == [
        "kustomization.yaml", "nccl-configmap.yaml", "sriov-network-node-policies.yaml", "sriov-network-pool-configs.yaml", "sriov-networks.yaml"]

    # The same job in check mode against what is already rendered: no drift to report.
    again = ansible_runner.run(cmdline="--check --diff", **kwargs)
    assert again.status == "successful"
    summary = _artifacts(again)["gpufabric_roce"]
    assert summary["check_mode"] is True
    assert summary["changes"] == {"network_operator": [], "sriov_networks": []}

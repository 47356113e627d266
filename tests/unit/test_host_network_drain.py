# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_network's drain around a VF reset (issue 21): how the task files are wired. The drain itself runs on the
real control plane (tests/k8s/test_drain_host_network.py); here: the prediction uses exactly the VF change's
arguments (else it predicts another change), the drain comes before the change and the uncordon after, the drain
options the README documents are the ones passed, the defaults and the argument spec agree, and the cross-field
check refuses a drain timeout of 0 before any change."""

import pathlib

import pytest
import yaml

from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_checks import role_problems

REPO = pathlib.Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "host_network"
DRAIN_VARS = ("host_network_drain", "host_network_node_name", "host_network_drain_timeout", "host_network_drain_poll_interval",
              "host_network_drain_delete_emptydir_data", "host_network_drain_force")


def _tasks(name):
    return yaml.safe_load((ROLE / "tasks" / name).read_text())


def _vf_block():
    (block,) = _tasks("vfs.yml")
    return block


def test_the_prediction_runs_sriov_vf_in_check_mode_with_the_changes_own_arguments():
    tasks = _vf_block()["block"]
    sriov = [t for t in tasks if "gpufabric.roce.sriov_vf" in t]
    predictions = [t for t in sriov if t.get("check_mode") is True]
    changes = [t for t in sriov if "check_mode" not in t]
    # One module run takes every rail (one-rail nodes too), for the prediction as for the change.
    assert len(predictions) == 1 and len(changes) == 1
    (predict,), (change,) = predictions, changes
    assert predict["gpufabric.roce.sriov_vf"] == change["gpufabric.roce.sriov_vf"]
    assert "loop" not in predict and "loop" not in change
    assert "__host_network_drain_applies | bool" in predict["when"]


def test_drain_before_the_change_uncordon_after():
    block = _vf_block()
    assert block["when"] == "host_network_vf_mode == 'host'"
    tasks = block["block"]
    names = [t["name"] for t in tasks]
    # A kubeconfig given as content reaches the drain's cluster tasks as a private file, removed also on failure.
    private = next(i for i, t in enumerate(tasks) if t.get("ansible.builtin.include_tasks") == "kubeconfig.yml")
    (cleanup,) = block["always"]
    assert cleanup["ansible.builtin.file"] == {"path": "{{ __host_network_kubeconfig_dir.path }}", "state": "absent"}
    drain = next(i for i, t in enumerate(tasks) if t.get("ansible.builtin.include_tasks") == "drain.yml")
    assert private < drain
    uncordon = next(i for i, t in enumerate(tasks) if t.get("ansible.builtin.include_tasks") == "uncordon.yml")
    first_change = next(i for i, t in enumerate(tasks) if "gpufabric.roce.sriov_vf" in t and "check_mode" not in t)
    assert drain < first_change < uncordon == len(tasks) - 1, names
    # The reset as predicted on any rail (the module's vf_reset over its rails).
    role_vars = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())
    assert role_vars["__host_network_vf_reset"] == "{{ host_network_vf_prediction.vf_reset | default(false) }}"


def test_drain_options():
    block = next(t for t in _tasks("drain.yml") if "block" in t)
    drain = next(t for t in block["block"] if "kubernetes.core.k8s_drain" in t)
    options = drain["kubernetes.core.k8s_drain"]["delete_options"]
    assert options["ignore_daemonsets"] is True
    assert options["delete_emptydir_data"] == "{{ host_network_drain_delete_emptydir_data }}"
    assert options["force"] == "{{ host_network_drain_force }}"
    assert options["wait_timeout"] == "{{ host_network_drain_timeout }}"
    assert "disruption budget" in drain["until"]  # k8s_drain gives up at the first 429; retried until the timeout
    assert drain["delegate_to"] == "{{ host_network_drain_delegate_to }}"
    assert block["when"] == "__host_network_vf_reset | bool and not ansible_check_mode"
    assert block["rescue"][0]["ansible.builtin.fail"]["msg"]


def test_defaults_and_argument_spec_agree():
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    spec = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    for key in DRAIN_VARS:
        assert spec[key]["default"] == defaults[key], key
    assert defaults["host_network_drain"] is True and defaults["host_network_drain_force"] is False
    readme = (ROLE / "README.md").read_text()
    for key in DRAIN_VARS:
        assert "`%s`" % key in readme


HN = {"host_network_vf_mode": "host", "host_network_num_vfs": 8, "host_network_sriov_pf": "eni10np1", "host_network_vfs": [],
      "host_network_drain": True, "host_network_allow_vf_reset": True, "host_network_drain_timeout": 600,
      "host_network_drain_poll_interval": 10}


@pytest.mark.parametrize("key", ["host_network_drain_timeout", "host_network_drain_poll_interval"])
def test_a_drain_timeout_of_zero_is_refused_before_any_change(key):
    problems = role_problems("host_network", dict(HN, **{key: 0}), "node1")
    assert [(f, v) for f, v, _p, _fix in problems] == [(key, 0)]
    assert "host_network_drain: false" in problems[0][3]
    # Without a reset there is no drain: nothing to refuse.
    assert role_problems("host_network", dict(HN, host_network_allow_vf_reset=False, **{key: 0}), "node1") == []

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufabric.roce.render (playbooks/render.yml) validates as site.yml does, with the same task files, before anything is
written; writes the whole tree all or nothing (every write of the roles is staged, the playbook swaps them in at once);
and refuses a run without the k8s_controller host, which would render nothing. The refusal's condition and message are
templated here as Ansible templates them; tests/integration/test_render_only.py runs the playbook."""

import glob
import os

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def _load(*path):
    with open(os.path.join(REPO, *path)) as fh:
        return yaml.safe_load(fh)


def _tasks(data):
    for entry in data or []:
        yield entry
        for key in ("block", "rescue", "always"):
            yield from _tasks(entry.get(key))


def _imports(tasks):
    return [t["ansible.builtin.import_tasks"] for t in _tasks(tasks) if "ansible.builtin.import_tasks" in t]


def test_render_and_site_import_the_same_validation():
    site, render = _load("playbooks", "site.yml"), _load("playbooks", "render.yml")
    assert "tasks/validate_fabric.yml" in _imports(site[0]["tasks"])
    assert _imports(site[1]["tasks"]) == ["tasks/validate_k8s.yml"]
    play = render[1]
    assert play["hosts"] == "k8s_controller"
    # The nodes' half first (the SR-IOV render reads the fabric plan it makes), then the controller's half.
    assert _imports(play["tasks"]) == ["tasks/validate_fabric.yml", "tasks/validate_k8s.yml"]
    # Every node of the group, whatever --limit says; site.yml's first play checks its own hosts.
    assert play["vars"]["__roce_run_nodes"] == "{{ groups['roce_nodes'] | default([]) }}"
    assert [t.get("vars") for t in site[0]["tasks"] if t.get("ansible.builtin.import_tasks") == "tasks/validate_fabric.yml"] == [
        {"__roce_run_nodes": "{{ ansible_play_hosts_all }}"}]
    # The tree is every node's: the run must see the whole fabric, as site.yml's sriov phase.
    assert play["vars"]["__sriov_networks_whole_fabric"] is True


def test_the_shared_validation_is_not_copied_into_the_playbooks():
    # What decides the verdict lives in the task files only: the host roles' check, the plan, the plan read back, the render.
    for playbook in ("site.yml", "render.yml"):
        with open(os.path.join(REPO, "playbooks", playbook)) as fh:
            text = fh.read()
        for what in ("- gpufabric.roce.preflight", "gpufabric.roce.fabric_plan(", "gpufabric.roce.fabric_plan_read(", "tasks_from: render.yml\n"):
            assert what not in text.replace("include_role:\n        name: gpufabric.roce.sriov_networks\n        tasks_from: render.yml\n", ""), (
                playbook, what)


def test_nothing_is_written_before_the_validation_and_the_tree_is_swapped_in_at_once():
    tasks = _load("playbooks", "render.yml")[1]["tasks"]
    [write] = [i for i, t in enumerate(tasks) if "block" in t]
    assert write == len(tasks) - 1 and all("ansible.builtin.import_tasks" in t or "ansible.builtin.assert" in t for t in tasks[:write])
    block, always = tasks[write]["block"], tasks[write]["always"]
    assert block[0]["gpufabric.roce.manifest_files"] == {"discard": "{{ __render_dir }}"}
    assert [t["ansible.builtin.import_role"]["name"] for t in block[1:3]] == ["gpufabric.roce.network_operator", "gpufabric.roce.sriov_networks"]
    # the swap is the block's last write; only the run's summary (a debug) follows it
    assert block[-2]["gpufabric.roce.manifest_files"] == {"commit": "{{ __render_dir }}"}
    assert list(block[-1]) == ["name", "ansible.builtin.debug"] and "__render_committed" in block[-1]["ansible.builtin.debug"]["msg"]
    assert [t["gpufabric.roce.manifest_files"] for t in always] == [{"discard": "{{ __render_dir }}"}]
    assert _load("playbooks", "render.yml")[1]["vars"]["__roce_render_transaction"] is True


@pytest.mark.parametrize("role", ["network_operator", "sriov_networks"])
def test_every_write_of_the_roles_is_staged_and_committed_only_by_its_own_transaction(role):
    render_dir = "{{ __%s_render_dir }}" % role
    own = "__%s_own_transaction | bool" % role
    writes, others = [], []
    for path in glob.glob(os.path.join(REPO, "roles", role, "tasks", "*.yml")):
        for task in _tasks(_load(path)):
            args = task.get("gpufabric.roce.manifest_files")
            if args is None:
                continue
            (writes if "dest" in args else others).append((os.path.basename(path), task, args))
    assert writes and others
    for _path, task, args in writes:
        assert args["stage"] == render_dir, task["name"]
    for _path, task, args in others:
        assert list(args) in (["commit"], ["discard"]) and list(args.values()) == [render_dir], task["name"]
        assert task["when"] == own, task["name"]
    assert _load("roles", role, "tasks", "write.yml")[-1]["vars"] == {
        "__%s_own_transaction" % role: "{{ not (__roce_render_transaction | default(false)) }}"}


def _refusal():
    play = _load("playbooks", "render.yml")[0]
    assert play["hosts"] == "k8s_controller:all" and play["tags"] == ["always"]
    [task] = play["tasks"]
    assert task["run_once"] is True and "ansible.builtin.fail" in task
    return task


def _template(expr, **variables):
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(expr))


INVENTORY = {"all": ["node1", "node2", "localhost"], "roce_nodes": ["node1", "node2"], "k8s_controller": ["localhost"]}


@pytest.mark.parametrize("case", ["controller-in-the-run", "limit-to-a-node", "no-group", "empty-group"])
def test_a_run_without_the_controller_is_refused_naming_the_host_the_variable_the_value_and_a_fix(case):
    task = _refusal()
    groups = dict(INVENTORY)
    host, extra = "node1", {"ansible_limit": "node1"}
    if case == "controller-in-the-run":
        host, extra = "localhost", {}
    elif case == "no-group":
        del groups["k8s_controller"]
        extra = {}
    elif case == "empty-group":
        groups["k8s_controller"] = []
        extra = {}
    variables = dict(groups=groups, inventory_hostname=host, **extra)
    refused = _template("{{ %s }}" % task["when"], **variables)
    assert refused is (case != "controller-in-the-run")
    if not refused:
        return
    variables.update((k, trust_as_template(v)) for k, v in task["vars"].items())
    msg = " ".join(_template(task["ansible.builtin.fail"]["msg"], **variables).split())
    if case == "limit-to-a-node":
        assert msg == ('node1: --limit "node1": leaves out the k8s_controller host (localhost), on which gpufabric.roce.render renders '
                       "the tree; this run would render nothing. Nothing was written. Fix: run without --limit (the render reads "
                       "every node from the inventory, whatever the limit), or add the controller to it (--limit localhost).")
    else:
        value = "null" if case == "no-group" else "[]"
        assert msg == ("node1: k8s_controller=%s: the inventory has no k8s_controller host, on which gpufabric.roce.render renders the "
                       "tree; this run would render nothing. Nothing was written. Fix: add the group with the host that renders, "
                       "e.g. k8s_controller: {hosts: {localhost: {ansible_connection: local}}} in hosts.yml (as inventories/example "
                       "has it)." % value)

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml under AWX job slicing, through ansible-runner with private data dirs built as AWX builds them
(_awx_slice.py: the inventory imported with ansible-inventory --list --export, cut by get_script_data's
rules, written as AWX's inventory script; AWX's meta extra vars).

The host phase (host_network, --check) runs on the nodes with the local connection (an extra var: the
test's stand-in for SSH). Their PFs do not exist here, so vlan_gateway reads netlink, finds no PF and
fails, and its failed result carries the arguments it was called with (every rail in one run): what vlan_gateway
would be asked to do on a real node, compared between runs.

- A slice without the plan sees only its own nodes (node1 of inventories/example alone would get routes []) and
  must not remove a route: vlan_gateway is called with purge_routes=false (tests/unit: that keeps them).
- A slice that reads the plan written by an unsliced planning job gives every node the same gateway
  arguments as the unsliced run, byte for byte, routes purged.
"""

import importlib.util
import json
import os
import sys

import ansible_runner
import pytest
import yaml
from _awx_slice import import_inventory, private_data_dir, script_data
from _runner import REPO, SITE, copy_inventory, site

GATEWAY_TASK = "VLAN gateway of every rail"
# The roles pass the routes in range form (vlan_gateway's routes[].count); compared here as the routes they stand for.
_spec = importlib.util.spec_from_file_location("route_ranges", os.path.join(REPO, "plugins", "module_utils", "_common", "route_ranges.py"))
route_ranges = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(route_ranges)


def plain_routes(call):
    return [r for entry in call["routes"] for r in route_ranges.expand(entry)]


STAND_IN = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}


def gateway_calls(result):
    """{host: [module_args of vlan_gateway, per rail]} from the failed gateway tasks of the run."""
    calls = {}
    for e in result.events:
        if e.get("event") != "runner_on_failed" or not e["event_data"].get("task", "").startswith(GATEWAY_TASK):
            continue
        args = e["event_data"]["res"]["invocation"]["module_args"]
        shared = {k: v for k, v in args.items() if k != "rails"}
        calls[e["event_data"]["host"]] = [dict(shared, **rail) for rail in args["rails"]]
    return calls


def run_job(pdd, **kw):
    result = ansible_runner.run(private_data_dir=str(pdd), playbook=SITE, quiet=True, **kw)
    assert "Traceback" not in result.stdout.read()
    return result


def multirail_inventory(path, nodes=10, rails=2):
    """inventories/example's group_vars with the first ``rails`` rails of inventories/example-multirail."""
    os.makedirs(os.path.join(path, "group_vars"))
    os.makedirs(os.path.join(path, "host_vars"))
    with open(os.path.join(REPO, "inventories", "example-multirail", "group_vars", "roce_nodes.yml")) as fh:
        plan = [line for line in fh if line.startswith("  - {name: rail")]
    with open(os.path.join(path, "group_vars", "roce_nodes.yml"), "w") as fh:
        fh.write("---\nroce_vf_mode: operator\nroce_rails:\n" + "".join(plan[:rails]))
    names = ["gpu-%04d" % i for i in range(1, nodes + 1)]
    for i, name in enumerate(names):
        with open(os.path.join(path, "host_vars", name + ".yml"), "w") as fh:
            fh.write("---\nroce_node_name: %s\nroce_node_index: %d\n" % (name, i))
    hosts = {"all": {"children": {"roce_nodes": {"hosts": dict.fromkeys(names)},
                                  "k8s_controller": {"hosts": {"localhost": {"ansible_connection": "local"}}}}}}
    with open(os.path.join(path, "hosts.yml"), "w") as fh:
        fh.write(yaml.safe_dump(hosts))
    return path


def rollout(tmp_path, inventory, slices):
    """The reference (unsliced), the planning job, the slices reading the plan, the slices without it."""
    exported = import_inventory(inventory)
    base = {"roce_k8s_mode": "render", "roce_render_dir": str(tmp_path / "render")}
    # An unsliced AWX job declares its inventory whole; without that, an AWX job plans as a possible slice.
    whole = dict(base, **STAND_IN, roce_inventory_complete=True)
    # One unsliced job is both the reference and the planning job: it writes the plan in its validation plays,
    # before its host phase (a workflow's planning job runs with --tags never; the plan is the same).
    plan_file = tmp_path / "plan.json"
    ref_pdd, _data = private_data_dir(tmp_path / "ref", exported, dict(whole, roce_plan_out=str(plan_file)))
    reference = gateway_calls(run_job(ref_pdd, tags="host_network", cmdline="--check"))
    assert plan_file.is_file()

    with_plan, without_plan, sliced_nodes = {}, {}, []
    for n in range(1, slices + 1):
        pdd, data = private_data_dir(tmp_path / ("slice%d" % n), exported, dict(base, **STAND_IN, roce_plan=str(plan_file)),
                                     slice_number=n, slice_count=slices, workflow_job_id=7)
        sliced_nodes.append(data.get("roce_nodes", {}).get("hosts", []))
        with_plan.update(gateway_calls(run_job(pdd, tags="host_network", cmdline="--check")))
        pdd, _data = private_data_dir(tmp_path / ("bare%d" % n), exported, dict(base, **STAND_IN),
                                      slice_number=n, slice_count=slices, workflow_job_id=7)
        without_plan.update(gateway_calls(run_job(pdd, tags="host_network", cmdline="--check")))
    return reference, with_plan, without_plan, sliced_nodes, exported, plan_file


# Ten nodes of two rails in three slices (uneven: 4, 3, 3). The one-rail example inventory's two-way slicing is proven on
# real nodes by molecule lab (verify.yml: the sliced drift repair), so it is not run here again (36 s of make test).
@pytest.mark.parametrize("slices,rails", [(3, 2)], ids=["10-nodes-2-rails-3-slices"])
def test_slices_read_the_plan_never_remove_routes_without_it_and_leave_the_sriov_phase_to_the_whole_fabric(tmp_path, slices, rails):
    inventory = multirail_inventory(str(tmp_path / "inv"), rails=rails)
    reference, with_plan, without_plan, sliced_nodes, exported, plan_file = rollout(tmp_path, inventory, slices)
    nodes = sorted(reference)
    # Every node was in exactly one slice, and each slice saw only its own nodes.
    assert sorted(h for s in sliced_nodes for h in s) == nodes and all(len(s) < len(nodes) for s in sliced_nodes)
    assert all(len(calls) == rails for calls in reference.values())
    assert all(c["purge_routes"] is True and len(plain_routes(c)) == len(nodes) - 1 for calls in reference.values() for c in calls)
    # Ten nodes carved from a pool in order: one range on either side of the node (one for the first and the last).
    assert all(len(c["routes"]) <= 2 for calls in reference.values() for c in calls)

    # With the plan: byte for byte the unsliced run's gateway arguments, routes purged as there.
    assert sorted(with_plan) == nodes
    for host in nodes:
        assert json.dumps(with_plan[host], sort_keys=True) == json.dumps(reference[host], sort_keys=True), host

    # Without it: each slice knows only its own nodes' subnets, so it must not remove the others' routes.
    assert sorted(without_plan) == nodes
    for host in nodes:
        for call, ref in zip(without_plan[host], reference[host]):
            assert call["purge_routes"] is False, host
            mine, theirs = plain_routes(call), plain_routes(ref)
            assert len(mine) < len(theirs)  # the defect's precondition: the slice cannot know them
            assert [r for r in mine if r not in theirs] == []

    # The SR-IOV phase runs only in a job that sees the whole fabric. The slice that holds the controller host would render
    # its share of the nodes' SR-IOV objects and prune the rest (the render directory here; the cluster in apply mode): the
    # workflow's last step, unsliced, reads the plan (the planning job's above) instead.
    sliced, step3 = tmp_path / "render-slice", tmp_path / "render-step3"
    slice_number = next(n for n in range(1, slices + 1)
                        if "localhost" in script_data(exported, n, slices).get("k8s_controller", {}).get("hosts", []))
    slice_vars = dict(STAND_IN, roce_k8s_mode="render", roce_render_dir=str(sliced), roce_plan=str(plan_file))
    pdd, data = private_data_dir(tmp_path / "slice", exported, slice_vars, slice_number=slice_number, slice_count=slices, workflow_job_id=7)
    result = run_job(pdd, tags="sriov")
    assert result.status == "failed" and not sliced.exists()
    msgs = [str(e["event_data"]["res"].get("msg", "")) for e in result.events if e.get("event") == "runner_on_failed"]
    missing = [h for h in sorted(exported["_meta"]["hostvars"]) if h.startswith("gpu-") and h not in data["roce_nodes"]["hosts"]]
    refusal = '%s: roce_plan="%s": has %d node(s) this run does not render: %s' % (missing[0], plan_file, len(missing), ", ".join(missing))
    assert any(m.startswith(refusal) for m in msgs), msgs
    # The workflow's last step: unsliced, the plan as its artifact (a mapping, not a file).
    step3_vars = dict(STAND_IN, roce_k8s_mode="render", roce_render_dir=str(step3), roce_plan=json.loads(plan_file.read_text()))
    pdd, _data = private_data_dir(tmp_path / "step3", exported, step3_vars, job_id=101, workflow_job_id=7)
    assert run_job(pdd, tags="sriov").status == "successful"
    policies = list(yaml.safe_load_all(next(step3.rglob("sriov-network-node-policies.yaml")).read_text()))
    assert sorted({p["spec"]["nodeSelector"]["kubernetes.io/hostname"] for p in policies}) == sorted(nodes)


def test_a_node_of_the_run_absent_from_the_plan_is_refused(tmp_path):
    # A plan of node2 alone (as from a rack inventory); the slice with node1 reads it.
    rack = copy_inventory("example", tmp_path / "rack")
    hosts = yaml.safe_load((rack / "hosts.yml").read_text())
    del hosts["all"]["children"]["roce_nodes"]["hosts"]["node1"]
    (rack / "hosts.yml").write_text(yaml.safe_dump(hosts))
    plan_file = tmp_path / "plan.json"
    rc, out = site(rack, "--tags", "never", "-e", "roce_plan_out=%s" % plan_file)
    assert rc == 0, out
    exported = import_inventory(os.path.join(REPO, "inventories", "example"))
    pdd, data = private_data_dir(tmp_path / "slice2", exported, dict({"roce_k8s_mode": "render", "roce_plan": str(plan_file)}, **STAND_IN),
                                 slice_number=2, slice_count=2, workflow_job_id=7)
    assert data["roce_nodes"]["hosts"] == ["node1"]
    result = run_job(pdd, tags="host_network", cmdline="--check")
    assert result.status == "failed"
    msgs = [str(e["event_data"]["res"].get("msg", "")) for e in result.events if e.get("event") == "runner_on_failed"]
    assert any('node1: roce_plan="%s": has no entry for node1 of this run (the plan has 1 nodes)' % plan_file in m for m in msgs), msgs
    assert not gateway_calls(result)

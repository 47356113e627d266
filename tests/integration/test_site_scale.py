# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml at fleet scale: the SHAPE of a run, never its timing (benchmarks/site_scale.py times it).

Runs the real playbooks/site.yml through ansible-runner on generated inventories (nodes reached
with the local connection, Kubernetes phases in render mode) and counts task results per host:

- the validation before any change costs the nodes a constant number of task runs, whatever the
  node count: the gateway plan and the role-argument check run once per run, not once per node;
- the one-pass role-argument check finds exactly what Ansible's own per-host argument-spec tasks
  find, and names host, field, value and fix;
- the fleet knobs (roce_serial, roce_max_fail_percentage, roce_strategy) reach the host phases,
  and invalid values stop the run with a readable message, not a traceback;
- each node's VLAN gateway is its slice of the table validated once (check mode, nothing changes).
"""

import ipaddress
import os
import re
import shutil
import sys

import ansible_runner
import yaml
from _runner import REPO, SITE, collection_env, venv_path


def _plan_of(hostvars):
    """The fabric plan of ``hostvars`` as JSON text, as the collection writes it (the collection is importable through
    tests/unit/conftest.py's sys.path, which the integration tests load as needed)."""
    import importlib.util  # noqa: PLC0415
    spec = importlib.util.spec_from_file_location("unit_conftest", os.path.join(REPO, "tests", "unit", "conftest.py"))
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp  # noqa: PLC0415
    from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table  # noqa: PLC0415
    return fp.dumps(fp.build_plan(fabric_table(hostvars), False))


HOST_ROLES = ("preflight", "host_network", "rdma_verify")
RESULT_EVENTS = ("runner_on_ok", "runner_on_failed", "runner_on_skipped", "runner_on_unreachable")


def node_names(count):
    return ["gpu-%04d" % i for i in range(1, count + 1)]


def make_job(tmp_path, nodes, host_vars=None, group_vars=None, extravars=None):
    """A private data dir like an AWX job's: the example inventory's group_vars, N nodes."""
    pdd = tmp_path / ("pdd-%d" % nodes)
    inv = pdd / "inventory"
    shutil.copytree(os.path.join(REPO, "inventories", "example", "group_vars"), inv / "group_vars")
    (inv / "host_vars").mkdir(parents=True)
    subnets = ipaddress.ip_network("10.255.0.0/16").subnets(new_prefix=30)
    names = node_names(nodes)
    for name in names:
        net = next(subnets)
        hv = {"roce_node_name": name, "roce_pod_subnet": str(net), "roce_pod_gateway": str(list(net.hosts())[-1])}
        hv.update((host_vars or {}).get(name, {}))
        (inv / "host_vars" / (name + ".yml")).write_text(yaml.safe_dump(hv))
    if group_vars:
        with open(inv / "group_vars" / "roce_nodes.yml", "a") as fh:
            fh.write(yaml.safe_dump(group_vars))
    hosts = {
        "all": {
            "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
            "children": {"roce_nodes": {"hosts": dict.fromkeys(names)}, "k8s_controller": {"hosts": {"localhost": None}}},
        }
    }
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    (pdd / "env").mkdir()
    extra = {"roce_k8s_mode": "render", "roce_render_dir": str(tmp_path / ("render-%d" % nodes))}
    extra.update(extravars or {})
    (pdd / "env" / "extravars").write_text(yaml.safe_dump(extra))
    (pdd / "env" / "envvars").write_text(
        # A test reads vlan_gateway's arguments from its failed result's invocation, which ansible-core 2.21 and later
        # add only when asked (older ones ignore the variable).
        yaml.safe_dump(dict(collection_env(), PATH=venv_path(), ANSIBLE_INJECT_INVOCATION="True"))
    )
    return pdd


def run(pdd, playbook=SITE, **kw):
    return ansible_runner.run(private_data_dir=str(pdd), playbook=playbook, quiet=True, **kw)


def results(result, hosts):
    """(event, host, task) of every task result on the given hosts."""
    out = []
    for e in result.events:
        if e.get("event") in RESULT_EVENTS and e["event_data"].get("host") in hosts:
            out.append((e["event"], e["event_data"]["host"], e["event_data"].get("task", "")))
    return out


def failure_messages(result):
    return [str(e["event_data"].get("res", {}).get("msg", "")) for e in result.events if e.get("event") == "runner_on_failed"]


def played_hosts(result, play_prefix):
    """Hosts that got at least one task result in the plays whose name starts with play_prefix."""
    hosts = set()
    for e in result.events:
        if e.get("event") in RESULT_EVENTS and e["event_data"].get("play", "").startswith(play_prefix):
            hosts.add(e["event_data"]["host"])
    return hosts


# ---- validation cost per node is constant --------------------------------------------------------


def test_validation_runs_once_per_run_not_once_per_node(tmp_path):
    seen = {}
    for count in (3, 24):
        pdd = make_job(tmp_path, count)
        for tags in ("never", "operator,sriov"):
            result = run(pdd, tags=tags)
            assert result.status == "successful", (count, tags, failure_messages(result))
            on_nodes = results(result, set(node_names(count)))
            seen[(count, tags)] = sorted((ev, task) for ev, _host, task in on_nodes)
            # Everything the nodes pay for before a change runs once, on the first node, for all of them.
            assert {host for _ev, host, _task in on_nodes} == {"gpu-0001"}, on_nodes
            tasks = [task for _ev, _host, task in on_nodes]
            assert tasks.count("Plan the fabric once (fails on overlapping subnets, stray gateways, VLAN mismatch)") == 1
            assert sum("the host roles' argument specs" in t for t in tasks) == 1, tasks
            # The controller's roles are checked by the controller's play; the nodes' copy of that check is skipped, once.
            assert sum("the Kubernetes roles' argument specs" in t for t in tasks) == 1, tasks
            # Ansible's per-host argument-spec task no longer runs on the nodes (it ran 3 x N times).
            assert not [t for t in tasks if t.startswith("Validating arguments against arg spec")], tasks
    # The same task results on the nodes for 3 and for 24 of them.
    assert seen[(3, "never")] == seen[(24, "never")]
    assert seen[(3, "operator,sriov")] == seen[(24, "operator,sriov")]


# ---- the one-pass role-argument check finds what Ansible's own check finds ------------------------

BAD_HOST_VARS = {
    "gpu-0002": {"preflight_num_vfs": "ten"},
    "gpu-0003": {"host_network_vf_mode": "hostt"},
    "gpu-0004": {"rdma_verify_ping_count": "often"},
    # read through the role defaults of preflight_num_vfs and host_network_num_vfs
    "gpu-0005": {"roce_num_vfs": "many"},
    # Not a problem for either check: a string where a list is expected is split on commas.
    "gpu-0006": {"rdma_verify_tests": "ib_write_bw"},
}

REFERENCE_PLAY = """---
- name: Ansible's own argument-spec check of one role, one task per host
  hosts: roce_nodes
  gather_facts: false
  roles:
    - role: gpufabric.roce.{role}
      when: (rdma_verify_mode | default(lookup('gpufabric.roce.roce_default', 'rdma_verify_mode'))) == 'host'
"""


def _options(role):
    with open(os.path.join(REPO, "roles", role, "meta", "argument_specs.yml")) as fh:
        return list(yaml.safe_load(fh)["argument_specs"]["main"]["options"])


def _field(message, options):
    found = [o for o in options if re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(o), message)]
    return max(found, key=len)


def test_role_argument_check_matches_ansibles_per_host_check(tmp_path):
    pdd = make_job(tmp_path, 8, host_vars=BAD_HOST_VARS)
    nodes = set(node_names(8))

    # Reference: the roles' automatic argument-spec tasks (tagged always), one run per role so
    # that a host failing one role is still checked for the others.
    expected = set()
    for role in HOST_ROLES:
        play = tmp_path / ("reference-%s.yml" % role)
        play.write_text(REFERENCE_PLAY.format(role=role))
        result = run(pdd, playbook=str(play), tags="never")
        for e in result.events:
            if e.get("event") == "runner_on_failed" and e["event_data"]["host"] in nodes:
                for message in e["event_data"]["res"]["argument_errors"]:
                    expected.add((e["event_data"]["host"], "gpufabric.roce." + role, _field(message, _options(role))))
    assert {h for h, _r, _f in expected} == {"gpu-0002", "gpu-0003", "gpu-0004", "gpu-0005"}, expected

    result = run(pdd, tags="never")
    assert result.status == "failed"
    check = [e for e in result.events if e.get("event") == "runner_on_failed" and "argument specs" in e["event_data"].get("task", "")]
    assert len(check) == 1, failure_messages(result)
    res = check[0]["event_data"]["res"]
    found = {(h, p["role"], p["field"]) for p in res["problems"] for h in p["hosts"]}
    assert found == expected

    msg = res["msg"]
    # Host, field, value and fix on every line; the fix names the inventory variable a role default reads.
    assert 'gpu-0002: preflight_num_vfs="ten": ' in msg and "Fix: set preflight_num_vfs to an integer" in msg, msg
    assert 'gpu-0003: host_network_vf_mode="hostt": ' in msg and "Fix: set host_network_vf_mode to one of: host, operator" in msg, msg
    assert 'gpu-0004: rdma_verify_ping_count="often": ' in msg, msg
    assert 'gpu-0005: host_network_num_vfs="many": ' in msg and "set roce_num_vfs to an integer, or set host_network_num_vfs itself" in msg, msg
    # Nothing after the validation play ran.
    assert not played_hosts(result, "Phase"), played_hosts(result, "Phase")


def test_one_bad_group_var_is_one_line_for_all_nodes(tmp_path):
    pdd = make_job(tmp_path, 12, group_vars={"roce_mtu": "jumbo"})
    result = run(pdd, tags="never")
    assert result.status == "failed"
    msg = " ".join(failure_messages(result))
    assert 'gpu-0001 (and 11 other hosts: gpu-0002, gpu-0003, gpu-0004, ...): preflight_min_mtu="jumbo"' in msg, msg
    assert "the role default of preflight_min_mtu is {{ roce_mtu | default(9000) }}: set roce_mtu to an integer" in msg, msg


# ---- fleet knobs ----------------------------------------------------------------------------------


def test_invalid_knobs_stop_the_run_with_a_readable_message(tmp_path):
    pdd = make_job(tmp_path, 3, extravars={"roce_serial": "ten", "roce_max_fail_percentage": 150})
    result = run(pdd, tags="preflight")
    assert result.status == "failed"
    msg = " ".join(failure_messages(result))
    assert 'roce_serial="ten"' in msg and "roce_max_fail_percentage=150" in msg and "Fix: roce_serial is a positive count" in msg, msg
    assert "Traceback" not in result.stdout.read()
    assert not played_hosts(result, "Phase")


def _gateway_job(tmp_path, extravars):
    # Only gpu-0003 configures a gateway, on a PF that does not exist: in check mode the module reads
    # netlink, finds no PF and fails naming it; the other nodes skip the gateway (no module runs).
    host_vars = {n: {"host_network_vlan_gateway": False} for n in node_names(5)}
    host_vars["gpu-0003"] = {"roce_pf": "gpf-nopf0"}
    return make_job(tmp_path, 5, host_vars=host_vars, extravars=extravars)


def test_serial_batches_and_max_fail_percentage(tmp_path):
    # Batches of 2: [1, 2] [3, 4] [5]. gpu-0003 fails: 1 of its batch of 2 = 50 %.
    result = run(_gateway_job(tmp_path / "a", {"roce_serial": 2}), tags="host_network", cmdline="--check --forks 2")
    assert result.status == "failed"
    assert played_hosts(result, "Phase 2") == {"gpu-0001", "gpu-0002", "gpu-0003", "gpu-0004"}  # default 0 %: stop
    plays = [e["event_data"]["play"] for e in result.events if e.get("event") == "playbook_on_play_start"]
    assert plays.count("Phase 2 - host networking (VFs in host mode, VLAN gateways, routes, forwarding)") == 2

    result = run(_gateway_job(tmp_path / "b", {"roce_serial": 2, "roce_max_fail_percentage": 50}), tags="host_network", cmdline="--check")
    assert played_hosts(result, "Phase 2") == set(node_names(5))  # 50 % is not more than 50 %: go on
    assert result.stats["failures"] == {"gpu-0003": 1}


def test_free_strategy_and_each_node_reads_its_slice(tmp_path):
    result = run(_gateway_job(tmp_path, {"roce_strategy": "free"}), tags="host_network", cmdline="--check")
    assert played_hosts(result, "Phase 2") == set(node_names(5))
    assert result.stats["failures"] == {"gpu-0003": 1}
    failed = [e["event_data"] for e in result.events if e.get("event") == "runner_on_failed"]
    assert len(failed) == 1 and failed[0]["host"] == "gpu-0003"
    # The module got gpu-0003's slice of the table computed once in the validation play: its own
    # address and a route to each of the 4 other nodes' pod subnets.
    # One gateway run takes every rail of the node (one here): the failed result holds the module's call.
    item = failed[0]["res"]
    (args,) = item["invocation"]["module_args"]["rails"]
    assert args["name"] == "gpf-nopf0.100" and args["addresses"] == ["10.255.0.10/30"]
    # In range form (vlan_gateway's routes[].count): the two nodes before gpu-0003 and the two after it.
    assert [(r["dst"], r["via"], r["count"]) for r in args["routes"]] == [("10.255.0.0/30", "10.255.0.2", 2), ("10.255.0.12/30", "10.255.0.14", 2)]
    assert "gpf-nopf0" in item["msg"]
    # No node planned the group again: the play handed the table to the role.
    planned = [e for e in result.events if e.get("event") == "runner_on_ok" and "pod network once" in e["event_data"].get("task", "")]
    assert planned == []


def test_a_node_whose_play_did_not_plan_reads_the_group_plan_for_itself(tmp_path):
    # The role on its own (no site.yml to hand it the plan), and the play's first host was given a plan of its own, so it
    # skips the run-once planning task: each other node reads the group's plan for itself, through the vars lookup that
    # keeps the group plan from being rendered when a plan was given (tests/unit/test_host_network_plan_var.py).
    own = {"gpu-0001": {"roce_pf": "enp157s0np0", "roce_pod_subnet": "10.255.0.0/30", "roce_pod_gateway": "10.255.0.2"}}
    pdd = make_job(tmp_path, 3, host_vars={"gpu-0001": {"host_network_fabric": _plan_of(own)}})
    (pdd / "project").mkdir()
    (pdd / "project" / "plan.yml").write_text(yaml.safe_dump([{
        "name": "The role's plan tasks alone", "hosts": "roce_nodes", "gather_facts": False,
        "tasks": [{"ansible.builtin.import_role": {"name": "gpufabric.roce.host_network", "tasks_from": "plan.yml"}}],
    }]))
    result = run(pdd, playbook="plan.yml")
    assert result.status == "successful", failure_messages(result)
    assert ("runner_on_skipped", "gpu-0001", "Validate every node's pod network once (one pass over the group)") in results(result, ["gpu-0001"])
    rails = {e["event_data"]["host"]: e["event_data"]["res"]["ansible_facts"]["__host_network_rails"]
             for e in result.events if e.get("event") == "runner_on_ok" and e["event_data"].get("task") == "This node's rails"}
    # gpu-0001 reads its own plan; the others, the group's.
    assert set(rails) == {"gpu-0001", "gpu-0002", "gpu-0003"}
    assert [rails[h][0]["addresses"] for h in sorted(rails)] == [["10.255.0.2/30"], ["10.255.0.6/30"], ["10.255.0.10/30"]]

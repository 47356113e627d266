#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""AWX job slicing at fleet scale (issue 21): 1,000 nodes x 8 rails, sliced 10 ways, against the unsliced run.

The jobs are those of tests/integration/test_awx_slices.py, at the issue's size: ansible-runner private data dirs
built as AWX builds them (tests/integration/_awx_slice.py: the inventory imported with ansible-inventory --list
--export, cut by get_script_data's rules, AWX's meta extra vars), each running the real playbooks/site.yml with
``--tags host_network --check`` and the local connection (as the test does):

  reference  : the unsliced job (roce_inventory_complete: true), which also writes the plan (roce_plan_out)
  with plan  : slice k of N (k = 1..N) reading that plan (roce_plan)
  no plan    : slice k of N without it (AWX meta vars, no roce_inventory_complete)

STAND-IN: the node-side modules of the host phase are not run. The test captures what vlan_gateway is called with
from its failed result (no PF here); at 1,000 x 8 that is 8,000 real module runs per pass. Instead the jobs run
against a throwaway copy of the collection, made in this script's temporary directory (never in the repository),
where gpufabric.roce.sriov_vf and gpufabric.roce.vlan_gateway are replaced by a recorder action plugin: it validates
the task's arguments against the real module's argument spec (captured from the module's own AnsibleModule call
when the copy is made, so the recorded arguments are the module_args the module would get) and appends them to a
file per node, touching nothing. Everything else (site.yml, the roles, the filters that plan the fabric and derive
each node's gateways, routes and VFs) is the collection's own code. --verify-stand-in also runs the unsliced job
with the real modules, as the test does, and checks that they were called with exactly the recorded arguments
(meant for a small inventory: it costs 2 x nodes x rails real module runs).

The inventory is synthetic: the first R rails of inventories/example-multirail (each node's subnet sized so that
the /16 pools hold the nodes) in host VF mode (roce_vf_mode: host, so that sriov_vf is called and the VF settings
are compared). Per-VF settings (--vfs): "node" (default) gives every node and rail two VFs with node-specific
settings in roce_rail_overrides (a MAC on VF 0), so that a slice reading another node's entry would show; "rail"
puts the same two VFs in roce_rails for every node; "none" leaves them out (sriov_vf still gets each rail's PF and
VF count). With "node" the plan's own computation grew much faster than the node count on ansible-core 2.19 until
e5ffac4 (benchmarks/README.md, "AWX job slicing at fleet scale"). The NCCL step of the host phase is off
(host_network_nccl: false): it reads the node's RDMA devices (rdma_facts), which this machine does not have.

Exit code 0 only when every check holds: every node's recorded calls (sriov_vf and vlan_gateway, every rail) of
the slices with the plan equal the unsliced run's byte for byte; every vlan_gateway call of the slices without
the plan has purge_routes false (and lists no route the unsliced run does not); every node ran in exactly one slice.

    .venv/bin/python benchmarks/awx_slices.py                                  # 1,000 nodes x 8 rails, 10 slices (*)
    .venv/bin/python benchmarks/awx_slices.py --nodes 20 --rails 2 --slices 3 --no-readme --verify-stand-in

(*) About 42 minutes and 66 CPU-minutes on this 2-core machine (benchmarks/README.md, block 1000x8x10): run it alone.

Wall and CPU time of each job (CPU: ansible-playbook and every process under it, plus this process, where
ansible-runner decodes the job's events), the plan's size, the load average before and after each job; the table
goes into benchmarks/README.md (block "awx_slices:<label>"). Not a test: the machine is shared, so the times vary
with its load (printed with every figure). AWX would run the slices in parallel on its execution nodes; here they
run one after another on one machine.
"""

import argparse
import datetime
import importlib
import ipaddress
import json
import os
import resource
import shutil
import sys
import tempfile
import time

import ansible_runner
import yaml

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
sys.path.insert(0, os.path.join(REPO, ".build", "collections"))

from _awx_slice import import_inventory, private_data_dir  # noqa: E402
from _runner import SITE  # noqa: E402
from site_scale import ansible_version, git_head, write_readme  # noqa: E402

from ansible_collections.gpufabric.roce.plugins.module_utils._common.route_ranges import expand  # noqa: E402


def plain_routes(call):
    """The routes a gateway call stands for (the roles pass them in range form), as a set."""
    return {json.dumps(r, sort_keys=True) for e in call["routes"] for r in expand(e)}


STAND_IN_MODULES = ("sriov_vf", "vlan_gateway")
# What the CI test sets: the nodes' names resolve nowhere, and nothing may reach this machine's network over SSH.
LOCAL = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
# The tasks of the host phase that call the two modules (roles/host_network/tasks/vfs.yml, gateway.yml).
REAL_TASKS = {"sriov_vf": "Create the VFs of every rail", "vlan_gateway": "VLAN gateway of every rail"}
# The collection's content; the rest of the checkout (tests, lab images, .venv) is not part of it.
COLLECTION_CONTENT = ("galaxy.yml", "meta", "plugins", "roles", "playbooks")
# The keywords of AnsibleModule that ArgumentSpecValidator also takes; any other one (no_log, ...) would change
# what the module sees, so a module using one makes the copy fail instead of recording something else.
VALIDATOR_KEYWORDS = ("argument_spec", "mutually_exclusive", "required_together", "required_one_of", "required_if", "required_by")

RECORDER = '''# STAND-IN written by benchmarks/awx_slices.py into its throwaway copy of gpufabric.roce; never part of the collection.
"""STAND-IN for gpufabric.roce.{module}: records the arguments the task calls the module with, touches nothing.

The arguments are validated against the real module's argument spec (captured from its AnsibleModule call when this
copy was made), as AnsibleModule validates them, and appended as one JSON line to $GPUFABRIC_RECORD_DIR/<host>.jsonl."""

import json
import os

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

MODULE = {module!r}
SPEC = json.loads({spec!r})


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        checked = ArgumentSpecValidator(**SPEC).validate(dict(self._task.args))
        if checked.error_messages:
            result.update(failed=True, msg="stand-in %s: %s" % (MODULE, "; ".join(checked.error_messages)))
            return result
        line = json.dumps({{"module": MODULE, "args": checked.validated_parameters}}, sort_keys=True)
        with open(os.path.join(os.environ["GPUFABRIC_RECORD_DIR"], task_vars["inventory_hostname"] + ".jsonl"), "a") as fh:
            fh.write(line + "\\n")
        result.update(changed=False, stand_in=True, msg="stand-in %s: arguments recorded, nothing done" % MODULE)
        return result
'''


class _Captured(Exception):
    pass


def module_spec(name):
    """The keywords the real module passes to AnsibleModule (its argument spec and the checks across arguments)."""
    mod = importlib.import_module("ansible_collections.gpufabric.roce.plugins.modules." + name)
    seen = {}

    def capture(**kwargs):
        seen.update(kwargs)
        raise _Captured

    real, mod.AnsibleModule = mod.AnsibleModule, capture
    try:
        mod.main()
    except _Captured:
        pass
    finally:
        mod.AnsibleModule = real
    seen.pop("supports_check_mode", None)
    unknown = sorted(set(seen) - set(VALIDATOR_KEYWORDS))
    if unknown:
        raise SystemExit("%s: AnsibleModule(%s): the recorder cannot validate these as the module would" % (name, ", ".join(unknown)))
    return seen


def stand_in_collection(work):
    """A copy of the collection under ``work`` with the recorder in place of the node-side modules; returns the
    collections root to give ANSIBLE_COLLECTIONS_PATH."""
    root = os.path.join(work, "collections")
    dest = os.path.join(root, "ansible_collections", "gpufabric", "roce")
    os.makedirs(dest)
    for entry in COLLECTION_CONTENT:
        src = os.path.join(REPO, entry)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dest, entry), ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest)
    for name in STAND_IN_MODULES:
        # An action plugin of a module's name runs instead of the module: the module file itself stays.
        with open(os.path.join(dest, "plugins", "action", name + ".py"), "w") as fh:
            fh.write(RECORDER.format(module=name, spec=json.dumps(module_spec(name))))
    return root


def subnet_prefix(nodes):
    # One subnet per node in each rail's /16 pool (the example's /24 holds 256 nodes; /26 holds 1,024).
    return min(30, max(24, 16 + max(nodes - 1, 1).bit_length()))


def mac(node, rail):
    return "02:00:%02x:%02x:%02x:00" % (rail, node >> 8 & 0xFF, node & 0xFF)


def generate_inventory(path, nodes, rails, vfs="node"):
    with open(os.path.join(REPO, "inventories", "example-multirail", "group_vars", "roce_nodes.yml")) as fh:
        plan = yaml.safe_load(fh)["roce_rails"][:rails]
    prefix = subnet_prefix(nodes)
    if nodes > ipaddress.ip_network(plan[0]["subnet_pool"]).num_addresses >> (32 - prefix):
        raise SystemExit("--nodes %d: more than the rails' /16 pools hold" % nodes)
    for rail in plan:
        rail["subnet_prefix"] = prefix
        if vfs == "rail":
            rail["vfs"] = [{"id": 0, "vlan": rail["vlan"], "trust": True, "spoofchk": False}, {"id": 1, "vlan": rail["vlan"], "link_state": "enable"}]
    os.makedirs(os.path.join(path, "group_vars"))
    os.makedirs(os.path.join(path, "host_vars"))
    with open(os.path.join(path, "group_vars", "roce_nodes.yml"), "w") as fh:
        yaml.safe_dump({"roce_vf_mode": "host", "roce_num_vfs": 8, "roce_rails": plan}, fh, sort_keys=False)
    names = ["gpu-%04d" % i for i in range(1, nodes + 1)]
    for i, name in enumerate(names):
        own = {"roce_node_name": name, "roce_node_index": i}
        if vfs == "node":
            own["roce_rail_overrides"] = {
                r["name"]: {"vfs": [{"id": 0, "mac": mac(i, n), "vlan": r["vlan"], "trust": True, "spoofchk": False},
                                    {"id": 1, "vlan": r["vlan"], "link_state": "enable", "max_tx_rate": 1000 + i}]}
                for n, r in enumerate(plan)
            }
        with open(os.path.join(path, "host_vars", name + ".yml"), "w") as fh:
            yaml.safe_dump(own, fh, sort_keys=False)
    hosts = {"all": {"children": {"roce_nodes": {"hosts": dict.fromkeys(names)},
                                  "k8s_controller": {"hosts": {"localhost": {"ansible_connection": "local"}}}}}}
    with open(os.path.join(path, "hosts.yml"), "w") as fh:
        yaml.safe_dump(hosts, fh)
    return names


def cpu_seconds():
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def run_job(name, pdd, args, *, collections_root=None, record_dir=None, expect_success=True):
    """site.yml --tags host_network --check in private data dir ``pdd``; with ``collections_root``, against the
    stand-in copy, recording into ``record_dir``. Returns the figures and the ansible-runner result."""
    if collections_root:
        # private_data_dir points the job at this checkout's collection (_runner.collection_env): use the copy.
        os.makedirs(record_dir)
        envfile = os.path.join(pdd, "env", "envvars")
        with open(envfile) as fh:
            env = json.load(fh)
        env.update(ANSIBLE_COLLECTIONS_PATH=collections_root, GPUFABRIC_RECORD_DIR=record_dir)
        with open(envfile, "w") as fh:
            json.dump(env, fh)
    load_before = os.getloadavg()[0]
    own0, children0 = cpu_seconds()
    start = time.monotonic()
    result = ansible_runner.run(private_data_dir=str(pdd), playbook=SITE, tags="host_network", cmdline="--check",
                                quiet=True, timeout=args.timeout)
    wall = time.monotonic() - start
    own1, children1 = cpu_seconds()
    figures = {"job": name, "wall_s": round(wall, 2), "cpu_s": round(own1 - own0 + children1 - children0, 2),
               "cpu_ansible_s": round(children1 - children0, 2), "cpu_runner_s": round(own1 - own0, 2),
               "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2), "status": result.status}
    if expect_success and (result.status != "successful" or result.rc != 0):
        sys.stderr.write(result.stdout.read()[-8000:])
        raise SystemExit("%s: site.yml --tags host_network --check ended %s (rc=%s), see above" % (name, result.status, result.rc))
    print("  %-18s %8.1f s wall %8.1f s CPU  load %.1f -> %.1f" % (
        name, figures["wall_s"], figures["cpu_s"], figures["load_before"], figures["load_after"]), flush=True)
    return figures, result


def read_records(record_dir):
    """{host: the recorded lines, as written}."""
    out = {}
    for entry in sorted(os.listdir(record_dir)):
        with open(os.path.join(record_dir, entry), "rb") as fh:
            out[entry[: -len(".jsonl")]] = fh.read()
    return out


def per_rail(args):
    """A module's arguments as one set per rail: a run takes every rail of its node (``rails``), each with the
    top-level arguments; a run without ``rails`` is one set."""
    shared = {k: v for k, v in args.items() if k != "rails"}
    return [dict(shared, **rail) for rail in args.get("rails") or [{}]]


def calls(text, module):
    """Each rail's arguments of ``module``, as the stand-in recorded them."""
    return [a for c in map(json.loads, text.splitlines()) if c["module"] == module for a in per_rail(c["args"])]


def check(results, name, ok, detail=""):
    results.append({"check": name, "ok": bool(ok), "detail": detail})
    print("  [%s] %s%s" % ("ok" if ok else "FAILED", name, (": " + detail) if detail and not ok else ""), flush=True)


def compare(names, rails, reference, *, with_plan, without_plan, sliced_nodes, recorded_hosts):
    out = []
    n = len(names)
    check(out, "the unsliced run recorded %d sriov_vf and %d vlan_gateway calls on each of the %d nodes" % (rails, rails, n),
          sorted(reference) == names and all(len(calls(t, m)) == rails for t in reference.values() for m in STAND_IN_MODULES))
    gateways = {h: calls(t, "vlan_gateway") for h, t in reference.items()}
    check(out, "the unsliced run purges routes, %d routes per gateway (every other node's subnet on the rail)" % (n - 1),
          all(c["purge_routes"] is True and len(plain_routes(c)) == n - 1 for cs in gateways.values() for c in cs))
    check(out, "the unsliced run passes each gateway's routes as at most two ranges (a pool-carved fabric)",
          all(len(c["routes"]) <= 2 for cs in gateways.values() for c in cs))
    seen = sorted(h for s in sliced_nodes for h in s)
    check(out, "every node is in exactly one slice, and each slice recorded its own nodes only",
          seen == names and all(sorted(s) == sorted(r) for s, r in zip(sliced_nodes, recorded_hosts["with_plan"]))
          and all(sorted(s) == sorted(r) for s, r in zip(sliced_nodes, recorded_hosts["without_plan"])))
    differ = [h for h in names if with_plan.get(h) != reference[h]]
    check(out, "slices with the plan: every node's recorded sriov_vf and vlan_gateway arguments equal the unsliced run's byte for byte",
          not differ, "%d nodes differ, first %s" % (len(differ), differ[:5]))
    purging = [h for h in names if h not in without_plan or any(c["purge_routes"] is not False for c in calls(without_plan[h], "vlan_gateway"))]
    check(out, "slices without the plan: every vlan_gateway call has purge_routes false",
          not purging and all(len(calls(without_plan[h], "vlan_gateway")) == rails for h in names), "%d nodes, first %s" % (len(purging), purging[:5]))
    extra = [h for h in names if h in without_plan and any(
        plain_routes(c) - plain_routes(ref) for c, ref in zip(calls(without_plan[h], "vlan_gateway"), gateways[h]))]
    # The defect's precondition: a slice computing its own plan cannot know the other slices' subnets.
    extra += [h for h in names if h in without_plan and any(
        len(plain_routes(c)) >= len(plain_routes(ref)) for c, ref in zip(calls(without_plan[h], "vlan_gateway"), gateways[h]))]
    check(out, "slices without the plan: fewer routes than the unsliced run (their own slice's nodes), none it does not list",
          not extra, "first %s" % extra[:5])
    vfs = [h for h in names if h not in without_plan or calls(without_plan[h], "sriov_vf") != calls(reference[h], "sriov_vf")]
    check(out, "slices without the plan: every node's sriov_vf arguments equal the unsliced run's", not vfs, "first %s" % vfs[:5])
    return out


def real_module_args(result, module):
    """{host: [module_args per rail]} from the real module's failed results (no PF here), as the CI test reads them."""
    found = {}
    for e in result.events:
        data = e.get("event_data", {})
        if e.get("event") != "runner_on_failed" or not data.get("task", "").startswith(REAL_TASKS[module]):
            continue
        found[data["host"]] = per_rail(data["res"]["invocation"]["module_args"])
    return found


def verify_stand_in(work, exported, whole, reference, args):
    """The unsliced job with the real modules: were they called with exactly the recorded arguments?"""
    out = []
    # Host VF mode: sriov_vf fails on every rail (no PF), so the node stops before its gateways; operator VF mode
    # skips sriov_vf and reaches vlan_gateway, whose arguments do not depend on the VF mode.
    for module, extra in (("sriov_vf", {}), ("vlan_gateway", {"roce_vf_mode": "operator"})):
        pdd, _data = private_data_dir(os.path.join(work, "real-" + module), exported, dict(whole, **extra))
        figures, result = run_job("real " + module, pdd, args, expect_success=False)
        real = real_module_args(result, module)
        recorded = {h: calls(t, module) for h, t in reference.items()}
        same = sorted(real) == sorted(recorded) and all(
            json.dumps(real[h], sort_keys=True) == json.dumps(recorded[h], sort_keys=True) for h in real)
        check(out, "stand-in: the real %s was called with exactly the recorded arguments on all %d nodes" % (module, len(recorded)),
              same, "%d nodes with real calls, %d recorded" % (len(real), len(recorded)))
        out[-1]["figures"] = figures
    return out


def summary(jobs, plan_bytes, nodes, rails, slices):
    def row(label, rs):
        loads = [r["load_before"] for r in rs] + [rs[-1]["load_after"]]
        per = ""
        if len(rs) > 1:
            per = " (%.1f-%.1f per slice)" % (min(r["wall_s"] for r in rs), max(r["wall_s"] for r in rs))
        return "| %s | %d | **%.1f s**%s | %.1f s (%.1f + %.1f) | %.1f-%.1f |" % (
            label, len(rs), sum(r["wall_s"] for r in rs), per, sum(r["cpu_s"] for r in rs),
            sum(r["cpu_ansible_s"] for r in rs), sum(r["cpu_runner_s"] for r in rs), min(loads), max(loads))
    out = ["| jobs (%d nodes x %d rails, %d slices) | jobs | wall, sum | CPU, sum (ansible-playbook and under it + ansible-runner) | load avg |"
           % (nodes, rails, slices), "|---|---|---|---|---|",
           row("unsliced reference, writes the plan (%.2f MB)" % (plan_bytes / 1e6), jobs["reference"]),
           row("slices reading the plan", jobs["with_plan"]),
           row("slices without the plan", jobs["without_plan"])]
    return "\n".join(out)


def block(label, started, args, *, table, checks, plan_bytes):
    cmd = ".venv/bin/python benchmarks/awx_slices.py --nodes %d --rails %d --slices %d --vfs %s --label %s" % (
        args.nodes, args.rails, args.slices, args.vfs, label)
    if args.verify_stand_in:
        cmd += " --verify-stand-in"
    lines = [
        "<!-- awx_slices:%s:begin (written by benchmarks/awx_slices.py) -->" % label,
        "**%s** — measured %s, commit `%s`, ansible-core %s, ansible-runner %s, forks 20 (ansible.cfg), 2 shared cores; "
        "`sriov_vf` and `vlan_gateway` are the script's recorder stand-in (arguments recorded, nothing run on a node)." % (
            label, started, git_head(), ansible_version(), package_version("ansible-runner")),
        "",
        "```sh",
        cmd,
        "```",
        "",
        table,
        "",
        "Plan: %d bytes of JSON. Checks (the script's exit code):" % plan_bytes,
        "",
    ]
    lines += ["- %s %s" % ("**held**:" if c["ok"] else "**FAILED**:", c["check"]) for c in checks]
    lines.append("<!-- awx_slices:%s:end -->" % label)
    return "\n".join(lines)


def package_version(name):
    from importlib.metadata import PackageNotFoundError  # noqa: PLC0415
    from importlib.metadata import version as dist_version  # noqa: PLC0415

    try:
        return dist_version(name)
    except PackageNotFoundError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--nodes", type=int, default=1000, help="generated nodes (default 1000)")
    ap.add_argument("--rails", type=int, default=8, choices=range(1, 9), metavar="1-8", help="rails per node (default 8)")
    ap.add_argument("--slices", type=int, default=10, help="AWX job_slice_count (default 10)")
    ap.add_argument("--vfs", choices=("node", "rail", "none"), default="node",
                    help="per-VF settings: per node and rail in roce_rail_overrides (default), the same for every node in roce_rails, or none")
    ap.add_argument("--label", default="current", help="README block to (re)write")
    ap.add_argument("--no-readme", action="store_true", help="print only, leave benchmarks/README.md alone")
    ap.add_argument("--json", help="write the raw figures and checks here")
    ap.add_argument("--verify-stand-in", action="store_true",
                    help="also run the unsliced job with the real modules and compare their arguments (2 x nodes x rails module runs)")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per job")
    ap.add_argument("--keep", help="work directory to keep (default: a temporary one, removed)")
    args = ap.parse_args()
    if args.slices < 2 or args.slices > args.nodes:
        raise SystemExit("--slices must be between 2 and --nodes")

    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    work = args.keep or tempfile.mkdtemp(prefix="gpufabric-awx-slices-")
    os.makedirs(work, exist_ok=True)
    try:
        names = generate_inventory(os.path.join(work, "inv"), args.nodes, args.rails, args.vfs)
        collections_root = stand_in_collection(work)
        print("STAND-IN: sriov_vf and vlan_gateway record their arguments and run nothing (copy of the collection in %s)"
              % collections_root, flush=True)
        exported = import_inventory(os.path.join(work, "inv"))
        base = {"roce_k8s_mode": "render", "roce_render_dir": os.path.join(work, "render"), "host_network_nccl": False, **LOCAL}
        whole = dict(base, roce_inventory_complete=True)
        plan_file = os.path.join(work, "plan.json")
        jobs = {"reference": [], "with_plan": [], "without_plan": []}
        pdd, _data = private_data_dir(os.path.join(work, "ref"), exported, dict(whole, roce_plan_out=plan_file))
        figures, _result = run_job("reference", pdd, args, collections_root=collections_root, record_dir=os.path.join(work, "rec-ref"))
        jobs["reference"].append(figures)
        reference = read_records(os.path.join(work, "rec-ref"))
        plan_bytes = os.path.getsize(plan_file)

        with_plan, without_plan, sliced_nodes = {}, {}, []
        recorded_hosts = {"with_plan": [], "without_plan": []}
        # Each slice with and without the plan one after the other, so that a load spike from the machine's other
        # users does not land on one kind of job only.
        for n in range(1, args.slices + 1):
            for kind, extra, into in (("with_plan", {"roce_plan": plan_file}, with_plan), ("without_plan", {}, without_plan)):
                pdd, data = private_data_dir(os.path.join(work, "%s-%d" % (kind, n)), exported, dict(base, **extra),
                                             slice_number=n, slice_count=args.slices, job_id=100 + n, workflow_job_id=7)
                if kind == "with_plan":
                    sliced_nodes.append(data.get("roce_nodes", {}).get("hosts", []))
                record_dir = os.path.join(work, "rec-%s-%d" % (kind, n))
                figures, _result = run_job("slice %d/%d %s" % (n, args.slices, kind.replace("_", " ")), pdd, args,
                                           collections_root=collections_root, record_dir=record_dir)
                figures["nodes"] = len(data.get("roce_nodes", {}).get("hosts", []))
                jobs[kind].append(figures)
                records = read_records(record_dir)
                recorded_hosts[kind].append(sorted(records))
                into.update(records)
        jobs["reference"][0]["nodes"] = len(names)

        print("checks:")
        checks = compare(names, args.rails, reference, with_plan=with_plan, without_plan=without_plan,
                         sliced_nodes=sliced_nodes, recorded_hosts=recorded_hosts)
        if args.verify_stand_in:
            checks += verify_stand_in(work, exported, whole, reference, args)
        table = summary(jobs, plan_bytes, args.nodes, args.rails, args.slices)
        text_block = block(args.label, started, args, table=table, checks=checks, plan_bytes=plan_bytes)
        print("\n" + text_block)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"started": started, "nodes": args.nodes, "rails": args.rails, "slices": args.slices, "plan_bytes": plan_bytes,
                           "stand_in": list(STAND_IN_MODULES), "jobs": jobs, "checks": checks}, fh, indent=2)
        if not args.no_readme:
            write_readme(text_block, args.label, tool="awx_slices")
        return 0 if all(c["ok"] for c in checks) else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

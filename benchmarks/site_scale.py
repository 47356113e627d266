#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/site.yml at fleet scale: 100, 300 and 1,000 generated nodes, side by side in one run.

For every node count it generates an inventory shaped like inventories/example (the seed's group_vars,
one host_vars file per node with its own /30 pod subnet and gateway, localhost as k8s_controller) and
times two ansible-playbook runs of the real playbooks/site.yml, Kubernetes phases in render mode:

  validate : --tags never           only the always-tagged validation plays (nothing is changed)
  render   : --tags operator,sriov  validation + the NicClusterPolicy/Helm values + every node's
                                    SriovNetworkNodePolicy and SriovNetwork written as YAML

With --plan, two more runs per node count (docs/awx.md, "One fabric plan"):

  plan_out : --tags never -e roce_plan_out=<file>   validation, then the fabric plan written as JSON
  plan_in  : --tags never -e roce_plan=<file>       validation reading that plan instead of computing it

Their difference to `validate` is the cost of writing, and of reading back and checking, the plan.

It reports wall seconds, the growth ratio against the smallest inventory, the load average of the
machine around each run, checks that the render wrote one policy and one network per node, and writes
the table into benchmarks/README.md (block "site_scale:<label>").

    .venv/bin/python benchmarks/site_scale.py                         # 100, 300, 1000 nodes
    .venv/bin/python benchmarks/site_scale.py --nodes 100,300 --label before --repeat 2
    .venv/bin/python benchmarks/site_scale.py --profile               # + the 5 slowest tasks per run

Goals (issue 10): 1,000 nodes, validation plus render <= 30 s wall; 1,000 vs 100 nodes <= 12x.
Not a test: the machine is shared, so figures vary with its load (reported with every figure).
"""

import argparse
import datetime
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
README = os.path.join(REPO, "benchmarks", "README.md")
MODES = (("validate", "never"), ("render", "operator,sriov"))
GOAL_WALL_S = 30.0
GOAL_RATIO = 12.0
PROFILE_LINE = re.compile(r"^(?P<task>.+?) -+ (?P<secs>[0-9.]+)s$")


def generate_inventory(path, nodes, rails=0, seed=REPO):
    """inventories/example's group_vars, N nodes with host_vars files, one /30 pod subnet each; with
    ``rails``, the first ``rails`` rails of inventories/example-multirail's plan and a roce_node_index each.
    ``seed``: the checkout whose inventories/ seed it (another commit's, for a run of that commit)."""
    shutil.copytree(os.path.join(seed, "inventories", "example", "group_vars"), os.path.join(path, "group_vars"))
    os.makedirs(os.path.join(path, "host_vars"))
    if rails:
        with open(os.path.join(seed, "inventories", "example-multirail", "group_vars", "roce_nodes.yml")) as fh:
            plan = [line for line in fh if line.startswith("  - {name: rail")]
        with open(os.path.join(path, "group_vars", "roce_nodes.yml"), "a") as fh:
            # /26 per node and rail: a /16 pool then holds 1,024 nodes (the example's /24 holds 256); beyond
            # that each rail gets its own /12 (16,384 nodes), as the validation rightly refuses a full pool.
            lines = [line.replace("subnet_prefix: 24", "subnet_prefix: 26") for line in plan[:rails]]
            if nodes > 1024:
                lines = [
                    re.sub(r"subnet_pool: [0-9.]+/16", "subnet_pool: 10.%d.0.0/12" % (16 * (r + 1)), line)
                    for r, line in enumerate(lines)
                ]
            fh.write("roce_rails:\n" + "".join(lines))
    subnets = ipaddress.ip_network("10.255.0.0/16").subnets(new_prefix=30)
    names = []
    for i in range(1, nodes + 1):
        name = "gpu-%04d" % i
        net = next(subnets)
        with open(os.path.join(path, "host_vars", name + ".yml"), "w") as fh:
            if rails:
                fh.write("---\nroce_node_name: %s\nroce_node_index: %d\n" % (name, i - 1))
            else:
                fh.write("---\nroce_node_name: %s\nroce_pod_subnet: %s\nroce_pod_gateway: %s\n" % (name, net, list(net.hosts())[-1]))
        names.append(name)
    lines = ["---", "all:", "  children:", "    roce_nodes:", "      hosts:"]
    lines += ["        %s:" % n for n in names]
    lines += [
        "    k8s_controller:",
        "      hosts:",
        "        localhost:",
        "          ansible_connection: local",
        '          ansible_python_interpreter: "{{ ansible_playbook_python }}"',
    ]
    with open(os.path.join(path, "hosts.yml"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def count_kinds(render_dir):
    kinds = {}
    for root, _dirs, files in os.walk(render_dir):
        for name in files:
            if not name.endswith((".yaml", ".yml")):
                continue
            with open(os.path.join(root, name)) as fh:
                for line in fh:
                    if line.startswith("kind: "):
                        kind = line.split(":", 1)[1].strip()
                        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def run_site(work, nodes, tags, args, attempt, *, extra=()):
    render_dir = os.path.join(work, "render-%d-%s-%d" % (nodes, tags.replace(",", "-"), attempt))
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        "-i",
        os.path.join(work, "inv-%d" % nodes),
        os.path.join(REPO, "playbooks", "site.yml"),
        "--tags",
        tags,
        "-e",
        "roce_k8s_mode=render",
        "-e",
        "roce_render_dir=" + render_dir,
    ]
    for e in extra:
        cmd += ["-e", e]
    if args.ipam:
        cmd += ["-e", "sriov_networks_ipam=" + args.ipam]
    if args.forks:
        cmd += ["--forks", str(args.forks)]
    env = ansible_env()
    if args.profile:
        env.update(ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks", PROFILE_TASKS_TASK_OUTPUT_LIMIT="5")
    load_before = os.getloadavg()[0]
    start = time.monotonic()
    returncode, stdout, stderr, usage = run_measured(cmd, work, env, args.timeout)
    wall = time.monotonic() - start
    load_after = os.getloadavg()[0]
    if returncode != 0:
        sys.stderr.write(stdout[-6000:] + stderr[-3000:])
        raise SystemExit("site.yml --tags %s on %d nodes failed (rc=%d)" % (tags, nodes, returncode))
    result = {
        "seconds": round(wall, 2), "load_before": round(load_before, 2), "load_after": round(load_after, 2),
        # ru_maxrss of the run: the largest of ansible-playbook and the forks it waited for (kB on Linux).
        "peak_rss_mb": round(usage.ru_maxrss / 1024), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
    }
    if "sriov" in tags:
        kinds = count_kinds(render_dir)
        result["rendered"] = kinds
        # nv-ipam: a policy per node and rail, but one network and one CIDRPool per rail for the whole cluster.
        per_rail = args.ipam == "nv-ipam"
        expected = {"SriovNetworkNodePolicy": nodes * max(args.rails, 1)}
        expected.update(dict.fromkeys(("SriovNetwork", "CIDRPool"), max(args.rails, 1)) if per_rail else {"SriovNetwork": nodes * max(args.rails, 1)})
        for kind, count in expected.items():
            if kinds.get(kind) != count:
                raise SystemExit("render on %d nodes wrote %s %s objects, expected %d" % (nodes, kinds.get(kind), kind, count))
        if kinds.get("NicClusterPolicy") != 1:
            raise SystemExit("render on %d nodes wrote no NicClusterPolicy: %s" % (nodes, kinds))
    if args.profile:
        result["slowest_tasks"] = [
            (m.group("task").strip(), float(m.group("secs"))) for m in map(PROFILE_LINE.match, stdout.splitlines()) if m
        ][:5]
    shutil.rmtree(render_dir, ignore_errors=True)
    return result


def ansible_env(**extra):
    """This environment with this checkout's ansible.cfg and built collection, uncoloured, and ``extra``."""
    return dict(
        os.environ,
        ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
        ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build", "collections"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
    ) | extra


def run_measured(cmd, cwd, env, timeout):
    """Run ``cmd``; returns (returncode, stdout, stderr, rusage of this run alone): wait4 on the child gives
    its own resource usage, where subprocess.run would leave only the sum over every run of this script."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err, text=True)  # noqa: S603
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.2)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read(), usage


def plan_runs(work, nodes, args, attempt, results):
    """plan_out then plan_in on ``nodes``: the plan written, then read back instead of computed."""
    plan = os.path.join(work, "plan-%d.json" % nodes)
    for mode, extra in (("plan_out", ["roce_plan_out=" + plan]), ("plan_in", ["roce_plan=" + plan])):
        r = run_site(work, nodes, "never", args, attempt, extra=extra)
        r["plan_bytes"] = os.path.getsize(plan)
        results[nodes].setdefault(mode, []).append(r)
        print("%5d nodes  %-8s %7.2f s  (load %.1f -> %.1f, plan %.1f MB)" % (
            nodes, mode, r["seconds"], r["load_before"], r["load_after"], r["plan_bytes"] / 1e6), flush=True)


def plan_table(results, node_counts):
    out = ["", "| nodes | plan (JSON, kB) | `--tags never` | `+ roce_plan_out` (write) | `+ roce_plan` (read instead) | load avg before each run |",
           "|---|---|---|---|---|---|"]
    for nodes in node_counts:
        r = results[nodes]
        v, w, i = (min(x["seconds"] for x in r[m]) for m in ("validate", "plan_out", "plan_in"))
        out.append("| %d | %d | %.1f s | %.1f s (%+.1f s) | %.1f s (%+.1f s) | %s |" % (
            nodes, r["plan_out"][0]["plan_bytes"] // 1000, v, w, w - v, i, i - v,
            " / ".join("%.1f" % x["load_before"] for m in ("validate", "plan_out", "plan_in") for x in r[m])))
    return "\n".join(out)


def summarise(results, node_counts):
    base = node_counts[0]
    rows = []
    for nodes in node_counts:
        row = {"nodes": nodes}
        for mode, _tags in MODES:
            runs = results[nodes][mode]
            secs = [r["seconds"] for r in runs]
            row[mode] = min(secs)
            row[mode + "_all"] = secs
            row[mode + "_load"] = [r["load_before"] for r in runs]
            row[mode + "_cpu"] = min(r["cpu_seconds"] for r in runs)
            row[mode + "_rss"] = max(r["peak_rss_mb"] for r in runs)
            row[mode + "_ratio"] = round(min(secs) / min(r["seconds"] for r in results[base][mode]), 2)
        rows.append(row)
    return rows


def table(rows, label, args, started):
    base = rows[0]["nodes"]
    nodes_arg = ",".join(str(r["nodes"]) for r in rows)
    cmd = ".venv/bin/python benchmarks/site_scale.py --nodes %s --repeat %d --label %s" % (nodes_arg, args.repeat, label)
    if args.rails:
        cmd += " --rails %d" % args.rails
    if args.ipam:
        cmd += " --ipam %s" % args.ipam
    if args.forks:
        cmd += " --forks %d" % args.forks
    if args.profile:
        cmd += " --profile"
    if args.plan:
        cmd += " --plan"
    out = [
        "<!-- site_scale:%s:begin (written by benchmarks/site_scale.py) -->" % label,
        "**%s** — measured %s, commit `%s`, ansible-core %s, forks %s, 2 shared cores." % (
            label, started, git_head(), ansible_version(), args.forks or "20 (ansible.cfg)"),
        "",
        "```sh",
        cmd,
        "```",
        "",
        "| nodes | `--tags never` (validation) | ratio vs %d | `--tags operator,sriov` (validation + render) | ratio vs %d "
        "| CPU s (validation / render) | peak RSS | load avg before each run |" % (base, base),
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            "| %d | **%.1f s**%s | %.2f× | **%.1f s**%s | %.2f× | %.0f / %.0f | %d MB | %s |"
            % (
                r["nodes"],
                r["validate"],
                " (runs: %s)" % ", ".join("%.1f" % s for s in r["validate_all"]) if len(r["validate_all"]) > 1 else "",
                r["validate_ratio"],
                r["render"],
                " (runs: %s)" % ", ".join("%.1f" % s for s in r["render_all"]) if len(r["render_all"]) > 1 else "",
                r["render_ratio"],
                r["validate_cpu"],
                r["render_cpu"],
                max(r["validate_rss"], r["render_rss"]),
                " / ".join("%.1f" % x for x in r["validate_load"] + r["render_load"]),
            )
        )
    out.append("<!-- site_scale:%s:end -->" % label)
    return "\n".join(out)


def write_readme(block, label, tool="site_scale"):
    """(Re)write ``tool``'s block ``label`` in benchmarks/README.md, or add it before ``<!-- tool:blocks -->``
    (the other benchmark scripts write theirs through this too)."""
    with open(README) as fh:
        text = fh.read()
    begin = "<!-- %s:%s:begin" % (tool, label)
    end = "<!-- %s:%s:end -->" % (tool, label)
    anchor = "<!-- %s:blocks -->" % tool
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + block + tail
    elif anchor in text:
        text = text.replace(anchor, block + "\n\n" + anchor, 1)
    else:
        sys.stderr.write("benchmarks/README.md has no %s anchor: figures not written there\n" % anchor)
        return False
    with open(README, "w") as fh:
        fh.write(text)
    return True


def git_head():
    proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "playbooks", "roles", "plugins"], cwd=REPO,
                           capture_output=True, text=True, check=False).stdout.strip()
    return proc.stdout.strip() + ("+local changes" if dirty else "")


def ansible_version():
    try:
        from ansible.release import __version__  # noqa: PLC0415
    except ImportError:
        return "?"
    return __version__


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--nodes", default="100,300,1000", help="comma-separated node counts, smallest first (default 100,300,1000)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per node count and mode; the table shows the fastest and all")
    ap.add_argument("--forks", type=int, help="ansible-playbook --forks (default: ansible.cfg's 20)")
    ap.add_argument("--label", default="current", help="README block to (re)write, e.g. before / after")
    ap.add_argument("--no-readme", action="store_true", help="print only, leave benchmarks/README.md alone")
    ap.add_argument("--profile", action="store_true", help="enable ansible.posix.profile_tasks and report the slowest tasks")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per ansible-playbook run")
    ap.add_argument("--json", help="write the raw figures here")
    ap.add_argument("--rails", type=int, default=0, help="RoCE rails per node (roce_rails, up to 8); 0: the one-rail variables")
    ap.add_argument("--ipam", choices=("host-local", "nv-ipam"), help="sriov_networks_ipam for every run (default: the inventory's, host-local)")
    ap.add_argument("--plan", action="store_true", help="also time writing (roce_plan_out) and reading (roce_plan) the fabric plan")
    ap.add_argument("--keep", help="work directory to keep (default: a temporary one, removed)")
    args = ap.parse_args()
    node_counts = sorted(int(n) for n in args.nodes.split(","))

    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    work = args.keep or tempfile.mkdtemp(prefix="gpufabric-site-scale-")
    os.makedirs(work, exist_ok=True)
    try:
        for nodes in node_counts:
            inv = os.path.join(work, "inv-%d" % nodes)
            if not os.path.isdir(inv):
                generate_inventory(inv, nodes, args.rails)
        results = {n: {m: [] for m, _t in MODES} for n in node_counts}
        # Interleave node counts and modes so a load spike from the other users of the machine
        # does not land on one column only.
        for attempt in range(args.repeat):
            for nodes in node_counts:
                for mode, tags in MODES:
                    r = run_site(work, nodes, tags, args, attempt)
                    results[nodes][mode].append(r)
                    print("%5d nodes  %-8s %7.2f s  (CPU %.1f s, peak RSS %d MB, load %.1f -> %.1f)%s" % (
                        nodes, mode, r["seconds"], r["cpu_seconds"], r["peak_rss_mb"], r["load_before"], r["load_after"],
                        "".join("\n      %6.2fs %s" % (s, t) for t, s in r.get("slowest_tasks", []))), flush=True)
            if args.plan:
                for nodes in node_counts:
                    plan_runs(work, nodes, args, attempt, results)
        rows = summarise(results, node_counts)
        block = table(rows, args.label, args, started)
        if args.plan:
            block = block.replace("<!-- site_scale:%s:end -->" % args.label, plan_table(results, node_counts) + "\n<!-- site_scale:%s:end -->" % args.label)
        print("\n" + block)
        largest = rows[-1]
        # Issue 10: 1,000 nodes in <= 30 s; issue 21: 10,000 nodes x 8 rails in <= 60 s.
        goal_wall = GOAL_WALL_S if largest["nodes"] <= 1000 else 2 * GOAL_WALL_S
        goals = {
            "render_%d_le_%ds" % (largest["nodes"], goal_wall): largest["render"] <= goal_wall,
            "ratio_%d_vs_%d_le_%dx" % (largest["nodes"], rows[0]["nodes"], GOAL_RATIO): max(largest["validate_ratio"], largest["render_ratio"]) <= GOAL_RATIO,
        }
        print("\ngoals: %s" % json.dumps(goals))
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"started": started, "rows": rows, "raw": results, "goals": goals}, fh, indent=2)
        if not args.no_readme:
            write_readme(block, args.label)
        return 0 if all(goals.values()) else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric plan's own cost, in-process (no Ansible around it): for N nodes x R rails, the time to validate
the fabric and build the plan, write it as JSON (what roce_plan_out writes), read it back and check it against
the run's nodes (what roce_plan does), the size of the file (the table and each node's inputs), the peak memory of this process, and the time of
one node's slice (its gateways and routes), averaged over a sample of nodes; and, side by side, the slice as the
host phase takes it (from the plan's text, routes apart) with its routes plain and in range form, with their size.
With ``--render``, also the SR-IOV render of every node from the plan read back (each node's inputs, its rails from the
plan's table: what sriov_render does in the workflow's last step).

    .venv/bin/python benchmarks/plan_io.py --nodes 1000,10000 --rails 8
    .venv/bin/python benchmarks/plan_io.py --nodes 1000 --rails 8 --render

Rails as in inventories/example-multirail, each with a /12 pool and a /26 per node (a /16 holds only 1,024).
Not a test: the machine is shared; the load average is printed with every figure.
"""

import argparse
import json
import os
import resource
import sys
import tempfile
import time

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
sys.path.insert(0, os.path.join(REPO, ".build", "collections"))

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp  # noqa: E402
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _plan_builder  # noqa: E402
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _sriov_render  # noqa: E402

PFS = ("enp12s0np0", "enp18s0np0", "enp75s0np0", "enp84s0np0", "enp141s0np0", "enp148s0np0", "enp186s0np0", "enp193s0np0")


def hostvars(nodes, rails):
    plan = [{"name": "rail%d" % r, "pf": PFS[r], "vlan": 101 + r, "subnet_pool": "10.%d.0.0/12" % (16 * r), "subnet_prefix": 26}
            for r in range(rails)]
    return {"gpu-%05d" % i: {"roce_rails": plan, "roce_node_index": i} for i in range(nodes)}


CPU = []


def timed(fn):
    """fn() and its wall seconds; its CPU seconds are appended to CPU (the machine is shared: wall time
    includes waiting for a core, CPU time does not)."""
    start, cpu = time.monotonic(), time.process_time()
    out = fn()
    CPU.append(time.process_time() - cpu)
    return out, time.monotonic() - start


def measure(nodes, rails, sample, render=False):
    del CPU[:]
    hv = hostvars(nodes, rails)
    names = list(hv)
    load = os.getloadavg()[0]
    plan, t_plan = timed(lambda: _plan_builder.build(hv, names, True))
    path = os.path.join(tempfile.mkdtemp(prefix="gpufabric-plan-"), "plan.json")

    def write():
        with open(path, "w") as fh:
            fh.write(fp.dumps(plan))

    _none, t_write = timed(write)

    def read():
        with open(path) as fh:
            return fp.check_plan(json.load(fh), names[: max(1, nodes // 10)], path, input_keys=_plan_builder.NODE_KEYS)  # a slice of 10 %

    read_plan, t_read = timed(read)
    # The workflow's last step reads the plan and renders the SR-IOV objects of every node from it: the run must render
    # every node of the plan (sriov_render's whole_fabric), and the render reads each node's inputs from the plan.
    _none, t_whole = timed(lambda: (fp.check_whole_fabric(read_plan, names), fp.node_inputs(read_plan, names)))
    step = max(1, nodes // sample)
    picked = names[::step][:sample]
    slices, t_slices = timed(lambda: [fp.node_slice(read_plan, h) for h in picked])
    routes = sum(len(r["routes"]) for r in slices[0]["rails"])
    # Side by side: the slice as the host phase takes it, from the plan's text with the routes apart, plain and in
    # range form (what vlan_gateway is given, and what its diff and registered result hold on the controller).
    text = fp.dumps(read_plan)
    apart, t_apart = timed(lambda: [fp.node_slice(text, h, routes_apart=True) for h in picked])
    ranged, t_ranged = timed(lambda: [fp.node_slice(text, h, routes_apart=True, route_ranges=True) for h in picked])
    if render:
        _none, t_render = timed(lambda: _sriov_render.render_all(fp.node_inputs(read_plan, names), names, {}, {}, {},
                                                                 table=lambda: read_plan["fabric"]))
    size = os.path.getsize(path)
    os.remove(path)
    cpu = [round(c, 2) for c in CPU]
    return {"cpu": cpu, "nodes": nodes, "rails": rails, "plan_s": round(t_plan, 2), "write_s": round(t_write, 2), "read_s": round(t_read, 2),
            "whole_s": round(t_whole, 2),
            "bytes": size, "node_slice_ms": round(1000 * t_slices / len(picked), 1), "routes_per_node": routes,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1), "load": round(load, 1),
            "apart_ms": round(1000 * t_apart / len(picked), 1), "apart_bytes": len(json.dumps(apart[0]["routes"])),
            "ranged_ms": round(1000 * t_ranged / len(picked), 1), "ranged_bytes": len(json.dumps(ranged[0]["routes"])),
            "ranged_entries": sum(len(v) for v in ranged[0]["routes"].values()), "render_s": round(t_render, 2) if render else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--nodes", default="1000,10000")
    ap.add_argument("--rails", type=int, default=8)
    ap.add_argument("--sample", type=int, default=20, help="nodes whose slice is timed")
    ap.add_argument("--render", action="store_true", help="also time the SR-IOV render of every node from the plan read back")
    args = ap.parse_args()
    print("Wall seconds (CPU seconds of this process in brackets).\n")
    print("| nodes x rails | validate + build plan | write JSON | read + check | sriov phase: whole fabric, nodes' inputs | plan size "
          "| one node's slice | routes per node | peak RSS | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for n in (int(x) for x in args.nodes.split(",")):
        r = measure(n, args.rails, args.sample, args.render)
        c = r["cpu"]
        print("| %d x %d | %.2f s (%.2f) | %.2f s (%.2f) | %.2f s (%.2f) | %.2f s (%.2f) | %.1f MB | %.1f ms (%.1f) | %d | %.0f MB | %.1f |" % (
            r["nodes"], r["rails"], r["plan_s"], c[0], r["write_s"], c[1], r["read_s"], c[2], r["whole_s"], c[3], r["bytes"] / 1e6,
            r["node_slice_ms"], 1000 * c[4] / min(args.sample, r["nodes"]), r["routes_per_node"], r["peak_rss_mb"], r["load"]), flush=True)
        rows.append(r)
    if args.render:
        print("\nThe SR-IOV render of every node from the plan read back:\n")
        print("| nodes x rails | render | load |")
        print("|---|---|---|")
        for r in rows:
            print("| %d x %d | %.2f s (%.2f) | %.1f |" % (r["nodes"], r["rails"], r["render_s"], r["cpu"][7], r["load"]), flush=True)
    print("\nOne node's routes as the gateway task passes them (from the plan's text, routes apart from the rails):\n")
    print("| nodes x rails | plain: time | plain: JSON | range form: time | range form: JSON | range entries |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        cells = (r["nodes"], r["rails"], r["apart_ms"], r["apart_bytes"] / 1e3, r["ranged_ms"], r["ranged_bytes"] / 1e3, r["ranged_entries"])
        print("| %d x %d | %.1f ms | %.0f kB | %.1f ms | %.1f kB | %d |" % cells, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

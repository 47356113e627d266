#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a node's boot pays to put its gateway routes back (vlan_gateway with persist: true), on this machine's kernel:
each rail's routes file replayed by one `ip -force -batch` (the unit's form since 2c5a34c), side by side with one
`ip route replace` process per route (the unit's form before it, one ExecStart line per route).

    sudo .venv/bin/python benchmarks/routes_boot.py --nodes 1000,10000 --rails 8

The routes are the files vlan_gateway writes for one node in the middle of the fleet: the fabric plan of N nodes x
R rails as benchmarks/plan_io.py builds it, the node's slice in range form (what host_network hands the module), the
module's own validate_params (which expands the ranges) and render_routes. They are installed in a network namespace
of this run's own, on veth devices named as the gateways (the host kernel has no 8021q; onlink routes need only a
link that is up), read back with `ip -j route` and counted, then flushed. The per-process form is timed on rail 0
only (--per-process-rails to change it) and scaled to every rail. Root is needed for the namespace.

Not a test: the machine is shared; the load average is printed beside every figure. Not the lab: a VM's boot adds
systemd's ordering and the VLAN's creation, which the lab_reboot scenario proves (one route per rail).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
sys.path.insert(0, os.path.join(REPO, ".build", "collections"))
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

from plan_io import hostvars  # noqa: E402

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp  # noqa: E402
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table  # noqa: E402
from ansible_collections.gpufabric.roce.plugins.module_utils._host.vlan_gateway import validate_params  # noqa: E402
from ansible_collections.gpufabric.roce.plugins.module_utils._host.vlan_gateway_unit import render_routes  # noqa: E402


def routes_files(nodes, rails):
    """{gateway name: (its address, the routes file's text)} of the node in the middle of the fleet."""
    hv = hostvars(nodes, rails)
    names = list(hv)
    host = names[nodes // 2]
    text = fp.dumps(fp.build_plan(fabric_table(hv, names), True))
    node = fp.node_slice(text, host, routes_apart=True, route_ranges=True)
    out = {}
    for rail in node["rails"]:
        params = {"pf": rail["pf"], "vlan_id": rail["vlan_id"], "name": rail["name"], "mtu": rail["mtu"],
                  "addresses": rail["addresses"], "routes": node["routes"][rail["name"]]}
        out[rail["name"]] = (rail["addresses"][0], render_routes(validate_params(host, params)))
    return host, out


def ip(ns, *args, **kw):
    return subprocess.run(["ip", "-n", ns] + list(args), check=True, capture_output=True, text=True, **kw)


def static_routes(ns):
    return len(json.loads(ip(ns, "-j", "route", "show", "proto", "static").stdout or "[]"))


def measure(ns, nodes, rails, per_process_rails, workdir):
    load = os.getloadavg()[0]
    host, files = routes_files(nodes, rails)
    for k, (name, (address, _text)) in enumerate(files.items()):
        ip(ns, "link", "add", name, "type", "veth", "peer", "name", "peer%d" % k)
        ip(ns, "link", "set", name, "up")
        ip(ns, "link", "set", "peer%d" % k, "up")
        ip(ns, "addr", "add", address, "dev", name)
    total = 0
    batch = 0.0
    for name, (_address, text) in files.items():
        path = os.path.join(workdir, "gpufabric-vlan-%s.routes" % name)
        with open(path, "w") as fh:
            fh.write(text)
        start = time.monotonic()
        ip(ns, "-force", "-batch", path)
        batch += time.monotonic() - start
        total += text.count("\n")
    installed = static_routes(ns)
    if installed != total:
        raise SystemExit("ip -batch installed %d routes, the files hold %d" % (installed, total))
    ip(ns, "route", "flush", "proto", "static")
    # The unit's form before the routes file: one ip process per route (ExecStart=/sbin/ip route replace ...).
    lines = [line for _name, (_a, text) in list(files.items())[:per_process_rails] for line in text.splitlines()]
    start = time.monotonic()
    for line in lines:
        subprocess.run(["ip", "-n", ns] + line.split(), check=True)
    per_process = time.monotonic() - start
    installed = static_routes(ns)
    if installed != len(lines):
        raise SystemExit("the per-route processes installed %d routes, expected %d" % (installed, len(lines)))
    ip(ns, "route", "flush", "proto", "static")
    for name in files:
        ip(ns, "link", "del", name)
    size = sum(len(text) for _a, text in files.values())
    return {"nodes": nodes, "rails": rails, "host": host, "routes": total, "file_kb": round(size / 1024.0),
            "batch_s": round(batch, 2), "per_process_s": round(per_process * rails / max(1, per_process_rails), 1),
            "per_process_measured": len(lines), "load": round(load, 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--nodes", default="1000,10000")
    ap.add_argument("--rails", type=int, default=8)
    ap.add_argument("--per-process-rails", type=int, default=1, help="rails whose routes are also installed one process each")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("routes_boot.py: needs root for its network namespace")
    ns = "gpufabric-bench-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", ns], check=True)
    print("Kernel %s. Wall seconds; the per-process column is measured on %d rail(s) and scaled to every rail.\n"
          % (os.uname().release, args.per_process_rails))
    print("| nodes x rails | routes on the node | routes files | one `ip -force -batch` per rail (all rails) "
          "| one `ip route replace` per route (all rails) | load |")
    print("|---|---|---|---|---|---|")
    try:
        with tempfile.TemporaryDirectory(prefix="gpufabric-routes-") as workdir:
            for n in (int(x) for x in args.nodes.split(",")):
                r = measure(ns, n, args.rails, args.per_process_rails, workdir)
                print("| %d x %d | %d | %d kB | **%.2f s** | %.1f s (%d routes timed) | %.1f |" % (
                    r["nodes"], r["rails"], r["routes"], r["file_kb"], r["batch_s"], r["per_process_s"],
                    r["per_process_measured"], r["load"]), flush=True)
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


if __name__ == "__main__":
    main()

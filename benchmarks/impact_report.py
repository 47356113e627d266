#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The change-impact report's own cost, in-process (no Ansible around it): for N nodes x R rails, results shaped as
sriov_vf and vlan_gateway return them (host VF mode; every node's gateways gain one route per other node of the
sample, every tenth node has a VF reset) and policies and node states as the cluster returns them (every fifth
node's numVfs changes), the time to build every node's host part, the operator part, the report and its table,
and the size of the JSON that roce_impact_out writes.

    .venv/bin/python benchmarks/impact_report.py --nodes 1000,10000 --rails 8

What it leaves out: reading the registered results through hostvars (HostVars.raw_get per node, as the filter does;
see site_scale.py for a whole site.yml). Not a test: the machine is shared; the load average is printed.
"""

import argparse
import json
import os
import resource
import sys
import time

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
sys.path.insert(0, os.path.join(REPO, ".build", "collections"))

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import impact as im  # noqa: E402
from ansible_collections.gpufabric.roce.plugins.module_utils._common import route_ranges as rr  # noqa: E402
from ansible_collections.gpufabric.roce.plugins.module_utils._host import vlan_gateway as vg  # noqa: E402

HOSTNAME = "kubernetes.io/hostname"
ROUTES_PER_GATEWAY = 8  # a sample: the real count is the number of other nodes of the rail


def host_results(i, rails):
    vf = [{"changed": True, "pf": "pf%d" % r, "num_vfs": 8, "vf_reset": i % 10 == 0,
           "diff": {"before": {"num_vfs": 4 if i % 10 == 0 else 0}, "after": {"num_vfs": 8}}} for r in range(rails)]
    gws = []
    for r in range(rails):
        routes = [{"dst": "10.%d.%d.0/26" % (r, k), "via": "10.%d.%d.1" % (r, k), "metric": 0, "onlink": True} for k in range(ROUTES_PER_GATEWAY)]
        # Shaped by the module's own functions: the diff's routes in range form, and the changes it reports.
        gws.append({"changed": True, "interface": "pf%d.%d" % (r, 100 + r), "diff": {
            "before": {"present": True, "mtu": 9000, "addresses": ["10.%d.255.1/26" % r], "routes": rr.compress(routes[:-1])},
            "after": {"present": True, "mtu": 9000, "addresses": ["10.%d.255.1/26" % r], "routes": rr.compress(routes[1:])}},
            "route_changes": vg.route_changes(routes[:-1], routes[1:])})
    return [{"results": vf}], [{"results": gws}]


def policies(nodes, rails, num_vfs_of):
    return [{"metadata": {"name": "roce-%s-rail%d" % (n, r)}, "spec": {"nodeSelector": {HOSTNAME: n}, "nicSelector": {"pfNames": ["pf%d" % r]},
                                                                       "numVfs": num_vfs_of(i), "mtu": 9000, "isRdma": True}}
            for i, n in enumerate(nodes) for r in range(rails)]


def measure(count, rails):
    nodes = ["gpu-%05d" % i for i in range(count)]
    live = policies(nodes, rails, lambda i: 8)
    rendered = policies(nodes, rails, lambda i: 16 if i % 5 == 0 else 8)
    states = [{"metadata": {"name": n}, "status": {"interfaces": [{"name": "pf%d" % r, "numVfs": 8, "totalvfs": 16, "vendor": "15b3"}
                                                                  for r in range(rails)]}} for n in nodes]
    results = [host_results(i, rails) for i in range(count)]
    load = os.getloadavg()[0]
    t0, c0 = time.monotonic(), time.process_time()
    hosts = {n: im.host_impact(vf, gw, True) for n, (vf, gw) in zip(nodes, results)}
    t1 = time.monotonic()
    operator = im.operator_impact(rendered, live, states, [])
    t2 = time.monotonic()
    data = im.report(nodes, hosts, operator)
    t3 = time.monotonic()
    cpu = time.process_time() - c0
    size = len(json.dumps(data, indent=2))
    print("%6d nodes x %d rails: host parts %.2f s, operator part %.2f s, report + table %.2f s (CPU %.2f s); "
          "JSON %.1f MB; %d disrupted; peak RSS %d MB; load %.1f"
          % (count, rails, t1 - t0, t2 - t1, t3 - t2, cpu, size / 1e6, data["disrupted"],
             resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, load))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", default="1000,10000")
    ap.add_argument("--rails", type=int, default=8)
    args = ap.parse_args()
    for count in (int(n) for n in args.nodes.split(",")):
        measure(count, args.rails)


if __name__ == "__main__":
    main()

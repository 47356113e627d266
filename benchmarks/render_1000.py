"""Render SR-IOV policies and networks for N generated nodes, two ways, side by side in one run.

  fast : the gpufabric.roce.sriov_networks role in render mode (one filter call validates and renders
         every node, then one copy per kind writes multi-document YAML files);
  naive: one ansible.builtin.template task looping over the nodes, rendering each node's policy and
         network from hostvars[item] into one file per node (no validation at all). It costs about a
         module run per node, so by default it renders the first 100 nodes of the same 1,000-node
         inventory and the time is extrapolated linearly (also reported un-extrapolated, a lower bound).

Both run as ansible-playbook against the same generated inventory; the reported figure for each is the
time of the rendering tasks alone (timestamps taken inside the play), plus the whole ansible-playbook
wall time. It also times the pure-Python renderer in-process.

    python benchmarks/render_1000.py                      # 1,000 nodes, naive loop on 100 of them
    python benchmarks/render_1000.py --naive-nodes 1000   # naive loop on all 1,000 (slow)
    python benchmarks/render_1000.py --nodes 200 --keep /tmp/bench

Goals (issue 4): fast <= 5 s for 1,000 nodes and >= 20x faster than naive.
"""

import argparse
import ipaddress
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))

FAST_PLAY = """---
- name: fast - sriov_networks role in render mode (one filter pass)
  hosts: localhost
  connection: local
  gather_facts: false
  vars:
    roce_k8s_mode: render
    roce_render_dir: "{{ out_dir }}/fast"
  tasks:
    - name: Start
      ansible.builtin.set_fact:
        t0: "{{ now(utc=true).timestamp() }}"
    - name: Render every node
      ansible.builtin.include_role:
        name: gpufabric.roce.sriov_networks
    - name: Stop
      ansible.builtin.debug:
        msg: "BENCH fast {{ now(utc=true).timestamp() | float - t0 | float }}"
"""

NAIVE_PLAY = """---
- name: naive - one template task per node
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Start
      ansible.builtin.set_fact:
        t0: "{{ now(utc=true).timestamp() }}"
    - name: Create the output directory
      ansible.builtin.file:
        path: "{{ out_dir }}/naive"
        state: directory
        mode: "0755"
    - name: Render each node's policy and network
      ansible.builtin.template:
        src: node.yaml.j2
        dest: "{{ out_dir }}/naive/{{ item }}.yaml"
        mode: "0644"
      loop: "{{ groups['roce_nodes'][:naive_nodes | int] }}"
    - name: Stop
      ansible.builtin.debug:
        msg: "BENCH naive {{ now(utc=true).timestamp() | float - t0 | float }}"
"""

NAIVE_TEMPLATE = """{% set h = hostvars[item] %}{% set node = h.roce_node_name | default(item) %}---
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata:
  name: roce-{{ node }}
  namespace: nvidia-network-operator
spec:
  resourceName: roce_{{ node | replace('-', '_') }}
  nodeSelector:
    kubernetes.io/hostname: {{ node }}
  priority: 99
  mtu: {{ h.roce_mtu | default(9000) }}
  numVfs: {{ h.roce_num_vfs | default(8) }}
  nicSelector:
    pfNames: [{{ h.roce_pf }}]
    vendor: "15b3"
  deviceType: netdevice
  isRdma: true
  linkType: eth
---
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetwork
metadata:
  name: roce-{{ node }}
  namespace: nvidia-network-operator
spec:
  resourceName: roce_{{ node | replace('-', '_') }}
  networkNamespace: default
  vlan: {{ h.roce_vlan_id | default(100) }}
  vlanQoS: 0
  trust: "on"
  spoofChk: "off"
  linkState: enable
  ipam: '{{ {"type": "host-local", "subnet": h.roce_pod_subnet, "gateway": h.roce_pod_gateway, "routes": [{"dst": "0.0.0.0/0"}]} | to_json }}'
"""


def generate_inventory(path, nodes):
    os.makedirs(os.path.join(path, "group_vars"), exist_ok=True)
    base = ipaddress.ip_network("10.128.0.0/16")
    subnets = base.subnets(new_prefix=30)
    lines = ["all:", "  children:", "    roce_nodes:", "      hosts:"]
    for i in range(1, nodes + 1):
        net = next(subnets)
        hosts = list(net.hosts())
        lines.append("        gpu-%04d: {roce_pod_subnet: '%s', roce_pod_gateway: '%s'}" % (i, net, hosts[-1]))
    lines += [
        "    k8s_controller:",
        "      hosts:",
        "        localhost:",
        "          ansible_connection: local",
        "          ansible_python_interpreter: " + sys.executable,
    ]
    with open(os.path.join(path, "hosts.yml"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    with open(os.path.join(path, "group_vars", "roce_nodes.yml"), "w") as fh:
        fh.write("roce_pf: enp157s0np0\nroce_num_vfs: 8\nroce_mtu: 9000\nroce_vlan_id: 100\n")


def collections_path(work):
    link = os.path.join(work, "collections", "ansible_collections", "gpufabric", "roce")
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if not os.path.exists(link):
        os.symlink(REPO, link)
    return os.path.join(work, "collections")


def run_play(work, play, name, env, extra=()):
    path = os.path.join(work, name + ".yml")
    with open(path, "w") as fh:
        fh.write(play)
    cmd = ["ansible-playbook", "-i", os.path.join(work, "inventory"), path, "-e", "out_dir=" + os.path.join(work, "out"), *extra]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit("%s play failed (rc=%d)" % (name, proc.returncode))
    phase = None
    for line in proc.stdout.splitlines():
        if "BENCH " + name in line:
            phase = float(line.split("BENCH " + name, 1)[1].strip().strip("\"'"))
    return phase, wall


def in_process(nodes):
    from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov import SRIOV_DEFAULT_KEYS, render_sriov  # noqa: PLC0415
    from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults  # noqa: PLC0415

    base = ipaddress.ip_network("10.128.0.0/16").subnets(new_prefix=30)
    hv = {}
    for i in range(1, nodes + 1):
        net = next(base)
        hv["gpu-%04d" % i] = {"roce_pf": "enp157s0np0", "roce_pod_subnet": str(net), "roce_pod_gateway": str(list(net.hosts())[-1])}
    defaults = with_role_defaults("sriov_networks", SRIOV_DEFAULT_KEYS)  # what the filter hands over
    start = time.perf_counter()
    out = render_sriov(list(hv), hv, defaults)
    return time.perf_counter() - start, len(out["policies"]), len(out["networks"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument(
        "--naive-nodes",
        type=int,
        default=100,
        help="nodes the naive loop renders (default 100: about 1 s per node on a loaded 2-core box); it scales linearly, "
        "the result is extrapolated to --nodes and also compared un-extrapolated. Use --naive-nodes 1000 for the full run.",
    )
    ap.add_argument("--keep", help="work directory to keep (default: a temporary one, removed)")
    args = ap.parse_args()

    work = args.keep or tempfile.mkdtemp(prefix="gpufabric-bench-")
    os.makedirs(work, exist_ok=True)
    try:
        generate_inventory(os.path.join(work, "inventory"), args.nodes)
        with open(os.path.join(work, "node.yaml.j2"), "w") as fh:
            fh.write(NAIVE_TEMPLATE)
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path(work), ANSIBLE_STDOUT_CALLBACK="default", ANSIBLE_FORCE_COLOR="0")
        env.pop("ANSIBLE_CONFIG", None)

        sys.path.insert(0, os.path.join(work, "collections"))
        py_time, n_pol, n_net = in_process(args.nodes)
        fast_phase, fast_wall = run_play(work, FAST_PLAY, "fast", env)
        naive_n = min(args.naive_nodes, args.nodes)
        naive_phase, naive_wall = run_play(work, NAIVE_PLAY, "naive", env, ("-e", "naive_nodes=%d" % naive_n))

        fast_files = sorted(os.listdir(os.path.join(work, "out", "fast", "sriov-networks")))
        naive_files = len(os.listdir(os.path.join(work, "out", "naive")))
        naive_full = naive_phase / naive_n * args.nodes
        result = {
            "nodes": args.nodes,
            "pure_python_render_s": round(py_time, 3),
            "pure_python_objects": n_pol + n_net,
            "fast_render_s": round(fast_phase, 2),
            "fast_playbook_wall_s": round(fast_wall, 2),
            "fast_files": fast_files,
            "naive_nodes_rendered": naive_n,
            "naive_render_s": round(naive_phase, 2),
            "naive_playbook_wall_s": round(naive_wall, 2),
            "naive_files": naive_files,
            "naive_s_per_node": round(naive_phase / naive_n, 3),
            "naive_render_s_for_all_nodes": round(naive_full, 1) if naive_n < args.nodes else round(naive_phase, 2),
            "naive_extrapolated": naive_n < args.nodes,
            "speedup": round(naive_full / fast_phase, 1),
            "speedup_lower_bound_unextrapolated": round(naive_phase / fast_phase, 1),
            "goal_fast_le_5s": fast_phase <= 5.0,
            "goal_speedup_ge_20x": naive_full / fast_phase >= 20.0,
        }
        print(json.dumps(result, indent=2))
        print(
            "\n%d nodes: fast %.2f s (playbook %.2f s); naive template loop %.2f s for %d nodes (%.2f s/node%s) -> %.1fx "
            "(lower bound, naive on %d nodes vs fast on %d: %.1fx); pure-Python renderer %.3f s"
            % (
                args.nodes,
                fast_phase,
                fast_wall,
                naive_phase,
                naive_n,
                naive_phase / naive_n,
                ", %.0f s extrapolated to %d" % (naive_full, args.nodes) if naive_n < args.nodes else "",
                naive_full / fast_phase,
                naive_n,
                args.nodes,
                naive_phase / fast_phase,
                py_time,
            )
        )
        return 0 if result["goal_fast_le_5s"] and result["goal_speedup_ge_20x"] else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host phases of playbooks/site.yml (preflight, host_network) on generated nodes: forks 20 and 100 side by side.

Issue 21: module runs per node and wall time per 1,000 nodes, so that a user can size forks and AWX slices.
For every rail count (1: the seed's roce_pf variables; 8: inventories/example-multirail's rails, without the
seed's roce_pf and roce_vlan_id, as in that inventory), node count
and forks value it runs the real, unmodified playbooks/site.yml once:

    ansible-playbook -i <generated inventory> playbooks/site.yml --check --tags preflight,host_network --forks F

on an inventory from site_scale.generate_inventory() (the seed's group_vars, one host_vars file per node) with
roce_vf_mode: host, so phase 2 runs sriov_vf, and every node reached over the local connection.

THE STAND-IN for N GPU nodes is this one machine, N times over, in check mode:

- every node is ``ansible_connection: local``: each module run is a real fork of ansible-playbook's worker,
  ``/bin/sh``, a fresh Python running the AnsiballZ payload (pipelined, as ansible.cfg makes the SSH runs; the
  local connection gets it through ANSIBLE_PIPELINING), the module's
  imports (pyroute2 included) and its reads; what is missing is the SSH round trip of each run (one per
  module with pipelining) and the node's own CPU: here all N nodes' module processes share the
  controller's cores, so the figures are an upper bound for the controller side when the cores are the limit;
- /sys is a generated tree, bind-mounted over /sys in a private mount namespace (so the modules run with
  their default sysfs_root, exactly as on a node): one GPU node's PCI layout with the inventory's PFs as
  ConnectX functions (8 VFs each, the count the inventory asks for: the converged state, so sriov_vf
  dumps the VF table), a GPU beside each NIC under one PCIe switch, RDMA devices with RoCE v2 GIDs,
  IOMMU groups, the 8021q/mlx5_ib/nvidia_peermem modules loaded;
- the netlink side is a private network namespace holding a Linux bridge for every PF and VF netdev of
  the tree (this kernel has no dummy, veth, 8021q or RDMA; bridges are built in). vlan_gateway and
  sriov_vf find their PF there and do their real netlink reads; the VLAN gateway cannot exist (no 8021q),
  so vlan_gateway always plans "create the VLAN interface, add its address and every route" (a first
  rollout) and the route-table dump it makes for an existing gateway is not in these figures;
  sriov_vf's VF-table dump of a bridge returns no VFs, which with no per-VF settings (roce_vfs: []) is
  "nothing to change", as on a converged node;
- ib_write_bw and the other perftest binaries are empty stand-ins on PATH (the preflight only looks them up).

Every module run succeeds, so each node runs the phases' full task list; the module runs per node are
counted by a callback (results that carry a module invocation, loop items one by one) in the two phase plays.

Wall times: the whole ansible-playbook run, and the two phase plays alone (from the callback's play start
times); the rest is the validation plays (tagged always) and the change-impact report. Also: the peak
proportional set size (PSS) of the controller, ansible-playbook and its fork workers (module processes
excluded: on real nodes they run there), the main process's peak RSS, and the load average around each run.

    .venv/bin/python benchmarks/host_phases.py        # 1 rail on 100 nodes, 8 rails on 50 nodes, forks 20 and 100
    .venv/bin/python benchmarks/host_phases.py --nodes 100,300 --nodes-multirail 100,300   # the whole of issue 21's matrix
    .venv/bin/python benchmarks/host_phases.py --nodes-multirail 20 --rails 8 --forks 20 --no-readme   # a quick look

The defaults took 22 minutes on 2 shared cores: every module run costs about 0.5 s of CPU here (0.48-0.57 s
measured, controller and the nodes' module processes together, all on this machine), so a 300-node, 8-rail run is
5,400 module runs, about 2,700 CPU-seconds: 23 minutes per forks value with both cores to itself, 30-40 minutes at
the 1.2-1.5 cores the measured runs got. The per-1,000-node column is linear from the measured node count.

Needs root or unprivileged user namespaces (it re-runs itself under ``unshare --net --mount``).
Not a test: the machine is shared, so figures vary with its load (reported with every figure).
"""

import argparse
import datetime
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from site_scale import REPO, ansible_env, ansible_version, generate_inventory, git_head, write_readme  # noqa: E402

SITE = os.path.join(REPO, "playbooks", "site.yml")
# The work tree's commit as the run starts: what every row measures, whatever is committed meanwhile.
HEAD = git_head()
PHASE_PLAYS = ("Phase 1 - preflight", "Phase 2 - host networking")
ONE_RAIL_PF = "enp157s0np0"
PERFTEST_BINARIES = ("ib_write_bw", "ib_write_lat", "ib_read_bw", "ib_send_bw")
VFS_PER_PF = 8

CALLBACK = '''
"""host_phases.py's counter: module runs per host and play, and when each play started."""
import json
import os
import time

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "host_phases_count"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.plays = []
        self.runs = {}
        self.failed = {}

    def v2_playbook_on_play_start(self, play):
        self.plays.append([play.get_name(), time.time()])

    def _count(self, result, failed=False):
        data = result.result
        # A loop's summary result repeats its items, which were counted one by one.
        if "results" in data or "invocation" not in data:
            return
        play = self.plays[-1][0]
        host = result.host.get_name()
        module = result.task.action.split(".")[-1]
        per_host = self.runs.setdefault(play, {}).setdefault(host, {})
        per_host[module] = per_host.get(module, 0) + 1
        if failed:
            self.failed.setdefault(play, {}).setdefault(host, []).append(module)

    def v2_runner_on_ok(self, result):
        self._count(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._count(result, failed=True)

    def v2_runner_item_on_ok(self, result):
        self._count(result)

    def v2_runner_item_on_failed(self, result):
        self._count(result, failed=True)

    def v2_playbook_on_stats(self, stats):
        with open(os.environ["HOST_PHASES_COUNT_OUT"], "w") as fh:
            json.dump({"plays": self.plays, "end": time.time(), "runs": self.runs, "failed": self.failed}, fh)
'''


# ---- the stand-in node: network namespace and sysfs tree ----------------------------------------------

def rail_pfs(rails):
    """The PF netdevs the generated inventory names: the seed's roce_pf, or the multirail seed's rails."""
    if rails == 1:
        return [ONE_RAIL_PF]
    with open(os.path.join(REPO, "inventories", "example-multirail", "group_vars", "roce_nodes.yml")) as fh:
        pfs = re.findall(r"^  - \{name: rail\d+, pf: ([^,]+),", fh.read(), re.M)
    return pfs[:rails]


def vf_netdev(pf, vf):
    # mlx5's naming of a VF netdev (enp12s0f0v3 style) is udev's; any valid name serves, at most 15 characters.
    return "%sv%d" % (pf[:12], vf)


def netns_links(pfs):
    """Replace this namespace's bridges by one per PF and VF netdev of ``pfs``; {name: ifindex}."""
    out = subprocess.run(["ip", "-o", "link", "show", "type", "bridge"], capture_output=True, text=True, check=True).stdout
    batch = ["link del %s" % line.split(":")[1].strip() for line in out.splitlines() if line.strip()]
    for pf in pfs:
        # MTU 9000 as the seed's roce_mtu; vlan_gateway refuses a gateway MTU above its PF's.
        batch.append("link add %s mtu 9000 type bridge" % pf)
        batch.append("link set %s up" % pf)
        batch += ["link add %s type bridge" % vf_netdev(pf, v) for v in range(VFS_PER_PF)]
    batch.append("link set lo up")
    subprocess.run(["ip", "-batch", "-"], input="\n".join(batch) + "\n", text=True, check=True)
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    return {m.group(2): int(m.group(1)) for m in re.finditer(r"^(\d+): ([^:@]+)[:@]", out, re.M)}


def pf_bus(pf):
    """enp12s0np0 -> 12: the PCI bus its udev name encodes."""
    m = re.match(r"^enp(\d+)s", pf)
    return int(m.group(1)) if m else 0x9D


def node_tree(root, pfs, ifindex):
    """A sysfs tree of one GPU node under root/sys: per PF a host bridge, root port and PCIe switch with the
    ConnectX PF (and its VFs) and one GPU behind it; the layout's shape follows tests/unit/fixtures/
    sysfs_gpu_two_socket.json (itself derived, not a capture)."""
    files, links, dirs = {}, {}, ["sys/class/iommu/dmar0", "sys/module/8021q", "sys/module/mlx5_ib",
                                  "sys/module/mlx5_core", "sys/module/nvidia", "sys/module/nvidia_peermem"]

    def pci(path, cls, vendor, device, numa):
        addr = path.rsplit("/", 1)[1]
        files.update({path + "/class": cls, path + "/vendor": vendor, path + "/device": device, path + "/numa_node": str(numa)})
        links["sys/bus/pci/devices/" + addr] = path

    links["sys/class/net/lo"] = "sys/devices/virtual/net/lo"
    files.update({"sys/devices/virtual/net/lo/mtu": "65536", "sys/devices/virtual/net/lo/ifindex": "1",
                  "sys/devices/virtual/net/lo/operstate": "unknown", "sys/devices/virtual/net/lo/address": "00:00:00:00:00:00"})
    for n, pf in enumerate(pfs):
        bus = pf_bus(pf)
        numa = 0 if n < (len(pfs) + 1) // 2 else 1
        hb = "sys/devices/pci0000:%02x" % (bus - 3)
        rp = "%s/0000:%02x:01.0" % (hb, bus - 3)
        up = "%s/0000:%02x:00.0" % (rp, bus - 2)
        down_nic, down_gpu = "%s/0000:%02x:00.0" % (up, bus - 1), "%s/0000:%02x:01.0" % (up, bus - 1)
        pci(rp, "0x060400", "0x8086", "0x0000", numa)
        for bridge in (up, down_nic, down_gpu):
            pci(bridge, "0x060400", "0x1000", "0xc030", numa)
        gpu = "%s/0000:%02x:00.0" % (down_gpu, bus + 1)
        pci(gpu, "0x030200", "0x10de", "0x2330", numa)
        links[gpu + "/driver"] = "sys/bus/pci/drivers/nvidia"
        nic = "%s/0000:%02x:00.0" % (down_nic, bus)
        pci(nic, "0x020000", "0x15b3", "0x101d", numa)
        links[nic + "/driver"] = "sys/bus/pci/drivers/mlx5_core"
        files.update({nic + "/sriov_numvfs": str(VFS_PER_PF), nic + "/sriov_totalvfs": "16"})
        dirs.append("%s/net/%s" % (nic, pf))
        dirs.append("sys/kernel/iommu_groups/%d" % (2 * n))
        net = "sys/class/net/" + pf
        links[net + "/device"] = nic
        mac = "b8:3f:d2:%02x:00:01" % n
        files.update({net + "/mtu": "9000", net + "/operstate": "up", net + "/speed": "400000", net + "/address": mac,
                      net + "/ifindex": str(ifindex[pf])})
        for v in range(VFS_PER_PF):
            fn = v + 2
            vf = "%s/0000:%02x:%02x.%d" % (down_nic, bus, fn // 8, fn % 8)
            pci(vf, "0x020000", "0x15b3", "0x101e", numa)
            links[nic + "/virtfn%d" % v] = vf
            links[vf + "/physfn"] = nic
            vname = vf_netdev(pf, v)
            dirs.append("%s/net/%s" % (vf, vname))
            links["sys/class/net/%s/device" % vname] = vf
            files.update({"sys/class/net/%s/mtu" % vname: "9000", "sys/class/net/%s/ifindex" % vname: str(ifindex[vname])})
        ib = "sys/class/infiniband/mlx5_%d" % n
        links[ib + "/device"] = nic
        files.update({ib + "/node_type": "1: CA", ib + "/fw_ver": "28.43.1014", ib + "/node_guid": "b83f:d203:0000:%04x" % n})
        port = ib + "/ports/1"
        files.update({port + "/link_layer": "Ethernet", port + "/state": "4: ACTIVE", port + "/phys_state": "5: LinkUp",
                      port + "/rate": "400 Gb/sec (4X NDR)"})
        eui = "fe80:0000:0000:0000:ba3f:d2ff:fe%02x:0001" % n
        for gid, kind in ((0, "IB/RoCE v1"), (1, "RoCE v2")):
            files.update({"%s/gids/%d" % (port, gid): eui, "%s/gid_attrs/types/%d" % (port, gid): kind,
                          "%s/gid_attrs/ndevs/%d" % (port, gid): pf})
    # The kernel's own command line says nothing here (this machine's /proc is read); the IOMMU is judged
    # from sys/class/iommu and the groups, as on a node booted with intel_iommu=on.
    for path in dirs:
        os.makedirs(os.path.join(root, path), exist_ok=True)
    for path, content in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(content + "\n")
    for path, target in links.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        os.makedirs(os.path.join(root, target), exist_ok=True)
        os.symlink(os.path.relpath(os.path.join(root, target), os.path.dirname(full)), full)
    return os.path.join(root, "sys")


def stub_bin(work):
    path = os.path.join(work, "bin")
    os.makedirs(path, exist_ok=True)
    for name in PERFTEST_BINARIES:
        with open(os.path.join(path, name), "w") as fh:
            fh.write("#!/bin/sh\n# stand-in: the preflight only looks perftest up on PATH\nexit 1\n")
        os.chmod(os.path.join(path, name), 0o755)
    return path


def inventory(work, nodes, rails, code=None):
    """The generated inventory, seeded from the checkout that runs it (``code``: another commit's), so that each commit
    gets the example group_vars it shipped with (a default it does not know would stop its validation)."""
    name, site = (code[0], code[1]) if code else ("work-tree", SITE)
    path = os.path.join(work, "inv-%d-r%d-%s" % (nodes, rails, name))
    if os.path.isdir(path):
        return path
    generate_inventory(path, nodes, 0 if rails == 1 else rails, seed=os.path.dirname(os.path.dirname(site)))
    group = os.path.join(path, "group_vars", "roce_nodes.yml")
    with open(group) as fh:
        text = fh.read()
    # Host VF mode, so phase 2 runs sriov_vf; the node's python is the venv's (it has pyroute2).
    text = text.replace("roce_vf_mode: operator", "roce_vf_mode: host")
    if rails > 1:
        # generate_inventory() keeps the one-rail seed's roce_pf and roce_vlan_id beside the rails; a multirail
        # inventory (inventories/example-multirail) has neither, and with roce_pf the preflight would judge
        # that PF's RDMA driver too.
        text = re.sub(r"^roce_(pf|vlan_id): .*\n", "", text, flags=re.M)
    text += "\n# host_phases.py: every node is this machine\nansible_connection: local\nansible_python_interpreter: %s\n" % sys.executable
    with open(group, "w") as fh:
        fh.write(text)
    return path


# ---- one run -------------------------------------------------------------------------------------------

class Sampler(threading.Thread):
    """Peak PSS of ansible-playbook and its fork workers (same command line; the module processes are
    /bin/sh and python children with their own), and the main process's peak RSS (VmHWM)."""

    def __init__(self, pid, interval=2.0):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_pss_kb = 0
        self.peak_workers = 0
        self.main_hwm_kb = 0
        self.loads = []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.wait(self.interval):
            self.sample()

    def sample(self):
        children = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % entry) as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
        tree, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo += children.get(pid, [])
        pss, workers = 0, 0
        for pid in tree:
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as fh:
                    if b"ansible-playbook" not in fh.read():
                        continue
                with open("/proc/%d/smaps_rollup" % pid) as fh:
                    pss += next(int(line.split()[1]) for line in fh if line.startswith("Pss:"))
                workers += pid != self.pid
                if pid == self.pid:
                    with open("/proc/%d/status" % pid) as fh:
                        hwm = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
                    self.main_hwm_kb = max(self.main_hwm_kb, hwm)
            except (OSError, StopIteration, ValueError):
                continue
        self.peak_pss_kb = max(self.peak_pss_kb, pss)
        self.peak_workers = max(self.peak_workers, workers)
        self.loads.append(os.getloadavg()[0])


def checkout(work, ref):
    """``ref`` of this repository as a collection tree of its own (git worktree, detached): (its site.yml, its
    ANSIBLE_COLLECTIONS_PATH), for runs side by side with the work tree's."""
    tree = os.path.join(work, "ref-%s" % ref)
    subprocess.run(["git", "-C", REPO, "worktree", "add", "--detach", "--force", tree, ref], check=True,  # noqa: S607
                   stdout=subprocess.DEVNULL)
    root = os.path.join(work, "collections-%s" % ref)
    os.makedirs(os.path.join(root, "ansible_collections", "gpufabric"), exist_ok=True)
    os.symlink(tree, os.path.join(root, "ansible_collections", "gpufabric", "roce"))
    return os.path.join(tree, "playbooks", "site.yml"), root


def run_phases(work, inv, *, nodes, rails, forks, path_bin, timeout, code=None):
    """``code``: (name, site.yml, collections path) of another commit to run instead of the work tree."""
    name, site, collections = code or (None, SITE, None)
    tag = "n%d-r%d-f%d%s" % (nodes, rails, forks, "-" + name if name else "")
    counts = os.path.join(work, "counts-%s.json" % tag)
    log = os.path.join(work, "out-%s.log" % tag)
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inv, site, "--check",
           "--tags", "preflight,host_network", "--forks", str(forks)]
    env = ansible_env(
        **({"ANSIBLE_COLLECTIONS_PATH": collections} if collections else {}),
        ANSIBLE_CALLBACK_PLUGINS=os.path.join(work, "callback_plugins"),
        ANSIBLE_CALLBACKS_ENABLED="host_phases_count",
        HOST_PHASES_COUNT_OUT=counts,
        # ansible.cfg turns pipelining on for SSH ([ssh_connection]); the local connection reads [defaults] or
        # [connection] instead, and without it every module run would add a temporary directory and its file.
        ANSIBLE_PIPELINING="True",
        # The callback counts module runs as the results that carry their invocation, which ansible-core 2.21 and later
        # add only when asked (older ones ignore the variable).
        ANSIBLE_INJECT_INVOCATION="True",
        PATH=os.pathsep.join([os.path.dirname(sys.executable), path_bin, os.environ.get("PATH", "")]),
    )
    load_before = os.getloadavg()
    # All of the run's processes are waited for by their parents, so their CPU time ends up here.
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT)  # noqa: S603
        sampler = Sampler(proc.pid)
        sampler.start()
        try:
            rc = proc.wait(timeout=timeout)
        finally:
            sampler.stop.set()
            sampler.join()
            if proc.poll() is None:
                proc.kill()
    wall = time.monotonic() - start
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    load_after = os.getloadavg()
    if rc != 0 or not os.path.exists(counts):
        with open(log) as fh:
            sys.stderr.write(fh.read()[-6000:])
        raise SystemExit("site.yml host phases on %d nodes, %d rail(s), forks %d failed (rc=%s): %s" % (nodes, rails, forks, rc, log))
    with open(counts) as fh:
        data = json.load(fh)
    plays = data["plays"] + [["end", data["end"]]]
    play_secs = {name: plays[i + 1][1] - t for i, (name, t) in enumerate(plays[:-1])}
    phase_secs = sum(s for name, s in play_secs.items() if name.startswith(PHASE_PLAYS))
    per_host = {}
    for play, hosts in data["runs"].items():
        if not play.startswith(PHASE_PLAYS):
            continue
        for host, mods in hosts.items():
            mine = per_host.setdefault(host, {})
            for mod, n in mods.items():
                mine[mod] = mine.get(mod, 0) + n
    totals = sorted({sum(m.values()) for m in per_host.values()})
    modules = {}
    for mods in per_host.values():
        for mod, n in mods.items():
            modules[mod] = max(modules.get(mod, 0), n)
    failed = sum(len(v) for hosts in data["failed"].values() for v in hosts.values())
    if len(per_host) != nodes or failed:
        raise SystemExit("%s: module runs counted on %d of %d nodes, %d failed: %s" % (tag, len(per_host), nodes, failed, log))
    return {
        "code": name or HEAD, "nodes": nodes, "rails": rails, "forks": forks,
        "wall": round(wall, 2), "phases": round(phase_secs, 2), "cpu": round(cpu, 1),
        "plays": {k: round(v, 2) for k, v in play_secs.items()},
        "runs_per_node": totals, "modules_per_node": modules, "module_runs": sum(sum(m.values()) for m in per_host.values()),
        "peak_pss_mb": round(sampler.peak_pss_kb / 1024), "main_hwm_mb": round(sampler.main_hwm_kb / 1024),
        "peak_workers": sampler.peak_workers,
        "load_before": round(load_before[0], 2), "load_after": round(load_after[0], 2),
        "load_mean": round(sum(sampler.loads) / len(sampler.loads), 2) if sampler.loads else None,
    }


# ---- report --------------------------------------------------------------------------------------------

def fmt_modules(mods):
    return ", ".join("%s %d" % (m, n) for m, n in sorted(mods.items()))


def table(rows, label, args, started):
    cmd = ".venv/bin/python benchmarks/host_phases.py --nodes %s%s --rails %s --forks %s%s --label %s" % (
        args.nodes, " --nodes-multirail %s" % args.nodes_multirail if args.nodes_multirail else "", args.rails, args.forks,
        " --compare %s" % args.compare if args.compare else "", label)
    extrap = max(r["nodes"] for r in rows) < 1000
    out = [
        "<!-- host_phases:%s:begin (written by benchmarks/host_phases.py) -->" % label,
        "**%s** — measured %s, commit `%s`, ansible-core %s, %d cores (shared), `--check`, local connection "
        "(stand-in nodes: see above)." % (label, started, HEAD, ansible_version(), os.cpu_count()),
        "",
        "```sh",
        cmd,
        "```",
        "",
        "| code | rails | nodes | forks | module runs per node | whole run | host phases | host phases per 1,000 nodes%s "
        "| module runs / s | controller peak PSS (workers) | main RSS | load 1 min: before / mean / after |" % (
            " (linear from this run)" if extrap else ""),
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        per_node = "/".join(str(t) for t in r["runs_per_node"])
        out.append("| `%s` | %d | %d | %d | **%s** (%s) | %.1f s | %.1f s | **%.0f s** | %.1f | %d MB (%d) | %d MB | %.1f / %s / %.1f |" % (
            r["code"], r["rails"], r["nodes"], r["forks"], per_node, fmt_modules(r["modules_per_node"]), r["wall"], r["phases"],
            r["phases"] / r["nodes"] * 1000, r["module_runs"] / r["phases"], r["peak_pss_mb"], r["peak_workers"],
            r["main_hwm_mb"], r["load_before"], "%.1f" % r["load_mean"] if r["load_mean"] is not None else "?", r["load_after"]))
    out.append("<!-- host_phases:%s:end -->" % label)
    return "\n".join(out)


# ---- main ----------------------------------------------------------------------------------------------

def reexec_in_namespaces():
    """Run this script again in a private network and mount namespace (as root in a user namespace
    when not root), where the bridges and the /sys bind mount touch nothing outside."""
    cmd = ["unshare", "--net", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        cmd.append("--map-root-user")
    cmd += ["--", sys.executable, os.path.realpath(__file__), "--inside", *sys.argv[1:]]
    return subprocess.call(cmd)  # noqa: S603


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--nodes", default="100", help="comma-separated node counts (default 100)")
    ap.add_argument("--nodes-multirail", default="50", help="node counts for the rail counts above 1 (default 50): a node "
                    "with 8 rails costs 4.5 times the module runs of a one-rail node")
    ap.add_argument("--rails", default="1,8", help="comma-separated rail counts: 1 (roce_pf) and/or up to 8 (roce_rails)")
    ap.add_argument("--forks", default="20,100", help="comma-separated --forks values (default 20,100)")
    ap.add_argument("--label", default="current", help="README block to (re)write")
    ap.add_argument("--no-readme", action="store_true", help="print only, leave benchmarks/README.md alone")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per ansible-playbook run")
    ap.add_argument("--json", help="write the raw figures here")
    ap.add_argument("--keep", help="work directory to keep (default: a temporary one, removed)")
    ap.add_argument("--compare", help="a commit to run side by side with the work tree, each configuration one after the other "
                    "(a git worktree of it in the work directory)")
    ap.add_argument("--compare-rails", help="comma-separated rail counts at which --compare runs (default: every one)")
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.inside:
        return reexec_in_namespaces()
    node_counts = sorted(int(n) for n in args.nodes.split(","))
    multirail_counts = sorted(int(n) for n in (args.nodes_multirail or args.nodes).split(","))
    rail_counts = sorted(int(n) for n in args.rails.split(","))
    compare_rails = {int(n) for n in args.compare_rails.split(",")} if args.compare_rails else set(rail_counts)
    fork_counts = sorted(int(n) for n in args.forks.split(","))

    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    work = args.keep or tempfile.mkdtemp(prefix="gpufabric-host-phases-")
    os.makedirs(os.path.join(work, "callback_plugins"), exist_ok=True)
    with open(os.path.join(work, "callback_plugins", "host_phases_count.py"), "w") as fh:
        fh.write(CALLBACK)
    path_bin = stub_bin(work)
    rows = []
    codes = [None]
    if args.compare:
        ref = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", args.compare], check=True, capture_output=True,  # noqa: S607
                             text=True).stdout.strip()
        codes.insert(0, (ref, *checkout(work, ref)))
    try:
        for rails in rail_counts:
            pfs = rail_pfs(rails)
            ifindex = netns_links(pfs)
            tree = os.path.join(work, "tree-r%d" % rails)
            shutil.rmtree(tree, ignore_errors=True)
            sys_tree = node_tree(tree, pfs, ifindex)
            subprocess.run(["mount", "--bind", sys_tree, "/sys"], check=True)
            try:
                for nodes in node_counts if rails == 1 else multirail_counts:
                    # Forks side by side on the same inventory, so a load change hits both columns alike.
                    for forks in fork_counts:
                        for code in codes:
                            if code is not None and rails not in compare_rails:
                                continue
                            inv = inventory(work, nodes, rails, code)
                            r = run_phases(work, inv, nodes=nodes, rails=rails, forks=forks, path_bin=path_bin, timeout=args.timeout,
                                           code=code)
                            rows.append(r)
                            print("%s %d rail(s) %5d nodes forks %3d: %7.1f s whole, %7.1f s phases, %s runs/node (%s), "
                                  "PSS %d MB, load %.1f -> %.1f" % (
                                      r["code"], rails, nodes, forks, r["wall"], r["phases"], "/".join(map(str, r["runs_per_node"])),
                                      fmt_modules(r["modules_per_node"]), r["peak_pss_mb"], r["load_before"], r["load_after"]),
                                  flush=True)
            finally:
                subprocess.run(["umount", "/sys"], check=False)
        block = table(rows, args.label, args, started)
        print("\n" + block)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"started": started, "rows": rows}, fh, indent=2)
        if not args.no_readme:
            write_readme(block, args.label, tool="host_phases")
        return 0
    finally:
        if args.compare:
            subprocess.run(["git", "-C", REPO, "worktree", "remove", "--force", os.path.join(work, "ref-%s" % codes[0][0])],  # noqa: S607
                           check=False)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two-node kernel lab for gpufabric.roce.

The controller's own kernel has no 8021q, RDMA or netdevsim, so the host modules are
proven on two small VMs running Debian's stock kernel under QEMU (virtme-ng). Each VM is
wired like a GPU node on one switch:

    node1: fab0 (PF uplink) --+                 +-- fab0 (PF uplink) :node2     rail 0
           igb0 (SR-IOV PF) -+--- lab/hub.py --+-- igb0 (SR-IOV PF)
           fab1 (PF uplink) --+                 +-- fab1 (PF uplink)            rail 1
           igb1 (SR-IOV PF) -+--- lab/hub.py --+-- igb1 (SR-IOV PF)            (2nd segment)
           eni11np1, eni21np1 (netdevsim SR-IOV PFs, one per rail)   eni12np1, eni22np1
           rxe0 on fab0, rxe1 on fab1 (soft-RoCE)                    rxe0, rxe1
           mgmt0 (restricted slirp, SSH only)                        mgmt0

igb<r> is QEMU's Intel 82576 with SR-IOV (QEMU >= 8; the lab installs 10 from bookworm-backports):
its VFs are real PCI functions with igbvf netdevs, which the pods' network namespaces receive
through the real host-device CNI plugin (lab/guest/pod_vf.py). netdevsim serves where igb cannot:
128 VFs, link_state, min_tx_rate, 802.1ad.

inventories/lab rolls out rail 0 with the one-rail variables; inventories/lab-multirail both rails
with roce_rails (molecule/lab/multirail.yml).

Commands: build | up | down | status | ssh <node>.
Every packet stays on 127.0.0.1 or inside the VMs.
"""

import argparse
import contextlib
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time

LAB_DIR = os.path.dirname(os.path.abspath(__file__))
STATE_DIR = os.environ.get("LAB_STATE_DIR", os.path.join(LAB_DIR, "state"))
BUILD_DIR = os.environ.get("LAB_BUILD_DIR", os.path.join(LAB_DIR, "build"))
CACHED_TAG = "gpufabric_hostro"
PORT_BASE = int(os.environ.get("LAB_PORT_BASE", "22200"))
NODES = (1, 2)
BOOT_TIMEOUT = int(os.environ.get("LAB_BOOT_TIMEOUT", "240"))


def log(msg):
    print("lab: %s" % msg, flush=True)


class LabError(Exception):
    pass


def die(msg):
    raise LabError(msg)


def ssh_port(node):
    return PORT_BASE + node


def hub_port(rail=0):
    # One hub (L2 segment) per rail: rail 0 at base+10, rail 1 at base+20.
    return PORT_BASE + 10 * (rail + 1)


def nic_port(node, nic):
    """A node's NIC's own UDP port. Per rail three NICs (nic = 3 * rail + which): which 0 is the uplink
    fab<r>, 1 the virtio pod "VF" of the reboot lab (lab/rebootlab.py; this lab's pods get igb VFs), 2 the
    igb SR-IOV PF igb<r>."""
    rail, which = divmod(nic, 3)
    return hub_port(rail) + 3 * (node - 1) + 1 + which


# The NICs of this lab on each rail's hub: the uplink and the igb PF.
RAIL_NICS = {0: (0, 2), 1: (3, 5)}


def kernel_release():
    """The Debian kernel the lab boots: LAB_KERNEL, else the newest one with headers."""
    wanted = os.environ.get("LAB_KERNEL")
    if wanted:
        return wanted
    releases = []
    for path in glob.glob("/boot/vmlinuz-*"):
        rel = os.path.basename(path)[len("vmlinuz-"):]
        if os.path.isdir("/usr/src/linux-headers-%s" % rel):
            releases.append(rel)
    if not releases:
        die("no /boot/vmlinuz-<ver> with matching /usr/src/linux-headers-<ver>; run 'make deps' (installs linux-image-amd64 and linux-headers-amd64)")

    def key(rel):
        return [int(x) if x.isdigit() else x for x in re.split(r"[.-]", rel)]

    return sorted(releases, key=key)[-1]


def netdevsim_ko(release):
    return os.path.join(BUILD_DIR, release, "netdevsim", "netdevsim.ko")


def cmd_build(_args):
    """Build netdevsim out of tree: Debian ships no netdevsim.ko, but its source builds in seconds."""
    release = kernel_release()
    ko = netdevsim_ko(release)
    if os.path.exists(ko):
        log("netdevsim for %s already built: %s" % (release, ko))
        return
    sources = sorted(glob.glob("/usr/src/linux-source-*.tar.xz"))
    if not sources:
        die("no /usr/src/linux-source-*.tar.xz; run 'make deps' (installs linux-source-6.1)")
    workdir = os.path.join(BUILD_DIR, release)
    os.makedirs(workdir, exist_ok=True)
    top = os.path.basename(sources[-1])[: -len(".tar.xz")]
    log("extracting drivers/net/netdevsim from %s" % sources[-1])
    subprocess.run(
        ["tar", "-xJf", sources[-1], "-C", workdir, "--strip-components=3", "%s/drivers/net/netdevsim" % top],
        check=True,
    )
    log("building netdevsim.ko against /usr/src/linux-headers-%s" % release)
    subprocess.run(
        ["make", "-s", "-C", "/usr/src/linux-headers-%s" % release, "M=%s" % os.path.dirname(ko), "CONFIG_NETDEVSIM=m", "modules"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    if not os.path.exists(ko):
        die("build finished but %s is missing" % ko)
    log("built %s" % ko)


def write_ssh_material():
    key = os.path.join(STATE_DIR, "id_ed25519")
    hostkey = os.path.join(STATE_DIR, "ssh_host_ed25519_key")
    for path in (key, hostkey):
        if not os.path.exists(path):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path], check=True)
    with open(os.path.join(STATE_DIR, "sshd_config"), "w") as f:
        f.write(
            "Port 22\n"
            "ListenAddress 0.0.0.0\n"
            "HostKey %s\n"
            "AuthorizedKeysFile %s.pub\n"
            "PermitRootLogin prohibit-password\n"
            "PasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\n"
            "UsePAM no\n"
            # The key files sit on a 9p mount whose ownership sshd cannot vouch for.
            "StrictModes no\n"
            "PidFile /run/sshd.pid\n"
            "Subsystem sftp internal-sftp\n"
            "UseDNS no\n"
            "LogLevel VERBOSE\n"
            # Every connection arrives from the one slirp address, and on a loaded host a TCG
            # guest needs seconds per key exchange: the default MaxStartups (10:30:100) then
            # drops handshakes at random ("kex_exchange_identification: Connection closed by
            # remote host") and LoginGraceTime (120 s) can expire before a slow login ends.
            "MaxStartups 100:30:200\n"
            "LoginGraceTime 10m\n"
            # Ansible multiplexes its sessions over one ControlMaster connection per node.
            "MaxSessions 64\n"
            # Notice a controller that went away, but allow a guest stalled for minutes.
            "ClientAliveInterval 30\n"
            "ClientAliveCountMax 20\n"
            "TCPKeepAlive yes\n"
            # Every module run's Python imports guest/pysite/sitecustomize.py: the bytecode its payload's zipimport
            # compiles is kept for the next run (that file says why and what it changes: nothing but the time).
            "SetEnv PYTHONPATH=%s\n"
            "%s" % (hostkey, key, os.path.join(LAB_DIR, "guest", "pysite"), _sshd_penalties_off())
        )


def _sshd_penalties_off():
    """OpenSSH 9.8+ blocks a source address after failed or unfinished logins; here every
    connection shares the slirp source address, so one timed-out handshake would lock
    Ansible out of the node. Older sshd refuses the unknown keyword, so ask for the version."""
    r = subprocess.run(["/usr/sbin/sshd", "-V"], capture_output=True, text=True, check=False)
    m = re.search(r"OpenSSH_(\d+)\.(\d+)", r.stdout + r.stderr)
    if m and (int(m.group(1)), int(m.group(2))) >= (9, 8):
        return "PerSourcePenalties no\n"
    return ""


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def read_pids():
    path = os.path.join(STATE_DIR, "pids.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def write_pids(pids):
    with open(os.path.join(STATE_DIR, "pids.json"), "w") as f:
        json.dump(pids, f)


def vng_binary():
    candidates = [os.path.join(os.path.dirname(sys.executable), "vng"), shutil.which("vng")]
    for c in candidates:
        if c and os.path.exists(c):
            return c
    die("vng (virtme-ng) not found; run 'make deps'")
    return None


def python_dirs():
    """The directories every module run imports from: the nodes' interpreter is this one (the
    inventory's ansible_python_interpreter is the controller's), so its stdlib and site-packages."""
    paths = sysconfig.get_paths()
    dirs = sorted({paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if os.path.isdir(paths[k])})
    # A venv's platstdlib holds its site-packages: bind the outer directory only.
    return [d for d in dirs if not any(d.startswith(o + os.sep) for o in dirs)]


def start_vm(node, release, ko):
    opts = [
        "-netdev user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:%d-:22" % ssh_port(node),
        "-device virtio-net-pci,netdev=mgmt,mac=52:54:00:0%d:00:01" % node,
    ]
    for rail, (fab, pf) in sorted(RAIL_NICS.items()):
        opts += [
            "-netdev socket,id=fab%d,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d" % (rail, hub_port(rail), nic_port(node, fab)),
            "-device virtio-net-pci,netdev=fab%d,mac=52:54:00:0%d:00:%02d" % (rail, node, 2 + 2 * rail),
            # Each igb PF behind a root port of its own: placed on the root bus at a high slot, its VFs'
            # routing IDs do not fit ("VF addr overflows").
            "-device pcie-root-port,id=rp%d,chassis=%d,slot=%d" % (rail, 10 + rail, 10 + rail),
            "-netdev socket,id=sriov%d,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d" % (rail, hub_port(rail), nic_port(node, pf)),
            "-device igb,netdev=sriov%d,bus=rp%d,mac=52:54:00:0%d:00:%02d" % (rail, rail, node, 3 + 2 * rail),
        ]
    # vng asks for "-cpu max"; the last -cpu wins. TCG runs the guest's Python about a fifth faster on the plain
    # x86-64 model, which is all Debian's userland needs: `import pyroute2` took 4.1 s against 5.3 s, and
    # `import ansible.module_utils.basic` 3.2 s against 4.0 s (five and three runs, side by side on one host,
    # 2026-11-27). Every module run of the lab pays both.
    opts.append("-cpu qemu64")
    # The host's root once more, read-only, for the guest to mount with caching (node-init.sh):
    # virtme's own root share is uncached, so every import of every module run is 9p round trips.
    opts.append("-virtfs local,path=/,mount_tag=%s,security_model=none,readonly=on,multidevs=remap" % CACHED_TAG)
    qemu_opts = " ".join(opts)
    init = os.path.join(LAB_DIR, "guest", "node-init.sh")
    cmd = [
        vng_binary(),
        "-r", "/boot/vmlinuz-%s" % release,
        "--force-9p",
        # KVM hangs on this workplace's hosts (failed to set MSR 0x10a); TCG is slower but works.
        "--disable-kvm",
        # TCG's TSC is the host's, steady; the clocksource watchdog compares it with the emulated HPET, which lags
        # whenever the host deschedules the vCPU, and on a busy host marks the TSC unstable. The guest then reads
        # time from the HPET, slowly and unevenly, and perftest's cycle-counter calibration fails (r^2 < 0.9).
        "--append", "tsc=reliable",
        "--memory", os.environ.get("LAB_MEMORY", "1G"),
        "--cpus", "1",
        "--name", "node%d" % node,
        # Writable in the guest so each node can leave its logs beside the host's.
        "--rwdir", STATE_DIR,
        "--qemu-opts=%s" % qemu_opts,
        "--exec", "bash %s %d %s %s %s %s" % (init, node, STATE_DIR, ko, CACHED_TAG, ",".join(python_dirs())),
    ]
    env = dict(os.environ)
    # vng runs its companion tools (virtme-run) through PATH.
    env["PATH"] = os.path.dirname(cmd[0]) + os.pathsep + env.get("PATH", "")
    with open(os.path.join(STATE_DIR, "node%d.log" % node), "w") as logfile:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logfile, stderr=subprocess.STDOUT, start_new_session=True, cwd=STATE_DIR, env=env)
    return proc.pid


def ssh_base(node):
    return [
        "ssh", "-q",
        "-i", os.path.join(STATE_DIR, "id_ed25519"),
        "-p", str(ssh_port(node)),
        "-o", "StrictHostKeyChecking=no",
        "-o", "UserKnownHostsFile=/dev/null",
        "-o", "BatchMode=yes",
        "-o", "ConnectTimeout=5",
        "root@127.0.0.1",
    ]


def wait_for_ssh(nodes, deadline):
    pending = set(nodes)
    while pending and time.time() < deadline:
        for node in sorted(pending):
            r = subprocess.run(ssh_base(node) + ["true"], stdin=subprocess.DEVNULL, capture_output=True, check=False)
            if r.returncode == 0:
                log("node%d reachable on 127.0.0.1:%d" % (node, ssh_port(node)))
                pending.discard(node)
        pids = read_pids()
        for node in sorted(pending):
            pid = pids.get("node%d" % node)
            if pid and not pid_alive(pid):
                die("node%d's VM exited during boot; see %s" % (node, os.path.join(STATE_DIR, "node%d.log" % node)))
        if pending:
            time.sleep(2)
    if pending:
        die("node(s) %s not reachable over SSH after %ds; see %s/node*.log" % (sorted(pending), BOOT_TIMEOUT, STATE_DIR))


def port_free(port, kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_INET, kind)
    # QEMU binds with SO_REUSEADDR, so TIME_WAIT leftovers of earlier SSH sessions are no conflict.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        return False
    finally:
        s.close()
    return True


def cmd_up(args):
    pids = read_pids()
    if any(pid_alive(p) for p in pids.values()):
        die("the lab is already up (%s); run 'lab/labctl.py down' first" % STATE_DIR)
    cmd_build(args)
    release = kernel_release()
    ko = netdevsim_ko(release)
    os.makedirs(STATE_DIR, exist_ok=True)
    busy = [p for p in (ssh_port(n) for n in NODES) if not port_free(p)]
    nics = [i for pair in RAIL_NICS.values() for i in pair]
    busy += [p for p in [hub_port(0), hub_port(1)] + [nic_port(n, i) for n in NODES for i in nics] if not port_free(p, socket.SOCK_DGRAM)]
    if busy:
        die("loopback port(s) %s already in use; set LAB_PORT_BASE to another base (now %d)" % (busy, PORT_BASE))
    write_ssh_material()
    started = time.time()
    pids = {}
    for rail, nics in sorted(RAIL_NICS.items()):
        members = [str(nic_port(n, i)) for n in NODES for i in nics]
        hub = subprocess.Popen(
            [sys.executable, os.path.join(LAB_DIR, "hub.py"), "--port", str(hub_port(rail))] + members,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
        pids["hub" if rail == 0 else "hub%d" % rail] = hub.pid
    for node in NODES:
        pids["node%d" % node] = start_vm(node, release, ko)
        write_pids(pids)
    log("booting node1 and node2 (kernel %s, TCG); this takes about a minute" % release)
    try:
        wait_for_ssh(NODES, started + BOOT_TIMEOUT)
    except LabError:
        # Leave no VM behind a failed boot, but keep the logs to read.
        for node in NODES:
            path = os.path.join(STATE_DIR, "node%d.log" % node)
            with open(path) as f:
                tail = f.read().splitlines()[-15:]
            print("---- %s (last lines)\n%s" % (path, "\n".join(tail)), file=sys.stderr)
        for name, pid in read_pids().items():
            kill_group(pid, name)
        raise
    log("lab up in %.0fs; ssh: lab/labctl.py ssh node1" % (time.time() - started))


def kill_group(pid, name):
    if not pid_alive(pid):
        return
    try:
        os.killpg(pid, signal.SIGTERM)
    except OSError:
        os.kill(pid, signal.SIGTERM)
    for _attempt in range(50):
        if not pid_alive(pid):
            break
        time.sleep(0.1)
    else:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
    log("stopped %s (pid %d)" % (name, pid))


def cmd_down(_args):
    pids = read_pids()
    for name in sorted(pids, key=lambda n: n.startswith("hub")):
        kill_group(pids[name], name)
    # Reap so no zombie or orphan QEMU outlives the lab.
    for pid in pids.values():
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    keep_logs()
    if os.path.isdir(STATE_DIR):
        shutil.rmtree(STATE_DIR)
    log("lab down; %s removed" % STATE_DIR)


def keep_logs():
    """With LAB_KEEP_LOGS=<dir>, copy the VM, sshd and guest health logs there before the state
    directory goes: the evidence of a run (a refused or retried SSH session) outlives the lab."""
    keep = os.environ.get("LAB_KEEP_LOGS")
    logs = sorted(glob.glob(os.path.join(STATE_DIR, "*.log")))
    if not keep or not logs:
        return
    dest = os.path.join(keep, time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
    os.makedirs(dest, exist_ok=True)
    for path in logs:
        shutil.copy2(path, dest)
    log("kept %d log(s) in %s" % (len(logs), dest))


def cmd_status(_args):
    pids = read_pids()
    if not pids:
        print("lab: down")
        return
    for name, pid in sorted(pids.items()):
        print("%-6s pid %-8d %s" % (name, pid, "running" if pid_alive(pid) else "gone"))


def cmd_ssh(args):
    node = int(args.node.replace("node", ""))
    os.execvp("ssh", ssh_base(node) + args.command)


def main():
    parser = argparse.ArgumentParser(description="gpufabric.roce two-node kernel lab")
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build", help="build netdevsim.ko for the lab kernel")
    sub.add_parser("up", help="build if needed, start the hub and both VMs, wait for SSH")
    sub.add_parser("down", help="stop everything and remove the state dir")
    sub.add_parser("status", help="show lab processes")
    p = sub.add_parser("ssh", help="ssh into a node")
    p.add_argument("node", choices=["node1", "node2", "1", "2"])
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    try:
        {"build": cmd_build, "up": cmd_up, "down": cmd_down, "status": cmd_status, "ssh": cmd_ssh}[args.cmd](args)
    except LabError as exc:
        print("lab: ERROR: %s" % exc, file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reboot lab for gpufabric.roce: the two lab nodes with systemd as init, on two Debian releases.

lab/labctl.py's VMs run node-init.sh as their only program on the host's root filesystem,
so the systemd units that sriov_vf and vlan_gateway write with persist: true never boot
there. This lab boots small Debian root filesystems made with mmdebstrap, init=/lib/systemd/systemd:
node2 Debian 12 (bookworm) with the lab's Debian kernel (the host's /boot vmlinuz and initrd, 6.1), node1
Debian 13 (trixie) with its own kernel (its linux-image-amd64, 6.12) and Python 3.13, so one rollout runs the
host modules on two kernels and two Pythons. Both are wired like labctl's nodes (restricted slirp with SSH
forwarded, fab0 and podvf0 on lab/hub.py). Their SR-IOV PFs differ as their kernels do: node2's is netdevsim
(labctl's out-of-tree build for the lab's kernel), node1's QEMU's igb (Intel 82576) behind a PCIe root port,
whose driver every Debian kernel ships: real PCI VFs, and no module to build for trixie's kernel. The lab
"hardware" (NIC names, the PF, rxe0, the pod netns) comes back at every boot from lab-hardware.service
(lab/guest/systemd), ordered before the collection's units.

    build   mmdebstrap the root filesystems and make a base image per release (cached in lab/build/rebootlab)
    up      build if needed, a qcow2 overlay per node over its base image, boot both, wait for SSH
    down    stop everything, remove the state dir (lab/state-reboot); consoles kept in lab/build/rebootlab/last-run
    status | ssh <node>

Its own port base (REBOOTLAB_PORT_BASE, 22400) and state dir (REBOOTLAB_STATE_DIR), so it runs
beside the regular lab. A guest reboot is a QEMU reset: the same process boots again.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time

LAB_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, LAB_DIR)
import debian_archive  # noqa: E402  (the mirror and the cache key, shared with .ci/controller_matrix.py)
import labctl  # noqa: E402  (the lab's helpers: kernel release, netdevsim build, hub, ports, ssh)

STATE_DIR = os.environ.get("REBOOTLAB_STATE_DIR", os.path.join(LAB_DIR, "state-reboot"))
CACHE_DIR = os.path.join(labctl.BUILD_DIR, "rebootlab")
PORT_BASE = int(os.environ.get("REBOOTLAB_PORT_BASE", "22400"))
BOOT_TIMEOUT = int(os.environ.get("REBOOTLAB_BOOT_TIMEOUT", "600"))
# What each node boots: its Debian release and its SR-IOV PF. HOST_SUITE's nodes boot the lab's kernel
# (labctl.kernel_release()) and take labctl's netdevsim; the others boot the kernel of their own root filesystem
# (linux-image-amd64 in SUITE_PACKAGES), which has igb but no netdevsim.
NODES = {1: {"suite": "trixie", "pf": "igb"}, 2: {"suite": "bookworm", "pf": "netdevsim"}}
HOST_SUITE = "bookworm"
GUEST_FILES = os.path.join(LAB_DIR, "guest", "systemd")
# The module runs' bytecode cache, as in labctl's guests (guest/pysite/sitecustomize.py says why).
PYSITE = os.path.join(LAB_DIR, "guest", "pysite", "sitecustomize.py")
GUEST_PYSITE = "/usr/local/lib/gpufabric-lab-pysite"
KEY = os.path.join(CACHE_DIR, "id_ed25519")

# What the nodes run. The collection's node packages (meta/ee-bindep.txt: python3-pyroute2,
# iproute2, rdma-core, perftest) come from Debian, as on a real bookworm node.
PACKAGES = (
    "systemd-sysv", "udev", "dbus", "openssh-server", "python3", "python3-pyroute2", "iproute2",
    "kmod", "rdma-core", "ibverbs-providers", "ibverbs-utils", "perftest", "iputils-ping", "procps",
)
# What a suite adds: its own kernel (and, through it, initramfs-tools and the initrd).
SUITE_PACKAGES = {"trixie": ("linux-image-amd64",)}


def apt_mirror(suite):
    """The Debian archive this machine's apt already uses for ``suite``, else for HOST_SUITE (a bookworm host lists no
    trixie, and Debian's archives carry every release; REBOOTLAB_MIRROR wins): the images come from the same place as
    the host's packages."""
    if os.environ.get("REBOOTLAB_MIRROR"):
        return os.environ["REBOOTLAB_MIRROR"]
    entries = debian_archive.apt_sources(suite) or debian_archive.apt_sources(HOST_SUITE)
    if not entries:
        die("no apt source for Debian %s or %s on this machine; set REBOOTLAB_MIRROR to a Debian archive URL" % (suite, HOST_SUITE))
    return entries[0]


# labctl's functions read these module globals at call time.
labctl.STATE_DIR = STATE_DIR
labctl.PORT_BASE = PORT_BASE
labctl.BOOT_TIMEOUT = BOOT_TIMEOUT
log = labctl.log
die = labctl.die


def run(cmd, **kwargs):
    return subprocess.run(cmd, check=True, **kwargs)


def need_root():
    # mmdebstrap (--mode=root) runs maintainer scripts in a chroot, and the image keeps root's ownership.
    if os.geteuid() != 0:
        die("building the reboot lab's image needs root (mmdebstrap; the image's files are root's); "
            "run it as root once, later runs use the cache in %s" % CACHE_DIR)


def suite_packages(suite):
    return tuple(sorted(PACKAGES + SUITE_PACKAGES.get(suite, ())))


def own_kernel(suite):
    """Whether ``suite``'s nodes boot the kernel of their own root filesystem rather than the lab's."""
    return suite != HOST_SUITE


def rootfs_key(suite):
    """The root filesystem depends on the suite, the package list and the tool that made it only."""
    return debian_archive.digest(["mmdebstrap", suite] + list(suite_packages(suite)))


def image_key(suite, release, ko):
    """The base image also depends on the kernel, netdevsim, the guest files and this builder."""
    parts = [rootfs_key(suite), release]
    paths = ([ko] if ko else []) + [KEY + ".pub", os.path.abspath(__file__), PYSITE]
    for path in paths + sorted(os.path.join(GUEST_FILES, f) for f in os.listdir(GUEST_FILES)):
        with open(path, "rb") as f:
            parts += [os.path.basename(path), f.read()]
    return debian_archive.digest(parts)


def remove_others(prefix, keep):
    """Remove the cache's entries named ``prefix``... other than ``keep`` (a file or a directory)."""
    for name in os.listdir(CACHE_DIR):
        path = os.path.join(CACHE_DIR, name)
        if name.startswith(prefix) and path != keep:
            run(["rm", "-rf", path])


def build_rootfs(suite):
    key = rootfs_key(suite)
    done = os.path.join(CACHE_DIR, "rootfs-%s-%s" % (suite, key))
    if os.path.isdir(done):
        log("root filesystem cached: %s" % done)
        return done
    need_root()
    if not shutil.which("mmdebstrap"):
        die("mmdebstrap not found; run 'make deps' (lab/install-system-deps.sh installs it)")
    tmp = done + ".tmp"
    if os.path.exists(tmp):
        run(["rm", "-rf", tmp])
    mirror = apt_mirror(suite)
    packages = suite_packages(suite)
    log("mmdebstrap %s (%s) from %s into %s" % (suite, ",".join(packages), mirror, tmp))
    started = time.time()
    # mmdebstrap rather than debootstrap: apt resolves and fetches the packages and dpkg installs them in one pass,
    # faster on make test's path on every fresh machine (docs/development.md, Timings). The merged-usr hook gives
    # bookworm's /usr layout without the usrmerge package (and the perl it pulls in); apt's lists and package cache are
    # left out of the image.
    run(["mmdebstrap", "--quiet", "--mode=root", "--variant=minbase", "--include=" + ",".join(packages),
         "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr", suite, tmp, mirror], stdout=subprocess.DEVNULL)
    os.rename(tmp, done)
    log("root filesystem %s built in %.0fs: %s" % (suite, time.time() - started, done))
    # Root filesystems of another package list or tool (a few hundred MB each) are of no further use.
    remove_others("rootfs-%s-" % suite, done)
    return done


def rootfs_kernel(rootfs):
    """The release of the one kernel a root filesystem installed (linux-image-amd64)."""
    releases = os.listdir(os.path.join(rootfs, "usr/lib/modules"))
    if len(releases) != 1:
        die("expected one kernel in %s/usr/lib/modules, found %s" % (rootfs, releases or "none"))
    return releases[0]


def _write(root, rel, text, mode=0o644):
    path = os.path.join(root, rel.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def customize(root, release, ko):
    """The lab's node image: kernel modules, SSH key login, lab-hardware.service. ``ko``: the lab's netdevsim for the
    host's kernel, copied in with that kernel's modules; None for a root filesystem with its own kernel."""
    mods = "/lib/modules/%s" % release
    if ko:
        os.makedirs(os.path.join(root, "lib/modules"), exist_ok=True)
        run(["cp", "-a", mods, os.path.join(root, mods.lstrip("/"))])
        os.makedirs(os.path.join(root, mods.lstrip("/"), "extra"), exist_ok=True)
        shutil.copy(ko, os.path.join(root, mods.lstrip("/"), "extra", "netdevsim.ko"))
    # The image's own depmod: it knows where its kmod looks for modules (trixie's is newer than the host's).
    run(["chroot", root, "depmod", release])
    _write(root, "/etc/fstab", "/dev/vda / ext4 rw,errors=remount-ro 0 1\n")
    _write(root, "/etc/hostname", "node\n")
    _write(root, "/etc/hosts", "127.0.0.1 localhost\n")
    with open(KEY + ".pub") as f:
        _write(root, "/root/.ssh/authorized_keys", f.read(), 0o600)
    os.chmod(os.path.join(root, "root/.ssh"), 0o700)
    # Many concurrent handshakes on a slow TCG guest: no throttling, no short grace time.
    _write(root, "/etc/ssh/sshd_config.d/gpufabric-lab.conf",
           "PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
           "UseDNS no\nMaxStartups 100:30:200\nLoginGraceTime 600\nSetEnv PYTHONPATH=%s\n" % GUEST_PYSITE)
    with open(PYSITE) as f:
        _write(root, GUEST_PYSITE + "/sitecustomize.py", f.read())
    shutil.copy(os.path.join(GUEST_FILES, "lab-hardware"), os.path.join(root, "usr/local/sbin/lab-hardware"))
    os.chmod(os.path.join(root, "usr/local/sbin/lab-hardware"), 0o755)
    unit = os.path.join(root, "etc/systemd/system/lab-hardware.service")
    shutil.copy(os.path.join(GUEST_FILES, "lab-hardware.service"), unit)
    wants = os.path.join(root, "etc/systemd/system/multi-user.target.wants")
    os.makedirs(wants, exist_ok=True)
    link = os.path.join(wants, "lab-hardware.service")
    if not os.path.lexists(link):
        os.symlink("/etc/systemd/system/lab-hardware.service", link)
    # Nothing on the console wants a login; no timers or ext4 scrub checks wake the slow guest.
    for name in ("getty@tty1.service", "e2scrub_reap.service", "apt-daily.timer", "apt-daily-upgrade.timer", "e2scrub_all.timer", "fstrim.timer"):
        path = os.path.join(root, "etc/systemd/system", name)
        if not os.path.lexists(path):
            os.symlink("/dev/null", path)
    # A deterministic journal on the disk, readable after a reboot.
    os.makedirs(os.path.join(root, "var/log/journal"), exist_ok=True)


def build_images():
    """Every suite's base image, once: {suite: {"image", "kernel", "initrd", "release"}}."""
    os.makedirs(CACHE_DIR, exist_ok=True)
    if not os.path.exists(KEY):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpufabric-rebootlab", "-f", KEY], check=True)
    return {suite: build_image(suite) for suite in sorted({n["suite"] for n in NODES.values()})}


def build_image(suite):
    rootfs = build_rootfs(suite)
    if not own_kernel(suite):
        labctl.cmd_build(None)
        release = labctl.kernel_release()
        ko = labctl.netdevsim_ko(release)
        boot = "/boot"
        for path in ("/boot/vmlinuz-%s" % release, "/boot/initrd.img-%s" % release):
            if not os.path.exists(path):
                die("%s missing; run 'make deps' (linux-image-amd64)" % path)
    else:
        release = rootfs_kernel(rootfs)
        ko = None  # its node's PF is igb (NODES)
        boot = os.path.join(rootfs, "boot")
    found = {"release": release, "kernel": os.path.join(boot, "vmlinuz-%s" % release),
             "initrd": os.path.join(boot, "initrd.img-%s" % release)}
    key = image_key(suite, release, ko)
    image = found["image"] = os.path.join(CACHE_DIR, "base-%s-%s.qcow2" % (suite, key))
    if os.path.exists(image):
        log("base image %s cached: %s" % (suite, image))
        return found
    need_root()
    started = time.time()
    work = os.path.join(CACHE_DIR, "image-%s.tmp" % key)
    if os.path.exists(work):
        run(["rm", "-rf", work])
    os.makedirs(work)
    tree = os.path.join(work, "root")
    run(["cp", "-a", rootfs, tree])
    customize(tree, release, ko)
    raw = os.path.join(work, "disk.raw")
    log("mkfs.ext4 -d (no loop mount) and qemu-img convert to %s" % image)
    run(["mkfs.ext4", "-q", "-F", "-L", "gpufabric-lab", "-d", tree, raw, "3G"])
    subprocess.run(["qemu-img", "convert", "-O", "qcow2", raw, image + ".tmp"], check=True)
    os.rename(image + ".tmp", image)
    run(["rm", "-rf", work])
    # Older base images of this suite are of no further use.
    remove_others("base-%s-" % suite, image)
    log("base image %s built in %.0fs: %s" % (suite, time.time() - started, image))
    return found


def hub_nics(node):
    """The node's NICs on the hub (labctl.nic_port's numbering): the uplink fab0 and the pod's "VF" podvf0, and on an
    igb node the igb PF (on the hub like labctl's, so that its link is up)."""
    return (0, 1, 2) if NODES[node]["pf"] == "igb" else (0, 1)


def start_vm(node, boot):
    disk = os.path.join(STATE_DIR, "node%d.qcow2" % node)
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", boot["image"], disk], check=True)
    append = " ".join([
        "root=/dev/vda", "rw", "init=/lib/systemd/systemd", "console=ttyS0",
        "systemd.hostname=node%d" % node, "gpufabric.lab_node=%d" % node, "gpufabric.lab_pf=%s" % NODES[node]["pf"],
        "systemd.show_status=1", "quiet",
    ])
    cmd = [
        "qemu-system-x86_64", "-name", "rebootlab-node%d" % node,
        # KVM hangs on this workplace's hosts (failed to set MSR 0x10a); TCG is slower but works, and faster on
        # the plain x86-64 model than on "max" (lab/labctl.py's start_vm says why).
        "-accel", "tcg", "-cpu", "qemu64", "-smp", "1", "-m", os.environ.get("REBOOTLAB_MEMORY", "1G"),
        "-nodefaults", "-no-user-config", "-display", "none", "-serial", "stdio", "-monitor", "none",
        "-kernel", boot["kernel"], "-initrd", boot["initrd"], "-append", append,
        "-drive", "file=%s,if=virtio,format=qcow2,cache=unsafe" % disk,
        "-device", "virtio-rng-pci",
        "-netdev", "user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:%d-:22" % labctl.ssh_port(node),
        "-device", "virtio-net-pci,netdev=mgmt,mac=52:54:00:0%d:00:01" % node,
        "-netdev", "socket,id=fab,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d" % (labctl.hub_port(), labctl.nic_port(node, 0)),
        "-device", "virtio-net-pci,netdev=fab,mac=52:54:00:0%d:00:02" % node,
        "-netdev", "socket,id=pod,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d" % (labctl.hub_port(), labctl.nic_port(node, 1)),
        "-device", "virtio-net-pci,netdev=pod,mac=52:54:00:0%d:00:03" % node,
    ]
    if NODES[node]["pf"] == "igb":
        # SR-IOV needs PCI Express (q35), and the PF a root port of its own (labctl's start_vm says why).
        cmd += [
            "-machine", "q35",
            "-device", "pcie-root-port,id=rp0,chassis=10,slot=10",
            "-netdev", "socket,id=sriov,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d" % (labctl.hub_port(), labctl.nic_port(node, 2)),
            "-device", "igb,netdev=sriov,bus=rp0,mac=52:54:00:0%d:00:04" % node,
        ]
    with open(os.path.join(STATE_DIR, "node%d.log" % node), "w") as logfile:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logfile, stderr=subprocess.STDOUT, start_new_session=True, cwd=STATE_DIR)
    return proc.pid


def cmd_build(_args):
    build_images()


def cmd_up(args):
    pids = labctl.read_pids()
    if any(labctl.pid_alive(p) for p in pids.values()):
        die("the reboot lab is already up (%s); run 'lab/rebootlab.py down' first" % STATE_DIR)
    images = build_images()
    os.makedirs(STATE_DIR, exist_ok=True)
    busy = [p for p in (labctl.ssh_port(n) for n in labctl.NODES) if not labctl.port_free(p)]
    busy += [p for p in [labctl.hub_port()] + [labctl.nic_port(n, i) for n in labctl.NODES for i in hub_nics(n)]
             if not labctl.port_free(p, socket.SOCK_DGRAM)]
    if busy:
        die("loopback port(s) %s already in use; set REBOOTLAB_PORT_BASE to another base (now %d)" % (busy, PORT_BASE))
    # labctl.ssh_base reads the key from the state dir.
    for suffix in ("", ".pub"):
        shutil.copy(KEY + suffix, os.path.join(STATE_DIR, "id_ed25519" + suffix))
    os.chmod(os.path.join(STATE_DIR, "id_ed25519"), 0o600)
    started = time.time()
    members = [str(labctl.nic_port(n, i)) for n in labctl.NODES for i in hub_nics(n)]
    hub = subprocess.Popen(
        [sys.executable, os.path.join(LAB_DIR, "hub.py"), "--port", str(labctl.hub_port())] + members,
        stdin=subprocess.DEVNULL, start_new_session=True,
    )
    pids = {"hub": hub.pid}
    for node in labctl.NODES:
        pids["node%d" % node] = start_vm(node, images[NODES[node]["suite"]])
        labctl.write_pids(pids)
    log("booting with systemd (TCG; a few minutes): %s" % ", ".join(
        "node%d Debian %s, kernel %s, %s PF" % (n, NODES[n]["suite"], images[NODES[n]["suite"]]["release"], NODES[n]["pf"])
        for n in labctl.NODES))
    try:
        labctl.wait_for_ssh(labctl.NODES, started + BOOT_TIMEOUT)
    except labctl.LabError:
        for node in labctl.NODES:
            path = os.path.join(STATE_DIR, "node%d.log" % node)
            with open(path, errors="replace") as f:
                tail = f.read().splitlines()[-25:]
            print("---- %s (last lines)\n%s" % (path, "\n".join(tail)), file=sys.stderr)
        for name, pid in labctl.read_pids().items():
            labctl.kill_group(pid, name)
        raise
    elapsed = time.time() - started
    with open(os.path.join(STATE_DIR, "boot.json"), "w") as f:
        json.dump({"first_boot_seconds": round(elapsed),
                   "nodes": {"node%d" % n: dict(NODES[n], kernel=images[NODES[n]["suite"]]["release"]) for n in labctl.NODES}}, f)
    log("reboot lab up in %.0fs; ssh: lab/rebootlab.py ssh node1" % elapsed)


def cmd_down(args):
    """labctl's down, after keeping the consoles and the evidence in lab/build/rebootlab/last-run."""
    keep = os.path.join(CACHE_DIR, "last-run")
    if os.path.isdir(STATE_DIR):
        shutil.rmtree(keep, ignore_errors=True)
        os.makedirs(keep)
        for name in os.listdir(STATE_DIR):
            if name.endswith((".log", ".json")):
                shutil.copy(os.path.join(STATE_DIR, name), keep)
    labctl.cmd_down(args)


def main():
    parser = argparse.ArgumentParser(description="gpufabric.roce reboot lab (systemd as init)")
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build", help="mmdebstrap the root filesystem and make the base image (cached)")
    sub.add_parser("up", help="build if needed, start the hub and both VMs, wait for SSH")
    sub.add_parser("down", help="stop everything and remove the state dir")
    sub.add_parser("status", help="show lab processes")
    p = sub.add_parser("ssh", help="ssh into a node")
    p.add_argument("node", choices=["node1", "node2", "1", "2"])
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    commands = {"build": cmd_build, "up": cmd_up, "down": cmd_down, "status": labctl.cmd_status, "ssh": labctl.cmd_ssh}
    try:
        commands[args.cmd](args)
    except labctl.LabError as exc:
        print("lab: ERROR: %s" % exc, file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()

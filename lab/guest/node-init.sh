#!/usr/bin/env bash
# Runs as the VM's only program (vng --exec): wires one lab node like a GPU node on the
# fabric switch, starts sshd so Ansible reaches it like real hardware, then stays up until
# the host kills the VM.
#
#   node-init.sh <node index 1|2> <lab state dir> <netdevsim.ko> [<9p tag of the cached root share> <python dirs, comma-separated>]
#
# This is lab plumbing, not collection code: it may use iproute2 freely. What the
# collection is expected to configure (VFs, the VLAN gateway, routes, forwarding) is
# deliberately NOT done here, so the seed failure is reproducible.
set -eu
idx=$1
state=$2
nds_ko=$3
cached_tag=${4:-}
python_dirs=${5:-}
log() { echo "lab-node$idx: $*"; }

hostname "node$idx"
mount -t debugfs none /sys/kernel/debug 2>/dev/null || true

# NICs are named by MAC so the inventory can rely on fixed names.
rename_by_mac() {
    local mac=$1 name=$2 dev
    for dev in /sys/class/net/*; do
        if [ "$(cat "$dev/address")" = "$mac" ]; then
            ip link set "$(basename "$dev")" name "$name"
            return 0
        fi
    done
    log "no NIC with MAC $mac"; return 1
}
rename_by_mac "52:54:00:0$idx:00:01" mgmt0
rename_by_mac "52:54:00:0$idx:00:02" fab0
rename_by_mac "52:54:00:0$idx:00:03" igb0
# Rail 1 (inventories/lab-multirail): a second uplink and igb PF on a hub segment of their own.
rename_by_mac "52:54:00:0$idx:00:04" fab1
rename_by_mac "52:54:00:0$idx:00:05" igb1

# Management: slirp with restrict=on; no default route, so nothing can leave the VM
# except the forwarded SSH session.
ip link set lo up
ip link set mgmt0 up
ip addr add 10.0.2.15/24 dev mgmt0

# fab0 is the node's PF uplink on the shared segment (the hub); fab1 is rail 1's, on the second hub.
ip link set fab0 up
ip link set fab1 up

# SR-IOV: netdevsim gives a PF (eni<id>np1) whose sriov_numvfs behaves like PCI.
modprobe psample
insmod "$nds_ko"
# One netdevsim device per rail: eni1<N>np1 for rail 0, eni2<N>np1 for rail 1.
for rail in 1 2; do
    echo "$rail$idx 1" > /sys/bus/netdevsim/new_device
    for _ in $(seq 50); do [ -e "/sys/class/net/eni$rail${idx}np1" ] && break; sleep 0.1; done
    echo 128 > "/sys/kernel/debug/netdevsim/netdevsim$rail$idx/max_vfs"
    ip link set "eni$rail${idx}np1" up || true
done

# RoCE: soft-RoCE on the PF (rxe refuses VLAN netdevs; an IP on fab0.<vlan> still shows
# up in rxe0's GID table with that VLAN netdev as ndev).
modprobe 8021q
modprobe rdma_rxe
# What a real node's systemd (sys-kernel-config.mount) and rdma-core (rdma_ucm at boot) do: RDMA-CM's configfs,
# where roce_qos writes each RDMA device's default RoCE ToS.
# rdma_ucm first: it loads configfs, which the mount does not load by itself here.
modprobe rdma_ucm
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
rdma link add rxe0 type rxe netdev fab0
rdma link add rxe1 type rxe netdev fab1

# Real VFs: igb<r> is QEMU's Intel 82576 with SR-IOV, one PF per rail on that rail's hub. Its VFs
# (made by sriov_vf) stay without a driver until the pod's stand-in device plugin binds the one it
# hands out (lab/guest/pod_vf.py): a VF MAC that the PF sets after igbvf is bound does not reach the
# VF until it resets, and an igbvf bound with no MAC makes up one that udev then replaces with one
# derived from the machine-id, which both VMs share (the same MAC on both nodes).
modprobe igbvf
for rail in 0 1; do
    echo 0 > "/sys/class/net/igb$rail/device/sriov_drivers_autoprobe"
    ip link set "igb$rail" up
done

# SSH for Ansible; keys live in the host-side state dir (read-only here).
mkdir -p /run/sshd /var/empty
# virtme-ng's /etc overlay leaves root "locked" for sshd; key-only login needs it unlocked
# (this edits the guest's overlay, never the host's /etc/shadow).
# /etc/shadow is itself a bind mount there, so bind an unlocked copy over it.
sed 's/^root:[^:]*:/root:*:/' /etc/shadow > /run/lab-shadow
chmod 600 /run/lab-shadow
mount --bind /run/lab-shadow /etc/shadow
# /root is the controller's, shared read-only. sshd runs each Ansible command through root's bash,
# which sources ~/.bashrc for SSH sessions: the controller's interactive set-up (pyenv init on this
# workplace's machines: several seconds of bash per task under TCG, and a "cannot rehash" warning on
# every command). The node's sessions get empty dotfiles instead; nothing in the lab needs them.
: > /run/lab-empty-dotfile
for rc in /root/.bashrc /root/.bash_profile /root/.profile; do
    if [ -e "$rc" ]; then mount --bind /run/lab-empty-dotfile "$rc"; fi
done
# Every module run starts the controller's Python and imports pyroute2 and Ansible's module_utils
# from the shared root, whose 9p mount is uncached: each stat, open and read is a round trip through
# the emulated virtio device, the larger part of a module run under TCG. labctl.py exports the root a
# second time, read-only; mounted with caching, the interpreter's stdlib and site-packages come from
# the guest's page cache after their first use (an A/B in a quiet guest: `import pyroute2` 8-10 s ->
# 4-4.5 s; QEMU's CPU for the same imports -30 to -45 %). The same files at the same paths, so a
# module sees exactly the interpreter it would see without this. Cached means not re-read: nothing on
# the controller changes these directories while a lab is up (make deps runs before the lab).
if [ -n "$cached_tag" ] && [ -n "$python_dirs" ]; then
    mkdir -p /run/hostro
    if mount -t 9p -o trans=virtio,version=9p2000.L,cache=loose,ro,msize=512000 "$cached_tag" /run/hostro; then
        IFS=, read -r -a dirs <<< "$python_dirs"
        for d in "${dirs[@]}"; do
            mount --bind "/run/hostro$d" "$d" || log "cannot bind the cached $d; it stays on the uncached root"
        done
    else
        log "no cached root share ($cached_tag); Python runs from the uncached root"
    fi
fi

start_sshd() { /usr/sbin/sshd -f "$state/sshd_config" -E "$state/node$idx-sshd.log"; }
start_sshd
log "ready"

# Stay up; the host ends the VM with SIGTERM to QEMU. Meanwhile keep a health line every
# 30 s beside the sshd log (a refused SSH session on a loaded host is otherwise hard to
# tell apart from a dead sshd or a guest out of memory), and restart sshd should it die.
health="$state/node$idx-health.log"
while true; do
    sleep 30
    pid=$(cat /run/sshd.pid 2>/dev/null || true)
    if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
        echo "$(date -u +%FT%TZ) sshd listener gone (pid '${pid}'), restarting" >> "$health"
        start_sshd || echo "$(date -u +%FT%TZ) sshd restart failed" >> "$health"
    fi
    echo "$(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)" \
        "memavail_kb $(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)" \
        "sshd_procs $(pgrep -c -x sshd || true)" >> "$health" || true
done

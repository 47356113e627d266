#!/usr/bin/env bash
# Debian packages the lab and the tests need. Installs only what is missing, so a second
# run costs a few dpkg queries. Needs root (or sudo) on Debian 12.
set -euo pipefail
packages=(
    # The lab kernel, its headers and source (netdevsim is built out of tree from it).
    linux-image-amd64 linux-headers-amd64 linux-source-6.1 xz-utils make gcc bc flex bison
    # The VMs: QEMU under virtme-ng (from PyPI), and busybox for virtme's initramfs.
    qemu-system-x86 busybox-static kmod
    # The reboot lab (lab/rebootlab.py): a Debian root filesystem with systemd as init, turned
    # into a qcow2 disk image without loop mounts (mkfs.ext4 -d, qemu-img).
    debootstrap e2fsprogs qemu-utils
    # What the nodes run, seen through the VMs' shared root: iproute2's rdma, perftest, rxe.
    iproute2 iputils-ping procps rdma-core ibverbs-providers ibverbs-utils perftest
    # Ansible reaches the VMs over SSH on loopback.
    openssh-server openssh-client
    git python3-venv
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: Debian packages present"
    exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: Debian packages installed"

#!/usr/bin/env bash
# Debian packages the lab and the tests need. Installs only what is missing, so a second
# run costs a few dpkg queries. Needs root (or sudo) on Debian 12.
set -euo pipefail
packages=(
    # The lab kernel, its headers and source (netdevsim is built out of tree from it).
    linux-image-amd64 linux-headers-amd64 linux-source-6.1 xz-utils make gcc bc flex bison
    # The VMs: QEMU under virtme-ng (from PyPI), and busybox for virtme's initramfs. QEMU itself
    # comes from bookworm-backports (below).
    busybox-static kmod
    # The reboot lab (lab/rebootlab.py): a Debian root filesystem (mmdebstrap) with systemd as init, turned
    # into a qcow2 disk image without loop mounts (mkfs.ext4 -d, qemu-img).
    mmdebstrap e2fsprogs qemu-utils
    # What the nodes run, seen through the VMs' shared root: iproute2's rdma, perftest, rxe; tcpdump reads the RoCE
    # packets' ToS on the wire (molecule/lab/qos.yml).
    iproute2 iputils-ping procps rdma-core ibverbs-providers ibverbs-utils perftest tcpdump
    # The real CNI plugins the lab's pods get their VFs and addresses from (host-device, host-local).
    containernetworking-plugins
    # Ansible reaches the VMs over SSH on loopback.
    openssh-server openssh-client
    git python3-venv
    # The browser tests/integration/test_rdma_report_browser.py renders rdma_verify's HTML report in (headless
    # Chromium, no X server; 18 packages with --no-install-recommends). /usr/bin/chromium-headless-shell.
    chromium-headless-shell
)
# The lab's real VFs are the Intel 82576 (igb) that QEMU emulates with SR-IOV since 8.0; bookworm
# has 7.2, bookworm-backports 10.x, which also needs backports' SeaBIOS (>= 1.16.3).
backports_packages=(qemu-system-x86 seabios)
declare -A backports_min=([qemu-system-x86]="1:10.0" [seabios]="1.16.3")
backports_list=/etc/apt/sources.list.d/gpufabric-lab-backports.sources

# Prints the installed version, or nothing; never fails (dpkg-query exits 1 for a package it has never seen, which
# under pipefail and set -e would end the script at the first such assignment on a fresh machine).
installed_version() {
    { dpkg-query -W -f='${Status} ${Version}' "$1" 2>/dev/null || true; } | sed -n 's/^install ok installed //p'
}

missing=()
for p in "${packages[@]}"; do
    [ -n "$(installed_version "$p")" ] || missing+=("$p")
done
missing_bp=()
for p in "${backports_packages[@]}"; do
    v=$(installed_version "$p")
    if [ -z "$v" ] || ! dpkg --compare-versions "$v" ge "${backports_min[$p]}"; then missing_bp+=("$p"); fi
done
if [ ${#missing[@]} -eq 0 ] && [ ${#missing_bp[@]} -eq 0 ]; then
    echo "deps: Debian packages present"
    exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# A bookworm-backports entry derived from the machine's own Debian entry (same archive URI and
# signing key), so no archive host is written here. deb822 (.sources) or one-line (.list) entries.
add_backports_source() {
    [ -e "$backports_list" ] && return 0
    local entry
    entry=$(python3 - <<'PY'
import glob, re, sys

def deb822():
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        with open(path) as f:
            for stanza in re.split(r"\n\s*\n", f.read()):
                fields = {}
                for line in stanza.splitlines():
                    m = re.match(r"^([A-Za-z-]+):\s*(.*)$", line)
                    if m:
                        fields[m.group(1).lower()] = m.group(2).strip()
                if "bookworm" in fields.get("suites", "").split() and "deb" in fields.get("types", "").split():
                    yield fields.get("uris", "").split()[0], fields.get("signed-by", "")

def one_line():
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        try:
            lines = open(path).read().splitlines()
        except OSError:
            continue
        for line in lines:
            m = re.match(r"^deb\s+(\[([^]]*)\]\s+)?(\S+)\s+bookworm\s", line)
            if m:
                signed = re.search(r"signed-by=(\S+)", m.group(2) or "")
                yield m.group(3), signed.group(1) if signed else ""

for uri, signed_by in list(deb822()) + list(one_line()):
    print("Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main" % uri)
    if signed_by:
        print("Signed-By: %s" % signed_by)
    sys.exit(0)
sys.exit(1)
PY
) || { echo "deps: no apt source entry for Debian bookworm found to derive bookworm-backports from" >&2; return 1; }
    echo "deps: adding $backports_list (bookworm-backports, from the machine's bookworm entry)"
    printf '# Added by gpufabric.roce lab/install-system-deps.sh: QEMU with igb SR-IOV for the lab.\n%s\n' "$entry" \
        | $sudo tee "$backports_list" >/dev/null
}

export DEBIAN_FRONTEND=noninteractive
[ ${#missing_bp[@]} -eq 0 ] || add_backports_source
echo "deps: installing ${missing[*]} ${missing_bp[*]}"
$sudo apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#missing_bp[@]} -gt 0 ]; then
    # QEMU 10 replaces bookworm's 7.2 as the system's QEMU (the reboot lab and virtme-ng use it too).
    $sudo apt-get install -y -qq --no-install-recommends -t bookworm-backports "${backports_packages[@]}" >/dev/null
fi
echo "deps: Debian packages installed"

#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hand a real VF to a lab "pod" (a network namespace) the way a Kubernetes node does.

Lab plumbing, run on a lab node (molecule/lab/prepare.yml); not collection code, so it may use
iproute2. It stands in for the parts of the SR-IOV stack the lab has no Kubernetes for, and runs
the real CNI plugins for the rest:

- sriov-cni's VF settings: the VF's MAC, VLAN, QoS, trust and spoofchk are set on the PF from the
  rendered SriovNetwork (spec.vlan, vlanQoS, trust, spoofChk). linkState is not: igb refuses it
  (ConnectX takes it); the output says so.
- the SR-IOV device plugin's handing out: the VF gets its driver (igbvf) only now, through
  driver_override, after its MAC is set (node-init.sh says why).
- the real host-device CNI plugin (Debian's containernetworking-plugins) moves the VF's netdev
  into the namespace as net1, and the real host-local plugin gives it its address and routes from
  the IPAM configuration of the rendered SriovNetwork (spec.ipam, passed through unchanged).

    pod_vf.py attach --pf igb0 --vf 6 --netns pod --mac 02:00:00:00:01:06 --network '<SriovNetwork JSON>'

Prints one JSON object: the VF's PCI address, what was set, what was not, and the CNI result.
A failed attempt is retried as the kubelet retries a pod sandbox whose CNI ADD failed: CNI DEL first,
then the whole ADD again; the failed attempts' errors stay in the output ("retried_after").
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import time

CNI_PATH = "/usr/lib/cni"
ATTEMPTS = 3
RETRY_DELAY = 5


class StandInError(Exception):
    pass


def fail(msg):
    raise StandInError(msg)


def run(argv, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, check=False, **kw)
    if r.returncode != 0:
        fail("%s: exit %d: %s%s" % (" ".join(argv), r.returncode, r.stdout, r.stderr))
    return r.stdout


def vf_pci(pf, vf):
    link = "/sys/class/net/%s/device/virtfn%d" % (pf, vf)
    if not os.path.exists(link):
        fail("%s has no VF %d (%s is missing): the VFs are sriov_vf's to make" % (pf, vf, link))
    return os.path.basename(os.readlink(link))


def set_vf(pf, vf, mac, spec):
    """sriov-cni's part: the SriovNetwork's VF settings, set on the PF before the VF has a driver."""
    args = ["ip", "link", "set", "dev", pf, "vf", str(vf), "mac", mac]
    if "vlan" in spec:
        args += ["vlan", str(spec["vlan"]), "qos", str(spec.get("vlanQoS", 0))]
    for key, word in (("trust", "trust"), ("spoofChk", "spoofchk")):
        if key in spec:
            args += [word, spec[key]]
    run(args)
    return {k: spec[k] for k in ("vlan", "vlanQoS", "trust", "spoofChk") if k in spec}


def bind_vf(pci, driver="igbvf"):
    """The device plugin's part: the VF gets its driver now; returns its netdev name."""
    dev = "/sys/bus/pci/devices/%s" % pci
    if not os.path.exists(dev + "/driver"):
        with open(dev + "/driver_override", "w") as f:
            f.write(driver)
        with open("/sys/bus/pci/drivers_probe", "w") as f:
            f.write(pci)
    for _attempt in range(300):
        names = glob.glob(dev + "/net/*")
        if names:
            return os.path.basename(names[0])
        time.sleep(0.1)
    fail("VF %s got no netdev from %s within 30 s" % (pci, driver))
    return None


def cni(command, netns, pci, network):
    conf = {
        "cniVersion": "0.4.0",
        "name": network["metadata"]["name"],
        "type": "host-device",
        "pciBusID": pci,
        # The rendered IPAM, as the SR-IOV operator would put it into the NetworkAttachmentDefinition.
        "ipam": json.loads(network["spec"]["ipam"]),
    }
    env = dict(os.environ, CNI_COMMAND=command, CNI_CONTAINERID="lab-%s" % netns, CNI_NETNS="/run/netns/%s" % netns,
               CNI_IFNAME="net1", CNI_PATH=CNI_PATH)
    out = run([os.path.join(CNI_PATH, "host-device")], input=json.dumps(conf), env=env)
    return conf, json.loads(out) if out.strip() else {}


def attach(args):
    network = json.loads(args.network)
    spec = network["spec"]
    pci = vf_pci(args.pf, args.vf)
    if not os.path.exists("/run/netns/%s" % args.netns):
        run(["ip", "netns", "add", args.netns])
        run(["ip", "-n", args.netns, "link", "set", "lo", "up"])
    done = subprocess.run(["ip", "-n", args.netns, "link", "show", "net1"], capture_output=True, check=False).returncode == 0
    result = {"pf": args.pf, "vf": args.vf, "pci": pci, "netns": args.netns, "network": network["metadata"]["name"]}
    if done:
        result["changed"] = False
        print(json.dumps(result))
        return
    result["vf_not_set"] = {"linkState": spec["linkState"]} if "linkState" in spec else {}
    errors = []
    for attempt in range(ATTEMPTS):
        try:
            result["vf_set"] = set_vf(args.pf, args.vf, args.mac, spec)
            result["netdev"] = bind_vf(pci)
            result["cni_config"], result["cni_result"] = cni("ADD", args.netns, pci, network)
            break
        except StandInError as exc:
            errors.append(str(exc))
            if attempt + 1 == ATTEMPTS:
                raise StandInError("%d attempts failed: %s" % (ATTEMPTS, "; ".join(errors))) from None
            try:
                cni("DEL", args.netns, pci, network)
            except StandInError as del_exc:
                errors.append("CNI DEL before the retry: %s" % del_exc)
            time.sleep(RETRY_DELAY)
    result["retried_after"] = errors
    result["changed"] = True
    print(json.dumps(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("attach", help="give VF <vf> of <pf> to netns <netns> as net1 (host-device + the rendered IPAM)")
    p.add_argument("--pf", required=True)
    p.add_argument("--vf", type=int, required=True)
    p.add_argument("--netns", required=True)
    p.add_argument("--mac", required=True, help="a MAC of its own per node (both VMs share a machine-id)")
    p.add_argument("--network", required=True, help="the rendered SriovNetwork as JSON")
    args = parser.parse_args()
    try:
        attach(args)
    except StandInError as exc:
        print(json.dumps({"failed": True, "msg": str(exc)}))
        sys.exit(1)


if __name__ == "__main__":
    main()

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-ins' process: one loop, every component once per interval, until SIGTERM.

    cd lab/k8s && python -m standins --kubeconfig K --hardware hw.yml [--only kubelet,sriov] [--once]

Each loop writes <state-dir>/standins.status.json (loop counter and what each component saw), so a
test can tell "the stand-in looked and did nothing" from "the stand-in has not looked yet".
"""

import argparse
import contextlib
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path

from standins import _kube, hardware, kubelet, network_operator, nfd, nic_configuration, sriov_cni, sriov_operator, upgrade_crd_hook

LOG = logging.getLogger("standins")
COMPONENTS = ("kubelet", "nfd", "network-operator", "sriov", "sriov-networks", "nic-configuration")
# A loop reads about twenty kinds and objects; the API server and etcd spend more CPU answering than the stand-ins, and a
# control plane whose stand-ins loop every second idles at about a tenth of a core (a 2-core machine runs several). After
# this many loops in a row that wrote nothing, the loop runs every --idle-interval seconds until one writes again: a
# change made while the stand-ins idle is seen up to a second later, and what they do next (a write) brings back the
# one-second loop. Timed steps (the SR-IOV sync and apply delays, the NIC reboot) take at least their delay, as before.
QUIET_LOOPS = 5
REPO = Path(__file__).resolve().parents[3]


def default_crds_dir():
    if os.environ.get("GPUFABRIC_CRDS_DIR"):
        return os.environ["GPUFABRIC_CRDS_DIR"]
    return str(Path(os.environ.get("GPUFABRIC_SHARED_DIR") or REPO.parent / "shared") / "crds")


def default_charts_dir():
    return str(Path(os.environ.get("GPUFABRIC_SHARED_DIR") or REPO.parent / "shared") / "charts")


def parse_args(argv=None):
    env = os.environ.get
    ap = argparse.ArgumentParser(prog="python -m standins", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kubeconfig", default=env("KUBECONFIG"), help="admin kubeconfig (default: $KUBECONFIG)")
    ap.add_argument("--hardware", help="fake hardware file (JSON/YAML), see lab/k8s/README.md")
    ap.add_argument("--node", action="append", default=[], help="a node without PFs (repeatable)")
    ap.add_argument("--namespace", default=env("GPUFABRIC_STANDIN_NAMESPACE", "nvidia-network-operator"), help="operator namespace")
    ap.add_argument("--resource-prefix", default=env("GPUFABRIC_STANDIN_RESOURCE_PREFIX", "nvidia.com"),
                    help="device plugin resource prefix (upstream: the operator's RESOURCE_PREFIX)")
    ap.add_argument("--sync-delay", type=float, default=float(env("GPUFABRIC_STANDIN_DELAY", "5")),
                    help="seconds before a new policy spec reaches a node state (default 5, env GPUFABRIC_STANDIN_DELAY)")
    ap.add_argument("--apply-delay", type=float, default=float(env("GPUFABRIC_STANDIN_APPLY_DELAY", "2")),
                    help="seconds a node state stays InProgress (default 2, env GPUFABRIC_STANDIN_APPLY_DELAY)")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between loops (default 1)")
    ap.add_argument("--idle-interval", type=float, default=2.0,
                    help="seconds between loops once %d loops in a row changed nothing, until one does (default 2)" % QUIET_LOOPS)
    ap.add_argument("--only", default=",".join(COMPONENTS), help="comma-separated subset of: " + ", ".join(COMPONENTS))
    ap.add_argument("--state-dir", help="where standins.status.json and the device plugin checkpoint go")
    ap.add_argument("--crds-dir", default=default_crds_dir(), help="upstream CRDs (the NAD CRD for Multus)")
    ap.add_argument("--charts-dir", default=default_charts_dir(),
                    help="network-operator-<version>.tgz archives: the CRDs the upgrade-crd hook stand-in applies")
    ap.add_argument("--once", action="store_true", help="one loop, then exit (debugging)")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.only.split(",")) - set(COMPONENTS))
    if unknown:
        ap.error("--only: unknown component %s; choose from %s" % (unknown[0], ", ".join(COMPONENTS)))
    if not args.kubeconfig:
        ap.error("--kubeconfig: not given and KUBECONFIG is not set; pass the control plane's kubeconfig (controlplane.py env prints it)")
    return args


def build(args, kube, nodes):
    wanted = args.only.split(",")
    made = {
        "kubelet": lambda: kubelet.KubeletStandin(kube, nodes, upgrade_crd_hook.UpgradeCrdHook(kube, args.charts_dir)),
        "nfd": lambda: nfd.NfdStandin(kube, nodes),
        "network-operator": lambda: network_operator.NetworkOperatorStandin(kube, nodes, args.crds_dir, state_dir=args.state_dir),
        "sriov": lambda: sriov_operator.SriovStandin(
            kube, nodes, args.namespace, args.resource_prefix, sync_delay=args.sync_delay, apply_delay=args.apply_delay, state_dir=args.state_dir),
        "sriov-networks": lambda: sriov_cni.SriovNetworkStandin(kube, args.namespace, args.resource_prefix),
        "nic-configuration": lambda: nic_configuration.NicConfigurationStandin(
            kube, nodes, args.namespace, apply_delay=args.apply_delay, state_dir=args.state_dir),
    }
    return [made[name]() for name in COMPONENTS if name in wanted]


class Loop:
    def __init__(self, components, state_dir, interval, kube=None, idle_interval=None):
        self.components = components
        self.kube = kube
        self.idle_interval = interval if idle_interval is None else max(interval, idle_interval)
        self.quiet = 0
        self.status_file = Path(state_dir) / "standins.status.json" if state_dir else None
        self.interval = interval
        self.stopping = False
        self.loops = 0
        self.last_error = {}

    def stop(self, *_):
        self.stopping = True

    def once(self):
        t = time.time()
        notes = {}
        with self.kube.reads_cached() if self.kube is not None else contextlib.nullcontext():
            for comp in self.components:
                try:
                    notes[comp.name] = comp.tick(t)
                    self.last_error.pop(comp.name, None)
                except Exception as err:  # noqa: BLE001 - one failing component must not stop the others
                    text = "%s: %s" % (type(err).__name__, err)
                    if self.last_error.get(comp.name) != text:
                        LOG.exception("%s: %s", comp.name, text)
                    self.last_error[comp.name] = text
                    notes[comp.name] = {"error": text}
        self.loops += 1
        if self.status_file:
            tmp = self.status_file.with_suffix(".tmp")
            tmp.write_text(json.dumps({"pid": os.getpid(), "loop": self.loops, "time": t, "components": notes}, default=sorted), encoding="utf-8")
            tmp.replace(self.status_file)
        return t

    def run(self):
        while not self.stopping:
            writes = self.kube.writes if self.kube is not None else 0
            t = self.once()
            wrote = self.kube is None or self.kube.writes != writes
            self.quiet = 0 if wrote else self.quiet + 1
            interval = self.idle_interval if self.quiet >= QUIET_LOOPS else self.interval
            delay = interval - (time.time() - t)
            while delay > 0 and not self.stopping:
                time.sleep(min(delay, 0.2))
                delay = interval - (time.time() - t)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stdout)
    try:
        nodes = hardware.load(args.hardware, args.node)
    except hardware.HardwareError as err:
        print("standins: %s" % err, file=sys.stderr)
        return 2
    kube = _kube.Kube(args.kubeconfig)
    loop = Loop(build(args, kube, nodes), args.state_dir, args.interval, kube, args.idle_interval)
    signal.signal(signal.SIGTERM, loop.stop)
    signal.signal(signal.SIGINT, loop.stop)
    LOG.info("stand-ins %s for nodes %s, namespace %s, prefix %s, sync delay %.1fs, apply delay %.1fs",
             args.only, ",".join(sorted(nodes)), args.namespace, args.resource_prefix, args.sync_delay, args.apply_delay)
    if args.once:
        loop.once()
    else:
        loop.run()
    kube.close()
    LOG.info("stand-ins stopped after %d loops", loop.loops)
    return 0

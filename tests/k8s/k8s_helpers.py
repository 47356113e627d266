# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared by tests/k8s: the fake hardware, constants, polling, and a handle on the running control plane."""

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAB_K8S = REPO / "lab" / "k8s"
sys.path.insert(0, str(LAB_K8S))

from standins import _kube  # noqa: E402

CONTROLPLANE = [sys.executable, str(LAB_K8S / "controlplane.py")]
NAMESPACE = "nvidia-network-operator"
RELEASE = "network-operator"  # not a YAML 1.1 boolean word: the chart writes the instance label unquoted
# The stand-in operator's delays (seconds): a new spec reaches a node state SYNC_DELAY after the stand-in sees it, and the
# state stays InProgress for APPLY_DELAY. Long enough that a wait's first poll finds the states unsynced, short because
# the stage is mostly such waits (4 s and 2 s until 2026-11-28: the first half of make k8s took 60 s longer).
SYNC_DELAY = 2.0
APPLY_DELAY = 1.0
TIMINGS = {}

HARDWARE = {
    "node1": {
        "labels": {"example.com/rack": "r1"},
        "interfaces": [
            {"name": "enp157s0np0", "pciAddress": "0000:9d:00.0", "totalvfs": 16, "mtu": 9000},
            # VFs made on the host (roce_vf_mode: host): policies must say externallyManaged.
            {"name": "enp160s0np0", "pciAddress": "0000:a0:00.0", "totalvfs": 16, "mtu": 9000, "numVfs": 8},
        ],
    },
    "node2": {"interfaces": [{"name": "enp157s0np0", "pciAddress": "0000:9d:00.0", "totalvfs": 16, "mtu": 9000}]},
}


def chart_path():
    default = Path(os.environ.get("GPUFABRIC_SHARED_DIR") or REPO.parent / "shared") / "charts" / "network-operator-26.4.1.tgz"
    return Path(os.environ.get("GPUFABRIC_NETWORK_OPERATOR_CHART") or default)


def chart_version():
    """The version of chart_path()'s archive (network-operator-<version>.tgz): the role refuses a chart path whose version
    differs from network_operator_chart_version, whose default (26.7.1) is not the chart the session installs."""
    name = chart_path().name
    if not (name.startswith("network-operator-") and name.endswith(".tgz")):
        pytest.fail("the network-operator chart %s is not named network-operator-<version>.tgz" % chart_path())
    return name[len("network-operator-"):-len(".tgz")]


def shared_chart(version):
    """charts/network-operator-<version>.tgz of the shared directory; fails (never skips) when it is missing."""
    path = Path(os.environ.get("GPUFABRIC_SHARED_DIR") or REPO.parent / "shared") / "charts" / ("network-operator-%s.tgz" % version)
    if not path.is_file():
        pytest.fail("the network-operator chart %s does not exist: set GPUFABRIC_SHARED_DIR to the directory holding charts/" % path)
    return path


def wait_for(what, fn, timeout=90.0, interval=0.25):
    """Poll fn() until it returns something truthy; fail with the last value seen."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = fn()
        except _kube.KubeError as err:
            last = err
        else:
            if last:
                return last
        time.sleep(interval)
    pytest.fail("timed out after %.0fs waiting for %s; last seen: %r" % (timeout, what, last))


class Cluster:
    def __init__(self, state_dir):
        self.state_dir = state_dir
        self.info = json.loads((state_dir / "cluster.json").read_text(encoding="utf-8"))
        self.kubeconfig = state_dir / "kubeconfig"
        self.assets = Path(self.info["assets"])
        self.env = dict(os.environ, KUBECONFIG=str(self.kubeconfig), PATH="%s:%s" % (self.assets, os.environ.get("PATH", "")))
        self.kube = _kube.Kube(self.kubeconfig)

    def run(self, *argv, check=True, timeout=600):
        proc = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout, check=False)  # noqa: S603
        if check and proc.returncode:
            pytest.fail("%s exited %d:\n%s\n%s" % (" ".join(argv), proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:]))
        return proc

    def controlplane(self, *argv, check=True):
        return self.run(*CONTROLPLANE, "--state-dir", str(self.state_dir), *argv, check=check)

    def standin_loop(self):
        status = json.loads((self.state_dir / "standins.status.json").read_text(encoding="utf-8"))
        return status["loop"], status["components"]

    def records(self):
        return {f.stem: json.loads(f.read_text(encoding="utf-8")) for f in self.state_dir.glob("*.pid")}


def token_needles(token):
    """A token as written, and as a kubeconfig or an HTTP header would carry it encoded."""
    return {token, base64.b64encode(token.encode()).decode(), "Bearer " + token}


def secret_leaks(root, stdout, needles, skip=()):
    """Where any needle appears: the runner's stdout and every file under root (the runner's artifacts, the log file,
    temporary directories), except the files in skip (relative to root: where the user put the secret)."""
    found = [("runner stdout", n) for n in needles if n in stdout]
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.relpath(path, root) in skip or os.path.islink(path):
                continue
            with open(path, "rb") as f:
                data = f.read()
            found += [(os.path.relpath(path, root), n) for n in needles if n.encode() in data]
    return found

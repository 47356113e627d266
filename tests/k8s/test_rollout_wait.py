# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SR-IOV wait against the real apiserver (issue 42): a roce_node_name that is no Node of the cluster fails the first
poll, naming the host, instead of waiting out sriov_networks_sync_timeout for a SriovNetworkNodeState that cannot come.
The session cluster has the Nodes node1 and node2."""

import os
import subprocess
import sys
import time

import yaml
from k8s_helpers import REPO

VENV_BIN = os.path.dirname(sys.executable)


def test_a_node_name_that_is_no_node_fails_the_first_poll(cluster, tmp_path):
    expected = [{"host": "gpu-a", "node_name": "node1", "policies": [], "resources": {}, "interfaces": []},
                {"host": "gpu-b", "node_name": "gpu-node-9", "policies": [], "resources": {}, "interfaces": []}]
    playbook = [{"name": "Wait", "hosts": "localhost", "gather_facts": False, "tasks": [{
        "name": "Wait for the SR-IOV sync", "gpufabric.roce.rollout_wait": {
            "check": "sriov_sync", "namespace": "nvidia-network-operator", "expected": expected, "timeout": 600, "interval": 2,
            "kubeconfig": str(cluster.kubeconfig)}}]}]
    (tmp_path / "wait.yml").write_text(yaml.safe_dump(playbook))
    env = dict(cluster.env, ANSIBLE_COLLECTIONS_PATH=str(REPO / ".build" / "collections"), ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PATH="%s:%s" % (VENV_BIN, cluster.env["PATH"]))
    start = time.monotonic()
    proc = subprocess.run(  # noqa: S603
        [os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=%s" % sys.executable,
         str(tmp_path / "wait.yml")], env=env, capture_output=True, text=True, timeout=600, check=False)
    out = " ".join((proc.stdout + proc.stderr).split())
    assert proc.returncode != 0, out[-4000:]
    assert "gpu-b: roce_node_name=gpu-node-9 is no Node of this cluster" in out, out[-4000:]
    assert "gpu-a:" not in out.split("sriov_sync failed", 1)[-1].split("Fix:")[0], out[-4000:]
    assert "Fix: set roce_node_name of each such host" in out and "sriov_sync: poll 1," in out and "poll 2," not in out, out[-4000:]
    assert time.monotonic() - start < 120

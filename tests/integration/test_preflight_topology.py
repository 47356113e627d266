# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight's GPU-NIC checks through the role: warn by default, fail with preflight_require_gpu_nic_affinity,
skip on a node without GPUs. The GPU node is the unit tests' derived two-socket layout
(tests/unit/fixtures/sysfs_gpu_two_socket.json), not a capture: no real GPU machine was used."""

import json
import os
import shutil
import sys

from _runner import REPO, fixture_playbook
from test_module_defaults import FIXTURE, build_tree

GPU_FIXTURE = os.path.join(REPO, "tests", "unit", "fixtures", "sysfs_gpu_two_socket.json")


def run(tmp_path, fixture, *extra):
    with open(fixture) as f:
        build_tree(str(tmp_path), json.load(f))
    return fixture_playbook("preflight_topology", tmp_path, sys.executable, *extra)


def test_warns_by_default(tmp_path):
    rc, out = run(tmp_path, GPU_FIXTURE, "roce_pf=ens1f0np0")
    assert rc == 0, out[-3000:]
    assert "GPU-NIC: ens1f0np0 PIX" in out
    assert "WARNING: nvidia_peermem is not loaded while 3 NVIDIA GPU(s) are present" in out
    # no config files in the tree: ACS is unknown and noted, never failed on
    assert "NOTE: ACS unknown on 3 bridge(s) between mlx5_0 and GPU0" in out


def test_fails_when_required(tmp_path):
    rc, out = run(tmp_path, GPU_FIXTURE, "roce_pf=ens41np0", "preflight_require_gpu_nic_affinity=true")
    assert rc != 0
    assert "localhost: ens41np0 (mlx5_2, 0000:41:00.0) is NODE to its nearest GPU GPU0 (0000:03:00.0)" in out, out[-3000:]
    assert "localhost: nvidia_peermem is not loaded" in out


def test_no_gpu_node_skips(tmp_path):
    os.makedirs(str(tmp_path / "sys" / "bus" / "pci" / "devices"), exist_ok=True)
    with open(FIXTURE) as f:
        spec = json.load(f)
    spec["files"] = {k: v for k, v in spec["files"].items() if "0000:b1:00.0" not in k}
    no_gpu = tmp_path / "no_gpu.json"
    no_gpu.write_text(json.dumps(spec))
    tree = tmp_path / "tree"
    tree.mkdir()
    rc, out = run(tree, str(no_gpu), "roce_pf=enp157s0np0", "preflight_require_gpu_nic_affinity=true")
    assert rc == 0, out[-3000:]
    assert "no NVIDIA GPU found; topology checks skipped" in out
    shutil.rmtree(str(tree))

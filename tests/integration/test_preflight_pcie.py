# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight's PCIe link policy through the role (issue 19): a downtrained link of an RDMA NIC or a GPU warns by default and
fails with preflight_pcie_downtrained=fail. The node is the unit tests' derived two-socket layout
(tests/unit/fixtures/sysfs_gpu_two_socket.json: mlx5_1 at 8.0 GT/s x8 of 16.0 GT/s x16, GPU2 at x8 of x16, an idle GPU1 at
2.5 GT/s), not a capture."""

import json
import os
import sys

from _runner import REPO, fixture_playbook
from test_module_defaults import build_tree

GPU_FIXTURE = os.path.join(REPO, "tests", "unit", "fixtures", "sysfs_gpu_two_socket.json")
MLX5_1 = "localhost: 0000:08:00.0 (mlx5_1): link 8.0 GT/s x8, capable of 16.0 GT/s x16 (downtrained: speed and width)"
GPU2 = "localhost: 0000:83:00.0 (GPU2): link 16.0 GT/s x8, capable of 16.0 GT/s x16 (downtrained: width)"


def run(tmp_path, *extra):
    with open(GPU_FIXTURE) as f:
        build_tree(str(tmp_path), json.load(f))
    return fixture_playbook("preflight_topology", tmp_path, sys.executable, "roce_pf=ens1f0np0", *extra)


def test_downtrained_link_warns_by_default(tmp_path):
    rc, out = run(tmp_path)
    assert rc == 0, out[-3000:]
    assert "WARNING: " + MLX5_1 in out
    assert GPU2 in out and "reseat the card" in out
    # the idle GPU's lowered speed is a note of the facts, not a warning
    assert "0000:07:00.0 (GPU1)" not in out


def test_downtrained_link_fails_on_request(tmp_path):
    rc, out = run(tmp_path, "preflight_pcie_downtrained=fail")
    assert rc != 0
    assert MLX5_1 in out and GPU2 in out, out[-3000:]
    assert "preflight_pcie_downtrained is fail; set it to warn to only warn" in out

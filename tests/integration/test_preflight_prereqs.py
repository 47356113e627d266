# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight refuses a node that lacks what later phases need, naming the host, what is missing and the fix.

The node is the unit tests' sysfs fixture (a ConnectX PF with a RoCE v2 GID), read by rdma_facts running
under a chosen Python: the machine's /usr/bin/python3, which has no pyroute2, or the venv's, which has.
The lab shows the same on a real kernel (molecule/lab/verify.yml).
"""

import json
import shutil
import subprocess
import sys

import pytest
from _runner import fixture_playbook
from test_module_defaults import FIXTURE, build_tree

SYSTEM_PYTHON = "/usr/bin/python3"
RELEASE = "6.1.0-56-amd64"


def node(tmp_path, modules_dep):
    with open(FIXTURE) as f:
        build_tree(str(tmp_path), json.load(f))
    (tmp_path / "proc" / "sys" / "kernel").mkdir(parents=True, exist_ok=True)
    (tmp_path / "proc" / "sys" / "kernel" / "osrelease").write_text(RELEASE + "\n")
    lib = tmp_path / "lib" / "modules" / RELEASE
    lib.mkdir(parents=True)
    (lib / "modules.dep").write_text("".join("%s:\n" % m for m in modules_dep))
    (lib / "modules.builtin").write_text("")


def preflight(tmp_path, python):
    return fixture_playbook("preflight_prereqs", tmp_path, python)


def test_a_node_python_without_pyroute2_is_refused_with_the_fix(tmp_path):
    if not shutil.which(SYSTEM_PYTHON) or subprocess.run([SYSTEM_PYTHON, "-c", "import pyroute2"], capture_output=True, check=False).returncode == 0:  # noqa: S603
        pytest.fail("%s must exist without pyroute2 for this test (Debian's python3 without python3-pyroute2)" % SYSTEM_PYTHON)
    node(tmp_path, ["kernel/net/8021q/8021q.ko.xz", "kernel/drivers/infiniband/hw/mlx5/mlx5_ib.ko.xz"])
    rc, out = preflight(tmp_path, SYSTEM_PYTHON)
    assert rc != 0
    assert "localhost: pyroute2 is not importable by %s, the node's Python" % SYSTEM_PYTHON in out, out[-3000:]
    assert "Fix: install it for that interpreter (apt/dnf/zypper install python3-pyroute2, or pip install pyroute2)" in out
    assert "kernel 6.1.0-56-amd64 can neither find nor load" not in out


def test_missing_kernel_modules_are_named_and_a_complete_node_passes(tmp_path):
    node(tmp_path, [])
    rc, out = preflight(tmp_path, sys.executable)
    assert rc != 0
    assert "localhost: kernel 6.1.0-56-amd64 can neither find nor load the module(s) 8021q, mlx5_ib" in out, out[-3000:]
    assert "pyroute2 is not importable" not in out

    shutil.rmtree(tmp_path / "lib")
    (tmp_path / "lib" / "modules" / RELEASE).mkdir(parents=True)
    (tmp_path / "lib" / "modules" / RELEASE / "modules.dep").write_text("kernel/net/8021q/8021q.ko.xz:\nkernel/drivers/infiniband/hw/mlx5/mlx5_ib.ko.xz:\n")
    # A PF with no VFs yet, as before host_network's first run: its report says 0, not "?".
    (tmp_path / "sys/devices/pci0000:97/0000:97:02.0/0000:9d:00.0/sriov_numvfs").write_text("0\n")
    rc, out = preflight(tmp_path, sys.executable)
    perftest_there = shutil.which("ib_write_bw") is not None
    assert (rc == 0) == perftest_there, out[-3000:]
    if not perftest_there:
        assert "localhost: perftest is not installed (no ib_write_bw on the PATH)" in out
    else:
        assert "SR-IOV PF enp157s0np0 (0 VFs now)" in out, out[-3000:]

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_defaults for group/gpufabric.roce.roce: sysfs_root reaches every module of the group.

Runs module_defaults/playbook.yml with ansible-playbook (check mode, connection local)
against the unit tests' sysfs fixture tree, then checks that check mode wrote nothing.
"""

import json
import os
import sys

from _runner import REPO, ansible_playbook, venv_path

FIXTURE = os.path.join(REPO, "tests", "unit", "fixtures", "sysfs_node.json")
PF_DEVICE = "sys/devices/pci0000:97/0000:97:02.0/0000:9d:00.0"


def build_tree(root, spec):
    for path in spec.get("dirs", []) + spec.get("unreadable", []):
        os.makedirs(os.path.join(root, path), exist_ok=True)
    for path, content in spec.get("files", {}).items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(content + "\n")
    for path, target in spec.get("links", {}).items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        os.symlink(os.path.relpath(os.path.join(root, target), os.path.dirname(full)), full)


def test_group_sysfs_root_reaches_every_module(tmp_path):
    with open(FIXTURE) as f:
        spec = json.load(f)
    # No VFs yet, so sriov_vf needs no netlink dump of a PF that does not exist here; ifindex 1
    # (lo) only has to be a valid index in this network namespace.
    spec["files"][PF_DEVICE + "/sriov_numvfs"] = "0"
    spec["files"]["sys/class/net/enp157s0np0/ifindex"] = "1"
    build_tree(str(tmp_path), spec)
    numvfs = tmp_path / PF_DEVICE / "sriov_numvfs"

    proc = ansible_playbook("-i", "localhost,", os.path.join(REPO, "tests", "integration", "module_defaults", "playbook.yml"),
                            "-e", "fixture_sys=%s" % (tmp_path / "sys"), "-e", "ansible_python_interpreter=%s" % sys.executable,
                            PATH=venv_path())
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "Unsupported parameters" not in proc.stdout
    assert "ok=8" in proc.stdout and "failed=0" in proc.stdout, proc.stdout[-3000:]
    assert numvfs.read_text() == "0\n", "check mode wrote sriov_numvfs"

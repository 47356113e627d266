# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/teardown.yml on the controller (issue 17, "Uninstall"): removing the VFs a node made in host mode destroys
them, so without consent the run is refused for every such node in its first play, before the cluster half or any node
changes; a render-mode inventory's cluster half talks to no cluster and says so. The example inventory's nodes are
unreachable (TEST-NET-1): a task that tried to reach one would fail the run."""

import os
import re

import _runner
from _runner import append

TEARDOWN = os.path.join(_runner.REPO, "playbooks", "teardown.yml")


def teardown(inv, *args):
    proc = _runner.ansible_playbook("-i", str(inv), TEARDOWN, *args, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PATH=_runner.venv_path())
    return proc.returncode, re.sub(r"\n\s+", " ", proc.stdout + proc.stderr)


def test_host_mode_vfs_are_not_removed_without_consent_and_nothing_runs(inv):
    append(inv / "host_vars" / "node2.yml", "roce_vf_mode: host\n")
    rc, out = teardown(inv, "-e", "roce_k8s_mode=render")
    assert rc != 0, out
    assert ("node2: host_network_vf_mode=host (roce_vf_mode), and the teardown removes the VFs made on this node, which destroys them "
            "and the interfaces of the pods using them. host_network_teardown_remove_vfs is false; nothing was changed. "
            "Fix: run with -e roce_teardown_remove_vfs=true") in out, out
    assert "node1: host_network_vf_mode" not in out  # node1 makes no VFs: nothing to consent to
    # Stopped in the first play: neither half started.
    assert "Teardown 1-3" not in out and "Teardown 4" not in out, out
    assert "TASK [gpufabric.roce.sriov_networks" not in out and "TASK [gpufabric.roce.network_operator" not in out


def test_the_cluster_half_alone_needs_no_consent_and_render_mode_leaves_the_cluster_alone(inv):
    append(inv / "host_vars" / "node2.yml", "roce_vf_mode: host\n")
    rc, out = teardown(inv, "--tags", "k8s", "-e", "roce_k8s_mode=render", "-e", "roce_render_dir=%s" % (inv.parent / "render-out"))
    assert rc == 0, out
    assert "roce_k8s_mode=render: the teardown does not talk to the cluster. The manifests rendered into %s/sriov-networks" % (
        inv.parent / "render-out") in out, out
    assert "The HelmRelease/Application and the NicClusterPolicy rendered into %s/network-operator are left in place" % (inv.parent / "render-out") in out
    assert re.search(r"localhost\s*: ok=\d+\s+changed=0\s+unreachable=0\s+failed=0", out), out
    assert "node1" not in out.split("PLAY RECAP", 1)[1] or "unreachable=0" in out

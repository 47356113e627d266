# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/teardown.yml on the controller (issue 17, "Uninstall"): removing the VFs a node made in host mode destroys
them, so without consent the run is refused for every such node in its first play, before the cluster half or any node
changes; a render-mode inventory's cluster half talks to no cluster and says so. The example inventory's nodes are
unreachable (TEST-NET-1): a task that tried to reach one would fail the run."""

import base64
import os
import re
import secrets

import _runner
import ansible_runner
import pytest
import yaml
from _runner import append, collection_env, copy_inventory, venv_path

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


@pytest.mark.parametrize("verbosity", [0, 3])
def test_a_kubeconfig_pasted_as_a_string_is_refused_first_and_never_shown(tmp_path, verbosity):
    # Issue 43: teardown ran k8s_tools first, whose refusal quoted the kubeconfig's content as a "path", in every sink.
    # Now it runs site.yml's argument check first. Through ansible-runner (AWX's job events), at default and -vvv.
    token = "gpufabric-%s" % secrets.token_hex(24)
    content = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
               "clusters": [{"name": "c", "cluster": {"server": "https://%s.invalid:6443" % token[-12:]}}],
               "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}], "users": [{"name": "u", "user": {"token": token}}]}
    root = tmp_path / "pdd"
    copy_inventory("example", root / "inventory")
    secret_file = os.path.join("inventory", "group_vars", "k8s_controller.yml")
    group_vars = yaml.safe_load((root / secret_file).read_text()) or {}
    group_vars.update(roce_k8s_mode="apply", network_operator_kubeconfig=yaml.safe_dump(content))
    (root / secret_file).write_text(yaml.safe_dump(group_vars))
    tmp = root / "tmp"
    tmp.mkdir()
    envvars = dict(collection_env(), PATH=venv_path(), ANSIBLE_LOG_PATH=str(root / "ansible.log"), TMPDIR=str(tmp),
                   ANSIBLE_LOCAL_TEMP=str(tmp / "local"))
    result = ansible_runner.run(private_data_dir=str(root), playbook=TEARDOWN, tags="k8s", verbosity=verbosity, quiet=True, envvars=envvars)
    with result.stdout as f:
        stdout = f.read()
    flat = " ".join(stdout.split())
    assert result.status == "failed", stdout[-4000:]
    assert "network_operator_kubeconfig" in flat and "is a string but not the path of a file on the controller" in flat, stdout[-4000:]
    plays = [e["event_data"]["play"] for e in result.events if e.get("event") == "playbook_on_play_start"]
    assert plays == ["Check the teardown before the first change"], plays
    needles = {token, base64.b64encode(token.encode()).decode(), "%s.invalid" % token[-12:]}
    leaks = [("runner stdout", n) for n in needles if n in stdout]
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and str(path.relative_to(root)) != secret_file:
            leaks += [(str(path.relative_to(root)), n) for n in needles if n.encode() in path.read_bytes()]
    assert leaks == []
    assert list((root / "artifacts").rglob("job_events/*.json")) and (root / "ansible.log").stat().st_size > 0


def test_bad_rollout_knobs_are_refused_before_any_change(inv):
    # Issue 43: roce_serial=ten stopped teardown with a traceback when the nodes' play started, after the cluster half.
    rc, out = teardown(inv, "-e", "roce_k8s_mode=render", "-e", "roce_serial=ten")
    assert rc != 0, out
    assert 'roce_serial="ten"' in out and "(roce_serial entries [\"ten\"])" in out and "Fix: roce_serial is a positive count" in out, out
    assert "Teardown 1-3" not in out and "Traceback" not in out, out

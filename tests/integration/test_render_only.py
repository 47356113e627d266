# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufabric.roce.render touches no node: with every node unreachable (ansible_host on a closed loopback port) it
renders the whole tree and succeeds, and no task ran for a node (the recap lists only the controller)."""

import os
import re
import socket

from _runner import REPO, ansible_playbook, copy_inventory, venv_path

TREE = {
    "network-operator": ["helm-chart.yaml", "helm-values.yaml", "kustomization.yaml", "nic-cluster-policy.yaml"],
    "sriov-networks": ["kustomization.yaml", "sriov-network-node-policies.yaml", "sriov-network-pool-configs.yaml", "sriov-networks.yaml"],
    "flux": ["kustomization.yaml", "kustomizations.yaml"],
    "flux/release": ["helm-release.yaml", "kustomization.yaml", "namespace.yaml"],
    "argocd": ["application.yaml", "kustomization.yaml", "namespace.yaml"],
    "argocd/resources": ["kustomization.yaml"],
}


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the socket is: nothing listens there


def test_render_playbook_with_unreachable_nodes_touches_none(tmp_path):
    inv = copy_inventory("example", tmp_path / "inventory")
    port = _closed_port()
    hosts = (inv / "hosts.yml").read_text()
    hosts = hosts.replace("ansible_host: 192.0.2.11", "ansible_host: 127.0.0.1\n          ansible_port: %d" % port)
    hosts = hosts.replace("ansible_host: 192.0.2.12", "ansible_host: 127.0.0.1\n          ansible_port: %d" % port)
    (inv / "hosts.yml").write_text(hosts)
    out = tmp_path / "render-out"
    proc = ansible_playbook("-i", str(inv), "gpufabric.roce.render", "-e", "roce_render_dir=%s" % out,
                            ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PATH=venv_path())
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text
    recap = text[text.index("PLAY RECAP"):]
    assert re.findall(r"^(\S+)\s+:", recap, re.M) == ["localhost"], recap
    assert "UNREACHABLE" not in text
    for d, files in TREE.items():
        assert sorted(f for f in os.listdir(out / d) if os.path.isfile(out / d / f)) == files, d

    # site.yml in render mode, by contrast, runs the node phases: the same inventory fails there.
    proc = ansible_playbook("-i", str(inv), os.path.join(REPO, "playbooks", "site.yml"), "-e", "roce_k8s_mode=render",
                            "-e", "roce_render_dir=%s" % out, ANSIBLE_NOCOLOR="1", PATH=venv_path())
    assert proc.returncode != 0 and "UNREACHABLE" in proc.stdout + proc.stderr


def test_render_playbook_refuses_apply_mode(tmp_path):
    proc = ansible_playbook("-i", os.path.join(REPO, "inventories", "example"), "gpufabric.roce.render",
                            "-e", "roce_k8s_mode=apply", "-e", "roce_render_dir=%s" % (tmp_path / "out"), ANSIBLE_NOCOLOR="1", PATH=venv_path())
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "gpufabric.roce.render only renders" in text, text
    assert not (tmp_path / "out").exists()

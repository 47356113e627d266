# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufabric.roce.render touches no node: with every node unreachable (ansible_host on a closed loopback port) it
renders the whole tree and succeeds, and no task ran for a node (the recap lists only the controller). It validates
as site.yml does before anything is written, and writes all or nothing: a refused render leaves an existing tree as it
was, and files of the render directory that it does not write stay. tests/unit/test_render_playbook.py holds the
playbook's structure to that (one validation for both playbooks, every write staged) and the refusal of a run without
the controller host for an inventory without the group; tests/unit/plugins/action/test_manifest_files.py the swap."""

import ipaddress
import json
import os
import re
import socket

import yaml
from _runner import REPO, ansible_playbook, append, copy_inventory, venv_path
from test_site_bad_input import DIFFERENT_RAILS, different_rails_inventory

TREE = {
    "network-operator": ["helm-chart.yaml", "helm-values.yaml", "kustomization.yaml", "nic-cluster-policy.yaml"],
    "sriov-networks": ["kustomization.yaml", "nccl-configmap.yaml", "sriov-network-node-policies.yaml", "sriov-network-pool-configs.yaml",
                       "sriov-networks.yaml"],
    "flux": ["kustomization.yaml", "kustomizations.yaml"],
    "flux/release": ["helm-release.yaml", "kustomization.yaml", "namespace.yaml"],
    "argocd": ["application.yaml", "kustomization.yaml", "namespace.yaml"],
    "argocd/resources": ["kustomization.yaml"],
}


def render(inv, out, *args):
    return ansible_playbook("-i", str(inv), "gpufabric.roce.render", "-e", "roce_render_dir=%s" % out, *args,
                            ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PATH=venv_path())


def flat(proc):
    """The run's output with a message's folded lines joined, to search it as one text."""
    return re.sub(r"\n\s+", " ", proc.stdout + proc.stderr)


def snapshot(root):
    """Every path under root, with its content (None for a directory) and mode."""
    out = {}
    for here, dirs, names in os.walk(root):
        for name in dirs + names:
            path, content = os.path.join(here, name), None
            if os.path.isfile(path):
                with open(path, "rb") as fh:
                    content = fh.read()
            out[os.path.relpath(path, root)] = (content, os.stat(path).st_mode)
    return out


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the socket is: nothing listens there


def test_render_playbook_with_unreachable_nodes_touches_none(tmp_path):
    """Also issue 42: the tree has the NCCL ConfigMap the training jobs' template mounts (what the inventory determines, and
    which run gives the rest), says that nothing in it applies QoS the host way, labels every SR-IOV object with the fabric
    as apply mode does, and the example renders what a cluster can run (no warning, no nv-ipam for host-local IPAM)."""
    inv = copy_inventory("example", tmp_path / "inventory")
    append(inv / "group_vars" / "roce_nodes.yml", "roce_qos: {}\n")  # lossless RoCE, applied the host way (the default)
    port = _closed_port()
    hosts = (inv / "hosts.yml").read_text()
    hosts = hosts.replace("ansible_host: 192.0.2.11", "ansible_host: 127.0.0.1\n          ansible_port: %d" % port)
    hosts = hosts.replace("ansible_host: 192.0.2.12", "ansible_host: 127.0.0.1\n          ansible_port: %d" % port)
    (inv / "hosts.yml").write_text(hosts)
    out = tmp_path / "render-out"
    # A file of the user's, and what a killed run left staged: the one stays, the other goes.
    (out / ".gpufabric-roce-stage" / "files" / "network-operator").mkdir(parents=True)
    (out / ".gpufabric-roce-stage" / "files" / "network-operator" / "helm-values.yaml").write_text("half of a killed run\n")
    (out / "README.md").write_text("the user's own\n")
    proc = render(inv, out)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text
    recap = text[text.index("PLAY RECAP"):]
    assert re.findall(r"^(\S+)\s+:", recap, re.M) == ["localhost"], recap
    assert "UNREACHABLE" not in text
    for d, files in TREE.items():
        assert sorted(f for f in os.listdir(out / d) if os.path.isfile(out / d / f)) == files, d
    assert sorted(os.listdir(out)) == ["README.md", "argocd", "flux", "network-operator", "sriov-networks"]
    assert (out / "README.md").read_text() == "the user's own\n"
    assert "half of a killed run" not in (out / "network-operator" / "helm-values.yaml").read_text()
    # The run says where the tree went and what changed in it, at default verbosity (issue 42, item 6).
    said = flat(proc)
    assert "Rendered the tree into %s: argocd/application.yaml, " % out in said, said
    assert ", network-operator/helm-chart.yaml, " in said and ", sriov-networks/sriov-networks.yaml" in said, said
    assert ("Manifests in %s (staged; the render playbook swaps them in last): 5 file(s), changed: "
            "sriov-networks/kustomization.yaml, sriov-networks/nccl-configmap.yaml, " % out) in said, said

    # Issue 42 item 4: the ConfigMap has every node, with what the inventory determines; the run says what needs a host run.
    flat_text = re.sub(r"\n\s+", " ", text).replace("''", "'")  # the YAML callback doubles a quote in a message
    (cm,) = [d for d in yaml.safe_load_all((out / "sriov-networks" / "nccl-configmap.yaml").read_text()) if d]
    assert cm["metadata"]["name"] == "gpufabric-nccl" and cm["data"]["node1.env"] == cm["data"]["node2.env"] == "NCCL_IB_TC=106\n"
    assert "nccl-configmap.yaml" in yaml.safe_load((out / "sriov-networks" / "kustomization.yaml").read_text())["resources"]
    assert ("so their entries hold what the inventory determines: NCCL_IB_TC. NCCL_IB_HCA and NCCL_IB_GID_INDEX need each node's "
            "facts") in flat_text, text
    assert "gpufabric.roce.site -e roce_k8s_mode=render --tags host_network,sriov" in flat_text
    assert ("WARNING: 2 node(s) (node1, node2) have roce_qos with roce_qos_via: host and no host_network facts in this run: "
            "nothing in %s carries that QoS" % out) in flat_text, text
    # Item 9: the fabric label apply mode adds (the inventory's directory name here), on every SR-IOV object.
    objects = [d for f in (out / "sriov-networks").glob("*.yaml") if f.name != "kustomization.yaml" for d in yaml.safe_load_all(f.read_text()) if d]
    assert len(objects) == 6 and {json.dumps(o["metadata"]["labels"].get("gpufabric.roce/fabric")) for o in objects} == {'"inventory"'}
    # Item 7: the example is what a cluster runs: a subnet per node with an address per VF, routes to the fabric's range only,
    # no nv-ipam deployed for host-local IPAM, and nothing to warn about.
    for net in (o for o in objects if o["kind"] == "SriovNetwork"):
        ipam = json.loads(net["spec"]["ipam"])
        assert ipaddress.ip_network(ipam["subnet"]).num_addresses - 3 >= 8 and ipam["routes"] == [{"dst": "10.255.0.0/16"}]
    assert "nvIpam" not in yaml.safe_load((out / "network-operator" / "nic-cluster-policy.yaml").read_text())["spec"]
    assert "[WARNING]" not in text, text

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


def test_a_render_refused_for_one_bad_rail_pool_leaves_an_existing_tree_byte_for_byte(tmp_path):
    """Before: the SR-IOV render refused it ("nothing was rendered or applied") after network-operator/, flux/ and argocd/
    were written, beside the stale sriov-networks/; argocd/resources then named no file."""
    inv = copy_inventory("example-multirail", tmp_path / "inv")
    group_vars = inv / "group_vars" / "roce_nodes.yml"
    group_vars.write_text(group_vars.read_text().replace("vlan: 102, subnet_pool: 10.102.0.0/16", "vlan: 102, subnet_pool: 10.101.0.0/16"))
    out = tmp_path / "render-out"
    for d, files in TREE.items():
        (out / d).mkdir(parents=True, exist_ok=True)
        for name in files:
            (out / d / name).write_text("# an earlier render of %s/%s\n" % (d, name))
    (out / "README.md").write_text("the user's own\n")
    before = snapshot(out)
    proc = render(inv, out)
    text = flat(proc)
    assert proc.returncode != 0, text
    assert snapshot(out) == before
    assert ('gpu-node01: roce_rails[rail1].subnet="10.101.0.0/24": overlaps the subnet 10.101.0.0/24 of gpu-node01 (rail rail0). '
            "Fix: give every rail a subnet_pool of its own") in text, text
    # Refused by the validation, before either role ran.
    assert "TASK [gpufabric.roce.network_operator" not in text and "TASK [gpufabric.roce.sriov_networks" not in text


def test_the_render_refuses_nodes_with_different_rails_as_site_yml_does(tmp_path):
    """Before: rendered (every node its own rails) and exited 0; site.yml refused the inventory."""
    out = tmp_path / "render-out"
    proc = render(different_rails_inventory(tmp_path / "inv"), out)
    text = flat(proc)
    assert proc.returncode != 0, text
    for message in DIFFERENT_RAILS:
        assert message in text, text
    assert not out.exists()


def test_a_run_without_the_controller_host_is_refused_and_writes_nothing(tmp_path):
    """Before: --limit to a node rendered nothing and exited 0."""
    out = tmp_path / "render-out"
    out.mkdir()
    (out / "README.md").write_text("the user's own\n")
    proc = render(os.path.join(REPO, "inventories", "example"), out, "--limit", "node1")
    text = flat(proc)
    assert proc.returncode != 0, text
    assert ('node1: --limit "node1": leaves out the k8s_controller host (localhost), on which gpufabric.roce.render renders the tree; '
            "this run would render nothing. Nothing was written. Fix: run without --limit") in text, text
    # The refusal ran on the node without connecting to it (its ansible_host is a documentation address).
    recap = text[text.index("PLAY RECAP"):]
    assert re.findall(r"^(\S+)\s+:", recap, re.M) == ["node1"] and "UNREACHABLE" not in text, recap
    assert os.listdir(out) == ["README.md"]

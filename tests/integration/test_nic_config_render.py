# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The QoS model the operator way through the real playbook (site.yml, render mode, on the controller only).

- inventories/example with ``roce_qos: {}``, ``roce_qos_via: operator`` and ``roce_nic_type: "1021"`` writes
  nic-configuration-templates.yaml beside the other manifests: one NicConfigurationTemplate per node, valid against
  the NIC Configuration Operator's CRD of network-operator 26.4.1, listed in kustomization.yaml. It is rendered once,
  in the validation play (phase 4 writes that render), and the SR-IOV manifests stay byte for byte the golden ones.
- ``roce_qos_via: operator`` set for roce_nodes only gives the NicClusterPolicy its ``nicConfigurationOperator``: the
  fabric plan carries it to the operator phase.
- A bad ``roce_nic_type`` stops the run in the validation play, with the renderer's message, before anything is
  written or any host phase starts.
"""

import importlib.util
import os

import yaml
from _runner import REPO, append, copy_inventory, site

GOLDEN = os.path.join(os.path.dirname(__file__), "golden", "one-rail", "example")
OPERATOR_QOS = 'roce_qos: {}\nroce_qos_via: operator\nroce_nic_type: "1021"\n'
RENDER_TASK = "TASK [gpufabric.roce.sriov_networks : Validate the inventory and render every SR-IOV object"


def _crd_schema():
    path = os.path.join(REPO, "tests", "unit", "plugins", "module_utils", "k8s_crd_schema.py")
    spec = importlib.util.spec_from_file_location("k8s_crd_schema", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def documents(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def test_operator_qos_renders_crd_valid_nic_configuration_templates_beside_the_manifests(tmp_path):
    # Named as the example: the fabric label (the inventory's directory name) is the golden files'.
    inv = copy_inventory("example", tmp_path / "example")
    append(inv / "group_vars" / "roce_nodes.yml", OPERATOR_QOS)
    rc, out = site(inv, "--tags", "operator,sriov", render_dir=str(tmp_path / "out"))
    assert rc == 0, out
    # roce_qos_via: operator in group_vars/roce_nodes (not all): the plan carries it, so the NicClusterPolicy deploys the
    # NIC Configuration Operator (issue 40: it did only when the controller's own variables said operator).
    ncp = documents(tmp_path / "out" / "network-operator" / "nic-cluster-policy.yaml")[0]
    assert "nicConfigurationOperator" in ncp["spec"], ncp["spec"]
    # Rendered once per run: by the controller's validation play; phase 4 does not include the render, and the nodes'
    # play skips its include of the render (without a controller in the run it would render there): listed once.
    runs = [part.split("TASK")[0] for part in out.split(RENDER_TASK)[1:]]
    assert [("ok: [" in r) for r in runs] == [True], runs
    nodes_copy = out.split("TASK [Validate the SR-IOV policies and networks here, as the controller would")[1].split("TASK")[0]
    assert "skipping: [" in nodes_copy and "ok: [" not in nodes_copy, nodes_copy
    assert "2 NicConfigurationTemplates for the QoS of 2 rail NIC(s) for 2 nodes" in " ".join(out.split()), out

    base = tmp_path / "out" / "sriov-networks"
    templates = documents(base / "nic-configuration-templates.yaml")
    assert [t["metadata"]["name"] for t in templates] == ["roce-node1-1021", "roce-node2-1021"]
    for t, node in zip(templates, ("node1", "node2")):
        assert t["kind"] == "NicConfigurationTemplate" and t["metadata"]["namespace"] == "nvidia-network-operator"
        # The fabric label apply mode adds (the inventory's directory name), written too (issue 42).
        assert t["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "gpufabric.roce", "gpufabric.roce/fabric": "example"}
        assert t["spec"]["nodeSelector"] == {"kubernetes.io/hostname": node}
        # the rail's PF only (enp157s0np0 = 0000:9d:00.0), never another ConnectX-7 of the node
        assert t["spec"]["nicSelector"] == {"nicType": "1021", "pciAddresses": ["0000:9d:00.0"]}
        spec = t["spec"]["template"]
        assert spec["numVfs"] == 8 and spec["roceOptimized"] == {"enabled": True, "qos": {"trust": "dscp", "pfc": "0,0,0,1,0,0,0,0", "tos": 106}}
        assert {e["name"]: e["value"] for e in spec["rawNvConfig"]} == {
            "ROCE_CC_PRIO_MASK_P1": "8",
            "ROCE_CC_PRIO_MASK_P2": "8",
            "CNP_DSCP_P1": "48",
            "CNP_DSCP_P2": "48",
        }

    schema = _crd_schema()
    crds = schema.load_crds(os.path.join(schema.crds_dir(), "nic-configuration-operator-network-operator-v26.4.1"))
    assert [p for t in templates for p in schema.validate_object(t, crds)] == []
    assert documents(base / "kustomization.yaml")[0]["resources"] == [
        "nccl-configmap.yaml",
        "nic-configuration-templates.yaml",
        "sriov-network-node-policies.yaml",
        "sriov-network-pool-configs.yaml",
        "sriov-networks.yaml",
    ]
    # The SR-IOV objects themselves are what they were without QoS.
    for f in ("sriov-network-node-policies.yaml", "sriov-networks.yaml", "sriov-network-pool-configs.yaml"):
        with open(os.path.join(GOLDEN, f + ".golden")) as golden:
            assert (base / f).read_text() == golden.read(), f

    # Issue 42: without host facts the NCCL ConfigMap has what the inventory determines, NCCL_IB_TC from the QoS; the tree
    # carries that QoS (the templates), so there is no warning that only a host run applies it.
    (cm,) = documents(base / "nccl-configmap.yaml")
    assert cm["data"]["node1.env"] == cm["data"]["node2.env"] == "NCCL_IB_TC=106\n"
    assert "have roce_qos with roce_qos_via: host" not in out

    # Back to the host way: the templates' file goes (GitOps then prunes them), and every file is the golden one again.
    append(inv / "group_vars" / "roce_nodes.yml", "roce_qos_via: host\n")
    rc, out = site(inv, "--tags", "sriov", render_dir=str(tmp_path / "out"))
    assert rc == 0, out
    assert "WARNING: 2 node(s) (node1, node2) have roce_qos with roce_qos_via: host" in " ".join(out.split()), out
    assert not (base / "nic-configuration-templates.yaml").exists()
    with open(os.path.join(GOLDEN, "kustomization.yaml.golden")) as golden:
        assert (base / "kustomization.yaml").read_text() == golden.read()


def test_a_bad_nic_type_stops_the_run_in_the_validation_play_before_anything_is_written(tmp_path):
    inv = copy_inventory("example", tmp_path / "inv")
    append(inv / "group_vars" / "roce_nodes.yml", OPERATOR_QOS)
    append(inv / "host_vars" / "node2.yml", "roce_nic_type: cx7\n")
    rc, out = site(inv, render_dir=str(tmp_path / "out"))
    assert rc != 0, out
    assert "1 problem found; nothing was rendered or applied" in out, out
    assert 'node2: roce_nic_type="cx7": is not a PCI device id (4 hex digits). Fix: set it to the PCI device id' in out, out
    assert "PLAY [Phase 1" not in out and not (tmp_path / "out").exists()

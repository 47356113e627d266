# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pod mode with rails, through the role's own tasks up to the ring plan: the pods the role renders
for the 8-rail example inventory, the network-status Multus would give them, and the rings the role's
pod_plan.yml builds from it (rdma_verify_pod_rails/playbook.yml), and the pods themselves (the one-rail example's
validated against the core Kubernetes schema with kubernetes-validate). Running perftest inside the pods
needs a real cluster (a kubelet, SR-IOV VFs), which this does not have."""

import json
import os
import shutil

import kubernetes_validate
import yaml
from _runner import REPO, ansible_playbook

PLAYBOOK = os.path.join(REPO, "tests", "integration", "rdma_verify_pod_rails", "playbook.yml")


def _plan(inventory, tmp_path):
    inventory = inventory if os.path.isabs(str(inventory)) else os.path.join(REPO, "inventories", inventory)
    run = ansible_playbook("-i", str(inventory), PLAYBOOK,
                           RENDER_DIR=str(tmp_path), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    with open(tmp_path / "plan.json") as f:
        return json.load(f)


def test_eight_rails_make_eight_rings_each_over_its_own_pod_interface_and_pods_that_attach_every_rail(tmp_path):
    plan = _plan("example-multirail", tmp_path)
    rails = ["rail%d" % j for j in range(8)]
    assert plan["rails"] == rails
    # two nodes: each rail's ring has two rounds (a -> b, then b -> a), rail after rail
    assert [sorted({p["rail"] for p in pairs}) for pairs in plan["rounds"]] == [[r] for r in rails for _round in (0, 1)]
    for node, peer, peer_index in (("gpu-node01", "gpu-node02", 2), ("gpu-node02", "gpu-node01", 1)):
        clients = [d for d in plan["duties"][node] if d["client_to"]]
        # rail j is the pod's net<j+1> (request order), reached at the peer's rail-j address, never another rail's
        assert [(d["rail"], d["netdev"], d["client_to"], d["peer_address"]) for d in clients] == [
            (r, "net%d" % (j + 1), peer, "10.%d.0.%d" % (100 + j, peer_index)) for j, r in enumerate(rails)]
    # The same run's pods: each attaches every rail and requests one VF of each.
    with open(tmp_path / "rdma-verify-pods.yaml") as f:
        pods = [d for d in yaml.safe_load_all(f) if d]
    for pod, node in zip(pods, ("gpu-node01", "gpu-node02")):
        assert pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == ",".join(
            "roce-%s-rail%d" % (node, j) for j in range(8))
        want = {"nvidia.com/roce_%s_rail%d" % (node.replace("-", "_"), j): "1" for j in range(8)}
        assert pod["spec"]["containers"][0]["resources"]["requests"] == want
    assert len(pods) == 2


def test_one_rail_keeps_the_single_ring_over_net1_and_renders_pods_valid_against_kubernetes(tmp_path):
    plan = _plan("example", tmp_path)
    assert "rails" not in plan
    assert [d["peer_address"] for d in plan["duties"]["node1"] if d["client_to"]] == ["10.100.0.2"]
    # no QoS in the example: perftest gets no -T
    assert {d["tclass"] for duties in plan["duties"].values() for d in duties} == {None}
    # The pods the role rendered (its render action): valid against the core Kubernetes 1.30 schema (strict), one per node,
    # each on its node's one network with one VF of it, and allowed to lock memory for RDMA.
    with open(tmp_path / "rdma-verify-pods.yaml") as f:
        pods = [d for d in yaml.safe_load_all(f) if d]
    assert [p["spec"]["nodeSelector"]["kubernetes.io/hostname"] for p in pods] == ["node1", "node2"]
    for pod in pods:
        kubernetes_validate.validate(pod, "1.30", strict=True)
        node = pod["spec"]["nodeSelector"]["kubernetes.io/hostname"]
        assert pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == "roce-" + node
        assert pod["spec"]["containers"][0]["resources"]["requests"] == {"nvidia.com/roce_" + node: "1"}
        assert "IPC_LOCK" in pod["spec"]["containers"][0]["securityContext"]["capabilities"]["add"]
        assert pod["spec"]["imagePullSecrets"] == [{"name": "mirror-pull"}]


def test_each_pod_test_sends_with_its_rails_tos(tmp_path):
    # issue 19: roce_qos sets the PF's RDMA-CM default ToS, not the VFs' the pods hold, so pod mode names the ToS itself.
    inv = tmp_path / "inventory"
    shutil.copytree(os.path.join(REPO, "inventories", "example-multirail"), inv)
    with open(inv / "group_vars" / "roce_nodes.yml", "a") as f:
        f.write("roce_qos: {}\n")
    node2 = inv / "host_vars" / "gpu-node02.yml"
    hv = yaml.safe_load(node2.read_text())
    hv["roce_rail_overrides"]["rail5"] = {"qos": {"tos": 98}}
    node2.write_text(yaml.safe_dump(hv))
    plan = _plan(inv, tmp_path)
    tos = {(host, d["rail"]): d["tclass"] for host, duties in plan["duties"].items() for d in duties}
    assert tos[("gpu-node01", "rail5")] == 106 and tos[("gpu-node02", "rail5")] == 98
    assert {t for (host, rail), t in tos.items() if rail != "rail5"} == {106}

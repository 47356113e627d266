# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Teardown (issue 17): what one rollout deletes, and when the node states have released the VFs of its policies."""

from k8s_objects import NS, obj

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.fabric import fabric_teardown
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.helm_release import crd_names, teardown_plan
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.status import sriov_drain_plan, sriov_node_states_draining
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.wait import judge, reads_for


def test_teardown_deletes_only_its_fabric_networks_first():
    live = [obj("SriovNetworkNodePolicy", "a-node1", "pool-a"), obj("SriovNetwork", "a-node1", "pool-a"),
            obj("SriovNetwork", "b-node2", "pool-b"), obj("SriovNetwork", "hand-made", managed=False),
            obj("SriovNetwork", "old", None), dict(obj("ConfigMap", "gpufabric-nccl", "pool-a"), apiVersion="v1"),
            # issue 42: the drain pool the rollout made, deleted last (after the node states released the VFs)
            obj("SriovNetworkPoolConfig", "roce-pool", "pool-a"), obj("SriovNetworkPoolConfig", "admins-pool", managed=False)]
    got = fabric_teardown(live, "pool-a")
    assert ["%s/%s" % (o["kind"], o["metadata"]["name"]) for o in got["delete"]] == [
        "SriovNetwork/a-node1", "SriovNetworkNodePolicy/a-node1", "ConfigMap/gpufabric-nccl", "SriovNetworkPoolConfig/roce-pool"]
    assert got["delete"][0] == {"apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetwork", "metadata": {"name": "a-node1", "namespace": NS}}
    assert got["policies"] == ["a-node1"]
    assert got["other_fabrics"] == ["pool-b"]
    assert got["kept"] == ["SriovNetwork/b-node2", "SriovNetwork/hand-made", "SriovNetwork/old", "SriovNetworkPoolConfig/admins-pool"]


def test_teardown_deletes_its_dra_claim_templates_first_in_their_networks_namespace():
    def claim(name, fabric, ns):
        out = obj("ResourceClaimTemplate", name, fabric)
        out["apiVersion"] = "resource.k8s.io/v1"
        out["metadata"]["namespace"] = ns
        return out

    live = [obj("SriovNetwork", "roce-rail0", "pool-a"), claim("roce-rail0", "pool-a", "training"), claim("roce-rail0", "pool-b", "other")]
    got = fabric_teardown(live, "pool-a")
    assert [(o["kind"], o["metadata"]["namespace"]) for o in got["delete"]] == [("ResourceClaimTemplate", "training"), ("SriovNetwork", NS)]
    assert got["delete"][0]["apiVersion"] == "resource.k8s.io/v1"
    # Another fabric's template stays and keeps the operator; it is read by label, so it is not among the CRDs' objects.
    assert got["other_fabrics"] == ["pool-b"] and got["kept"] == []


def test_teardown_of_an_empty_cluster_deletes_nothing():
    assert fabric_teardown([], "pool-a") == {"delete": [], "policies": [], "other_fabrics": [], "kept": []}


def state(node, spec_ifaces, status_ifaces=None, sync="Succeeded"):
    return {"metadata": {"name": node}, "spec": {"interfaces": spec_ifaces} if spec_ifaces else {},
            "status": {"syncStatus": sync, "interfaces": status_ifaces or []}}


def iface(name, policy=None, num=8, external=False):
    out = {"name": name, "pciAddress": "0000:%s" % name[-2:], "numVfs": num}
    if policy:
        out["vfGroups"] = [{"policyName": policy, "resourceName": "r", "vfRange": "0-%d" % (num - 1)}]
    if external:
        out["externallyManaged"] = True
    return out


BEFORE = [
    state("node1", [iface("pf0", "a-node1"), iface("pf1", "a-node1-pf1", external=True)]),
    state("node2", [iface("pf0", "b-node2")]),  # another fabric's policy only
]


def test_drain_plan_lists_the_nodes_and_pfs_of_the_deleted_policies():
    plan = sriov_drain_plan(BEFORE, ["a-node1", "a-node1-pf1"])
    assert plan == [{"node_name": "node1", "policies": ["a-node1", "a-node1-pf1"], "interfaces": [
        {"name": "pf0", "pciAddress": "0000:f0", "externallyManaged": False},
        {"name": "pf1", "pciAddress": "0000:f1", "externallyManaged": True}]}]


def test_drain_waits_for_the_spec_the_sync_and_the_operator_made_vfs():
    plan = sriov_drain_plan(BEFORE, ["a-node1", "a-node1-pf1"])
    # The operator has not rewritten the spec yet.
    assert sriov_node_states_draining(BEFORE, plan) == [
        "node1: spec.interfaces still carries VF groups of the deleted policies on pf0, pf1 (the operator has not rewritten the node state yet)"]
    # Spec rewritten, the daemon is applying it.
    syncing = [state("node1", [], [iface("pf0"), iface("pf1", num=8)], sync="InProgress")]
    assert sriov_node_states_draining(syncing, plan) == ["node1: syncStatus=InProgress"]
    # Succeeded, but status still shows the operator's VFs (the daemon's report of an older generation).
    stale = [state("node1", [], [iface("pf0", num=8), iface("pf1", num=8)])]
    assert sriov_node_states_draining(stale, plan) == ["node1: status.interfaces pf0 still reports numVfs=8"]
    # Released: pf0 has none; pf1's VFs were made on the host and stay (the host half removes them).
    done = [state("node1", [], [{"name": "pf0", "pciAddress": "0000:f0"}, iface("pf1", num=8)])]
    assert sriov_node_states_draining(done, plan) == []
    # A node state that is gone holds nothing.
    assert sriov_node_states_draining([], plan) == []


def test_drain_keeps_vfs_another_policy_still_configures():
    plan = sriov_drain_plan([state("node1", [iface("pf0", "a-node1")])], ["a-node1"])
    shared = [state("node1", [iface("pf0", "other")], [iface("pf0", num=8)])]
    assert sriov_node_states_draining(shared, plan) == []


def test_rollout_wait_judges_the_drain():
    plan = sriov_drain_plan(BEFORE, ["a-node1"])
    assert list(reads_for("sriov_drain", NS, plan)) == ["states"]
    verdict = judge("sriov_drain", {"states": BEFORE}, plan)
    assert not verdict.done and verdict.summary.startswith("0/1 nodes released the VFs of the deleted policies: node1: spec.interfaces")
    verdict = judge("sriov_drain", {"states": [state("node1", [], [{"name": "pf0"}])]}, plan)
    assert verdict.done and verdict.summary == "1/1 nodes released the VFs of the deleted policies"


def test_release_teardown_touches_only_the_configured_release():
    def rel(name, ns, status="deployed"):
        return {"name": name, "namespace": ns, "chart": "network-operator-26.4.1", "chart_version": "26.4.1", "revision": 2, "status": status}

    releases = [rel("network-operator", "nvidia-network-operator"), rel("noo-site", "other")]
    got = teardown_plan(releases, "network-operator", "nvidia-network-operator")
    assert got["release"]["name"] == "network-operator"
    assert got["others"] == ["'noo-site' in namespace 'other' (chart network-operator-26.4.1, revision 2, deployed)"]
    # Not installed (or only kept in history): nothing to uninstall, the other release still left alone.
    assert teardown_plan(releases[1:], "network-operator", "nvidia-network-operator")["release"] is None
    assert teardown_plan([rel("network-operator", "nvidia-network-operator", "uninstalled")], "network-operator",
                         "nvidia-network-operator") == {"release": None, "others": []}


def test_crd_names_of_helm_show_crds():
    docs = [None, {"kind": "CustomResourceDefinition", "metadata": {"name": "b.example.com"}},
            {"kind": "CustomResourceDefinition", "metadata": {"name": "a.example.com"}}, {"kind": "ConfigMap", "metadata": {"name": "x"}}]
    assert crd_names(docs) == ["a.example.com", "b.example.com"]

"""Unit tests of plugins/module_utils/_k8s/wait.py: what each poll reads and how it is judged."""

from test_k8s_render import PF, render

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import wait as w
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import operator as op


def _synced_state(name, num_vfs=8, mtu=9000):
    iface = {"name": PF, "numVfs": num_vfs, "mtu": mtu}
    return {"metadata": {"name": name}, "spec": {"interfaces": [iface]}, "status": {"syncStatus": "Succeeded", "interfaces": [iface]}}


def _node(name, alloc):
    return {"metadata": {"name": name}, "status": {"allocatable": alloc}}


def test_sriov_reads_states_and_nodes_when_resources_are_expected():
    expected = render()["nodes"]
    reads = w.reads_for("sriov_sync", "nvidia-network-operator", expected)
    assert reads == {
        "states": {"api_version": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkNodeState", "namespace": "nvidia-network-operator"},
        "nodes": {"api_version": "v1", "kind": "Node"},
    }
    no_resources = [dict(n, resources={}) for n in expected]
    assert set(w.reads_for("sriov_sync", "ns", no_resources)) == {"states"}


def test_sriov_waits_for_allocatable_after_the_sync():
    expected = render()["nodes"]
    states = [_synced_state("node1"), _synced_state("node2")]
    nodes = [_node("node1", {"nvidia.com/roce_node1": "8"}), _node("node2", {})]
    verdict = w.judge("sriov_sync", {"states": states, "nodes": nodes}, expected)
    assert not verdict.done and not verdict.failed
    assert verdict.summary == "2/2 nodes synced, 1/2 with the VFs allocatable: node2: allocatable nvidia.com/roce_node2 is missing, expected 8"
    nodes[1] = _node("node2", {"nvidia.com/roce_node2": "8"})
    verdict = w.judge("sriov_sync", {"states": states, "nodes": nodes}, expected)
    assert verdict.done
    assert verdict.summary == "2/2 nodes synced, 2/2 with the VFs allocatable"


def test_sriov_empty_spec_succeeded_is_pending_not_done():
    expected = render()["nodes"]
    empty = [{"metadata": {"name": n}, "spec": {}, "status": {"syncStatus": "Succeeded"}} for n in ("node1", "node2")]
    verdict = w.judge("sriov_sync", {"states": empty, "nodes": [_node("node1", {}), _node("node2", {})]}, expected)
    assert not verdict.done and not verdict.failed
    assert verdict.summary.startswith("0/2 nodes synced, 0/2 with the VFs allocatable: node1: spec.interfaces has no enp157s0np0 yet")


def test_sriov_failed_node_stops_the_wait_with_its_error():
    expected = render()["nodes"]
    failed = _synced_state("node2")
    failed["status"] = {"syncStatus": "Failed", "lastSyncError": "cannot allocate VFs"}
    verdict = w.judge("sriov_sync", {"states": [_synced_state("node1"), failed], "nodes": [_node("node1", {}), _node("node2", {})]}, expected)
    assert verdict.failed == ["node2: syncStatus=Failed lastSyncError: cannot allocate VFs"]
    assert not verdict.done


def test_a_node_name_that_is_no_node_fails_the_first_poll_naming_every_such_host():
    # Issue 42: the wait sat out its whole timeout for a state that cannot come.
    expected = render()["nodes"]
    no_resources = [dict(n, resources={}) for n in expected]
    assert set(w.reads_for("sriov_sync", "ns", no_resources, first=True)) == {"states", "nodes"}
    assert set(w.reads_for("sriov_sync", "ns", no_resources)) == {"states"}
    verdict = w.judge("sriov_sync", {"states": [], "nodes": [_node("node1", {})]}, no_resources)
    assert verdict.failed[0] == "%s: roce_node_name=node2 is no Node of this cluster, so its SriovNetworkNodeState never comes" % (
        no_resources[1]["host"])
    assert verdict.failed[1].startswith("Fix: set roce_node_name of each such host to its name as kubectl get nodes shows it")
    assert "(1 of 2 node(s)" in verdict.failed[1] and not verdict.done
    # Every expected node is a Node: judged as before.
    verdict = w.judge("sriov_sync", {"states": [], "nodes": [_node("node1", {}), _node("node2", {})]}, no_resources)
    assert not verdict.failed and verdict.pending


def test_progress_line_counts_what_it_does_not_show():
    expected = [{"node_name": "n%d" % i, "interfaces": [], "resources": {}} for i in range(10)]
    verdict = w.judge("sriov_sync", {"states": []}, expected)
    assert verdict.summary.endswith("(+7 more)")
    assert len(verdict.pending) == 10


def test_ncp_needs_ready_policy_and_available_deployments():
    ncp = {"status": {"state": "ready", "appliedStates": [{"name": "state-multus-cni", "state": "ready"}]}}
    deps = [{"metadata": {"name": "network-operator"}, "spec": {"replicas": 1}, "status": {"availableReplicas": 1}}]
    assert w.judge("nic_cluster_policy", {"ncp": [ncp], "deployments": deps}, []).done
    verdict = w.judge("nic_cluster_policy", {"ncp": [], "deployments": deps}, [])
    assert verdict.summary == "NicClusterPolicy absent, deployments 1/1 available: NicClusterPolicy nic-cluster-policy not found"
    verdict = w.judge("nic_cluster_policy", {"ncp": [ncp], "deployments": []}, [])
    assert verdict.pending == ["no Deployment in the operator namespace yet (is the Helm release installed there?)"]


DEPLOYMENTS = [{"metadata": {"name": "network-operator"}, "spec": {"replicas": 1}, "status": {"availableReplicas": 1}}]


def _cond(ctype, status="True", reason="ComponentReady", message="", generation=2):
    return {"type": ctype, "status": status, "reason": reason, "message": message, "observedGeneration": generation,
            "lastTransitionTime": "2026-12-01T10:00:00Z"}


def _ncp_267(*conds, generation=2, state="notReady"):
    """A NicClusterPolicy as network-operator 26.7 writes its status (controllers/conditions.go, nic_policy_helpers.go)."""
    return {"metadata": {"name": "nic-cluster-policy", "generation": generation},
            "status": {"state": state, "appliedStates": [{"name": "state-multus-cni", "state": "ready"}], "conditions": list(conds)}}


def test_a_policy_without_status_is_not_called_absent():
    """Issue 41: a policy that exists but has no status yet said "NicClusterPolicy absent"."""
    ncp = {"metadata": {"name": "nic-cluster-policy", "generation": 1}, "spec": {}}
    for chart_version in (None, False, True):
        verdict = w.judge("nic_cluster_policy", {"ncp": [ncp], "deployments": DEPLOYMENTS}, [], chart_version)
        assert verdict.pending == ["no status yet: no network-operator has reconciled it"]
        assert verdict.summary == ("NicClusterPolicy without status, deployments 1/1 available: "
                                   "no status yet: no network-operator has reconciled it")
        assert "absent" not in verdict.summary


def test_26_7_is_judged_by_its_conditions():
    ready = _ncp_267(_cond("MultusCNIReady"), _cond("NVIPAMReady"), _cond("Ready", reason="AllComponentsReady"), state="ready")
    verdict = w.judge("nic_cluster_policy", {"ncp": [ready], "deployments": DEPLOYMENTS}, [], True)
    assert verdict.done and verdict.summary == "NicClusterPolicy Ready=True, 2/2 components ready, deployments 1/1 available"

    # Not ready: the component named by its spec section, with the condition's reason and message.
    pending = _ncp_267(_cond("MultusCNIReady"), _cond("NVIPAMReady", "False", "ComponentNotReady", "DaemonSet nv-ipam-node: 0/2 ready"),
                       _cond("OFEDDriverReady", "False", "ComponentError", "failed to render the OFED manifests"),
                       _cond("Ready", "False", "ComponentError", "One or more components are in error state"))
    verdict = w.judge("nic_cluster_policy", {"ncp": [pending], "deployments": DEPLOYMENTS}, [], True)
    assert verdict.pending == [
        "nvIpam not ready (NVIPAMReady=False, ComponentNotReady): DaemonSet nv-ipam-node: 0/2 ready",
        "ofedDriver not ready (OFEDDriverReady=False, ComponentError): failed to render the OFED manifests",
    ]
    assert verdict.summary.startswith("NicClusterPolicy Ready=False, 1/3 components ready, deployments 1/1 available: nvIpam not ready")

    # Conditions of an older generation are not taken for the new spec's.
    stale = _ncp_267(_cond("MultusCNIReady", generation=1), _cond("Ready", reason="AllComponentsReady", generation=1), generation=2, state="ready")
    verdict = w.judge("nic_cluster_policy", {"ncp": [stale], "deployments": DEPLOYMENTS}, [], True)
    assert verdict.pending == ["not reconciled since the last change: its conditions are of generation 1, the policy is at 2"]

    # Every component ready but the aggregate not (yet): the aggregate's reason.
    agg = _ncp_267(_cond("MultusCNIReady"), _cond("Ready", "False", "ComponentsNotReady", "One or more components are not yet ready"))
    verdict = w.judge("nic_cluster_policy", {"ncp": [agg], "deployments": DEPLOYMENTS}, [], True)
    assert verdict.pending == ["Ready=False (ComponentsNotReady): One or more components are not yet ready"]


def test_26_7_does_not_take_an_older_operators_state():
    """On a 26.7 chart a status without conditions is an older operator's (mid-upgrade): its state=ready is not enough."""
    old = {"metadata": {"name": "nic-cluster-policy", "generation": 1},
           "status": {"state": "ready", "appliedStates": [{"name": "state-multus-cni", "state": "ready"}]}}
    verdict = w.judge("nic_cluster_policy", {"ncp": [old], "deployments": DEPLOYMENTS}, [], True)
    assert verdict.pending == ["no Ready condition yet: the network-operator 26.7 has not reconciled it (status.state=ready)"]
    # Before 26.7 the state decides, as before; without a chart version, what the object carries.
    assert w.judge("nic_cluster_policy", {"ncp": [old], "deployments": DEPLOYMENTS}, [], False).done
    assert w.judge("nic_cluster_policy", {"ncp": [old], "deployments": DEPLOYMENTS}, []).done


def test_older_releases_keep_the_state_wait():
    notready = {"metadata": {"name": "nic-cluster-policy"},
                "status": {"state": "notReady", "appliedStates": [{"name": "state-OFED", "state": "notReady", "message": "waiting for pods"}]}}
    verdict = w.judge("nic_cluster_policy", {"ncp": [notready], "deployments": DEPLOYMENTS}, [], False)
    assert verdict.pending == ["state-OFED: notReady (waiting for pods)"]
    assert verdict.summary.startswith("NicClusterPolicy notReady, deployments 1/1 available")


def test_the_action_judges_by_the_chart_version():
    versions = ("26.1.2", "26.4.1", "26.7.0-rc.2", "26.7.1", "v26.10.0", "27.1.0")
    assert [op.chart_has(v, "conditions") for v in versions] == [False, False, True, True, True, True]


def _nic_device(name, node, pcis, reason=None, message=""):
    dev = {"metadata": {"name": name}, "status": {"node": node, "type": "1021", "ports": [{"pci": p} for p in pcis]}}
    if reason:
        dev["status"]["conditions"] = [{"type": "ConfigUpdateInProgress", "status": "False", "reason": reason, "message": message}]
    return dev


NIC_EXPECTED = [
    {"node_name": "node1", "rail": "rail0", "pf": "enp157s0np0", "pci_address": "0000:9d:00.0", "nic_type": "1021", "template": "roce-node1-1021"},
    {"node_name": "node1", "rail": "rail1", "pf": "enp157s0np1", "pci_address": "0000:9d:00.1", "nic_type": "1021", "template": "roce-node1-1021"},
    {"node_name": "node2", "rail": None, "pf": "enp157s0np0", "pci_address": "0000:9d:00.0", "nic_type": "1021", "template": "roce-node2-1021"},
]


def test_nic_config_reads_templates_and_devices_and_waits_until_each_template_lists_its_nics():
    reads = w.reads_for("nic_config", "ns", NIC_EXPECTED)
    assert {q["kind"] for q in reads.values()} == {"NicConfigurationTemplate", "NicDevice"}
    assert {q["namespace"] for q in reads.values()} == {"ns"}
    # device names are not predicted: matched by node and port PCI address
    devices = [
        _nic_device("node1-1021-mt1", "node1", ["0000:9d:00.0", "0000:9d:00.1"], "PendingReboot"),
        _nic_device("node1-1021-spare", "node1", ["0000:a0:00.0"]),
        _nic_device("node2-1021-mt2", "node2", ["0000:9d:00.0"], "UpdateSuccessful"),
    ]
    templates = [{"metadata": {"name": "roce-node1-1021"}, "status": {"nicDevices": ["node1-1021-mt1"]}}, {"metadata": {"name": "roce-node2-1021"}}]
    v = w.judge("nic_config", {"templates": templates, "devices": devices[:1]}, NIC_EXPECTED)
    assert not v.done and not v.failed
    assert "node2 PF (0000:9d:00.0): no NicDevice has this port yet" in v.summary
    v = w.judge("nic_config", {"templates": templates, "devices": devices}, NIC_EXPECTED)
    assert v.summary.startswith("2/3 rail NICs listed by their NicConfigurationTemplate (1 PendingReboot):")
    assert "NicConfigurationTemplate roce-node2-1021 does not list NicDevice node2-1021-mt2 yet" in v.summary
    templates[1]["status"] = {"nicDevices": ["node2-1021-mt2"]}
    v = w.judge("nic_config", {"templates": templates, "devices": devices}, NIC_EXPECTED)
    assert v.done and v.summary == "3/3 rail NICs listed by their NicConfigurationTemplate (1 PendingReboot, 1 UpdateSuccessful)"
    v = w.judge("nic_config", {"templates": templates[:1], "devices": devices}, NIC_EXPECTED)
    assert "NicConfigurationTemplate roce-node2-1021 is not in the cluster" in v.summary


def test_nic_config_a_spec_the_daemon_refuses_stops_the_wait():
    devices = [_nic_device("node2-1021-mt2", "node2", ["0000:9d:00.0"], "IncorrectSpec", "roceOptimized is not supported with Infiniband")]
    templates = [{"metadata": {"name": "roce-node2-1021"}, "status": {"nicDevices": ["node2-1021-mt2"]}}]
    v = w.judge("nic_config", {"templates": templates, "devices": devices}, NIC_EXPECTED[2:])
    assert v.failed == ["node2 PF (0000:9d:00.0): NicDevice node2-1021-mt2: IncorrectSpec: roceOptimized is not supported with Infiniband"]


def test_node_policies_are_read_and_judged_by_name_with_the_policy_wait():
    reads = w.reads_for("nic_cluster_policy", "ns", [{"name": "h100"}, {"name": "b200"}])
    assert reads["nnps"] == {"api_version": "mellanox.com/v1alpha1", "kind": "NicNodePolicy"}
    assert "nnps" not in w.reads_for("nic_cluster_policy", "ns", [])
    ncp = _ncp_267(_cond("MultusCNIReady"), _cond("Ready", reason="AllComponentsReady"), state="ready")
    h100 = dict(_ncp_267(_cond("OFEDDriverReady", "False", "ComponentNotReady", "DaemonSet mofed-h100: 1/2 ready"),
                         _cond("Ready", "False", "ComponentsNotReady")), kind="NicNodePolicy")
    h100["metadata"] = dict(h100["metadata"], name="h100")
    expected = [{"name": "h100"}, {"name": "b200"}]
    verdict = w.judge("nic_cluster_policy", {"ncp": [ncp], "deployments": DEPLOYMENTS, "nnps": [h100]}, expected, True)
    assert verdict.pending == [
        "NicNodePolicy h100: ofedDriver not ready (OFEDDriverReady=False, ComponentNotReady): DaemonSet mofed-h100: 1/2 ready",
        "NicNodePolicy b200 not found",
    ]
    assert ", NicNodePolicies 0/2 ready: NicNodePolicy h100: ofedDriver not ready" in verdict.summary
    # No status yet: said as for the NicClusterPolicy, not "not found".
    bare = {"metadata": {"name": "b200"}}
    ready = dict(h100, status={"conditions": [_cond("OFEDDriverReady"), _cond("Ready")]})
    verdict = w.judge("nic_cluster_policy", {"ncp": [ncp], "deployments": DEPLOYMENTS, "nnps": [ready, bare]}, expected, True)
    assert verdict.pending == ["NicNodePolicy b200: no status yet: no network-operator has reconciled it"]
    assert "NicNodePolicies 1/2 ready" in verdict.summary

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Day one and shared clusters (issue 17), on the session control plane of conftest.py.

This module runs before test_standins.py (file order) and uses the session cluster while it is still
empty: a missing tool stops site.yml in the validation play, before the Namespace is created; then
``site.yml --check --diff --tags operator,sriov`` against a cluster without the network-operator exits 0
and reports what would be installed (chart, its CRDs, each object) and leaves the cluster as it was.
Then, with the session's Helm release, two inventories roll out into the one cluster (fabric pool-a,
its name derived from the inventory's directory, and fabric pool-b): B's rollout leaves A's objects
alone, an object of an earlier version (no fabric label) is adopted by the rollout that renders it and
never deleted by the other, a third inventory that renders A's names is refused before any change,
and removing a node from B prunes only B's objects. Everything made here is deleted at the end, so
test_standins.py starts from the cluster it expects.
"""

import os
import subprocess
import sys

import pytest
import yaml
from k8s_helpers import NAMESPACE, REPO, chart_path, chart_version, wait_for
from standins import _kube

SITE = str(REPO / "playbooks" / "site.yml")
VENV_BIN = os.path.dirname(sys.executable)
SRIOV = ("sriovnetwork.openshift.io", "v1")
MANAGED = "app.kubernetes.io/managed-by"
FABRIC = "gpufabric.roce/fabric"
NCP_PATH = _kube.path("mellanox.com", "v1alpha1", "nicclusterpolicies")


def sriov_path(resource, name=None):
    return _kube.path(*SRIOV, resource, namespace=NAMESPACE, name=name)


def _inventory(root, cluster, nodes, controller_vars=None):
    """nodes: {inventory host: host vars}."""
    (root / "host_vars").mkdir(parents=True)
    (root / "group_vars").mkdir()
    (root / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {
        "roce_nodes": {"hosts": dict.fromkeys(nodes)},
        "k8s_controller": {"hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}},
    }}}))
    (root / "group_vars" / "roce_nodes.yml").write_text(yaml.safe_dump(
        {"roce_pf": "enp157s0np0", "roce_num_vfs": 8, "roce_mtu": 9000, "roce_vlan_id": 100, "roce_vf_mode": "operator"}))
    for host, hv in nodes.items():
        (root / "host_vars" / ("%s.yml" % host)).write_text(yaml.safe_dump(hv))
    values = {
        "roce_k8s_mode": "apply",
        "roce_render_dir": str(root.parent / ("%s-render-out" % root.name)),
        "network_operator_chart_path": str(chart_path()), "network_operator_chart_version": chart_version(),
        "network_operator_kubeconfig": str(cluster.kubeconfig),
        "network_operator_ready_timeout": 120,
        "network_operator_poll_interval": 2,
        "sriov_networks_sync_timeout": 180,
        "sriov_networks_poll_interval": 2,
    }
    values.update(controller_vars or {})
    (root / "group_vars" / "k8s_controller.yml").write_text(yaml.safe_dump(values))
    return root


def _site(inv, cluster, tags, *args):
    env = dict(cluster.env, ANSIBLE_COLLECTIONS_PATH=str(REPO / ".build" / "collections"), ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PATH="%s:%s" % (VENV_BIN, cluster.env["PATH"]))
    cmd = [os.path.join(VENV_BIN, "ansible-playbook"), "-i", str(inv), SITE, "--tags", tags, *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, check=False, cwd=str(inv.parent))  # noqa: S603
    return proc.returncode, proc.stdout + proc.stderr


def _node(name, subnet_index, **extra):
    return dict({"roce_node_name": name, "roce_pod_subnet": "10.255.%d.0/30" % subnet_index, "roce_pod_gateway": "10.255.%d.2" % subnet_index}, **extra)


def _crds(cluster):
    return {c["metadata"]["name"] for c in cluster.kube.items(_kube.path("apiextensions.k8s.io", "v1", "customresourcedefinitions"))}


def _empty(cluster):
    """What an install would create: none of it may exist after a failed or a check-mode run."""
    assert cluster.kube.get_or_none(_kube.path("", "v1", "namespaces", name=NAMESPACE)) is None
    assert not {c for c in _crds(cluster) if c.endswith((".mellanox.com", ".sriovnetwork.openshift.io"))}


def test_a_missing_tool_stops_the_run_before_the_first_change(cluster, tmp_path):
    _empty(cluster)
    inv = _inventory(tmp_path / "inventory", cluster, {"node1": _node("node1", 0)},
                     {"network_operator_helm_binary": str(tmp_path / "no-such-helm")})
    rc, out = _site(inv, cluster, "operator")
    assert rc != 0, out[-4000:]
    flat = " ".join(out.split())
    assert "Check the tools of the Kubernetes phases" in flat and "The Kubernetes phases cannot run; nothing has changed yet" in flat, out[-4000:]
    assert "helm not found at %s (network_operator_helm_binary)" % (tmp_path / "no-such-helm") in flat
    assert "Create the namespace" not in flat  # stopped in the validation play
    _empty(cluster)


def test_check_mode_before_anything_is_installed(cluster, tmp_path):
    _empty(cluster)
    inv = _inventory(tmp_path / "inventory", cluster, {"node1": _node("node1", 0), "node2": _node("node2", 1)})
    rc, out = _site(inv, cluster, "operator,sriov", "--check", "--diff")
    assert rc == 0, out[-8000:]
    flat = " ".join(out.split())
    # The chart and the CRDs it brings, each object by kind/name, and why nothing waits.
    assert "Helm release network-operator in namespace %s" % NAMESPACE in flat, out[-6000:]
    for crd in ("nicclusterpolicies.mellanox.com", "sriovnetworknodepolicies.sriovnetwork.openshift.io", "sriovnetworks.sriovnetwork.openshift.io"):
        assert crd in flat
    assert "Namespace/%s" % NAMESPACE in flat
    assert "(NicClusterPolicy/nic-cluster-policy: created once the chart is installed" in flat
    assert "The waits for the NicClusterPolicy and the operator deployments are skipped in check mode" in flat
    # (YAML output doubles the quotes around 'default')
    assert "default'' is not in namespace %s (its CRD is not installed either). The network-operator chart creates it" % NAMESPACE in flat
    assert ("Check mode: the wait for 2 node(s) to sync is skipped; nothing was applied, and 5 object(s) are created once the "
            "network-operator chart is installed (their CRDs come with it): SriovNetworkNodePolicy/roce-node1, "
            "SriovNetworkNodePolicy/roce-node2, SriovNetwork/roce-node1, SriovNetwork/roce-node2, SriovNetworkPoolConfig/roce-pool") in flat
    # --diff shows each object.
    assert "SriovNetworkNodePolicy/roce-node1 (created once the chart is installed" in flat
    assert "Failed to find exact match" not in flat and "FAILED" not in out
    _empty(cluster)


def _labels(cluster, resource, name):
    return (cluster.kube.get(sriov_path(resource, name))["metadata"].get("labels")) or {}


def _names(cluster, resource):
    return sorted(o["metadata"]["name"] for o in cluster.kube.items(sriov_path(resource)))


@pytest.fixture
def shared(cluster, helm_release):
    """The NicClusterPolicy the config daemon's node selector waits for; afterwards, everything made here is deleted."""
    made_ncp = cluster.kube.get_or_none(NCP_PATH + "/nic-cluster-policy") is None
    if made_ncp:
        image = {"repository": "nvcr.io/nvidia/mellanox", "version": "network-operator-v26.4.1"}
        cluster.kube.create(NCP_PATH, {"apiVersion": "mellanox.com/v1alpha1", "kind": "NicClusterPolicy", "metadata": {"name": "nic-cluster-policy"},
                                       "spec": {"secondaryNetwork": {"multus": dict(image, image="multus-cni")}}})
    yield cluster
    for resource in ("sriovnetworks", "sriovnetworknodepolicies", "sriovnetworkpoolconfigs"):
        for obj in cluster.kube.items(sriov_path(resource)):
            if (obj["metadata"].get("labels") or {}).get(MANAGED) == "gpufabric.roce":
                cluster.kube.delete(sriov_path(resource, obj["metadata"]["name"]))
    wait_for("the rollouts' policies, networks and pools deleted", lambda: not cluster.kube.items(sriov_path("sriovnetworks"))
             and not cluster.kube.items(sriov_path("sriovnetworknodepolicies")) and not cluster.kube.items(sriov_path("sriovnetworkpoolconfigs")))
    if made_ncp:
        cluster.kube.delete(NCP_PATH + "/nic-cluster-policy")


def test_two_inventories_share_a_cluster_and_prune_only_their_own(shared, tmp_path):
    cluster = shared
    # An earlier version's objects (no fabric label): one that A renders, one that nobody renders any more.
    for name in ("roce-node1", "roce-gone"):
        cluster.kube.create(sriov_path("sriovnetworks"), {
            "apiVersion": "%s/%s" % SRIOV, "kind": "SriovNetwork",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {MANAGED: "gpufabric.roce"}},
            "spec": {"resourceName": name.replace("-", "_"), "networkNamespace": "default", "vlan": 100,
                     "ipam": '{"type": "host-local", "subnet": "10.255.0.0/30", "gateway": "10.255.0.2"}'}})

    # A: node1, no roce_fabric_name: the fabric is the inventory directory's name.
    inv_a = _inventory(tmp_path / "pool-a", cluster, {"node1": _node("node1", 0)})
    rc, out = _site(inv_a, cluster, "sriov")
    assert rc == 0, out[-8000:]
    assert "are labelled gpufabric.roce/fabric=pool-a: SriovNetwork/roce-node1" in " ".join(out.split())
    assert _labels(cluster, "sriovnetworks", "roce-node1")[FABRIC] == "pool-a"  # adopted
    assert _labels(cluster, "sriovnetworknodepolicies", "roce-node1") == {MANAGED: "gpufabric.roce", FABRIC: "pool-a"}
    a_objects = {r: cluster.kube.get(sriov_path(r, "roce-node1"))["metadata"]["resourceVersion"]
                 for r in ("sriovnetworks", "sriovnetworknodepolicies")}
    # A's drain pool (issue 21): its node by name, 10% of one node raised to 1 (the operator floors a percentage, and
    # never drains a pool whose limit is 0), the fabric's labels.
    a_pool = cluster.kube.get(sriov_path("sriovnetworkpoolconfigs", "roce-pool"))
    assert a_pool["spec"] == {"maxUnavailable": 1, "nodeSelector": {"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node1"]}]}}
    assert a_pool["metadata"]["labels"] == {MANAGED: "gpufabric.roce", FABRIC: "pool-a"}
    assert "pool roce-pool drains 1 of its 1 node(s) at once" in " ".join(out.split())

    # B: another node pool (node2, and node1's second PF with its host-made VFs), another fabric, its own names.
    b_nodes = {"node2": _node("node2", 1),
               "node1-pf2": _node("node1", 2, roce_pf="enp160s0np0", roce_vf_mode="host")}
    b_vars = {"roce_fabric_name": "pool-b", "sriov_networks_name_prefix": "poolb", "sriov_networks_pool_max_unavailable": "50%"}
    inv_b = _inventory(tmp_path / "inventory-b", cluster, b_nodes, b_vars)
    # B's drain pool would select node1, which A's pool selects: the operator would never drain node1. Refused, nothing changed.
    rc, out = _site(inv_b, cluster, "sriov")
    flat = " ".join(out.split())
    assert rc != 0 and ("SriovNetworkPoolConfig/roce-pool (fabric pool-a) in namespace %s selects node(s) node1, which this "
                        "inventory's pool poolb-pool also selects" % NAMESPACE) in flat, out[-6000:]
    assert "set sriov_networks_pool_config: false for this inventory" in flat
    assert _names(cluster, "sriovnetworknodepolicies") == ["roce-node1"]
    assert _names(cluster, "sriovnetworkpoolconfigs") == ["roce-pool"]
    # B leaves node1's drains to A's pool, in the same namespace: it renders no pool.
    (inv_b / "group_vars" / "k8s_controller.yml").write_text(yaml.safe_dump(dict(
        yaml.safe_load((inv_b / "group_vars" / "k8s_controller.yml").read_text()), sriov_networks_pool_config=False)))
    rc, out = _site(inv_b, cluster, "sriov")
    assert rc == 0, out[-8000:]
    assert _names(cluster, "sriovnetworkpoolconfigs") == ["roce-pool"]
    assert _names(cluster, "sriovnetworknodepolicies") == ["poolb-node1", "poolb-node2", "roce-node1"]
    assert _names(cluster, "sriovnetworks") == ["poolb-node1", "poolb-node2", "roce-gone", "roce-node1"]
    for resource, rv in a_objects.items():  # A's objects untouched, not even relabelled
        assert cluster.kube.get(sriov_path(resource, "roce-node1"))["metadata"]["resourceVersion"] == rv
    assert _labels(cluster, "sriovnetworks", "poolb-node2")[FABRIC] == "pool-b"
    assert "left in place, since another inventory may own them: SriovNetwork/roce-gone" in " ".join(out.split())

    # C renders A's names under a fabric of its own: refused before any change.
    inv_c = _inventory(tmp_path / "pool-c", cluster, {"node1": _node("node1", 0)})
    rc, out = _site(inv_c, cluster, "sriov")
    flat = " ".join(out.split())
    assert rc != 0 and "SriovNetworkNodePolicy/roce-node1 in namespace %s belongs to fabric 'pool-a'" % NAMESPACE in flat, out[-6000:]
    assert "set roce_fabric_name: pool-a" in flat
    assert _labels(cluster, "sriovnetworknodepolicies", "roce-node1")[FABRIC] == "pool-a"

    # A node leaves B: only B's objects of that node are pruned.
    del b_nodes["node1-pf2"]
    (inv_b / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {
        "roce_nodes": {"hosts": dict.fromkeys(b_nodes)},
        "k8s_controller": {"hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}}}))
    rc, out = _site(inv_b, cluster, "sriov")
    assert rc == 0, out[-8000:]
    pruned = "Deleting 2 object(s) of fabric pool-b no longer in the inventory: SriovNetwork/poolb-node1, SriovNetworkNodePolicy/poolb-node1"
    assert pruned in " ".join(out.split()), out[-6000:]
    # and the run's summary says so at its end (issue 42, item 6)
    assert "Pruned (no longer in the inventory): SriovNetwork/poolb-node1, SriovNetworkNodePolicy/poolb-node1" in " ".join(out.split())
    wait_for("poolb-node1 gone", lambda: "poolb-node1" not in _names(cluster, "sriovnetworks"))
    assert _names(cluster, "sriovnetworknodepolicies") == ["poolb-node2", "roce-node1"]
    assert _names(cluster, "sriovnetworks") == ["poolb-node2", "roce-gone", "roce-node1"]
    for resource, rv in a_objects.items():
        assert cluster.kube.get(sriov_path(resource, "roce-node1"))["metadata"]["resourceVersion"] == rv

    # node1 left B: B's own drain pool no longer overlaps A's. A percentage is kept as the operator reads it (int-or-string).
    (inv_b / "group_vars" / "k8s_controller.yml").write_text(yaml.safe_dump(dict(
        yaml.safe_load((inv_b / "group_vars" / "k8s_controller.yml").read_text()), sriov_networks_pool_config=True,
        sriov_networks_pool_max_unavailable="100%")))
    rc, out = _site(inv_b, cluster, "sriov")
    assert rc == 0, out[-8000:]
    b_pool = cluster.kube.get(sriov_path("sriovnetworkpoolconfigs", "poolb-pool"))
    assert b_pool["spec"]["maxUnavailable"] == "100%"
    assert b_pool["spec"]["nodeSelector"]["matchExpressions"][0]["values"] == ["node2"]
    assert _labels(cluster, "sriovnetworkpoolconfigs", "poolb-pool")[FABRIC] == "pool-b"

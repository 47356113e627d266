# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The way back (issue 17, "Uninstall"): playbooks/teardown.yml, its cluster half, on the session control plane.

This module runs last (file order) because it uninstalls the session's Helm release, which site.yml adopts first:
1. site.yml rolls fabric pool-a out (two nodes, operator and sriov phases); another fabric's SriovNetwork (pool-b)
   and a hand-made one are added.
2. teardown --check --diff predicts the deletions and changes nothing.
3. teardown deletes pool-a's networks and policies and waits until the node states released the VFs; pool-b's and the
   hand-made object stay, and so do the NicClusterPolicy and the release (pool-b still uses the operator).
4. Once pool-b's object is gone: --check --diff predicts the NicClusterPolicy and release removal, changing nothing;
   the teardown removes them, keeps the CRDs (default) and the hand-made object; a second run changes nothing.
"""

import json
import os
import subprocess
import sys

from k8s_helpers import NAMESPACE, REPO, wait_for
from standins import _kube
from test_shared_cluster import MANAGED, NCP_PATH, _inventory, _node, _site, sriov_path

TEARDOWN = str(REPO / "playbooks" / "teardown.yml")
VENV_BIN = os.path.dirname(sys.executable)
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"


def _teardown(inv, cluster, *args):
    env = dict(cluster.env, ANSIBLE_COLLECTIONS_PATH=str(REPO / ".build" / "collections"), ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PATH="%s:%s" % (VENV_BIN, cluster.env["PATH"]))
    cmd = [os.path.join(VENV_BIN, "ansible-playbook"), "-i", str(inv), TEARDOWN, "--tags", "k8s", *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, check=False, cwd=str(inv.parent))  # noqa: S603
    return proc.returncode, proc.stdout + proc.stderr


def _flat(out):
    """The output as one line; the YAML callback doubles the quote of "rollout's" in a message."""
    return " ".join(out.split()).replace("''", "'")


def _changed(out):
    line = [x for x in out.splitlines() if x.startswith("localhost") and "changed=" in x][-1]
    return int(line.split("changed=")[1].split()[0])


def _names(cluster, resource):
    return sorted(o["metadata"]["name"] for o in cluster.kube.items(sriov_path(resource)))


def _releases(cluster):
    return [(r["name"], r["namespace"]) for r in json.loads(cluster.run("helm", "list", "--all-namespaces", "-o", "json").stdout)]


def _network(name, labels):
    return {"apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetwork", "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
            "spec": {"resourceName": name.replace("-", "_"), "networkNamespace": "default", "vlan": 100,
                     "ipam": '{"type": "host-local", "subnet": "10.254.0.0/30", "gateway": "10.254.0.2"}'}}


def _states_carry(cluster, prefix):
    states = cluster.kube.items(sriov_path("sriovnetworknodestates"))
    return sorted({s["metadata"]["name"] for s in states for i in (s.get("spec") or {}).get("interfaces") or []
                   for g in i.get("vfGroups") or [] if g.get("policyName", "").startswith(prefix)})


def _check_the_change_impact_report(inv, cluster, tmp_path):
    """Before the teardown, on the synced rollout (issue 21): a --check run with node1's numVfs above its ConnectX
    firmware's 16 (the node state's totalvfs) and node2's MTU lowered reports, per node, the operator's drain (and
    node1's reboot), as JSON (roce_impact_out) and as a table, and changes nothing in the cluster."""
    host_vars = {h: (inv / "host_vars" / ("%s.yml" % h)) for h in ("node1", "node2")}
    saved = {h: p.read_text() for h, p in host_vars.items()}
    host_vars["node1"].write_text(saved["node1"] + "roce_num_vfs: 32\n")
    host_vars["node2"].write_text(saved["node2"] + "roce_mtu: 4000\n")
    out_file = tmp_path / "impact.json"
    try:
        rc, out = _site(inv, cluster, "operator,sriov", "--check", "-e", "roce_impact_out=%s" % out_file)
    finally:
        for h, text in saved.items():
            host_vars[h].write_text(text)
    assert rc == 0, out[-8000:]
    report = json.loads(out_file.read_text())
    rows = {r["node"]: r for r in report["nodes"]}
    assert report["check_mode"] is True and report["disrupted"] == 2, report
    assert rows["node1"]["disruption"] == "operator drain, reboot", report
    assert rows["node1"]["changes"] == ["policy roce-node1: numVfs 8 -> 32: operator drain and reboot (ConnectX firmware change)"]
    assert rows["node2"]["disruption"] == "operator drain", report
    assert rows["node2"]["changes"] == ["policy roce-node2: mtu 9000 -> 4000: operator drain"]
    flat = _flat(out)
    assert "Change impact (check mode: what this run would do): 2 node(s), 2 with changes, 2 disrupted" in flat, out[-8000:]
    policies = {p["metadata"]["name"]: p["spec"] for p in cluster.kube.items(sriov_path("sriovnetworknodepolicies"))}
    assert (policies["roce-node1"]["numVfs"], policies["roce-node2"]["mtu"]) == (8, 9000)


def test_teardown_undoes_the_rollout_and_only_its_own(cluster, helm_release, tmp_path):
    inv = _inventory(tmp_path / "pool-a", cluster, {"node1": _node("node1", 0), "node2": _node("node2", 1)})
    rc, out = _site(inv, cluster, "operator,sriov")
    assert rc == 0, out[-8000:]
    assert _names(cluster, "sriovnetworknodepolicies") == ["roce-node1", "roce-node2"]
    assert _states_carry(cluster, "roce-") == ["node1", "node2"]
    _check_the_change_impact_report(inv, cluster, tmp_path)
    cluster.kube.create(sriov_path("sriovnetworks"), _network("poolb-node9", {MANAGED: "gpufabric.roce", "gpufabric.roce/fabric": "pool-b"}))
    cluster.kube.create(sriov_path("sriovnetworks"), _network("hand-made", {}))
    crds = {c["metadata"]["name"] for c in cluster.kube.items(_kube.path("apiextensions.k8s.io", "v1", "customresourcedefinitions"))}

    # --check --diff: the deletions predicted, nothing deleted.
    rc, out = _teardown(inv, cluster, "--check", "--diff")
    flat = _flat(out)
    assert rc == 0, out[-8000:]
    # The drain pool the rollout made (issue 42: it was left behind, and a later fabric's pool over these nodes refused).
    assert _names(cluster, "sriovnetworkpoolconfigs") == ["roce-pool"]
    assert ("Would delete 5 object(s) of fabric pool-a: SriovNetwork/roce-node1, SriovNetwork/roce-node2, SriovNetworkNodePolicy/roce-node1, "
            "SriovNetworkNodePolicy/roce-node2, SriovNetworkPoolConfig/roce-pool. 2 node(s) carry VFs of its policies. Left in place (not this rollout's): "
            "SriovNetwork/hand-made, SriovNetwork/poolb-node9.") in flat, out[-8000:]
    assert "Check mode: nothing was deleted, so the wait for 2 node(s) (node1, node2) to release the VFs is skipped" in flat
    assert "the objects of fabric(s) pool-b are still in the cluster and need the operator" in flat
    assert _changed(out) == 2  # the deletion tasks (four items, then the drain pool)
    assert _names(cluster, "sriovnetworkpoolconfigs") == ["roce-pool"]
    assert _names(cluster, "sriovnetworks") == ["hand-made", "poolb-node9", "roce-node1", "roce-node2"]
    assert _names(cluster, "sriovnetworknodepolicies") == ["roce-node1", "roce-node2"]

    # Apply: pool-a's objects gone and the VFs released; pool-b's and the hand-made object, the operator stay.
    rc, out = _teardown(inv, cluster)
    flat = _flat(out)
    assert rc == 0, out[-8000:]
    assert "sriov_drain: poll" in flat and "2/2 nodes released the VFs of the deleted policies" in flat, out[-8000:]
    assert _names(cluster, "sriovnetworks") == ["hand-made", "poolb-node9"]
    assert _names(cluster, "sriovnetworknodepolicies") == []
    assert _names(cluster, "sriovnetworkpoolconfigs") == []
    assert _states_carry(cluster, "roce-") == []
    assert cluster.kube.get_or_none(NCP_PATH + "/nic-cluster-policy") is not None
    assert ("network-operator", NAMESPACE) in _releases(cluster)

    # The other inventory tears its object down; now the operator goes too. Check mode first.
    cluster.kube.delete(sriov_path("sriovnetworks", "poolb-node9"))
    wait_for("poolb-node9 gone", lambda: "poolb-node9" not in _names(cluster, "sriovnetworks"))
    rc, out = _teardown(inv, cluster, "--check", "--diff")
    flat = _flat(out)
    assert rc == 0, out[-8000:]
    assert _changed(out) == 2, out[-8000:]  # the NicClusterPolicy and the release
    assert "-network-operator-26.4.1, revision" in out and "+not installed" in out, out[-8000:]
    assert cluster.kube.get_or_none(NCP_PATH + "/nic-cluster-policy") is not None
    assert ("network-operator", NAMESPACE) in _releases(cluster)

    rc, out = _teardown(inv, cluster)
    flat = _flat(out)
    assert rc == 0, out[-8000:]
    assert "Left in the cluster (not this rollout's): SriovNetwork/hand-made" in flat, out[-8000:]
    assert "The CRDs of the chart's crds/ stay (Helm never deletes them" in flat
    assert cluster.kube.get_or_none(NCP_PATH + "/nic-cluster-policy") is None
    assert ("network-operator", NAMESPACE) not in _releases(cluster)
    now = {c["metadata"]["name"] for c in cluster.kube.items(_kube.path("apiextensions.k8s.io", "v1", "customresourcedefinitions"))}
    assert crds <= now and cluster.kube.get_or_none(CRD + "sriovnetworks.sriovnetwork.openshift.io") is not None
    assert _names(cluster, "sriovnetworks") == ["hand-made"]

    # Idempotence.
    rc, out = _teardown(inv, cluster)
    assert rc == 0 and _changed(out) == 0, out[-8000:]
    rc, out = _teardown(inv, cluster, "--check")
    assert rc == 0 and _changed(out) == 0, out[-8000:]

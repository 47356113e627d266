# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An existing network-operator release, adopted and upgraded by the role (issue 17), on the real control plane.

One scenario, in order, on a control plane of its own (the 26.1.2 CRDs and exactly one release of the chart
must be the whole cluster's state; CRDs are cluster-scoped):
1. A cluster engineer installs the real 26.1.2 chart by hand with the chart's defaults (the SR-IOV sub-chart off) and
   a value of their own (``--set operator.nodeSelector.site-owner=keep-me``; the fake nodes carry that label).
2. The role configured with another release name is refused before any change, naming the release, its
   namespace and the fix; nothing changed.
3. The role at 26.1.2 adopts the release and turns the SR-IOV sub-chart on (issue 41): Helm installs crds/ on a first
   install only, so the sub-chart's CRDs are created first, as the chart's hook would (without them Helm stopped on
   ``no matches for kind "SriovOperatorConfig"``). The user's value kept, the NicClusterPolicy at 26.1.2's versions,
   and the run says "adopted revision 1 (chart ...) → revision 2 (chart ...), user keys kept: ...".
4. --check --diff (before 3, and at 26.4.1) shows the values and chart diff, and the CRDs it would create first, and
   changes nothing.
5. The role at 26.4.1 upgrades: the user's value kept, chart 26.4.1, the NicClusterPolicy at 26.4.1's versions,
   and the CRD 26.4.1 adds (NicNodePolicy) present: Helm does not upgrade crds/, the chart's pre-upgrade hook
   does (played by lab/k8s/standins/upgrade_crd_hook.py).
6. --check again reports no change.
7. An upgrade that fails halfway is rolled back by Helm (--atomic), and the message names the revision.
8. 26.4.1 -> 26.7.0-rc.2 (the 26.7 line), the user's value kept: the hook stand-in applies 26.7's CRDs (the
   NicClusterPolicy's with status.conditions), the network-operator stand-in writes conditions as 26.7 does, and the
   role's wait is judged by them. The same run turns network_operator_node_policies on (with the RDMA shared device
   plugin): the plugin leaves the NicClusterPolicy for the NicNodePolicy of the default node group, which carries the
   fabric label and is waited on by its conditions; this fabric's stale NicNodePolicy is pruned, another fabric's and an
   unlabelled one stay. The run also turns DRA mode on (sriov_networks_resource_api: dra): the gate lands in the chart's
   SriovOperatorConfig.
9. The condition wait's messages (issue 41), in one run of rollout_wait: with the network-operator stand-in's switch
   reporting nvIpam in error and the NicNodePolicy's RDMA shared device plugin not ready, and holding back the status of a
   NicNodePolicy created meanwhile, the wait names each component with its reason and message, and the policy without
   status; then on the NicClusterPolicy with its status cleared, "no status yet" instead of "absent".
10. DRA mode's objects like every other object: site.yml --tags sriov applies a ResourceClaimTemplate per node network
   and prunes this fabric's stale one; teardown.yml deletes them with the SR-IOV objects and this fabric's NicNodePolicy,
   and keeps the NicClusterPolicy and the release, which another fabric's NicNodePolicy still needs.
"""

import json
import os
import re
import subprocess
import sys
import time

import yaml
from k8s_helpers import HARDWARE, REPO, TIMINGS, shared_chart, wait_for
from standins import _kube
from standins.network_operator import SWITCH_FILE
from test_shared_cluster import _inventory, _site, sriov_path
from test_teardown import _flat, _teardown

VENV_BIN = os.path.dirname(sys.executable)
NAMESPACE = "nvidia-network-operator"
RELEASE = "network-operator"
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
SRIOV_CONFIG_CRD = "sriovoperatorconfigs.sriovnetwork.openshift.io"
NCP = "/apis/mellanox.com/v1alpha1/nicclusterpolicies/nic-cluster-policy"
NNPS = "/apis/mellanox.com/v1alpha1/nicnodepolicies"
MANAGED = {"app.kubernetes.io/managed-by": "gpufabric.roce"}
FABRIC = {"gpufabric.roce/fabric": "upgrade-test"}
RCTS = _kube.path("resource.k8s.io", "v1", "resourceclaimtemplates", namespace="default")
NV_IPAM_ERROR = "failed to apply the nv-ipam manifests: the test's error"
WAITS = """
- name: The NicClusterPolicy wait on 26.7's conditions
  hosts: localhost
  gather_facts: false
  vars:
    wait: {check: nic_cluster_policy, namespace: nvidia-network-operator, chart_version: 26.7.0-rc.2, timeout: 1, interval: 1,
           kubeconfig: "{{ kubeconfig }}"}
  tasks:
    - name: Wait with components not ready and a NicNodePolicy without status
      gpufabric.roce.rollout_wait: "{{ wait | combine({'expected': [{'name': 'roce-nodes'}, {'name': 'held-group'}]}) }}"
      ignore_errors: true
    # as before any network-operator reconciled the policy (the stand-in's switch holds it back)
    - name: Clear the NicClusterPolicy's status
      ansible.builtin.command: kubectl --kubeconfig {{ kubeconfig }} patch nicclusterpolicy nic-cluster-policy --subresource=status
        --type=merge -p '{"status":null}'
      changed_when: true
    - name: Wait on the NicClusterPolicy without status
      gpufabric.roce.rollout_wait: "{{ wait }}"
      ignore_errors: true
"""
CLUSTER_HARDWARE = {name: dict(spec, labels=dict(spec.get("labels", {}), **{"site-owner": "keep-me"})) for name, spec in HARDWARE.items()}
PLAYBOOK = """
- name: The network_operator role alone
  hosts: localhost
  gather_facts: false
  roles:
    - role: gpufabric.roce.network_operator
"""


def _role(cluster, tmp_path, version, *args, **extra):
    (tmp_path / "play.yml").write_text(PLAYBOOK, encoding="utf-8")
    variables = dict({
        "roce_k8s_mode": "apply",
        "network_operator_chart_path": str(shared_chart(version)),
        "network_operator_chart_version": version,
        "network_operator_kubeconfig": str(cluster.kubeconfig),
        "network_operator_ready_timeout": 300,
        "network_operator_poll_interval": 2,
    }, **extra)
    (tmp_path / "vars.yml").write_text(yaml.safe_dump(variables), encoding="utf-8")
    env = dict(cluster.env, ANSIBLE_COLLECTIONS_PATH=str(REPO / ".build" / "collections"), ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PATH="%s:%s" % (VENV_BIN, cluster.env["PATH"]))
    cmd = [os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
           "-e", "@" + str(tmp_path / "vars.yml"), str(tmp_path / "play.yml"), *args]
    t0 = time.time()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200, check=False, cwd=str(tmp_path))  # noqa: S603
    step = "upgrade test: role %s %s%s (s)" % (version, " ".join(args) or "apply", " (%s)" % ", ".join(sorted(extra)) if extra else "")
    TIMINGS[step] = round(time.time() - t0, 1)
    return proc.returncode, proc.stdout + proc.stderr


def _releases(cluster):
    return json.loads(cluster.run("helm", "list", "--all-namespaces", "--all", "-o", "json").stdout)


def _user_values(cluster):
    return json.loads(cluster.run("helm", "get", "values", RELEASE, "-n", NAMESPACE, "-o", "json").stdout)


def _ncp_versions(kube):
    spec = kube.get(NCP)["spec"]
    return {spec["secondaryNetwork"]["multus"]["version"], spec["secondaryNetwork"]["cniPlugins"]["version"], spec["nvIpam"]["version"]}


def _recap_changed(out):
    line = [x for x in out.splitlines() if x.startswith("localhost") and "changed=" in x][-1]
    return int(line.split("changed=")[1].split()[0])


def test_hand_installed_release_is_adopted_and_upgraded_with_the_users_values_kept(module_cluster, tmp_path):
    cluster, kube = module_cluster, module_cluster.kube
    t0 = time.time()
    cluster.run("helm", "install", RELEASE, str(shared_chart("26.1.2")), "-n", NAMESPACE, "--create-namespace",
                "--set", "operator.nodeSelector.site-owner=keep-me", "--wait", "--timeout", "5m")
    TIMINGS["upgrade test: helm install 26.1.2 by hand (s)"] = round(time.time() - t0, 1)
    assert kube.get_or_none(CRD + "nicnodepolicies.mellanox.com") is None  # 26.1.2 has none
    assert kube.get_or_none(CRD + SRIOV_CONFIG_CRD) is None  # the SR-IOV sub-chart is off by default

    # A release of the chart under another name: refused before any change, naming it, its namespace and the fix.
    rc, out = _role(cluster, tmp_path, "26.1.2", network_operator_release_name="noo-site")
    flat = " ".join(out.split())
    assert rc != 0, out[-6000:]
    assert "'network-operator' in namespace 'nvidia-network-operator' (chart network-operator-26.1.2, revision 1, deployed)" in flat, out[-6000:]
    assert "set network_operator_release_name: network-operator and network_operator_namespace: nvidia-network-operator" in flat
    assert "helm uninstall network-operator -n nvidia-network-operator" in flat and "Nothing was changed" in flat
    assert [(r["name"], r["revision"]) for r in _releases(cluster)] == [(RELEASE, "1")]
    assert kube.get_or_none(NCP) is None

    # --check --diff of the adoption: the collection's keys added, the user's kept; nothing changes.
    rc, out = _role(cluster, tmp_path, "26.1.2", "--check", "--diff")
    assert rc == 0, out[-6000:]
    plan = out.split("plan the install or upgrade] ***", 1)[1].split("TASK [", 1)[0]
    assert "+      resourcePrefix: nvidia.com" in plan and "changed: [localhost]" in plan, plan
    assert "   operator:\n     nodeSelector:\n       site-owner: keep-me" in plan, plan
    assert not [x for x in plan.splitlines() if x.startswith("-") and "site-owner" in x], plan
    assert [(r["chart"], r["revision"]) for r in _releases(cluster)] == [("network-operator-26.1.2", "1")]
    # The run ends saying what it did (issue 42, item 6): here, what it would do, with the CRDs it would create first.
    said = " ".join(out.split())
    assert ("Helm release nvidia-network-operator/network-operator (chart network-operator 26.1.2): revision 1, would be "
            "upgraded (the values its owner set kept; user keys kept: operator.nodeSelector.site-owner), after creating the CRDs the "
            "chart brings and the cluster lacks: ") in said, out[-6000:]
    assert SRIOV_CONFIG_CRD in said.split("cluster lacks: ", 1)[1].split('"', 1)[0]
    assert kube.get_or_none(CRD + SRIOV_CONFIG_CRD) is None

    # Adopted at 26.1.2: the user's value kept, the collection's keys added, the NicClusterPolicy at 26.1.2.
    rc, out = _role(cluster, tmp_path, "26.1.2")
    assert rc == 0, out[-6000:]
    said = " ".join(out.split())
    assert ("Helm release nvidia-network-operator/network-operator (chart network-operator 26.1.2): adopted revision 1 "
            "(chart network-operator-26.1.2) → revision 2 (chart network-operator-26.1.2), user keys kept: operator.nodeSelector.site-owner; "
            "created first the CRDs the chart brings and the cluster lacked: ") in said, out[-6000:]
    assert kube.get(CRD + SRIOV_CONFIG_CRD)["spec"]["group"] == "sriovnetwork.openshift.io"
    assert "NicClusterPolicy nic-cluster-policy: applied (created or changed)" in said, out[-6000:]
    values = _user_values(cluster)
    assert values["operator"]["nodeSelector"] == {"site-owner": "keep-me"}
    assert values["sriovNetworkOperator"] == {"enabled": True}
    assert _ncp_versions(kube) == {"network-operator-v26.1.2"}

    # --check --diff at 26.4.1: the diff helm-diff would show, computed from helm get values; nothing changes.
    rc, out = _role(cluster, tmp_path, "26.4.1", "--check", "--diff")
    assert rc == 0, out[-6000:]
    assert "-chart: network-operator-26.1.2" in out and "+chart: network-operator-26.4.1" in out, out[-6000:]
    assert not [x for x in out.splitlines() if x.startswith("-") and "site-owner" in x]
    assert [(r["chart"], r["revision"]) for r in _releases(cluster)] == [("network-operator-26.1.2", "2")]
    assert kube.get_or_none(CRD + "nicnodepolicies.mellanox.com") is None

    # Upgraded to 26.4.1: the value kept, the component versions followed, the new CRD applied by the hook.
    rc, out = _role(cluster, tmp_path, "26.4.1")
    assert rc == 0, out[-6000:]
    assert [(r["chart"], r["status"]) for r in _releases(cluster)] == [("network-operator-26.4.1", "deployed")]
    assert _user_values(cluster)["operator"]["nodeSelector"] == {"site-owner": "keep-me"}
    assert _ncp_versions(kube) == {"network-operator-v26.4.1"}
    assert kube.get(CRD + "nicnodepolicies.mellanox.com")["spec"]["group"] == "mellanox.com"

    # Idempotence, in check mode.
    rc, out = _role(cluster, tmp_path, "26.4.1", "--check")
    assert rc == 0 and _recap_changed(out) == 0, out[-6000:]
    assert "(chart network-operator 26.4.1): unchanged at revision 3" in " ".join(out.split()), out[-6000:]

    # An upgrade that fails halfway (the pre-upgrade hook ran, the API server rejects the operator Deployment):
    # Helm --atomic rolls back to the revision before, and the message names it and the rollback to run.
    before = _releases(cluster)[0]
    rc, out = _role(cluster, tmp_path, "26.4.1", network_operator_helm_values_overrides={"operator": {"resources": {"limits": {"cpu": "lots"}}}})
    flat = " ".join(out.split())
    assert rc != 0, out[-6000:]
    assert "helm upgrade of release network-operator in namespace nvidia-network-operator failed" in flat, out[-6000:]
    assert "The release was at revision %s (network-operator-26.4.1) before this run" % before["revision"] in flat
    assert "`helm rollback network-operator %s -n nvidia-network-operator`" % before["revision"] in flat
    # and the summary still comes, after the failure
    assert "network_operator: the phase failed at " in flat and "install or upgrade failed (see the error above" in flat, out[-6000:]
    after = _releases(cluster)[0]
    assert (after["status"], after["chart"], int(after["revision"])) == ("deployed", "network-operator-26.4.1", int(before["revision"]) + 2)
    assert "resources" not in _user_values(cluster)["operator"]
    assert _user_values(cluster)["operator"]["nodeSelector"] == {"site-owner": "keep-me"}

    # NicNodePolicies already in the cluster (26.4.1 brought the CRD): this fabric's (roce_fabric_name below) that the run
    # no longer renders, another fabric's, and one that nobody labelled with a fabric.
    for name, labels in (("stale-group", dict(MANAGED, **{"gpufabric.roce/fabric": "upgrade-test"})),
                         ("other-group", dict(MANAGED, **{"gpufabric.roce/fabric": "other"})), ("hand-made", MANAGED)):
        kube.create(NNPS, {"apiVersion": "mellanox.com/v1alpha1", "kind": "NicNodePolicy", "metadata": {"name": name, "labels": labels},
                           "spec": {"nodeSelector": {"pool": name}}})

    # 26.4.1 -> 26.7.0-rc.2, the 26.7 line: the user's value kept; the hook stand-in brings 26.7's NicClusterPolicy CRD
    # (status.conditions), the network-operator stand-in then writes conditions, and the wait is judged by them. With node
    # policies on, the RDMA shared device plugin goes into the default group's NicNodePolicy instead.
    rc, out = _role(cluster, tmp_path, "26.7.0-rc.2", network_operator_node_policies=True, network_operator_rdma_shared_device_plugin=True,
                    roce_fabric_name="upgrade-test", sriov_networks_resource_api="dra")
    said = " ".join(out.split())
    assert rc == 0, out[-6000:]
    nnps = {p["metadata"]["name"]: p for p in kube.get(NNPS)["items"]}
    assert sorted(nnps) == ["hand-made", "other-group", "roce-nodes"], sorted(nnps)
    nnp = nnps["roce-nodes"]
    assert nnp["metadata"]["labels"] == dict(MANAGED, **{"gpufabric.roce/fabric": "upgrade-test"})
    assert nnp["spec"]["nodeSelector"] == {"feature.node.kubernetes.io/pci-15b3.present": "true"}
    assert nnp["spec"]["rdmaSharedDevicePlugin"]["version"] == "network-operator-v26.7.0-rc.2"
    assert "rdmaSharedDevicePlugin" not in kube.get(NCP)["spec"]
    nnp_conds = {c["type"]: c["status"] for c in nnp["status"]["conditions"]}
    assert nnp_conds == {"RDMASharedDevicePluginReady": "True", "Ready": "True"}, nnp["status"]
    assert "NicNodePolicies 1/1 ready" in said and "delete NicNodePolicy/stale-group" in said, out[-6000:]
    assert [(r["chart"], r["status"]) for r in _releases(cluster)] == [("network-operator-26.7.0-rc.2", "deployed")]
    assert _user_values(cluster)["operator"]["nodeSelector"] == {"site-owner": "keep-me"}
    assert _ncp_versions(kube) == {"network-operator-v26.7.0-rc.2"}
    assert "conditions" in kube.get(CRD + "nicclusterpolicies.mellanox.com")["spec"]["versions"][0]["schema"]["openAPIV3Schema"][
        "properties"]["status"]["properties"]
    ncp = kube.get(NCP)
    conds = {c["type"]: c for c in ncp["status"]["conditions"]}
    assert sorted(conds) == ["CNIPluginsReady", "MultusCNIReady", "NVIPAMReady", "Ready"], conds
    assert all(c["status"] == "True" and c["observedGeneration"] == ncp["metadata"]["generation"] for c in conds.values())
    assert "nic_cluster_policy: poll " in said and "NicClusterPolicy Ready=True, 3/3 components ready" in said, out[-6000:]
    assert ("adopted revision %d (chart network-operator-26.4.1) → revision %d (chart network-operator-26.7.0-rc.2), user keys kept: "
            "operator.nodeSelector.site-owner" % (int(after["revision"]), int(after["revision"]) + 1)) in said, out[-6000:]
    gates = kube.get(_kube.path("sriovnetwork.openshift.io", "v1", "sriovoperatorconfigs", namespace=NAMESPACE, name="default"))["spec"]
    assert gates.get("featureGates") == {"dynamicResourceAllocation": True}, gates

    _condition_wait_messages(cluster, tmp_path)
    _dra_objects_and_node_policy_torn_down(cluster, tmp_path)


def _conditions(kube, path):
    return {c["type"]: (c["status"], c["reason"]) for c in (kube.get(path).get("status") or {}).get("conditions") or []}


def _condition_wait_messages(cluster, tmp_path):
    kube, switch = cluster.kube, cluster.state_dir / SWITCH_FILE
    unready = {"NicClusterPolicy/nic-cluster-policy": {"state-nv-ipam-cni": ["error", NV_IPAM_ERROR]},
               "NicNodePolicy/roce-nodes": {"state-RDMA-device-plugin": ["notReady", ""]}}
    switch.write_text(json.dumps({"hold": ["NicNodePolicy/held-group"], "unready": unready}), encoding="utf-8")
    kube.create(NNPS, {"apiVersion": "mellanox.com/v1alpha1", "kind": "NicNodePolicy", "metadata": {"name": "held-group"},
                       "spec": {"nodeSelector": {"pool": "held-group"}}})
    wait_for("the stand-in to report nvIpam and the RDMA shared device plugin not ready", lambda: (
        _conditions(kube, NCP).get("Ready") == ("False", "ComponentError")
        and _conditions(kube, NNPS + "/roce-nodes").get("Ready") == ("False", "ComponentsNotReady")))
    # The NicClusterPolicy held too (its status as it is), for the playbook to clear it.
    switch.write_text(json.dumps({"hold": ["NicNodePolicy/held-group", "NicClusterPolicy/nic-cluster-policy"], "unready": unready}),
                      encoding="utf-8")
    loop = cluster.standin_loop()[0]
    wait_for("a loop of the stand-ins with the NicClusterPolicy held", lambda: cluster.standin_loop()[0] > loop + 1)
    assert not kube.get(NNPS + "/held-group").get("status")

    (tmp_path / "waits.yml").write_text(WAITS, encoding="utf-8")
    env = dict(cluster.env, ANSIBLE_COLLECTIONS_PATH=str(REPO / ".build" / "collections"), ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PATH="%s:%s" % (VENV_BIN, cluster.env["PATH"]))
    t0 = time.time()
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",  # noqa: S603
                           "-e", "ansible_python_interpreter=" + sys.executable, "-e", "kubeconfig=%s" % cluster.kubeconfig,
                           str(tmp_path / "waits.yml")], env=env, capture_output=True, text=True, timeout=300, check=False)
    TIMINGS["upgrade test: condition waits (s)"] = round(time.time() - t0, 1)
    out = proc.stdout + proc.stderr
    said = _flat(out)
    assert proc.returncode == 0 and "ignored=2" in out, out[-6000:]
    first, second = said.split("TASK [Clear the NicClusterPolicy's status]", 1)
    # Ready, component by component; not ready: the component by its spec section, its condition, reason and message.
    assert "NicClusterPolicy Ready=False, 2/3 components ready" in first and "NicNodePolicies 0/2 ready" in first, out[-6000:]
    assert re.search(r"nic_cluster_policy not reached after \d+s: nvIpam not ready \(NVIPAMReady=False, ComponentError\): %s; "
                     r"NicNodePolicy roce-nodes: rdmaSharedDevicePlugin not ready \(RDMASharedDevicePluginReady=False, ComponentNotReady\); "
                     r"NicNodePolicy held-group: no status yet: no network-operator has reconciled it" % re.escape(NV_IPAM_ERROR), first), out[-6000:]
    # A policy that exists without status is not "absent".
    assert "NicClusterPolicy without status" in second and "absent" not in second, out[-6000:]
    assert re.search(r"nic_cluster_policy not reached after \d+s: no status yet: no network-operator has reconciled it", second), out[-6000:]
    switch.unlink()
    wait_for("the stand-in to write the NicClusterPolicy's status again", lambda: _conditions(kube, NCP).get("Ready") == ("True", "AllComponentsReady"))


def _dra_objects_and_node_policy_torn_down(cluster, tmp_path):
    kube = cluster.kube
    # A claim template this fabric applied earlier, for a rail it no longer has: pruned as every object is.
    stale = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
             "metadata": {"name": "roce-rail1", "namespace": "default", "labels": dict(MANAGED, **FABRIC)},
             "spec": {"spec": {"devices": {"requests": [{"name": "vf", "exactly": {"deviceClassName": "sriovnetwork.k8snetworkplumbingwg.io"}}]}}}}
    kube.create(RCTS, stale)
    # and the drain pool of that rollout, which this one renders again (so these are this inventory's objects, not a second
    # inventory's under the same fabric name, which the prune would refuse).
    kube.create(sriov_path("sriovnetworkpoolconfigs"), {
        "apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkPoolConfig",
        "metadata": {"name": "roce-pool", "namespace": NAMESPACE, "labels": dict(MANAGED, **FABRIC)},
        "spec": {"maxUnavailable": 1, "nodeSelector": {"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node1", "node2"]}]}}})
    # DRA mode claims a rail's VF by the rail's one resourceName: one rail, with nv-ipam's CIDRPool for every node.
    controller = {"network_operator_chart_path": str(shared_chart("26.7.0-rc.2")), "network_operator_chart_version": "26.7.0-rc.2",
                  "network_operator_node_policies": True, "network_operator_rdma_shared_device_plugin": True,
                  "roce_fabric_name": "upgrade-test", "sriov_networks_resource_api": "dra", "sriov_networks_ipam": "nv-ipam"}
    inv = _inventory(tmp_path / "dra", cluster, {"node1": {"roce_node_name": "node1", "roce_node_index": 0},
                                                 "node2": {"roce_node_name": "node2", "roce_node_index": 1}}, controller)
    (inv / "group_vars" / "roce_nodes.yml").write_text(yaml.safe_dump({
        "roce_rails": [{"name": "rail0", "pf": "enp157s0np0", "vlan": 100, "subnet_pool": "10.101.0.0/16"}],
        "roce_num_vfs": 8, "roce_mtu": 9000, "roce_vf_mode": "operator"}))
    t0 = time.time()
    rc, out = _site(inv, cluster, "sriov")
    TIMINGS["upgrade test: site.yml --tags sriov, DRA (s)"] = round(time.time() - t0, 1)
    assert rc == 0, out[-8000:]
    templates = {t["metadata"]["name"]: t for t in kube.items(RCTS)}
    assert sorted(templates) == ["roce-rail0"], sorted(templates)
    assert templates["roce-rail0"]["metadata"]["labels"] == dict(MANAGED, **FABRIC)
    assert "Deleting 1 object(s) of fabric upgrade-test no longer in the inventory: ResourceClaimTemplate/roce-rail1" in _flat(out), out[-8000:]
    nccl = kube.get_or_none(_kube.path("", "v1", "configmaps", namespace="default", name="gpufabric-nccl"))

    t0 = time.time()
    rc, out = _teardown(inv, cluster)
    TIMINGS["upgrade test: teardown (s)"] = round(time.time() - t0, 1)
    flat = _flat(out)
    assert rc == 0, out[-8000:]
    deleted = ["ResourceClaimTemplate/roce-rail0", "SriovNetwork/roce-rail0", "CIDRPool/roce-rail0", "SriovNetworkNodePolicy/roce-node1-rail0",
               "SriovNetworkNodePolicy/roce-node2-rail0"] + (["ConfigMap/gpufabric-nccl"] if nccl else []) + ["SriovNetworkPoolConfig/roce-pool"]
    assert "Deleting %d object(s) of fabric upgrade-test: %s." % (len(deleted), ", ".join(deleted)) in flat, out[-8000:]
    assert kube.items(RCTS) == [] and kube.items(sriov_path("sriovnetworks")) == []
    assert kube.items(sriov_path("sriovnetworknodepolicies")) == [] and kube.items(sriov_path("sriovnetworkpoolconfigs")) == []
    assert kube.items(_kube.path("nv-ipam.nvidia.com", "v1alpha1", "cidrpools", namespace=NAMESPACE)) == []
    # This fabric's NicNodePolicy goes; another fabric's keeps the operator, and what nobody labelled stays.
    assert sorted(p["metadata"]["name"] for p in kube.get(NNPS)["items"]) == ["hand-made", "held-group", "other-group"]
    assert ("The NicClusterPolicy and the Helm release network-operator stay: the NicNodePolicies of fabric(s) other are still in "
            "the cluster and need the operator") in flat, out[-8000:]
    assert kube.get_or_none(NCP) is not None and [r["status"] for r in _releases(cluster)] == ["deployed"]

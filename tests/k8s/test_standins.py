# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The harness and every stand-in behaviour, against the real kube-apiserver, scheduler and helm.

The tests share one control plane and one Helm release and run in file order: the chart comes
first, the NicClusterPolicy before the SR-IOV objects (the chart's SriovOperatorConfig selects the
config-daemon nodes by a label the network-operator sets), and `stop` last.
"""

import calendar
import json
import os
import time
from pathlib import Path

import pytest
from k8s_helpers import APPLY_DELAY, NAMESPACE, RELEASE, SYNC_DELAY, TIMINGS, wait_for
from controlplane import alive
from standins import _kube, kubelet, network_operator, sriov_cni, sriov_operator

SRIOV = ("sriovnetwork.openshift.io", "v1")
NODE_MONITOR_GRACE_PERIOD = 50  # kube-controller-manager default (--node-monitor-grace-period)
SYNC_TIMEOUT = 60 + SYNC_DELAY + APPLY_DELAY


def sriov_path(resource, name=None, sub=None):
    return _kube.path(*SRIOV, resource, namespace=NAMESPACE, name=name, sub=sub)


def node(cluster, name):
    return cluster.kube.get(_kube.path("", "v1", "nodes", name=name))


def policy(name, node_name, pf_names, num_vfs, **extra):
    spec = {"nodeSelector": {"kubernetes.io/hostname": node_name}, "nicSelector": {"pfNames": pf_names, "vendor": "15b3"},
            "numVfs": num_vfs, "mtu": 9000, "resourceName": name.replace("-", "_"), "isRdma": True, "priority": 99}
    spec.update(extra)
    return {"apiVersion": "%s/%s" % SRIOV, "kind": "SriovNetworkNodePolicy", "metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec}


def apply(cluster, url, body):
    try:
        return cluster.kube.create(url, body)
    except _kube.KubeError as err:
        if err.status != 409:
            raise
        return cluster.kube.patch(url + "/" + body["metadata"]["name"], {"spec": body["spec"]})


def pf_status(state, pci):
    return next((i for i in (state.get("status") or {}).get("interfaces") or [] if i["pciAddress"] == pci), {})


def pf_spec(state, pci):
    return next((i for i in (state.get("spec") or {}).get("interfaces") or [] if i["pciAddress"] == pci), {})


def watch_state(cluster, name, done, rv, timeout=SYNC_TIMEOUT):
    """Every version of one node state from resourceVersion rv on, until done(state) holds."""
    seen = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        for kind, obj in cluster.kube.watch(sriov_path("sriovnetworknodestates"), timeout=max(1, int(deadline - time.time())),
                                            resourceVersion=rv, fieldSelector="metadata.name=" + name):
            rv = obj["metadata"]["resourceVersion"]
            seen.append((kind, obj))
            # A DELETED event carries the object's last state, which may look done: only a live version can be.
            if kind != "DELETED" and done(obj):
                return seen
    pytest.fail("node state %s never reached the expected state in %.0fs; versions seen: %s"
                % (name, timeout, [(k, o.get("spec"), (o.get("status") or {}).get("syncStatus")) for k, o in seen]))


def phases(seen, pci):
    """Collapse versions into (spec numVfs, syncStatus, status numVfs, lastSyncError) steps."""
    out = []
    for _kind, obj in seen:
        step = (pf_spec(obj, pci).get("numVfs"), (obj.get("status") or {}).get("syncStatus"), pf_status(obj, pci).get("numVfs"),
                (obj.get("status") or {}).get("lastSyncError"))
        if not out or out[-1] != step:
            out.append(step)
    return out


# ---- the control plane ---------------------------------------------------------------------------
def test_control_plane_is_real_and_nodes_are_ready(cluster):
    version = cluster.kube.get("/version")
    assert version["gitVersion"] == "v1.36.2"
    assert cluster.info["server"].startswith("https://127.0.0.1:")
    assert oct(cluster.kubeconfig.stat().st_mode & 0o777) == "0o600"
    assert oct((cluster.state_dir / "tokens.csv").stat().st_mode & 0o777) == "0o600"
    for name in ("node1", "node2"):
        obj = node(cluster, name)
        labels = obj["metadata"]["labels"]
        assert labels["kubernetes.io/hostname"] == name
        assert labels["kubernetes.io/os"] == "linux" and labels["kubernetes.io/arch"] == "amd64"
        ready = [c for c in obj["status"]["conditions"] if c["type"] == "Ready"]
        assert ready and ready[0]["status"] == "True"
        assert not obj["spec"].get("taints"), obj["spec"].get("taints")
        assert obj["status"]["allocatable"]["pods"] == "110"
        lease = cluster.kube.get(_kube.path("coordination.k8s.io", "v1", "leases", namespace="kube-node-lease", name=name))
        assert lease["spec"]["holderIdentity"] == name
    assert node(cluster, "node1")["metadata"]["labels"]["example.com/rack"] == "r1"


def test_helm_installs_the_real_chart(cluster, helm_release):
    releases = json.loads(cluster.run("helm", "list", "-n", NAMESPACE, "-o", "json").stdout)
    assert [(r["name"], r["chart"], r["status"]) for r in releases] == [(RELEASE, "network-operator-26.4.1", "deployed")]
    crds = {c["metadata"]["name"] for c in cluster.kube.items(_kube.path("apiextensions.k8s.io", "v1", "customresourcedefinitions"))}
    assert {"nicclusterpolicies.mellanox.com", "sriovnetworknodepolicies.sriovnetwork.openshift.io", "sriovnetworks.sriovnetwork.openshift.io",
            "sriovnetworknodestates.sriovnetwork.openshift.io", "sriovoperatorconfigs.sriovnetwork.openshift.io",
            "network-attachment-definitions.k8s.cni.cncf.io", "nodefeaturerules.nfd.k8s-sigs.io"} <= crds
    deployments = {d["metadata"]["name"]: d for d in cluster.kube.items(_kube.path("apps", "v1", "deployments", namespace=NAMESPACE))}
    assert set(deployments) == {"network-operator", "network-operator-sriov-network-operator",
                                "network-operator-node-feature-discovery-master", "network-operator-node-feature-discovery-gc"}
    for name, dep in deployments.items():
        assert dep["status"].get("availableReplicas") == 1, name
    worker = cluster.kube.get(_kube.path("apps", "v1", "daemonsets", namespace=NAMESPACE, name="network-operator-node-feature-discovery-worker"))
    assert worker["status"]["numberReady"] == 2
    config = cluster.kube.get(sriov_path("sriovoperatorconfigs", "default"))
    assert config["spec"]["configDaemonNodeSelector"] == {"beta.kubernetes.io/os": "linux", "network.nvidia.com/operator.mofed.wait": "false"}
    # No admission webhook: with the chart's defaults nothing intercepts applies on a cluster without service routing.
    for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations"):
        assert cluster.kube.items(_kube.path("admissionregistration.k8s.io", "v1", kind)) == []


def test_the_api_server_validates_custom_resources_against_the_crds(cluster, helm_release):
    bad = policy("bad-priority", "node1", ["enp157s0np0"], 4, priority=200)
    with pytest.raises(_kube.KubeError) as err:
        cluster.kube.create(sriov_path("sriovnetworknodepolicies"), bad)
    assert err.value.status == 422 and "spec.priority" in err.value.message
    net = {"apiVersion": "%s/%s" % SRIOV, "kind": "SriovNetwork", "metadata": {"name": "bad-vlan", "namespace": NAMESPACE},
           "spec": {"resourceName": "x", "vlan": 5000}}
    with pytest.raises(_kube.KubeError) as err:
        cluster.kube.create(sriov_path("sriovnetworks"), net)
    assert err.value.status == 422 and "spec.vlan" in err.value.message


# ---- network-operator stand-in -------------------------------------------------------------------
def test_nicclusterpolicy_gets_ready_with_applied_states(cluster, helm_release):
    ncp_path = _kube.path("mellanox.com", "v1alpha1", "nicclusterpolicies")
    image = {"repository": "nvcr.io/nvidia/mellanox", "version": "network-operator-v26.4.1"}
    body = {"apiVersion": "mellanox.com/v1alpha1", "kind": "NicClusterPolicy", "metadata": {"name": "nic-cluster-policy"},
            "spec": {"nvIpam": dict(image, image="nvidia-k8s-ipam", enableWebhook=False),
                     "secondaryNetwork": {"multus": dict(image, image="multus-cni"), "cniPlugins": dict(image, image="plugins")}}}
    cluster.kube.create(ncp_path, body)
    status = wait_for("NicClusterPolicy status.state ready",
                      lambda: (cluster.kube.get(ncp_path + "/nic-cluster-policy").get("status") or {}).get("state") == "ready"
                      and cluster.kube.get(ncp_path + "/nic-cluster-policy")["status"])
    states = {s["name"]: s["state"] for s in status["appliedStates"]}
    assert [s["name"] for s in status["appliedStates"]] == [name for name, _keys in network_operator.STATES]
    assert {k for k, v in states.items() if v == "ready"} == {"state-multus-cni", "state-container-networking-plugins", "state-nv-ipam-cni"}
    assert {v for k, v in states.items() if v != "ready"} == {"ignore"}
    for name in ("node1", "node2"):
        wait_for("%s labelled mofed.wait=false" % name,
                 lambda n=name: node(cluster, n)["metadata"]["labels"].get(network_operator.MOFED_WAIT_LABEL) == "false")
        assert node(cluster, name)["metadata"]["labels"]["feature.node.kubernetes.io/pci-15b3.present"] == "true"
    # Any other instance name is refused, as upstream's handleUnsupportedInstance does.
    other = dict(body, metadata={"name": "second-policy"})
    cluster.kube.create(ncp_path, other)
    refused = wait_for("second NicClusterPolicy ignored", lambda: (cluster.kube.get(ncp_path + "/second-policy").get("status") or {}).get("reason"))
    assert "Only instance with name nic-cluster-policy is supported" in refused
    assert cluster.kube.get(ncp_path + "/second-policy")["status"]["state"] == "ignore"
    cluster.kube.delete(ncp_path + "/second-policy")


# ---- sriov-network-operator / config-daemon stand-in -----------------------------------------------
def test_nothing_happens_without_the_operator_config_then_empty_spec_succeeded_comes_first(cluster, helm_release):
    config_path = sriov_path("sriovoperatorconfigs", "default")
    config = cluster.kube.get(config_path)
    cluster.kube.delete(config_path)
    # The node states are owned by the SriovOperatorConfig: the garbage collector takes them with it.
    wait_for("node states garbage-collected", lambda: cluster.kube.items(sriov_path("sriovnetworknodestates")) == [])
    cluster.kube.create(sriov_path("sriovnetworknodepolicies"), policy("roce-node1", "node1", ["enp157s0np0"], 8))
    loop0, _notes = cluster.standin_loop()
    waiting = wait_for("three stand-in loops waiting for SriovOperatorConfig",
                       lambda: cluster.standin_loop()[0] >= loop0 + 3 and cluster.standin_loop()[1]["sriov"].get("waiting_for"))
    assert waiting == "SriovOperatorConfig %s/default" % NAMESPACE
    states = cluster.kube.get(sriov_path("sriovnetworknodestates"))
    assert states["items"] == []

    restored = {"apiVersion": config["apiVersion"], "kind": config["kind"], "spec": config["spec"],
                "metadata": {k: config["metadata"][k] for k in ("name", "namespace", "labels", "annotations") if k in config["metadata"]}}
    cluster.kube.create(sriov_path("sriovoperatorconfigs"), restored)
    seen = watch_state(cluster, "node1", lambda s: pf_status(s, "0000:9d:00.0").get("numVfs") == 8
                       and s["status"].get("syncStatus") == "Succeeded", states["metadata"]["resourceVersion"])
    steps = phases(seen, "0000:9d:00.0")
    assert seen[0][0] == "ADDED" and not seen[0][1].get("spec")
    assert steps[0] == (None, None, None, None)
    assert steps[1] == (None, "Succeeded", None, None), steps  # upstream's daemon: empty spec, Succeeded, PFs at 0 VFs
    spec_written = steps.index((8, "Succeeded", None, None))  # spec set while the status still shows the empty sync
    assert steps[spec_written + 1:] == [(8, "InProgress", None, None), (8, "Succeeded", 8, None)], steps
    last = seen[-1][1]
    assert pf_status(last, "0000:9d:00.0")["mtu"] == 9000
    assert len(pf_status(last, "0000:9d:00.0")["Vfs"]) == 8
    assert pf_spec(last, "0000:9d:00.0")["vfGroups"] == [{"resourceName": "roce_node1", "deviceType": "netdevice", "vfRange": "0-7",
                                                          "policyName": "roce-node1", "mtu": 9000, "isRdma": True}]
    assert pf_spec(last, "0000:a0:00.0") == {}  # the policy selected one PF by name


def test_failed_sync_reports_last_sync_error_and_recovers(cluster, helm_release):
    message = "simulated: the NIC firmware refused the VF change"
    node_path = _kube.path("", "v1", "nodes", name="node2")
    cluster.kube.patch(node_path, {"metadata": {"annotations": {sriov_operator.SYNC_ERROR_ANNOTATION: message}}}, strategic=True)
    rv = cluster.kube.get(sriov_path("sriovnetworknodestates"))["metadata"]["resourceVersion"]
    cluster.kube.create(sriov_path("sriovnetworknodepolicies"), policy("roce-node2", "node2", ["enp157s0np0#0-3"], 4))
    seen = watch_state(cluster, "node2", lambda s: s["status"].get("syncStatus") == "Failed", rv)
    assert phases(seen, "0000:9d:00.0")[-2:] == [(4, "InProgress", None, None), (4, "Failed", None, message)]
    rv = seen[-1][1]["metadata"]["resourceVersion"]
    cluster.kube.patch(node_path, {"metadata": {"annotations": {sriov_operator.SYNC_ERROR_ANNOTATION: None}}}, strategic=True)
    seen = watch_state(cluster, "node2", lambda s: s["status"].get("syncStatus") == "Succeeded", rv)
    assert phases(seen, "0000:9d:00.0")[-1] == (4, "Succeeded", 4, None)
    # upstream's own check: more VFs than the PF has
    rv = seen[-1][1]["metadata"]["resourceVersion"]
    cluster.kube.patch(sriov_path("sriovnetworknodepolicies", "roce-node2"), {"spec": {"numVfs": 20, "nicSelector": {"pfNames": ["enp157s0np0"]}}})
    seen = watch_state(cluster, "node2", lambda s: s["status"].get("syncStatus") == "Failed", rv)
    assert seen[-1][1]["status"]["lastSyncError"] == "cannot config SRIOV device: NumVfs (20) is larger than TotalVfs (16)"
    cluster.kube.patch(sriov_path("sriovnetworknodepolicies", "roce-node2"), {"spec": {"numVfs": 4, "nicSelector": {"pfNames": ["enp157s0np0#0-3"]}}})
    wait_for("node2 back to Succeeded", lambda: cluster.kube.get(sriov_path("sriovnetworknodestates", "node2"))["status"]["syncStatus"] == "Succeeded",
             timeout=SYNC_TIMEOUT)


def test_externally_managed_pf_keeps_the_host_vfs(cluster, helm_release):
    pci = "0000:a0:00.0"  # the hardware file gives it 8 VFs made on the host
    rv = cluster.kube.get(sriov_path("sriovnetworknodestates"))["metadata"]["resourceVersion"]
    cluster.kube.create(sriov_path("sriovnetworknodepolicies"), policy("host-node1", "node1", ["enp160s0np0"], 12, externallyManaged=True))
    seen = watch_state(cluster, "node1", lambda s: s["status"].get("syncStatus") == "Failed", rv)
    assert seen[-1][1]["status"]["lastSyncError"] == (
        "checkExternallyManagedPF(): number of request virtual functions 12 is not equal to configured virtual functions 8 "
        "but the policy is configured as ExternallyManaged for device %s" % pci)
    rv = seen[-1][1]["metadata"]["resourceVersion"]
    cluster.kube.patch(sriov_path("sriovnetworknodepolicies", "host-node1"), {"spec": {"numVfs": 8}})
    seen = watch_state(cluster, "node1", lambda s: s["status"].get("syncStatus") == "Succeeded" and pf_spec(s, pci).get("numVfs") == 8, rv)
    last = seen[-1][1]
    assert pf_spec(last, pci)["externallyManaged"] is True
    assert pf_status(last, pci)["numVfs"] == 8 and pf_status(last, pci)["externallyManaged"] is True
    cluster.kube.delete(sriov_path("sriovnetworknodepolicies", "host-node1"))


# ---- SriovNetwork, device plugin, scheduler, kubelet ---------------------------------------------
def test_network_attachment_allocatable_and_pods(cluster, helm_release):
    net = {"apiVersion": "%s/%s" % SRIOV, "kind": "SriovNetwork", "metadata": {"name": "roce-node1", "namespace": NAMESPACE},
           "spec": {"resourceName": "roce_node1", "networkNamespace": "default", "vlan": 100, "trust": "on", "spoofChk": "off",
                    "linkState": "enable", "ipam": '{"type": "host-local", "subnet": "10.255.0.0/30", "gateway": "10.255.0.2"}'}}
    cluster.kube.create(sriov_path("sriovnetworks"), net)
    nad_path = _kube.path("k8s.cni.cncf.io", "v1", "network-attachment-definitions", namespace="default", name="roce-node1")
    nad = wait_for("NAD default/roce-node1", lambda: cluster.kube.get_or_none(nad_path))
    assert nad["metadata"]["annotations"][sriov_cni.RESOURCE_ANNOTATION] == "nvidia.com/roce_node1"
    assert json.loads(nad["spec"]["config"]) == {
        "cniVersion": "1.0.0", "name": "roce-node1", "type": "sriov", "vlan": 100, "spoofchk": "off", "trust": "on", "vlanQoS": 0,
        "link_state": "enable", "logLevel": "info", "ipam": {"type": "host-local", "subnet": "10.255.0.0/30", "gateway": "10.255.0.2"}}
    network = cluster.kube.get(sriov_path("sriovnetworks", "roce-node1"))
    assert sriov_cni.FINALIZER in network["metadata"]["finalizers"]

    assert wait_for("node1 allocatable nvidia.com/roce_node1", lambda: node(cluster, "node1")["status"]["allocatable"].get("nvidia.com/roce_node1")) == "8"
    assert node(cluster, "node1")["status"]["capacity"]["nvidia.com/roce_node1"] == "8"
    assert wait_for("node2 allocatable nvidia.com/roce_node2", lambda: node(cluster, "node2")["status"]["allocatable"].get("nvidia.com/roce_node2")) == "4"

    pods = _kube.path("", "v1", "pods", namespace="default")

    def pod(name, resource, selector=None):
        spec = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {resource: "1"}, "limits": {resource: "1"}}}]}
        if selector:
            spec["nodeSelector"] = {"kubernetes.io/hostname": selector}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": {"k8s.v1.cni.cncf.io/networks": "roce-node1"}}, "spec": spec}

    cluster.kube.create(pods, pod("rdma-node1", "nvidia.com/roce_node1", "node1"))
    cluster.kube.create(pods, pod("nowhere", "nvidia.com/roce_nowhere"))
    running = wait_for("pod rdma-node1 Running", lambda: (cluster.kube.get(pods + "/rdma-node1").get("status") or {}).get("phase") == "Running"
                       and cluster.kube.get(pods + "/rdma-node1"))
    assert running["spec"]["nodeName"] == "node1"
    assert {c["type"]: c["status"] for c in running["status"]["conditions"]}["Ready"] == "True"
    assert running["status"]["containerStatuses"][0]["ready"] is True and running["status"]["podIP"].startswith("10.244.")
    unschedulable = wait_for("pod nowhere Unschedulable", lambda: [c for c in (cluster.kube.get(pods + "/nowhere").get("status") or {}).get("conditions") or []
                                                                   if c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"])
    assert "Insufficient nvidia.com/roce_nowhere" in unschedulable[0]["message"]
    assert cluster.kube.get(pods + "/nowhere")["status"].get("phase") == "Pending" and not cluster.kube.get(pods + "/nowhere")["spec"].get("nodeName")
    for name in ("rdma-node1", "nowhere"):
        cluster.kube.delete(pods + "/" + name)
    wait_for("pods deleted", lambda: not cluster.kube.items(pods))

    cluster.kube.delete(sriov_path("sriovnetworks", "roce-node1"))
    wait_for("SriovNetwork and its NAD gone", lambda: cluster.kube.get_or_none(nad_path) is None
             and cluster.kube.get_or_none(sriov_path("sriovnetworks", "roce-node1")) is None)


def test_a_recreated_node_state_starts_empty_and_keeps_the_resources(cluster, helm_release):
    rv = cluster.kube.get(sriov_path("sriovnetworknodestates"))["metadata"]["resourceVersion"]
    cluster.kube.delete(sriov_path("sriovnetworknodestates", "node1"))
    during_empty = []

    def done(state):
        if not (state.get("spec") or {}).get("interfaces") and (state.get("status") or {}).get("syncStatus") == "Succeeded":
            during_empty.append(node(cluster, "node1")["status"]["allocatable"].get("nvidia.com/roce_node1"))
        return pf_status(state, "0000:9d:00.0").get("numVfs") == 8 and state["status"].get("syncStatus") == "Succeeded"

    seen = watch_state(cluster, "node1", done, rv)
    assert [k for k, _o in seen][:2] == ["DELETED", "ADDED"]
    steps = phases(seen[1:], "0000:9d:00.0")
    assert steps[:2] == [(None, None, None, None), (None, "Succeeded", None, None)], steps
    assert steps[-2:] == [(8, "InProgress", None, None), (8, "Succeeded", 8, None)], steps
    assert during_empty and set(during_empty) == {"8"}  # the device plugin was not restarted by the new empty state
    assert node(cluster, "node1")["status"]["allocatable"]["nvidia.com/roce_node1"] == "8"


def test_removing_a_policy_clears_the_spec_and_the_resource(cluster, helm_release):
    cluster.kube.delete(sriov_path("sriovnetworknodepolicies", "roce-node2"))

    def synced_empty():
        state = cluster.kube.get(sriov_path("sriovnetworknodestates", "node2"))
        return not (state.get("spec") or {}).get("interfaces") and state["status"]["syncStatus"] == "Succeeded"

    wait_for("node2 spec empty and Succeeded", synced_empty, timeout=SYNC_TIMEOUT)
    wait_for("nvidia.com/roce_node2 removed from node2", lambda: "nvidia.com/roce_node2" not in node(cluster, "node2")["status"]["capacity"])
    assert "nvidia.com/roce_node2" not in node(cluster, "node2")["status"]["allocatable"]
    assert node(cluster, "node1")["status"]["allocatable"]["nvidia.com/roce_node1"] == "8"


def test_helm_uninstall_runs_the_pre_delete_hook(cluster, helm_release):
    cluster.run("helm", "uninstall", RELEASE, "--namespace", NAMESPACE, "--wait", "--timeout", "3m")
    assert json.loads(cluster.run("helm", "list", "-n", NAMESPACE, "-o", "json").stdout) == []
    # The sriov subchart's pre-delete Job ran to completion (helm waits for it) and was deleted by its policy.
    assert cluster.kube.items(_kube.path("batch", "v1", "jobs", namespace=NAMESPACE)) == []
    assert cluster.kube.get_or_none(sriov_path("sriovoperatorconfigs", "default")) is None
    wait_for("node states garbage-collected with their SriovOperatorConfig", lambda: cluster.kube.items(sriov_path("sriovnetworknodestates")) == [])
    wait_for("the chart's pods gone", lambda: cluster.kube.items(_kube.path("", "v1", "pods", namespace=NAMESPACE)) == [])


# ---- lifetime -----------------------------------------------------------------------------------
def test_nodes_stay_schedulable_beyond_the_node_monitor_grace_period(cluster):
    # Waiting here is not the assertion: the node-lifecycle controller needs the grace period to pass.
    remaining = cluster.info["started"] + cluster.info["timings_seconds"]["total"] + NODE_MONITOR_GRACE_PERIOD + 15 - time.time()
    if remaining > 0:
        time.sleep(remaining)
    for name in ("node1", "node2"):
        obj = node(cluster, name)
        assert {c["type"]: c["status"] for c in obj["status"]["conditions"]}["Ready"] == "True"
        assert not obj["spec"].get("taints"), obj["spec"]["taints"]
        lease = cluster.kube.get(_kube.path("coordination.k8s.io", "v1", "leases", namespace="kube-node-lease", name=name))
        renewed = calendar.timegm(time.strptime(lease["spec"]["renewTime"][:19], "%Y-%m-%dT%H:%M:%S"))
        assert time.time() - renewed < kubelet.LEASE_DURATION


@pytest.mark.stops_session_cluster
def test_stop_leaves_no_process_behind(cluster):
    records = cluster.records()
    assert set(records) == {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "standins"}
    tick = os.sysconf("SC_CLK_TCK")
    for name, rec in records.items():
        fields = Path("/proc/%d/stat" % rec["pid"]).read_text(encoding="utf-8").rsplit(")", 1)[1].split()
        TIMINGS["cpu %s (s)" % name] = round((int(fields[11]) + int(fields[12])) / tick, 1)
    TIMINGS["control plane lifetime (s)"] = round(time.time() - cluster.info["started"], 1)
    cluster.controlplane("stop")
    assert [name for name, rec in records.items() if alive(rec)] == []
    assert not cluster.state_dir.exists()
    assert cluster.controlplane("status", check=False).returncode == 1

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DRA mode (issue 41, item 5) on the real control plane: the rendered ResourceClaimTemplates pass the API server's
server-side dry run, and the real kube-scheduler v1.36.2 allocates them against ResourceSlices that a stand-in publishes
the way dra-driver-sriov does (tests/k8s/dra_standin.py).

Two rails on the session's two nodes, two VFs per rail and node. On node1 each rail's PF shares its PCIe root with a
GPU; on node2 no GPU shares a root with any VF. With sriov_networks_dra_align_gpu a worker pinned to node1 gets, per rail,
a VF of that rail on node1 and the GPU on the same root; one pinned to node2 stays Pending with the scheduler's own
reason. Without alignment the same worker on node2 gets one VF of each rail. The gate the network-operator role sets is
checked in the chart's own SriovOperatorConfig (helm template of the 26.7.0-rc.2 chart) against the 26.7 CRD.

What this does not prove: a real DRA driver preparing the VF (CDI, the NRI plugin or Multus attaching it), GPUs, or the
sriov-network-operator making the DeviceAttributes and SriovResourcePolicies: those need a real cluster.
"""

import copy
import sys

import pytest
import yaml
from dra_standin import GPU_DRIVER, RESOURCE_API, SRIOV_DRIVER, device_classes, node_slices
from k8s_helpers import REPO, shared_chart, wait_for  # puts lab/k8s on sys.path
from standins import _kube

sys.path.insert(0, str(REPO / "tests" / "unit" / "plugins" / "module_utils"))
sys.path.insert(0, str(REPO / ".build" / "collections"))  # the link tests/unit/conftest.py and the Makefile make
import k8s_crd_schema  # noqa: E402

from ansible_collections.gpufabric.roce.plugins.filter.fabric_plan import FilterModule as PlanFilters
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.operator import HELM_DEFAULT_KEYS, render_helm_values
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov import SRIOV_DEFAULT_KEYS, render_sriov
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_pods
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults

NODES = ("node1", "node2")  # the session control plane's nodes (k8s_helpers.HARDWARE)
PLAN = [{"name": "rail%d" % i, "pf": "enp%ds0np0" % (26 + 32 * i), "vlan": 101 + i, "subnet_pool": "10.%d.0.0/16" % (101 + i)} for i in range(2)]
ALIGNED, PLAIN = "dra-aligned", "dra-plain"
FIELD_MANAGER = "gpufabric-test-dra"


def _render(namespace, align):
    hv = {h: {"roce_rails": PLAN, "roce_node_index": i} for i, h in enumerate(NODES)}
    given = {"sriov_networks_ipam": "nv-ipam", "sriov_networks_resource_api": "dra", "sriov_networks_dra_align_gpu": align,
             "sriov_networks_network_namespace": namespace}
    # The rails as the render reads them: from the table of the nodes' fabric plan.
    table = PlanFilters().filters()["fabric_plan"](hv, list(NODES))["fabric"]
    return render_sriov(list(NODES), hv, with_role_defaults("sriov_networks", SRIOV_DEFAULT_KEYS, given), table)


def _hardware():
    """Per node: each rail's PF with two VFs (from the rendered resource names), and two GPUs. node1's GPU i sits on rail
    i's root; node2's GPUs are on roots of their own."""
    out = {}
    for n, node in enumerate(NODES):
        rails = []
        for i, rail in enumerate(PLAN):
            bus = 0x1a + 0x20 * i
            pf = {"name": rail["pf"], "pci": "0000:%02x:00.0" % bus, "root": "pci0000:%02x" % (bus - 1), "numa": i}
            rails.append((pf, [(v, "0000:%02x:00.%d" % (bus, 2 + v)) for v in range(2)], "nvidia.com/roce_%s" % rail["name"]))
        gpu_roots = [pf["root"] for pf, _v, _r in rails] if n == 0 else ["pci0000:%02x" % (0xc0 + 0x10 * i) for i in range(len(PLAN))]
        gpus = [("0000:%02x:00.0" % (int(root[-2:], 16) + 2), root) for root in gpu_roots]
        out[node] = (rails, gpus)
    return out


def _rc(resource, **kw):
    return _kube.path(*RESOURCE_API, resource, **kw)


def _dry_run_apply(kube, obj):
    meta = obj["metadata"]
    return kube.request("PATCH", _rc("resourceclaimtemplates", namespace=meta["namespace"], name=meta["name"]), body=obj,
                        query={"dryRun": "All", "fieldManager": FIELD_MANAGER}, content_type="application/apply-patch+yaml")


def _without_defaults(answer, sent):
    """``answer`` cut down to the keys of ``sent`` (recursively): what the server kept of what was sent."""
    if isinstance(sent, dict) and isinstance(answer, dict):
        return {k: _without_defaults(answer[k], v) for k, v in sent.items() if k in answer}
    if isinstance(sent, list) and isinstance(answer, list) and len(sent) == len(answer):
        return [_without_defaults(a, s) for a, s in zip(answer, sent)]
    return answer


def _pod(name, namespace, node, templates):
    claims = [{"name": t["metadata"]["name"], "resourceClaimTemplateName": t["metadata"]["name"]} for t in templates]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "annotations": {
        "k8s.v1.cni.cncf.io/networks": ", ".join("%s/%s" % (namespace, t["metadata"]["name"]) for t in templates)}},
        "spec": {"nodeSelector": {"kubernetes.io/hostname": node}, "terminationGracePeriodSeconds": 0,
                 "containers": [{"name": "worker", "image": "registry.invalid/train:never-pulled",
                                 "resources": {"claims": [{"name": c["name"]} for c in claims]}}],
                 "resourceClaims": claims}}


@pytest.fixture(scope="module")
def dra_cluster(cluster):
    """The session control plane with the stand-in DRA drivers' slices and classes; everything removed afterwards."""
    kube = cluster.kube
    aligned, plain = _render(ALIGNED, True), _render(PLAIN, False)
    created = []
    for ns in (ALIGNED, PLAIN):
        kube.create(_kube.path("", "v1", "namespaces"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        created.append(_kube.path("", "v1", "namespaces", name=ns))
    hardware = _hardware()
    slices = [s for node in NODES for s in node_slices(node, *hardware[node])]
    for obj in device_classes() + slices:
        plural = "deviceclasses" if obj["kind"] == "DeviceClass" else "resourceslices"
        kube.create(_rc(plural), obj)
        created.append(_rc(plural, name=obj["metadata"]["name"]))
    yield {"kube": kube, "aligned": aligned, "plain": plain, "slices": slices}
    for url in reversed(created):
        kube.delete(url)


def _device_index(slices):
    """(driver, pool, device) -> the device's attributes."""
    return {(s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"]): d["attributes"] for s in slices for d in s["spec"]["devices"]}


def _allocations(kube, pod):
    """The pod's claims by name, once every one of them is allocated: {claim name: [allocation results]}."""
    statuses = pod.get("status", {}).get("resourceClaimStatuses") or []
    out = {}
    for st in statuses:
        claim = kube.get(_rc("resourceclaims", namespace=pod["metadata"]["namespace"], name=st["resourceClaimName"]))
        allocation = claim.get("status", {}).get("allocation")
        if not allocation:
            return None
        out[st["name"]] = allocation["devices"]["results"]
    return out if len(out) == len(pod["spec"]["resourceClaims"]) else None


def _scheduled_with_claims(kube, namespace, name):
    def check():
        pod = kube.get(_kube.path("", "v1", "pods", namespace=namespace, name=name))
        if not pod["spec"].get("nodeName"):
            return None
        allocations = _allocations(kube, pod)
        return (pod, allocations) if allocations else None
    pod, allocations = tuple(wait_for("pod %s/%s bound with every claim allocated" % (namespace, name), check, timeout=120))
    return pod, allocations


def test_the_rendered_claim_templates_pass_a_server_side_dry_run(dra_cluster):
    kube = dra_cluster["kube"]
    for out in (dra_cluster["aligned"], dra_cluster["plain"]):
        assert len(out["claim_templates"]) == len(PLAN)
        for template in out["claim_templates"]:
            answer = _dry_run_apply(kube, template)
            # What was sent comes back as sent; the server only adds its defaults (allocationMode: ExactCount).
            assert _without_defaults(answer["spec"]["spec"], template["spec"]["spec"]) == template["spec"]["spec"]
            assert kube.get_or_none(_rc("resourceclaimtemplates", namespace=template["metadata"]["namespace"],
                                        name=template["metadata"]["name"])) is None  # a dry run creates nothing
    # The dry run has teeth: a constraint naming a request the claim does not have is refused by the server.
    broken = copy.deepcopy(dra_cluster["aligned"]["claim_templates"][0])
    broken["spec"]["spec"]["devices"]["constraints"][0]["requests"] = ["vf", "nic"]
    with pytest.raises(_kube.KubeError) as err:
        _dry_run_apply(kube, broken)
    assert err.value.status == 422 and "nic" in str(err.value)


def test_the_gate_lands_in_the_charts_sriov_operator_config_valid_against_the_26_7_crd(cluster, tmp_path):
    values = render_helm_values(with_role_defaults("network_operator", HELM_DEFAULT_KEYS, {"sriov_networks_resource_api": "dra"}))
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(values), encoding="utf-8")
    proc = cluster.run("helm", "template", "network-operator", str(shared_chart("26.7.0-rc.2")), "--namespace", "nvidia-network-operator",
                       "--kube-version", "1.36.2", "--values", str(values_file), "--set", "sriovNetworkOperator.enabled=true")
    configs = [d for d in yaml.safe_load_all(proc.stdout) if isinstance(d, dict) and d.get("kind") == "SriovOperatorConfig"]
    assert len(configs) == 1
    assert configs[0]["spec"]["featureGates"] == {"dynamicResourceAllocation": True}
    assert k8s_crd_schema.validate_object(configs[0], k8s_crd_schema.load_crds(line="26.7")) == []


def _submit(kube, namespace, templates, nodes):
    """The claim templates, and a worker pod claiming through them on each of ``nodes`` (worker-<node>)."""
    for t in templates:
        kube.create(_rc("resourceclaimtemplates", namespace=namespace), t)
    for node in nodes:
        kube.create(_kube.path("", "v1", "pods", namespace=namespace), _pod("worker-%s" % node, namespace, node, templates))


def test_the_scheduler_allocates_one_vf_per_rail_and_the_gpu_on_its_root_and_explains_the_node_without_one(dra_cluster):
    kube, index = dra_cluster["kube"], _device_index(dra_cluster["slices"])
    _submit(kube, ALIGNED, dra_cluster["aligned"]["claim_templates"], ("node1", "node2"))

    pod, allocations = _scheduled_with_claims(kube, ALIGNED, "worker-node1")
    assert pod["spec"]["nodeName"] == "node1"
    roots = set()
    for i, rail in enumerate(PLAN):
        results = {r["request"]: r for r in allocations["roce-%s" % rail["name"]]}
        assert set(results) == {"vf", "gpu"}
        vf, gpu = results["vf"], results["gpu"]
        assert (vf["driver"], vf["pool"], gpu["driver"], gpu["pool"]) == (SRIOV_DRIVER, "node1", GPU_DRIVER, "node1")
        vf_attrs, gpu_attrs = index[(SRIOV_DRIVER, "node1", vf["device"])], index[(GPU_DRIVER, "node1", gpu["device"])]
        assert vf_attrs["k8s.cni.cncf.io/resourceName"]["string"] == "nvidia.com/roce_%s" % rail["name"]
        assert vf_attrs[SRIOV_DRIVER + "/PFName"]["string"] == rail["pf"]
        root = vf_attrs["resource.kubernetes.io/pcieRoot"]["string"]
        assert gpu_attrs["resource.kubernetes.io/pcieRoot"]["string"] == root
        roots.add(root)
        assert gpu_attrs["index"]["int"] == i  # the GPU of that root, not merely some GPU
    assert len(roots) == len(PLAN)

    def unschedulable():
        p = kube.get(_kube.path("", "v1", "pods", namespace=ALIGNED, name="worker-node2"))
        cond = next((c for c in p.get("status", {}).get("conditions") or [] if c["type"] == "PodScheduled"), None)
        return (p, cond) if cond and cond["status"] == "False" else None
    pending, cond = wait_for("worker-node2 to be found unschedulable", unschedulable, timeout=120)
    assert not pending["spec"].get("nodeName") and pending["status"]["phase"] == "Pending"
    assert cond["reason"] == "Unschedulable"
    assert "cannot allocate all claims" in cond["message"], cond["message"]
    events = kube.items(_kube.path("", "v1", "events", namespace=ALIGNED), fieldSelector="involvedObject.name=worker-node2")
    assert any(e["reason"] == "FailedScheduling" and "cannot allocate all claims" in e["message"] for e in events), events


def test_without_alignment_the_node_without_shared_roots_gets_one_vf_of_every_rail(dra_cluster):
    kube, index = dra_cluster["kube"], _device_index(dra_cluster["slices"])
    _submit(kube, PLAIN, dra_cluster["plain"]["claim_templates"], ("node2",))
    pod, allocations = _scheduled_with_claims(kube, PLAIN, "worker-node2")
    assert pod["spec"]["nodeName"] == "node2"
    for rail in PLAN:
        (vf,) = allocations["roce-%s" % rail["name"]]
        assert (vf["request"], vf["driver"], vf["pool"]) == ("vf", SRIOV_DRIVER, "node2")
        attrs = index[(SRIOV_DRIVER, "node2", vf["device"])]
        assert attrs["k8s.cni.cncf.io/resourceName"]["string"] == "nvidia.com/roce_%s" % rail["name"]
        assert attrs[SRIOV_DRIVER + "/PFName"]["string"] == rail["pf"]


def test_rdma_verify_pod_mode_claims_through_the_templates_and_its_pods_land_one_per_node(dra_cluster):
    """rdma_verify's pod mode in DRA mode: its one template of test pods (rails as gpufabric.roce._fabric_plan_verify names
    them from the fabric plan) claims a VF of every rail through the rendered templates; kube-scheduler places one pod per node."""
    kube, index = dra_cluster["kube"], _device_index(dra_cluster["slices"])
    for t in dra_cluster["plain"]["claim_templates"]:
        if kube.get_or_none(_rc("resourceclaimtemplates", namespace=PLAIN, name=t["metadata"]["name"])) is None:
            kube.create(_rc("resourceclaimtemplates", namespace=PLAIN), t)
    plans = PlanFilters().filters()
    fabric = plans["fabric_plan"]({n: {"roce_rails": PLAN, "roce_node_index": i} for i, n in enumerate(NODES)}, list(NODES))
    nodes = [dict(n, network="", resource="")
             for n in plans["_fabric_plan_verify"](fabric, list(NODES), "roce", "nvidia.com", "nv-ipam", "")]
    pods = rdma_pods.pod_manifests(nodes, {"namespace": PLAIN, "image": "registry.invalid/perftest:never-pulled", "claims": True})
    assert len(pods) == len(NODES) and "nodeSelector" not in pods[0]["spec"]  # one template, placed by the scheduler
    for pod in pods:
        kube.create(_kube.path("", "v1", "pods", namespace=PLAIN), pod)
    placed = {}
    for pod in pods:
        live, allocations = _scheduled_with_claims(kube, PLAIN, pod["metadata"]["name"])
        placed[live["spec"]["nodeName"]] = allocations
    assert sorted(placed) == sorted(NODES)
    for node, allocations in placed.items():
        for rail in PLAN:
            (vf,) = allocations["roce-%s" % rail["name"]]
            attrs = index[(SRIOV_DRIVER, node, vf["device"])]
            assert vf["pool"] == node and attrs["k8s.cni.cncf.io/resourceName"]["string"] == "nvidia.com/roce_%s" % rail["name"]
    live = kube.items(_kube.path("", "v1", "pods", namespace=PLAIN), labelSelector="app.kubernetes.io/name=rdma-verify")
    placement = rdma_pods.pod_placement(live, pods)
    assert {p["placed_on"] for p in placement} == set(NODES) and all(p["resource"] == "roce-rail0, roce-rail1" for p in placement)

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""inventories/example-multirail (2 nodes x 8 rails) rolled out on the real control plane (issue 11).

site.yml (phases operator, sriov, verify in pod mode with rdma_verify_pod_action=schedule) in apply mode
against a control plane whose stand-in nodes carry the eight PFs of the inventory's rail plan each
(gpu-node02's rail7 on enp205s0np0, as its override says). The run must apply 16 policies and 16
networks, wait until every node state carries all eight PFs with numVfs 8 and Succeeded, see 8 VFs of
every rail's resource allocatable, apply the nodes' NCCL settings as one ConfigMap, and have
kube-scheduler place one test pod per node that requests one VF of every rail. What this does not prove: real VFs, Multus attaching eight interfaces, or
perftest over them (no container runs here; see lab/k8s/README.md).
"""

import os
import re
import shutil
import subprocess
import sys

import yaml
from k8s_helpers import REPO, chart_path, chart_version, wait_for

SITE = str(REPO / "playbooks" / "site.yml")
VENV_BIN = os.path.dirname(sys.executable)
INVENTORY = REPO / "inventories" / "example-multirail"
NAMESPACE = "nvidia-network-operator"


def _rail_pfs():
    plan = yaml.safe_load((INVENTORY / "group_vars" / "roce_nodes.yml").read_text(encoding="utf-8"))["roce_rails"]
    pfs = {"gpu-node01": [r["pf"] for r in plan], "gpu-node02": [r["pf"] for r in plan]}
    overrides = yaml.safe_load((INVENTORY / "host_vars" / "gpu-node02.yml").read_text(encoding="utf-8"))["roce_rail_overrides"]
    for i, r in enumerate(plan):
        pfs["gpu-node02"][i] = overrides.get(r["name"], {}).get("pf", r["pf"])
    return pfs


# One ConnectX-7 (15b3:1021) per rail, as the stand-in config daemon reports them before any policy.
MULTIRAIL_HARDWARE = {
    node: {"interfaces": [{"name": pf, "pciAddress": "0000:%02x:00.0" % (0x10 + 0x10 * i), "vendor": "15b3", "deviceID": "1021",
                           "totalvfs": 16, "mtu": 9000} for i, pf in enumerate(pfs)]}
    for node, pfs in _rail_pfs().items()
}


def _inventory(tmp_path, cluster):
    inv = tmp_path / "inventory"
    shutil.copytree(INVENTORY, inv)
    controller = inv / "group_vars" / "k8s_controller.yml"
    values = yaml.safe_load(controller.read_text(encoding="utf-8"))
    values.update({
        "roce_k8s_mode": "apply",
        "roce_render_dir": str(tmp_path / "render-out"),
        "rdma_verify_report_dir": str(tmp_path / "report"),
        "network_operator_chart_path": str(chart_path()), "network_operator_chart_version": chart_version(),
        "network_operator_kubeconfig": str(cluster.kubeconfig),
        "network_operator_ready_timeout": 300,
        "network_operator_poll_interval": 2,
        "sriov_networks_sync_timeout": 300,
        "sriov_networks_poll_interval": 2,
        "rdma_verify_pod_image": "registry.invalid/perftest:never-pulled",
        "rdma_verify_pod_ready_timeout": 180,
        "rdma_verify_pod_poll_interval": 1,
    })
    controller.write_text(yaml.safe_dump(values), encoding="utf-8")
    # The host phase (not run here: no node is reachable) leaves each node's NCCL settings as the fact
    # host_network_nccl_env; the inventory plays that part, in the shape gpufabric.roce.nccl_env returns.
    for i, node in enumerate(sorted(MULTIRAIL_HARDWARE)):
        with open(inv / "host_vars" / ("%s.yml" % node), "a", encoding="utf-8") as f:
            f.write(yaml.safe_dump({"host_network_nccl_env": {
                "env": {"NCCL_IB_HCA": ",".join("=mlx5_%d:1" % r for r in range(8)), "NCCL_IB_GID_INDEX": str(3 + i)},
                "rails": [], "problems": []}}))
    return inv


def _site(inv, cluster, tmp_path, *args, tags="operator,sriov,verify"):
    env = dict(
        cluster.env,
        ANSIBLE_COLLECTIONS_PATH=str(REPO / ".build" / "collections"),
        ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        PATH="%s:%s" % (VENV_BIN, cluster.env["PATH"]),
    )
    cmd = [os.path.join(VENV_BIN, "ansible-playbook"), "-i", str(inv), SITE, "--tags", tags,
           "-e", "rdma_verify_mode=pod", "-e", "rdma_verify_pod_action=schedule", *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800, check=False, cwd=str(tmp_path))  # noqa: S603
    return proc.returncode, proc.stdout + proc.stderr


def test_eight_rails_two_nodes_apply_sync_and_schedule_one_vf_of_every_rail(multirail_cluster, tmp_path):
    cluster = multirail_cluster
    inv = _inventory(tmp_path, cluster)
    rc, out = _site(inv, cluster, tmp_path)
    assert rc == 0, out[-8000:]

    kube = cluster.kube
    policies = kube.items("/apis/sriovnetwork.openshift.io/v1/namespaces/%s/sriovnetworknodepolicies" % NAMESPACE)
    mine = sorted(p["metadata"]["name"] for p in policies if p["metadata"].get("labels", {}).get("app.kubernetes.io/managed-by") == "gpufabric.roce")
    assert mine == sorted("roce-gpu-node%02d-rail%d" % (n, r) for n in (1, 2) for r in range(8))
    networks = kube.items("/apis/sriovnetwork.openshift.io/v1/namespaces/%s/sriovnetworks" % NAMESPACE)
    assert len([n for n in networks if n["metadata"]["name"].startswith("roce-gpu-node")]) == 16

    # Every node state carries all eight rails' PFs with their VFs, synced.
    for node, pfs in _rail_pfs().items():
        state = kube.get("/apis/sriovnetwork.openshift.io/v1/namespaces/%s/sriovnetworknodestates/%s" % (NAMESPACE, node))
        spec = {i["name"]: i["numVfs"] for i in state["spec"]["interfaces"]}
        assert spec == dict.fromkeys(pfs, 8), state["spec"]
        assert state["status"]["syncStatus"] == "Succeeded"
        allocatable = kube.get("/api/v1/nodes/%s" % node)["status"]["allocatable"]
        for r in range(8):
            assert allocatable.get("nvidia.com/roce_%s_rail%d" % (node.replace("-", "_"), r)) == "8", allocatable

    # Every node's NCCL settings, applied as one ConfigMap in the jobs' namespace.
    cm = kube.get("/api/v1/namespaces/default/configmaps/gpufabric-nccl")
    assert cm["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpufabric.roce"
    assert cm["data"]["nodes"].split() == ["gpu-node01", "gpu-node02"]
    assert "NCCL_IB_GID_INDEX=4" in cm["data"]["gpu-node02.env"]

    # One test pod per node, each requesting one VF of every rail, placed by kube-scheduler and Ready.
    flat = " ".join(out.split())
    for node in ("gpu-node01", "gpu-node02"):
        every_rail = ", ".join("nvidia.com/roce_%s_rail%d" % (node.replace("-", "_"), r) for r in range(8))
        assert "rdma-verify-%s: Ready on %s with 1 %s" % (node, node, every_rail) in flat, out[-6000:]


def _pods_of(kube, selector):
    return kube.items("/api/v1/namespaces/default/pods", labelSelector=selector)


def test_moving_to_one_network_and_one_nv_ipam_pool_per_rail_and_one_pod_template_on_every_node(multirail_cluster, tmp_path):
    """The documented move from per-node host-local networks (the test above left them) to nv-ipam (issue 18): check mode
    shows the whole change and changes nothing; the apply makes a CIDRPool and a SriovNetwork per rail before it prunes
    the per-node networks; then ONE pod template (a Deployment, two replicas, one per node by anti-affinity, no node
    named) lands on both nodes through the rails' shared resources."""
    cluster = multirail_cluster
    kube = cluster.kube
    inv = _inventory(tmp_path, cluster)
    before = sorted(n["metadata"]["name"] for n in kube.items("/apis/sriovnetwork.openshift.io/v1/namespaces/%s/sriovnetworks" % NAMESPACE))
    assert len(before) == 16, before  # what the host-local rollout above left

    # The move's first step (docs/inventory.md): the operator phase deploys nv-ipam, which the example leaves out for its
    # host-local IPAM (network_operator_ipam: none).
    nv_ipam = ("-e", "network_operator_ipam=nv-ipam", "-e", "sriov_networks_ipam=nv-ipam")
    rc, out = _site(inv, cluster, tmp_path, *nv_ipam, tags="operator")
    assert rc == 0, out[-8000:]
    rc, out = _site(inv, cluster, tmp_path, *nv_ipam, "--check", "--diff", tags="sriov")
    assert rc == 0, out[-8000:]
    flat = " ".join(out.split())
    assert "8 SriovNetworks and 8 nv-ipam CIDRPools for 2 nodes" in flat, out[-6000:]
    assert "Would delete 16 object(s)" in flat, out[-6000:]
    after_check = sorted(n["metadata"]["name"] for n in kube.items("/apis/sriovnetwork.openshift.io/v1/namespaces/%s/sriovnetworks" % NAMESPACE))
    assert after_check == before
    assert kube.items("/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/%s/cidrpools" % NAMESPACE) == []

    rc, out = _site(inv, cluster, tmp_path, *nv_ipam, tags="sriov,verify")
    assert rc == 0, out[-8000:]
    flat = " ".join(out.split())
    # rdma_verify's test pods are now one template asking for the rails' shared resources: kube-scheduler put one on
    # each node (pod anti-affinity), which node got which pod is its choice.
    every_rail = ", ".join("nvidia.com/roce_rail%d" % r for r in range(8))
    placed = re.findall(r"rdma-verify-[01]: Ready on (gpu-node0[12]) with 1 " + re.escape(every_rail), flat)
    assert sorted(placed) == ["gpu-node01", "gpu-node02"], out[-6000:]
    plan = yaml.safe_load((INVENTORY / "group_vars" / "roce_nodes.yml").read_text(encoding="utf-8"))["roce_rails"]
    pools = {p["metadata"]["name"]: p["spec"] for p in kube.items("/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/%s/cidrpools" % NAMESPACE)}
    assert sorted(pools) == sorted("roce-%s" % r["name"] for r in plan)
    for index, rail in enumerate(plan):
        spec = pools["roce-%s" % rail["name"]]
        assert (spec["cidr"], spec["perNodeNetworkPrefix"]) == (rail["subnet_pool"], rail["subnet_prefix"])
        # each node's block and gateway: the roce_node_index-th /24 of the pool, its last host (the VLAN gateway's address)
        base = rail["subnet_pool"].split(".")[:2]
        assert spec["staticAllocations"] == [
            {"nodeName": node, "prefix": "%s.%s.%d.0/24" % (*base, i), "gateway": "%s.%s.%d.254" % (*base, i)}
            for i, node in enumerate(("gpu-node01", "gpu-node02"))
        ], (index, spec)
    networks = {n["metadata"]["name"]: n["spec"] for n in kube.items("/apis/sriovnetwork.openshift.io/v1/namespaces/%s/sriovnetworks" % NAMESPACE)}
    assert sorted(networks) == sorted(pools)  # the 16 per-node networks are pruned, after the new ones exist
    for node in ("gpu-node01", "gpu-node02"):
        # the role waited for these: every rail's one resource, 8 VFs on each node
        allocatable = kube.get("/api/v1/nodes/%s" % node)["status"]["allocatable"]
        assert all(allocatable.get("nvidia.com/roce_rail%d" % r) == "8" for r in range(8)), allocatable

    # One pod template for every worker, as a training job has: no node named, one VF of every rail.
    resources = {"nvidia.com/roce_rail%d" % r: "1" for r in range(8)}
    template = {
        "metadata": {"labels": {"app": "one-template"},
                     "annotations": {"k8s.v1.cni.cncf.io/networks": ",".join("%s/roce-rail%d" % (NAMESPACE, r) for r in range(8))}},
        "spec": {
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "one-template"}}, "topologyKey": "kubernetes.io/hostname"}]}},
            "containers": [{"name": "worker", "image": "registry.invalid/never-pulled", "resources": {"requests": resources, "limits": resources}}],
        },
    }
    kube.create("/apis/apps/v1/namespaces/default/deployments", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "one-template"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "one-template"}}, "template": template}})
    placed = wait_for("both replicas of the one template placed on distinct nodes",
                      lambda: sorted(p["spec"].get("nodeName") or "" for p in _pods_of(kube, "app=one-template")) == ["gpu-node01", "gpu-node02"],
                      timeout=120)
    assert placed, [(p["metadata"]["name"], p["spec"].get("nodeName"), p.get("status")) for p in _pods_of(kube, "app=one-template")]

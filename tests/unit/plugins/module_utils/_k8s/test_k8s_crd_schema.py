"""Every custom resource the roles can render is validated against the openAPIV3Schema of its CRD.

CRDs come from $GPUFABRIC_CRDS_DIR (default <repo>/../shared/crds). A missing directory or a rendered
kind without a CRD FAILS the tests; nothing here is ever skipped.
"""

import copy

import pytest
from k8s_crd_schema import CrdError, load_crds, validate_object
from test_k8s_render import PF, REFERENCE_DEFAULTS, reference_hostvars

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import operator as op
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import sriov
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import sriov_pool as pool
from role_fallbacks import ncp_defaults, pool_defaults, sriov_defaults


@pytest.fixture(scope="module")
def crds():
    try:
        return load_crds()
    except CrdError as exc:
        pytest.fail(str(exc))


def _sriov(hv_mutation=None, **defaults):
    hv = reference_hostvars()
    if hv_mutation:
        hv_mutation(hv)
    out = sriov.render_sriov(list(hv), hv, sriov_defaults(dict(REFERENCE_DEFAULTS, **defaults)))
    return out["policies"] + out["networks"]


def _partitioned(hv):
    hv["node1"].update(
        sriov_networks_pf_names=[PF + "#0-5"],
        sriov_networks_extra_policies=[{"name": "dpdk", "pf_names": [PF + "#6-7"], "resource_name": "dpdk_node1", "device_type": "vfio-pci", "is_rdma": False}],
        sriov_networks_min_tx_rate=100,
        sriov_networks_max_tx_rate=25000,
        sriov_networks_vlan_qos=5,
        sriov_networks_node_selector={"kubernetes.io/hostname": "node1", "node-role.kubernetes.io/worker": ""},
    )


# Every variant of every renderer: (id, objects)
VARIANTS = [
    ("sriov-reference-host-local", _sriov),
    ("sriov-partitioned-extra-policy", lambda: _sriov(_partitioned)),
    ("sriov-whereabouts", lambda: _sriov(sriov_networks_ipam="whereabouts", sriov_networks_whereabouts_range="10.255.0.0/16")),
    ("sriov-nv-ipam", lambda: _sriov(sriov_networks_ipam="nv-ipam", sriov_networks_nv_ipam_pool="roce-pool")),
    ("ncp-default", lambda: [op.render_nic_cluster_policy(ncp_defaults({}))]),
    (
        "ncp-everything-airgapped",
        lambda: [
            op.render_nic_cluster_policy(
                ncp_defaults({
                    "network_operator_ofed_driver": True,
                    # 26.7.1's DOCA driver tag is not in the release table: a user deploying the driver gives it.
                    "network_operator_images": {"ofed_driver": {"version": "doca3.5.0-26.07-0.7.1.0-0"}},
                    "network_operator_rdma_shared_device_plugin": True,
                    "network_operator_nv_ipam_enable_webhook": True,
                    "network_operator_airgap": {"registry": "registry.local:5000/mirror", "image_pull_secrets": ["mirror-pull"]},
                }))
        ],
    ),
    ("ncp-whereabouts", lambda: [op.render_nic_cluster_policy(ncp_defaults({"network_operator_ipam": "whereabouts"}))]),
    (
        "ncp-no-ipam-flattened-mirror",
        lambda: [op.render_nic_cluster_policy(ncp_defaults(
            {"network_operator_ipam": "none", "network_operator_airgap": {"registry": "m.local", "preserve_path": False}}))],
    ),
]


def _pools(mutation=None, **defaults):
    hv = reference_hostvars()
    if mutation:
        mutation(hv)
    nodes = sriov.render_sriov(list(hv), hv, sriov_defaults(REFERENCE_DEFAULTS))["nodes"]
    return pool.render_pool_configs(nodes, hv, pool_defaults(dict(REFERENCE_DEFAULTS, **defaults)))["pool_configs"]


def _two_pools(hv):
    first = sorted(hv)[0]
    hv[first].update(sriov_networks_pool_name="rack-a", sriov_networks_pool_max_unavailable=3)


VARIANTS += [
    ("pool-config-default-percentage", _pools),
    ("pool-config-integer", lambda: _pools(sriov_networks_pool_max_unavailable=2)),
    ("pool-config-two-pools", lambda: _pools(_two_pools)),
]


@pytest.mark.parametrize("make", [m for _i, m in VARIANTS], ids=[i for i, _m in VARIANTS])
def test_every_rendered_custom_resource_matches_its_crd_schema(crds, make):
    objects = make()
    assert objects
    for obj in objects:
        try:
            problems = validate_object(obj, crds)
        except CrdError as exc:  # a rendered kind without a schema is a failure, not a skip
            pytest.fail(str(exc))
        assert problems == [], "\n".join(problems)


def test_all_rendered_kinds_are_covered(crds):
    kinds = {(o["apiVersion"], o["kind"]) for _i, make in VARIANTS for o in make()}
    assert kinds == {
        ("sriovnetwork.openshift.io/v1", "SriovNetworkNodePolicy"),
        ("sriovnetwork.openshift.io/v1", "SriovNetwork"),
        ("sriovnetwork.openshift.io/v1", "SriovNetworkPoolConfig"),
        ("mellanox.com/v1alpha1", "NicClusterPolicy"),
    }
    assert all(k in crds for k in kinds)


def test_kind_without_schema_fails_instead_of_skipping(crds):
    # whereabouts' IPPool: the kind name that nv-ipam also uses, in a group with no CRD in the directory, so
    # the lookup must go by group/version and kind, not by kind alone.
    ippool = {"apiVersion": "whereabouts.cni.cncf.io/v1alpha1", "kind": "IPPool", "metadata": {"name": "roce-pool", "namespace": "kube-system"}}
    assert ("whereabouts.cni.cncf.io/v1alpha1", "IPPool") not in crds
    with pytest.raises(CrdError, match="no CRD schema for whereabouts.cni.cncf.io/v1alpha1 IPPool"):
        validate_object(ippool, crds)


def test_schema_check_is_strict(crds):
    """Guard against a vacuous validator: typos, bad enums and wrong types are caught."""
    policy = _sriov()[0]
    bad = copy.deepcopy(policy)
    bad["spec"]["numVF"] = 8  # typo: unknown field
    bad["spec"]["deviceType"] = "netdev"
    bad["spec"]["priority"] = "99"
    problems = validate_object(bad, crds)
    assert any("numVF" in p for p in problems), problems
    assert any("deviceType" in p for p in problems), problems
    assert any("priority" in p for p in problems), problems
    network = copy.deepcopy(_sriov()[2])
    network["spec"]["trust"] = True
    del network["metadata"]["namespace"]
    problems = validate_object(network, crds)
    assert any("trust" in p for p in problems) and any("metadata.namespace" in p for p in problems), problems
    ncp = op.render_nic_cluster_policy(ncp_defaults({}))
    ncp["metadata"]["namespace"] = "x"
    ncp["spec"]["secondaryNetwork"]["ipamPlugin"] = {"image": "whereabouts", "repository": "ghcr.io/k8snetworkplumbingwg", "version": "v0.7.0"}
    problems = validate_object(ncp, crds)
    assert any("ipamPlugin" in p for p in problems) and any("cluster-scoped" in p for p in problems), problems


def test_missing_crd_dir_fails_with_a_clear_message(monkeypatch, tmp_path):
    missing = tmp_path / "nope"
    monkeypatch.setenv("GPUFABRIC_CRDS_DIR", str(missing))
    with pytest.raises(CrdError) as info:
        load_crds()
    msg = str(info.value)
    assert str(missing) in msg and "GPUFABRIC_CRDS_DIR" in msg and "shared/crds" in msg

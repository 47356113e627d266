"""The SR-IOV validator agrees with the sriov-network-operator admission webhook.

WEBHOOK_CASES is our own test data, derived from the upstream webhook's unit tests and code
(sriov-network-operator v1.6.0 ``pkg/webhook/validate_test.go`` case names, ``validate.go`` code paths) and
from the CRD schemas. Each case is an inventory change to the reference two-node cluster and a verdict:

- ``accept``: upstream admits the object, so it must render (``check`` looks at what was rendered);
- ``refuse``: upstream refuses it, so it must be refused here, naming the host, field and value, with a fix;
- ``stricter``: upstream admits it but this collection refuses it on purpose; each names the rule in
  docs/inventory.md, "Rules stricter than the operator's webhook";
- ``cluster``: upstream decides from the live node state (totalvfs, the PF's MTU, node labels), which the
  inventory does not hold: it renders, and the operator's webhook stays the judge.
"""

import ipaddress
import json
import os
import re
import tarfile

import pytest
from test_k8s_render import PF, REFERENCE_DEFAULTS, reference_hostvars

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import common, sriov
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import operator as op
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import sriov_checks as checks
from role_fallbacks import helm_defaults, sriov_defaults

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", "..", ".."))
SRIOV_CAPABLE = {"feature.node.kubernetes.io/network-sriov.capable": "true"}


# A second PF, InfiniBand: the one this collection leaves to an extra policy.
IB_PF = "ibp1s0f0"


def _set(host, **kv):
    def mutate(hv, _defaults):
        hv[host].update(kv)

    return mutate


def _all(*mutations):
    def mutate(hv, defaults):
        for m in mutations:
            m(hv, defaults)

    return mutate


def _drop(host, key):
    def mutate(hv, _defaults):
        hv[host].pop(key, None)

    return mutate


def _extra(host, pf_names, **kv):
    return _set(host, sriov_networks_extra_policies=[dict({"name": "p0", "pf_names": pf_names, "resource_name": "p0_" + host}, **kv)])


def _policy(out, name):
    return next(p["spec"] for p in out["policies"] if p["metadata"]["name"] == name)


def _vendor(name, expected):
    return lambda out: _policy(out, name)["nicSelector"].get("vendor") == expected


# (id, derived from, verdict, mutation(hv, defaults), accept/cluster: check(out) | refuse/stricter: (host, field, value, problem[, docs rule]))
WEBHOOK_CASES = [
    # ------------------------------------------------------------------ admitted upstream: rendered
    (
        "intel-vendor",
        "TestStaticValidateSriovNetworkNodePolicyWithValidVendorDevice",
        "accept",
        _set("node1", sriov_networks_nic_vendor="8086"),
        _vendor("roce-node1", "8086"),
    ),
    (
        "intel-63-vfs",
        "TestValidatePolicyForNodeStateWithValidPolicy",
        "accept",
        _set("node1", sriov_networks_nic_vendor="8086", roce_num_vfs=63),
        lambda out: _policy(out, "roce-node1")["numVfs"] == 63,
    ),
    (
        "vendor-upper-case",
        "validate.go IsSupportedVendor (exact string compare)",
        "accept",
        _set("node1", sriov_networks_nic_vendor="15B3"),
        _vendor("roce-node1", "15b3"),
    ),
    (
        "vendor-0x-prefix",
        "validate.go IsSupportedVendor (exact string compare)",
        "accept",
        _set("node1", sriov_networks_nic_vendor="0x15b3"),
        _vendor("roce-node1", "15b3"),
    ),
    (
        "vendor-yaml-integer",
        "validate.go IsSupportedVendor (exact string compare)",
        "accept",
        _set("node1", sriov_networks_nic_vendor=8086),
        _vendor("roce-node1", "8086"),
    ),
    (
        "pf-name-without-vendor",
        "TestValidatePolicyForNodeStateWithValidPfName",
        "accept",
        _set("node1", sriov_networks_nic_vendor=""),
        _vendor("roce-node1", None),
    ),
    (
        "externally-managed-disjoint",
        "TestValidatePolicyForNodePolicyWithOutExternallyManageConflict",
        "accept",
        _all(_set("node1", roce_vf_mode="host", sriov_networks_pf_names=[PF + "#0-2"]), _extra("node1", [PF + "#3-4"])),
        lambda out: _policy(out, "roce-node1-p0").get("externallyManaged") is True,
    ),
    (
        "vfio-pci-ib-without-rdma",
        "TestStaticValidateSriovNetworkNodePolicyWithConflictIsRdmaAndDeviceType (its admitted side)",
        "accept",
        # An InfiniBand PF is an extra policy's: the main policy's resource gets a RoCE SriovNetwork.
        _extra("node2", [IB_PF], link_type="ib", device_type="vfio-pci", is_rdma=False),
        lambda out: _policy(out, "roce-node2-p0")["deviceType"] == "vfio-pci" and _policy(out, "roce-node2-p0")["linkType"] == "ib",
    ),
    (
        "disjoint-label-selectors",
        "validate.go validatePolicyForNodeStateAndPolicy (np.Selected(node): one value per label)",
        "accept",
        _all(_set("node1", sriov_networks_node_selector={"rack": "a"}), _set("node2", sriov_networks_node_selector={"rack": "b"})),
        lambda out: _policy(out, "roce-node2")["nodeSelector"] == {"rack": "b"},
    ),
    (
        "hostname-and-label-selector",
        "TestValidatePolicyForNodeStateWithValidPolicy (nodeSelector with a label)",
        "accept",
        _set("node1", sriov_networks_node_selector={"kubernetes.io/hostname": "node1", "node-role.kubernetes.io/worker": ""}),
        lambda out: len(out["policies"]) == 2,
    ),
    (
        "shared-selector-disjoint-ranges",
        "TestValidatePolicyForNodePolicyWithOutExternallyManageConflict (#0-2 next to #3-4 under one selector)",
        "accept",
        _all(
            _set("node1", sriov_networks_node_selector=SRIOV_CAPABLE, sriov_networks_pf_names=[PF + "#0-2"]),
            _set("node2", sriov_networks_node_selector=SRIOV_CAPABLE, sriov_networks_pf_names=[PF + "#3-4"]),
        ),
        lambda out: _policy(out, "roce-node2")["nicSelector"]["pfNames"] == [PF + "#3-4"],
    ),
    (
        "mellanox-128-vfs",
        "validate.go MlxMaxVFs (the limit itself)",
        "accept",
        _set("node1", roce_num_vfs=128),
        lambda out: _policy(out, "roce-node1")["numVfs"] == 128,
    ),
    # ------------------------------------------------------------------ refused upstream: refused here
    (
        "vendor-not-supported",
        "TestStaticValidateSriovNetworkNodePolicyWithInvalidVendor",
        "refuse",
        _set("node1", sriov_networks_nic_vendor="8087"),
        ("node1", "sriov_networks_nic_vendor", "8087", "is not in the sriov-network-operator's supported NIC list"),
    ),
    (
        "vendor-not-hex",
        "validate.go IsSupportedVendor",
        "refuse",
        _set("node1", sriov_networks_nic_vendor="mlx5"),
        ("node1", "sriov_networks_nic_vendor", "mlx5", "not a PCI vendor ID"),
    ),
    (
        "vendor-unquoted-0x",
        "validate.go IsSupportedVendor (YAML reads 0x15b3 as 5555)",
        "refuse",
        _set("node1", sriov_networks_nic_vendor=0x15B3),
        ("node1", "sriov_networks_nic_vendor", 5555, "YAML reads an unquoted ID as a number"),
    ),
    (
        "vfio-pci-with-rdma",
        "TestStaticValidateSriovNetworkNodePolicyWithConflictIsRdmaAndDeviceType",
        "refuse",
        _set("node1", sriov_networks_device_type="vfio-pci"),
        ("node1", "sriov_networks_device_type", "vfio-pci", "conflicts with isRdma: true"),
    ),
    (
        "empty-nic-selector",
        "TestStaticValidateSriovNetworkNodePolicyWithInvalidNicSelector",
        "refuse",
        _all(_drop("node1", "roce_pf"), _set("node1", sriov_networks_nic_vendor="")),
        ("node1", "roce_pf", [], "no PF to select"),
    ),
    (
        "zero-vfs",
        "validate.go validatePolicyForNodeState (numVfs 0 is not allowed)",
        "refuse",
        _set("node1", roce_num_vfs=0),
        ("node1", "roce_num_vfs", 0, "at least 1"),
    ),
    (
        "mellanox-129-vfs",
        "validate.go validatePolicyForNodeState (MlxMaxVFs)",
        "refuse",
        _set("node1", roce_num_vfs=129),
        ("node1", "roce_num_vfs", 129, "Mellanox maximum of 128"),
    ),
    (
        "129-vfs-without-vendor",
        "validate.go validatePolicyForNodeState (MlxMaxVFs, by the NIC's vendor: a ConnectX)",
        "refuse",
        _set("node1", roce_num_vfs=129, sriov_networks_nic_vendor=""),
        ("node1", "roce_num_vfs", 129, "applied without a vendor too"),
    ),
    (
        "overlapped-vf-range",
        "TestValidatePolicyForNodePolicyWithOverlappedVfRange",
        "refuse",
        _all(
            _set("node1", sriov_networks_node_selector=SRIOV_CAPABLE, sriov_networks_pf_names=[PF + "#0-2"]),
            _set("node2", sriov_networks_node_selector=SRIOV_CAPABLE, sriov_networks_pf_names=[PF + "#2-2"]),
        ),
        ("node2", "sriov_networks_pf_names", PF + "#2-2", "overlaps VFs 0-2 of policy roce-node1 (host node1)"),
    ),
    (
        "externally-managed-conflict",
        "TestValidatePolicyForNodePolicyWithExternallyManageConflict",
        "refuse",
        _all(
            _set("node1", sriov_networks_node_selector=SRIOV_CAPABLE, sriov_networks_pf_names=[PF + "#0-2"], roce_vf_mode="host"),
            _set("node2", sriov_networks_node_selector=SRIOV_CAPABLE, sriov_networks_pf_names=[PF + "#3-4"]),
        ),
        ("node2", "roce_vf_mode", "operator", "disagree on externallyManaged"),
    ),
    (
        "superset-selector",
        "validate.go validatePolicyForNodeStateAndPolicy (node1 is SR-IOV capable, as NFD labels it)",
        "refuse",
        _set("node2", sriov_networks_node_selector=SRIOV_CAPABLE),
        ("node2", "roce_pf", PF, "of a node both may select"),
    ),
    (
        "resource-name-trailing-newline",
        "validate.go staticValidate ^[a-zA-Z0-9_]+$ (Go's $ is the end of the text)",
        "refuse",
        _set("node1", sriov_networks_resource_name="roce_node1\n"),
        ("node1", "sriov_networks_resource_name", "roce_node1\n", "resourceName must match"),
    ),
    (
        "resource-name-dash",
        "validate.go staticValidate ^[a-zA-Z0-9_]+$",
        "refuse",
        _set("node1", sriov_networks_resource_name="roce-node1"),
        ("node1", "sriov_networks_resource_name", "roce-node1", "resourceName must match"),
    ),
    (
        "vf-range-trailing-newline",
        "validate.go staticValidate (strconv.Atoi of the range end)",
        "refuse",
        _set("node1", sriov_networks_pf_names=[PF + "#0-7\n"]),
        ("node1", "sriov_networks_pf_names", PF + "#0-7\n", "invalid VF range syntax"),
    ),
    (
        "vf-range-non-ascii-digits",
        "validate.go staticValidate (strconv.Atoi takes ASCII digits only)",
        "refuse",
        _set("node1", sriov_networks_pf_names=[PF + "#\u0660-\u0663"]),
        ("node1", "sriov_networks_pf_names", PF + "#\u0660-\u0663", "invalid VF range syntax"),
    ),
    (
        "vf-range-two-separators",
        "validate.go staticValidate (incorrect separator character usage)",
        "refuse",
        _set("node1", sriov_networks_pf_names=[PF + "#0-3#4"]),
        ("node1", "sriov_networks_pf_names", PF + "#0-3#4", "invalid VF range syntax"),
    ),
    (
        "vf-range-reversed",
        "validate.go staticValidate (end range shall not be smaller than start range)",
        "refuse",
        _set("node1", sriov_networks_pf_names=[PF + "#5-2"]),
        ("node1", "sriov_networks_pf_names", PF + "#5-2", "starts after it ends"),
    ),
    (
        "vf-range-end-at-numvfs",
        "validate.go staticValidate (end range exceeds the maximum VF index)",
        "refuse",
        _set("node1", sriov_networks_pf_names=[PF + "#0-8"]),
        ("node1", "sriov_networks_pf_names", PF + "#0-8", "is not below numVfs 8"),
    ),
    (
        "empty-pf-name-before-range",
        "validate.go validateNicModel (no interface is named '')",
        "refuse",
        _set("node1", sriov_networks_pf_names=["#0-7"]),
        ("node1", "sriov_networks_pf_names", "#0-7", "invalid VF range syntax"),
    ),
    (
        "priority-100",
        "CRD SriovNetworkNodePolicy priority maximum 99",
        "refuse",
        _set("node1", sriov_networks_priority=100),
        ("node1", "sriov_networks_priority", 100, "between 0 and 99"),
    ),
    ("mtu-0", "CRD SriovNetworkNodePolicy mtu minimum 1", "refuse", _set("node1", roce_mtu=0), ("node1", "roce_mtu", 0, "between 68 and 9978")),
    (
        "link-type-unknown",
        "CRD SriovNetworkNodePolicy linkType enum",
        "refuse",
        _set("node1", sriov_networks_link_type="roce"),
        ("node1", "sriov_networks_link_type", "roce", "linkType"),
    ),
    (
        "device-type-unknown",
        "CRD SriovNetworkNodePolicy deviceType enum",
        "refuse",
        _set("node1", sriov_networks_device_type="netdev"),
        ("node1", "sriov_networks_device_type", "netdev", "deviceType"),
    ),
    (
        "node-selector-integer",
        "CRD SriovNetworkNodePolicy nodeSelector (string values)",
        "refuse",
        _set("node1", sriov_networks_node_selector={"kubernetes.io/hostname": "node1", "rack": 7}),
        ("node1", "sriov_networks_node_selector", {"rack": 7}, "values must be strings"),
    ),
    # ------------------------------------------------------------------ admitted upstream, refused here on purpose
    (
        "whole-pf-next-to-range",
        "validate.go validatePfNames (ParseVfRange gives -1..-1 without '#', so no overlap is seen)",
        "stricter",
        _extra("node1", [PF + "#4-7"]),
        ("node1", "sriov_networks_extra_policies[0].pf_names", PF + "#4-7", "overlaps VFs 0-7 of policy roce-node1", "A whole PF counts as VFs 0..numVfs-1"),
    ),
    (
        "vf-range-signed-number",
        "validate.go staticValidate (strconv.Atoi accepts a sign)",
        "stricter",
        _set("node1", sriov_networks_pf_names=[PF + "#+1-3"]),
        ("node1", "sriov_networks_pf_names", PF + "#+1-3", "invalid VF range syntax", "plain digits"),
    ),
    (
        "ib-netdevice-without-rdma",
        "validate.go staticValidate (no rule on linkType and isRdma)",
        "stricter",
        _extra("node2", [IB_PF], link_type="ib", is_rdma=False),
        (
            "node2",
            "sriov_networks_extra_policies[0].is_rdma",
            False,
            "requires isRdma: true with deviceType 'netdevice'",
            "InfiniBand netdevice VFs need isRdma",
        ),
    ),
    (
        "partitions-different-numvfs",
        "api/v1 helper.go mergeConfigs (the highest numVfs wins silently)",
        "stricter",
        _all(_set("node1", sriov_networks_pf_names=[PF + "#0-3"]), _extra("node1", [PF + "#4-7"], num_vfs=16)),
        ("node1", "sriov_networks_extra_policies[0].num_vfs", 16, "ask for different numVfs", "same numVfs"),
    ),
    (
        "mtu-9979",
        "CRD SriovNetworkNodePolicy mtu (no maximum)",
        "stricter",
        _set("node1", roce_mtu=9979),
        ("node1", "roce_mtu", 9979, "between 68 and 9978", "MTU between 68 and 9978"),
    ),
    (
        "mtu-67",
        "CRD SriovNetworkNodePolicy mtu minimum 1",
        "stricter",
        _set("node1", roce_mtu=67),
        ("node1", "roce_mtu", 67, "between 68 and 9978", "MTU between 68 and 9978"),
    ),
    (
        "vlan-4095",
        "CRD SriovNetwork vlan maximum 4096",
        "stricter",
        _set("node1", roce_vlan_id=4095),
        ("node1", "roce_vlan_id", 4095, "between 0 and 4094", "VLAN at most 4094"),
    ),
    (
        "min-above-max-tx-rate",
        "CRD SriovNetwork minTxRate (described, not enforced)",
        "stricter",
        _set("node1", sriov_networks_min_tx_rate=2000, sriov_networks_max_tx_rate=1000),
        ("node1", "sriov_networks_min_tx_rate", 2000, "above maxTxRate", "minTxRate at most maxTxRate"),
    ),
    (
        "network-namespace-not-a-name",
        "CRD SriovNetwork networkNamespace (any string)",
        "stricter",
        _set("node1", sriov_networks_network_namespace="Bad_NS"),
        ("node1", "sriov_networks_network_namespace", "Bad_NS", "not a valid namespace name", "Namespace names"),
    ),
    (
        "shared-resource-name-host-local",
        "validate.go (policies may share a resourceName)",
        "stricter",
        _all(_set("node1", sriov_networks_resource_name="roce"), _set("node2", sriov_networks_resource_name="roce")),
        ("node2", "sriov_networks_resource_name", "roce", "already used by host node1", "Shared resource names"),
    ),
    (
        "label-selector-may-reach-another-node",
        "validate.go validatePolicyForNodeStateAndPolicy (refused only if node1 carries rack=a)",
        "stricter",
        _set("node2", sriov_networks_node_selector={"rack": "a"}),
        ("node2", "roce_pf", PF, "of a node both may select", "without kubernetes.io/hostname"),
    ),
    # ------------------------------------------------------------------ decided by the live node state upstream
    (
        "intel-65-vfs",
        "TestValidatePolicyForNodeStateWithInvalidNumVfsPolicy (totalvfs 64 in the node state)",
        "cluster",
        _set("node1", sriov_networks_nic_vendor="8086", roce_num_vfs=65),
        lambda out: _policy(out, "roce-node1")["numVfs"] == 65,
    ),
    (
        "externally-managed-more-vfs",
        "TestValidatePolicyForNodeStateWithInvalidNumVfsExternallyCreated (the PF's numVfs in the node state)",
        "cluster",
        _set("node1", roce_vf_mode="host", roce_num_vfs=16),
        lambda out: _policy(out, "roce-node1").get("externallyManaged") is True,
    ),
    (
        "externally-managed-mtu",
        "TestValidatePolicyForNodeStateWithExternallyManageAndDifferentMTU (the PF's MTU in the node state)",
        "cluster",
        _set("node1", roce_vf_mode="host", roce_mtu=9000),
        lambda out: _policy(out, "roce-node1")["mtu"] == 9000,
    ),
    (
        "externally-managed-link-type",
        "TestValidatePolicyForNodeStateWithExternallyManageAndDifferentLinkType (the PF's link type in the node state)",
        "cluster",
        _all(_set("node1", roce_vf_mode="host"), _extra("node1", [IB_PF], link_type="ib")),
        lambda out: _policy(out, "roce-node1-p0")["linkType"] == "ib" and _policy(out, "roce-node1-p0")["externallyManaged"] is True,
    ),
    (
        "selector-matches-no-node",
        "validate.go dynamicValidateSriovNetworkNodePolicy (no matched node is selected)",
        "cluster",
        _set("node1", sriov_networks_node_selector={"kubernetes.io/hostname": "node9"}),
        lambda out: _policy(out, "roce-node1")["nodeSelector"] == {"kubernetes.io/hostname": "node9"},
    ),
]


def _render(mutation):
    hv, defaults = reference_hostvars(), {}
    mutation(hv, defaults)
    return sriov.render_sriov(list(hv), hv, sriov_defaults(dict(REFERENCE_DEFAULTS, **defaults)))


def _ids(verdicts):
    return [c for c in WEBHOOK_CASES if c[2] in verdicts]


@pytest.mark.parametrize("case", _ids(("accept", "cluster")), ids=[c[0] for c in _ids(("accept", "cluster"))])
def test_admitted_upstream_is_rendered(case):
    _id, _derived, _verdict, mutation, check = case
    out = _render(mutation)
    assert check(out), json.dumps(out["policies"], indent=1)


@pytest.mark.parametrize("case", _ids(("refuse", "stricter")), ids=[c[0] for c in _ids(("refuse", "stricter"))])
def test_refused_upstream_or_on_purpose_is_refused_with_host_field_value_and_fix(case):
    _id, _derived, _verdict, mutation, expect = case
    host, field, value, problem = expect[:4]
    with pytest.raises(common.RenderValidationError) as info:
        _render(mutation)
    errors = info.value.errors
    match = [e for e in errors if (e.host, e.field, e.value) == (host, field, value)]
    assert match, "no error for %s %s=%r in:\n%s" % (host, field, value, info.value)
    err = match[0]
    assert str(err).startswith("%s: %s=%s: " % (host, field, json.dumps(value, sort_keys=True, ensure_ascii=False)))
    assert problem in err.problem, str(err)
    assert str(err).endswith(". Fix: " + err.fix) and err.fix.strip()


def _stricter_section():
    with open(os.path.join(REPO, "docs", "inventory.md"), encoding="utf-8") as fh:
        text = fh.read()
    start = text.index("## Rules stricter than the operator's webhook")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


@pytest.mark.parametrize("case", _ids(("stricter",)), ids=[c[0] for c in _ids(("stricter",))])
def test_every_stricter_rule_is_documented_with_its_reason(case):
    assert case[4][4] in _stricter_section()


def test_the_table_covers_every_verdict_and_names_its_source():
    verdicts = [c[2] for c in WEBHOOK_CASES]
    assert {v: verdicts.count(v) for v in set(verdicts)} == {"accept": 12, "refuse": 24, "stricter": 11, "cluster": 5}
    assert len({c[0] for c in WEBHOOK_CASES}) == len(WEBHOOK_CASES)
    assert all(c[1].startswith(("Test", "validate.go", "CRD", "api/v1")) for c in WEBHOOK_CASES)


# ------------------------------------------------------------------ the supported NIC list is the chart's


def _chart():
    shared = os.environ.get("GPUFABRIC_SHARED_DIR") or os.path.join(REPO, "..", "shared")
    path = os.environ.get("GPUFABRIC_NETWORK_OPERATOR_CHART") or os.path.join(shared, "charts", "network-operator-26.4.1.tgz")
    if not os.path.isfile(path):
        pytest.fail(
            "network-operator chart %s not found: set GPUFABRIC_NETWORK_OPERATOR_CHART to network-operator-26.4.1.tgz "
            "or GPUFABRIC_SHARED_DIR to the directory holding charts/network-operator-26.4.1.tgz" % path
        )
    return path


def test_supported_vendors_are_those_of_the_charts_supported_nic_ids():
    with tarfile.open(_chart()) as tar:
        text = tar.extractfile("network-operator/charts/sriov-network-operator/templates/configmap.yaml").read().decode()
    assert "name: supported-nic-ids" in text
    vendors = set(re.findall(r'^\s+[\w.-]+: "([0-9a-f]{4}) [0-9a-f]{4} [0-9a-f]{4}"$', text, re.M))
    assert len(vendors) >= 5
    assert vendors == set(checks.SUPPORTED_NIC_VENDORS)


# ------------------------------------------------------------------ anchors: no '$' before a newline, ASCII digits only


@pytest.mark.parametrize(
    "regex,good",
    [
        (common.DNS_LABEL_RE, "roce"),
        (common.DNS_SUBDOMAIN_RE, "nvidia.com"),
        (common.LABEL_KEY_RE, "kubernetes.io/hostname"),
        (common.LABEL_VALUE_RE, "node1"),
        (op.IMAGE_NAME_RE, "multus-cni"),
        (op.REPOSITORY_RE, "nvcr.io/nvidia/mellanox"),
        (op.REGISTRY_RE, "registry.local:5000/mirror"),
    ],
)
def test_name_patterns_refuse_a_trailing_newline(regex, good):
    assert regex.match(good)
    assert not regex.match(good + "\n")


def test_integers_and_versions_take_ascii_digits_only():
    errs = common._Errors()
    assert common._as_int(errs, "h", "f", "12") == 12
    assert common._as_int(errs, "h", "f", "\u0661\u0662") is None
    # Shown as written (issue 20), not as \u0661\u0662.
    assert str(errs.items[0]) == 'h: f="\u0661\u0662": must be an integer. Fix: set f to a whole number'
    with pytest.raises(common.RenderValidationError):
        op.render_chart_reference(helm_defaults({"network_operator_chart_version": "26.4.\u0661"}))
    with pytest.raises(common.RenderValidationError):
        op.render_chart_reference(helm_defaults({"network_operator_chart_version": "26.4.1\n"}))


def test_pf_range_parsing_is_anchored_and_ascii():
    assert sriov.parse_pf_name(PF + "#0-7") == (PF, 0, 7)
    assert sriov.parse_pf_name(PF + "#0-7\n") == (PF + "#0-7\n", None, None)
    assert sriov.parse_pf_name(PF + "#\u0660-\u0663") == (PF + "#\u0660-\u0663", None, None)
    assert not checks.RESOURCE_NAME_RE.fullmatch("roce\n")
    assert not checks.NETDEV_RE.fullmatch(PF + "\n")


# ------------------------------------------------------------------ fleet scale: grouped, not all pairs


def test_overlap_check_compares_only_selectors_that_may_meet(monkeypatch):
    """1,000 nodes x 8 PFs with hostname selectors, plus two nodes selecting by a label: the selector pairs
    compared grow as nodes x label selectors, not as nodes squared (counted, not timed)."""
    calls = []
    real = checks._compatible
    monkeypatch.setattr(checks, "_compatible", lambda a, b: calls.append(1) or real(a, b))
    subnets = ipaddress.ip_network("10.128.0.0/16").subnets(new_prefix=30)
    hv = {}
    for i in range(1000):
        net = next(subnets)
        hv["n%04d" % i] = {
            "roce_pf": "pf0",
            "sriov_networks_pf_names": ["pf%d#0-3" % r for r in range(8)],
            "roce_pod_subnet": str(net),
            "roce_pod_gateway": str(net.network_address + 2),
        }
    for host, rack in (("n0000", "a"), ("n0001", "b")):
        hv[host].update(sriov_networks_node_selector={"rack": rack}, sriov_networks_pf_names=["pf%d#4-7" % r for r in range(8)])
    out = sriov.render_sriov(list(hv), hv, sriov_defaults({}))
    assert len(out["policies"]) == 1000
    assert len(calls) == 8 * (998 * 2 + 1)  # per PF: 998 hostname selectors x 2 label selectors, and rack a x rack b

    calls.clear()
    hv["n0002"]["sriov_networks_pf_names"] = ["pf%d#0-4" % r for r in range(8)]  # now meets rack a/b's 4-7
    with pytest.raises(common.RenderValidationError) as info:
        sriov.render_sriov(list(hv), hv, sriov_defaults({}))
    # Reported on the later-starting range of each pair: rack a's and rack b's 4-7, on each of the 8 PFs.
    assert sorted((e.host, e.field) for e in info.value.errors) == [("n0000", "sriov_networks_pf_names")] * 8 + [("n0001", "sriov_networks_pf_names")] * 8
    assert all("policy roce-n0002 (host n0002)" in e.problem for e in info.value.errors)

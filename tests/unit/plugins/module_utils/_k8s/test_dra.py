# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DRA mode (module_utils/_k8s/dra.py): a ResourceClaimTemplate per rail, the GPU on the VF's PCIe root by
matchAttribute, the operator's feature gate, and every bad value refused with its fix before anything is rendered.
The real kube-scheduler allocating these claims: tests/k8s/test_dra.py."""

import json
import re

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import RenderValidationError
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.operator import render_helm_values
from planned_render import render_sriov
from k8s_crd_schema import load_crds, validate_object
from role_fallbacks import helm_defaults, sriov_defaults

PLAN = [{"name": "rail%d" % i, "pf": "enp%ds0np0" % (10 + i), "vlan": 101 + i, "subnet_pool": "10.%d.0.0/16" % (101 + i)} for i in range(4)]
DRA = {"sriov_networks_ipam": "nv-ipam", "sriov_networks_resource_api": "dra", "sriov_networks_network_namespace": "training"}
# A PCI address (domain:bus:device.function, or bus:device.function) or a PCIe root name (pci<domain>:<bus>).
PCI_LITERAL = re.compile(r"\b([0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\b|\bpci[0-9a-f]{4}:[0-9a-f]{2}\b", re.IGNORECASE)
HEX_RUN = re.compile(r"\b(0x)?[0-9a-f]{2,}[:.][0-9a-f]{1,}\b", re.IGNORECASE)


def inventory(n=3):
    hosts = ["gpu%d" % i for i in range(n)]
    return hosts, {h: {"roce_rails": PLAN, "roce_node_index": i} for i, h in enumerate(hosts)}


def render(**given):
    hosts, hv = inventory()
    return render_sriov(hosts, hv, sriov_defaults(dict(DRA, **given)))


def errors(given, hosts_hv=None):
    hosts, hv = hosts_hv or inventory()
    with pytest.raises(RenderValidationError) as err:
        render_sriov(hosts, hv, sriov_defaults(given))
    return err.value.errors


def test_one_claim_template_per_rail_named_and_placed_as_the_rails_network():
    out = render()
    templates = out["claim_templates"]
    assert [(t["metadata"]["name"], t["metadata"]["namespace"]) for t in templates] == [("roce-rail%d" % i, "training") for i in range(4)]
    assert [n["metadata"]["name"] for n in out["networks"]] == [t["metadata"]["name"] for t in templates]
    for i, t in enumerate(templates):
        assert t["apiVersion"] == "resource.k8s.io/v1" and t["kind"] == "ResourceClaimTemplate"
        devices = t["spec"]["spec"]["devices"]
        (vf,) = devices["requests"]
        assert vf["name"] == "vf"
        assert vf["exactly"]["deviceClassName"] == "sriovnetwork.k8snetworkplumbingwg.io" and vf["exactly"]["count"] == 1
        (sel,) = vf["exactly"]["selectors"]
        # The attribute the operator's DeviceAttributes sets: <resource prefix>/<the rail's resourceName>.
        assert sel["cel"]["expression"] == (
            'device.attributes["k8s.cni.cncf.io"].resourceName == "nvidia.com/roce_rail%d" '
            '&& device.attributes["sriovnetwork.k8snetworkplumbingwg.io"].rdmaCapable' % i)
        assert "constraints" not in devices
        (config,) = devices["config"]
        assert config == {"requests": ["vf"], "opaque": {"driver": "sriovnetwork.k8snetworkplumbingwg.io", "parameters": {
            "apiVersion": "sriovnetwork.k8snetworkplumbingwg.io/v1alpha1", "kind": "VfConfig", "ifName": "net%d" % (i + 1),
            "netAttachDefName": "roce-rail%d" % i, "netAttachDefNamespace": "training"}}}


def test_the_claim_asks_for_the_resource_the_rails_policies_offer():
    out = render()
    offered = {r for node in out["nodes"] for r in node["resources"]}
    asked = {re.search(r'resourceName == "([^"]+)"', t["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]["cel"]["expression"]).group(1)
             for t in out["claim_templates"]}
    assert asked == offered == {"nvidia.com/roce_rail%d" % i for i in range(4)}


def test_align_gpu_adds_a_gpu_on_the_same_pcie_root_by_match_attribute():
    templates = render(sriov_networks_dra_align_gpu=True)["claim_templates"]
    assert len(templates) == 4
    for t in templates:
        devices = t["spec"]["spec"]["devices"]
        assert [r["name"] for r in devices["requests"]] == ["vf", "gpu"]
        assert devices["requests"][1]["exactly"] == {"deviceClassName": "gpu.nvidia.com", "count": 1}
        assert devices["constraints"] == [{"requests": ["vf", "gpu"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]
        assert devices["config"][0]["requests"] == ["vf"]  # the driver's VfConfig is not the GPU driver's
    other = render(sriov_networks_dra_align_gpu=True, sriov_networks_dra_gpu_device_class="gpu.example.com")["claim_templates"]
    assert {t["spec"]["spec"]["devices"]["requests"][1]["exactly"]["deviceClassName"] for t in other} == {"gpu.example.com"}


@pytest.mark.parametrize("align", [False, True])
def test_no_literal_pci_address_in_any_claim(align):
    hosts, hv = inventory()
    for h in hosts:  # the nodes' PCI addresses are known to the inventory: none may reach a claim
        hv[h]["roce_rail_overrides"] = {r["name"]: {"pci_address": "0000:%02x:00.0" % (0x1a + i)} for i, r in enumerate(PLAN)}
    out = render_sriov(hosts, hv, sriov_defaults(dict(DRA, sriov_networks_dra_align_gpu=align)))
    text = json.dumps(out["claim_templates"])
    assert len(out["claim_templates"]) == 4
    assert PCI_LITERAL.findall(text) == []
    assert PCI_LITERAL.search(json.dumps(hv)) is not None  # the pattern finds the inventory's own addresses
    assert HEX_RUN.findall(text) == []  # nor anything shaped like one (bus:device, domain:bus)
    assert "pciBusID" not in text and "pciAddress" not in text


def test_device_plugin_mode_renders_no_claim_and_keeps_every_other_object():
    hosts, hv = inventory()
    plugin = render_sriov(hosts, hv, sriov_defaults({"sriov_networks_ipam": "nv-ipam"}))
    with_dra = render_sriov(hosts, hv, sriov_defaults(dict(DRA, sriov_networks_network_namespace="default")))
    assert plugin["claim_templates"] == []
    assert {k: v for k, v in plugin.items() if k != "claim_templates"} == {k: v for k, v in with_dra.items() if k != "claim_templates"}


def test_one_rail_with_whereabouts_gives_one_claim_template():
    hosts = ["n1", "n2"]
    hv = {"n1": {"roce_pf": "enp1s0np0"}, "n2": {"roce_pf": "enp1s0np0"}}
    out = render_sriov(hosts, hv, sriov_defaults({"sriov_networks_ipam": "whereabouts", "sriov_networks_whereabouts_range": "10.9.0.0/16",
                                                  "sriov_networks_resource_api": "dra"}))
    (t,) = out["claim_templates"]
    (vf,) = t["spec"]["spec"]["devices"]["requests"]
    assert t["metadata"]["name"] == "roce" and '== "nvidia.com/roce" &&' in vf["exactly"]["selectors"][0]["cel"]["expression"]


def _only(errs, field):
    assert [(e.host, e.field) for e in errs] == [("(cluster)", field)], errs
    return errs[0]


@pytest.mark.parametrize(("field", "value", "fixes"), [
    ("sriov_networks_resource_api", "DRA", [{"sriov_networks_resource_api": "device-plugin"}, {"sriov_networks_resource_api": "dra"}]),
    ("sriov_networks_resource_api", None, [{"sriov_networks_resource_api": "device-plugin"}, {"sriov_networks_resource_api": "dra"}]),
    ("sriov_networks_dra_align_gpu", "yes", [{"sriov_networks_dra_align_gpu": False}, {"sriov_networks_dra_align_gpu": True}]),
    ("sriov_networks_dra_gpu_device_class", "GPU_class", [{"sriov_networks_dra_gpu_device_class": "gpu.nvidia.com"}]),
    ("sriov_networks_dra_gpu_device_class", "", [{"sriov_networks_dra_gpu_device_class": "gpu.nvidia.com"}]),
])
def test_a_bad_value_is_refused_with_field_value_and_a_working_fix(field, value, fixes):
    given = dict(DRA, **{field: value})
    if value is None:
        given[field] = "  "  # None is "not given" (the role's default); a blank string is what a bad group_vars line gives
        value = "  "
    err = _only(errors(given), field)
    assert err.value == value and "Fix:" in str(err) and field in str(err)
    assert [alt["(cluster)"] for alt in err.fix_vars] == fixes
    for alt in err.fix_vars:  # each fix, applied, renders
        render_sriov(*inventory(), sriov_defaults(dict(given, **alt["(cluster)"])))


def test_dra_with_host_local_ipam_is_refused_with_both_ways_out():
    given = {"sriov_networks_resource_api": "dra"}
    err = _only(errors(given), "sriov_networks_resource_api")
    assert "host-local" in str(err) and "nv-ipam" in err.fix
    for alt in err.fix_vars:
        out = render_sriov(*inventory(), sriov_defaults(dict(given, **alt["(cluster)"])))
        assert len(out["claim_templates"]) == (4 if alt["(cluster)"].get("sriov_networks_ipam") == "nv-ipam" else 0)


def test_align_gpu_without_dra_is_refused_as_it_would_align_nothing():
    given = {"sriov_networks_ipam": "nv-ipam", "sriov_networks_dra_align_gpu": True}
    err = _only(errors(given), "sriov_networks_dra_align_gpu")
    assert err.value is True and "device-plugin" in str(err)
    results = [render_sriov(*inventory(), sriov_defaults(dict(given, **alt["(cluster)"]))) for alt in err.fix_vars]
    assert [len(r["claim_templates"]) for r in results] == [4, 0]


def test_a_bad_dra_value_is_reported_with_the_inventorys_other_problems():
    hosts, hv = inventory()
    hv["gpu1"]["roce_rail_overrides"] = {"rail2": {"num_vfs": 300}}
    errs = errors(dict(DRA, sriov_networks_resource_api="claims"), (hosts, hv))
    assert {e.field for e in errs} == {"sriov_networks_resource_api", "roce_rails[rail2].num_vfs"}


def test_helm_values_turn_the_operators_feature_gate_on_in_dra_mode_only():
    on = render_helm_values(helm_defaults({"sriov_networks_resource_api": "dra"}))
    assert on["sriov-network-operator"] == {"operator": {"resourcePrefix": "nvidia.com"},
                                            "sriovOperatorConfig": {"featureGates": {"dynamicResourceAllocation": True}}}
    assert "sriovOperatorConfig" not in render_helm_values(helm_defaults({"sriov_networks_resource_api": "device-plugin"}))["sriov-network-operator"]
    assert "sriovOperatorConfig" not in render_helm_values(helm_defaults({}))["sriov-network-operator"]


def test_the_gate_as_the_chart_writes_it_and_every_object_of_dra_mode_validate_against_the_26_7_crds():
    crds = load_crds(line="26.7")
    gates = render_helm_values(helm_defaults({"sriov_networks_resource_api": "dra"}))["sriov-network-operator"]["sriovOperatorConfig"]["featureGates"]
    # The sub-chart's template (templates/sriovoperatorconfig.yaml) writes the value map as spec.featureGates.
    config = {"apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovOperatorConfig",
              "metadata": {"name": "default", "namespace": "nvidia-network-operator"}, "spec": {"featureGates": gates}}
    assert validate_object(config, crds) == []
    out = render(sriov_networks_dra_align_gpu=True)
    for obj in out["policies"] + out["networks"] + out["ip_pools"]:
        assert validate_object(obj, crds) == []


@pytest.mark.parametrize("version", ["26.4.1", "26.1.2"])
def test_dra_mode_on_a_chart_before_26_7_is_refused_with_the_release_that_has_it(version):
    with pytest.raises(RenderValidationError) as info:
        render_helm_values(helm_defaults({"sriov_networks_resource_api": "dra", "network_operator_chart_version": version}))
    (err,) = info.value.errors
    assert (err.host, err.field, err.value) == ("(cluster)", "sriov_networks_resource_api", "dra")
    assert "chart %s has no DRA driver" % version in err.problem
    assert "26.7.1" in err.fix and "sriov_networks_resource_api: device-plugin" in err.fix
    # the fix, applied, renders
    assert render_helm_values(helm_defaults({"sriov_networks_resource_api": "dra", "network_operator_chart_version": "26.7.1"}))


# --- GPU alignment refused on ConnectX-8 Data Direct nodes (the nodes' preflight_data_direct) -----------------------------

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.dra import data_direct_refusal  # noqa: E402

PAIRED = {"pf": "ens1np0", "rdma_device": "mlx5_0", "pci_address": "0000:03:00.0", "root_complex": "pci0000:00",
          "data_direct": {"device": "0000:82:00.0", "root_complex": "pci0000:80", "root_differs": True, "pairing": "mlx5dv",
                          "candidates": [], "reason": None}}
UNKNOWN = {"pf": "ens2np0", "rdma_device": "mlx5_1", "pci_address": "0000:05:00.0", "root_complex": "pci0000:00",
           "data_direct": {"device": None, "root_complex": None, "root_differs": None, "pairing": "unknown",
                           "candidates": [{"device": "0000:82:00.0", "root_complex": "pci0000:80"}],
                           "reason": "libmlx5.so.1 has no mlx5dv_get_data_direct_sysfs_path (rdma-core before 55)"}}
FIX_HEAD = "set sriov_networks_dra_align_gpu: false (each rail's claim then takes a VF only), or pin the claim by hand"


def test_a_data_direct_node_is_refused_naming_host_field_value_the_nics_roots_and_the_fix():
    got = data_direct_refusal({"gb1": [PAIRED], "gb2": [], "gb3": [UNKNOWN]}, ["gb1", "gb2", "gb3", "gb4"])
    assert got["refused"] == ["gb1", "gb3"] and got["unchecked"] == ["gb4"]
    head, first, second = got["message"].split("\n")
    assert head == ("GPU alignment by resource.kubernetes.io/pcieRoot refused on 2 node(s) whose rail NICs are or may be "
                    "ConnectX-8 Data Direct; nothing was written or applied:")
    assert first.startswith(
        "  - gb1: sriov_networks_dra_align_gpu=true: rail NIC mlx5_0 (PF ens1np0, 0000:03:00.0 on pcieRoot pci0000:00) is "
        "ConnectX-8 Data Direct: its DMA goes through 0000:82:00.0 on pcieRoot pci0000:80 "
        "(ansible_facts.rdma.gpu_nic_topology.nics.mlx5_0.data_direct); so the GPU that pairs with its VFs is not on the "
        "resource.kubernetes.io/pcieRoot they publish")
    assert first.endswith(". Fix: %s: a ResourceClaimTemplate of your own whose GPU request selects the GPU on the Data Direct "
                          "function's root (pci0000:80), for the pods of these nodes" % FIX_HEAD)
    # unknown pairing: refused too, with the candidates and why the pairing is unknown
    assert second.startswith("  - gb3: sriov_networks_dra_align_gpu=true: rail NIC mlx5_1 (PF ens2np0, 0000:05:00.0 on pcieRoot "
                             "pci0000:00) may be ConnectX-8 Data Direct: the node has the Data Direct function(s) 0000:82:00.0 on "
                             "pci0000:80, and which one serves this NIC is unknown (libmlx5.so.1 has no "
                             "mlx5dv_get_data_direct_sysfs_path (rdma-core before 55))")
    assert "Fix: " + FIX_HEAD in second and "(see ansible_facts.rdma.data_direct)" in second


def test_nodes_with_the_same_problem_are_one_line_and_nothing_is_refused_without_findings():
    got = data_direct_refusal({"gb%d" % i: [PAIRED] for i in range(6)}, ["gb%d" % i for i in range(6)])
    assert got["refused"] == ["gb%d" % i for i in range(6)] and got["unchecked"] == []
    lines = got["message"].split("\n")
    assert len(lines) == 2 and lines[1].startswith("  - gb0 (and 5 other nodes: gb1, gb2, gb3, ...): sriov_networks_dra_align_gpu=true:")
    assert data_direct_refusal({"gb1": [], "gb2": []}, ["gb1", "gb2"]) == {"message": None, "refused": [], "unchecked": []}
    assert data_direct_refusal({}, ["gb1"]) == {"message": None, "refused": [], "unchecked": ["gb1"]}

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The QoS model the operator way (issue 19): NicConfigurationTemplates rendered from the fabric table, valid against
the NIC Configuration Operator's CRD (network-operator-v26.4.1), and every inventory that would make two templates
select one NIC refused before anything is applied, naming host, field, value and fix.

The CRD's x-kubernetes-validations (CEL) are not evaluated here (k8s_crd_schema has no CEL); they concern
spectrumXOptimized only, which is never rendered, and tests/k8s/test_nic_config.py has the real API server check them."""

import copy
import json
import os

import pytest
import yaml
from k8s_crd_schema import CrdError, crds_dir, load_crds, validate_object
from test_k8s_nv_ipam import inventory

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import operator as op
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import RenderValidationError
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nic_config import pci_from_ifname, render_nic_config_templates
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table
from role_fallbacks import ncp_defaults, nic_defaults

EXAMPLES = "nic-configuration-operator-network-operator-v26.4.1/examples"
SHARED = {"roce_nic_config_node_selector": {"example.com/gpu-pool": "pool-a"}}
NEW_RAIL_KEYS = ("nic_type", "pci_address")


@pytest.fixture(scope="module")
def crds():
    try:
        return load_crds()
    except CrdError as exc:
        pytest.fail(str(exc))


def with_qos(name, **extra):
    hosts, hv = inventory(name)
    for v in hv.values():
        v.update(roce_qos={}, roce_qos_via="operator", roce_nic_type="1021", **extra)
    return hosts, hv


def table_of(hosts, hv):
    """The fabric table. The rail keys nic_type and pci_address are read from hostvars by the renderer only; they are taken
    out here until _fabric.rails.RAIL_KEYS / OVERRIDE_KEYS know them (the rail model refuses unknown keys)."""
    plain = copy.deepcopy(hv)
    for v in plain.values():
        for rail in v.get("roce_rails") or []:
            for k in NEW_RAIL_KEYS:
                rail.pop(k, None)
        for over in (v.get("roce_rail_overrides") or {}).values():
            for k in NEW_RAIL_KEYS:
                over.pop(k, None)
        v["roce_rail_overrides"] = {r: o for r, o in (v.get("roce_rail_overrides") or {}).items() if o}
    return fabric_table(plain, hosts)


def render(hosts, hv, cfg=None):
    return render_nic_config_templates(table_of(hosts, hv), hv, hosts, nic_defaults(cfg))


def problems(hosts, hv, cfg=None):
    with pytest.raises(RenderValidationError) as err:
        render(hosts, hv, cfg)
    return err.value.errors


def test_one_rail_example_renders_one_template_per_node_selecting_its_pf(crds):
    hosts, hv = with_qos("example")
    out = render(hosts, hv)
    assert [t["metadata"]["name"] for t in out["templates"]] == ["roce-node1-1021", "roce-node2-1021"]
    spec = out["templates"][0]["spec"]
    assert spec["nodeSelector"] == {"kubernetes.io/hostname": "node1"}
    assert spec["nicSelector"] == {"nicType": "1021", "pciAddresses": ["0000:9d:00.0"]}  # enp157s0np0: bus 157 = 0x9d
    assert spec["template"]["numVfs"] == 8 and spec["template"]["linkType"] == "Ethernet"
    assert spec["template"]["roceOptimized"] == {"enabled": True, "qos": {"trust": "dscp", "pfc": "0,0,0,1,0,0,0,0", "tos": 106}}
    # ECN on priority 3 only (mask 8, roceOptimized writes 255) and CNPs on DSCP 48 (it writes 4); priority 6 is its own
    assert spec["template"]["rawNvConfig"] == [
        {"name": "ROCE_CC_PRIO_MASK_P1", "value": "8"},
        {"name": "ROCE_CC_PRIO_MASK_P2", "value": "8"},
        {"name": "CNP_DSCP_P1", "value": "48"},
        {"name": "CNP_DSCP_P2", "value": "48"},
    ]
    for t in out["templates"]:
        assert t["metadata"]["namespace"] == "nvidia-network-operator"
        assert t["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "gpufabric.roce"}
        assert validate_object(t, crds) == []
    assert [(d["node_name"], d["pci_address"], d["template"]) for d in out["devices"]] == [
        ("node1", "0000:9d:00.0", "roce-node1-1021"),
        ("node2", "0000:9d:00.0", "roce-node2-1021"),
    ]


def test_eight_rail_example_per_node_and_shared_selector(crds):
    hosts, hv = with_qos("example-multirail")
    out = render(hosts, hv)
    assert [t["metadata"]["name"] for t in out["templates"]] == ["roce-gpu-node01-1021", "roce-gpu-node02-1021"]
    node1, node2 = (t["spec"]["nicSelector"]["pciAddresses"] for t in out["templates"])
    assert len(node1) == 8 and "0000:cc:00.0" in node1 and "0000:cd:00.0" in node2  # gpu-node02's rail7 is enp205s0np0
    assert len(out["devices"]) == 16
    shared = render(hosts, hv, SHARED)
    (tpl,) = shared["templates"]
    assert tpl["metadata"]["name"] == "roce-1021"
    assert tpl["spec"]["nodeSelector"] == {"example.com/gpu-pool": "pool-a"}
    assert len(tpl["spec"]["nicSelector"]["pciAddresses"]) == 9  # eight rails plus gpu-node02's own rail7 address
    for t in out["templates"] + shared["templates"]:
        assert validate_object(t, crds) == []


def test_a_per_node_override_gets_its_own_template_without_renaming_the_others(crds):
    hosts, hv = with_qos("example-multirail")
    before = render(hosts, hv)
    hv["gpu-node02"]["roce_rail_overrides"]["rail3"] = {"qos": {"tos": 98}}
    after = render(hosts, hv)
    names = [t["metadata"]["name"] for t in after["templates"]]
    assert names == ["roce-gpu-node01-1021", "roce-gpu-node02-1021-rail0", "roce-gpu-node02-1021-rail3"]
    assert after["templates"][0] == before["templates"][0]
    rail3 = after["templates"][2]["spec"]
    assert rail3["nicSelector"]["pciAddresses"] == ["0000:54:00.0"] and rail3["template"]["roceOptimized"]["qos"]["tos"] == 98
    assert "0000:54:00.0" not in after["templates"][1]["spec"]["nicSelector"]["pciAddresses"]
    for t in after["templates"]:
        assert validate_object(t, crds) == []


def test_raw_nvconfig_only_where_the_model_differs_from_roce_optimized():
    hosts, hv = with_qos("example")
    for v in hv.values():
        v["roce_qos"] = {"ecn_priorities": list(range(8)), "cnp_dscp": 4, "cnp_priority": 5, "pfc_priorities": [0, 1, 2, 3, 4, 5, 6, 7]}
    tpl = render(hosts, hv)["templates"][0]["spec"]["template"]
    assert tpl["rawNvConfig"] == [{"name": "CNP_802P_PRIO_P1", "value": "5"}, {"name": "CNP_802P_PRIO_P2", "value": "5"}]
    assert tpl["roceOptimized"]["qos"]["pfc"] == "1,1,1,1,1,1,1,1"
    for v in hv.values():
        v["roce_qos"] = {"ecn_priorities": list(range(8)), "cnp_dscp": 4, "trust": "pcp", "tos": 96, "pfc_priorities": [3]}
    tpl = render(hosts, hv)["templates"][0]["spec"]["template"]
    assert "rawNvConfig" not in tpl and tpl["roceOptimized"]["qos"] == {"trust": "pcp", "pfc": "0,0,0,1,0,0,0,0", "tos": 96}


def test_qos_off_or_applied_the_host_way_renders_nothing_and_rails_without_qos_are_left_alone():
    hosts, hv = inventory("example")
    assert render(hosts, hv) == {"templates": [], "devices": []}
    hosts, hv = with_qos("example")
    hv["node2"]["roce_qos_via"] = "host"
    assert [d["node_name"] for d in render(hosts, hv)["devices"]] == ["node1"]
    hv["node2"]["roce_qos_via"] = "nic-operator"
    assert [(e.host, e.field, e.value) for e in problems(hosts, hv)] == [("node2", "roce_qos_via", "nic-operator")]
    hosts, hv = with_qos("example-multirail")
    for v in hv.values():
        v["roce_rails"] = copy.deepcopy(v["roce_rails"])
        v["roce_rails"][7]["qos"] = {"enabled": False}
    out = render(hosts, hv)
    assert all("0000:cc:00.0" not in t["spec"]["nicSelector"]["pciAddresses"] for t in out["templates"])
    assert len(out["devices"]) == 14


def test_pci_addresses_from_predictable_names():
    assert pci_from_ifname("enp12s0np0") == "0000:0c:00.0"
    assert pci_from_ifname("enp157s0f1np1") == "0000:9d:00.1"
    assert pci_from_ifname("enP2p3s0f0") == "0002:03:00.0"
    for name in ("ens1f0np0", "eth0", "enp256s0", "enp1s32", "ib0", None):
        assert pci_from_ifname(name) is None


def _one(errors):
    assert len(errors) == 1, [str(e) for e in errors]
    return errors[0]


@pytest.mark.parametrize(
    ("mutate", "host", "field", "value"),
    [
        (lambda hv: hv["node2"].pop("roce_nic_type"), "node2", "roce_nic_type", None),
        (lambda hv: hv["node1"].update(roce_nic_type="0x1021"), "node1", "roce_nic_type", "0x1021"),
        (lambda hv: hv["node1"].update(roce_nic_type=101), "node1", "roce_nic_type", 101),
        (lambda hv: hv["node1"].update(roce_pf="ens1f0np0"), "node1", "roce_pf_pci_address", None),
        (lambda hv: hv["node1"].update(roce_pf_pci_address="9d:00.0"), "node1", "roce_pf_pci_address", "9d:00.0"),
        (lambda hv: hv["node2"].update(roce_qos={"pfc_priorities": [], "pause_frames": True, "ecn_priorities": []}),
         "node2", "roce_qos.pause_frames", True),
    ],
)
def test_bad_nic_settings_are_refused_with_host_field_value_and_fix(mutate, host, field, value):
    hosts, hv = with_qos("example")
    mutate(hv)
    err = _one(problems(hosts, hv))
    assert (err.host, err.field, err.value) == (host, field, value)
    assert err.fix


def test_one_rail_nic_type_spelled_in_capitals_or_as_a_yaml_integer_is_normalised():
    hosts, hv = with_qos("example", roce_pf_pci_address="0000:9D:00.0")
    hv["node1"]["roce_nic_type"], hv["node2"]["roce_nic_type"] = "A2DC", 1021
    out = render(hosts, hv)
    assert [t["spec"]["nicSelector"] for t in out["templates"]] == [
        {"nicType": "a2dc", "pciAddresses": ["0000:9d:00.0"]},
        {"nicType": "1021", "pciAddresses": ["0000:9d:00.0"]},
    ]


def test_a_rail_qos_that_differs_per_node_is_refused_with_a_shared_selector():
    hosts, hv = with_qos("example-multirail")
    hv["gpu-node02"]["roce_rail_overrides"]["rail3"] = {"qos": {"tos": 98}}
    err = _one(problems(hosts, hv, SHARED))
    assert (err.host, err.field) == ("gpu-node02", "roce_rail_overrides.rail3.qos")
    assert err.value["tos"] == 98
    assert "0000:54:00.0" in err.problem and "gpu-node01" in err.problem
    assert "roce_nic_config_node_selector: {}" in err.fix and "remove roce_rail_overrides.rail3.qos" in err.fix
    # the fix offered works: per-node templates
    assert len(render(hosts, hv)["templates"]) == 3


def test_a_rail_num_vfs_that_differs_per_node_is_refused_with_a_shared_selector():
    hosts, hv = with_qos("example-multirail")
    hv["gpu-node02"]["roce_rail_overrides"]["rail0"] = {"num_vfs": 4}
    err = _one(problems(hosts, hv, SHARED))
    assert (err.host, err.field, err.value) == ("gpu-node02", "roce_rail_overrides.rail0.num_vfs", 4)


def test_a_per_node_difference_at_another_pci_address_is_expressible_with_a_shared_selector(crds):
    hosts, hv = with_qos("example-multirail")
    hv["gpu-node02"]["roce_rail_overrides"]["rail7"] = {"pf": "enp205s0np0", "qos": {"tos": 98}}
    out = render(hosts, hv, SHARED)
    assert [t["spec"]["nicSelector"]["pciAddresses"] for t in out["templates"] if t["spec"]["template"]["roceOptimized"]["qos"]["tos"] == 98] == [
        ["0000:cd:00.0"]
    ]
    for t in out["templates"]:
        assert validate_object(t, crds) == []


def test_two_ports_of_one_nic_with_different_qos_are_refused():
    hosts, hv = with_qos("example-multirail")
    for v in hv.values():
        v["roce_rails"] = copy.deepcopy(v["roce_rails"])
        v["roce_rails"][1].update(pf="enp12s0f1np1", qos={"tos": 98})  # rail1 on port 2 of rail0's NIC
    errs = problems(hosts, hv)
    assert [(e.host, e.field) for e in errs] == [("gpu-node01", "roce_rails[rail1].qos"), ("gpu-node02", "roce_rails[rail1].qos")]
    assert "same NIC (0000:0c:00)" in errs[0].problem


def test_two_rails_on_one_pci_address_and_two_types_on_one_nic_are_refused():
    hosts, hv = with_qos("example-multirail")
    hv["gpu-node01"]["roce_rail_overrides"] = {"rail1": {"pci_address": "0000:0c:00.0"}, "rail2": {"pci_address": "0000:0c:00.1", "nic_type": "101d"}}
    errs = problems(hosts, hv)
    assert [(e.host, e.field, e.value) for e in errs] == [
        ("gpu-node01", "roce_rail_overrides.rail1.pci_address", "0000:0c:00.0"),
        ("gpu-node01", "roce_rail_overrides.rail2.nic_type", "101d"),
    ]


@pytest.mark.parametrize("selector", [["a"], {"bad key!": "x"}, {"pool": True}])
def test_a_bad_node_selector_is_refused(selector):
    hosts, hv = with_qos("example")
    err = _one(problems(hosts, hv, {"roce_nic_config_node_selector": selector}))
    assert (err.host, err.field) == ("(cluster)", "roce_nic_config_node_selector")


def test_names_are_dns_labels_within_63_characters_and_deterministic():
    hosts, hv = with_qos("example-multirail")
    long_names = {h: "gpu-%s-%s.rack-17.datacenter-west.example.com" % (h, "x" * 20) for h in hosts}
    for h in hosts:
        hv[h]["roce_node_name"] = long_names[h]
    hv["gpu-node02"]["roce_rail_overrides"]["rail3"] = {"qos": {"tos": 98}}
    first = render(hosts, hv)
    names = [t["metadata"]["name"] for t in first["templates"]]
    assert len(set(names)) == 3 and all(len(n) <= 63 and n.replace("-", "").isalnum() and n == n.lower() for n in names)
    shuffled = {h: dict(reversed(list(hv[h].items()))) for h in reversed(hosts)}
    again = render(hosts, shuffled)
    assert yaml.safe_dump(again, sort_keys=True) == yaml.safe_dump(first, sort_keys=True)


def _example(name):
    path = os.path.join(crds_dir(), EXAMPLES, name)
    if not os.path.isfile(path):
        pytest.fail("upstream example %s is missing (CRD directory %s)" % (path, crds_dir()))
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def test_the_validator_passes_the_fixed_upstream_example_and_fails_the_original(crds):
    assert validate_object(_example("example-nicconfigurationtemplate-connectx6dx.fixed.yaml"), crds) == []
    bad = validate_object(_example("example-nicconfigurationtemplate-connectx6dx.yaml"), crds)
    assert len(bad) == 1 and "spec/nicSelector/pciAddresses/1" in bad[0] and "\u201c0000:04:00.0\u201d" in bad[0]


def test_the_validator_is_strict_about_the_template_fields(crds):
    hosts, hv = with_qos("example")
    tpl = render(hosts, hv)["templates"][0]
    for mutate in (
        lambda t: t["spec"]["template"]["roceOptimized"]["qos"].update(pfc="0,0,0,1"),
        lambda t: t["spec"]["template"].update(linkType="eth"),
        lambda t: t["spec"]["nicSelector"].pop("nicType"),
        lambda t: t["spec"]["template"]["roceOptimized"]["qos"].update(ecn="0,0,0,1,0,0,0,0"),
    ):
        broken = json.loads(json.dumps(tpl))
        mutate(broken)
        assert validate_object(broken, crds), broken


def test_the_nic_cluster_policy_deploys_the_nic_configuration_operator_when_asked(crds):
    assert "nicConfigurationOperator" not in op.render_nic_cluster_policy(ncp_defaults({}))["spec"]
    ncp = op.render_nic_cluster_policy(ncp_defaults({"network_operator_nic_configuration_operator": True}))
    assert ncp["spec"]["nicConfigurationOperator"] == {
        "operator": {"image": "nic-configuration-operator", "repository": "nvcr.io/nvidia/mellanox", "version": "network-operator-v26.7.1"},
        "configurationDaemon": {
            "image": "nic-configuration-operator-daemon",
            "repository": "nvcr.io/nvidia/mellanox",
            "version": "network-operator-v26.7.1",
        },
        "logLevel": "info",
    }
    assert validate_object(ncp, crds) == []
    mirrored = op.render_nic_cluster_policy(
        ncp_defaults({
            "network_operator_nic_configuration_operator": True,
            "network_operator_nic_configuration_log_level": "debug",
            "network_operator_chart_version": "26.1.2",
            "network_operator_images": {"nic_configuration_daemon": {"version": "v1.3.2"}},
            "network_operator_airgap": {"registry": "registry.local:5000/mirror", "image_pull_secrets": ["mirror-pull"]},
        }))["spec"]["nicConfigurationOperator"]
    assert mirrored["operator"] == {
        "image": "nic-configuration-operator",
        "repository": "registry.local:5000/mirror/nvidia/mellanox",
        "version": "network-operator-v26.1.2",
        "imagePullSecrets": ["mirror-pull"],
    }
    assert mirrored["configurationDaemon"]["version"] == "v1.3.2" and mirrored["logLevel"] == "debug"


@pytest.mark.parametrize(
    ("cfg", "field"),
    [
        ({"network_operator_nic_configuration_operator": "yes"}, "network_operator_nic_configuration_operator"),
        ({"network_operator_nic_configuration_operator": True, "network_operator_nic_configuration_log_level": "trace"},
         "network_operator_nic_configuration_log_level"),
        ({"network_operator_nic_configuration_operator": True, "network_operator_chart_version": "27.1.0",
          "network_operator_images": {c: {"version": "v1"} for c in ("multus", "cni_plugins", "nv_ipam", "nic_configuration_operator")}},
         "network_operator_chart_version"),
    ],
)
def test_bad_nic_configuration_operator_settings_are_refused(cfg, field):
    with pytest.raises(RenderValidationError) as err:
        op.render_nic_cluster_policy(ncp_defaults(cfg))
    assert [e.field for e in err.value.errors] == [field]
    if field == "network_operator_chart_version":
        assert "network_operator_images.nic_configuration_daemon.version" in err.value.errors[0].fix

"""The filter plugin wrapper: hostvars extraction, error conversion, YAML output."""

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.filter.fabric_plan import FilterModule as PlanFilters
from ansible_collections.gpufabric.roce.plugins.filter.k8s_render import FilterModule
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table

FILTERS = FilterModule().filters()
PF = "enp157s0np0"


class FakeHostVars(dict):
    """Mimics Ansible's HostVars: indexing by host gives a mapping that raises KeyError for unset vars."""


def hostvars():
    return FakeHostVars(
        node1={"roce_pf": PF, "roce_pod_subnet": "10.255.0.0/30", "roce_pod_gateway": "10.255.0.2", "ansible_host": "192.0.2.1"},
        node2={"roce_pf": PF, "roce_pod_subnet": "10.255.0.4/30", "roce_pod_gateway": "10.255.0.6"},
        localhost={"roce_k8s_mode": "render"},
    )


def test_all_filters_are_exposed():
    assert set(FILTERS) == {
        "sriov_manifests",
        "_sriov_validate",
        "_sriov_pool_configs",
        "_dra_data_direct",
        "_sriov_pool_overlaps",
        "_nic_cluster_policy",
        "_nic_node_policies",
        "network_operator_helm_values",
        "_network_operator_gitops_roots",
        "_network_operator_chart_reference",
        "_k8s_yaml_documents",
        "_ncp_unready_components",
        "_deployments_unavailable",
        "_sriov_node_states_pending",
        "_sriov_node_states_failed",
        "_k8s_managed_orphans",
        "_k8s_fabric_teardown",
        "_sriov_drain_plan",
        "_k8s_fabric_ownership",
        "_network_operator_flux",
        "_network_operator_argocd",
        "_k8s_kustomization",
        "_allocatable_mismatches",
        "_nic_config_templates",
    }


def test_sriov_manifests_renders_all_nodes_in_one_call():
    out = FILTERS["sriov_manifests"](hostvars(), ["node1", "node2"], {"roce_num_vfs": 8})
    assert [p["metadata"]["name"] for p in out["policies"]] == ["roce-node1", "roce-node2"]
    assert [n["spec"]["resourceName"] for n in out["networks"]] == ["roce_node1", "roce_node2"]


def test_sriov_manifests_raises_filter_error_with_every_problem():
    hv = hostvars()
    hv["node1"]["roce_vlan_id"] = 5000
    hv["node2"]["sriov_networks_trust"] = True
    with pytest.raises(AnsibleFilterError) as info:
        FILTERS["sriov_manifests"](hv, ["node1", "node2"], {})
    msg = str(info.value)
    assert "2 problems found; nothing was rendered or applied" in msg
    assert "node1: roce_vlan_id=5000: must be between 0 and 4094" in msg
    assert "node2: sriov_networks_trust=true: must be the string 'on' or 'off'" in msg


def test_sriov_validate_returns_messages():
    hv = hostvars()
    assert FILTERS["_sriov_validate"](hv, ["node1", "node2"], {}) == []
    hv["node2"]["roce_pod_gateway"] = "10.255.0.9"
    msgs = FILTERS["_sriov_validate"](hv, ["node1", "node2"], {})
    assert msgs == [
        'node2: roce_pod_gateway="10.255.0.9": gateway is outside the node\'s pod subnet 10.255.0.4/30. '
        "Fix: pick a host address inside 10.255.0.4/30 (the address vlan_gateway puts on <roce_pf>.<roce_vlan_id>)"
    ]


def test_network_operator_filters_raise_filter_errors():
    with pytest.raises(AnsibleFilterError, match="network_operator_ipam"):
        FILTERS["_nic_cluster_policy"]({"network_operator_ipam": "bogus"})
    assert FILTERS["network_operator_helm_values"]({})["sriovNetworkOperator"] == {"enabled": True}
    assert FILTERS["_network_operator_chart_reference"]({})["version"] == "26.7.1"


def test_nic_node_policies_reads_the_groups_from_the_nodes_variables():
    hv = {"gpu1": {"network_operator_node_group": "h100", "network_operator_node_group_selector": {"pool": "h100"}},
          "gpu2": {"network_operator_node_group": "b200", "network_operator_node_group_selector": {"pool": "b200"}}}
    cfg = {"network_operator_node_policies": True, "network_operator_ofed_driver": True, "network_operator_chart_version": "26.4.1"}
    out = FILTERS["_nic_node_policies"](cfg, hv, ["gpu1", "gpu2"])
    assert [(p["metadata"]["name"], p["spec"]["nodeSelector"]) for p in out["nic_node_policies"]] == [("b200", {"pool": "b200"}), ("h100", {"pool": "h100"})]
    assert "ofedDriver" not in out["nic_cluster_policy"]["spec"]
    # Off (the default), the nodes' variables are not read and the NicClusterPolicy keeps every component.
    off = FILTERS["_nic_node_policies"](dict(cfg, network_operator_node_policies=False), {"gpu1": {"network_operator_node_group": "BAD"}}, ["gpu1"])
    assert off["nic_node_policies"] == [] and "ofedDriver" in off["nic_cluster_policy"]["spec"]
    with pytest.raises(AnsibleFilterError, match="gpu1: network_operator_node_group="):
        FILTERS["_nic_node_policies"](cfg, {"gpu1": {"network_operator_node_group": "BAD"}}, ["gpu1"])


def test_yaml_documents_round_trip():
    out = FILTERS["sriov_manifests"](hostvars(), ["node1", "node2"], {})
    text = FILTERS["_k8s_yaml_documents"](out["networks"])
    assert text.startswith("---\n")
    docs = list(yaml.safe_load_all(text))
    assert docs == out["networks"]
    assert docs[0]["spec"]["trust"] == "on"  # stays a string, not a YAML 1.1 boolean
    assert "trust: 'on'" in text


def test_sriov_pool_configs_reads_each_nodes_pool_from_hostvars_and_fails_with_the_host_named():
    hv = hostvars()
    hv["node2"]["sriov_networks_pool_name"] = "rack-b"
    hv["node2"]["sriov_networks_pool_max_unavailable"] = 1
    nodes = FILTERS["sriov_manifests"](hv, ["node1", "node2"])["nodes"]
    out = FILTERS["_sriov_pool_configs"](hv, nodes, {"sriov_networks_pool_max_unavailable": "10%"})
    assert [(o["metadata"]["name"], o["spec"]["maxUnavailable"]) for o in out["pool_configs"]] == [("roce-pool", 1), ("roce-pool-rack-b", 1)]
    hv["node1"]["sriov_networks_pool_max_unavailable"] = "0%"
    with pytest.raises(AnsibleFilterError, match=r'node1: sriov_networks_pool_max_unavailable="0%": .*Fix: '):
        FILTERS["_sriov_pool_configs"](hv, nodes, {})


class CountingHostVars(FakeHostVars):
    """Counts which variables the filter reads, per host."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.read = set()

    def __getitem__(self, host):
        parent, read = super().__getitem__(host), self.read

        class Row(dict):
            def __getitem__(self, key):
                read.add(key)
                return dict.__getitem__(self, key)

        return Row(parent)


def test_nic_config_templates_reads_only_roce_qos_via_when_every_node_applies_qos_the_host_way():
    hv = CountingHostVars(hostvars())
    hv["node1"].update(roce_qos={}, roce_nic_type="cx7")  # would fail if it were read
    assert FILTERS["_nic_config_templates"](hv, ["node1", "node2"], {}) == {"templates": [], "devices": []}
    assert hv.read == {"roce_qos_via"}
    hv["node2"]["roce_qos_via"] = "host"
    assert FILTERS["_nic_config_templates"](hv, ["node1", "node2"], {"roce_qos_via": "host"}) == {"templates": [], "devices": []}


def test_nic_config_templates_renders_the_operator_nodes_and_raises_with_every_problem():
    hv = hostvars()
    for h in ("node1", "node2"):
        hv[h].update(roce_qos={}, roce_qos_via="operator", roce_nic_type="1021")
    out = FILTERS["_nic_config_templates"](hv, ["node1", "node2"], {"sriov_networks_namespace": "nvidia-network-operator"})
    assert [t["metadata"]["name"] for t in out["templates"]] == ["roce-node1-1021", "roce-node2-1021"]
    assert [(d["node_name"], d["pci_address"], d["template"]) for d in out["devices"]] == [
        ("node1", "0000:9d:00.0", "roce-node1-1021"),
        ("node2", "0000:9d:00.0", "roce-node2-1021"),
    ]
    hv["node1"]["roce_nic_type"] = "cx7"
    hv["node2"]["roce_pf_pci_address"] = "9d:00.0"
    with pytest.raises(AnsibleFilterError, match=r"2 problems found; nothing was rendered or applied") as err:
        FILTERS["_nic_config_templates"](hv, ["node1", "node2"], {})
    assert 'node1: roce_nic_type="cx7": is not a PCI device id' in str(err.value)
    assert 'node2: roce_pf_pci_address="9d:00.0": is not a PCI address' in str(err.value)


def test_nic_config_templates_uses_the_plans_table_only_when_it_has_every_host():
    hv = hostvars()
    for h in ("node1", "node2"):
        hv[h].update(roce_qos={}, roce_qos_via="operator", roce_nic_type="1021")
    table = fabric_table({h: hv[h] for h in ("node1", "node2")}, ["node1", "node2"])
    table["qos_profiles"][0]["tos"] = 98  # only the plan's table says so
    out = FILTERS["_nic_config_templates"](hv, ["node1", "node2"], {}, table)
    assert {t["spec"]["template"]["roceOptimized"]["qos"]["tos"] for t in out["templates"]} == {98}
    del table["nodes"]["node2"]  # a plan without node2: the table is made here
    out = FILTERS["_nic_config_templates"](hv, ["node1", "node2"], {}, table)
    assert {t["spec"]["template"]["roceOptimized"]["qos"]["tos"] for t in out["templates"]} == {106}


def test_nic_node_policies_off_reads_no_group_variables_and_a_non_boolean_is_named():
    nodes = FakeHostVars(node1={"network_operator_node_group": 5}, node2={"network_operator_node_group": 5})
    # Off, in any spelling Ansible reads as false: the nodes' (here bad) group variables are not read.
    off = FILTERS["_nic_node_policies"]({"network_operator_node_policies": False}, nodes, ["node1", "node2"])
    assert off["nic_node_policies"] == []
    # Not a boolean: read as on, and the render refuses the value itself.
    with pytest.raises(AnsibleFilterError, match="network_operator_node_policies.*must be a boolean"):
        FILTERS["_nic_node_policies"]({"network_operator_node_policies": "maybe"}, nodes, ["node1", "node2"])


def test_nic_node_policies_read_the_groups_from_the_plans_operator_slice():
    plans = PlanFilters().filters()
    hv = {h: {"roce_pf": "p", "roce_pod_subnet": "10.0.0.%d/30" % (4 * i), "roce_pod_gateway": "10.0.0.%d" % (4 * i + 2),
              "network_operator_node_group": grp, "network_operator_node_group_selector": {"pool": grp}}
          for i, (h, grp) in enumerate((("gpu1", "h100"), ("gpu2", "b200"), ("gpu3", "h100")))}
    cfg = {"network_operator_node_policies": True, "network_operator_ofed_driver": True, "network_operator_chart_version": "26.4.1"}
    operator = plans["_fabric_plan_slice"](plans["fabric_plan_json"](plans["fabric_plan"](hv, list(hv))), "network_operator")
    assert operator["members"]["gpu2"] == {"network_operator_node_group": "b200", "network_operator_node_group_selector": {"pool": "b200"}}
    assert sorted(operator["members"]) == ["gpu1", "gpu2", "gpu3"]
    from_plan = FILTERS["_nic_node_policies"](cfg, None, list(hv), members=operator["members"])
    assert from_plan == FILTERS["_nic_node_policies"](cfg, hv, list(hv))  # the same groups as the inventory gives
    assert [p["metadata"]["name"] for p in from_plan["nic_node_policies"]] == ["b200", "h100"]
    # Nodes without groups are not carried: the slice has only what a node sets.
    for node in hv.values():
        del node["network_operator_node_group"], node["network_operator_node_group_selector"]
    operator = plans["_fabric_plan_slice"](plans["fabric_plan"](hv, list(hv)), "network_operator")
    assert operator["members"] == {}
    default = FILTERS["_nic_node_policies"](cfg, None, list(hv), members=operator["members"])
    assert [p["metadata"]["name"] for p in default["nic_node_policies"]] == ["roce-nodes"]

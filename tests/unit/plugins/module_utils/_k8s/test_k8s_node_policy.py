"""NicNodePolicies per node group (plugins/module_utils/_k8s/node_policy.py): render, CRD validity, refusals."""

import pytest
from k8s_crd_schema import load_crds, validate_object
from role_fallbacks import ncp_defaults

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import node_policy as nnp
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import RenderValidationError

TWO_GROUPS = [
    {"host": "gpu1", "network_operator_node_group": "h100", "network_operator_node_group_selector": {"node.kubernetes.io/pool": "h100"}},
    {"host": "gpu2", "network_operator_node_group": "h100", "network_operator_node_group_selector": {"node.kubernetes.io/pool": "h100"}},
    {"host": "gpu3", "network_operator_node_group": "b200", "network_operator_node_group_selector": {"node.kubernetes.io/pool": "b200"},
     "network_operator_node_group_overrides": {"ofedDriver": {"version": "doca3.4.1-26.04-1.1.0.0-1"}}},
]


def cfg(**given):
    out = ncp_defaults(dict({"network_operator_ofed_driver": True, "network_operator_rdma_shared_device_plugin": True,
                             "network_operator_chart_version": "26.7.0-rc.2"}, **given))
    out["network_operator_node_policies"] = given.get("network_operator_node_policies", True)
    return out


def errors(config, members):
    with pytest.raises(RenderValidationError) as info:
        nnp.render_nic_policies(config, members)
    return info.value.errors


def test_off_is_the_nic_cluster_policy_alone():
    out = nnp.render_nic_policies(cfg(network_operator_node_policies=False), TWO_GROUPS)
    assert out["nic_node_policies"] == []
    assert {"ofedDriver", "rdmaSharedDevicePlugin"} <= set(out["nic_cluster_policy"]["spec"])


def test_one_policy_per_group_with_the_per_node_components_moved():
    out = nnp.render_nic_policies(cfg(network_operator_nic_cluster_policy_overrides={"tolerations": [{"operator": "Exists"}]}), TWO_GROUPS)
    ncp, policies = out["nic_cluster_policy"], out["nic_node_policies"]
    assert not set(nnp.NODE_COMPONENTS) & set(ncp["spec"])
    assert {"secondaryNetwork", "nvIpam", "tolerations"} <= set(ncp["spec"])
    assert [p["metadata"]["name"] for p in policies] == ["b200", "h100"]
    by_name = {p["metadata"]["name"]: p for p in policies}
    assert by_name["h100"]["spec"]["nodeSelector"] == {"node.kubernetes.io/pool": "h100"}
    assert by_name["h100"]["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "gpufabric.roce"}
    assert by_name["h100"]["spec"]["ofedDriver"]["version"] == "doca3.5.0-26.07-0.7.1.0-0"
    assert by_name["b200"]["spec"]["ofedDriver"]["version"] == "doca3.4.1-26.04-1.1.0.0-1"
    assert by_name["b200"]["spec"]["ofedDriver"]["image"] == "doca-driver"
    assert "configList" in by_name["b200"]["spec"]["rdmaSharedDevicePlugin"]["config"]
    assert by_name["h100"]["spec"]["tolerations"] == [{"operator": "Exists"}]


def test_nodes_without_a_group_are_the_default_group_selected_by_nfd():
    out = nnp.render_nic_policies(cfg(), [{"host": "gpu1"}, {"host": "gpu2"}])
    assert [(p["metadata"]["name"], p["spec"]["nodeSelector"]) for p in out["nic_node_policies"]] == [
        ("roce-nodes", {"feature.node.kubernetes.io/pci-15b3.present": "true"})]


@pytest.mark.parametrize("line,version", [("26.7", "26.7.0-rc.2"), ("26.4", "26.4.1")])
def test_every_rendered_policy_matches_the_crd(line, version):
    crds = load_crds(line=line)
    for members in (TWO_GROUPS, [{"host": "gpu1"}]):
        out = nnp.render_nic_policies(cfg(network_operator_chart_version=version), members)
        assert out["nic_node_policies"]
        for obj in out["nic_node_policies"] + [out["nic_cluster_policy"]]:
            validate_object(obj, crds)


def test_refused_on_a_chart_without_the_crd():
    (err,) = errors(cfg(network_operator_chart_version="26.1.2"), TWO_GROUPS)
    assert (err.host, err.field, err.value) == ("(cluster)", "network_operator_node_policies", True)
    assert "26.1.2 has no NicNodePolicy CRD" in err.problem
    assert "network_operator_chart_version" in err.fix and "26.4.1" in err.fix and "network_operator_node_policies: false" in err.fix


def test_bad_input_names_host_field_value_and_fix():
    (err,) = errors(cfg(), [{"host": "gpu1", "network_operator_node_group": "h100", "network_operator_node_group_selector": {"pool": True}}])
    assert (err.host, err.field) == ("gpu1", "network_operator_node_group_selector")
    assert err.value == {"pool": True} and "quote the value" in err.fix
    assert str(err).startswith("gpu1: network_operator_node_group_selector=")
    (err,) = errors(cfg(network_operator_node_policies="maybe"), TWO_GROUPS)
    assert (err.host, err.field, err.value) == ("(cluster)", "network_operator_node_policies", "maybe")


@pytest.mark.parametrize("members,host,field,words", [
    ([{"host": "a", "network_operator_node_group": "a-group-name-longer-than-thirty", "network_operator_node_group_selector": {"p": "a"}}],
     "a", "network_operator_node_group", "DNS-1123 label"),
    ([{"host": "a", "network_operator_node_group": "h100"}], "a", "network_operator_node_group_selector", "non-empty mapping"),
    ([{"host": "a", "network_operator_node_group_selector": {"p": "a"}}], "a", "network_operator_node_group", "not the group"),
    (TWO_GROUPS[:1] + [{"host": "x", "network_operator_node_group": "h100", "network_operator_node_group_selector": {"p": "b"}}],
     "x", "network_operator_node_group_selector", "differs from node gpu1"),
    (TWO_GROUPS + [{"host": "cpu1"}], "cpu1", "network_operator_node_group", "in no node group"),
    (TWO_GROUPS + [{"host": "all", "network_operator_node_group": "all",
                    "network_operator_node_group_selector": {"node.kubernetes.io/pool": "h100", "x": "y"}}],
     "gpu1", "network_operator_node_group_selector", "selects every node that group all"),
    ([dict(TWO_GROUPS[0], network_operator_node_group_overrides={"nodeSelector": {"a": "b"}})], "gpu1", "network_operator_node_group_overrides",
     "not per-node-group settings"),
    ([dict(TWO_GROUPS[0], network_operator_node_group_overrides={"ofedDriver": {"versoin": "x"}})], "gpu1",
     "network_operator_node_group_overrides.ofedDriver.versoin", "CRD schema"),
])
def test_group_variables_refused(members, host, field, words):
    errs = errors(cfg(), members)
    assert any(e.host == host and e.field == field and words in e.problem and e.fix for e in errs), errs


def test_no_per_node_component_is_refused():
    (err,) = errors(cfg(network_operator_ofed_driver=False, network_operator_rdma_shared_device_plugin=False), TWO_GROUPS[:2])
    assert err.field == "network_operator_node_policies" and "network_operator_ofed_driver" in err.fix


def test_chart_line_without_the_crd():
    assert nnp.chart_has("26.4.1", "node_policies") and nnp.chart_has("v26.7.1", "node_policies")
    assert not nnp.chart_has("26.1.2", "node_policies") and not nnp.chart_has("latest", "node_policies")

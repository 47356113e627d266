"""SriovNetworkPoolConfig: validation and render (module_utils/_k8s/sriov_pool.py, filter sriov_pool_configs)."""

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import common
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import sriov_pool as pool
from role_fallbacks import pool_defaults


def nodes(count, prefix="gpu"):
    return [{"host": "%s%02d" % (prefix, i), "node_name": "%s%02d.example" % (prefix, i)} for i in range(count)]


def render(node_list, hv=None, **defaults):
    return pool.render_pool_configs(node_list, hv or {}, pool_defaults(defaults))


def errors(node_list, hv=None, **defaults):
    with pytest.raises(common.RenderValidationError) as info:
        render(node_list, hv, **defaults)
    return info.value.errors


def test_default_is_one_pool_of_the_fabric_nodes_by_name_at_ten_percent():
    out = render(nodes(20))
    assert out["pool_configs"] == [{
        "apiVersion": "sriovnetwork.openshift.io/v1",
        "kind": "SriovNetworkPoolConfig",
        "metadata": {"name": "roce-pool", "namespace": "nvidia-network-operator", "labels": {"app.kubernetes.io/managed-by": "gpufabric.roce"}},
        "spec": {
            "maxUnavailable": "10%",
            "nodeSelector": {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                   "values": sorted(n["node_name"] for n in nodes(20))}]},
        },
    }]
    assert out["pools"] == [{"name": "roce-pool", "nodes": 20, "max_unavailable": "10%", "requested": "10%", "effective": 2, "raised": False}]


def test_percentage_below_one_node_is_rendered_as_one_since_the_operator_floors_it_to_a_pool_that_never_drains():
    # 10% of 2 nodes is 0 for the operator (GetScaledValueFromIntOrPercent, round down): no drain would ever start.
    out = render(nodes(2))
    assert out["pool_configs"][0]["spec"]["maxUnavailable"] == 1
    assert out["pools"][0]["raised"] is True and out["pools"][0]["effective"] == 1


@pytest.mark.parametrize("value, rendered, effective", [(3, 3, 3), ("3", 3, 3), ("25%", "25%", 5), ("100%", "100%", 20), (50, 50, 50)])
def test_integer_and_percentage_values(value, rendered, effective):
    out = render(nodes(20), sriov_networks_pool_max_unavailable=value)
    assert out["pool_configs"][0]["spec"]["maxUnavailable"] == rendered
    assert out["pools"][0]["effective"] == effective


def test_an_empty_value_falls_back_to_the_default():
    out = render(nodes(30), {"gpu01": {"sriov_networks_pool_max_unavailable": None}})
    assert out["pool_configs"][0]["spec"]["maxUnavailable"] == "10%"


@pytest.mark.parametrize("value", [0, "0", "0%", -1, "101%", "10.5%", "ten", "", True, [1], "%"])
def test_bad_max_unavailable_names_host_variable_value_and_fix(value):
    errs = errors(nodes(3), {"gpu01": {"sriov_networks_pool_max_unavailable": value}})
    assert len(errs) == 1
    message = str(errs[0])
    assert message.startswith("gpu01: sriov_networks_pool_max_unavailable=")
    assert "Fix: set sriov_networks_pool_max_unavailable to a whole number" in message and '"10%"' in message


def test_node_groups_become_pools_and_each_pool_has_one_limit():
    node_list = nodes(6)
    hv = {n["host"]: {"sriov_networks_pool_name": "rack-a", "sriov_networks_pool_max_unavailable": 2} for n in node_list[:3]}
    out = render(node_list, hv, sriov_networks_name_prefix="fab")
    assert [o["metadata"]["name"] for o in out["pool_configs"]] == ["fab-pool", "fab-pool-rack-a"]
    by_name = {o["metadata"]["name"]: o for o in out["pool_configs"]}
    assert by_name["fab-pool-rack-a"]["spec"]["maxUnavailable"] == 2
    assert by_name["fab-pool-rack-a"]["spec"]["nodeSelector"]["matchExpressions"][0]["values"] == [n["node_name"] for n in node_list[:3]]
    assert by_name["fab-pool"]["spec"]["nodeSelector"]["matchExpressions"][0]["values"] == [n["node_name"] for n in node_list[3:]]
    # every node is in exactly one pool: the operator refuses to drain a node that two pools select
    selected = [v for o in out["pool_configs"] for v in o["spec"]["nodeSelector"]["matchExpressions"][0]["values"]]
    assert sorted(selected) == sorted(n["node_name"] for n in node_list)


def test_disagreeing_limits_in_one_pool_are_refused_with_both_hosts_named():
    node_list = nodes(2)
    errs = errors(node_list, {"gpu00": {"sriov_networks_pool_max_unavailable": 1}, "gpu01": {"sriov_networks_pool_max_unavailable": "50%"}})
    assert len(errs) == 1
    assert errs[0].host == "gpu01" and "gpu00" in errs[0].problem and "roce-pool" in errs[0].problem
    assert "group_vars" in errs[0].fix


def test_bad_pool_name_and_every_problem_at_once():
    errs = errors(nodes(3), {"gpu00": {"sriov_networks_pool_name": "Rack_A"}, "gpu02": {"sriov_networks_pool_max_unavailable": "x"}})
    assert [(e.host, e.field) for e in errs] == [("gpu00", "sriov_networks_pool_name"), ("gpu02", "sriov_networks_pool_max_unavailable")]


def test_opt_out_renders_nothing_and_a_non_boolean_is_refused():
    assert render(nodes(3), sriov_networks_pool_config=False) == {"pool_configs": [], "pools": []}
    errs = errors(nodes(3), sriov_networks_pool_config="no")
    assert errs[0].field == "sriov_networks_pool_config"


def test_namespace_is_the_operators():
    out = render(nodes(1), sriov_networks_namespace="sriov-system")
    assert out["pool_configs"][0]["metadata"]["namespace"] == "sriov-system"


def test_problems_as_a_list():
    assert pool.pool_problems(nodes(2), {}, pool_defaults()) == []
    assert len(pool.pool_problems(nodes(2), {"gpu00": {"sriov_networks_pool_max_unavailable": 0}}, pool_defaults())) == 1


def _live(name, selector, fabric=None, namespace="nvidia-network-operator", **spec):
    labels = {"gpufabric.roce/fabric": fabric} if fabric else {}
    body = dict(spec, nodeSelector=selector) if selector is not None else dict(spec)
    return {"kind": "SriovNetworkPoolConfig", "metadata": {"name": name, "namespace": namespace, "labels": labels}, "spec": body}


def test_overlaps_with_other_pools_by_name_by_empty_selector_and_unknown_selectors():
    rendered = render(nodes(3))["pool_configs"]
    other_fabric = _live("poolb-pool", {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["gpu01.example", "x"]}]}, "pool-b")
    everything = _live("admin-pool", {})
    by_label = _live("gpu-pool", {"matchLabels": {"nvidia.com/gpu.present": "true"}})
    disjoint = _live("other", {"matchLabels": {"kubernetes.io/hostname": "x"}})
    ovs = _live("ovs", None, ovsHardwareOffloadConfig={"name": "mcp"})
    itself = _live("roce-pool", {})  # our own live version: the apply updates it
    out = pool.pool_overlaps([other_fabric, everything, by_label, disjoint, ovs, itself], rendered)
    assert len(out["conflicts"]) == 2
    assert "SriovNetworkPoolConfig/poolb-pool (fabric pool-b) in namespace nvidia-network-operator selects node(s) gpu01.example" in out["conflicts"][0]
    assert "roce-pool also selects" in out["conflicts"][0]
    assert "admin-pool in namespace nvidia-network-operator selects every node" in out["conflicts"][1]
    assert out["unknown"] == ["gpu-pool"]
    assert pool.pool_overlaps([disjoint, ovs, itself], rendered) == {"conflicts": [], "unknown": []}

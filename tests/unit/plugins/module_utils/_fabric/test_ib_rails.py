# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""InfiniBand rails in the fabric plan: a subnet from the same plan, no VLAN, no gateway, no route; every new knob refused
with host, field, value and fix; one link type per rail on every node."""

import json

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.plan import build_plan, check_plan, dumps, node_slice, route_index
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table, gateway_args_list, vlan_gateway_plan
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import IPOIB_MTU_MAX, node_rails

ETH0 = {"name": "rail0", "pf": "enp12s0np0", "vlan": 101, "subnet_pool": "10.101.0.0/16"}
ETH1 = {"name": "rail1", "pf": "enp18s0np0", "vlan": 102, "subnet_pool": "10.102.0.0/16"}
IB0 = {"name": "ib0", "pf": "ibp75s0", "link_type": "ib", "subnet_pool": "10.201.0.0/16"}
IB1 = {"name": "ib1", "pf": "ibp83s0", "link_type": "IB", "subnet_pool": "10.202.0.0/16", "mtu": 2044}
PLAN = [ETH0, IB0, ETH1, IB1]


def fleet(n=3, rails=None, **per_host):
    rails = PLAN if rails is None else rails
    hv = {"gpu%d" % i: {"roce_rails": rails, "roce_node_index": i} for i in range(n)}
    for host, extra in per_host.items():
        hv[host] = dict(hv[host], **extra)
    return hv


def problems(hv):
    with pytest.raises(GpufabricError) as err:
        fabric_table(hv)
    return str(err.value)


def test_ib_rails_get_a_subnet_of_their_pool_and_neither_vlan_nor_gateway():
    table = fabric_table(fleet())
    rails = {r["rail"]: r for r in table["nodes"]["gpu1"]["rails"]}
    assert rails["ib0"] == {"pf": "ibp75s0", "link_type": "ib", "mtu": IPOIB_MTU_MAX, "subnet": "10.201.1.0/24", "rail": "ib0",
                            "num_vfs": 8, "sriov_pf": "ibp75s0"}
    assert rails["ib1"]["mtu"] == 2044 and rails["ib1"]["link_type"] == "ib"
    # The Ethernet rails are as they were: VLAN, gateway, the cluster MTU, no link_type key.
    assert rails["rail0"] == {"pf": "enp12s0np0", "vlan_id": 101, "mtu": 9000, "subnet": "10.101.1.0/24", "gateway": "10.101.1.254",
                              "rail": "rail0", "num_vfs": 8, "sriov_pf": "enp12s0np0"}


def test_no_gateway_and_no_route_is_planned_for_an_ib_rail():
    table = fabric_table(fleet())
    gateways = gateway_args_list(table, "gpu0")
    assert [g["rail"] for g in gateways] == ["rail0", "rail1"]
    for g in gateways:
        assert all(not r["dst"].startswith("10.20") for r in g["routes"]), g
        assert [r["dst"] for r in g["routes"]] == ["10.%d.1.0/24" % (100 + int(g["rail"][-1]) + 1), "10.%d.2.0/24" % (100 + int(g["rail"][-1]) + 1)]
    assert sorted(route_index(table)) == ["rail0", "rail1"]
    # The node's slice read from the plan's text (the index path) and from the table (the derivation) agree.
    plan = build_plan(table, True)
    from_text = node_slice(dumps(plan), "gpu2", routes_apart=True, route_ranges=True)
    assert [r["name"] for r in from_text["rails"]] == ["enp12s0np0.101", "enp18s0np0.102"]
    assert all("10.20" not in json.dumps(routes) for routes in from_text["routes"].values())
    assert node_slice(plan, "gpu2")["rails"] == gateway_args_list(table, "gpu2")


def test_a_plan_with_ib_rails_is_read_back_and_checked_against_its_rules():
    plan = build_plan(fabric_table(fleet()), True)
    back = check_plan(json.loads(dumps(plan)), ["gpu0", "gpu1", "gpu2"])
    assert back["fabric"] == plan["fabric"]
    tampered = json.loads(dumps(plan))
    tampered["fabric"]["nodes"]["gpu1"]["rails"][1]["vlan_id"] = 7
    with pytest.raises(GpufabricError):
        check_plan(tampered, ["gpu0", "gpu1", "gpu2"])


def test_only_ib_rails_means_no_gateway_at_all():
    table = fabric_table(fleet(2, [IB0, IB1]))
    assert gateway_args_list(table, "gpu0") == [] and route_index(table) == {}


@pytest.mark.parametrize("rail,override,field,value,words,fix", [
    (dict(IB0, vlan=201), None, "roce_rails[ib0].vlan", "201", "has no VLAN", "remove vlan from rail ib0 in roce_rails"),
    (IB0, {"ib0": {"vlan": 201}}, "roce_rails[ib0].vlan", "201", "has no VLAN", "remove vlan from rail ib0 in roce_rail_overrides.ib0"),
    (IB0, {"ib0": {"gateway": "10.201.0.1"}}, "roce_rails[ib0].gateway", '"10.201.0.1"', "has no gateway", "remove gateway from rail ib0"),
    (dict(IB0, qos={}), None, "roce_rails[ib0].qos", "{}", "DCB", "remove qos from rail ib0 in roce_rails"),
    (dict(IB0, vfs=[{"id": 0, "trust": True}]), None, "roce_rails[ib0].vfs", '[{"id": 0, "trust": true}]', "host VF mode",
     "remove vfs from rail ib0"),
    (dict(IB0, pkey="0x8001"), None, "roce_rails[ib0].pkey", '"0x8001"', "has no pkey field", "subnet manager"),
    (dict(IB0, mtu=9000), None, "roce_rails[ib0].mtu", "9000", "largest IPoIB MTU", "set mtu of rail ib0 to 4092 or less"),
    (dict(IB0, link_type="infiniband"), None, "roce_rails[ib0].link_type", '"infiniband"', "is not a link type",
     "set link_type to eth (RoCE, the default) or ib (InfiniBand) on rail ib0"),
    (IB0, {"ib0": {"link_type": "eth"}}, "roce_rail_overrides.ib0.link_type", '"eth"', "not a node's to override",
     "set it on the rail in roce_rails"),
])
def test_every_new_knob_is_refused_with_host_field_value_and_fix(rail, override, field, value, words, fix):  # noqa: PLR0917 - parametrized
    node = {"roce_rails": [ETH0, rail]}
    if override:
        node["roce_rail_overrides"] = override
    msg = problems({"gpu0": node})
    line = next(ln for ln in msg.splitlines() if ln.startswith("gpu0: %s=" % field))
    assert line.startswith("gpu0: %s=%s: " % (field, value)), line
    assert words in line and "Fix: " in line and fix in line.split("Fix: ", 1)[1], line


def test_a_fix_offered_makes_the_plan():
    # The refusals' fixes, applied: the qos, vlan and gateway removed, the MTU lowered.
    bad = {"gpu0": {"roce_rails": [ETH0, dict(IB0, vlan=201, qos={}, mtu=9000)], "roce_rail_overrides": {"ib0": {"gateway": "10.201.0.1"}}}}
    problems(bad)
    fixed = {"gpu0": {"roce_rails": [ETH0, dict(IB0, mtu=4092)], "roce_rail_overrides": {"ib0": {}}}}
    assert fabric_table(fixed)["nodes"]["gpu0"]["rails"][1]["link_type"] == "ib"


def test_cluster_qos_applies_to_the_ethernet_rails_only():
    table = fabric_table({"gpu0": {"roce_rails": [ETH0, IB0], "roce_qos": {}}})
    eth, ib = table["nodes"]["gpu0"]["rails"]
    assert "qos" in eth and "qos" not in ib


def test_host_vf_mode_beside_an_ib_rail_is_refused_once_per_node():
    msg = problems({"gpu0": {"roce_rails": [ETH0, IB0, IB1], "roce_vf_mode": "host"}})
    assert len(msg.splitlines()) == 1, msg
    assert msg.startswith('gpu0: roce_vf_mode="host": is set on a node with InfiniBand rails (ib0, ib1)') and \
        "Fix: set roce_vf_mode to operator on this node" in msg


def test_a_rail_has_one_link_type_on_every_node_and_the_odd_node_is_named():
    odd = [ETH0, dict(IB0, link_type="eth", vlan=201), ETH1, IB1]
    msg = problems(fleet(4, gpu2={"roce_rails": odd}))
    assert msg == ('gpu2: roce_rails[ib0].link_type="eth": differs from link type ib that gpu0 and the other nodes have on rail ib0: '
                   "a rail is one switch plane, Ethernet or InfiniBand, on every node. Fix: give rail ib0 one link_type for every "
                   "node: set it once in roce_rails (group_vars/roce_nodes) and remove this node's own roce_rails from its host_vars")


def test_node_rails_marks_ib_rails_only():
    rails, probs = node_rails({"roce_rails": PLAN}, 1, {"roce_num_vfs": 8, "roce_mtu": 9000, "roce_vlan_id": 100})
    assert probs == []
    assert [r.get("link_type") for r in rails] == [None, "ib", None, "ib"]
    assert "gateway" not in rails[1] and "vlan" not in rails[1] and rails[1]["routes"] == [{"dst": "10.201.0.0/16"}]


def one_rail(n=2, **per_host):
    hv = {"n%d" % i: {"roce_pf": "ibp75s0", "roce_pod_subnet": "10.250.%d.0/24" % i, "sriov_networks_link_type": "ib"} for i in range(n)}
    for host, extra in per_host.items():
        hv[host] = dict(hv[host], **extra)
    return hv


def test_a_one_rail_ib_fabric_plans_no_gateway():
    table = fabric_table(one_rail())
    assert table["nodes"]["n1"] == {"rails": [{"pf": "ibp75s0", "link_type": "ib", "mtu": IPOIB_MTU_MAX, "subnet": "10.250.1.0/24",
                                               "rail": "", "num_vfs": 8, "sriov_pf": "ibp75s0"}]}
    assert gateway_args_list(table, "n0") == [] and route_index(table) == {}
    assert node_slice(dumps(build_plan(table, True)), "n0", routes_apart=True, route_ranges=True)["rails"] == []
    with pytest.raises(GpufabricError, match="an InfiniBand node has no VLAN gateway"):
        vlan_gateway_plan(table, "n0")
    assert check_plan(json.loads(dumps(build_plan(table, True))), ["n0", "n1"])["fabric"] == table


@pytest.mark.parametrize("var,value,words", [
    ("roce_vlan_id", 7, "has no VLAN"),
    ("roce_pod_gateway", "10.250.1.254", "has no gateway"),
    ("roce_qos", {}, "DCB"),
    ("roce_vfs", [{"id": 0}], "host VF mode"),
])
def test_one_rail_ib_node_refuses_the_ethernet_settings(var, value, words):
    msg = problems(one_rail(n1={var: value}))
    assert msg.startswith("n1: %s=%s: is set on an InfiniBand node (sriov_networks_link_type: ib): " % (var, json.dumps(value))), msg
    assert words in msg and "Fix: remove %s from this node's variables, or set sriov_networks_link_type to eth (RoCE)" % var in msg


def test_one_rail_ib_node_refuses_host_vf_mode_and_a_jumbo_mtu():
    msg = problems(one_rail(n1={"roce_vf_mode": "host", "roce_mtu": 9000}))
    assert 'n1: roce_vf_mode="host": ' in msg and "Fix: set roce_vf_mode to operator on this node" in msg
    assert "n1: roce_mtu=9000: is above 4092" in msg and "Fix: set roce_mtu to 4092 or less on this node" in msg


def test_one_rail_nodes_share_one_link_type():
    hv = one_rail(3)
    hv["n3"] = {"roce_pf": "enp1s0np0", "roce_pod_subnet": "10.250.3.0/24", "roce_pod_gateway": "10.250.3.254"}
    assert problems(hv) == ('n3: sriov_networks_link_type="eth": differs from link type ib that n0 and the other nodes have: the '
                            "nodes' one rail is one switch plane, Ethernet or InfiniBand. Fix: set sriov_networks_link_type to ib on "
                            "this node and remove its roce_vlan_id and roce_pod_gateway, or the same on every node (group_vars/roce_nodes)")

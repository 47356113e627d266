# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nv-ipam without a pool name (issue 18): one SriovNetwork, one resourceName and one CIDRPool per rail for the whole
cluster, each node's block and gateway in the pool the ones its VLAN gateway holds - checked here against the gateway
planner itself (vlan_gateway_plans), for the example inventories and a sweep of generated fleets - and nv-ipam's own
pool rules refused before anything is applied, naming host, field, value and fix."""

import ipaddress
import json
import os

import pytest
import yaml
from k8s_crd_schema import CrdError, load_crds, validate_object

from ansible_collections.gpufabric.roce.plugins.filter.fabric_plan import FilterModule as PlanFilters
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import RenderValidationError
from planned_render import render_sriov
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import vlan_gateway_plans
from role_fallbacks import sriov_defaults

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
NV_IPAM = {"sriov_networks_ipam": "nv-ipam"}
DEFAULTS = {"roce_num_vfs": 8, "roce_mtu": 9000, "roce_vlan_id": 100, "roce_pf": "enp157s0np0"}


def inventory(name):
    """hosts and hostvars of inventories/<name> as Ansible merges them for group roce_nodes (group_vars, then host_vars)."""
    base = os.path.join(REPO, "inventories", name)
    with open(os.path.join(base, "hosts.yml"), encoding="utf-8") as f:
        hosts = list(yaml.safe_load(f)["all"]["children"]["roce_nodes"]["hosts"])
    with open(os.path.join(base, "group_vars", "roce_nodes.yml"), encoding="utf-8") as f:
        group = yaml.safe_load(f) or {}
    hv = {}
    for h in hosts:
        with open(os.path.join(base, "host_vars", h + ".yml"), encoding="utf-8") as f:
            hv[h] = dict(DEFAULTS, **group, **(yaml.safe_load(f) or {}))
    return hosts, hv


def rails(n, prefix=24):
    return [{"name": "rail%d" % i, "pf": "enp%ds0np0" % (10 + i), "vlan": 101 + i, "subnet_pool": "10.%d.0.0/16" % (101 + i), "subnet_prefix": prefix}
            for i in range(n)]


def fleet(n, n_rails=8, prefix=24, stride=1):
    hosts = ["gpu%03d" % i for i in range(n)]
    return hosts, {h: dict(DEFAULTS, roce_rails=rails(n_rails, prefix), roce_node_index=i * stride) for i, h in enumerate(hosts)}


def errors(hosts, hv, defaults=None):
    with pytest.raises(RenderValidationError) as err:
        render_sriov(hosts, hv, sriov_defaults(NV_IPAM if defaults is None else defaults))
    return err.value.errors


CASES = {
    "example (one rail)": lambda: inventory("example"),
    "example-multirail (8 rails)": lambda: inventory("example-multirail"),
    "40 nodes x 8 rails, /24": lambda: fleet(40),
    "17 nodes x 8 rails, /26, sparse indices": lambda: fleet(17, prefix=26, stride=3),
    "5 nodes x 1 rail, /30": lambda: fleet(5, n_rails=1, prefix=30),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_nodes_block_and_gateway_are_its_vlan_gateways(case):
    hosts, hv = CASES[case]()
    out = render_sriov(hosts, hv, sriov_defaults(NV_IPAM))
    pools = {p["metadata"]["name"]: p["spec"] for p in out["ip_pools"]}
    # one pool and one network per rail, named alike; the network takes its addresses from that pool
    assert sorted(pools) == sorted(n["metadata"]["name"] for n in out["networks"])
    for net in out["networks"]:
        assert json.loads(net["spec"]["ipam"]) == {"type": "nv-ipam", "poolName": net["metadata"]["name"], "poolType": "cidrpool"}
    by_resource = {n["spec"]["resourceName"]: n["metadata"]["name"] for n in out["networks"]}
    # every policy of a rail, on every node, has the rail's one resourceName
    assert {p["spec"]["resourceName"] for p in out["policies"]} == set(by_resource)
    checked = 0
    for host in hosts:
        node = next(n for n in out["nodes"] if n["host"] == host)
        for plan in vlan_gateway_plans(hv, host, hosts):
            (address,) = plan["addresses"]
            block, gateway = ipaddress.ip_interface(address).network, str(ipaddress.ip_interface(address).ip)
            # the pool of the network whose policy covers this rail's PF on this node
            resource = next(p["spec"]["resourceName"] for p in out["policies"]
                            if p["metadata"]["name"] in node["policies"] and plan["pf"] in p["spec"]["nicSelector"]["pfNames"])
            spec = pools[by_resource[resource]]
            (alloc,) = [a for a in spec["staticAllocations"] if a["nodeName"] == node["node_name"]]
            assert (alloc["prefix"], alloc["gateway"]) == (str(block), gateway), (host, plan["name"])
            assert spec["perNodeNetworkPrefix"] == block.prefixlen
            assert block.subnet_of(ipaddress.ip_network(spec["cidr"]))
            # nv-ipam's computed gateway (GetGatewayForSubnet: the block's address plus gatewayIndex) is the same one
            assert str(block.network_address + spec["gatewayIndex"]) == gateway
            checked += 1
    assert checked == len(hosts) * len(pools)


def test_the_rendered_pools_and_networks_are_valid_against_the_nv_ipam_and_sriov_crds():
    try:
        crds = load_crds()
    except CrdError as exc:
        pytest.fail(str(exc))
    for case in ("example (one rail)", "example-multirail (8 rails)"):
        hosts, hv = CASES[case]()
        out = render_sriov(hosts, hv, sriov_defaults(NV_IPAM))
        for obj in out["ip_pools"] + out["networks"] + out["policies"]:
            validate_object(obj, crds)


def test_one_rail_pool_is_the_smallest_network_holding_every_nodes_subnet():
    hosts, hv = inventory("example")
    (pool,) = render_sriov(hosts, hv, sriov_defaults(NV_IPAM))["ip_pools"]
    assert pool["metadata"]["name"] == "roce"
    assert pool["spec"]["cidr"] == "10.255.0.0/23" and pool["spec"]["perNodeNetworkPrefix"] == 24
    assert pool["spec"]["staticAllocations"] == [
        {"nodeName": "node1", "prefix": "10.255.0.0/24", "gateway": "10.255.0.254"},
        {"nodeName": "node2", "prefix": "10.255.1.0/24", "gateway": "10.255.1.254"},
    ]


def test_a_named_pool_keeps_its_meaning_and_renders_no_pool():
    hosts, hv = inventory("example")
    out = render_sriov(hosts, hv, sriov_defaults(dict(NV_IPAM, sriov_networks_nv_ipam_pool="my-pool")))
    assert out["ip_pools"] == []
    assert json.loads(out["networks"][0]["spec"]["ipam"]) == {"type": "nv-ipam", "poolName": "my-pool", "poolType": "ippool"}


def test_host_local_renders_no_pool():
    hosts, hv = inventory("example-multirail")
    assert render_sriov(hosts, hv, sriov_defaults({}))["ip_pools"] == []


def test_an_override_outside_the_rails_pool_is_refused_with_host_field_and_fix():
    hosts, hv = fleet(3, n_rails=2)
    hv["gpu002"]["roce_rail_overrides"] = {"rail1": {"subnet": "10.200.7.0/24"}}
    (err,) = errors(hosts, hv)
    assert (err.host, err.field, err.value) == ("gpu002", "roce_rails[rail1].subnet", "10.200.7.0/24")
    assert "outside rail rail1's subnet_pool 10.102.0.0/16, the cidr of nv-ipam pool roce-rail1" in err.problem
    assert err.fix.startswith("pick a /24 block of 10.102.0.0/16 for this node")


def test_a_block_of_another_size_is_refused_naming_the_pools_size():
    hosts, hv = fleet(3, n_rails=2)
    hv["gpu001"]["roce_rail_overrides"] = {"rail0": {"subnet": "10.101.1.0/25"}}
    (err,) = errors(hosts, hv)
    assert (err.host, err.field, err.value) == ("gpu001", "roce_rails[rail0].subnet", "10.101.1.0/25")
    assert "perNodeNetworkPrefix /24, from host gpu000's 10.101.0.0/24" in err.problem and "is a /25" in err.problem
    assert err.fix == "give every node of the pool a /24 subnet"


def test_a_route_with_its_own_gateway_is_refused_with_the_route_without_it_as_fix():
    hosts, hv = inventory("example")
    hv["node2"]["sriov_networks_ipam_routes"] = [{"dst": "10.0.0.0/8", "gw": "10.255.1.1"}]
    errs = errors(hosts, hv)
    err = next(e for e in errs if e.host == "node2")
    assert err.field == "sriov_networks_ipam_routes" and "CIDRPool routes have no gw" in err.problem
    assert err.fix_vars == [{"node2": {"sriov_networks_ipam_routes": [{"dst": "10.0.0.0/8"}]}}]


def test_one_rail_nodes_of_two_address_families_are_refused():
    hosts, hv = inventory("example")
    hv["node2"].update(roce_pod_subnet="fd00::/126", roce_pod_gateway="fd00::2")
    for h in hosts:
        hv[h]["sriov_networks_ipam_routes"] = []
    (err,) = errors(hosts, hv)
    assert (err.host, err.field, err.value) == ("node2", "roce_pod_subnet", "fd00::/126")
    assert "one CIDRPool has one address family" in err.problem


def test_a_node_with_its_own_resource_name_is_refused_with_the_rails_one_as_fix():
    hosts, hv = inventory("example")
    hv["node2"]["sriov_networks_resource_name"] = "roce_node2"
    (err,) = errors(hosts, hv)
    assert (err.host, err.field, err.value) == ("node2", "sriov_networks_resource_name", "roce_node2")
    assert err.fix_vars == [{"node2": {"sriov_networks_resource_name": "roce"}}]


@pytest.mark.parametrize("ipam", [{}, NV_IPAM, dict(NV_IPAM, sriov_networks_nv_ipam_pool="my-pool")], ids=["host-local", "nv-ipam", "nv-ipam-named"])
def test_what_a_test_pod_attaches_to_is_what_the_render_names(ipam):
    """rdma_verify's pods name the network and resource from the fabric plan (_fabric_plan_verify): they must be the
    render's, in every IPAM mode."""
    plans = PlanFilters().filters()
    mode = ipam.get("sriov_networks_ipam", "host-local")
    pool = ipam.get("sriov_networks_nv_ipam_pool", "")
    cases = [inventory("example")] + ([inventory("example-multirail")] if pool == "" else [])
    for hosts, hv in cases:
        out = render_sriov(hosts, hv, sriov_defaults(ipam))
        networks = {n["metadata"]["name"]: n["spec"]["resourceName"] for n in out["networks"]}
        verify = plans["_fabric_plan_verify"](plans["fabric_plan"](hv, hosts), hosts, "roce", "nvidia.com", mode, pool)
        for host, attached in zip(hosts, verify):
            assert attached["host"] == host and attached["node_name"] == hv[host].get("roce_node_name", host)
            for att in attached["rails"] or [attached]:
                assert "nvidia.com/" + networks[att["network"]] == att["resource"], (host, att)
                node = next(n for n in out["nodes"] if n["host"] == host)
                assert att["resource"] in node["resources"]


# ---- issue 43 class 8: pools nothing should render ----------------------------------------------------------------------

def test_one_rail_blocks_far_apart_are_refused_instead_of_a_pool_of_the_whole_address_space():
    """Before: 10.255.x and 172.16.x gave the CIDRPool cidr 0.0.0.0/0 (nv-ipam hands its blocks to any node)."""
    hosts, hv = inventory("example")
    hosts.append("node3")
    hv["node3"] = dict(hv["node2"], roce_node_name="node3", roce_pod_subnet="172.16.0.0/24", roce_pod_gateway="172.16.0.254")
    (err,) = errors(hosts, hv)
    assert (err.host, err.field, err.value) == ("node3", "roce_pod_subnet", "172.16.0.0/24")
    assert err.problem.startswith("is far from the other nodes' blocks of nv-ipam pool roce (node1's 10.255.0.0/24): the pool's "
                                  "cidr, the smallest network holding them all, would be 0.0.0.0/0, which is not a unicast range")
    assert err.fix == ("give node3 a /24 block near the other nodes' blocks of the pool, inside 10.255.0.0/23 (node1's is "
                       "10.255.0.0/24), and roce_pod_gateway a host address of it")
    # The fix applied: a /24 next to the others renders.
    hv["node3"].update(roce_pod_subnet="10.255.2.0/24", roce_pod_gateway="10.255.2.254")
    (pool,) = render_sriov(hosts, hv, sriov_defaults(NV_IPAM))["ip_pools"]
    assert pool["spec"]["cidr"] == "10.255.0.0/22"


def test_the_odd_node_is_the_one_outside_the_range_most_blocks_are_in():
    hosts, hv = inventory("example")
    hv["node1"].update(roce_pod_subnet="192.168.0.0/24", roce_pod_gateway="192.168.0.254")
    hosts.append("node3")
    hv["node3"] = dict(hv["node2"], roce_node_name="node3", roce_pod_subnet="10.255.2.0/24", roce_pod_gateway="10.255.2.254")
    (err,) = errors(hosts, hv)
    assert (err.host, err.value) == ("node1", "192.168.0.0/24")


def test_rail_pools_nested_in_each_other_are_refused_once_for_the_rail():
    """Before: rendered as two overlapping CIDRPools (10.101.0.0/16 inside rail0's 10.0.0.0/8)."""
    hosts, hv = fleet(3, n_rails=2)
    plan = [dict(hv["gpu000"]["roce_rails"][0], subnet_pool="10.0.0.0/8", subnet_prefix=24), hv["gpu000"]["roce_rails"][1]]
    for h in hosts:
        hv[h]["roce_rails"] = plan
    (err,) = errors(hosts, hv)
    assert (err.host, err.field, err.value) == ("gpu000 (and 2 other nodes: gpu001, gpu002)", "roce_rails[rail1].subnet_pool",
                                                "10.102.0.0/16")
    assert err.problem.startswith("overlaps rail rail0's subnet_pool 10.0.0.0/8: their nv-ipam CIDRPools roce-rail0 and roce-rail1 "
                                  "would overlap")
    assert err.fix == ("give every rail a subnet_pool of its own, disjoint from the other rails': narrow rail rail0's so that it "
                       "leaves out 10.102.0.0/16, or move rail rail1's outside 10.0.0.0/8")
    # host-local renders no pool: nothing to refuse there.
    render_sriov(hosts, hv, sriov_defaults({}))


def _pcp(hv, hosts, vlan_qos, **qos):
    for h in hosts:
        hv[h]["roce_qos"] = dict({"trust": "pcp"}, **qos)
    return sriov_defaults(dict(NV_IPAM, sriov_networks_vlan_qos=vlan_qos))


def test_a_vf_priority_pfc_does_not_protect_is_refused_under_trust_pcp_once_for_the_nodes():
    """Issue 43 class 9. Before: trust pcp with sriov_networks_vlan_qos 5 put the pods' RoCE on priority 5, PFC on 3."""
    hosts, hv = fleet(3, n_rails=2)
    with pytest.raises(RenderValidationError) as exc:
        render_sriov(hosts, hv, _pcp(hv, hosts, 5))
    (err,) = exc.value.errors
    assert (err.host, err.field, err.value) == ("gpu000 (and 2 other nodes: gpu001, gpu002)", "sriov_networks_vlan_qos", 5)
    assert err.problem.startswith("puts the VFs' traffic, RoCE included, on priority 5")
    assert "but PFC is on [3]" in err.problem
    assert err.fix.startswith("set sriov_networks_vlan_qos to 3, the RoCE priority (tos 106 >> 5), or use trust: dscp in roce_qos")
    assert err.fix_vars == [{h: {"sriov_networks_vlan_qos": 3} for h in hosts}]
    # Both fixes render; so does a priority PFC protects, and trust dscp whatever the VLAN priority.
    render_sriov(hosts, hv, _pcp(hv, hosts, 3))
    render_sriov(hosts, hv, _pcp(hv, hosts, 5, trust="dscp"))
    render_sriov(hosts, hv, _pcp(hv, hosts, 5, pfc_priorities=[3, 5], ecn_priorities=[3]))

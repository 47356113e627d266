# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rail model: derivation of per-node rails from the cluster plan, overrides, and refusals."""

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import (
    is_multirail,
    node_rails,
    rail_field,
    shorthand_vars,
    vlan_problems,
)

PLAN = [
    {"name": "rail0", "pf": "enp12s0np0", "vlan": 101, "subnet_pool": "10.101.0.0/16", "subnet_prefix": 24},
    {"name": "rail1", "pf": "enp18s0np0", "vlan": 102, "subnet_pool": "10.102.0.0/16", "subnet_prefix": 30},
]


def _rails(hv, position=0, defaults=None):
    rails, problems = node_rails(hv, position, defaults or {"roce_num_vfs": 8, "roce_mtu": 9000})
    return rails, problems


def test_one_rail_shorthand_is_not_multirail():
    assert not is_multirail({"roce_pf": "enp1s0np0"})
    assert not is_multirail({"roce_rails": []})
    assert node_rails({"roce_pf": "x"}, 0) == (None, [])


def test_pool_gives_the_index_th_subnet_and_its_last_host_as_gateway():
    rails, problems = _rails({"roce_rails": PLAN, "roce_node_index": 3})
    assert problems == []
    assert [(r["name"], r["subnet"], r["gateway"]) for r in rails] == [
        ("rail0", "10.101.3.0/24", "10.101.3.254"),
        ("rail1", "10.102.0.12/30", "10.102.0.14"),
    ]
    assert rails[0]["num_vfs"] == 8 and rails[0]["mtu"] == 9000
    # A pod's rails must not each carry a default route: the rail routes its own plane.
    assert rails[0]["routes"] == [{"dst": "10.101.0.0/16"}]


def test_position_in_roce_nodes_is_the_index_when_unset():
    rails, problems = _rails({"roce_rails": PLAN}, position=2)
    assert problems == []
    assert rails[0]["subnet"] == "10.101.2.0/24"


def test_explicit_per_node_values_win():
    hv = {"roce_rails": PLAN, "roce_node_index": 1,
          "roce_rail_overrides": {"rail1": {"pf": "ens7np0", "subnet": "192.168.7.0/29", "num_vfs": 4}}}
    rails, problems = _rails(hv)
    assert problems == []
    r1 = rails[1]
    assert (r1["pf"], r1["subnet"], r1["gateway"], r1["num_vfs"]) == ("ens7np0", "192.168.7.0/29", "192.168.7.6", 4)
    assert rails[0]["pf"] == "enp12s0np0"


def test_pool_exhausted_names_rail_index_and_fix():
    rails, problems = _rails({"roce_rails": [dict(PLAN[0], subnet_pool="10.101.0.0/23")], "roce_node_index": 2})
    assert rails == []
    field, value, problem, fix = problems[0]
    assert field == "roce_rails[rail0].subnet_pool" and value == "10.101.0.0/23"
    assert "holds 2 /24 subnets" in problem and "index is 2" in problem
    assert "roce_rail_overrides.rail0.subnet" in fix


@pytest.mark.parametrize(
    "hv, field, words",
    [
        ({"roce_rails": "rail0"}, "roce_rails", "must be a list"),
        ({"roce_rails": [{"name": "Rail_0", "pf": "x"}]}, "roce_rails[0].name", "not a rail name"),
        ({"roce_rails": [{"name": "rail0", "pf": "x"}, {"name": "rail0", "pf": "y"}]}, "roce_rails[1].name", "earlier rail"),
        ({"roce_rails": [{"name": "rail0", "pf": "x", "vlans": 3}]}, "roce_rails[0]", "unknown key"),
        ({"roce_rails": [{"name": "rail0", "pf": "x", "subnet": "10.0.0.0/24"}], "roce_rail_overrides": {"rail9": {}}},
         "roce_rail_overrides.rail9", "names no rail"),
        ({"roce_rails": [{"name": "rail0", "pf": "x", "subnet": "10.0.0.0/24"}], "roce_rail_overrides": {"rail0": {"subnet_pool": "1.0.0.0/8"}}},
         "roce_rail_overrides.rail0", "unknown key"),
        ({"roce_rails": [{"name": "rail0", "vlan": 5, "subnet": "10.0.0.0/24"}]}, "roce_rails[rail0].pf", "not set"),
        ({"roce_rails": [{"name": "rail0", "pf": "x"}]}, "roce_rails[rail0].subnet", "no subnet_pool"),
        ({"roce_rails": [dict(PLAN[0], subnet_pool="10.101.0.1/16")]}, "roce_rails[rail0].subnet_pool", "CIDR"),
        ({"roce_rails": [dict(PLAN[0], subnet_prefix=31)]}, "roce_rails[rail0].subnet_prefix", "prefix length"),
        ({"roce_rails": [dict(PLAN[0], subnet_prefix=8)]}, "roce_rails[rail0].subnet_prefix", "prefix length"),
        ({"roce_rails": PLAN, "roce_node_index": -1}, "roce_node_index", "non-negative"),
        ({"roce_rails": PLAN, "roce_node_index": True}, "roce_node_index", "non-negative"),
    ],
)
def test_refusals_name_the_field(hv, field, words):
    _rails_out, problems = _rails(hv)
    assert problems, hv
    assert problems[0][0] == field
    assert words in problems[0][2]
    assert problems[0][3]  # every refusal carries a fix


def test_vlan_must_agree_per_rail_and_the_odd_node_is_named():
    by_host = {
        "n1": [{"name": "rail0", "vlan": 101}, {"name": "rail1", "vlan": 102}],
        "n2": [{"name": "rail0", "vlan": 101}, {"name": "rail1", "vlan": 102}],
        "n3": [{"name": "rail0", "vlan": 111}, {"name": "rail1", "vlan": 102}],
    }
    problems = vlan_problems(by_host, ["n1", "n2", "n3"])
    assert len(problems) == 1
    host, field, value, problem, fix = problems[0]
    assert (host, field, value) == ("n3", "roce_rails[rail0].vlan", 111)
    assert "101" in problem and "101" in fix


def test_rail_fields_and_shorthand_vars():
    assert rail_field("rail3", "roce_pod_subnet") == "roce_rails[rail3].subnet"
    assert rail_field("rail3", "sriov_networks_trust") == "sriov_networks_trust"
    rail = {"name": "rail0", "pf": "p", "vlan": 7, "subnet": "10.0.0.0/30", "gateway": "10.0.0.2", "num_vfs": 2, "mtu": 1500,
            "routes": []}
    assert shorthand_vars(rail) == {"roce_pf": "p", "roce_vlan_id": 7, "roce_pod_subnet": "10.0.0.0/30", "roce_pod_gateway": "10.0.0.2",
                                    "roce_num_vfs": 2, "roce_mtu": 1500, "sriov_networks_ipam_routes": []}


def test_a_rails_per_vf_settings_are_converted_as_sriov_vf_converts_them():
    plan = [dict(PLAN[0], num_vfs=4, vfs=[{"id": "1", "trust": "yes", "link_state": "enable"}]), PLAN[1]]
    rails, problems = _rails({"roce_rails": plan, "roce_rail_overrides": {"rail1": {"vfs": [{"id": 0, "vlan": 7}]}}})
    assert problems == []
    assert [r.get("vfs") for r in rails] == [[{"id": 1, "trust": True, "link_state": "enable"}], [{"id": 0, "vlan": 7}]]


@pytest.mark.parametrize(("vfs", "field", "words"), [
    ([{"id": 8}], "roce_rails[rail1].vfs[id=8].id", "will have 8 VFs (ids 0..7)"),
    ([{"id": 1, "mac": "03:00:00:00:00:01"}], "roce_rails[rail1].vfs[id=1].mac", "multicast"),
    ([{"id": 1, "min_tx_rate": 500, "max_tx_rate": 100}], "roce_rails[rail1].vfs[id=1].min_tx_rate", "above max_tx_rate"),
    ([{"id": 1}, {"id": 1}], "roce_rails[rail1].vfs[id=1]", "listed twice"),
    ([{"id": "one"}], "roce_rails[rail1].vfs", "convert"),
    ([{"id": 1, "trusted": True}], "roce_rails[rail1].vfs", "trusted"),
])
def test_a_rails_bad_per_vf_settings_name_the_rail_the_vf_and_the_fix(vfs, field, words):
    problems = _rails({"roce_rails": PLAN, "roce_rail_overrides": {"rail1": {"vfs": vfs}}})[1]
    assert [p[0] for p in problems] == [field]
    assert words in problems[0][2]
    assert "roce_rail_overrides.rail1.vfs" in problems[0][3]


def test_roce_vfs_with_rails_is_refused_instead_of_setting_no_vf():
    problems = _rails({"roce_rails": PLAN, "roce_vfs": [{"id": 6, "vlan": 100}]})[1]
    assert [p[0] for p in problems] == ["roce_vfs"]
    assert "roce_rail_overrides.<rail>.vfs" in problems[0][3]


# ---- issue 43 class 10: a fractional prefix, and the one rail's pod network left beside roce_rails -----------------------

@pytest.mark.parametrize("prefix", [24.5, 24.0, True, "24.5"])
def test_a_subnet_prefix_that_is_not_a_whole_number_is_refused(prefix):
    """Before: int() took 24.5 as 24 (and True as 1) and planned the node's subnets with it."""
    plan = [dict(PLAN[0], subnet_prefix=prefix)]
    rails, problems = _rails({"roce_rails": plan})
    assert rails == []
    ((field, value, problem, fix),) = problems
    assert (field, value) == ("roce_rails[rail0].subnet_prefix", prefix)
    assert problem == "is not a prefix length between the pool's /16 and /30 (a whole number)"
    assert fix == "set subnet_prefix to the size of one node's pod subnet, e.g. 24"


def test_a_subnet_prefix_as_a_template_renders_it_is_fine():
    rails, problems = _rails({"roce_rails": [dict(PLAN[0], subnet_prefix="26")]})
    assert problems == [] and rails[0]["subnet"] == "10.101.0.0/26"


@pytest.mark.parametrize("leftover,field", [
    ({"roce_pod_subnet": "10.255.0.0/30", "roce_pod_gateway": "10.255.0.2"}, "roce_pod_subnet"),
    ({"roce_pod_gateway": "10.255.0.2"}, "roce_pod_gateway"),
])
def test_the_one_rail_pod_network_beside_rails_is_refused(leftover, field):
    """Before: ignored silently; the node's rails got their subnets from the pools, not what its host_vars said."""
    rails, problems = _rails(dict({"roce_rails": PLAN}, **leftover))
    ((f, value, problem, fix),) = problems
    assert (f, value) == (field, leftover[field])
    assert problem.startswith("is a one-rail setting and gives no rail its")
    assert fix.startswith("remove %s from this node's variables" % " and ".join(leftover))
    assert len(rails) == 2  # the rails themselves are still derived (and checked)

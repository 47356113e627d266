# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gateway plan per rail: one VLAN gateway per rail, routes only to the same rail of the other nodes."""

import ipaddress

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import (
    FabricErrors,
    fabric_table,
    gateway_args,
    vlan_gateway_plans,
)

RAILS = [
    {"name": "rail0", "pf": "enp12s0np0", "vlan": 101, "subnet_pool": "10.101.0.0/16", "subnet_prefix": 24},
    {"name": "rail1", "pf": "enp18s0np0", "vlan": 102, "subnet_pool": "10.102.0.0/16", "subnet_prefix": 24},
]


def fleet(n, **extra):
    hv = {"gpu%02d" % i: {"roce_rails": RAILS, "roce_node_index": i} for i in range(n)}
    for host, values in extra.items():
        hv[host] = dict(hv[host], **values)
    return hv


def test_each_rail_gets_its_gateway_and_routes_on_that_rail_only():
    hv = fleet(3)
    plans = vlan_gateway_plans(hv, "gpu01", list(hv))
    assert [p["name"] for p in plans] == ["enp12s0np0.101", "enp18s0np0.102"]
    rail0, rail1 = plans
    assert rail0["addresses"] == ["10.101.1.254/24"]
    assert rail0["routes"] == [
        {"dst": "10.101.0.0/24", "via": "10.101.0.254", "onlink": True},
        {"dst": "10.101.2.0/24", "via": "10.101.2.254", "onlink": True},
    ]
    # Never across rails: every rail-0 route leaves through a rail-0 gateway, inside the rail-0 pool.
    for plan, pool in ((rail0, "10.101.0.0/16"), (rail1, "10.102.0.0/16")):
        for route in plan["routes"]:
            assert ipaddress.ip_address(route["via"]) in ipaddress.ip_network(pool)
            assert ipaddress.ip_network(route["dst"]).subnet_of(ipaddress.ip_network(pool))
    assert rail1["num_vfs"] == 8
    assert rail1["sriov_pf"] == "enp18s0np0"


def test_one_rail_node_is_a_list_of_its_one_plan():
    hv = {
        "a": {"roce_pf": "p", "roce_pod_subnet": "10.0.0.0/30", "roce_pod_gateway": "10.0.0.2"},
        "b": {"roce_pf": "p", "roce_pod_subnet": "10.0.0.4/30", "roce_pod_gateway": "10.0.0.6"},
    }
    table = fabric_table(hv, list(hv))
    # The same gateway as the one-gateway filter's, with the rail's name ('') and VF settings, as any rail has them.
    assert vlan_gateway_plans(table, "a") == [dict(gateway_args(table, "a"), rail="", num_vfs=8, sriov_pf="p", vfs=[])]
    assert table["nodes"]["a"] == {"rails": [{"pf": "p", "vlan_id": 100, "mtu": 9000, "subnet": "10.0.0.0/30", "gateway": "10.0.0.2",
                                              "rail": "", "num_vfs": 8, "sriov_pf": "p"}]}


def test_the_one_gateway_plan_refuses_a_multirail_node_with_the_list_filter_as_fix():
    table = fabric_table(fleet(2), ["gpu00", "gpu01"])
    with pytest.raises(GpufabricError) as err:
        gateway_args(table, "gpu00")
    assert "vlan_gateway_plans" in str(err.value)


def test_rail_vlan_must_agree_and_the_message_names_host_rail_and_fix():
    hv = fleet(4, gpu03={"roce_rail_overrides": {"rail1": {"vlan": 112}}})
    with pytest.raises(GpufabricError) as err:
        fabric_table(hv, list(hv))
    msg = str(err.value)
    assert msg.startswith("gpu03: roce_rails[rail1].vlan=112"), msg
    assert "102" in msg and "override" in msg


def test_overlap_across_rails_and_nodes_is_refused_per_rail():
    # gpu01's rail1 override lands inside rail0's pool, on gpu00's rail0 subnet.
    hv = fleet(2, gpu01={"roce_rail_overrides": {"rail1": {"subnet": "10.101.0.0/24"}}})
    with pytest.raises((GpufabricError, FabricErrors)) as err:
        fabric_table(hv, list(hv))
    msg = str(err.value)
    assert "gpu01: roce_rails[rail1].subnet=" in msg and "10.101.0.0/24" in msg and "rail rail0" in msg, msg


def test_a_rails_bad_gateway_names_the_rail_field():
    hv = fleet(2, gpu01={"roce_rail_overrides": {"rail0": {"gateway": "10.9.9.9"}}})
    with pytest.raises(GpufabricError) as err:
        fabric_table(hv, list(hv))
    assert str(err.value).startswith("gpu01: roce_rails[rail0].gateway="), str(err.value)


def test_eight_rails_thousand_nodes_table_is_one_pass():
    rails = [{"name": "rail%d" % i, "pf": "enp%ds0np0" % (10 + i), "vlan": 101 + i, "subnet_pool": "10.%d.0.0/16" % (101 + i),
              "subnet_prefix": 24} for i in range(8)]
    hv = {"n%04d" % i: {"roce_rails": rails, "roce_node_index": i} for i in range(256)}
    table = fabric_table(hv, list(hv))
    plans = vlan_gateway_plans(table, "n0007")
    assert len(plans) == 8 and all(len(p["routes"]) == 255 for p in plans)


def test_a_rails_pf_names_are_checked_for_units_and_shell_before_phase_1():
    hv = fleet(2, gpu01={"roce_rail_overrides": {"rail1": {"sriov_pf": "eth0;reboot"}}})
    with pytest.raises(GpufabricError) as err:
        fabric_table(hv, list(hv))
    assert str(err.value).startswith('gpu01: roce_rails[rail1].sriov_pf="eth0;reboot"'), str(err.value)


def test_a_rails_per_vf_settings_reach_its_plan_and_only_its_plan():
    hv = fleet(2, gpu01={"roce_rail_overrides": {"rail1": {"vfs": [{"id": 6, "vlan": 100, "trust": True}]}}})
    table = fabric_table(hv, list(hv))
    assert [p["vfs"] for p in vlan_gateway_plans(table, "gpu01")] == [[], [{"id": 6, "vlan": 100, "trust": True}]]
    assert [p["vfs"] for p in vlan_gateway_plans(table, "gpu00")] == [[], []]
    # the table keeps no empty per-rail list for the 1,000 x 8 rails that set none
    assert "vfs" not in table["nodes"]["gpu00"]["rails"][0]


def test_a_rails_bad_vf_id_is_refused_for_the_whole_fabric_before_phase_1():
    hv = fleet(2, gpu01={"roce_rail_overrides": {"rail0": {"vfs": [{"id": 12}]}}})
    with pytest.raises(GpufabricError) as err:
        fabric_table(hv, list(hv))
    assert "gpu01: roce_rails[rail0].vfs[id=12].id=12: PF enp12s0np0 will have 8 VFs (ids 0..7)" in str(err.value)


def test_the_plan_refuses_a_leftover_one_rail_subnet_beside_rails_naming_the_node():
    """Issue 43 class 10: roce_pod_subnet left in a node's host_vars when it moved to roce_rails was ignored silently."""
    hv = fleet(3, gpu01={"roce_pod_subnet": "10.255.0.4/30", "roce_pod_gateway": "10.255.0.6"})
    with pytest.raises(GpufabricError) as exc:
        fabric_table(hv)
    assert (exc.value.host, exc.value.field, exc.value.value) == ("gpu01", "roce_pod_subnet", "10.255.0.4/30")
    assert "remove roce_pod_subnet and roce_pod_gateway from this node's variables" in exc.value.fix

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SR-IOV render per rail: one policy and one network per rail, the webhook rules per rail, named per rail."""

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import sriov
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import RenderValidationError
from ansible_collections.gpufabric.roce.plugins.plugin_utils._plan_builder import Inventory
from planned_render import render_sriov
from role_fallbacks import sriov_defaults

PLAN = [{"name": "rail%d" % i, "pf": "enp%ds0np0" % (10 + i), "vlan": 101 + i, "subnet_pool": "10.%d.0.0/16" % (101 + i)} for i in range(4)]


def inventory(n=2, **per_host):
    hosts = ["gpu%d" % i for i in range(n)]
    hv = {h: {"roce_rails": PLAN, "roce_node_index": i} for i, h in enumerate(hosts)}
    for h, extra in per_host.items():
        hv[h].update(extra)
    return hosts, hv


def errors(hosts, hv, defaults=None):
    # The render's refusals, or the plan builder's: a problem of the rails is refused where they are derived, first.
    with pytest.raises(GpufabricError) as err:
        render_sriov(hosts, hv, sriov_defaults(defaults))
    return getattr(err.value, "errors", [err.value])


def test_one_policy_and_network_per_rail_and_a_node_entry_with_every_rail():
    hosts, hv = inventory(2)
    out = render_sriov(hosts, hv, sriov_defaults())
    assert len(out["policies"]) == 8 and len(out["networks"]) == 8
    node = out["nodes"][1]
    assert node["policies"] == ["roce-gpu1-rail%d" % i for i in range(4)]
    assert node["resources"] == {"nvidia.com/roce_gpu1_rail%d" % i: 8 for i in range(4)}
    assert [i["name"] for i in node["interfaces"]] == sorted(r["pf"] for r in PLAN)
    assert node["rails"][3] == {"name": "rail3", "pf": "enp13s0np0", "vlan": 104, "subnet": "10.104.1.0/24", "gateway": "10.104.1.254",
                                "resource": "nvidia.com/roce_gpu1_rail3", "network": "roce-gpu1-rail3"}


def test_a_webhook_rule_broken_on_one_rail_names_the_rail_key():
    hosts, hv = inventory(2, gpu1={"roce_rail_overrides": {"rail2": {"num_vfs": 300}}})
    errs = errors(hosts, hv)
    assert [(e.host, e.field) for e in errs] == [("gpu1", "roce_rails[rail2].num_vfs")]
    assert "300" in str(errs[0]) and "Fix:" in str(errs[0])


def test_rails_with_a_cluster_wide_ipam_are_refused_with_the_fix():
    hosts, hv = inventory(1)
    errs = errors(hosts, hv, {"sriov_networks_ipam": "whereabouts", "sriov_networks_whereabouts_range": "10.0.0.0/16"})
    assert errs[0].field == "roce_rails" and "host-local" in errs[0].fix


def test_extra_policies_on_a_multirail_node_are_refused():
    hosts, hv = inventory(1, gpu0={"sriov_networks_extra_policies": [{"name": "dpdk", "pf_names": ["x"], "resource_name": "d"}]})
    errs = errors(hosts, hv)
    assert errs[0].field == "sriov_networks_extra_policies" and "roce_rails" in errs[0].problem


def test_same_node_index_twice_overlaps_on_every_rail_and_names_rail_and_fix():
    hosts, hv = inventory(2, gpu1={"roce_node_index": 0})
    errs = errors(hosts, hv)
    assert {e.field for e in errs} >= {"roce_rails[rail0].subnet"}
    assert all("roce_node_index" in e.fix for e in errs if e.field.endswith(".subnet"))


def test_one_rail_and_multirail_nodes_do_not_mix():
    # The rails are read from the plan's table, and one fabric is rails on every node or one rail on every node.
    hosts, hv = inventory(1)
    hosts.append("old")
    hv["old"] = {"roce_pf": "enp157s0np0", "roce_pod_subnet": "10.255.0.0/30", "roce_pod_gateway": "10.255.0.2"}
    errs = errors(hosts, hv)
    assert [(e.host, e.field) for e in errs] == [("old", "roce_rails")]
    assert "one fabric cannot mix the two" in errs[0].problem and "set roce_rails for all of them" in errs[0].fix


def test_the_rails_are_the_plans_table_not_a_derivation_of_the_inputs():
    # The table the plan builder made for another PF on gpu1's rail2: the render takes the table's, as the host phases do.
    hosts, hv = inventory(2)
    table = Inventory(hv, hosts).table()
    table["nodes"]["gpu1"]["rails"][2].update(pf="enp99s0np0", sriov_pf="enp99s0np0")
    out = sriov.render_sriov(hosts, hv, sriov_defaults(), table)
    pf_names = {p["metadata"]["name"]: p["spec"]["nicSelector"]["pfNames"] for p in out["policies"]}
    assert pf_names["roce-gpu1-rail2"] == ["enp99s0np0"] and pf_names["roce-gpu0-rail2"] == ["enp12s0np0"]
    assert out["nodes"][1]["rails"][2]["pf"] == "enp99s0np0"


def test_a_node_with_rails_the_table_does_not_have_is_refused():
    hosts, hv = inventory(2)
    table = Inventory(hv, hosts[:1]).table()
    with pytest.raises(RenderValidationError) as err:
        sriov.render_sriov(hosts, hv, sriov_defaults(), table)
    assert [(e.host, e.field, e.value) for e in err.value.errors] == [("gpu1", "roce_rails", ["rail0", "rail1", "rail2", "rail3"])]
    assert "has no entry in the fabric plan" in err.value.errors[0].problem

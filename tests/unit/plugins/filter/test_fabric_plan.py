# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric plan: computed once, JSON round trip, each node's slice, who may purge routes, refusals."""

import json
import random

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.filter.fabric_plan import FilterModule
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp
from ansible_collections.gpufabric.roce.plugins.module_utils._common import route_ranges as rr
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table, gateway_args_list

F = FilterModule().filters()
RAILS = [
    {"name": "rail0", "pf": "enp12s0np0", "vlan": 101, "subnet_pool": "10.101.0.0/16", "subnet_prefix": 24},
    {"name": "rail1", "pf": "enp18s0np0", "vlan": 102, "subnet_pool": "10.102.0.0/16", "subnet_prefix": 24},
]


def fleet(n):
    return {"gpu%02d" % i: {"roce_rails": RAILS, "roce_node_index": i} for i in range(n)}


def one_rail(n):
    return {"n%d" % i: {"roce_pf": "p0", "roce_pod_subnet": "10.0.0.%d/30" % (4 * i), "roce_pod_gateway": "10.0.0.%d" % (4 * i + 2)}
            for i in range(n)}


@pytest.mark.parametrize("hv", [fleet(5), one_rail(5)], ids=["two-rails", "one-rail"])
def test_a_slice_of_the_written_plan_equals_the_unsliced_plan_byte_for_byte(hv):
    plan = F["fabric_plan"](hv, list(hv))
    text = F["fabric_plan_json"](plan)
    # What a slice reads: the file, parsed; only some of the nodes are in that run.
    read = F["fabric_plan_read"](json.loads(text), [list(hv)[3]], "/tmp/plan.json")
    table = fabric_table(hv, list(hv))
    for host in hv:
        node = F["fabric_plan_node"](read, host)
        assert json.dumps(node["rails"]) == json.dumps(gateway_args_list(table, host))
        assert node["purge_routes"] is True


@pytest.mark.parametrize("hv", [fleet(5), one_rail(5)], ids=["two-rails", "one-rail"])
def test_the_plan_as_text_with_routes_apart_gives_the_same_gateways(hv):
    # What site.yml hands phase 2: the plan's JSON text, each node's routes apart from its rails.
    plan = F["fabric_plan"](hv, list(hv))
    text = F["fabric_plan_json"](plan)
    assert isinstance(text, str)
    for host in hv:
        whole = F["fabric_plan_node"](plan, host)
        apart = F["fabric_plan_node"](text, host, routes_apart=True)
        assert apart["purge_routes"] is whole["purge_routes"] is True
        assert [r["name"] for r in apart["rails"]] == [r["name"] for r in whole["rails"]]
        assert all("routes" not in r for r in apart["rails"])
        rejoined = [dict(r, routes=apart["routes"][r["name"]]) for r in apart["rails"]]
        assert json.dumps(rejoined, sort_keys=True) == json.dumps(whole["rails"], sort_keys=True)
        # The routes are the other nodes' subnets of the rail: none lost in the split.
        assert sum(len(v) for v in apart["routes"].values()) == (len(hv) - 1) * len(whole["rails"])


def test_plan_text_that_is_not_json_is_refused_without_quoting_it():
    with pytest.raises(AnsibleFilterError) as err:
        F["fabric_plan_node"]('{"kind": "gpufabric.roce/fabric-plan", "secret": "hunter2"', "n0")
    msg = str(err.value)
    assert "not JSON" in msg and "fabric_plan_json" in msg and "hunter2" not in msg


def test_order_survives_a_store_that_reorders_mappings():
    hv = one_rail(4)
    plan = F["fabric_plan"](hv, list(hv))
    shuffled = json.loads(json.dumps(plan, sort_keys=True))
    shuffled["fabric"]["nodes"] = dict(reversed(list(shuffled["fabric"]["nodes"].items())))
    read = F["fabric_plan_read"](shuffled, ["n0"])
    assert F["fabric_plan_node"](read, "n2") == F["fabric_plan_node"](plan, "n2")


@pytest.mark.parametrize("declared,awx,complete", [
    (None, None, True),        # ansible-playbook: hostvars has every host whatever --limit says
    (None, 4711, False),       # an AWX job: it may be a slice, and nothing in the job says so
    (True, 4711, True),        # the job template declares its inventory whole
    ("false", None, False),
])
def test_who_may_purge_routes(declared, awx, complete):
    plan = F["fabric_plan"](one_rail(2), complete=declared, awx_job_id=awx)
    assert plan["complete"] is complete
    assert F["fabric_plan_node"](plan, "n0")["purge_routes"] is complete


def test_a_bare_fabric_table_reads_as_complete_as_before():
    table = fabric_table(one_rail(2))
    assert F["fabric_plan_node"](table, "n1") == {"rails": gateway_args_list(table, "n1"), "purge_routes": True}


def test_a_node_of_the_run_absent_from_the_plan_is_refused():
    plan = F["fabric_plan"](one_rail(3))
    with pytest.raises(AnsibleFilterError) as err:
        F["fabric_plan_read"](plan, ["n1", "n7", "n8"], "/srv/plan.json")
    msg = str(err.value)
    assert msg.startswith('n7: roce_plan="/srv/plan.json": has no entry for n7, n8 of this run (the plan has 3 nodes)')
    assert "Fix: plan again from an inventory that has these nodes" in msg and "roce_plan_out" in msg


@pytest.mark.parametrize("mutate,problem", [
    (lambda p: p.update(kind="x"), "is not a fabric plan"),
    (lambda p: p.update(version=9), "was written by a newer version of this collection (plan version 9; this one reads version 4)"),
    (lambda p: p["fabric"]["nodes"]["n0"]["rails"][0].update(gateway="10.0.0.1"), "is damaged: its content does not match its fingerprint"),
])
def test_a_plan_that_is_not_one_is_refused(mutate, problem):
    plan = json.loads(F["fabric_plan_json"](F["fabric_plan"](one_rail(2))))
    mutate(plan)
    with pytest.raises(AnsibleFilterError) as err:
        F["fabric_plan_read"](plan, ["n0"])
    assert problem in str(err.value) and "Fix: " in str(err.value)


def test_roce_inventory_complete_must_be_a_boolean():
    with pytest.raises(AnsibleFilterError) as err:
        F["fabric_plan"](one_rail(2), complete="maybe")
    assert 'roce_inventory_complete="maybe": is not a boolean' in str(err.value)


def test_a_slice_read_from_text_cannot_change_the_next_slice():
    # The text's parse is kept for the next rail of the same task; what a caller does to its slice must not reach it.
    hv = fleet(3)
    for host in hv:
        hv[host]["roce_rail_overrides"] = {"rail0": {"vfs": [{"id": 0, "trust": True}]}}
    text = F["fabric_plan_json"](F["fabric_plan"](hv, list(hv)))
    first = F["fabric_plan_node"](text, "gpu01", routes_apart=True)
    first["rails"][0]["vfs"].append({"id": 7})
    first["routes"]["enp12s0np0.101"].clear()
    again = F["fabric_plan_node"](text, "gpu01", routes_apart=True)
    assert again["rails"][0]["vfs"] == [v for v in first["rails"][0]["vfs"] if v != {"id": 7}]
    assert len(again["routes"]["enp12s0np0.101"]) == 2


@pytest.mark.parametrize("hv", [fleet(40), one_rail(40)], ids=["two-rails", "one-rail"])
def test_route_ranges_stand_for_the_same_routes_and_are_two_per_rail_of_a_pool(hv):
    text = F["fabric_plan_json"](F["fabric_plan"](hv, list(hv)))
    for host in hv:
        whole = F["fabric_plan_node"](text, host, routes_apart=True)
        ranges = F["fabric_plan_node"](text, host, routes_apart=True, route_ranges=True)
        assert ranges["rails"] == whole["rails"] and ranges["purge_routes"] == whole["purge_routes"]
        for name, routes in whole["routes"].items():
            assert len(ranges["routes"][name]) <= 2  # one range each side of the node
            expanded = [r for e in ranges["routes"][name] for r in rr.expand(e)]
            assert sorted(expanded, key=json.dumps) == sorted(routes, key=json.dumps)


def test_a_slice_in_range_form_is_a_copy_each_time():
    # The compact slice is kept for the next rail of the same task; a caller changing it must not reach the next.
    text = F["fabric_plan_json"](F["fabric_plan"](fleet(6), list(fleet(6))))
    first = F["fabric_plan_node"](text, "gpu02", routes_apart=True, route_ranges=True)
    first["routes"]["enp12s0np0.101"][0]["count"] = 99
    again = F["fabric_plan_node"](text, "gpu02", routes_apart=True, route_ranges=True)
    assert [r["count"] for r in again["routes"]["enp12s0np0.101"]] == [2, 3]
    other = F["fabric_plan_node"](text, "gpu00", routes_apart=True, route_ranges=True)
    assert [r.get("count") for r in other["routes"]["enp12s0np0.101"]] == [5]


def _odd_fleet(n, seed):
    """Pool-carved rails with some nodes' subnets set by hand (outside the pattern, or at another gateway offset)."""
    rnd = random.Random(seed)
    hv = fleet(n)
    for i, host in enumerate(hv):
        if rnd.random() < 0.2:
            hv[host]["roce_rail_overrides"] = {"rail0": {"subnet": "10.201.%d.0/24" % i, "gateway": "10.201.%d.%d" % (i, rnd.choice([1, 254]))}}
    return hv


@pytest.mark.parametrize("hv", [fleet(30), one_rail(30), _odd_fleet(40, 1), _odd_fleet(40, 2)],
                         ids=["two-rails", "one-rail", "overrides-1", "overrides-2"])
def test_the_route_index_gives_each_node_exactly_the_compressed_routes(hv):
    # The index path (the text dumps wrote) and the derivation from the table give the same slice, byte for byte.
    plan = F["fabric_plan"](hv, list(hv))
    text = F["fabric_plan_json"](plan)
    assert "route_index" in json.loads(text)
    for host in hv:
        fast = F["fabric_plan_node"](text, host, routes_apart=True, route_ranges=True)
        slow = F["fabric_plan_node"](plan, host, routes_apart=True, route_ranges=True)
        assert json.dumps(fast) == json.dumps(slow), host


def test_an_index_brought_by_a_plan_file_is_replaced_not_trusted():
    hv = fleet(6)
    data = json.loads(F["fabric_plan_json"](F["fabric_plan"](hv, list(hv))))
    data["route_index"]["rail0"] = [{"dst": "192.0.2.0/24", "via": "192.0.2.1", "onlink": True}]
    read = F["fabric_plan_read"](data, ["gpu01"], "/tmp/plan.json")
    routes = F["fabric_plan_node"](F["fabric_plan_json"](read), "gpu01", routes_apart=True, route_ranges=True)["routes"]
    assert [r["dst"] for r in routes["enp12s0np0.101"]] == ["10.101.0.0/24", "10.101.2.0/24"]


def test_a_plan_read_back_names_each_rail_field_the_inventory_changed_since():
    hv = fleet(3)
    text = F["fabric_plan_json"](F["fabric_plan"](hv))
    plan = F["fabric_plan_read"](json.loads(text), list(hv), "/srv/plan.json")
    assert plan["read_from"] == "/srv/plan.json"
    assert "read_from" not in json.loads(F["fabric_plan_json"](plan))  # where it came from is not part of the plan
    F["fabric_plan_read"](json.loads(text), list(hv), "/srv/plan.json", hostvars=hv)  # unchanged: nothing to say
    changed = {h: dict(v) for h, v in hv.items()}
    changed["gpu01"]["roce_rail_overrides"] = {"rail1": {"subnet": "10.102.200.0/24", "gateway": "10.102.200.254"}}
    with pytest.raises(AnsibleFilterError) as err:
        F["fabric_plan_read"](json.loads(text), list(hv), "/srv/plan.json", hostvars=changed)
    lines = str(err.value).splitlines()
    assert lines[0] == "2 problems in the pod network of the nodes:"
    assert lines[1].startswith('gpu01: roce_rails[rail1].gateway="10.102.200.254": differs from the plan read from /srv/plan.json '
                               '("10.102.1.254"), which the host phases of this run would configure the node with, not with this '
                               'value. Fix: write the plan again')
    assert lines[2].startswith('gpu01: roce_rails[rail1].subnet="10.102.200.0/24": differs from the plan')
    # A rail more on every node: one change, one line naming every node.
    more = {h: dict(v, roce_rails=RAILS + [dict(RAILS[1], name="rail2", vlan=103, subnet_pool="10.103.0.0/16")]) for h, v in hv.items()}
    with pytest.raises(AnsibleFilterError) as err:
        F["fabric_plan_read"](json.loads(text), list(hv), "/srv/plan.json", hostvars=more)
    assert str(err.value).startswith('gpu00 (and 2 other nodes: gpu01, gpu02): roce_rails=["rail0", "rail1", "rail2"]: differs from the rails '
                                     'of the plan read from /srv/plan.json (rail0, rail1)')


def test_a_computed_plan_is_checked_for_completeness_only():
    hv = fleet(2)
    fp.check_whole_fabric(F["fabric_plan"](hv), ["gpu00"])  # sriov_networks_hosts is the user's choice then
    with pytest.raises(GpufabricError, match="roce_inventory_complete=false: this run may see part of the fabric only"):
        fp.check_whole_fabric(F["fabric_plan"](hv, complete=False), list(hv), declared=False)
    fp.check_whole_fabric(None, list(hv))  # no plan (the role on its own): nothing to check

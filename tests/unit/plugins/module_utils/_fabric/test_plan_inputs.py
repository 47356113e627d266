"""The plan's inputs: what the Kubernetes phases read of each node, carried lean (a shared value once, no default)."""

import json

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table

RAILS = [{"name": "rail0", "pf": "enp12s0np0", "vlan": 101, "subnet_pool": "10.101.0.0/16"},
         {"name": "rail1", "pf": "enp13s0np0", "vlan": 102, "subnet_pool": "10.102.0.0/16"}]


def fleet(n):
    # The rails as group_vars give them: one list every node inherits (its own copy, as plain() makes of it).
    return {"gpu%02d" % i: {"roce_rails": json.loads(json.dumps(RAILS)), "roce_node_name": "node-%d" % i} for i in range(n)}


def test_a_value_every_node_shares_is_carried_once_and_each_node_keeps_its_own():
    hv = fleet(4)
    hv["gpu02"]["sriov_networks_priority"] = 20
    packed = fp.pack_inputs(hv, list(hv))
    assert packed["common"] == {"roce_rails": RAILS}
    assert packed["nodes"] == {"gpu00": {"roce_node_name": "node-0"}, "gpu01": {"roce_node_name": "node-1"},
                               "gpu02": {"roce_node_name": "node-2", "sriov_networks_priority": 20}, "gpu03": {"roce_node_name": "node-3"}}
    assert json.dumps(packed).count("subnet_pool") == 2  # the rails once, not once per node
    # Unpacked, every node has exactly what it set: nothing added, nothing lost.
    plan = fp.build_plan(fabric_table(hv, list(hv)), True, hv)
    assert fp.node_inputs(plan) == hv
    assert fp.node_inputs(fp.dumps(plan), ["gpu03", "gpu09"]) == {"gpu03": hv["gpu03"]}  # from the text too; unknown left out


@pytest.mark.parametrize("value,other", [(1, True), (1, 1.0), ([1], [True])])
def test_values_equal_to_python_but_not_as_json_are_not_shared(value, other):
    packed = fp.pack_inputs({"a": {"k": value}, "b": {"k": other}}, ["a", "b"])
    assert packed["common"] == {} and packed["nodes"] == {"a": {"k": value}, "b": {"k": other}}


def test_a_variable_one_node_does_not_set_is_not_common():
    packed = fp.pack_inputs({"a": {"k": 1}, "b": {}}, ["a", "b"])
    assert packed == {"common": {}, "nodes": {"a": {"k": 1}, "b": {}}}
    assert fp.pack_inputs({}, ["a"]) == {"common": {}, "nodes": {}}


def test_a_plan_has_the_inputs_of_a_host_only_when_it_planned_it():
    hv = fleet(2)
    plan = fp.build_plan(fabric_table(hv, list(hv)), True, hv)
    assert fp.has_inputs(plan, ["gpu00", "gpu01"]) and not fp.has_inputs(plan, ["gpu00", "gpu07"])
    assert not fp.has_inputs(fp.build_plan(fabric_table(hv, list(hv)), True), ["gpu00"])  # built without inputs


def test_the_verify_slice_reads_names_and_each_rails_tos_from_the_plan():
    hv = fleet(2)
    for host in hv:
        hv[host]["roce_qos"] = {}
    hv["gpu01"]["roce_rail_overrides"] = {"rail1": {"network_name": "storage", "qos": {"tos": 98}}}
    del hv["gpu00"]["roce_node_name"]
    text = fp.dumps(fp.build_plan(fabric_table(hv, list(hv)), True, hv))
    out = fp.verify_slice(text, ["gpu01", "gpu00"])
    assert list(out) == ["gpu01", "gpu00"]
    assert out["gpu00"]["node_name"] == "gpu00" and out["gpu01"]["node_name"] == "node-1"
    assert out["gpu01"]["rails"] == [{"rail": "rail0"}, {"rail": "rail1", "network_name": "storage"}]
    assert out["gpu01"]["tos"] == {"rail0": 106, "rail1": 98} and out["gpu00"]["tos"] == {"rail0": 106, "rail1": 106}
    with pytest.raises(fp.GpufabricError, match=r'^gpu07: host="gpu07": is not in the fabric plan \(gpu07 not; it has 2 nodes\)'):
        fp.verify_slice(text, ["gpu00", "gpu07"])

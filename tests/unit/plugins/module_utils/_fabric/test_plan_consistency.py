"""A plan file edited by hand, its fingerprint computed again: its inputs and its fabric table must be one inventory's.

Each plan here is written by the plan builder (roce_plan_out's), edited in its file and read back as roce_plan is."""

import json

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _plan_builder as pb

RAILS = [{"name": "rail0", "pf": "enp12s0np0", "vlan": 101, "subnet_pool": "10.101.0.0/16"},
         {"name": "rail1", "pf": "enp18s0np0", "vlan": 102, "subnet_pool": "10.102.0.0/16"}]
FIX = ("Fix: write it again with roce_plan_out, which writes the inputs and the fabric from one inventory: ansible-playbook -i "
       "<the whole inventory> playbooks/site.yml --tags never -e roce_plan_out=<file> -e roce_inventory_complete=true")


def rails(n, count=2):
    return {"gpu%02d" % i: {"roce_rails": json.loads(json.dumps(RAILS[:count])), "roce_node_index": i, "roce_node_name": "node-%d" % i}
            for i in range(n)}


def one_rail(n):
    return {"n%d" % i: {"roce_pf": "p0", "roce_sriov_pf": "eni1", "roce_vlan_id": 100, "roce_pod_subnet": "10.0.0.%d/30" % (4 * i),
                        "roce_pod_gateway": "10.0.0.%d" % (4 * i + 2)} for i in range(n)}


def plan_file(tmp_path, hv, edit=None):
    """The plan the builder makes of ``hv``, written as roce_plan_out writes it; ``edit`` changes the file's document and
    computes its fingerprint again, as someone who knows the rule would."""
    path = tmp_path / "plan.json"
    path.write_text(fp.dumps(pb.build(hv, list(hv))))
    if edit is not None:
        data = fp.load(str(path))
        edit(data)
        data["fingerprint"] = fp.fingerprint(data)
        path.write_text(fp.dumps(data))
    return str(path)


def read(path, hosts, table_of=None, inputs_of=None):
    return fp.check_plan(fp.load(path), hosts, path, table_of, input_keys=pb.NODE_KEYS, inputs_of=inputs_of)


def refused(path, hosts, table_of=None, inputs_of=None):
    with pytest.raises(GpufabricError) as err:
        read(path, hosts, table_of, inputs_of)
    return str(err.value)


def run_of(hv):
    """``table_of`` and ``inputs_of`` as a run whose inventory is ``hv`` gives them to check_plan (the fabric_plan_read filter)."""
    return (lambda nodes, positions: fabric_table(hv, nodes, positions)), (lambda nodes: pb.node_inputs(hv, nodes))


@pytest.mark.parametrize("hv", [rails(3), one_rail(3)], ids=["rails", "one-rail"])
def test_a_plan_as_the_builder_wrote_it_is_read(tmp_path, hv):
    path = plan_file(tmp_path, hv)
    plan = read(path, list(hv))
    # What the Kubernetes phases read of each node, as the inventory gave it (roce_sriov_pf is the table's only).
    assert plan["read_from"] == path and fp.node_inputs(plan) == {h: {k: v for k, v in hv[h].items() if k in pb.NODE_KEYS} for h in hv}


def test_inputs_that_give_a_node_two_rails_where_its_table_has_one_are_refused(tmp_path):
    path = plan_file(tmp_path, rails(3, count=1), lambda p: p["inputs"]["nodes"]["gpu01"].update(roce_rails=RAILS))
    msg = refused(path, ["gpu00"])
    assert msg == ('gpu01: roce_plan="%s": is inconsistent (edited by hand): its inputs give roce_rails=["rail0", "rail1"], but its '
                   'fabric has rails=["rail0"]. %s' % (path, FIX)), msg


def test_a_rails_pf_edited_in_the_inputs_is_refused_naming_both_values(tmp_path):
    path = plan_file(tmp_path, rails(3), lambda p: p["inputs"]["nodes"]["gpu02"].update(roce_rail_overrides={"rail1": {"pf": "enp99s0np0"}}))
    msg = refused(path, ["gpu00", "gpu01", "gpu02"])
    assert msg == ('gpu02: roce_plan="%s": is inconsistent (edited by hand): its inputs give roce_rails[rail1].pf="enp99s0np0", but its '
                   'fabric has rails[rail1].pf="enp18s0np0". %s' % (path, FIX)), msg


def test_a_vlan_edited_in_the_common_inputs_is_one_line_for_every_node(tmp_path):
    def edit(p):
        p["inputs"]["common"]["roce_rails"][0]["vlan"] = 111

    path = plan_file(tmp_path, rails(3), edit)
    msg = refused(path, ["gpu00"])
    assert msg == ('gpu00 (and 2 other nodes: gpu01, gpu02): roce_plan="%s": is inconsistent (edited by hand): its inputs give '
                   'roce_rails[rail0].vlan=111, but its fabric has rails[rail0].vlan_id=101. %s' % (path, FIX)), msg


def test_a_one_rail_nodes_vlan_edited_in_its_table_only_is_refused(tmp_path):
    # The table alone is one the rules make (every node on VLAN 200): its inputs still say 100.
    def edit(p):
        for entry in p["fabric"]["nodes"].values():
            entry["rails"][0]["vlan_id"] = 200
        p["fabric"]["vlan_id"] = 200

    path = plan_file(tmp_path, one_rail(2), edit)
    msg = refused(path, ["n0"])
    assert msg == ('n0 (and 1 other node: n1): roce_plan="%s": is inconsistent (edited by hand): its inputs give roce_vlan_id=100, '
                   'but its fabric has vlan_id=200. %s' % (path, FIX)), msg


def test_inputs_the_rules_refuse_are_named_with_the_rules_problem(tmp_path):
    path = plan_file(tmp_path, one_rail(2), lambda p: p["inputs"]["nodes"]["n1"].update(roce_pod_gateway="10.0.0.9"))
    msg = refused(path, ["n0"])
    assert msg == ('n1: roce_plan="%s": is inconsistent (edited by hand): its inputs give roce_pod_gateway="10.0.0.9", which the '
                   'rules refuse (is outside roce_pod_subnet 10.0.0.4/30), where its fabric has an entry for the node. '
                   '%s' % (path, FIX)), msg


def test_a_table_that_is_invalid_itself_is_named_first(tmp_path):
    # Both are edited: the table's own problem is what check_table names, as before inputs were compared.
    def edit(p):
        p["fabric"]["nodes"]["n1"]["rails"][0]["mtu"] = 60
        p["inputs"]["nodes"]["n1"]["roce_mtu"] = 61

    path = plan_file(tmp_path, one_rail(2), edit)
    assert refused(path, ["n0"]).startswith('n1: roce_plan="%s": is invalid: the node\'s mtu=60: must be between 68 and 9978' % path)


def test_a_run_whose_inventory_gives_the_table_still_refuses_edited_inputs(tmp_path):
    # The run's own variables make the plan's table, so the table needs no second check; the inputs still do.
    hv = rails(3)
    path = plan_file(tmp_path, hv, lambda p: p["inputs"]["nodes"]["gpu00"].update(roce_rail_overrides={"rail0": {"vlan": 109}}))

    msg = refused(path, list(hv), *run_of(hv))
    assert msg.startswith('gpu00: roce_plan="%s": is inconsistent (edited by hand): its inputs give roce_rails[rail0].vlan=109, but '
                          'its fabric has rails[rail0].vlan_id=101. ' % path), msg


def test_an_edit_made_to_both_alike_is_read_as_one_inventorys(tmp_path):
    # A plan edited by hand in both places alike is a plan some inventory gives: only the drift check can tell it from the run's.
    def edit(p):
        p["inputs"]["nodes"]["gpu01"]["roce_rail_overrides"] = {"rail1": {"pf": "enp99s0np0"}}
        p["fabric"]["nodes"]["gpu01"]["rails"][1].update(pf="enp99s0np0", sriov_pf="enp99s0np0")

    path = plan_file(tmp_path, rails(2), edit)
    assert read(path, ["gpu01"])["fabric"]["nodes"]["gpu01"]["rails"][1]["pf"] == "enp99s0np0"


def test_a_run_of_every_node_with_the_plans_inputs_and_table_makes_no_second_pass(tmp_path, monkeypatch):
    hv = rails(3)
    path = plan_file(tmp_path, hv)
    made = []
    monkeypatch.setattr(fp, "fabric_table", lambda *a, **kw: made.append(a) or fabric_table(*a, **kw))
    assert read(path, list(hv), *run_of(hv))["order"] == list(hv)
    assert made == []  # the run's own table_of made the table; its inputs are the plan's
    hv["gpu01"]["sriov_networks_priority"] = 20  # an input the rails do not read, changed since the plan was written
    assert read(path, list(hv), *run_of(hv))["order"] == list(hv)
    assert len(made) == 1  # the plan's inputs checked against its table, once

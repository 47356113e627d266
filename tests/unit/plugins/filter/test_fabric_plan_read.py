# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A plan read back (roce_plan) is trusted no more than the inventory (issue 43):

- a file that is no plan (missing, a directory, empty, cut short) is refused naming roce_plan and the path;
- its table is held to the rules of a computed plan, also when the fingerprint was computed again after the edit;
- the fingerprint covers the whole plan (complete, the node count, the order), and an older plan is refused as such;
- the run's own nodes must still have the variables that give their entries (not only in the sriov phase).
Each refusal names the host (or all roce_nodes), roce_plan and its value, and a fix; one edit is one line."""

import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.filter.fabric_plan import FilterModule
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp

F = FilterModule().filters()
RAILS = [
    {"name": "rail0", "pf": "enp12s0np0", "vlan": 101, "subnet_pool": "10.101.0.0/16", "subnet_prefix": 24},
    {"name": "rail1", "pf": "enp18s0np0", "vlan": 102, "subnet_pool": "10.102.0.0/16", "subnet_prefix": 24},
]
FIX = "Fix: write the plan again with this collection: ansible-playbook -i <the whole inventory> playbooks/site.yml --tags never -e roce_plan_out="


def rails(n, qos=False):
    hv = {"gpu%02d" % i: {"roce_rails": RAILS, "roce_node_index": i} for i in range(n)}
    if qos:
        for host_vars in hv.values():
            host_vars["roce_qos"] = {}
        hv["gpu01"]["roce_rail_overrides"] = {"rail0": {"vfs": [{"id": 0, "trust": True}], "qos": {"tos": 98}}}
    return hv


def one_rail(n, qos=False):
    hv = {"n%d" % i: {"roce_pf": "p0", "roce_pod_subnet": "10.0.0.%d/30" % (4 * i), "roce_pod_gateway": "10.0.0.%d" % (4 * i + 2)}
          for i in range(n)}
    if qos:
        hv["n1"]["roce_qos"] = {"tos": 98}
    return hv


def written(hv, **kw):
    """The plan as roce_plan_out writes it, parsed."""
    return json.loads(F["fabric_plan_json"](F["fabric_plan"](hv, list(hv), **kw)))


def edited(plan, edit):
    """``plan`` changed by ``edit`` and its fingerprint computed again, as someone who knows the rule would."""
    plan = json.loads(json.dumps(plan))
    edit(plan)
    plan["fingerprint"] = fp.fingerprint(plan)
    return plan


def refusal(data, run_hosts, source="/srv/plan.json", **kw):
    with pytest.raises(AnsibleFilterError) as err:
        F["fabric_plan_read"](data, run_hosts, source, **kw)
    return str(err.value)


# ---- class 3: a file that is no plan, a table the rules would not make ------------------------------------------------


@pytest.mark.parametrize("content,problem", [
    ("", "is empty"),
    ("\n", "is empty"),
    (None, "is not JSON (cut short, or not the file roce_plan_out wrote): "),
], ids=["empty", "blank", "cut-short"])
def test_a_plan_file_that_is_empty_or_cut_short_is_refused_naming_it(tmp_path, content, problem):
    path = tmp_path / "plan.json"
    text = F["fabric_plan_json"](F["fabric_plan"](one_rail(3)))
    path.write_text(text[: len(text) // 2] if content is None else content)
    msg = refusal(str(path), ["n0"], None)
    assert msg.startswith('all roce_nodes: roce_plan="%s": %s' % (path, problem)), msg
    assert FIX in msg


def test_a_directory_or_a_missing_file_is_refused_naming_it(tmp_path):
    msg = refusal(str(tmp_path), ["n0"], None)
    assert msg.startswith('all roce_nodes: roce_plan="%s": is a directory, not a plan file. Fix: give roce_plan the absolute path of '
                          'the file roce_plan_out wrote' % tmp_path), msg
    missing = tmp_path / "nope.json"
    msg = refusal(str(missing), ["n0"], None)
    assert msg.startswith('all roce_nodes: roce_plan="%s": does not exist on the controller. Fix: ' % missing), msg


def test_a_plan_file_is_read_by_path(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(F["fabric_plan_json"](F["fabric_plan"](one_rail(3))))
    plan = F["fabric_plan_read"](str(path), ["n1"])
    assert plan["read_from"] == str(path) and plan["order"] == ["n0", "n1", "n2"]


@pytest.mark.parametrize("hv", [one_rail(4, qos=True), rails(4, qos=True)], ids=["one-rail", "two-rails"])
def test_a_plan_as_written_passes_the_rules(hv):
    # QoS profiles, per-VF settings and a node's own QoS: the rules make the table again, exactly.
    plan = written(hv)
    assert F["fabric_plan_read"](plan, list(hv)[:1], "/srv/plan.json")["fabric"] == plan["fabric"]


@pytest.mark.parametrize("hv,edit,line", [
    (one_rail(4), lambda p: p["fabric"]["nodes"]["n2"]["rails"][0].update(vlan_id=4095),
     'n2: roce_plan="/srv/plan.json": is invalid: the node\'s vlan_id=4095: is not a VLAN id in 1..4094. '),
    (rails(4), lambda p: p["fabric"]["nodes"]["gpu02"]["rails"][1].update(vlan_id=4095),
     'gpu02: roce_plan="/srv/plan.json": is invalid: the node\'s rails[rail1].vlan_id=4095: is not a VLAN id in 1..4094. '),
    (one_rail(4), lambda p: p["fabric"]["nodes"]["n2"]["rails"][0].update(mtu=60),
     'n2: roce_plan="/srv/plan.json": is invalid: the node\'s mtu=60: must be between 68 and 9978 (bytes). '),
    (rails(4), lambda p: p["fabric"]["nodes"]["gpu02"]["rails"][0].update(num_vfs=-1),
     'gpu02: roce_plan="/srv/plan.json": is invalid: the node\'s rails[rail0].num_vfs=-1: is not a VF count (a whole number, 0 or more). '),
    (one_rail(4), lambda p: p["fabric"]["nodes"]["n2"]["rails"][0].update(subnet="10.0.0.0/29", gateway="10.0.0.6"),
     'n2: roce_plan="/srv/plan.json": is invalid: the node\'s subnet="10.0.0.0/29": overlaps subnet 10.0.0.0/30 of n0. '),
    (one_rail(4), lambda p: p["fabric"]["nodes"]["n2"]["rails"][0].update(gateway="10.0.0.22"),
     'n2: roce_plan="/srv/plan.json": is invalid: the node\'s gateway="10.0.0.22": is outside subnet 10.0.0.8/30. '),
    (one_rail(4), lambda p: p["fabric"]["nodes"]["n2"]["rails"][0].update(pf="bad name"),
     'n2: roce_plan="/srv/plan.json": is invalid: the node\'s pf="bad name": '),
    (one_rail(4, qos=True), lambda p: p["fabric"]["nodes"]["n2"]["rails"][0].update(qos=7),
     'n2: roce_plan="/srv/plan.json": is invalid: the node\'s qos=7 names no entry of the fabric\'s qos_profiles (1). '),
    (rails(4, qos=True), lambda p: p["fabric"]["nodes"]["gpu01"]["rails"][0]["vfs"][0].update(id=99),
     'gpu01: roce_plan="/srv/plan.json": is invalid: the node\'s rails[rail0].vfs[id=99].id=99: PF enp12s0np0 will have 8 VFs (ids 0..7). '),
], ids=["vlan-4095", "rail-vlan-4095", "mtu-60", "rail-num-vfs", "overlap", "gateway-outside", "pf-name", "qos-index", "vf-id"])
def test_a_value_edited_to_something_invalid_is_refused_by_the_rules_of_a_computed_plan(hv, edit, line):
    msg = refusal(edited(written(hv), edit), list(hv)[:1])
    assert msg.startswith(line), msg
    assert FIX in msg and "\n" not in msg


@pytest.mark.parametrize("hv,edit,line", [
    (one_rail(3), lambda p: p["fabric"]["nodes"]["n1"]["rails"][0].pop("mtu"), 'n1: roce_plan="/srv/plan.json": is invalid: the node\'s entry has no mtu. '),
    (one_rail(3), lambda p: p["fabric"]["nodes"]["n1"]["rails"][0].pop("gateway"),
     'n1: roce_plan="/srv/plan.json": is invalid: the node\'s entry has no gateway. '),
    (rails(3), lambda p: p["fabric"]["nodes"]["gpu01"]["rails"][1].pop("num_vfs"),
     'gpu01: roce_plan="/srv/plan.json": is invalid: the node\'s entry has no rails[rail1].num_vfs. '),
    (rails(3), lambda p: p["fabric"]["nodes"]["gpu01"]["rails"][1].pop("subnet"),
     'gpu01: roce_plan="/srv/plan.json": is invalid: the node\'s entry has no rails[rail1].subnet. '),
    (one_rail(3), lambda p: p["fabric"]["nodes"]["n1"]["rails"][0].update(mtu="9000"),
     'n1: roce_plan="/srv/plan.json": is invalid: the node\'s entry has mtu="9000" where the rules make 9000 of it. '),
    (one_rail(3), lambda p: p["fabric"]["nodes"]["n1"]["rails"][0].update(routes=[]),
     'n1: roce_plan="/srv/plan.json": is invalid: the node\'s entry has routes, which a plan does not have. '),
    (one_rail(3), lambda p: p["fabric"].update(vlan_id=7),
     'all roce_nodes: roce_plan="/srv/plan.json": is invalid: its fabric\'s vlan_id is 7 where the rules make 100 of its nodes. '),
    (one_rail(3), lambda p: p["fabric"]["nodes"].update(n1="x"), 'n1: roce_plan="/srv/plan.json": is invalid: the node\'s entry is not a mapping. '),
    (one_rail(3), lambda p: p.pop("complete"), 'all roce_nodes: roce_plan="/srv/plan.json": is damaged: it has no complete. '),
    (one_rail(3), lambda p: p.pop("order"), 'all roce_nodes: roce_plan="/srv/plan.json": is damaged: it has no order. '),
    (one_rail(3), lambda p: p.update(complete="yes"), 'all roce_nodes: roce_plan="/srv/plan.json": is damaged: its complete is "yes", not true or false. '),
    (one_rail(3), lambda p: p.update(nodes=5), 'all roce_nodes: roce_plan="/srv/plan.json": is damaged: its node count is 5, but it has 3 nodes. '),
    (one_rail(3), lambda p: p.update(extra=1), 'all roce_nodes: roce_plan="/srv/plan.json": is damaged: it has key(s) a plan does not have: extra. '),
    (one_rail(3), lambda p: p["inputs"].pop("common"),
     'all roce_nodes: roce_plan="/srv/plan.json": is damaged: its inputs are not the common and per-node variables a plan carries. '),
    (one_rail(3), lambda p: p["inputs"]["nodes"].update(n9={}),
     'all roce_nodes: roce_plan="/srv/plan.json": is damaged: it has inputs for n9, which are not among its nodes. '),
    (one_rail(3), lambda p: p["inputs"]["nodes"]["n1"].update(ansible_host="10.0.0.1"),
     'n1: roce_plan="/srv/plan.json": is invalid: its inputs have variable(s) no phase reads of a node: ansible_host. '),
], ids=["no-mtu", "no-gateway", "rail-no-num-vfs", "rail-no-subnet", "mtu-as-text", "key-added", "table-vlan", "entry-not-mapping",
        "no-complete", "no-order", "complete-not-bool", "node-count", "plan-key-added", "inputs-no-common", "inputs-stray-node",
        "inputs-unknown-variable"])
def test_a_key_removed_or_added_with_the_fingerprint_computed_again_is_refused(hv, edit, line):
    msg = refusal(edited(written(hv), edit), list(hv)[:1])
    assert msg.startswith(line), msg
    assert FIX in msg


def test_one_edit_on_every_node_is_one_line():
    hv = one_rail(30)
    plan = edited(written(hv), lambda p: [p["fabric"]["nodes"][n]["rails"][0].update(vlan_id=4095) for n in p["order"]])
    msg = refusal(plan, ["n0"])
    assert msg.startswith('n0 (and 29 other nodes: n1, n2, n3, ...): roce_plan="/srv/plan.json": is invalid: the node\'s vlan_id=4095: '
                          'is not a VLAN id in 1..4094. '), msg
    assert "\n" not in msg


def test_the_rule_problems_of_several_nodes_are_one_message():
    hv = one_rail(4)
    plan = edited(written(hv), lambda p: (p["fabric"]["nodes"]["n1"]["rails"][0].update(mtu=60), p["fabric"]["nodes"]["n3"]["rails"][0].update(vlan_id=0)))
    lines = refusal(plan, ["n0"]).splitlines()
    assert lines[0] == "2 problems in the plan read from /srv/plan.json:"
    assert lines[1].startswith('n1: roce_plan="/srv/plan.json": is invalid: the node\'s mtu=60: ')
    assert lines[2].startswith('n3: roce_plan="/srv/plan.json": is invalid: the node\'s vlan_id=0: ')


# ---- class 4: the fingerprint covers the whole plan --------------------------------------------------------------------


@pytest.mark.parametrize("edit", [
    lambda p: p.update(complete=True),
    lambda p: p.update(order=list(reversed(p["order"]))),
    lambda p: p.update(nodes=p["nodes"] + 1),
    lambda p: p["fabric"]["nodes"]["n1"]["rails"][0].update(gateway="10.0.0.5"),
], ids=["complete", "order", "node-count", "table"])
def test_a_plan_edited_by_hand_is_refused_as_damaged(edit):
    # A slice's plan (complete: false) set to true would make every gateway purge the routes it does not list.
    plan = written(one_rail(3), complete=False)
    edit(plan)
    msg = refusal(plan, ["n0"])
    assert msg.startswith('all roce_nodes: roce_plan="/srv/plan.json": is damaged: its content does not match its fingerprint '
                          '(edited by hand or cut short). '), msg
    assert FIX in msg


def test_the_fingerprint_covers_every_key_of_the_plan_and_not_the_derived_ones():
    plan = written(one_rail(3))
    for key in fp.PLAN_KEYS:
        if key != "fingerprint":
            assert fp.fingerprint(dict(plan, **{key: "changed"})) != plan["fingerprint"], key
    # The route index is derived when the text is written, and where a plan was read from when it is read.
    assert fp.fingerprint(dict(plan, route_index={}, read_from="/x")) == plan["fingerprint"]
    # Mappings reordered (an AWX artifact) are the same plan; the order of the nodes is the order list, covered as it is.
    assert fp.fingerprint(json.loads(json.dumps(plan, sort_keys=True))) == plan["fingerprint"]


@pytest.mark.parametrize("version,problem,fix", [
    (2, "was written by an older version of this collection (plan version 2; this one reads version 4, which carries what "
        "the Kubernetes phases read of each node)", "Fix: write it again with roce_plan_out: ansible-playbook -i <the whole inventory>"),
    (3, "was written by an older version of this collection (plan version 3; this one reads version 4, which carries what "
        "the Kubernetes phases read of each node)", "Fix: write it again with roce_plan_out: ansible-playbook -i <the whole inventory>"),
    (5, "was written by a newer version of this collection (plan version 5; this one reads version 4)",
     "Fix: read it with the collection that wrote it, or write the plan again"),
    ("4", 'has plan version "4"; this collection reads version 4', FIX),
])
def test_a_plan_of_another_version_is_refused_as_such(version, problem, fix):
    plan = dict(written(one_rail(2)), version=version)
    msg = refusal(plan, ["n0"])
    assert msg.startswith('all roce_nodes: roce_plan="/srv/plan.json": %s. ' % problem), msg
    assert fix in msg


# ---- class 5: the run's own nodes against the plan, whenever one is read ------------------------------------------------


def test_a_plan_the_inventory_moved_on_from_is_refused_for_the_nodes_of_the_run():
    hv = one_rail(4)
    plan = written(hv)
    assert F["fabric_plan_read"](plan, ["n1", "n2"], "/srv/plan.json", hostvars=hv)["read_from"] == "/srv/plan.json"
    now = json.loads(json.dumps(hv))
    now["n2"].update(roce_pod_subnet="10.0.1.8/30", roce_pod_gateway="10.0.1.10")
    msg = refusal(plan, ["n1", "n2"], hostvars=now)
    lines = msg.splitlines()
    assert lines[0] == "2 problems in the pod network of the nodes:"
    assert lines[1].startswith('n2: roce_pod_gateway="10.0.1.10": differs from the plan read from /srv/plan.json ("10.0.0.10"), which the '
                               'host phases of this run would configure the node with, not with this value. Fix: write the plan again from '
                               'this inventory and run the host phases with it'), msg
    assert lines[2].startswith('n2: roce_pod_subnet="10.0.1.8/30": differs from the plan read from /srv/plan.json ("10.0.0.8/30")'), msg
    # A node of the plan outside this run (a slice, --limit) is its own run's business.
    assert F["fabric_plan_read"](plan, ["n1", "n3"], "/srv/plan.json", hostvars=now)["order"] == ["n0", "n1", "n2", "n3"]


def test_a_change_in_group_vars_is_one_line_for_all_the_nodes():
    hv = rails(12)
    plan = written(hv)
    now = {h: dict(v, roce_mtu=4200) for h, v in hv.items()}
    msg = refusal(plan, list(hv), hostvars=now)
    assert msg.splitlines()[1].startswith('gpu00 (and 11 other nodes: gpu01, gpu02, gpu03, ...): roce_rails[rail0].mtu=4200: differs from the '
                                          'plan read from /srv/plan.json (9000)'), msg
    assert len(msg.splitlines()) == 3  # one line per rail, not one per node and rail


def test_a_slice_is_compared_at_its_nodes_places_in_the_plan():
    # Without roce_node_index a node's subnets are carved at its place in roce_nodes; an AWX slice has every Nth node, so
    # its own places differ, but the plan's order says where each node was.
    hv = {"gpu%02d" % i: {"roce_rails": RAILS} for i in range(6)}
    plan = written(hv)
    sliced = {h: hv[h] for h in ("gpu01", "gpu04")}
    assert F["fabric_plan_read"](plan, list(sliced), "/srv/plan.json", hostvars=sliced)["read_from"] == "/srv/plan.json"


def test_a_plan_that_is_wrong_is_named_before_the_drift_it_would_cause():
    hv = one_rail(3)
    plan = edited(written(hv), lambda p: p["fabric"]["nodes"]["n1"]["rails"][0].update(vlan_id=4095))
    msg = refusal(plan, list(hv), hostvars=hv)
    assert msg.startswith('n1: roce_plan="/srv/plan.json": is invalid: the node\'s vlan_id=4095: is not a VLAN id'), msg


@pytest.mark.parametrize("hv", [one_rail(4), rails(4)], ids=["one-rail", "two-rails"])
def test_the_plan_carries_the_nodes_whose_qos_the_operator_applies(hv):
    # roce_qos_via: operator, wherever the inventory sets it (a node here), is in the plan, so the operator phase deploys
    # the NIC Configuration Operator whichever group_vars file said so; host (the default) leaves the entry as it was.
    first, second = list(hv)[:2]
    hv[first]["roce_qos_via"] = "operator"
    hv[second]["roce_qos_via"] = "host"
    plan = written(hv)
    assert [n for n, e in plan["fabric"]["nodes"].items() if "qos_via" in e] == [first]
    assert plan["fabric"]["nodes"][first]["qos_via"] == "operator"
    assert fp.qos_via_operator(plan["fabric"]) and not fp.qos_via_operator(written(one_rail(2))["fabric"])
    # read back: the rules make the same table; and the inventory moving away from it is drift
    assert F["fabric_plan_read"](plan, [first], "/srv/plan.json", hostvars=hv)["fabric"] == plan["fabric"]
    hv[first]["roce_qos_via"] = "host"
    assert "roce_qos_via" in refusal(plan, [first], hostvars=hv)


def test_a_qos_via_edited_into_a_plan_is_refused():
    plan = edited(written(one_rail(3)), lambda p: p["fabric"]["nodes"]["n1"].update(qos_via="nic-operator"))
    assert "n1" in refusal(plan, ["n1"])

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verification's slice of the plan (_fabric_plan_verify), and test pods that request one VF of every rail."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.filter.fabric_plan import FilterModule as PlanFilters
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov import SRIOV_DEFAULT_KEYS
from planned_render import render_sriov
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.rdma_pods import pod_manifests, pod_placement
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.rdma_report import (
    ReportError,
    build_matrix,
    plan,
    render_table,
)
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults

F = PlanFilters().filters()
PLAN = [{"name": "rail%d" % i, "pf": "enp%ds0np0" % (10 + i), "vlan": 101 + i, "subnet_pool": "10.%d.0.0/16" % (101 + i)} for i in range(3)]


def _attachments(hv, hosts, *naming):
    return {n["host"]: n for n in F["_fabric_plan_verify"](F["fabric_plan_json"](F["fabric_plan"](hv, hosts)), hosts, *naming)}


def test_attachments_name_what_the_sriov_render_names():
    hosts = ["gpu-a", "gpu-b"]
    hv = {h: {"roce_rails": PLAN, "roce_node_index": i, "roce_node_name": h} for i, h in enumerate(hosts)}
    hv["gpu-b"]["roce_rail_overrides"] = {"rail2": {"network_name": "storage", "resource_name": "storage_b"}}
    rendered = render_sriov(hosts, hv, with_role_defaults("sriov_networks", SRIOV_DEFAULT_KEYS))
    nodes = _attachments(hv, hosts)
    for host in hosts:
        entry = next(n for n in rendered["nodes"] if n["host"] == host)
        assert [(a["network"], a["resource"]) for a in nodes[host]["rails"]] == [(r["network"], r["resource"]) for r in entry["rails"]]
    assert nodes["gpu-b"]["rails"][2] == {"rail": "rail2", "network": "storage-gpu-b", "resource": "nvidia.com/storage_b"}
    assert nodes["gpu-b"]["tos"] == {"rail0": None, "rail1": None, "rail2": None}  # no QoS
    one = {"one-rail": {"roce_pf": "p", "roce_pod_subnet": "10.0.0.0/30", "roce_pod_gateway": "10.0.0.2", "rdma_verify_pod_network": "mine"}}
    want = {"host": "one-rail", "node_name": "one-rail", "network": "mine", "resource": "nvidia.com/roce_one_rail", "rails": [], "tos": {"": None}}
    assert _attachments(one, ["one-rail"])["one-rail"] == want


def test_each_rails_tos_is_the_plans_and_a_host_outside_it_is_refused():
    hosts = ["gpu-a", "gpu-b"]
    hv = {h: {"roce_rails": [dict(r) for r in PLAN], "roce_node_index": i, "roce_qos": {}} for i, h in enumerate(hosts)}
    hv["gpu-b"]["roce_rail_overrides"] = {"rail1": {"qos": {"tos": 98}}}
    nodes = _attachments(hv, hosts)
    assert nodes["gpu-a"]["tos"] == {"rail0": 106, "rail1": 106, "rail2": 106}
    assert nodes["gpu-b"]["tos"] == {"rail0": 106, "rail1": 98, "rail2": 106}
    text = F["fabric_plan_json"](F["fabric_plan"](hv, hosts))
    with pytest.raises(AnsibleFilterError, match=r"^gpu-z: host=\"gpu-z\": is not in the fabric plan .*Fix: add the host to group roce_nodes"):
        F["_fabric_plan_verify"](text, ["gpu-a", "gpu-z"])


def test_without_a_plan_the_role_plans_from_the_inventory_and_without_a_pod_network_reads_the_inputs_only():
    hv = {"n1": {"roce_pf": "p", "roce_qos": {"tos": 96}, "roce_node_name": "k8s-n1"}}  # whereabouts: no node subnet
    (node,) = F["_fabric_plan_verify"]("", ["n1"], "roce", "nvidia.com", "whereabouts", hostvars=hv)
    assert node == {"host": "n1", "node_name": "k8s-n1", "network": "roce", "resource": "nvidia.com/roce", "rails": [], "tos": {"": 96}}
    hv = {h: {"roce_rails": PLAN, "roce_node_index": i} for i, h in enumerate(["gpu-a", "gpu-b"])}
    nodes = F["_fabric_plan_verify"]("", ["gpu-b"], hostvars=hv, nodes=["gpu-a", "gpu-b"])
    assert [r["network"] for r in nodes[0]["rails"]] == ["roce-gpu-b-rail0", "roce-gpu-b-rail1", "roce-gpu-b-rail2"]
    with pytest.raises(AnsibleFilterError, match="no plan"):
        F["_fabric_plan_verify"]("", ["gpu-b"])


def test_a_rail_without_a_subnet_is_refused_with_host_field_and_fix():
    with pytest.raises(AnsibleFilterError, match=r"^n: roce_rails\[rail0\]\.subnet=null: .*Fix: set subnet_pool"):
        F["fabric_plan"]({"n": {"roce_rails": [{"name": "rail0", "pf": "p"}]}}, ["n"])


def test_a_multirail_pod_requests_one_vf_of_every_rail_and_attaches_every_rail():
    att = _attachments({"gpu-a": {"roce_rails": PLAN}}, ["gpu-a"])["gpu-a"]["rails"]
    pods = pod_manifests([{"host": "gpu-a", "node_name": "gpu-a", "network": "ignored", "resource": "ignored/x", "rails": att}],
                         {"image": "perftest:1"})
    pod = pods[0]
    assert pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == "roce-gpu-a-rail0,roce-gpu-a-rail1,roce-gpu-a-rail2"
    want = {"nvidia.com/roce_gpu_a_rail%d" % i: "1" for i in range(3)}
    assert pod["spec"]["containers"][0]["resources"] == {"requests": want, "limits": want}
    live = [{"metadata": {"name": pod["metadata"]["name"]}, "spec": {"nodeName": "gpu-a"},
             "status": {"conditions": [{"type": "Ready", "status": "True"}]}}]
    line = pod_placement(live, pods)[0]["line"]
    assert line == "rdma-verify-gpu-a: Ready on gpu-a with 1 nvidia.com/roce_gpu_a_rail0, nvidia.com/roce_gpu_a_rail1, nvidia.com/roce_gpu_a_rail2"


def test_host_mode_plan_rings_each_rail_to_itself_and_reports_per_rail():
    nodes = ["a", "b", "c"]
    rails = {n: [{"name": "rail%d" % r, "address": "10.%d.%d.254" % (101 + r, i), "netdev": "enp%ds0np0.%d" % (10 + r, 101 + r)}
                 for r in range(2)] for i, n in enumerate(nodes)}
    p = plan(nodes, {}, 18515, rails=rails)
    assert p["rails"] == ["rail0", "rail1"]
    assert len(p["rounds"]) == 6  # 3 rounds of an odd ring, per rail
    for r, pairs in enumerate(p["rounds"]):
        for pair in pairs:
            rail = pair["rail"]
            duty = p["duties"][pair["client"]][r]
            assert duty["rail"] == rail and duty["client_to"] == pair["server"]
            # rail i to rail i only: the peer address is the server's address on the same rail
            assert duty["peer_address"] == next(x["address"] for x in rails[pair["server"]] if x["name"] == rail)
            assert duty["netdev"].endswith(".%d" % (101 + int(rail[-1])))
    records = [{"kind": "ping", "side": "client", "client": pair["client"], "server": pair["server"], "rail": pair["rail"],
                "ok": not (pair["rail"] == "rail1" and pair["client"] == "b"), "ping": {}} for pairs in p["rounds"] for pair in pairs]
    m = build_matrix(p["rounds"], records, [])
    assert m["rails"] == {"rail0": {"passed": True, "total": 3, "failed": 0}, "rail1": {"passed": False, "total": 3, "failed": 1}}
    assert [row["pair"] for row in m["pairs"] if not row["passed"]] == ["rail1: b -> c"]
    text = render_table(m)
    assert "rail rail1: 2 of 3 pairs passed" in text and "FAIL rail1: b -> c" in text
    header, _rule, first = text.splitlines()[:3]
    assert header.split()[:3] == ["rail", "pair", "ping"] and first.split()[:4] == ["rail0", "a", "->", "b"]


def test_host_mode_plan_refuses_nodes_with_different_rails():
    rails = {"a": [{"name": "rail0", "address": "10.0.0.1"}], "b": [{"name": "rail1", "address": "10.0.0.2"}]}
    with pytest.raises(ReportError, match="same rails"):
        plan(["a", "b"], {}, rails=rails)


@pytest.mark.parametrize("name,said,args", [("fabric_plan_node", "fabric_plan_node", ("gpu-a",)),
                                            ("_fabric_plan_slice", "fabric_plan_slice", ("host",)),
                                            ("_fabric_plan_verify", "_fabric_plan_verify", (["gpu-a"],)),
                                            ("_fabric_plan_ring", "_fabric_plan_ring", (["gpu-a"],))])
def test_a_plan_given_as_text_that_is_not_json_is_named_by_the_filter_that_read_it(name, said, args):
    with pytest.raises(AnsibleFilterError, match=r"^%s: the plan given as text is not JSON \(Expecting value: .*\); give the plan itself or "
                       r"the text fabric_plan_json wrote" % said):
        F[name]('{"fabric": ', *args)

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_rails / rail_attachments filters, and test pods that request one VF of every rail."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.filter.rails import FilterModule
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov import SRIOV_DEFAULT_KEYS, render_sriov
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.rdma_pods import pod_manifests, pod_placement
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.rdma_report import (
    ReportError,
    build_matrix,
    plan,
    render_table,
)
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults

F = FilterModule().filters()
PLAN = [{"name": "rail%d" % i, "pf": "enp%ds0np0" % (10 + i), "vlan": 101 + i, "subnet_pool": "10.%d.0.0/16" % (101 + i)} for i in range(3)]


def test_attachments_name_what_the_sriov_render_names():
    hosts = ["gpu-a", "gpu-b"]
    hv = {h: {"roce_rails": PLAN, "roce_node_index": i, "roce_node_name": h} for i, h in enumerate(hosts)}
    hv["gpu-b"]["roce_rail_overrides"] = {"rail2": {"network_name": "storage", "resource_name": "storage_b"}}
    rendered = render_sriov(hosts, hv, with_role_defaults("sriov_networks", SRIOV_DEFAULT_KEYS))
    for i, host in enumerate(hosts):
        att = F["_rail_attachments"](hv[host], host, i)
        entry = next(n for n in rendered["nodes"] if n["host"] == host)
        assert [(a["network"], a["resource"]) for a in att] == [(r["network"], r["resource"]) for r in entry["rails"]]
    assert F["_rail_attachments"](hv["gpu-b"], "gpu-b", 1)[2] == {"rail": "rail2", "network": "storage-gpu-b", "resource": "nvidia.com/storage_b"}
    assert F["_rail_attachments"]({"roce_pf": "p"}, "one-rail") == []


def test_node_rails_refuses_with_field_and_fix():
    with pytest.raises(AnsibleFilterError, match=r"roce_rails\[rail0\]\.subnet.*Fix: set subnet_pool"):
        F["_node_rails"]({"roce_rails": [{"name": "rail0", "pf": "p"}]})


def test_a_multirail_pod_requests_one_vf_of_every_rail_and_attaches_every_rail():
    att = F["_rail_attachments"]({"roce_rails": PLAN}, "gpu-a", 0)
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

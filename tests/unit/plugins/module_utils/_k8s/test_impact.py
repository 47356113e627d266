# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The change-impact report (module_utils/_k8s/impact.py) from results shaped as sriov_vf, vlan_gateway and the
operator's objects return them. The real results are read in the lab (molecule lab, check step) and on the
real control plane (tests/k8s/test_impact_report.py)."""

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import impact as im
from ansible_collections.gpufabric.roce.plugins.module_utils._common import route_ranges as rr
from ansible_collections.gpufabric.roce.plugins.module_utils._host import vlan_gateway as vg

HOSTNAME = "kubernetes.io/hostname"


def _vf(pf, before, after, reset, changed=True):
    return {"changed": changed, "pf": pf, "num_vfs": after, "vf_reset": reset,
            "diff": {"before": {"num_vfs": before, "vfs": []}, "after": {"num_vfs": after, "vfs": []}}}


def _gw(name, before_routes, after_routes, present=True, addrs=("10.0.0.1/24",)):
    """A vlan_gateway result; its diff and route_changes made by the module's own functions."""
    def routes(rs):
        return [{"dst": d, "via": v, "metric": 0, "onlink": True} for d, v in rs]
    before = {"interface": name, "present": present, "mtu": 9000, "addresses": list(addrs) if present else [],
              "routes": rr.compress(routes(before_routes))}
    after = {"interface": name, "present": True, "mtu": 9000, "addresses": list(addrs), "routes": rr.compress(routes(after_routes))}
    return {"changed": True, "interface": name, "actions": [], "diff": {"before": before, "after": after},
            "route_changes": vg.route_changes(routes(before_routes), routes(after_routes))}


def _policy(name, node, pf="eth0", num_vfs=8, mtu=9000):
    return {"metadata": {"name": name}, "spec": {"nodeSelector": {HOSTNAME: node}, "nicSelector": {"pfNames": [pf]},
                                                 "numVfs": num_vfs, "mtu": mtu, "isRdma": True, "deviceType": "netdevice"}}


def _state(node, pf="eth0", num_vfs=8, totalvfs=16, vendor="15b3"):
    return {"metadata": {"name": node}, "status": {"interfaces": [{"name": pf, "numVfs": num_vfs, "totalvfs": totalvfs, "vendor": vendor}]}}


def test_first_rollout_creates_gateways_and_vfs_without_disruption():
    host = im.host_impact([_vf("eth0", 0, 8, False), {"skipped": True, "results": []}],
                          [{"results": [_gw("eth0.100", [], [("10.1.0.0/24", "10.1.0.1")], present=False)]}], drain=True)
    data = im.report(["node1"], {"node1": host}, {})
    row = data["nodes"][0]
    assert row["disruption"] == im.NONE
    assert row["changes"] == ["eth0 VFs 0 -> 8 (none existed: no reset)", "gateway eth0.100: created; +1 route(s) (10.1.0.0/24 via 10.1.0.1)"]
    assert data["changed"] == 1 and data["disrupted"] == 0


def test_vf_reset_with_drain_and_routes_removed_are_disruptions():
    host = im.host_impact([_vf("eth0", 4, 8, True)],
                          [_gw("eth0.100", [("10.1.0.0/24", "10.1.0.1"), ("10.2.0.0/24", "10.1.0.1")], [("10.1.0.0/24", "10.1.0.9")])],
                          drain=True)
    row = im.report(["node1"], {"node1": host}, {})["nodes"][0]
    assert row["disruption"] == "drain + VF reset, routes removed or changed"
    assert row["changes"][0] == "eth0 VFs 4 -> 8: VF reset, drained first"
    assert row["changes"][1] == "gateway eth0.100: -1 route(s) (10.2.0.0/24 via 10.1.0.1); ~1 route(s) (10.1.0.0/24 via 10.1.0.9)"


def test_qos_changes_are_listed_and_a_pfc_change_is_a_link_flap():
    tos = {"interface": "eth0", "changed": True, "actions": ["set RDMA-CM default ToS of mlx5_0 port 1 to 106"],
           "unsupported": {"pfc_priorities": "no DCB"}}
    row = im.report(["n"], {"n": im.host_impact([], [], False, [{"results": [tos]}])}, {})["nodes"][0]
    assert row["disruption"] == im.NONE
    assert row["changes"] == ["QoS eth0: set RDMA-CM default ToS of mlx5_0 port 1 to 106 (not supported here: pfc_priorities)"]
    pfc = {"interface": "eth0", "changed": True, "actions": ["set PFC on priorities [3]"], "unsupported": {}}
    assert im.report(["n"], {"n": im.host_impact([], [], False, [pfc])}, {})["nodes"][0]["disruption"] == "link flap (PFC change)"
    # unchanged (the idempotent run), or only unsupported settings: nothing to report
    quiet = dict(tos, actions=[], changed=False)
    assert im.report(["n"], {"n": im.host_impact([], [], False, [quiet])}, {}, check_mode=False)["changed"] == 0


def test_a_reset_without_the_drain_says_so():
    host = im.host_impact([_vf("eth0", 4, 8, True)], [], drain=False)
    row = im.report(["n"], {"n": host}, {})["nodes"][0]
    assert row["disruption"] == "VF reset without drain"
    assert "NOT drained" in row["changes"][0]


def test_operator_numvfs_above_the_firmware_drains_and_reboots_a_connectx_node():
    changes = im.operator_impact([_policy("roce-node1", "node1", num_vfs=32)], [_policy("roce-node1", "node1", num_vfs=8)],
                                 [_state("node1", totalvfs=16)])
    assert changes == {"node1": [{"policy": "roce-node1", "pfs": ["eth0"], "change": "update", "fields": {"numVfs": [8, 32]},
                                  "drain": True, "reboot": True, "state_known": True}]}
    row = im.report(["node1"], {}, changes)["nodes"][0]
    assert row["disruption"] == "operator drain, reboot"
    assert row["changes"] == ["policy roce-node1: numVfs 8 -> 32: operator drain and reboot (ConnectX firmware change)"]


def test_operator_mtu_change_drains_without_reboot_and_other_vendors_never_reboot():
    changes = im.operator_impact([_policy("p1", "node1", mtu=4000), _policy("p2", "node2", num_vfs=32)],
                                 [_policy("p1", "node1"), _policy("p2", "node2")],
                                 [_state("node1"), _state("node2", vendor="8086", totalvfs=8)])
    assert changes["node1"][0]["fields"] == {"mtu": [9000, 4000]}
    assert changes["node1"][0]["drain"] and not changes["node1"][0]["reboot"]
    assert changes["node2"][0]["drain"] and not changes["node2"][0]["reboot"]


def test_a_new_policy_on_a_pf_without_vfs_is_no_drain_and_an_unknown_state_assumes_one():
    changes = im.operator_impact([_policy("p1", "node1"), _policy("p2", "node2")], [], [_state("node1", num_vfs=0)])
    assert not changes["node1"][0]["drain"] and changes["node1"][0]["change"] == "new"
    assert changes["node2"][0]["drain"]  # no node state: a drain is not hidden
    rows = {r["node"]: r for r in im.report(["node1", "node2"], {}, changes)["nodes"]}
    assert rows["node1"]["disruption"] == im.NONE
    assert rows["node1"]["changes"] == ["new policy p1 (deviceType netdevice, isRdma true, mtu 9000, "
                                        "numVfs 8): operator configures VFs, no drain (no VFs yet)"]
    assert rows["node2"]["disruption"] == "possible operator drain"
    assert rows["node2"]["changes"][0].endswith("operator drain, unless eth0 has no VFs yet (no SriovNetworkNodeState tells)")


def test_a_field_a_policy_does_not_set_reads_as_unset_not_none():
    # A live policy written before deviceType was rendered, and a rendered one that no longer sets linkType.
    live = _policy("p1", "node1")
    del live["spec"]["deviceType"]
    live["spec"]["linkType"] = "eth"
    changes = im.operator_impact([_policy("p1", "node1")], [live], [_state("node1", vendor="8086")])
    assert changes["node1"][0]["fields"] == {"deviceType": [None, "netdevice"], "linkType": ["eth", None]}  # JSON: null
    row = im.report(["node1"], {}, changes)["nodes"][0]
    assert row["changes"] == ["policy p1: deviceType (unset) -> netdevice, linkType eth -> (unset): operator drain"]
    assert "None" not in im.table(im.report(["node1"], {}, changes))


def test_pruned_policy_drains_and_unchanged_policies_are_not_listed():
    live = [_policy("p1", "node1"), _policy("gone", "node3")]
    changes = im.operator_impact([_policy("p1", "node1")], live, [_state("node1"), _state("node3")], removed=["gone"])
    assert list(changes) == ["node3"]
    assert changes["node3"][0]["change"] == "removed" and changes["node3"][0]["drain"]


def test_node_names_map_hosts_to_kubernetes_nodes_and_the_table_lists_changed_nodes_only():
    changes = im.operator_impact([_policy("p1", "k8s-a", mtu=4000)], [_policy("p1", "k8s-a")], [_state("k8s-a")])
    data = im.report(["host-a", "host-b"], {}, changes, node_names={"host-a": "k8s-a", "host-b": "k8s-b"}, check_mode=True)
    assert [r["node"] for r in data["nodes"]] == ["k8s-a", "k8s-b"]
    lines = data["table"].splitlines()
    assert lines[0] == "Change impact (check mode: what this run would do): 2 node(s), 1 with changes, 1 disrupted"
    assert lines[2].startswith("k8s-a") and "operator drain" in lines[2]
    assert lines[-1] == "By disruption: no disruption: 1, operator drain: 1"


def test_nothing_to_do_says_so():
    data = im.report(["n1"], {"n1": im.host_impact([_vf("eth0", 8, 8, False, changed=False)], [], True)}, {}, check_mode=False)
    assert data["changed"] == 0
    assert data["table"].splitlines()[-1] == "No node changed."


def test_a_drain_is_read_from_the_prediction_results_only_when_one_resets():
    # host_network registers its check-mode predictions only where it drains around a reset; skipped ones count as none.
    assert im.reset_predicted([{"results": [_vf("eth0", 4, 8, True)]}, {"skipped": True}])
    assert not im.reset_predicted([_vf("eth0", 0, 8, False), {"skipped": True, "results": []}])


def test_a_first_rollout_at_fleet_scale_lists_its_routes_as_ranges():
    routes = [("10.100.%d.%d/30" % (k // 64, k % 64 * 4), "10.100.%d.%d" % (k // 64, k % 64 * 4 + 2)) for k in range(1000) if k != 3]
    host = im.host_impact([], [_gw("eth0.100", [], routes, present=False)], drain=False)
    row = im.report(["node3"], {"node3": host}, {})["nodes"][0]
    assert row["disruption"] == im.NONE
    assert row["changes"] == ["gateway eth0.100: created; +999 route(s) (10.100.0.0/30 via 10.100.0.2 .. 10.100.0.8/30 via 10.100.0.10 "
                              "(3 routes), 10.100.0.16/30 via 10.100.0.18 .. 10.100.15.156/30 via 10.100.15.158 (996 routes))"]


def test_kept_routes_are_counted_as_routes_not_ranges():
    # A slice without the plan keeps the routes it cannot account for; the module reports them as ranges.
    gw = _gw("eth0.100", [("10.1.%d.0/24" % k, "10.1.%d.1" % k) for k in range(5)], [("10.1.%d.0/24" % k, "10.1.%d.1" % k) for k in range(5)])
    gw["route_changes"]["kept"] = rr.compress([{"dst": "10.2.%d.0/24" % k, "via": "10.2.%d.1" % k, "onlink": True} for k in range(40)])
    assert len(gw["route_changes"]["kept"]) == 1
    assert im.gateway_impact(gw)["routes_kept"] == 40

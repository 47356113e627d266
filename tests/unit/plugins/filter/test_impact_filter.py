"""gpufabric.roce._impact_report: the nodes' variables are read only when the run selected the host phase."""

import pathlib
import re

import yaml

from ansible_collections.gpufabric.roce.plugins.filter import impact
from ansible_collections.gpufabric.roce.plugins.filter.impact import impact_report


class Counting(dict):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.read = []

    def raw_get(self, host):
        self.read.append(host)
        return dict.__getitem__(self, host)


def test_a_run_without_the_host_phase_reads_no_node_and_reports_the_same():
    hv = Counting(node1={}, node2={}, ctl={'sriov_networks_impact': {'nodes': {'node1': 'node1', 'node2': 'node2'}, 'changes': {}}})
    full = impact_report(hv, ['node1', 'node2'], ['ctl'], True)
    assert hv.read == ['ctl', 'node1', 'node2']
    hv.read.clear()
    assert impact_report(hv, ['node1', 'node2'], ['ctl'], True, host_results=False) == full
    assert hv.read == ['ctl']


def test_the_report_reads_the_results_the_role_registers_and_the_facts_reread_names_the_same():
    # The names live in the role (register:) and here (filter constants); a renamed register would leave the report
    # silently empty and the NCCL settings unread after a change. One list, checked both ways.
    role = pathlib.Path(__file__).resolve().parents[4] / "roles" / "host_network"
    registered = set()
    for path in (role / "tasks").glob("*.yml"):
        registered.update(re.findall(r"^\s*register:\s*(\S+)\s*$", path.read_text(), re.MULTILINE))
    changing = {impact.HOST_VFS, impact.HOST_GATEWAYS, impact.HOST_QOS}
    assert changing | {impact.HOST_DRAIN_PREDICTION} <= registered
    current = yaml.safe_load((role / "vars" / "main.yml").read_text())["__host_network_facts_current"]
    assert set(re.findall(r"host_network_\w+_result", current)) == changing


def _registered(invocation):
    """A node's host-phase results as host_network registers them: sriov_vf and vlan_gateway each run once for every
    rail (their ``rails``), roce_qos once. With ``invocation``, as ansible-core before 2.21 adds it to every result
    (its arguments deliberately other than what the modules returned: the report must read the returns)."""
    vfs = {"changed": True, "rails": [{"rail": "rail0", "pf": "eth0", "num_vfs": 8, "total_vfs": 64, "vf_reset": True, "vfs": [], "changed": True}],
           "diff": [{"before": {"num_vfs": 4, "vfs": []}, "after": {"num_vfs": 8, "vfs": []}}]}
    before = {"interface": "eth0.100", "present": False, "mtu": 9000, "addresses": [], "routes": []}
    after = dict(before, present=True, addresses=["10.0.0.1/30"], routes=[{"dst": "10.0.0.4/30", "via": "10.0.0.2", "metric": 0, "onlink": True}])
    gws = {"changed": True, "rails": [{"rail": "rail0", "interface": "eth0.100", "changed": True, "actions": [],
                                       "route_changes": {"added": [after["routes"][0]], "removed": [], "changed": [], "kept": []}}],
           "diff": [{"before": before, "after": after}]}
    qos = {"changed": True, "interface": "eth0", "actions": ["set RDMA-CM default ToS of mlx5_0 port 1 to 106"], "unsupported": {}}
    if invocation:
        for result, module_args in ((vfs, {"rails": [{"pf": "decoy0", "num_vfs": 2}]}),
                                    (gws, {"rails": [{"name": "decoy0.7", "addresses": ["192.0.2.1/24"]}]}),
                                    (qos, {"interface": "decoy0"})):
            result["invocation"] = {"module_args": module_args}
    return {impact.HOST_VFS: vfs, impact.HOST_DRAIN_PREDICTION: vfs, impact.HOST_GATEWAYS: gws, impact.HOST_QOS: qos}


def test_the_report_reads_what_the_modules_returned_not_their_invocation_which_ansible_core_2_21_leaves_out():
    # ansible-core 2.21 adds no `invocation` to results unless INJECT_INVOCATION is set: the report is the same without it.
    controller = {'sriov_networks_impact': {'nodes': {'node1': 'node1'}, 'changes': {}}}
    without = impact_report(Counting(node1=_registered(False), ctl=controller), ['node1'], ['ctl'], True)
    with_invocation = impact_report(Counting(node1=_registered(True), ctl=controller), ['node1'], ['ctl'], True)
    assert without == with_invocation
    (row,) = without["nodes"]
    assert row["changes"][0] == "eth0 VFs 4 -> 8: VF reset, drained first"
    assert row["changes"][1] == "gateway eth0.100: created; +1 route(s) (10.0.0.4/30 via 10.0.0.2)"
    assert any("mlx5_0" in c for c in row["changes"]) and not any("decoy" in c for c in row["changes"])
    assert without["changed"] == 1 and without["disrupted"] == 1

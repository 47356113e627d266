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

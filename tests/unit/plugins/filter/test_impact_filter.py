"""gpufabric.roce.impact_report: the nodes' variables are read only when the run selected the host phase."""

from ansible_collections.gpufabric.roce.plugins.filter.impact import impact_report


class Counting(dict):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.read = []

    def raw_get(self, host):
        self.read.append(host)
        return dict.__getitem__(self, host)


def test_a_run_without_the_host_phase_reads_no_node_and_reports_the_same():
    hv = Counting(node1={}, node2={}, ctl={'__sriov_networks_impact': {'nodes': {'node1': 'node1', 'node2': 'node2'}, 'changes': {}}})
    full = impact_report(hv, ['node1', 'node2'], ['ctl'], True)
    assert hv.read == ['ctl', 'node1', 'node2']
    hv.read.clear()
    assert impact_report(hv, ['node1', 'node2'], ['ctl'], True, host_results=False) == full
    assert hv.read == ['ctl']

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One mistake, one message (issue 42, item 8): a bad line in group_vars made every node fail a per-node check with its
own copy of the same message (preflight's readiness check, the teardown's consent), and the SR-IOV render listed the
problem once per node. Now the findings several nodes share are one line, naming the nodes and where the value is set."""

import pathlib

import pytest
import yaml
from ansible._internal._datatag._tags import Origin

from ansible_collections.gpufabric.roce.plugins.filter.findings import FilterModule
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _findings as fi

REPO = pathlib.Path(__file__).resolve().parents[4]
GROUP_VARS = "/inv/group_vars/roce_nodes.yml"
KEY = "__preflight_findings"


def _pf(value, path=GROUP_VARS, line=3):
    return Origin(path=path, line_num=line, col_num=9).tag(value)


def _missing_pf(host, pf="enp157s0np0"):
    return {"ok": False, "vars": ["preflight_pf", "roce_pf"],
            "msg": "%s: roce_pf=%s is not a netdev with a device on this node\n(found: eth0). Fix: set roce_pf in the inventory to one of those." % (host, pf)}


def _iommu(host):
    return {"ok": False, "msg": "%s: no active IOMMU (kernel cmdline IOMMU args: {}). SR-IOV VFs need it. Fix: enable it." % host}


class RawHostVars(dict):
    """Ansible's HostVars as the filter reads it: raw_get(host), recorded."""

    def __init__(self, hosts):
        super().__init__(hosts)
        self.read = []

    def raw_get(self, host):
        self.read.append(host)
        return dict.__getitem__(self, host)


def _fleet(count, failing=None, pf_line=3):
    """``count`` nodes reading roce_pf from group_vars; ``failing`` (default: all) fail the PF check and, node1 to node3,
    the IOMMU check as well."""
    failing = range(1, count + 1) if failing is None else failing
    hv = {}
    for i in range(1, count + 1):
        host = "node%d" % i
        findings = [_missing_pf(host)] + ([_iommu(host)] if i <= 3 else []) if i in failing else []
        hv[host] = {"roce_pf": _pf("enp157s0np0", line=pf_line), "roce_pod_subnet": _pf("10.0.%d.0/24" % i, "/inv/host_vars/%s.yml" % host, 2),
                    KEY: findings}
    return RawHostVars(hv)


def test_a_bad_line_in_group_vars_is_one_message_naming_the_nodes_and_the_line():
    hv = _fleet(64)
    batch = sorted(hv, key=lambda h: int(h[4:]))
    msg = fi.message(hv, batch, KEY, "node1", "not ready for RoCE")
    assert msg.splitlines() == [
        "Not ready for RoCE: 2 problems on 64 nodes (a problem several nodes share is listed once, naming them):",
        "  - node1 (and 63 other nodes: node2, node3, node4, ...): roce_pf=enp157s0np0 is not a netdev with a device on this node "
        "(found: eth0). Fix: set roce_pf in the inventory to one of those. Source: roce_pf in /inv/group_vars/roce_nodes.yml:3.",
        "  - node1 (and 2 other nodes: node2, node3): no active IOMMU (kernel cmdline IOMMU args: {}). SR-IOV VFs need it. Fix: enable it.",
    ]
    # Every other node points to that message, reading only the nodes before it.
    hv.read.clear()
    assert fi.message(hv, batch, KEY, "node40", "not ready for RoCE") == (
        "node40: not ready for RoCE: 1 problem, listed with every other node's in the message of node1 (one line per problem, naming the nodes).")
    assert hv.read == ["node40", "node1"]


def test_a_node_without_findings_has_no_message_and_reads_no_other_node():
    hv = _fleet(4, failing=[3, 4])
    batch = ["node1", "node2", "node3", "node4"]
    hv.read.clear()
    assert fi.message(hv, batch, KEY, "node1", "not ready") == ""
    assert hv.read == ["node1"]
    # The reporter is the first failing node of the batch.
    assert fi.message(hv, batch, KEY, "node3", "not ready").startswith("Not ready: 2 problems on 2 nodes")
    assert "in the message of node3" in fi.message(hv, batch, KEY, "node4", "not ready")


def test_one_failing_node_says_its_own_findings_as_before():
    hv = _fleet(3, failing=[2])
    msg = fi.message(hv, ["node1", "node2", "node3"], KEY, "node2", "not ready")
    assert msg == ("node2: roce_pf=enp157s0np0 is not a netdev with a device on this node (found: eth0). Fix: set roce_pf in the inventory "
                   "to one of those. node2: no active IOMMU (kernel cmdline IOMMU args: {}). SR-IOV VFs need it. Fix: enable it.")


def test_without_grouping_every_node_says_its_own_findings():
    # The free strategy: the other nodes may not have checked yet.
    hv = _fleet(3)
    msg = fi.message(hv, ["node1", "node2", "node3"], KEY, "node2", "not ready", grouping=False)
    assert msg.startswith("node2: roce_pf=enp157s0np0 is not a netdev") and "node1" not in msg


def test_a_reporter_is_looked_for_among_the_first_nodes_of_the_batch_only():
    count = fi.WINDOW + 10
    hv = _fleet(count, failing=[count - 1, count])
    batch = ["node%d" % i for i in range(1, count + 1)]
    hv.read.clear()
    late = "node%d" % count
    assert fi.message(hv, batch, KEY, late, "not ready").startswith("%s: roce_pf=" % late)
    assert len(hv.read) == fi.WINDOW + 1


def test_differing_values_are_separate_lines_and_each_names_its_own_source():
    hv = _fleet(4)
    for h in ("node3", "node4"):
        hv[h]["roce_pf"] = _pf("enp1s0np0", "/inv/host_vars/%s.yml" % h, 4)
        hv[h][KEY] = [_missing_pf(h, "enp1s0np0")]
    lines = fi.message(hv, ["node1", "node2", "node3", "node4"], KEY, "node1", "not ready").splitlines()
    assert lines[0] == "Not ready: 3 problems on 4 nodes (a problem several nodes share is listed once, naming them):"
    assert lines[1].startswith("  - node1 (and 1 other node: node2): roce_pf=enp157s0np0 ")
    assert lines[1].endswith("Source: roce_pf in /inv/group_vars/roce_nodes.yml:3.")
    assert lines[3].startswith("  - node3 (and 1 other node: node4): roce_pf=enp1s0np0 ")
    assert lines[3].endswith("Source: roce_pf in /inv/host_vars/node3.yml:4 (and 1 other place).")


def test_a_value_without_a_recorded_origin_is_grouped_without_a_source():
    hv = _fleet(2)
    for h in hv:
        hv[h]["roce_pf"] = "enp157s0np0"  # a plain string: an extra var of older ansible-core, a test
    msg = fi.message(hv, ["node1", "node2"], KEY, "node1", "not ready")
    assert "node1 (and 1 other node: node2): roce_pf=enp157s0np0" in msg and "Source" not in msg


def test_the_host_name_is_taken_off_every_sentence_it_starts_only():
    assert fi.without_host("node1: rail r0: x. node1: rail r1: y; node1: z", "node1") == "rail r0: x. rail r1: y; z"
    assert fi.without_host("node10: a", "node1") == "node10: a"
    assert fi.without_host("see node1: a", "node1") == "see node1: a"


def test_the_filter_is_the_message():
    hv = _fleet(2)
    assert FilterModule().filters()["_grouped_findings"](hv, ["node1", "node2"], KEY, "node2", "not ready") == fi.message(
        hv, ["node1", "node2"], KEY, "node2", "not ready")


def test_the_render_lists_a_problem_of_many_nodes_once_with_its_source():
    errors = [GpufabricError("node%d" % i, "sriov_networks_priority", 100, "must be between 0 and 99",
                             "set sriov_networks_priority to 0..99") for i in (1, 2, 3)]
    errors.insert(1, GpufabricError("node1", "roce_rails[rail0].subnet", "10.0.0.0/33", "is not a subnet", "set it"))
    hv = RawHostVars({"node%d" % i: {"sriov_networks_priority": Origin(path=GROUP_VARS, line_num=12).tag(100),
                                     "roce_rails": Origin(path=GROUP_VARS, line_num=20).tag([])} for i in (1, 2, 3)})
    assert fi.render_errors(errors, hv).splitlines() == [
        "2 problems found; nothing was rendered or applied:",
        "  - node1 (and 2 other nodes: node2, node3): sriov_networks_priority=100: must be between 0 and 99. "
        "Fix: set sriov_networks_priority to 0..99. Source: sriov_networks_priority in /inv/group_vars/roce_nodes.yml:12.",
        '  - node1: roce_rails[rail0].subnet="10.0.0.0/33": is not a subnet. Fix: set it. Source: roce_rails in /inv/group_vars/roce_nodes.yml:20.',
    ]


@pytest.mark.parametrize(("path", "key"), [
    ("roles/preflight/tasks/assert.yml", "__preflight_findings"),
    ("roles/host_network/tasks/teardown_consent.yml", "__host_network_teardown_refused"),
])
def test_the_per_node_checks_keep_their_findings_and_fail_with_the_grouped_message(path, key):
    tasks = yaml.safe_load((REPO / path).read_text())
    facts = [t for t in tasks if "ansible.builtin.set_fact" in t]
    asserts = [t for t in tasks if "ansible.builtin.assert" in t]
    assert len(facts) == 1 and key in facts[0]["ansible.builtin.set_fact"]
    assert tasks.index(facts[0]) < tasks.index(asserts[0])
    check = asserts[0]["ansible.builtin.assert"]
    assert check["that"] == "%s | length == 0" % key
    assert "gpufabric.roce._grouped_findings(ansible_play_batch, '%s', inventory_hostname" % key in " ".join(check["fail_msg"].split())

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml refuses bad input of every role in its validation plays, for every host, before phase 1:
per-VF roce_vfs entries, roce_mtu below 68, network_operator_* values and a kubeconfig path that does not
exist (also with --limit to a node, when the controller's play does not run), rdma_verify_* values.

Same set-up as test_site_validation.py: a copy of inventories/example, the host phases selected (nothing
connects to a node when validation stops the run first), ansible-playbook's output read."""

import re

import _runner
import pytest
from _runner import append


def site(inv, *args, mode="render"):
    rc, out = _runner.site(inv, *args, mode=mode)
    # The failure's msg is printed as YAML: join its folded lines to search it as one text.
    return rc, re.sub(r"\n\s+", " ", out)


def no_phase_ran(out):
    return "TASK [gpufabric.roce.preflight" not in out and "TASK [gpufabric.roce.host_network" not in out and "Phase 1" not in out


def assert_refused_before_phase_1(inv, messages, *args, mode="render"):
    """site.yml fails, its output has each of ``messages``, and no phase ran."""
    rc, out = site(inv, *args, mode=mode)
    assert rc != 0, out
    for message in messages:
        assert message in out, out
    assert no_phase_ran(out)


def test_bad_vf_entries_are_refused_for_every_node_before_phase_1(inv):
    append(inv / "host_vars" / "node2.yml", "roce_vf_mode: host\nroce_vfs:\n  - {id: 8}\n  - {id: 1, mac: '01:00:00:00:00:01'}\n"
           "  - {id: 2, min_tx_rate: 500, max_tx_rate: 100}\n  - {id: 3, vlann: 5}\n")
    assert_refused_before_phase_1(inv, [
        "node2: host_network_vfs[id=8].id=8: PF enp157s0np0 will have 8 VFs (ids 0..7)",
        'node2: host_network_vfs[id=1].mac="01:00:00:00:00:01": is a multicast address',
        "node2: host_network_vfs[id=2].min_tx_rate=500: is above max_tx_rate=100",
        "host_network_vfs.vlann. Supported parameters include: id, link_state, mac",
    ])


def test_mtu_below_68_is_refused_before_phase_1(inv):
    append(inv / "host_vars" / "node1.yml", "roce_mtu: 60\n")
    assert_refused_before_phase_1(inv, ["node1: roce_mtu=60: must be between 68 and 9978 (bytes)"])


CONTROLLER_BAD = (
    "network_operator_helm_timeout: 10m\n"
    "network_operator_kubeconfig: /nonexistent/kubeconfig\n"
    "network_operator_airgap: {registry: 'https://reg.local/', image_pull_secrets: [Bad_Name]}\n"
    "network_operator_chart_version: latest\n"
)


@pytest.mark.parametrize("limit", [[], ["--limit", "node1"]], ids=["whole-inventory", "limit-to-a-node"])
def test_bad_network_operator_values_are_refused_before_phase_1(inv, limit):
    append(inv / "group_vars" / "k8s_controller.yml", CONTROLLER_BAD)
    assert_refused_before_phase_1(inv, [
        "localhost: network_operator_helm_timeout=\"10m\": argument 'network_operator_helm_timeout' is of type str",
        'localhost: network_operator_kubeconfig="<not shown: may hold a secret>": is a string but not the path of a file on the controller',
        'localhost: network_operator_airgap.registry="https://reg.local/": not a registry/repository prefix',
        'localhost: network_operator_airgap.image_pull_secrets=["Bad_Name"]: must be a list of Secret names',
        'localhost: network_operator_chart_version="latest": not a chart version',
    ], *limit, mode="apply")


def test_bad_k8s_mode_is_refused(inv):
    assert_refused_before_phase_1(inv, ['roce_k8s_mode="dry": value of roce_k8s_mode must be one of: apply, render, got: dry'], mode="dry")


def test_bad_rdma_verify_values_are_refused_before_phase_1(inv):
    append(inv / "group_vars" / "roce_nodes.yml", "rdma_verify_tcp_port: 70000\nrdma_verify_min_bw_gbps: -1\nrdma_verify_tests: [ib_write_bw, ib_foo]\n"
           "rdma_verify_hosts: [node1, node3]\n")
    assert_refused_before_phase_1(inv, [
        "node1 (and 1 other host: node2): rdma_verify_tcp_port=70000: is not a TCP port (1..65535)",
        "rdma_verify_min_bw_gbps=-1.0: must be at least 0 (a bandwidth threshold in Gb/s)",
        "unknown test(s) ib_foo",
        'rdma_verify_hosts=["node1", "node3"]: not in the inventory: node3',
    ])


def test_bad_rdma_verify_values_in_pod_mode_are_refused_on_the_controller(inv):
    append(inv / "group_vars" / "k8s_controller.yml", "rdma_verify_mode: pod\nrdma_verify_pod_image: perftest:1\nrdma_verify_tcp_port: -1\n")
    append(inv / "group_vars" / "roce_nodes.yml", "rdma_verify_mode: pod\n")
    assert_refused_before_phase_1(inv, ["localhost: rdma_verify_tcp_port=-1: is not a TCP port (1..65535)"])


def test_the_example_inventory_still_passes(inv):
    rc, out = site(inv, "--tags", "never")
    assert rc == 0, out


def test_output_dirs_inside_the_inventory_are_refused_before_phase_1(inv):
    # Issue 17: the next run with -i <that directory> parsed the reports and manifests as inventory.
    # The manifests of render mode (the controller's play):
    rc, out = site(inv, "-e", "roce_render_dir=%s/render-out" % inv)
    assert rc != 0, out
    assert 'localhost: roce_render_dir="%s/render-out": is inside the inventory source %s' % (inv, inv) in out, out
    assert "Fix: set roce_render_dir to a directory outside every inventory source" in out
    assert no_phase_ran(out)
    # The reports of host mode (the nodes' play, which stops the run first):
    append(inv / "group_vars" / "roce_nodes.yml", "rdma_verify_report_dir: %s/rdma-verify-report\n" % inv)
    rc, out = site(inv)
    assert rc != 0, out
    assert 'node1 (and 1 other host: node2): rdma_verify_report_dir="%s/rdma-verify-report": is inside the inventory source %s' % (
        inv, inv) in out, out
    assert "Fix: set rdma_verify_report_dir to a directory outside every inventory source" in out
    assert no_phase_ran(out)

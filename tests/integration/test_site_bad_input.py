# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml refuses bad input of every role in its validation plays, for every host, before phase 1:
per-VF roce_vfs entries, roce_mtu below 68, network_operator_* values and a kubeconfig path that does not
exist (also with --limit to a node, when the controller's play does not run), rdma_verify_* values.
Round three (issue 20): pod subnets outside IPv4 unicast and IPv6, rails beside one-rail nodes, different rail sets,
zero thresholds, pod mode without an image, values shown as written, a typo in a variable prefix.

Same set-up as test_site_validation.py: a copy of inventories/example, the host phases selected (nothing
connects to a node when validation stops the run first), ansible-playbook's output read."""

import hashlib
import json
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
    """site.yml fails, its output has each of ``messages``, and no phase ran. Returns the output."""
    rc, out = site(inv, *args, mode=mode)
    assert rc != 0, out
    for message in messages:
        assert message in out, out
    assert no_phase_ran(out)
    return out


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
    # Issue 43: a Flux kind in the wrong case, a namespace that is no DNS label, a repo_path outside the repository,
    # and nv-ipam's pools with an IPAM component that deploys no nv-ipam.
    "network_operator_gitops: {flux_source: {kind: gitrepository, name: flux-system}, flux_namespace: Flux_System,"
    " repo_path: /srv/gitops/render-out}\n"
    "network_operator_ipam: whereabouts\n"
    "sriov_networks_ipam: nv-ipam\n"
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
        'localhost: network_operator_gitops.flux_source.kind="gitrepository": is not a kind of Flux source a Kustomization can name',
        "Fix: set kind: GitRepository",
        'localhost: network_operator_gitops.flux_namespace="Flux_System": is not a namespace name (a DNS-1123 label)',
        'localhost: network_operator_gitops.repo_path="/srv/gitops/render-out": is not a path inside the GitOps repository',
        'localhost: network_operator_ipam="whereabouts": deploys no IPAM (the NicClusterPolicy of network-operator 26.x has no '
        "whereabouts), and sriov_networks_ipam is nv-ipam: nothing would serve its pools",
    ], *limit, mode="apply")


def test_bad_k8s_mode_is_refused(inv):
    assert_refused_before_phase_1(inv, ['roce_k8s_mode="dry": value of roce_k8s_mode must be one of: apply, render, got: dry'], mode="dry")


def test_bad_rdma_verify_values_are_refused_before_phase_1(inv):
    append(inv / "group_vars" / "roce_nodes.yml", "rdma_verify_tcp_port: 70000\nrdma_verify_min_bw_gbps: -1\nrdma_verify_tests: [ib_write_bw, ib_foo]\n"
           "rdma_verify_hosts: [node1, node3]\n")
    assert_refused_before_phase_1(inv, [
        "node1 (and 1 other host: node2): rdma_verify_tcp_port=70000: is not a TCP port (1..65535)",
        "rdma_verify_min_bw_gbps=-1.0: must be greater than 0 (role gpufabric.roce.rdma_verify). Fix: set a bandwidth in Gb/s, e.g. 80",
        "unknown test(s) ib_foo",
        'rdma_verify_hosts=["node1", "node3"]: not in the inventory: node3',
    ])


def test_bad_rdma_verify_values_in_pod_mode_are_refused_on_the_controller(inv):
    append(inv / "group_vars" / "k8s_controller.yml", "rdma_verify_mode: pod\nrdma_verify_pod_image: perftest:1\nrdma_verify_tcp_port: -1\n")
    append(inv / "group_vars" / "roce_nodes.yml", "rdma_verify_mode: pod\n")
    assert_refused_before_phase_1(inv, ["localhost: rdma_verify_tcp_port=-1: is not a TCP port (1..65535)"])


# ---- issue 20: addresses, rails, thresholds, pod image, values as written, prefix typos ----------------------

@pytest.mark.parametrize(("subnet", "gateway", "problem"), [
    ("224.0.0.0/30", "224.0.0.2", "is not a unicast range: it is in multicast (224.0.0.0/4)"),
    ("127.0.0.0/30", "127.0.0.2", "is not a unicast range: it is in loopback (127.0.0.0/8)"),
    ("fd00:0:0:2::/64", "fd00:0:0:2::1", "is IPv6; IPv6 pod subnets are not supported yet: the VLAN gateways forward IPv4 only, so pods "
     "on different nodes could not reach each other; node1 uses IPv4 (10.255.0.0/24), and one fabric is one address family"),
    ("ff02::/120", "ff02::1", "is IPv6 and in multicast (ff00::/8); IPv6 pod subnets are not supported yet"),
], ids=["ipv4-multicast", "ipv4-loopback", "ipv6-beside-ipv4", "ipv6-multicast"])
def test_pod_subnets_that_are_not_ipv4_unicast_are_refused_before_phase_1(inv, subnet, gateway, problem):
    append(inv / "host_vars" / "node2.yml", "roce_pod_subnet: %s\nroce_pod_gateway: %s\n" % (subnet, gateway))
    assert_refused_before_phase_1(inv, [
        'node2: roce_pod_subnet="%s": %s' % (subnet, problem),
        "Fix: set roce_pod_subnet to a subnet of a private IPv4 range (10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16)",
    ])


def test_a_rails_node_beside_a_one_rail_node_is_refused_before_phase_1(inv):
    """Before: accepted here; phase 2's plan then failed with the bare message 'subnet'."""
    append(inv / "host_vars" / "node2.yml", "roce_rails:\n  - {name: rail0, pf: enp12s0np0, vlan: 101, subnet_pool: 10.101.0.0/16}\n")
    assert_refused_before_phase_1(inv, [
        "node1: roce_rails=null: is not set on this node (a one-rail node: roce_pod_subnet 10.255.0.0/24), but node2 has roce_rails; "
        "one fabric cannot mix the two. Fix: use one kind for every node of roce_nodes",
    ], "--tags", "host_network")


# A copy of inventories/example-multirail whose gpu-node02 has rails 1-7 (rail0 missing), and what every entry playbook
# says of it (test_render_only.py runs gpufabric.roce.render on it).
DIFFERENT_RAILS = [
    'gpu-node02: roce_rails=["rail1", "rail2", "rail3", "rail4", "rail5", "rail6", "rail7"]: the node\'s rails differ from the rails '
    '["rail0", "rail1", "rail2", "rail3", "rail4", "rail5", "rail6", "rail7"] of gpu-node01',
    "Fix: set roce_rails once for all nodes (group_vars/roce_nodes) and remove it from this node's host_vars",
]


def different_rails_inventory(dest):
    inv = _runner.copy_inventory("example-multirail", dest)
    append(inv / "host_vars" / "gpu-node02.yml", "roce_rails:\n" + "".join(
        "  - {name: rail%d, pf: enp%ds0np0, vlan: %d, subnet_pool: 10.%d.0.0/16, subnet_prefix: 24}\n" % (i, 12 + i, 101 + i, 101 + i)
        for i in range(1, 8)))  # rail0 missing
    return inv


def test_nodes_with_different_rails_are_refused_before_phase_1(tmp_path):
    """Before: refused only in phase 5 (rdma_verify_plan), after phases 1-2 had changed the nodes."""
    assert_refused_before_phase_1(different_rails_inventory(tmp_path / "inv"), DIFFERENT_RAILS, "--tags", "host_network,verify")


def test_zero_thresholds_are_refused_before_phase_1_as_the_perftest_module_would(inv):
    append(inv / "group_vars" / "roce_nodes.yml", "rdma_verify_min_bw_gbps: 0\nrdma_verify_min_bw_pct_of_link: 0\nrdma_verify_max_lat_us: 0\n")
    assert_refused_before_phase_1(inv, [
        "node1 (and 1 other host: node2): rdma_verify_min_bw_gbps=0.0: must be greater than 0 (role gpufabric.roce.rdma_verify). "
        "Fix: set a bandwidth in Gb/s, e.g. 80 (rdma_verify_min_bw_gbps: 80), or leave it unset for no threshold",
        "rdma_verify_min_bw_pct_of_link=0.0: must be above 0 and at most 100",
        "rdma_verify_max_lat_us=0.0: must be greater than 0",
    ], "--tags", "verify")


def test_pod_mode_without_an_image_is_refused_on_the_controller_before_phase_1(inv):
    append(inv / "group_vars" / "k8s_controller.yml", "rdma_verify_mode: pod\n")
    append(inv / "group_vars" / "roce_nodes.yml", "rdma_verify_mode: pod\n")
    assert_refused_before_phase_1(inv, [
        'localhost: rdma_verify_pod_image="": is empty, and rdma_verify_mode is pod: the test pods need an image',
        "Fix: set rdma_verify_pod_image to an image with perftest and ping",
    ])


def test_a_non_ascii_pf_name_is_shown_as_written(inv):
    append(inv / "host_vars" / "node2.yml", "roce_pf: enp157s0npé\n")
    out = assert_refused_before_phase_1(inv, ['node2: roce_pf="enp157s0npé": is not a valid interface name'])
    assert "\\u00e9" not in out


def test_a_non_ascii_node_name_is_shown_as_written(inv):
    append(inv / "host_vars" / "node2.yml", "roce_node_name: nodé2\n")
    out = assert_refused_before_phase_1(inv, ['node2: roce_node_name="nodé2": not a valid Kubernetes node name'])
    assert "\\u00e9" not in out


def test_the_address_fix_applied_passes_and_a_typo_in_a_variable_prefix_is_warned_about(inv):
    # The fix of a refused address, written after it (the later key wins), passes; one run for both, as each only warns or passes.
    append(inv / "host_vars" / "node2.yml", "roce_pod_subnet: 224.0.0.0/30\nroce_pod_gateway: 224.0.0.2\n")
    append(inv / "host_vars" / "node2.yml", "roce_pod_subnet: 10.255.1.0/24\nroce_pod_gateway: 10.255.1.254\n")
    append(inv / "group_vars" / "roce_nodes.yml", "sriov_network_trust: \"off\"\n")
    rc, out = site(inv, "--tags", "never")
    assert rc == 0, out
    assert "sriov_network_trust is set but no role of gpufabric.roce reads it, so it has no effect. Fix: did you mean " \
           "sriov_networks_trust? Rename it, or remove it" in out, out


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


@pytest.mark.parametrize("limit", [[], ["--limit", "node1"]], ids=["whole-inventory", "limit-to-a-node"])
def test_a_bad_drain_pool_limit_is_refused_before_phase_1(inv, limit):
    # Issue 21: 0% is a pool the sriov-network-operator would never drain.
    append(inv / "host_vars" / "node1.yml", "sriov_networks_pool_max_unavailable: '0%'\n")
    assert_refused_before_phase_1(inv, [
        'node1: sriov_networks_pool_max_unavailable="0%": not a number of nodes (at least 1) nor a percentage (1% to 100%)',
        'Fix: set sriov_networks_pool_max_unavailable to a whole number of nodes of at least 1 (e.g. 2) or a percentage',
    ], *limit)


def test_a_drain_timeout_of_zero_before_a_vf_reset_is_refused_before_phase_1(inv):
    append(inv / "host_vars" / "node2.yml", "roce_vf_mode: host\nhost_network_allow_vf_reset: true\nhost_network_drain_timeout: 0\n")
    assert_refused_before_phase_1(inv, ["node2: host_network_drain_timeout=0: must be a positive number of seconds (the drain before a VF reset)",
                                        "or host_network_drain: false to reset the VFs without draining the node"])


@pytest.mark.parametrize("knob", ["roce_plan", "roce_plan_out", "roce_impact_out"])
def test_a_relative_plan_path_is_refused_before_phase_1(inv, knob):
    assert_refused_before_phase_1(inv, [
        '%s="plan.json"' % knob,
        "a plan or report file must be an absolute path on the controller. Fix: -e roce_plan_out=$PWD/plan.json",
    ], "--tags", "host_network", "-e", "%s=plan.json" % knob)


def test_roce_plan_out_without_a_plan_is_refused(inv, tmp_path):
    # No node has a pod network (whereabouts IPAM gives the pods their addresses, no node routes): the
    # validation play makes no plan, so there is nothing to write.
    append(inv / "group_vars" / "k8s_controller.yml", "sriov_networks_ipam: whereabouts\nsriov_networks_whereabouts_range: 10.200.0.0/16\n")
    for node in ("node1", "node2"):
        path = inv / "host_vars" / ("%s.yml" % node)
        path.write_text("".join(line for line in path.read_text().splitlines(True) if not line.startswith("roce_pod_")))
    out_file = tmp_path / "plan.json"
    rc, out = site(inv, "--tags", "never", "-e", "roce_plan_out=%s" % out_file)
    assert rc != 0, out
    assert 'node1: roce_plan_out="%s": no fabric plan was made in this run' % out_file in out, out
    assert not out_file.exists()


def test_a_qos_that_leaves_roce_lossy_is_refused_before_phase_1(inv):
    # issue 19: the QoS model is checked with the rest of the fabric plan, before any node is touched.
    append(inv / "host_vars" / "node2.yml", "roce_qos: {tos: 0}\n")
    assert_refused_before_phase_1(inv, [
        "node2: roce_qos.tos=0: puts RoCE traffic on priority 0 (tos >> 5), but PFC is on [3]",
        "use a ToS whose priority is lossless, e.g. tos: 106 (DSCP 26), or add 0 to pfc_priorities",
    ])


# ---- issue 43: a plan read back is held to the rules of a computed one; the files a run writes ----------------------


def _fingerprint(plan):
    """The plan's fingerprint by its documented rule (docs/awx.md): the sha256 of every key but the fingerprint and the
    derived route_index, as JSON with sorted keys."""
    covered = {k: v for k, v in plan.items() if k not in ("fingerprint", "route_index")}
    return hashlib.sha256(json.dumps(covered, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def _written_plan(inv, tmp_path, *args):
    plan_file = tmp_path / "plan.json"
    rc, out = site(inv, "--tags", "never", "-e", "roce_plan_out=%s" % plan_file, *args)
    assert rc == 0, out
    return plan_file


@pytest.fixture(scope="module")
def example_plan(tmp_path_factory):
    """The plan site.yml writes for inventories/example (copied as ``inv``, as the tests' own copies are named), written
    once for the tests that damage a copy of it."""
    root = tmp_path_factory.mktemp("example-plan")
    return _written_plan(_runner.copy_inventory("example", root / "inv"), root).read_text()


def _example_plan(example_plan, tmp_path):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(example_plan)
    return plan_file


def _edit(plan_file, edit, refingerprint=True):
    plan = json.loads(plan_file.read_text())
    edit(plan)
    if refingerprint:
        plan["fingerprint"] = _fingerprint(plan)
    plan_file.write_text(json.dumps(plan))


@pytest.mark.parametrize("damage,messages", [
    ("cut-short", ['all roce_nodes: roce_plan="{plan}": is not JSON (cut short, or not the file roce_plan_out wrote): ']),
    ("vlan-4095", ['node2: roce_plan="{plan}": is invalid: the node', "vlan_id=4095: is not a VLAN id in 1..4094."]),
])
def test_a_plan_file_that_is_not_a_valid_plan_is_refused_before_phase_1(inv, tmp_path, example_plan, damage, messages):
    plan_file = _example_plan(example_plan, tmp_path)
    # The wiring of the read-back check; every damage is proven in tests/unit/plugins/filter/test_fabric_plan_read.py.
    if damage == "cut-short":
        plan_file.write_text(plan_file.read_text()[:200])
    else:
        _edit(plan_file, lambda p: p["fabric"]["nodes"]["node2"]["rails"][0].update(vlan_id=4095))
    assert_refused_before_phase_1(inv, [m.format(plan=plan_file) for m in messages] + [
        "-e roce_plan_out=<file> -e roce_inventory_complete=true",
    ], "--tags", "host_network", "-e", "roce_plan=%s" % plan_file)


def test_a_slice_plan_edited_to_complete_is_refused_before_phase_1(inv, tmp_path):
    # complete: true would let every gateway purge the routes its slice's plan does not list.
    plan_file = _written_plan(inv, tmp_path, "-e", "roce_inventory_complete=false")
    _edit(plan_file, lambda p: p.update(complete=True), refingerprint=False)
    assert_refused_before_phase_1(inv, [
        'all roce_nodes: roce_plan="%s": is damaged: its content does not match its fingerprint (edited by hand or cut short).' % plan_file,
    ], "--tags", "host_network", "-e", "roce_plan=%s" % plan_file)


@pytest.mark.parametrize("limit", [["--limit", "node2"]], ids=["limit-to-the-node"])
def test_a_plan_the_inventory_moved_on_from_is_refused_before_the_host_phases(inv, tmp_path, example_plan, limit):
    plan_file = _example_plan(example_plan, tmp_path)
    append(inv / "host_vars" / "node2.yml", "roce_mtu: 4200\n")
    assert_refused_before_phase_1(inv, [
        "node2: roce_mtu=4200: differs from the plan read from %s (9000), which the host phases of this run would configure the node "
        "with, not with this value. Fix: write the plan again from this inventory" % plan_file,
    ], "--tags", "preflight,host_network", "-e", "roce_plan=%s" % plan_file, *limit)


# The wiring; every rule is proven in tests/unit/plugins/filter/test_output_files.py.
@pytest.mark.parametrize("case", ["plan-into-group-vars", "report-into-a-missing-directory"])
def test_the_files_a_run_writes_are_checked_before_phase_1(inv, tmp_path, case):
    group_vars = inv / "group_vars" / "roce_nodes.yml"
    before = group_vars.read_text()
    if case == "plan-into-group-vars":
        args, message = ["-e", "roce_plan_out=%s" % group_vars], (
            'all roce_nodes: roce_plan_out="%s": is inside the inventory source %s: the next run would read the files written there as '
            "inventory (bogus hosts, groups or variables). Fix: set roce_plan_out to a file outside every inventory source, e.g. %s/plan.json"
            % (group_vars, inv, tmp_path))
    else:
        args, message = ["-e", "roce_impact_out=%s/reports/impact.json" % tmp_path], (
            'all roce_nodes: roce_impact_out="%s/reports/impact.json": is in %s/reports, which does not exist. Fix: create the directory '
            "first (mkdir -p %s/reports)" % (tmp_path, tmp_path, tmp_path))
    assert_refused_before_phase_1(inv, [message], "--tags", "host_network", *args)
    assert group_vars.read_text() == before
    assert not (tmp_path / "reports").exists()


def test_node_values_each_legal_alone_are_refused_at_once_and_differing_rail_tos_is_warned_about(tmp_path):
    """Issue 43 classes 9 and 10, in one run of the validation play: an empty roce_rails in one node's host_vars (before:
    'missing required arguments: preflight_pf'), a drain delegate that is no inventory host, a node name that is no
    DNS-1123 name, remeasure attempts in the millions (each accepted before), and a rail whose ToS differs from the
    others' (a warning before the change: NCCL_IB_TC is then not set). Each mistake is one line."""
    inv = _runner.copy_inventory("example-multirail", tmp_path / "inv")
    append(inv / "host_vars" / "gpu-node02.yml", "roce_rails: []\n")
    append(inv / "host_vars" / "gpu-node01.yml", "roce_vf_mode: host\nhost_network_allow_vf_reset: true\n"
           "host_network_drain_delegate_to: k8s-contoller\nhost_network_node_name: GPU_Node01\n"
           "roce_rail_overrides: {rail1: {qos: {tos: 98}}}\n")
    append(inv / "group_vars" / "roce_nodes.yml", "rdma_verify_remeasure_attempts: 1000000\nroce_qos: {}\n")
    rc, out = site(inv, "--tags", "host_network")
    assert rc != 0, out
    for message in [
        "4 problems in the role arguments of 2 hosts",
        "gpu-node02: roce_rails=[]: is empty on this node, and roce_pf is not set",
        "Fix: remove roce_rails: [] from this node's host_vars to give it the rails of group_vars/roce_nodes",
        'gpu-node01: host_network_drain_delegate_to="k8s-contoller": is not a host of the inventory',
        'gpu-node01: host_network_node_name="GPU_Node01": is not a Kubernetes node name (a DNS-1123 subdomain',
        "gpu-node01 (and 1 other host: gpu-node02): rdma_verify_remeasure_attempts=1000000: must be at most 10",
        "[WARNING]: gpu-node01: roce_rail_overrides.rail1.qos.tos=98: differs from the ToS of the node's other rails (rail0 106, "
        "rail1 98, rail2 106",
        "NCCL_IB_TC is one traffic class for all of a job's HCAs, so host_network will not set it",
    ]:
        assert message in out, out
    assert "preflight_pf" not in out
    assert out.count("differs from the ToS of the node's other rails") == 1, out
    assert no_phase_ran(out)

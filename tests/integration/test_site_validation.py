# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml validates the SR-IOV render whatever the limit, and warns about variables no role reads.

The SR-IOV validation play runs on k8s_controller; with --limit to some nodes, or an inventory without
that group, it has no host. These runs use a copy of inventories/example in render mode, select the host
phases only (nothing connects to a node when validation stops the run first), and read ansible-playbook's
output.
"""

import re

import yaml
from _runner import append, site


def recap(out):
    return dict(re.findall(r"^(\S+)\s+: ok=\d+\s+changed=\d+\s+unreachable=\d+\s+failed=(\d+)", out, re.M))


def test_limit_to_a_node_still_validates_the_sriov_render(inv):
    append(inv / "host_vars" / "node2.yml", "sriov_networks_link_type: bogus\n")
    rc, out = site(inv, "--limit", "node1", "--tags", "host_network")
    assert rc != 0, out
    assert "node2: sriov_networks_link_type=\"bogus\": linkType must be 'eth' (RoCE, the node's SriovNetwork) or 'ib'" in out, out
    assert "TASK [gpufabric.roce.sriov_networks : Validate the inventory" in out
    assert "TASK [gpufabric.roce.host_network" not in out
    assert recap(out) == {"node1": "1"}


def test_limit_to_a_node_validates_with_the_controllers_variables(inv):
    # A cluster-wide knob set only on the controller is seen by the validation of a --limit node1 run.
    append(inv / "group_vars" / "k8s_controller.yml", "sriov_networks_ipam: whereabouts\n")
    rc, out = site(inv, "--limit", "node1", "--tags", "host_network")
    assert rc != 0, out
    assert 'sriov_networks_whereabouts_range="": whereabouts needs one cluster-wide CIDR range' in out, out
    assert "TASK [gpufabric.roce.host_network" not in out


def test_limit_to_a_node_valid_inventory_passes_with_the_render_checked(inv):
    rc, out = site(inv, "--limit", "node1", "--tags", "never")
    assert rc == 0, out
    assert "2 SriovNetworkNodePolicies and 2 SriovNetworks for 2 nodes (IPAM host-local" in out
    assert recap(out) == {"node1": "0"}


def test_without_a_limit_the_controller_validates_and_the_nodes_do_not_repeat_it(inv):
    rc, out = site(inv, "--tags", "never")
    assert rc == 0, out
    assert out.count("2 SriovNetworkNodePolicies and 2 SriovNetworks for 2 nodes") == 1
    # The nodes' play skips its include of the render; the controller's play runs it.
    runs = [part.split("TASK")[0] for part in out.split("TASK [gpufabric.roce.sriov_networks : Summarise what was rendered]")[1:]]
    assert ["ok: [localhost]" in r for r in runs] == [True], runs
    nodes_copy = out.split("TASK [Validate the SR-IOV policies and networks here, as the controller would")[1].split("TASK")[0]
    assert "skipping: [node1]" in nodes_copy, nodes_copy


def _drop_controller(inv):
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    del hosts["all"]["children"]["k8s_controller"]
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    (inv / "group_vars" / "k8s_controller.yml").unlink()


def test_inventory_without_k8s_controller_still_validates(inv):
    _drop_controller(inv)
    rc, out = site(inv, "--tags", "never")
    assert rc == 0, out
    assert "2 SriovNetworkNodePolicies and 2 SriovNetworks for 2 nodes" in out
    append(inv / "host_vars" / "node1.yml", "sriov_networks_device_type: bogus\n")
    rc, out = site(inv, "--tags", "host_network")
    assert rc != 0, out
    assert 'node1: sriov_networks_device_type="bogus"' in out, out
    assert "TASK [gpufabric.roce.host_network" not in out


def test_unknown_variables_warn_once_whatever_the_limit(inv):
    append(inv / "group_vars" / "roce_nodes.yml", "roce_vlan: 100\n")
    expected = ("node1, node2: roce_vlan is set but no role of gpufabric.roce reads it, so it has no effect. "
                "Fix: did you mean roce_vlan_id? Rename it, or remove it")
    for args in ((), ("--limit", "node1")):
        rc, out = site(inv, "--tags", "never", *args)
        assert rc == 0, out
        flat = " ".join(out.split())
        assert flat.count(expected) == 1, out
    _drop_controller(inv)
    rc, out = site(inv, "--tags", "never")
    assert rc == 0 and " ".join(out.split()).count(expected) == 1, out


def test_example_inventory_has_no_unknown_variables(inv):
    rc, out = site(inv, "--tags", "never")
    assert rc == 0 and "no role of gpufabric.roce reads it" not in out, out


def test_limit_run_renders_with_the_controllers_view_of_the_role(inv):
    # role_view reads the controller's variables over the role's own defaults, templated there: the namespace
    # default follows network_operator_namespace, which only the controller sets. Same render with or without it.
    append(inv / "group_vars" / "k8s_controller.yml", "network_operator_namespace: roce-ops\n")
    append(inv / "group_vars" / "roce_nodes.yml", "network_operator_namespace: not-the-controllers\n")
    expected = "2 SriovNetworkNodePolicies and 2 SriovNetworks for 2 nodes (IPAM host-local, namespace roce-ops)"
    for args in ((), ("--limit", "node1")):
        rc, out = site(inv, "--tags", "never", *args)
        assert rc == 0, out
        assert expected in " ".join(out.split()), (args, out)
    assert "Read the controller's settings of the SR-IOV render" in out

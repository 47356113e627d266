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


def _drop_controller(inv):
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    del hosts["all"]["children"]["k8s_controller"]
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    (inv / "group_vars" / "k8s_controller.yml").unlink()


def test_inventory_without_k8s_controller_still_validates(inv):
    # Its valid run is test_a_valid_inventory_passes_and_warns_once_about_an_unknown_variable_whatever_the_limit's last.
    _drop_controller(inv)
    append(inv / "host_vars" / "node1.yml", "sriov_networks_device_type: bogus\n")
    rc, out = site(inv, "--tags", "host_network")
    assert rc != 0, out
    assert 'node1: sriov_networks_device_type="bogus"' in out, out
    assert "TASK [gpufabric.roce.host_network" not in out


def test_a_valid_inventory_passes_and_warns_once_about_an_unknown_variable_whatever_the_limit(inv):
    """The example inventory with one variable no role reads and the operator's namespace set on the controller, run three
    ways: whole, --limit node1, and without the k8s_controller group. Each passes, renders the SR-IOV objects once (on the
    controller when it runs; the nodes' copy of that validation is skipped), and warns once, about that variable only, so
    the example itself has none. role_view reads the controller's variables over the role's own defaults, templated there:
    the namespace default follows network_operator_namespace, which only the controller sets (the nodes' own value is not
    the controller's), with or without the limit."""
    append(inv / "group_vars" / "roce_nodes.yml", "roce_vlan: 100\nnetwork_operator_namespace: not-the-controllers\n")
    append(inv / "group_vars" / "k8s_controller.yml", "network_operator_namespace: roce-ops\n")
    expected = ("node1, node2: roce_vlan is set but no role of gpufabric.roce reads it, so it has no effect. "
                "Fix: did you mean roce_vlan_id? Rename it, or remove it")
    rendered = "2 SriovNetworkNodePolicies and 2 SriovNetworks for 2 nodes (IPAM host-local, namespace roce-ops)"

    rc, out = site(inv, "--tags", "never")
    flat = " ".join(out.split())
    assert rc == 0, out
    assert flat.count(expected) == 1 and flat.count("no role of gpufabric.roce reads it") == 1, out
    assert flat.count(rendered) == 1, out
    assert "Read the controller's settings of the SR-IOV render" in out
    # The nodes' play skips its include of the render; the controller's play runs it.
    runs = [part.split("TASK")[0] for part in out.split("TASK [gpufabric.roce.sriov_networks : Summarise what was rendered]")[1:]]
    assert ["ok: [localhost]" in r for r in runs] == [True], runs
    nodes_copy = out.split("TASK [Validate the SR-IOV policies and networks here, as the controller would")[1].split("TASK")[0]
    assert "skipping: [node1]" in nodes_copy, nodes_copy

    rc, out = site(inv, "--tags", "never", "--limit", "node1")
    flat = " ".join(out.split())
    assert rc == 0, out
    assert flat.count(expected) == 1 and flat.count("no role of gpufabric.roce reads it") == 1, out
    assert rendered in flat, out
    assert recap(out) == {"node1": "0"}

    _drop_controller(inv)
    rc, out = site(inv, "--tags", "never")
    flat = " ".join(out.split())
    assert rc == 0 and flat.count(expected) == 1, out
    assert "2 SriovNetworkNodePolicies and 2 SriovNetworks for 2 nodes" in flat, out

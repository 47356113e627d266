# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_verify's ring in host mode (_fabric_plan_ring) and whether the fabric has a plan (_fabric_has_pod_network): what
tasks/host_plan.yml and playbooks/tasks/validate_fabric.yml read of the nodes before issue 40 (hostvars[...].roce_pod_subnet,
map('extract', hostvars, rdma_verify_address_var)), now answered by the plan builder."""

import json

import pytest
from ansible.errors import AnsibleFilterError
from fake_hostvars import FakeHostVars

from ansible_collections.gpufabric.roce.plugins.filter.fabric_plan import FilterModule

F = FilterModule().filters()
RAILS = [{"name": "rail%d" % i, "pf": "enp%ds0np0" % (10 + i), "vlan": 101 + i, "subnet_pool": "10.%d.0.0/16" % (101 + i)} for i in range(2)]


def _one_rail(n, **extra):
    return {"h%d" % i: dict({"roce_pf": "p0", "roce_pod_subnet": "10.8.%d.0/30" % i, "roce_pod_gateway": "10.8.%d.1" % i,
                             "mgmt_ip": "192.0.2.%d" % i}, **extra) for i in range(1, n + 1)}


def _hv(hosts):
    return FakeHostVars(hosts, {})


def test_whether_a_node_has_a_pod_network():
    hv = _hv({"a": {"roce_pod_subnet": "10.0.0.0/30"}, "b": {"roce_rails": RAILS}, "c": {"roce_pf": "p0"}, "d": {"roce_rails": None}})
    # "is defined", as the playbooks asked it: a variable set to null counts; a host outside the inventory has none.
    assert [F["_fabric_has_pod_network"](hv, h) for h in ("a", "b", "c", "d", "zz")] == [True, True, False, True, False]
    assert hv.rendered == []  # plain values are not templated


def test_the_ring_from_a_plan_given_reads_no_variable():
    hosts = _one_rail(3)
    text = F["fabric_plan_json"](F["fabric_plan"](hosts, list(hosts)))
    hv = _hv(hosts)
    ring = F["_fabric_plan_ring"](text, list(hosts), "roce_pod_gateway", hostvars=hv)
    assert ring == {"addresses": {"h1": "10.8.1.1", "h2": "10.8.2.1", "h3": "10.8.3.1"}, "rails": None, "source": text}
    assert hv.raw == []


def test_rails_come_from_the_plan_whatever_the_address_variable():
    hosts = {h: {"roce_rails": RAILS, "roce_node_index": i} for i, h in enumerate(["g1", "g2"])}
    text = F["fabric_plan_json"](F["fabric_plan"](hosts, list(hosts)))
    ring = F["_fabric_plan_ring"](text, ["g1", "g2"], "mgmt_ip", hostvars=_hv(hosts))
    assert ring["addresses"] == {}
    assert [r["name"] for r in ring["rails"]["g2"]] == ["rail0", "rail1"]
    # Each rail's gateway is the one the node's host phases configure (its slice of the same plan).
    gateways = [g["addresses"][0].split("/")[0] for g in F["fabric_plan_node"](text, "g2")["rails"]]
    assert ring["rails"]["g2"] == [{"name": "rail0", "gateway": gateways[0], "pf": "enp10s0np0", "vlan": 101},
                                   {"name": "rail1", "gateway": gateways[1], "pf": "enp11s0np0", "vlan": 102}]


def test_another_address_variable_is_read_through_the_plan_builder():
    hosts = _one_rail(2)
    text = F["fabric_plan_json"](F["fabric_plan"](hosts, list(hosts)))
    hv = _hv(hosts)
    ring = F["_fabric_plan_ring"](text, ["h1", "h2"], "mgmt_ip", hostvars=hv)
    assert ring["addresses"] == {"h1": "192.0.2.1", "h2": "192.0.2.2"} and ring["rails"] is None
    assert sorted(set(hv.raw)) == ["h1", "h2"]
    with pytest.raises(AnsibleFilterError, match="the addresses are in mgmt_ip, and no hostvars"):
        F["_fabric_plan_ring"](text, ["h1"], "mgmt_ip")


def test_the_role_on_its_own_plans_once_from_the_inventory():
    hosts = _one_rail(2)
    ring = F["_fabric_plan_ring"]("", ["h2"], hostvars=_hv(hosts), nodes=["h1", "h2"])
    assert ring["addresses"] == {"h2": "10.8.2.1"}
    source = json.loads(ring["source"])
    assert source["kind"] == "gpufabric.roce/fabric-plan" and source["order"] == ["h1", "h2"]
    # The plan validates what it reads: a gateway outside its subnet is refused, naming host, variable and value.
    hosts["h2"]["roce_pod_gateway"] = "10.8.9.1"
    with pytest.raises(AnsibleFilterError, match=r'h2: roce_pod_gateway="10\.8\.9\.1": is outside roce_pod_subnet'):
        F["_fabric_plan_ring"]("", ["h1", "h2"], hostvars=_hv(hosts))


def test_without_a_pod_network_the_addresses_and_the_tos_come_from_the_inputs():
    hosts = {"n1": {"roce_pf": "p0", "roce_pod_gateway": "127.0.0.1", "roce_qos": {"tos": 96}}, "n2": {"roce_pf": "p0", "roce_pod_gateway": "127.0.0.2"}}
    ring = F["_fabric_plan_ring"]("", ["n1", "n2"], hostvars=_hv(hosts))
    assert ring["addresses"] == {"n1": "127.0.0.1", "n2": "127.0.0.2"} and ring["rails"] is None
    # The source carries the nodes' inputs, which the ToS are read from (host_plan.yml's __rdma_verify_tos).
    tos = {n["host"]: n["tos"] for n in F["_fabric_plan_verify"](ring["source"], ["n1", "n2"])}
    assert tos == {"n1": {"": 96}, "n2": {"": None}}
    # A node without the variable is left out, for the ring's planner to name.
    del hosts["n2"]["roce_pod_gateway"]
    assert F["_fabric_plan_ring"]("", ["n1", "n2"], hostvars=_hv(hosts))["addresses"] == {"n1": "127.0.0.1"}


def test_a_node_outside_the_plan_given_is_refused():
    hosts = _one_rail(2)
    text = F["fabric_plan_json"](F["fabric_plan"](hosts, ["h1"]))
    with pytest.raises(AnsibleFilterError, match=r'h2: rdma_verify_hosts=\["h2"\]: is not in the fabric plan'):
        F["_fabric_plan_ring"](text, ["h1", "h2"], hostvars=_hv(hosts))
    with pytest.raises(AnsibleFilterError, match="no plan"):
        F["_fabric_plan_ring"]("", ["h1"])


def test_the_pod_names_default_to_the_sriov_networks_roles_defaults():
    hosts = _one_rail(1)
    text = F["fabric_plan_json"](F["fabric_plan"](hosts, list(hosts)))
    unset = F["_fabric_plan_verify"](text, ["h1"], None, None, None, None)
    assert unset == F["_fabric_plan_verify"](text, ["h1"]) == F["_fabric_plan_verify"](text, ["h1"], "roce", "nvidia.com", "host-local", "")
    assert (unset[0]["network"], unset[0]["resource"]) == ("roce-h1", "nvidia.com/roce_h1")
    given = F["_fabric_plan_verify"](text, ["h1"], "fab", "example.com", "whereabouts", None)[0]
    assert (given["network"], given["resource"]) == ("fab", "example.com/fab")


def test_the_pod_resource_follows_the_operators_prefix_as_sriov_networks_does():
    """sriov_networks_resource_prefix unset: the sriov_networks role names resources by network_operator_resource_prefix,
    so the test pods must request that one."""
    hosts = _one_rail(1)
    text = F["fabric_plan_json"](F["fabric_plan"](hosts, list(hosts)))
    pod = F["_fabric_plan_verify"](text, ["h1"], None, None, None, None, operator_resource_prefix="example.com")[0]
    assert pod["resource"] == "example.com/roce_h1"
    own = F["_fabric_plan_verify"](text, ["h1"], None, "fab.io", None, None, operator_resource_prefix="example.com")[0]
    assert own["resource"] == "fab.io/roce_h1"

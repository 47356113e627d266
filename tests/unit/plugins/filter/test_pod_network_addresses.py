# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric plan's address and shape rules (docs/inventory.md, "Address rules"): IPv4 unicast pod subnets only,
one address family, one kind of node (rails or one-rail) and the same rails on every node; each refusal names
host, field as written, value and a fix, and the fix, applied, passes."""

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, format_error
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table

RAILS = [
    {"name": "rail0", "pf": "enp12s0np0", "vlan": 101, "subnet_pool": "10.101.0.0/16", "subnet_prefix": 24},
    {"name": "rail1", "pf": "enp18s0np0", "vlan": 102, "subnet_pool": "10.102.0.0/16", "subnet_prefix": 24},
]


def one(subnet, gateway):
    return {"roce_pf": "enp157s0np0", "roce_pod_subnet": subnet, "roce_pod_gateway": gateway}


def two(subnet, gateway):
    """node1 as in the example inventory, node2 with ``subnet``/``gateway``."""
    return {"node1": one("10.255.0.0/30", "10.255.0.2"), "node2": one(subnet, gateway)}


def refused(hv):
    with pytest.raises(GpufabricError) as err:
        fabric_table(hv, list(hv))
    return err.value


@pytest.mark.parametrize(("subnet", "gateway", "what"), [
    ("224.0.0.0/30", "224.0.0.2", "multicast (224.0.0.0/4)"),
    ("127.0.0.0/30", "127.0.0.2", "loopback (127.0.0.0/8)"),
    ("0.0.0.0/30", "0.0.0.2", '"this network" (0.0.0.0/8)'),
    ("240.0.0.0/30", "240.0.0.2", "reserved (240.0.0.0/4"),
    ("255.255.255.252/30", "255.255.255.254", "reserved (240.0.0.0/4, with the broadcast address 255.255.255.255)"),
    ("169.254.0.0/30", "169.254.0.2", "link-local (169.254.0.0/16)"),
    # A wide block reaching into a non-unicast range.
    ("192.0.0.0/2", "192.0.0.1", "multicast (224.0.0.0/4)"),
], ids=["multicast", "loopback", "this-network", "reserved", "broadcast", "link-local", "wide-into-multicast"])
def test_ipv4_ranges_that_are_not_unicast_are_refused(subnet, gateway, what):
    err = refused(two(subnet, gateway))
    assert (err.host, err.field, err.value) == ("node2", "roce_pod_subnet", subnet)
    assert str(err).startswith('node2: roce_pod_subnet="%s": is not a unicast range: it is in %s' % (subnet, what))
    assert "Fix: set roce_pod_subnet to a subnet of a private IPv4 range" in str(err)
    # The fix's example, applied (node1 has 10.255.0.0/30: the next /30 is disjoint).
    fabric_table(two("10.255.0.4/30", "10.255.0.6"), ["node1", "node2"])


@pytest.mark.parametrize(("subnet", "gateway", "extra"), [
    ("fd00:0:0:2::/64", "fd00:0:0:2::1", ""),
    ("ff00::/120", "ff00::1", " and in multicast (ff00::/8)"),
    ("fe80::/64", "fe80::1", " and in link-local (fe80::/10)"),
])
def test_ipv6_pod_subnets_are_refused_and_a_mixed_fabric_says_so(subnet, gateway, extra):
    err = refused(two(subnet, gateway))
    assert str(err) == format_error(
        "node2", "roce_pod_subnet", subnet,
        "is IPv6%s; IPv6 pod subnets are not supported yet: the VLAN gateways forward IPv4 only, so pods on different nodes "
        "could not reach each other; node1 uses IPv4 (10.255.0.0/30), and one fabric is one address family" % extra,
        "set roce_pod_subnet to a subnet of a private IPv4 range (10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16), disjoint from "
        "the other nodes', and roce_pod_gateway to a host address in it, e.g. roce_pod_subnet: 10.255.0.0/30 with "
        "roce_pod_gateway: 10.255.0.2")


def test_an_all_ipv6_fabric_is_refused_node_by_node():
    hv = {"node1": one("fd00:0:0:1::/64", "fd00:0:0:1::1"), "node2": one("fd00:0:0:2::/64", "fd00:0:0:2::1")}
    err = refused(hv)
    assert [(e.host, e.field) for e in err.errors] == [("node1", "roce_pod_subnet"), ("node2", "roce_pod_subnet")]
    assert all("IPv6 pod subnets are not supported yet" in e.problem and "address family" not in e.problem for e in err.errors)


def test_a_rail_subnet_pool_outside_unicast_is_blamed_as_written():
    # One value of roce_rails (group_vars) is one mistake: one message naming both nodes.
    rails = [RAILS[0], dict(RAILS[1], subnet_pool="224.1.0.0/16")]
    err = refused({"gpu0": {"roce_rails": rails}, "gpu1": {"roce_rails": rails}})
    assert (err.host, err.field, err.value) == ("gpu0 (and 1 other node: gpu1)", "roce_rails[rail1].subnet_pool", "224.1.0.0/16")
    assert "multicast (224.0.0.0/4)" in err.problem
    assert "e.g. subnet_pool: 10.101.0.0/16" in err.fix


def test_a_rail_override_subnet_in_ipv6_is_refused_with_the_rails_fix():
    hv = {"gpu0": {"roce_rails": RAILS, "roce_rail_overrides": {"rail0": {"subnet": "fd00::/64"}}}, "gpu1": {"roce_rails": RAILS}}
    err = refused(hv)
    assert (err.host, err.field, err.value) == ("gpu0", "roce_rails[rail0].subnet", "fd00::/64")
    assert "IPv6 pod subnets are not supported yet" in err.problem
    assert err.fix.startswith("set the subnet of rail rail0 (roce_rail_overrides.rail0.subnet for this node")


def test_rails_and_one_rail_nodes_are_not_mixed():
    """Before: accepted here, then phase 2's plan failed with the bare KeyError 'subnet'."""
    hv = {"gpu0": {"roce_rails": RAILS}, "gpu1": {"roce_rails": RAILS}, "old": one("10.255.0.0/30", "10.255.0.2")}
    err = refused(hv)
    assert (err.host, err.field, err.value) == ("old", "roce_rails", None)
    assert err.problem == ("is not set on this node (a one-rail node: roce_pod_subnet 10.255.0.0/30), but gpu0 (and 1 other node) "
                           "have roce_rails; one fabric cannot mix the two")
    assert "set roce_rails for all of them" in err.fix
    # The fix, applied: the node joins the rails.
    fabric_table(dict(hv, old={"roce_rails": RAILS}), list(hv))


def test_a_lone_rails_node_among_one_rail_nodes_is_the_one_named():
    hv = {"a": one("10.255.0.0/30", "10.255.0.2"), "b": one("10.255.0.4/30", "10.255.0.6"), "gpu0": {"roce_rails": RAILS}}
    err = refused(hv)
    assert (err.host, err.field, err.value) == ("gpu0", "roce_rails", ["rail0", "rail1"])
    assert "but a (and 1 other node) use the one-rail variables" in err.problem


def test_nodes_with_different_rail_sets_are_refused_in_the_plan():
    """Before: refused only in phase 5 (rdma_verify_plan), after phases 1-2 changed the nodes."""
    hv = {"gpu0": {"roce_rails": RAILS}, "gpu1": {"roce_rails": RAILS}, "gpu2": {"roce_rails": RAILS[:1]}}
    err = refused(hv)
    assert (err.host, err.field, err.value) == ("gpu2", "roce_rails", ["rail0"])
    assert err.problem.startswith('the node\'s rails differ from the rails ["rail0", "rail1"] of gpu0 and 1 other node')
    reordered = dict(hv, gpu2={"roce_rails": RAILS[::-1]})
    assert refused(reordered).value == ["rail1", "rail0"]
    fabric_table(dict(hv, gpu2={"roce_rails": RAILS}), list(hv))


def test_non_ascii_values_are_shown_as_written():
    hv = two("10.255.0.4/30", "10.255.0.6")
    hv["node2"]["roce_pf"] = "enp157s0npé"
    err = refused(hv)
    assert 'roce_pf="enp157s0npé"' in str(err)
    assert "\\u00e9" not in str(err)

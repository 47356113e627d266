# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host mode reads the rings from the fabric plan: an InfiniBand rail has no gateway, so it is left out, and a node with no
Ethernet rail is named with the fix."""

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.plan import build_plan, dumps
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.rdma_report import ReportError, fabric_nodes

ETH = {"name": "rail0", "pf": "enp12s0np0", "vlan": 101, "subnet_pool": "10.101.0.0/16"}
IB = {"name": "ib0", "pf": "ibp75s0", "link_type": "ib", "subnet_pool": "10.201.0.0/16"}


def test_ib_rails_are_left_out_of_the_host_mode_rings():
    plan = dumps(build_plan(fabric_table({"a": {"roce_rails": [ETH, IB]}, "b": {"roce_rails": [ETH, IB], "roce_node_index": 1}}), True))
    assert fabric_nodes(plan, ["a", "b"]) == {"addresses": {}, "rails": {
        "a": [{"name": "rail0", "gateway": "10.101.0.254", "pf": "enp12s0np0", "vlan": 101}],
        "b": [{"name": "rail0", "gateway": "10.101.1.254", "pf": "enp12s0np0", "vlan": 101}]}}


@pytest.mark.parametrize("hv", [
    {"a": {"roce_rails": [IB]}, "b": {"roce_rails": [IB], "roce_node_index": 1}},
    {h: {"roce_pf": "ibp75s0", "roce_pod_subnet": "10.250.%d.0/24" % i, "sriov_networks_link_type": "ib"} for i, h in enumerate("ab")},
])
def test_a_node_without_an_ethernet_rail_is_named_with_the_fix(hv):
    with pytest.raises(ReportError) as err:
        fabric_nodes(dumps(build_plan(fabric_table(hv), True)), ["a", "b"])
    assert str(err.value).startswith('a: rdma_verify_hosts="a": has no Ethernet rail: ') and \
        "Fix: use rdma_verify_mode: pod for InfiniBand nodes, or leave the node out of rdma_verify_hosts" in str(err.value)

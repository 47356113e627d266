"""The plan builder: the one reader of the nodes' variables, for the fabric table and the nodes' inputs."""

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov import SRIOV_PER_HOST_KEYS
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _plan_builder as pb

PF = "enp157s0np0"


def hostvars():
    return {
        "node1": {"roce_pf": PF, "roce_pod_subnet": "10.255.0.0/30", "roce_pod_gateway": "10.255.0.2", "ansible_host": "192.0.2.1",
                  "sriov_networks_pool_name": "a", "rdma_verify_pod_network": "mine"},
        "node2": {"roce_pf": PF, "roce_pod_subnet": "10.255.0.4/30", "roce_pod_gateway": "10.255.0.6", "ansible_host": "192.0.2.2"},
    }


def test_the_plan_carries_what_the_kubernetes_phases_read_of_each_node_and_nothing_else():
    plan = pb.build(hostvars(), ["node1", "node2"])
    assert plan["version"] == fp.PLAN_VERSION and plan["fingerprint"] == fp.fingerprint(plan)
    assert plan["inputs"]["common"] == {"roce_pf": PF}
    assert plan["inputs"]["nodes"]["node1"] == {"roce_pod_subnet": "10.255.0.0/30", "roce_pod_gateway": "10.255.0.2",
                                                "sriov_networks_pool_name": "a", "rdma_verify_pod_network": "mine"}
    assert "ansible_host" not in fp.dumps(plan)  # not a fabric variable
    assert set(SRIOV_PER_HOST_KEYS) <= set(pb.NODE_KEYS) and len(set(pb.NODE_KEYS)) == len(pb.NODE_KEYS)


def test_the_inventory_source_reads_the_nodes_now_and_their_table_only_when_asked():
    hv = hostvars()
    inventory = pb.Inventory(hv, ["node1", "node2", "node9"])
    assert sorted(inventory.inputs) == ["node1", "node2"]  # node9 has no variables: the renderer says so
    with pytest.raises(Exception, match="node9"):
        inventory.table()
    table = pb.Inventory(hv, ["node1", "node2"]).table()
    assert sorted(table["nodes"]) == ["node1", "node2"]

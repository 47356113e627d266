# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_verify's ring from the fabric plan (issue 21: every phase reads the plan, none another node's variables): the
ring site.yml's verification plans from the plan is the one the nodes' variables give, for the shipped inventories and
a fleet of 8 rails, read from the plan's JSON text as site.yml passes it."""

import pytest
from test_k8s_nv_ipam import fleet, inventory

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as _fabric_plan
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_report as rr
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import ROCE_DEFAULTS, node_rails


def _from_variables(hosts, hv):
    """The ring of each node's rails derived from its own variables, beside the plan's."""
    rails = {h: node_rails(hv[h], i, ROCE_DEFAULTS)[0] for i, h in enumerate(hosts)}
    rails = {h: r for h, r in rails.items() if r}
    return rr.plan(hosts, {} if rails else {h: hv[h]['roce_pod_gateway'] for h in hosts}, 18515, rails or None)


def _from_plan(hosts, hv, ring_hosts=None):
    text = _fabric_plan.dumps(_fabric_plan.build_plan(fabric_table(hv, hosts), True))
    inputs = rr.fabric_nodes(text, ring_hosts or hosts)
    return rr.plan(ring_hosts or hosts, inputs['addresses'], 18515, inputs['rails'])


@pytest.mark.parametrize('name', ['example', 'example-multirail'])
def test_the_ring_from_the_plan_is_the_ring_of_the_variables(name):
    hosts, hv = inventory(name)
    assert _from_plan(hosts, hv) == _from_variables(hosts, hv)


def test_eight_rails_of_a_fleet_from_the_plan():
    hosts, hv = fleet(12)
    ring = _from_plan(hosts, hv)
    assert ring == _from_variables(hosts, hv)
    assert ring['rails'] == ['rail%d' % i for i in range(8)] and len(ring['rounds']) == 16
    assert ring['duties']['gpu003'][0]['netdev'] == 'enp10s0np0.101'


def test_a_ring_of_some_nodes_of_the_plan_and_a_node_outside_it():
    hosts, hv = fleet(4, n_rails=2)
    assert _from_plan(hosts, hv, hosts[1:]) == _from_variables(hosts[1:], {h: hv[h] for h in hosts[1:]})
    table = fabric_table(hv, hosts[:3])
    with pytest.raises(rr.ReportError) as err:
        rr.fabric_nodes(table, hosts)
    assert ('gpu003: rdma_verify_hosts=["gpu003"]: is not in the fabric plan (3 nodes; 1 host(s) missing). Fix: verify only '
            'nodes of the plan (rdma_verify_hosts, --limit)') in str(err.value)
    with pytest.raises(rr.ReportError, match='rdma_verify_fabric="list": is not a fabric plan'):
        rr.fabric_nodes([], hosts)

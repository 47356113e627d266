# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan builder: the one reader of the fabric's inventory variables (module_utils/_fabric/plan.py; docs/awx.md).

It reads every node once (plugin_utils/_raw_vars.py) for the fabric table and for what the Kubernetes phases read of each
node (``NODE_KEYS``), and builds the plan from them. Everything else reads the plan: the host phases their node's slice,
the SR-IOV render each node's inputs (``_fabric.plan.node_inputs``). Where no plan exists (no pod network to plan, or a
role run on its own), the reader that needs the nodes calls this builder, and so is the plan builder too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table, node_table as _node_table
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nic_config import NIC_CONFIG_PER_HOST_KEYS
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.node_policy import MEMBER_FIELDS
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov import SRIOV_PER_HOST_KEYS
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov_pool import POOL_PER_HOST_KEYS
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _raw_vars as raw_vars

NCCL_SOCKET_KEY = "host_network_nccl_socket_ifname"
# A node's own test pod attachment in rdma_verify's pod mode, over the one the sriov_networks role names.
VERIFY_KEYS = ("rdma_verify_pod_network", "rdma_verify_pod_resource")
# A node with either has a pod network (its subnet, or its rails'), hence a plan.
POD_NETWORK_KEYS = ("roce_pod_subnet", "roce_rails")
# What the Kubernetes phases read of each node: the SR-IOV render (policies and networks, drain pools,
# NicConfigurationTemplates, the NCCL settings the inventory determines), the operator's node groups (NicNodePolicies)
# and the pod-mode verification. Each once.
NODE_KEYS = tuple(dict.fromkeys(SRIOV_PER_HOST_KEYS + POOL_PER_HOST_KEYS + NIC_CONFIG_PER_HOST_KEYS + ("roce_qos_via", NCCL_SOCKET_KEY)
                                + MEMBER_FIELDS + VERIFY_KEYS))


def node_inputs(rows, hosts, keys=NODE_KEYS):
    """host -> the ``keys`` it sets (``rows``: ``_raw_vars.view``); a host not in the inventory is left out, for the
    renderer to report as a host without variables. Raises ValueError for a value that cannot be templated."""
    return {h: raw_vars.inputs(rows, h, keys) for h in hosts if h in rows}


def build(hostvars, nodes=None, complete=True):
    """The plan of ``nodes`` (default: every host of ``hostvars``): its fabric table and each node's inputs."""
    rows = raw_vars.view(hostvars)
    nodes = [str(n) for n in (nodes if nodes is not None else list(rows.keys()))]
    table = fabric_table(rows, nodes)
    return fp.build_plan(table, complete, node_inputs(rows, nodes))


def _has_pod_network(rows, host):
    return bool(node_inputs(rows, [host], POD_NETWORK_KEYS).get(host))


def has_pod_network(hostvars, host):
    """Whether ``host`` sets roce_pod_subnet or roce_rails: a fabric has a plan when the first node of the run has a pod
    network (whereabouts without node subnets has none, and nothing to plan)."""
    return _has_pod_network(raw_vars.view(hostvars), str(host))


def table(hostvars, nodes=None, positions=None):
    """The validated fabric table of ``nodes`` (default: every host of ``hostvars``), the plan's ``fabric``, for a reader
    that needs the table alone (a plan read back, checked against the inventory; the gateway filters)."""
    return fabric_table(raw_vars.view(hostvars), nodes, positions)


def node_table(hostvars, host, nodes=None):
    """``table`` of ``nodes``, refusing a ``host`` that is not one of them; ``hostvars`` that is a fabric table already
    is returned as it is (the gateway filters take either)."""
    return _node_table(raw_vars.view(hostvars), host, nodes)


def verify_source(hostvars, hosts, nodes=None):
    """What the verification reads of ``hosts`` where no plan was given (the rdma_verify role on its own): the plan of
    ``nodes`` (default ``hosts``) when the first host has a pod network, else only the hosts' inputs, with an empty
    table (no rails, no gateway)."""
    rows = raw_vars.view(hostvars)
    hosts = [str(h) for h in hosts]
    if hosts and _has_pod_network(rows, hosts[0]):
        return build(hostvars, nodes if nodes is not None else hosts)
    return {"fabric": {"nodes": {}}, "inputs": fp.pack_inputs(node_inputs(rows, hosts), hosts)}


def addresses(hostvars, hosts, var):
    """Each host's value of ``var``, the variable rdma_verify_address_var names (the address a node's peers reach it at,
    where that is not its gateway): only the inventory knows a variable the user names. A host without it is left out,
    for the ring's planner to name."""
    rows = raw_vars.view(hostvars)
    return {h: row[var] for h, row in node_inputs(rows, [str(h) for h in hosts], (str(var),)).items() if var in row}


class Inventory(object):
    """What the SR-IOV render reads of ``hosts`` when no plan has them: their inputs, read now, and their fabric table,
    computed when first asked for (only a node with roce_rails or roce_qos_via operator, or the NCCL settings, need it)."""

    def __init__(self, hostvars, hosts):
        self._rows, self._hosts, self._table = raw_vars.view(hostvars), list(hosts), None
        self.inputs = node_inputs(self._rows, self._hosts)

    def table(self):
        if self._table is None:
            self._table = fabric_table(self._rows, self._hosts)
        return self._table

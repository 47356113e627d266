# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the rollout waits for, as pure functions: which objects to read each poll and how to judge them.

The polling itself (reads through kubernetes.core.k8s_info, one progress line per poll, the deadline)
lives in the action plugin ``gpufabric.roce.rollout_wait``; everything here is plain data in, verdict
out, so the unit tests cover every decision without a cluster.
"""

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nic_config import NIC_CONFIG_API_VERSION, nic_config_progress
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.operator import NCP_API_VERSION, NCP_NAME
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov import SRIOV_API_VERSION
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.status import (
    allocatable_mismatches,
    deployments_unavailable,
    ncp_summary,
    ncp_unready_components,
    nnp_unready_components,
    sriov_node_states_draining,
    sriov_node_states_failed,
    sriov_node_states_pending,
)

# How many problems one progress line shows; the rest is counted (1,000 nodes must not print 1,000 lines a poll).
SHOWN = 3


class Verdict:
    """``done``: stop waiting, all good. ``failed``: stop waiting, these problems will not clear by themselves.
    ``pending``: keep waiting. ``summary``: the one-line progress report."""

    def __init__(self, summary, pending=(), failed=()):
        self.summary = summary
        self.pending = list(pending)
        self.failed = list(failed)

    @property
    def done(self):
        return not self.pending and not self.failed


def reads_for(check, namespace, expected, first=False):
    """The k8s_info queries one poll of ``check`` needs, as {name: module arguments}. The first poll of ``sriov_sync``
    also reads the Nodes, to fail at once for an expected node that is not in the cluster."""
    if check == "nic_cluster_policy":
        reads = {
            "ncp": {"api_version": NCP_API_VERSION, "kind": "NicClusterPolicy", "name": NCP_NAME},
            "deployments": {"api_version": "apps/v1", "kind": "Deployment", "namespace": namespace},
        }
        if expected:
            # The NicNodePolicies of the rollout ({name} each): one read of the kind, judged by name.
            reads["nnps"] = {"api_version": NCP_API_VERSION, "kind": "NicNodePolicy"}
        return reads
    if check == "sriov_drain":
        return {"states": {"api_version": SRIOV_API_VERSION, "kind": "SriovNetworkNodeState", "namespace": namespace}}
    if check == "nic_config":
        return {
            "templates": {"api_version": NIC_CONFIG_API_VERSION, "kind": "NicConfigurationTemplate", "namespace": namespace},
            "devices": {"api_version": NIC_CONFIG_API_VERSION, "kind": "NicDevice", "namespace": namespace},
        }
    if check == "sriov_sync":
        reads = {"states": {"api_version": SRIOV_API_VERSION, "kind": "SriovNetworkNodeState", "namespace": namespace}}
        if first or any(node.get("resources") for node in expected or []):
            reads["nodes"] = {"api_version": "v1", "kind": "Node"}
        return reads
    raise ValueError("unknown check %r" % check)


def judge(check, resources, expected, conditions=None):
    """Judge one poll. ``resources`` maps each read of :func:`reads_for` to the objects it returned. ``conditions``
    (nic_cluster_policy): whether the chart's NicClusterPolicy CRD has status.conditions (None: as the object shows)."""
    if check == "nic_cluster_policy":
        return _judge_ncp(resources, conditions, expected)
    if check == "sriov_sync":
        return _judge_sriov(resources, expected)
    if check == "sriov_drain":
        return _judge_drain(resources, expected)
    if check == "nic_config":
        return _judge_nic_config(resources, expected)
    raise ValueError("unknown check %r" % check)


def _shorten(problems):
    if len(problems) <= SHOWN:
        return "; ".join(problems)
    return "%s; (+%d more)" % ("; ".join(problems[:SHOWN]), len(problems) - SHOWN)


def _judge_ncp(resources, conditions=None, expected=None):
    ncp = (resources.get("ncp") or [None])[0]
    deployments = resources.get("deployments") or []
    pending = ncp_unready_components(ncp or {}, conditions)
    live = {(p.get("metadata") or {}).get("name"): p for p in resources.get("nnps") or []}
    names = [e.get("name") for e in expected or []]
    for name in names:
        pending += nnp_unready_components(live.get(name), name, conditions)
    unavailable = deployments_unavailable(deployments)
    ready = len(deployments) - len(unavailable)
    if not deployments:
        unavailable = ["no Deployment in the operator namespace yet (is the Helm release installed there?)"]
    summary = "%s, deployments %d/%d available" % (ncp_summary(ncp, conditions), ready, len(deployments))
    if names:
        summary += ", NicNodePolicies %d/%d ready" % (sum(1 for n in names if not nnp_unready_components(live.get(n), n, conditions)), len(names))
    problems = pending + unavailable
    if problems:
        summary += ": " + _shorten(problems)
    return Verdict(summary, pending=problems)


def _not_nodes(nodes, expected):
    """The expected nodes that are no Node of the cluster: no SriovNetworkNodeState can ever come for them."""
    names = {(n.get("metadata") or {}).get("name") for n in nodes}
    missing = [e for e in expected or [] if isinstance(e, dict) and e.get("node_name") not in names]
    if not missing:
        return []
    return ["%s: roce_node_name=%s is no Node of this cluster, so its SriovNetworkNodeState never comes"
            % (e.get("host") or e["node_name"], e["node_name"]) for e in missing] + [
        "Fix: set roce_node_name of each such host to its name as kubectl get nodes shows it, or take the host out of "
        "roce_nodes (%d of %d node(s); the policies and networks are applied)" % (len(missing), len(expected))]


def _judge_sriov(resources, expected):
    states = resources.get("states") or []
    if "nodes" in resources:
        absent = _not_nodes(resources.get("nodes") or [], expected)
        if absent:
            return Verdict("%d node(s) not in the cluster" % (len(absent) - 1), failed=absent)
    failed = sriov_node_states_failed(states, expected)
    pending = sriov_node_states_pending(states, expected)
    total = len(expected or [])
    summary = "%d/%d nodes synced" % (total - len(pending), total)
    if "nodes" in resources:
        # Allocatable is judged only for synced nodes: the device plugin publishes after the sync.
        unsynced = {p.split(":", 1)[0] for p in pending}
        ready_nodes = [n for n in expected if n["node_name"] not in unsynced]
        short = allocatable_mismatches(resources.get("nodes") or [], ready_nodes)
        short_nodes = {m.split(":", 1)[0] for m in short}
        summary += ", %d/%d with the VFs allocatable" % (len(ready_nodes) - len(short_nodes), total)
        pending = pending + short
    problems = failed or pending
    if problems:
        summary += ": " + _shorten(problems)
    return Verdict(summary, pending=[] if failed else pending, failed=failed)


def _judge_drain(resources, expected):
    pending = sriov_node_states_draining(resources.get("states") or [], expected)
    total = len(expected or [])
    summary = "%d/%d nodes released the VFs of the deleted policies" % (total - len(pending), total)
    if pending:
        summary += ": " + _shorten(pending)
    return Verdict(summary, pending=pending)


def _judge_nic_config(resources, expected):
    matched, pending, failed, states = nic_config_progress(resources.get("templates"), resources.get("devices"), expected)
    summary = "%d/%d rail NICs listed by their NicConfigurationTemplate" % (matched, len(expected or []))
    if states:
        summary += " (%s)" % ", ".join("%d %s" % (n, reason) for reason, n in sorted(states.items()))
    problems = failed or pending
    if problems:
        summary += ": " + _shorten(problems)
    return Verdict(summary, pending=[] if failed else pending, failed=failed)

# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading cluster status back: why a NicClusterPolicy, a Deployment, a SriovNetworkNodeState or
a node's allocatable resources are not what the rollout asked for yet. Each helper returns a list
of human-readable problems, empty when everything is as expected."""

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_operator import NCP_NAME


def ncp_unready_components(policy):
    """Describe why a NicClusterPolicy (as returned by k8s_info) is not ready yet."""
    if not policy:
        return ["NicClusterPolicy %s not found" % NCP_NAME]
    status = policy.get("status") or {}
    out = []
    for st in status.get("appliedStates") or []:
        if st.get("state") not in ("ready", "ignore"):
            msg = st.get("message") or ""
            out.append("%s: %s%s" % (st.get("name", "?"), st.get("state", "unknown"), (" (%s)" % msg) if msg else ""))
    if status.get("state") != "ready" and not out:
        out.append("state=%s%s" % (status.get("state", "unset"), (" reason: %s" % status["reason"]) if status.get("reason") else ""))
    return out


def deployments_unavailable(deployments):
    """Names (with available/desired counts) of Deployments that are not fully available."""
    out = []
    for d in deployments or []:
        want = (d.get("spec") or {}).get("replicas", 1)
        have = (d.get("status") or {}).get("availableReplicas", 0) or 0
        if have < want:
            out.append("%s: %d/%d available" % ((d.get("metadata") or {}).get("name", "?"), have, want))
    return out


def sriov_node_states_pending(states, node_names):
    """For each expected node, why its SriovNetworkNodeState has not Succeeded (with lastSyncError)."""
    by_name = {(s.get("metadata") or {}).get("name"): s for s in states or []}
    out = []
    for node in node_names:
        st = by_name.get(node)
        if st is None:
            out.append("%s: no SriovNetworkNodeState yet (is the sriov-network-config-daemon running on it?)" % node)
            continue
        status = st.get("status") or {}
        if status.get("syncStatus") != "Succeeded":
            err = status.get("lastSyncError") or ""
            out.append("%s: syncStatus=%s%s" % (node, status.get("syncStatus") or "unset", (" lastSyncError: %s" % err) if err else ""))
    return out


def allocatable_mismatches(nodes, expected):
    """Compare node ``status.allocatable`` with the renderer's per-node ``resources`` summary."""
    by_name = {(n.get("metadata") or {}).get("name"): n for n in nodes or []}
    out = []
    for item in expected or []:
        node = by_name.get(item["node_name"])
        alloc = ((node or {}).get("status") or {}).get("allocatable") or {}
        for resource, want in sorted(item["resources"].items()):
            have = alloc.get(resource)
            if node is None:
                out.append("%s: node not found" % item["node_name"])
                break
            if str(have) != str(want):
                out.append("%s: allocatable %s is %s, expected %d" % (item["node_name"], resource, "missing" if have is None else have, want))
    return out

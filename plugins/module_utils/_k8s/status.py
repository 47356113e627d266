# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading cluster status back: why a NicClusterPolicy, a Deployment, a SriovNetworkNodeState or
a node's allocatable resources are not what the rollout asked for yet. Each helper returns a list
of human-readable problems, empty when everything is as expected."""

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.operator import NCP_NAME


# network-operator 26.7 (api/v1alpha1/nicclusterpolicyconditions.go): the <Component>Ready condition of each component the
# spec enables, by the spec section that enables it; the aggregate condition is Ready.
NCP_CONDITION_COMPONENTS = {
    "OFEDDriverReady": "ofedDriver",
    "RDMASharedDevicePluginReady": "rdmaSharedDevicePlugin",
    "SRIOVDevicePluginReady": "sriovDevicePlugin",
    "IBKubernetesReady": "ibKubernetes",
    "MultusCNIReady": "secondaryNetwork.multus",
    "CNIPluginsReady": "secondaryNetwork.cniPlugins",
    "IPoIBCNIReady": "secondaryNetwork.ipoib",
    "NVIPAMReady": "nvIpam",
    "NICFeatureDiscoveryReady": "nicFeatureDiscovery",
    "DOCATelemetryServiceReady": "docaTelemetryService",
    "NICConfigurationOperatorReady": "nicConfigurationOperator",
    "SpectrumXOperatorReady": "spectrumXOperator",
}
NCP_NO_STATUS = "no status yet: no network-operator has reconciled it"


def ncp_uses_conditions(policy, conditions=None):
    """Whether the wait judges ``status.conditions``: ``conditions`` says whether the chart's CRD has them (26.7 and later);
    None decides by the object (a policy that carries conditions)."""
    if conditions is not None:
        return bool(conditions)
    return bool(((policy or {}).get("status") or {}).get("conditions"))


def ncp_unready_components(policy, conditions=None):
    """Describe why a NicClusterPolicy (as returned by k8s_info) is not ready yet.

    From network-operator 26.7 (``conditions`` true, or None and the policy carries them) by its conditions: each
    ``<Component>Ready`` that is not True, with the component, reason and message, and conditions older than the spec
    (``observedGeneration``); before 26.7 by ``status.state`` and ``appliedStates``."""
    if not policy or not policy.get("metadata") and not policy.get("status"):
        return ["NicClusterPolicy %s not found" % NCP_NAME]
    status = policy.get("status") or {}
    if not status:
        return [NCP_NO_STATUS]
    if ncp_uses_conditions(policy, conditions):
        return _condition_problems(policy, status)
    out = []
    for st in status.get("appliedStates") or []:
        if st.get("state") not in ("ready", "ignore"):
            msg = st.get("message") or ""
            out.append("%s: %s%s" % (st.get("name", "?"), st.get("state", "unknown"), (" (%s)" % msg) if msg else ""))
    if status.get("state") != "ready" and not out:
        out.append("state=%s%s" % (status.get("state", "unset"), (" reason: %s" % status["reason"]) if status.get("reason") else ""))
    return out


def nnp_unready_components(policy, name, conditions=None):
    """Why NicNodePolicy ``name`` (as returned by k8s_info, or None) is not ready yet: as a NicClusterPolicy is judged (its
    status has the same shape: ``state`` before 26.7, ``<Component>Ready`` conditions from 26.7), each problem prefixed
    with the policy's kind and name."""
    if not policy:
        return ["NicNodePolicy %s not found" % name]
    return ["NicNodePolicy %s: %s" % (name, p) for p in ncp_unready_components(policy, conditions)]


def _condition_problems(policy, status):
    conds = {c.get("type"): c for c in status.get("conditions") or [] if isinstance(c, dict)}
    ready = conds.get("Ready")
    if ready is None:
        # A status without conditions on a 26.7 CRD was written by an older operator (before an upgrade reached it).
        return ["no Ready condition yet: the network-operator 26.7 has not reconciled it (status.state=%s)" % (status.get("state") or "unset")]
    out = []
    generation = (policy.get("metadata") or {}).get("generation")
    seen = ready.get("observedGeneration")
    if generation and seen is not None and seen < generation:
        out.append("not reconciled since the last change: its conditions are of generation %s, the policy is at %s" % (seen, generation))
    for ctype in sorted(conds):
        cond = conds[ctype]
        if ctype == "Ready" or cond.get("status") == "True":
            continue
        out.append("%s not ready (%s=%s, %s)%s" % (NCP_CONDITION_COMPONENTS.get(ctype, ctype), ctype, cond.get("status") or "Unknown",
                                                   cond.get("reason") or "no reason", (": %s" % cond["message"]) if cond.get("message") else ""))
    if not out and ready.get("status") != "True":
        out.append("Ready=%s (%s)%s" % (ready.get("status") or "Unknown", ready.get("reason") or "no reason",
                                        (": %s" % ready["message"]) if ready.get("message") else ""))
    return out


def ncp_summary(policy, conditions=None):
    """The NicClusterPolicy's part of a progress line."""
    if not policy:
        return "NicClusterPolicy absent"
    status = policy.get("status") or {}
    if not status:
        return "NicClusterPolicy without status"
    if ncp_uses_conditions(policy, conditions):
        conds = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
        ready = next((c for c in conds if c.get("type") == "Ready"), None)
        parts = [c for c in conds if c.get("type") != "Ready"]
        return "NicClusterPolicy Ready=%s, %d/%d components ready" % (
            (ready or {}).get("status") or "unset", sum(1 for c in parts if c.get("status") == "True"), len(parts))
    return "NicClusterPolicy %s" % (status.get("state") or "without state")


def deployments_unavailable(deployments):
    """Names (with available/desired counts) of Deployments that are not fully available."""
    out = []
    for d in deployments or []:
        want = (d.get("spec") or {}).get("replicas", 1)
        have = (d.get("status") or {}).get("availableReplicas", 0) or 0
        if have < want:
            out.append("%s: %d/%d available" % ((d.get("metadata") or {}).get("name", "?"), have, want))
    return out


def sriov_node_states_pending(states, expected_nodes):
    """For each expected node, why its SriovNetworkNodeState does not show the policies applied yet.

    ``expected_nodes`` is the renderer's ``nodes`` list (``node_name`` and the ``interfaces`` each
    PF must carry); plain node names check ``syncStatus`` only. ``Succeeded`` alone proves nothing:
    the config daemon reports it for an empty spec, and the operator writes the policies into the
    state only after the node has reported its interfaces (possibly at its next resync). So the spec
    must carry each PF with the policies' numVfs and MTU, the status the same numVfs, and the sync
    must have Succeeded.
    """
    by_name = {(s.get("metadata") or {}).get("name"): s for s in states or []}
    out = []
    for node in expected_nodes or []:
        name, wanted = _expected(node)
        st = by_name.get(name)
        if st is None:
            out.append("%s: no SriovNetworkNodeState yet (is the sriov-network-config-daemon running on it?)" % name)
            continue
        problem = _spec_problem(st, wanted) or _status_problem(st, wanted)
        if problem:
            out.append("%s: %s" % (name, problem))
    return out


def sriov_node_states_failed(states, expected_nodes):
    """Nodes whose config daemon has taken the policies in (the spec carries them) and reports Failed.

    A failure against an older spec is not ours and may clear once the new spec arrives; a failure
    against this spec is reported at once, with ``lastSyncError``, instead of after the sync timeout.
    """
    by_name = {(s.get("metadata") or {}).get("name"): s for s in states or []}
    out = []
    for node in expected_nodes or []:
        name, wanted = _expected(node)
        st = by_name.get(name)
        status = (st or {}).get("status") or {}
        if st is not None and status.get("syncStatus") == "Failed" and _spec_problem(st, wanted) is None:
            out.append("%s: syncStatus=Failed lastSyncError: %s" % (name, status.get("lastSyncError") or "(empty)"))
    return out


def _expected(node):
    if isinstance(node, str):
        return node, []
    return node["node_name"], node.get("interfaces") or []


def _by_ifname(interfaces):
    return {i.get("name"): i for i in interfaces or [] if isinstance(i, dict)}


def _spec_problem(state, wanted):
    spec = _by_ifname((state.get("spec") or {}).get("interfaces"))
    for w in wanted:
        have = spec.get(w["name"])
        if have is None:
            return "spec.interfaces has no %s yet: the operator has not written the policies into the node state (syncStatus=%s)" % (
                w["name"],
                ((state.get("status") or {}).get("syncStatus")) or "unset",
            )
        if have.get("numVfs") != w["numVfs"] or have.get("mtu") != w["mtu"]:
            return "spec.interfaces %s has numVfs=%s mtu=%s, the policies ask for numVfs=%d mtu=%d" % (
                w["name"],
                have.get("numVfs"),
                have.get("mtu"),
                w["numVfs"],
                w["mtu"],
            )
    return None


def _status_problem(state, wanted):
    status = state.get("status") or {}
    sync = status.get("syncStatus")
    if sync != "Succeeded":
        err = status.get("lastSyncError") or ""
        return "syncStatus=%s%s" % (sync or "unset", (" lastSyncError: %s" % err) if err else "")
    reported = _by_ifname(status.get("interfaces"))
    for w in wanted:
        have = reported.get(w["name"])
        if have is None:
            return "status.interfaces does not report %s" % w["name"]
        # The daemon raises a PF's MTU to the policy's but never lowers it, so a larger PF MTU is fine.
        if have.get("numVfs") != w["numVfs"] or (have.get("mtu") or 0) < w["mtu"]:
            return "status.interfaces %s reports numVfs=%s mtu=%s, expected numVfs=%d and mtu of at least %d" % (
                w["name"],
                have.get("numVfs"),
                have.get("mtu"),
                w["numVfs"],
                w["mtu"],
            )
    return None


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


def managed_orphans(live, rendered):
    """Objects this collection created (``app.kubernetes.io/managed-by: gpufabric.roce``) that the
    inventory no longer renders: what pruning deletes. Anything without the label is never returned."""
    keep = {((o.get("metadata") or {}).get("namespace"), o["kind"], o["metadata"]["name"]) for o in rendered or []}
    out = []
    for obj in live or []:
        meta = obj.get("metadata") or {}
        if (meta.get("labels") or {}).get(MANAGED_BY_LABEL) != MANAGED_BY_VALUE:
            continue
        if (meta.get("namespace"), obj.get("kind"), meta.get("name")) not in keep:
            out.append(
                {
                    "apiVersion": obj.get("apiVersion"),
                    "kind": obj.get("kind"),
                    "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace")},
                }
            )
    return sorted(out, key=lambda o: (o["kind"], o["metadata"]["name"]))


def _groups_of(iface, policies):
    return [g for g in iface.get("vfGroups") or [] if g.get("policyName") in policies]


def sriov_drain_plan(states, policies):
    """The node states that carry VF groups of ``policies`` (read before they are deleted): per node, the PFs the
    config daemon must release once the policies are gone, with whether the host made their VFs
    (``externallyManaged``: the daemon leaves those VFs, the host half of the teardown removes them)."""
    wanted = set(policies or [])
    out = []
    for st in states or []:
        ifaces = [{"name": i.get("name"), "pciAddress": i.get("pciAddress"), "externallyManaged": bool(i.get("externallyManaged"))}
                  for i in (st.get("spec") or {}).get("interfaces") or [] if _groups_of(i, wanted)]
        if ifaces:
            out.append({"node_name": (st.get("metadata") or {}).get("name"), "policies": sorted(wanted), "interfaces": ifaces})
    return sorted(out, key=lambda n: n["node_name"])


def sriov_node_states_draining(states, expected_nodes):
    """For each node of :func:`sriov_drain_plan`, why its state does not show the policies' VFs released yet: the
    spec must carry no VF group of the deleted policies, the sync must have Succeeded, and each released PF the
    operator made VFs on must report none (unless another policy still configures that PF)."""
    by_name = {(s.get("metadata") or {}).get("name"): s for s in states or []}
    out = []
    for node in expected_nodes or []:
        name = node["node_name"]
        st = by_name.get(name)
        if st is None:
            continue  # the state went with the node (or the operator): nothing holds VFs for these policies any more
        spec = _by_ifname((st.get("spec") or {}).get("interfaces"))
        status = st.get("status") or {}
        left = [i["name"] for i in node.get("interfaces") or [] if _groups_of(spec.get(i["name"]) or {}, set(node.get("policies") or []))]
        if left:
            out.append("%s: spec.interfaces still carries VF groups of the deleted policies on %s (the operator has not rewritten "
                       "the node state yet)" % (name, ", ".join(left)))
            continue
        if status.get("syncStatus") != "Succeeded":
            err = status.get("lastSyncError") or ""
            out.append("%s: syncStatus=%s%s" % (name, status.get("syncStatus") or "unset", (" lastSyncError: %s" % err) if err else ""))
            continue
        reported = _by_ifname(status.get("interfaces"))
        for iface in node.get("interfaces") or []:
            if iface.get("externallyManaged") or iface["name"] in spec:
                continue
            vfs = (reported.get(iface["name"]) or {}).get("numVfs") or 0
            if vfs:
                out.append("%s: status.interfaces %s still reports numVfs=%s" % (name, iface["name"], vfs))
                break
    return out

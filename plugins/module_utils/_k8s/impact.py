# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The change-impact report: per node, what a run does (in check mode: would do) that disrupts workloads.

Built from what the run already computed, so it costs no extra call to a node or the cluster:

- the host phase's results on each node (host_network): ``sriov_vf`` (VF count before and after, whether existing
  VFs are reset, whether the node is drained first) and ``vlan_gateway`` (its diff: gateway created, addresses; its
  ``route_changes``: routes added, removed or changed);
- the SR-IOV phase on the controller: the rendered SriovNetworkNodePolicies against this fabric's live ones and the
  SriovNetworkNodeStates' status.

What the sriov-network-operator does with a policy change, read from its source (pkg/plugins/generic,
pkg/plugins/mellanox): the config daemon drains a node before it reconfigures a PF that already has VFs (a
numVfs, MTU, device type, RDMA or link type change), and before it removes the VFs of a PF no policy selects
any more; a PF without VFs is configured without a drain. On a ConnectX NIC (vendor 15b3) a numVfs above the
firmware's (the node state's totalvfs) or a link type change is a firmware change, applied by a reboot.
"""

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov_pool import HOSTNAME_LABEL
from ansible_collections.gpufabric.roce.plugins.module_utils._common.route_ranges import last, total

# Policy fields whose change makes the operator reconfigure the PF's VFs.
RECONFIGURING = ("numVfs", "mtu", "deviceType", "isRdma", "linkType")
MELLANOX = "15b3"

NONE = "no disruption"
# How the table shows a field a policy does not set (the operator's default applies), instead of Python's None.
UNSET = "(unset)"


def _num(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def vf_impact(result):
    """One ``sriov_vf`` result (host VF mode) as {pf, num_vfs_before, num_vfs, reset, changed}; None when skipped."""
    if not isinstance(result, dict) or result.get("skipped") or "pf" not in result:
        return None
    before = ((result.get("diff") or {}).get("before") or {}).get("num_vfs")
    return {"pf": result["pf"], "num_vfs_before": _num(before), "num_vfs": _num(result.get("num_vfs")),
            "reset": bool(result.get("vf_reset")), "changed": bool(result.get("changed"))}


def _route_key(route):
    """A route, or a range of them (``_common.route_ranges``): its first and last, and how many."""
    def one(r):
        return "%s via %s" % (r.get("dst"), r.get("via")) if r.get("via") else "%s" % r.get("dst")
    count = int(route.get("count") or 1)
    if count == 1:
        return one(route)
    return "%s .. %s (%d routes)" % (one(route), one(last(route)), count)


def gateway_impact(result):
    """One ``vlan_gateway`` result as {interface, created, routes_added, routes_removed, routes_changed, routes_kept,
    route_counts, addresses_added, addresses_removed, mtu}; None when skipped or failed. The routes are read from the
    module's ``route_changes``, in range form: a first rollout at 10,000 nodes adds 10,000 routes per gateway, which
    this report would otherwise list one by one for every node."""
    if not isinstance(result, dict) or result.get("skipped") or result.get("failed") or "diff" not in result:
        return None
    before, after = result["diff"].get("before") or {}, result["diff"].get("after") or {}
    changes = result.get("route_changes") or {}
    out = {
        "interface": result.get("interface") or after.get("interface"),
        "created": not before.get("present") and bool(after.get("present")),
        "routes_added": [_route_key(r) for r in changes.get("added") or []],
        "routes_removed": [_route_key(r) for r in changes.get("removed") or []],
        "routes_changed": [_route_key(r) for r in changes.get("changed") or []],
        "route_counts": {k: total(changes.get(k)) for k in ("added", "removed", "changed")},
        "routes_kept": total(changes.get("kept")),
        "addresses_added": sorted(set(after.get("addresses") or []) - set(before.get("addresses") or [])),
        "addresses_removed": sorted(set(before.get("addresses") or []) - set(after.get("addresses") or [])),
        "mtu": [before.get("mtu"), after.get("mtu")] if before.get("present") and before.get("mtu") != after.get("mtu") else None,
    }
    return out


def qos_impact(result):
    """One ``roce_qos`` result as {interface, actions, unsupported, link_flap}; None when skipped, failed or unchanged.
    A PFC change makes mlx5 take the link down and up (mlx5e_dcbnl_ieee_setpfc): a short flap of every flow on it."""
    if not isinstance(result, dict) or result.get("skipped") or result.get("failed") or "interface" not in result:
        return None
    actions = list(result.get("actions") or [])
    if not actions:
        return None  # what a NIC cannot do is reported by the task itself, on every run; here only what changes
    return {"interface": result["interface"], "actions": actions, "unsupported": sorted(result.get("unsupported") or {}),
            "link_flap": any(a.startswith("set PFC") for a in actions)}


def host_impact(vf_results, gateway_results, drain, qos_results=()):
    """A node's host-phase impact from its registered results (single results or loop results).

    ``drain``: whether the host phase drains this node around a VF reset (host VF mode on a Kubernetes node with
    host_network_drain on)."""
    vfs = [v for v in (vf_impact(r) for r in _flat(vf_results)) if v]
    gws = [g for g in (gateway_impact(r) for r in _flat(gateway_results)) if g]
    qos = [q for q in (qos_impact(r) for r in _flat(qos_results)) if q]
    reset = any(v["reset"] for v in vfs)
    return {"vfs": vfs, "vf_reset": reset, "drain": bool(drain) and reset, "gateways": gws, "qos": qos}


def reset_predicted(results):
    """Whether any ``sriov_vf`` result (single or loop) resets existing VFs."""
    return any(v["reset"] for v in (vf_impact(r) for r in _flat(results)) if v)


def _flat(results):
    """Each rail's result: a module run's own, a loop's items, or the entries of a run that took every rail
    (``rails``, whose diffs are the run's ``diff`` list in the same order)."""
    out = []
    for r in results or []:
        if isinstance(r, dict) and isinstance(r.get("results"), list):
            out.extend(_flat(r["results"]))
        elif isinstance(r, dict) and isinstance(r.get("rails"), list):
            diffs = r["diff"] if isinstance(r.get("diff"), list) else []
            out.extend(dict(rail, diff=diffs[i]) if i < len(diffs) else rail for i, rail in enumerate(r["rails"]))
        elif r:
            out.append(r)
    return out


def _policy_node(policy):
    return ((policy.get("spec") or {}).get("nodeSelector") or {}).get(HOSTNAME_LABEL)


def _pfs(policy):
    return list(((policy.get("spec") or {}).get("nicSelector") or {}).get("pfNames") or [])


def _status_pfs(state):
    """{pf name: status interface} of a SriovNetworkNodeState; a pfNames entry may carry a VF range (pf#0-7)."""
    return {i.get("name"): i for i in ((state or {}).get("status") or {}).get("interfaces") or [] if i.get("name")}


def operator_impact(rendered, live, states, removed=()):
    """{node name: [change]} for this fabric's policies: rendered against ``live`` (the collection's policies in the
    cluster, by name), ``removed`` (names of the live policies the run prunes), with each PF's current VFs from
    ``states`` (SriovNetworkNodeStates, by node name).

    A change is {policy, pfs, change: new|update|removed, fields: {field: [before, after]}, drain, reboot}."""
    live_by_name = {p["metadata"]["name"]: p for p in live or []}
    states = {s["metadata"]["name"]: s for s in states or []}
    out = {}

    def add(node, policy, change, fields, want_vfs, link_changed):  # noqa: PLR0917 - a local helper of five call sites
        status = _status_pfs(states.get(node))
        pfs = [pf.split("#")[0] for pf in _pfs(policy)]
        current = [status.get(pf) for pf in pfs]
        # Unknown state (no node state yet, or a PF it does not list): assume VFs exist, so a drain is not hidden,
        # and say that it is assumed.
        known = bool(current) and all(c is not None for c in current)
        has_vfs = any(c is None or (_num(c.get("numVfs")) or 0) > 0 for c in current) if current else True
        reboot = any(c is not None and c.get("vendor") == MELLANOX and (
            (want_vfs is not None and _num(c.get("totalvfs")) is not None and want_vfs > _num(c.get("totalvfs"))) or link_changed)
            for c in current)
        out.setdefault(node, []).append({"policy": policy["metadata"]["name"], "pfs": pfs, "change": change, "fields": fields,
                                         "drain": has_vfs, "reboot": reboot, "state_known": known})

    for policy in rendered or []:
        node, name, spec = _policy_node(policy), policy["metadata"]["name"], policy.get("spec") or {}
        old = live_by_name.get(name)
        if old is None:
            add(node, policy, "new", {f: [None, spec.get(f)] for f in RECONFIGURING if f in spec}, _num(spec.get("numVfs")), False)
            continue
        old_spec = old.get("spec") or {}
        fields = {f: [old_spec.get(f), spec.get(f)] for f in RECONFIGURING if old_spec.get(f) != spec.get(f)}
        if fields:
            add(node, policy, "update", fields, _num(spec.get("numVfs")), "linkType" in fields)
    for policy in [live_by_name[n] for n in sorted(set(removed or ())) if n in live_by_name]:
        add(_policy_node(policy), policy, "removed", {"numVfs": [(policy.get("spec") or {}).get("numVfs"), 0]}, None, False)
    return out


def _shown(value):
    if isinstance(value, bool):
        return "true" if value else "false"  # as the policy's YAML has it
    return UNSET if value is None else value


def _field_changes(change):
    """A policy's changed fields as the table lists them: "mtu 1500 -> 9000", "mtu (unset) -> 9000"; a new policy
    has no before, so only its values ("mtu 9000")."""
    fields = sorted(change["fields"].items())
    if change["change"] == "new":
        return ", ".join("%s %s" % (f, _shown(v[1])) for f, v in fields)
    return ", ".join("%s %s -> %s" % (f, _shown(v[0]), _shown(v[1])) for f, v in fields)


def _node_rows(host, node, host_part, operator_part):
    effects = []
    if host_part:
        for v in host_part["vfs"]:
            if v["reset"]:
                how = "drained first" if host_part["drain"] else "NOT drained (host_network_drain off or not a Kubernetes node)"
                effects.append("%s VFs %s -> %s: VF reset, %s" % (v["pf"], _shown(v["num_vfs_before"]), _shown(v["num_vfs"]), how))
            elif v["changed"] and v["num_vfs_before"] != v["num_vfs"]:
                effects.append("%s VFs %s -> %s (none existed: no reset)" % (v["pf"], _shown(v["num_vfs_before"]), _shown(v["num_vfs"])))
        for g in host_part["gateways"]:
            parts = []
            if g["created"]:
                parts.append("created")
            for key, sign in (("added", "+"), ("removed", "-"), ("changed", "~")):
                if g["routes_" + key]:
                    parts.append("%s%d route(s) (%s)" % (sign, g["route_counts"][key], ", ".join(g["routes_" + key])))
            if g["addresses_removed"]:
                parts.append("address(es) removed: %s" % ", ".join(g["addresses_removed"]))
            if g["mtu"]:
                parts.append("MTU %s -> %s" % tuple(_shown(m) for m in g["mtu"]))
            if parts:
                effects.append("gateway %s: %s" % (g["interface"], "; ".join(parts)))
        for q in host_part.get("qos") or []:
            what = "; ".join(q["actions"])
            if q["unsupported"]:
                what += " (not supported here: %s)" % ", ".join(q["unsupported"])
            effects.append("QoS %s: %s" % (q["interface"], what))
    for c in operator_part or []:
        fields = _field_changes(c)
        what = {"new": "new policy %s" % c["policy"], "update": "policy %s: %s" % (c["policy"], fields),
                "removed": "policy %s removed (VFs of %s go)" % (c["policy"], ", ".join(c["pfs"]))}[c["change"]]
        if c["change"] == "new":
            what += " (%s)" % fields if fields else ""
        if not c.get("state_known", True):
            effect = "operator drain, unless %s has no VFs yet (no SriovNetworkNodeState tells)" % ", ".join(c["pfs"])
        else:
            effect = "operator drain" if c["drain"] else "operator configures VFs, no drain (no VFs yet)"
        if c["reboot"]:
            effect += " and reboot (ConnectX firmware change)"
        effects.append("%s: %s" % (what, effect))
    disruption = []
    if host_part and host_part["drain"]:
        disruption.append("drain + VF reset")
    elif host_part and host_part["vf_reset"]:
        disruption.append("VF reset without drain")
    if any(c["drain"] and c.get("state_known", True) for c in operator_part or []):
        disruption.append("operator drain")
    elif any(c["drain"] for c in operator_part or []):
        disruption.append("possible operator drain")
    if any(c["reboot"] for c in operator_part or []):
        disruption.append("reboot")
    if host_part and any(g["routes_removed"] or g["routes_changed"] or g["addresses_removed"] for g in host_part["gateways"]):
        disruption.append("routes removed or changed")
    if host_part and any(q["link_flap"] for q in host_part.get("qos") or []):
        disruption.append("link flap (PFC change)")
    return {"host": host, "node": node, "disruption": ", ".join(disruption) or NONE, "changes": effects}


def report(hosts, host_parts, operator_parts, node_names=None, check_mode=True):
    """The report: {check_mode, nodes: [{host, node, disruption, changes}], summary}.

    ``hosts``: the run's nodes; ``host_parts``: {host: host_impact} (absent when the host phase did not run);
    ``operator_parts``: {node name: [change]}; ``node_names``: {host: Kubernetes node name}."""
    node_names = node_names or {}
    rows = [_node_rows(h, node_names.get(h, h), host_parts.get(h), operator_parts.get(node_names.get(h, h)))
            for h in sorted(hosts)]
    summary = {}
    for r in rows:
        summary[r["disruption"]] = summary.get(r["disruption"], 0) + 1
    data = {"check_mode": bool(check_mode), "nodes": rows, "summary": summary,
            "disrupted": sum(1 for r in rows if r["disruption"] != NONE),
            "changed": sum(1 for r in rows if r["changes"])}
    data["table"] = table(data)
    return data


def table(data, limit=50):
    """The report as text: one line per node with a change (at most ``limit``), then the counts."""
    rows = [r for r in data["nodes"] if r["changes"]]
    lines = ["Change impact (%s): %d node(s), %d with changes, %d disrupted" % (
        "check mode: what this run would do" if data["check_mode"] else "what this run did", len(data["nodes"]),
        data["changed"], data["disrupted"])]
    if rows:
        width = max(len(r["node"]) for r in rows[:limit])
        lines.append("%-*s  %-28s  %s" % (width, "node", "disruption", "changes"))
        for r in rows[:limit]:
            lines.append("%-*s  %-28s  %s" % (width, r["node"], r["disruption"], "; ".join(r["changes"])))
        if len(rows) > limit:
            lines.append("... %d more node(s) with changes (all of them in the JSON report)" % (len(rows) - limit))
    lines.append("By disruption: " + ", ".join("%s: %d" % kv for kv in sorted(data["summary"].items())))
    if not rows:
        lines.append("No node would change." if data["check_mode"] else "No node changed.")
    return "\n".join(lines)

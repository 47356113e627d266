# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SriovNetworkPoolConfig: how many of the fabric's nodes the sriov-network-operator may drain at once.

What the operator (v1.6.0) does with a pool config, read from its source:

- ``controllers/drain_controller_helper.go`` (findNodePoolConfig): every pool config without
  ``ovsHardwareOffloadConfig`` is a drain pool; a nil or empty ``nodeSelector`` selects EVERY node; a node
  selected by two pools is an error and that node is never drained (re-queued); a node in no pool falls
  into the built-in default pool, ``maxUnavailable: 1`` (one node at a time) over all unpooled nodes.
- ``api/v1/helper.go`` (MaxUnavailable): ``maxUnavailable`` unset means NO limit (every node of the pool
  drains at once); a percentage is scaled with intstr's ``GetScaledValueFromIntOrPercent(..., false)``,
  rounded DOWN, so "10%" of 5 nodes is 0; and the drain controller then never starts a drain
  (``current >= maxUnv`` with 0 always holds). An integer 0 does the same.
- ``main.go``: the operator's cache sees only its own namespace, so the pool config must live there.
- ``pkg/webhook/validate.go``: percentages must be "<1-100>%" (integer), integers non-negative.

So this renderer always writes ``maxUnavailable``, never lets it round to 0 nodes, and selects the
fabric's nodes by name (``kubernetes.io/hostname In [...]``, as the node policies do), so that another
fabric's or the user's pools never overlap with it by default.
"""

import re

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import (
    DNS_LABEL_RE,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    RenderValidationError,
    _Errors,
    _is_unset,
    _lookup,
    plain,
    require_keys,
)

SRIOV_API_VERSION = "sriovnetwork.openshift.io/v1"
HOSTNAME_LABEL = "kubernetes.io/hostname"

# The cluster-wide and per-node settings read besides each node's own; the caller passes every one (the filter
# gpufabric.roce._sriov_pool_configs fills in the role's defaults/main.yml, plugin_utils/_role_defaults.py).
POOL_DEFAULT_KEYS = (
    "sriov_networks_pool_config",
    "sriov_networks_pool_name",
    "sriov_networks_pool_max_unavailable",
    "sriov_networks_name_prefix",
    "sriov_networks_namespace",
)

# Read per node: a node group (inventory group_vars) may have its own pool and limit.
POOL_PER_HOST_KEYS = ("sriov_networks_pool_name", "sriov_networks_pool_max_unavailable")

_PERCENT_RE = re.compile(r"^([0-9]+)%\Z")
_INT_RE = re.compile(r"^[0-9]+\Z")
_MAX_UNAVAILABLE_FIX = 'set sriov_networks_pool_max_unavailable to a whole number of nodes of at least 1 (e.g. 2) or a percentage from 1% to 100% (e.g. "10%")'


def parse_max_unavailable(value):
    """(kind, number) of a maxUnavailable as the inventory gives it: ('int', n) or ('percent', p); None when invalid.

    The operator's rules (webhook and drain controller) plus ours: 0 and 0% are refused, since they stop every drain."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return ("int", value) if value >= 1 else None
    if isinstance(value, str):
        text = value.strip()
        match = _PERCENT_RE.match(text)
        if match:
            pct = int(match.group(1))
            return ("percent", pct) if 1 <= pct <= 100 else None
        if _INT_RE.match(text) and int(text) >= 1:  # a templated integer arrives as text
            return ("int", int(text))
    return None


def effective_max_unavailable(parsed, node_count):
    """The number of nodes the operator lets drain at once for ``parsed`` over ``node_count`` nodes (floor, as it does)."""
    kind, number = parsed
    return number if kind == "int" else (number * node_count) // 100


def pool_object_name(name_prefix, pool):
    return "%s-pool" % name_prefix if _is_unset(pool) else "%s-pool-%s" % (name_prefix, pool)


def render_pool_configs(nodes, host_vars, defaults=None):
    """Validate the pool settings of every node and render one SriovNetworkPoolConfig per pool.

    ``nodes``: ``[{host, node_name}]`` (the node entries of the SR-IOV render). ``host_vars``: host -> its
    variables. ``defaults``: the play host's values (every key of POOL_DEFAULT_KEYS), the only source of the cluster-wide
    ``sriov_networks_pool_config``, ``sriov_networks_name_prefix`` and ``sriov_networks_namespace``.
    Returns ``{"pool_configs": [...], "pools": [{name, nodes, max_unavailable, requested, effective, raised}]}``;
    raises :class:`RenderValidationError` listing every problem.
    """
    defaults = plain(defaults or {})
    require_keys(defaults, POOL_DEFAULT_KEYS, "render_pool_configs", "sriov_pool_configs")
    errs = _Errors()

    def cluster(key):
        return _lookup(None, defaults, {}, key)

    enabled = cluster("sriov_networks_pool_config")
    if not isinstance(enabled, bool):
        errs.add("(controller)", "sriov_networks_pool_config", enabled, "must be true or false",
                 "set sriov_networks_pool_config: true (or false to leave drain pools to the cluster)")
        errs.raise_if_any()
    if not enabled:
        return {"pool_configs": [], "pools": []}
    prefix, namespace = cluster("sriov_networks_name_prefix"), cluster("sriov_networks_namespace")

    pools = {}  # pool name -> {"nodes": [...], "value": (first host, raw value, parsed)}
    for node in nodes or []:
        host = node["host"]
        hv = plain(host_vars.get(host) or {})
        pool = _lookup(hv, defaults, {}, "sriov_networks_pool_name")
        raw = _lookup(hv, defaults, {}, "sriov_networks_pool_max_unavailable")
        if pool is None or not isinstance(pool, str) or not (pool == "" or DNS_LABEL_RE.match(pool)) or len(pool_object_name(prefix, pool)) > 253:
            errs.add(host, "sriov_networks_pool_name", pool, "not a valid pool name (it becomes part of the SriovNetworkPoolConfig's name)",
                     "use lower-case letters, digits and '-' (e.g. sriov_networks_pool_name: rack-a), or leave it empty for the fabric's one pool")
            continue
        parsed = parse_max_unavailable(raw)
        if parsed is None:
            errs.add(host, "sriov_networks_pool_max_unavailable", raw,
                     "not a number of nodes (at least 1) nor a percentage (1% to 100%); 0 or 0% would stop every drain of the pool "
                     "and the operator refuses other strings", _MAX_UNAVAILABLE_FIX)
            continue
        entry = pools.setdefault(pool, {"nodes": [], "value": (host, raw, parsed)})
        first_host, first_raw, first_parsed = entry["value"]
        if parsed != first_parsed:
            errs.add(host, "sriov_networks_pool_max_unavailable", raw,
                     "differs from host %s's %r in the same pool %r (one SriovNetworkPoolConfig per pool)"
                     % (first_host, first_raw, pool_object_name(prefix, pool)),
                     "set sriov_networks_pool_max_unavailable once for the pool's group (group_vars), or give this host "
                     "another sriov_networks_pool_name")
            continue
        entry["nodes"].append(node["node_name"])
    errs.raise_if_any()

    objects, summary = [], []
    for pool in sorted(pools):
        entry = pools[pool]
        _host, raw, parsed = entry["value"]
        names = sorted(entry["nodes"])
        effective = effective_max_unavailable(parsed, len(names))
        # A percentage that rounds down to no node would stop every drain of the pool: one node at a time instead.
        raised = effective < 1
        value = 1 if raised else (parsed[1] if parsed[0] == "int" else "%d%%" % parsed[1])
        name = pool_object_name(prefix, pool)
        objects.append({
            "apiVersion": SRIOV_API_VERSION,
            "kind": "SriovNetworkPoolConfig",
            "metadata": {"name": name, "namespace": namespace, "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}},
            "spec": {
                "maxUnavailable": value,
                "nodeSelector": {"matchExpressions": [{"key": HOSTNAME_LABEL, "operator": "In", "values": names}]},
            },
        })
        summary.append({"name": name, "nodes": len(names), "max_unavailable": value, "requested": raw,
                        "effective": max(effective, 1), "raised": raised})
    return {"pool_configs": objects, "pools": summary}


def pool_problems(nodes, host_vars, defaults=None):
    """The messages :func:`render_pool_configs` would raise, as a list (empty when valid)."""
    try:
        render_pool_configs(nodes, host_vars, defaults)
    except RenderValidationError as exc:
        return ["%s" % e for e in exc.errors]
    return []


def _selected_names(selector):
    """The node names a pool's nodeSelector selects when that is knowable without the nodes' labels: a set, or
    ``None`` for every node (nil or empty selector), or ``False`` when it depends on other labels."""
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return None
    names = None
    for key, value in (selector.get("matchLabels") or {}).items():
        if key != HOSTNAME_LABEL:
            return False
        names = {value} if names is None else names & {value}
    for expr in selector.get("matchExpressions") or []:
        if expr.get("key") != HOSTNAME_LABEL or expr.get("operator") != "In":
            return False
        values = set(expr.get("values") or [])
        names = values if names is None else names & values
    return names


def pool_overlaps(live, rendered):
    """Live SriovNetworkPoolConfigs (any, not only this collection's) that select a node of a rendered pool.

    The operator refuses to drain a node that two drain pools select (drain_controller_helper.go,
    findNodePoolConfig: "node is part of more then one pool"): that node's VF changes would wait forever.
    Returns ``{"conflicts": [message], "unknown": ["<name>"]}``: ``unknown`` lists the pools whose selector
    uses other labels than the node name, which only the nodes' labels could decide."""
    ours = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in rendered or []}
    conflicts, unknown = [], []
    for obj in live or []:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        if (meta.get("namespace"), meta.get("name")) in ours or (spec.get("ovsHardwareOffloadConfig") or {}).get("name"):
            continue  # ours (updated by the apply), or an OVS offload config, which is no drain pool
        selected = _selected_names(spec.get("nodeSelector"))
        if selected is False:
            unknown.append(meta.get("name"))
            continue
        fabric = ((meta.get("labels") or {}).get("gpufabric.roce/fabric"))
        for mine in ours.values():
            names = mine["spec"]["nodeSelector"]["matchExpressions"][0]["values"]
            both = names if selected is None else sorted(set(names) & selected)
            if both:
                shown = "every node" if selected is None else "node(s) %s%s" % (
                    ", ".join(both[:10]), " and %d more" % (len(both) - 10) if len(both) > 10 else "")
                conflicts.append(
                    "SriovNetworkPoolConfig/%s%s in namespace %s selects %s, which this inventory's pool %s also selects; the "
                    "sriov-network-operator never drains a node that two pools select, so their VF changes would wait forever"
                    % (meta.get("name"), " (fabric %s)" % fabric if fabric else "", meta.get("namespace"), shown, mine["metadata"]["name"]))
    return {"conflicts": conflicts, "unknown": sorted(unknown)}

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NicNodePolicies (network-operator 26.4 and later): the per-node components of the NicClusterPolicy, one policy per
node group of the inventory (``network_operator_node_policies: true``).

What moves: the sections the NicNodePolicy CRD has (``ofedDriver``, ``rdmaSharedDevicePlugin``, ``sriovDevicePlugin``),
with the tolerations; what stays in the NicClusterPolicy: the cluster-wide components (Multus, CNI plugins, nv-ipam, the
NIC Configuration Operator, ...), which the NicNodePolicy CRD does not have. A component in both would be deployed twice
on the same nodes, so it is taken out of the NicClusterPolicy.

The groups come from the nodes' variables (roce_nodes): ``network_operator_node_group`` (the group's name, also the
policy's), ``network_operator_node_group_selector`` (the node labels that select the group's nodes) and
``network_operator_node_group_overrides`` (merged into that group's policy spec), usually set in group_vars of an
Ansible group. Nodes that set no group form the one default group, selected by the label Node Feature Discovery puts on
every node with a Mellanox NIC.
"""

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import (
    DNS_LABEL_RE,
    LABEL_KEY_RE,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    LABEL_VALUE_RE,
    _as_bool,
    _Errors,
    _is_unset,
    deep_merge,
    plain,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.ncp_schema import NCP_SPEC_SCHEMA, schema_problems
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.operator import (
    NCP_API_VERSION,
    NCP_RELEASES,
    _dig,
    chart_has,
    render_nic_cluster_policy,
)

NNP_KIND = "NicNodePolicy"
# The sections of a NicClusterPolicy spec that the NicNodePolicy CRD also has (mellanox.com_nicnodepolicies.yaml).
NODE_COMPONENTS = ("ofedDriver", "rdmaSharedDevicePlugin", "sriovDevicePlugin")
DEFAULT_GROUP = "roce-nodes"
# The operator's admission webhook refuses a longer NicNodePolicy name: it becomes part of DaemonSet names and labels
# (api/v1alpha1/validator/nicpolicy_webhook.go, maxNicNodePolicyNameLength).
MAX_NAME = 30
# Node Feature Discovery's label of a node with a PCI device of vendor 15b3 (Mellanox), which the chart deploys by default.
DEFAULT_SELECTOR = {"feature.node.kubernetes.io/pci-15b3.present": "true"}
GROUP_FIELD = "network_operator_node_group"
SELECTOR_FIELD = "network_operator_node_group_selector"
OVERRIDES_FIELD = "network_operator_node_group_overrides"
MEMBER_FIELDS = (GROUP_FIELD, SELECTOR_FIELD, OVERRIDES_FIELD)
# What a group's overrides may set: the NicNodePolicy spec but nodeSelector (the selector's own variable sets it).
_OVERRIDE_KEYS = NODE_COMPONENTS + ("tolerations",)
# The NicNodePolicy spec's component sections, which are the NicClusterPolicy's (the same Go types upstream).
_NNP_SCHEMA = {"type": "object", "properties": {k: NCP_SPEC_SCHEMA["properties"][k] for k in _OVERRIDE_KEYS}}


def _unset(value):
    return _is_unset(value) or value in ({}, [])


def _check_selector(errs, host, selector):
    if not isinstance(selector, dict) or not selector:
        errs.add(host, SELECTOR_FIELD, selector, "must be a non-empty mapping of node label to value",
                 "set it to labels every node of the group carries and no other node does, e.g. {node.kubernetes.io/pool: h100}")
        return None
    bad = sorted("%s=%s" % (k, v) for k, v in selector.items()
                 if not isinstance(k, str) or not LABEL_KEY_RE.match(k) or not isinstance(v, str) or not LABEL_VALUE_RE.match(v))
    if bad:
        errs.add(host, SELECTOR_FIELD, selector, "not a node label key and string value: %s" % ", ".join(bad),
                 "quote the value (\"true\", not true) and use a label key such as node.kubernetes.io/pool")
        return None
    return dict(selector)


def _check_overrides(errs, host, overrides):
    if not isinstance(overrides, dict):
        errs.add(host, OVERRIDES_FIELD, overrides, "must be a mapping merged into the group's NicNodePolicy spec",
                 "e.g. {ofedDriver: {version: <DOCA driver tag>}}")
        return None
    unknown = sorted(set(overrides) - set(_OVERRIDE_KEYS))
    if unknown:
        errs.add(host, OVERRIDES_FIELD, overrides, "key(s) %s are not per-node-group settings of a NicNodePolicy" % ", ".join(unknown),
                 "use only %s (the node selector is %s)" % (", ".join(_OVERRIDE_KEYS), SELECTOR_FIELD))
        return None
    return plain(overrides)


def node_groups(errs, members):
    """{group: {"selector", "overrides", "hosts"}} from the nodes' variables (``members``: [{host, <MEMBER_FIELDS>}]).
    Every node of a group must give the same selector and overrides; no selector may select every node of another."""
    groups, ungrouped = {}, []
    for m in members or []:
        host = m.get("host") or "?"
        name = m.get(GROUP_FIELD)
        if _unset(name):
            if not _unset(m.get(SELECTOR_FIELD)) or not _unset(m.get(OVERRIDES_FIELD)):
                errs.add(host, GROUP_FIELD, name, "%s or %s is set, but not the group" % (SELECTOR_FIELD, OVERRIDES_FIELD),
                         "set %s to the group's name (e.g. the Ansible group's, h100) beside them" % GROUP_FIELD)
            ungrouped.append(host)
            continue
        if not isinstance(name, str) or not DNS_LABEL_RE.match(name) or len(name) > MAX_NAME:
            errs.add(host, GROUP_FIELD, name, "not a valid NicNodePolicy name (a DNS-1123 label of at most %d characters, the "
                     "operator's limit)" % MAX_NAME,
                     "use lower-case letters, digits and '-', e.g. h100")
            continue
        selector = _check_selector(errs, host, m.get(SELECTOR_FIELD))
        overrides = _check_overrides(errs, host, m.get(OVERRIDES_FIELD) or {})
        if selector is None or overrides is None:
            continue
        group = groups.setdefault(name, {"selector": selector, "overrides": overrides, "hosts": [], "first": host})
        for field, value, have in ((SELECTOR_FIELD, selector, group["selector"]), (OVERRIDES_FIELD, overrides, group["overrides"])):
            if value != have:
                errs.add(host, field, value, "differs from node %s of the same group %s (%s)" % (group["first"], name, plain(have)),
                         "set it once for the group (group_vars/%s.yml), not per node" % name)
        group["hosts"].append(host)
    if groups and ungrouped:
        shown = ", ".join(ungrouped[:5]) + (" (+%d more)" % (len(ungrouped) - 5) if len(ungrouped) > 5 else "")
        errs.add(ungrouped[0], GROUP_FIELD, None,
                 "nodes %s are in no node group while other nodes are (%s): the default group's selector (%s) would also select "
                 "the other groups' nodes" % (shown, ", ".join(sorted(groups)), _labels(DEFAULT_SELECTOR)),
                 "give every node of roce_nodes a %s and %s (group_vars of its Ansible group)" % (GROUP_FIELD, SELECTOR_FIELD))
    if not groups:
        return {DEFAULT_GROUP: {"selector": dict(DEFAULT_SELECTOR), "overrides": {}, "hosts": ungrouped, "first": None}}
    names = sorted(groups)
    for a in names:
        for b in names:
            # A selector whose labels are a subset of another's selects all that group's nodes too.
            if a != b and set(groups[a]["selector"].items()) <= set(groups[b]["selector"].items()):
                errs.add(groups[a]["first"], SELECTOR_FIELD, groups[a]["selector"],
                         "selects every node that group %s's selector (%s) selects, so two NicNodePolicies would deploy the "
                         "same components on them" % (b, _labels(groups[b]["selector"])),
                         "give group %s a label that group %s's nodes do not carry" % (a, b))
    return groups


def _labels(selector):
    return ",".join("%s=%s" % kv for kv in sorted(selector.items()))


def render_nic_policies(cfg=None, members=None):
    """{"nic_cluster_policy", "nic_node_policies"}. ``cfg``: the NicClusterPolicy's role variables and
    ``network_operator_node_policies``; ``members``: the nodes' group variables (see node_groups). Without node
    policies, the NicClusterPolicy as before and no NicNodePolicy."""
    cfg = dict(cfg or {})
    errs = _Errors()
    enabled = _as_bool(errs, "(cluster)", "network_operator_node_policies", cfg.pop("network_operator_node_policies", False))
    errs.raise_if_any()
    if not enabled:
        return {"nic_cluster_policy": render_nic_cluster_policy(cfg), "nic_node_policies": []}
    version = cfg.get("network_operator_chart_version")
    if not chart_has(version, "node_policies"):
        newer = ", ".join(v for v in sorted(NCP_RELEASES) if chart_has(v, "node_policies"))
        errs.add("(cluster)", "network_operator_node_policies", True,
                 "network-operator chart %s has no NicNodePolicy CRD (it came with 26.4): the API server would refuse every "
                 "NicNodePolicy after the release was installed" % version,
                 "set network_operator_chart_version to a release with the CRD (%s), or network_operator_node_policies: false "
                 "to keep every component in the NicClusterPolicy" % newer)
    groups = node_groups(errs, members)
    errs.raise_if_any()
    ncp = render_nic_cluster_policy(cfg)
    spec = ncp["spec"]
    moved = {k: spec.pop(k) for k in NODE_COMPONENTS if k in spec}
    if not moved and not any(g["overrides"] for g in groups.values()):
        errs.add("(cluster)", "network_operator_node_policies", True,
                 "no per-node component is deployed (%s), so every NicNodePolicy would be empty" % ", ".join(NODE_COMPONENTS),
                 "set network_operator_ofed_driver or network_operator_rdma_shared_device_plugin: true, or "
                 "network_operator_node_policies: false")
    policies = []
    for name in sorted(groups):
        group = groups[name]
        body = dict(moved, **({"tolerations": spec["tolerations"]} if spec.get("tolerations") else {}))
        body = deep_merge(body, group["overrides"])
        for path, problem, allowed in schema_problems(body, _NNP_SCHEMA):
            errs.add(group["first"] or "(cluster)", "%s.%s" % (OVERRIDES_FIELD, path), _dig(body, path),
                     "%s: group %s's NicNodePolicy fails the CRD schema at spec.%s" % (problem, name, path),
                     "correct or remove it%s" % (" (allowed: %s)" % ", ".join(allowed[:15]) if allowed else ""))
        policies.append({"apiVersion": NCP_API_VERSION, "kind": NNP_KIND, "metadata": {"name": name, "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}},
                         "spec": dict(plain(body), nodeSelector=dict(group["selector"]))})
    errs.raise_if_any()
    return {"nic_cluster_policy": ncp, "nic_node_policies": policies}

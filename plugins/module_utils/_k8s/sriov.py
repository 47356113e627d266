# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SriovNetworkNodePolicies and SriovNetworks: validation against the sriov-network-operator
admission rules and rendering, for the whole inventory in one pass (:func:`render_sriov`)."""

import ipaddress
import json

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import format_error, ident, plain, slug
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import (
    DNS_LABEL_RE,
    DNS_SUBDOMAIN_RE,
    is_dns_subdomain,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    _is_unset,
    _lookup,
    require_keys,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import dra
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nv_ipam import NvIpamPools, pool_name, pool_resource_name
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov_network import (
    check_ipam_routes,
    check_network_settings,
    check_pod_subnet,
    free_subnet,
    nv_ipam,
    whereabouts_ipam,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import (
    IPOIB_MTU_MAX,
    is_ib,
    is_multirail,
    link_type_problems,
    node_network_name,
    node_resource_name,
    rail_field,
    rail_network_name,
    rail_resource_name,
    shorthand_vars,
    vlan_problems,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.plan import table_rails
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import hosts_named
from ansible_collections.gpufabric.roce.plugins.module_utils._common.qos import QosCache, roce_priority
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov_checks import (
    FixErrors,
    MLX_MAX_VFS,
    NETDEV_RE,
    PF_RANGE_RE,
    RESOURCE_NAME_RE,
    SUPPORTED_NIC_VENDORS,
    VfRangeIndex,
    check_policy,
    check_vendor,
    describe,
    parse_pf_name,
)

# Re-exported: callers and tests import the webhook rules from here too.
__all__ = [
    "MLX_MAX_VFS",
    "NETDEV_RE",
    "PF_RANGE_RE",
    "RESOURCE_NAME_RE",
    "SRIOV_API_VERSION",
    "SRIOV_DEFAULT_KEYS",
    "SRIOV_PER_HOST_KEYS",
    "SUPPORTED_NIC_VENDORS",
    "parse_pf_name",
    "render_sriov",
]

SRIOV_API_VERSION = "sriovnetwork.openshift.io/v1"

IPAM_MODES = ("host-local", "whereabouts", "nv-ipam")
VF_MODES = ("operator", "host")

# The variables the renderer reads besides each node's own (the inventory's names). Their defaults are not written
# here: the caller passes every one (plugins/filter/k8s_render.py fills in what it was not given from the role's
# defaults/main.yml and _fabric.rails.ROCE_DEFAULTS, plugin_utils/_role_defaults.py).
# The role's variables a node may set for itself (its hostvars win over the role's value).
_PER_NODE_ROLE_KEYS = (
    "sriov_networks_resource_name",
    "sriov_networks_pf_names",
    "sriov_networks_link_type",
    "sriov_networks_device_type",
    "sriov_networks_is_rdma",
    "sriov_networks_priority",
    "sriov_networks_nic_vendor",
    "sriov_networks_node_selector",
    "sriov_networks_extra_policies",
    "sriov_networks_vlan_qos",
    "sriov_networks_trust",
    "sriov_networks_spoof_chk",
    "sriov_networks_link_state",
    "sriov_networks_min_tx_rate",
    "sriov_networks_max_tx_rate",
    "sriov_networks_network_namespace",
    "sriov_networks_ipam_routes",
)
_SHARED_FABRIC_KEYS = ("roce_num_vfs", "roce_mtu", "roce_vlan_id", "roce_vf_mode")

SRIOV_DEFAULT_KEYS = _SHARED_FABRIC_KEYS + (
    # cluster-wide: read from the play host only
    "sriov_networks_namespace",
    "sriov_networks_resource_prefix",
    "sriov_networks_ipam",
    "sriov_networks_name_prefix",
    "sriov_networks_whereabouts_range",
    "sriov_networks_whereabouts_exclude",
    "sriov_networks_whereabouts_gateway",
    "sriov_networks_nv_ipam_pool",
    "sriov_networks_nv_ipam_pool_type",
) + dra.DRA_DEFAULT_KEYS + _PER_NODE_ROLE_KEYS

# Variables read per node (hostvars first, then the role defaults). Everything else in
# SRIOV_DEFAULT_KEYS is cluster-wide and read from the play host only.
SRIOV_PER_HOST_KEYS = (
    ("roce_node_name", "roce_pf", "roce_pod_subnet", "roce_pod_gateway")
    + _SHARED_FABRIC_KEYS
    + _PER_NODE_ROLE_KEYS
    # The rail model (module_utils/_fabric/rails.py); unset means the one rail of roce_pf & co.
    + ("roce_rails", "roce_rail_overrides", "roce_node_index")
    # The QoS model (module_utils/_common/qos.py): the VFs' VLAN priority must be one PFC protects under trust pcp.
    + ("roce_qos",)
)

# Network-level settings: with a cluster-wide IPAM, nodes sharing a resourceName share one
# SriovNetwork, so they must agree on these.
_NETWORK_KEYS = (
    ("vlan", "roce_vlan_id"),
    ("vlan_qos", "sriov_networks_vlan_qos"),
    ("trust", "sriov_networks_trust"),
    ("spoof_chk", "sriov_networks_spoof_chk"),
    ("link_state", "sriov_networks_link_state"),
    ("min_tx_rate", "sriov_networks_min_tx_rate"),
    ("max_tx_rate", "sriov_networks_max_tx_rate"),
    ("network_namespace", "sriov_networks_network_namespace"),
    ("ipam_routes", "sriov_networks_ipam_routes"),
)

# Inventory field names blamed in the messages about a node's main policy.
_POLICY_FIELDS = {
    "num_vfs": "roce_num_vfs",
    "mtu": "roce_mtu",
    "priority": "sriov_networks_priority",
    "link_type": "sriov_networks_link_type",
    "device_type": "sriov_networks_device_type",
    "is_rdma": "sriov_networks_is_rdma",
    "resource_name": "sriov_networks_resource_name",
    "node_selector": "sriov_networks_node_selector",
}

_EXTRA_POLICY_KEYS = ("name", "pf_names", "resource_name", "num_vfs", "mtu", "link_type", "device_type", "is_rdma", "priority", "node_selector")

# What each IPAM mode needs besides its name: a fix that names only the mode would fail again.
_IPAM_CHOICES = (
    ("per-node subnets from roce_pod_subnet", {"sriov_networks_ipam": "host-local"}),
    ("one cluster-wide range", {"sriov_networks_ipam": "whereabouts", "sriov_networks_whereabouts_range": "10.255.0.0/16"}),
    ("an existing NVIDIA IPAM pool", {"sriov_networks_ipam": "nv-ipam", "sriov_networks_nv_ipam_pool": "roce-pool"}),
)


def _managed_metadata(name, namespace):
    return {"name": name, "namespace": namespace, "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}


def _policy_object(p, namespace):
    nic_selector = {"pfNames": list(p["pf_names"])}
    if p["nic_vendor"]:
        nic_selector["vendor"] = str(p["nic_vendor"])
    spec = {
        "resourceName": p["resource_name"],
        "nodeSelector": dict(p["node_selector"]),
        "priority": p["priority"],
        "mtu": p["mtu"],
        "numVfs": p["num_vfs"],
        "nicSelector": nic_selector,
        "deviceType": p["device_type"],
        "isRdma": p["is_rdma"],
        "linkType": p["link_type"],
    }
    if p["externally_managed"]:
        # roce_vf_mode=host: sriov_vf creates the VFs; without this flag the config daemon resets them.
        spec["externallyManaged"] = True
    return {"apiVersion": SRIOV_API_VERSION, "kind": "SriovNetworkNodePolicy", "metadata": _managed_metadata(p["name"], namespace), "spec": spec}


def render_sriov(hosts, host_vars, defaults=None, table=None):
    """Validate and render the SR-IOV objects for every host in ``hosts``.

    ``host_vars`` maps host -> mapping of that host's variables (the inventory names:
    ``roce_*`` and ``sriov_networks_*``). ``defaults`` holds the role's values (the play
    host's view), used when a host does not define a per-host variable and for every
    cluster-wide setting. ``table``: the fabric plan's table (``_fabric.pod_network.fabric_table``), from which a node
    with ``roce_rails`` reads its rails (``_fabric.plan.table_rails``): the plan builder derives them, once.
    Returns ``{"policies", "networks", "nodes", "ip_pools", "claim_templates"}`` (``ip_pools``: the nv-ipam CIDRPools
    rendered with nv-ipam and no pool name, else empty; ``claim_templates``: DRA mode's, module_utils/_k8s/dra.py); raises
    :class:`RenderValidationError` listing every problem in the whole inventory. ``defaults`` must set every key of
    ``SRIOV_DEFAULT_KEYS`` (the filter gpufabric.roce.sriov_manifests fills in the role's defaults).
    """
    require_keys(defaults or {}, SRIOV_DEFAULT_KEYS, "render_sriov", "sriov_manifests")
    return _SriovRender(defaults, table).run(hosts, host_vars)


class _SriovRender:
    """One pass over the inventory. State is what the cross-node rules need to see all of."""

    def __init__(self, defaults, table=None):
        self.defaults = dict(defaults or {})
        self.table = table or {"nodes": {}}
        self.errs = FixErrors()
        self.policies, self.networks, self.nodes = [], [], []
        self.node_owner = {}  # node_name -> host
        self.resource_owner = {}  # resourceName -> host (host-local: one node per resourceName)
        self.vf_ranges = VfRangeIndex()  # every policy's VF slices, by PF and nodeSelector
        self.subnets = []  # (version, first address, last address, network, host)
        self.shared = {}  # cluster-wide IPAM: resourceName -> (settings key, host)
        self.pending_shared = []  # cluster-wide IPAM: (resourceName, settings) in inventory order
        self.rails = {}  # host -> its rails (multi-rail hosts only), for the per-rail cross-node rules
        self.qos_cache = QosCache()
        self.vlan_qos = {}  # (vlan_qos, QoS) -> (problem, hosts): one message for the nodes that share it
        self.warned = {}  # (field, value, problem, fix) -> (value, hosts): legal but surprising, one line for the nodes sharing it
        self.default_routes = {}  # (field, routes, rail) -> hosts whose pods get a default route on the VF

    def cluster(self, key):
        return _lookup(None, self.defaults, {}, key)

    def run(self, hosts, host_vars):
        self._cluster_settings()
        if not hosts:
            self.errs.add(
                "(inventory)", "groups['roce_nodes']", list(hosts or []), "no hosts to render", "add the Kubernetes worker nodes to the roce_nodes group"
            )
        for host in hosts:
            self._host(host, host_vars.get(host))
        # A rail whose link type differs between nodes is named for that, not for a VLAN its InfiniBand nodes lack.
        for host, field, value, problem, fix in link_type_problems(self.rails, hosts) or vlan_problems(self.rails, hosts):
            self.errs.add(host, field, value, problem, fix)
        self._check_subnet_overlaps()
        for (field, value, problem, fix, prio), sharing in self.vlan_qos.values():
            self.errs.add(hosts_named(sharing), field, value, problem, fix, fix_vars=[{h: {field: prio} for h in sharing}])
        self.vf_ranges.check(self.errs)
        self.errs.raise_if_any()
        ip_pools = self.nv_pools.render(self.errs) if self.nv_pools is not None else []
        self.errs.raise_if_any()
        self._shared_networks()
        self._default_route_warnings()
        warnings = [format_error(hosts_named(h), field, value, problem, fix) for (field, _v, problem, fix), (value, h) in self.warned.items()]
        return {"policies": self.policies, "networks": self.networks, "nodes": self.nodes, "ip_pools": ip_pools, "warnings": warnings,
                "claim_templates": dra.claim_templates(self.dra, self.networks, self.prefix)}

    def _cluster_name(self, field, regex, problem, fix, example):
        value = self.cluster(field)
        if isinstance(value, str) and regex.match(value):
            return value
        self.errs.add("(cluster)", field, value, problem, fix, fix_vars=[{"(cluster)": {field: example}}])
        return None

    def _cluster_settings(self):
        errs, cluster = self.errs, self.cluster
        self.namespace = self._cluster_name(
            "sriov_networks_namespace",
            DNS_LABEL_RE,
            "not a valid namespace name",
            "use the network-operator namespace, e.g. nvidia-network-operator",
            "nvidia-network-operator",
        )
        self.prefix = self._cluster_name(
            "sriov_networks_resource_prefix", DNS_SUBDOMAIN_RE, "not a valid resource prefix", "use the chart's resourcePrefix, e.g. nvidia.com", "nvidia.com"
        )
        self.name_prefix = self._cluster_name(
            "sriov_networks_name_prefix",
            DNS_LABEL_RE,
            "not a valid object name prefix",
            "use lower-case letters, digits and '-', e.g. roce",
            "roce",
        )
        self.name_prefix = self.name_prefix or "roce"
        self.ipam = cluster("sriov_networks_ipam")
        if self.ipam not in IPAM_MODES:
            errs.add(
                "(cluster)",
                "sriov_networks_ipam",
                self.ipam,
                "unknown IPAM mode",
                describe("(cluster)", [(lead, {"(cluster)": alt}) for lead, alt in _IPAM_CHOICES]),
                fix_vars=[{"(cluster)": alt} for _lead, alt in _IPAM_CHOICES],
            )
        self.dra = dra.check_settings(errs, cluster, self.ipam) if self.ipam in IPAM_MODES else None
        self.cluster_ipam = None
        if self.ipam == "whereabouts":
            self.cluster_ipam = whereabouts_ipam(errs, cluster)
        elif self.ipam == "nv-ipam":
            self.cluster_ipam = nv_ipam(errs, cluster)
        # nv-ipam without a pool name: one CIDRPool per rail, rendered from the nodes' subnets.
        self.nv_pools = NvIpamPools(self.namespace, self.name_prefix) if self.ipam == "nv-ipam" and self.cluster_ipam is None else None

    def _node_name(self, host, hv):
        node_name = hv["roce_node_name"] or host
        if not is_dns_subdomain(node_name):
            self.errs.add(
                host, "roce_node_name", node_name, "not a valid Kubernetes node name", "set roce_node_name to the node's name as shown by kubectl get nodes"
            )
            return None
        if node_name in self.node_owner:
            free = host not in self.node_owner and is_dns_subdomain(host)
            self.errs.add(
                host,
                "roce_node_name",
                node_name,
                "node name already used by host %s" % self.node_owner[node_name],
                "give each host its own roce_node_name (the Kubernetes node name)",
                fix_vars=[{host: {"roce_node_name": host}}] if free else None,
            )
            return None
        self.node_owner[node_name] = host
        return node_name

    def _host(self, host, hv_raw):
        if hv_raw is None:
            self.errs.add(host, "hostvars", None, "host is in roce_nodes but has no variables", "check the inventory for a typo in the host name")
            return
        hv = {key: plain(_lookup(hv_raw, self.defaults, {}, key)) for key in SRIOV_PER_HOST_KEYS}
        node_name = self._node_name(host, hv)
        if node_name is None:
            return
        if is_multirail(hv):
            self._multirail_host(host, hv, node_name)
            return
        if _is_ib(hv) and hv_raw.get("roce_mtu") is None:
            hv["roce_mtu"] = IPOIB_MTU_MAX  # roce_mtu's default (9000) is Ethernet's
        resource_name = hv["sriov_networks_resource_name"]
        if _is_unset(resource_name):
            resource_name = node_resource_name(self.name_prefix, node_name, per_node=self.ipam == "host-local")
        policies, resources = self._node_policies(self.errs, host, hv, node_name, resource_name)
        self.nodes.append(_node_entry(host, node_name, policies, resources))
        self._node_network(self.errs, host, hv, node_name, resource_name, vfs=resources.get("%s/%s" % (self.prefix, resource_name)))

    def _node_network(self, errs, host, hv, node_name, resource_name, *, rail=None, vfs=None):
        """The node's SriovNetwork (host-local IPAM; its name returned) or its share of a cluster-wide one. ``vfs``: how many
        VFs of ``resource_name`` the node offers its pods."""
        net_settings = check_network_settings(errs, host, hv)
        if net_settings is None:
            return None
        if _is_ib(hv):
            # A SriovIBNetwork: its IPAM has no gateway, and of the settings only the link state and namespace apply.
            net_settings = dict(net_settings, link_type="ib")
        elif net_settings["vlan_qos"] and hv["roce_qos"] is not None:
            self._vlan_qos_rule(host, hv["roce_qos"], net_settings["vlan_qos"], rail)
        if self.ipam == "host-local":
            return self._host_local_network(errs, host, hv, node_name, resource_name, net_settings=net_settings, rail=rail, vfs=vfs)
        if self.nv_pools is not None:
            return self._nv_ipam_network(errs, host, hv, node_name, resource_name, net_settings=net_settings, rail=rail, vfs=vfs)
        if self.ipam in ("whereabouts", "nv-ipam"):
            # One network for the nodes sharing a resourceName: its routes are checked once, with the first of them
            # (the others must agree, _collect_shared_network), and fixed for all of them.
            rng = (self.cluster_ipam or {}).get("range") if self.ipam == "whereabouts" and resource_name not in self.shared else None
            if rng:
                net, gw = ipaddress.ip_network(rng), _gateway_of(self.cluster_ipam)
                check_ipam_routes(errs, host, net_settings["ipam_routes"], net, gw, "the whereabouts range", "(cluster)")
            self._collect_shared_network(host, resource_name, net_settings)
        return None

    def _vlan_qos_rule(self, host, cluster_qos, vlan_qos, rail):
        """Under trust pcp the NIC and the switches classify by the VLAN tag's priority, and the VFs' tag carries
        sriov_networks_vlan_qos (the SriovNetwork's vlanQoS): it must be a priority PFC protects. The QoS model's own
        problems are the fabric plan's to name."""
        # A rail's QoS is its profile in the fabric table; the QoS model's own problems are the fabric plan's to name.
        qos, problems = (rail.get("qos"), None) if rail else self.qos_cache.get(cluster_qos)
        if problems or qos is None or qos["trust"] != "pcp" or not qos["pfc_priorities"] or vlan_qos in qos["pfc_priorities"]:
            return
        prio = roce_priority(qos["tos"])
        field = "sriov_networks_vlan_qos"
        problem = ("puts the VFs' traffic, RoCE included, on priority %d (the priority of the VLAN tag the VFs' traffic gets, by "
                   "which trust: pcp classifies it), but PFC is on %s: RoCE in the pods would not be lossless"
                   % (vlan_qos, qos["pfc_priorities"]))
        fix = ("set sriov_networks_vlan_qos to %d, the RoCE priority (tos %d >> 5), or use trust: dscp in roce_qos (RoCE is then "
               "classified by its DSCP, whatever the VLAN priority)" % (prio, qos["tos"]))
        key = (vlan_qos, json.dumps(qos, sort_keys=True))
        hosts = self.vlan_qos.setdefault(key, ((field, vlan_qos, problem, fix, prio), []))[1]
        if host not in hosts[-1:]:  # once per node, not once per rail
            hosts.append(host)

    def _multirail_host(self, host, hv, node_name):
        """One policy and one SriovNetwork per rail (host-local IPAM), one node entry for all of them."""
        rails = table_rails(self.table, host, hv)
        if rails is None:
            self.errs.add(host, "roce_rails", [r.get("name") for r in hv["roce_rails"] if isinstance(r, dict)],
                          "has no entry in the fabric plan the render was given",
                          "render from the plan of every node of roce_nodes (site.yml or render.yml plan them first), or add the host to roce_nodes")
            return
        if self.ipam != "host-local" and self.nv_pools is None:
            self.errs.add(
                host,
                "roce_rails",
                [r["name"] for r in rails or []],
                "rails need per-node subnets, but sriov_networks_ipam is %s%s"
                % (self.ipam, " with the pool %s" % self.cluster_ipam["poolName"] if self.ipam == "nv-ipam" else ""),
                "set sriov_networks_ipam to host-local (a network per node and rail) or to nv-ipam with sriov_networks_nv_ipam_pool "
                "empty (a network and a CIDRPool per rail); each rail's subnets come from its subnet_pool. Or drop roce_rails",
            )
            return
        if _is_ib(hv):
            self.errs.add(
                host,
                "sriov_networks_link_type",
                hv["sriov_networks_link_type"],
                "is the link type of a one-rail node; a node with roce_rails has one per rail",
                "remove sriov_networks_link_type from this node and set link_type: ib on the InfiniBand rails of roce_rails",
            )
            return
        if hv["sriov_networks_extra_policies"]:
            self.errs.add(
                host,
                "sriov_networks_extra_policies",
                hv["sriov_networks_extra_policies"],
                "extra policies partition the one PF of roce_pf, which a node with roce_rails does not use",
                "drop sriov_networks_extra_policies on nodes with roce_rails (each rail is a PF of its own, with its own policy)",
            )
            return
        self.rails[host] = rails
        policies, resources, summary = [], {}, []
        for rail in rails:
            errs = _RailErrors(self.errs, rail["name"])
            hv_rail = dict(hv, sriov_networks_resource_name=None, sriov_networks_pf_names=[])
            hv_rail.update(shorthand_vars(rail))
            hv_rail["sriov_networks_link_type"] = "ib" if is_ib(rail) else hv["sriov_networks_link_type"]
            # nv-ipam's pools: one resource per rail for every node; host-local: one per node and rail.
            shared = self.nv_pools is not None
            resource_name = pool_resource_name(self.name_prefix, rail) if shared else rail_resource_name(self.name_prefix, node_name, rail)
            pols, res = self._node_policies(errs, host, hv_rail, node_name, resource_name, rail=rail["name"])
            policies.extend(pols)
            resources.update(res)
            network = self._node_network(errs, host, hv_rail, node_name, resource_name, rail=rail, vfs=res.get("%s/%s" % (self.prefix, resource_name)))
            summary.append(
                {
                    "name": rail["name"],
                    "pf": rail["pf"],
                    "vlan": rail.get("vlan"),
                    "subnet": rail.get("subnet"),
                    "gateway": rail.get("gateway"),
                    "resource": "%s/%s" % (self.prefix, resource_name),
                    "network": network,
                    **({"link_type": "ib"} if is_ib(rail) else {}),
                }
            )
        entry = _node_entry(host, node_name, policies, resources)
        entry["rails"] = summary
        self.nodes.append(entry)

    def _vf_mode(self, host, hv):
        mode = hv["roce_vf_mode"]
        if mode not in VF_MODES:
            self.errs.add(
                host,
                "roce_vf_mode",
                mode,
                "must be 'operator' or 'host'",
                "set roce_vf_mode to 'operator' (the sriov-network-operator creates the VFs) or 'host' (sriov_vf creates them)",
                fix_vars=[{host: {"roce_vf_mode": m}} for m in VF_MODES],
            )
            return None
        return mode

    def _candidates(self, errs, host, hv, node_name, resource_name, *, rail=None):
        """The node's main policy and its extra policies, each with the inventory field names to blame."""
        pf_names, pf_field = hv["sriov_networks_pf_names"], "sriov_networks_pf_names"
        if _is_unset(pf_names) or pf_names == []:
            pf_field = "roce_pf"
            pf_names = [] if _is_unset(hv["roce_pf"]) else [hv["roce_pf"]]
        extras = hv["sriov_networks_extra_policies"] or []
        if not isinstance(extras, list):
            errs.add(
                host,
                "sriov_networks_extra_policies",
                extras,
                "must be a list of policy mappings",
                "write a YAML list, or [] for none",
                fix_vars=[{host: {"sriov_networks_extra_policies": []}}],
            )
            extras = []
        vendor = check_vendor(errs, host, "sriov_networks_nic_vendor", hv["sriov_networks_nic_vendor"])
        base = {
            "name": "%s-%s%s" % (self.name_prefix, slug(node_name), "-%s" % rail if rail else ""),
            "host": host,
            "node_name": node_name,
            "pf_names": pf_names,
            "pf_list_path": "sriov_networks_pf_names",
            "default_pf": hv["roce_pf"],
            "num_vfs": hv["roce_num_vfs"],
            # numVfs is shared by every policy on a partitioned PF: these move together.
            "num_vfs_paths": ["roce_num_vfs"]
            + ["sriov_networks_extra_policies[%d].num_vfs" % i for i, e in enumerate(extras) if isinstance(e, dict) and e.get("num_vfs") is not None],
            "mtu": hv["roce_mtu"],
            "priority": hv["sriov_networks_priority"],
            "link_type": hv["sriov_networks_link_type"],
            "device_type": hv["sriov_networks_device_type"],
            "is_rdma": hv["sriov_networks_is_rdma"],
            "resource_name": resource_name,
            "node_selector": hv["sriov_networks_node_selector"] or {"kubernetes.io/hostname": node_name},
            "nic_vendor": vendor or "",
            "externally_managed": self._vf_mode(host, hv) == "host",
            # The main policy's resource gets the node's SriovNetwork (an InfiniBand rail's: its SriovIBNetwork); an extra
            # policy's gets none.
            "network": "ib" if _is_ib(hv) else True,
            "vlan": hv["roce_vlan_id"],
        }
        fields = dict(_POLICY_FIELDS, pf_names=pf_field)
        candidates = [(base, fields)]
        names = set()
        for i, extra in enumerate(extras):
            f = "sriov_networks_extra_policies[%d]" % i
            if not _check_extra_policy(errs, host, f, extra, node_name=node_name, names=names):
                continue
            p = dict(base)
            p.update({k: v for k, v in extra.items() if v is not None and k != "name"})
            p["name"] = "%s-%s" % (base["name"], extra["name"])
            p["network"] = False
            p["pf_list_path"] = f + ".pf_names"
            candidates.append((p, {k: "%s.%s" % (f, k) for k in fields}))
        return candidates

    def _node_policies(self, errs, host, hv, node_name, resource_name, *, rail=None):
        node_resources, node_policies, seen_rn = {}, [], {}
        for pol, flds in self._candidates(errs, host, hv, node_name, resource_name, rail=rail):
            if len(pol["name"]) > 253:
                errs.add(
                    host, "roce_node_name", pol["name"], "policy name longer than 253 characters", "shorten roce_node_name or sriov_networks_name_prefix"
                )
                continue
            checked = check_policy(errs, host, flds, pol)
            if checked is None:
                continue
            rn = checked["resource_name"]
            if rn in seen_rn:
                suffix = ident(checked["name"][len(self.name_prefix) + 1 :])
                errs.add(
                    host,
                    flds["resource_name"],
                    rn,
                    "resourceName already used by policy %s on this node" % seen_rn[rn],
                    "give every policy on a node its own resourceName",
                    fix_vars=[{host: {flds["resource_name"]: suffix}}] if suffix not in seen_rn else None,
                )
                continue
            seen_rn[rn] = checked["name"]
            count = sum((checked["num_vfs"] if first is None else last - first + 1) for _pf, first, last, _e, _i in checked["ranges"])
            full = "%s/%s" % (self.prefix, rn)
            node_resources[full] = node_resources.get(full, 0) + count
            obj = _policy_object(checked, self.namespace)
            self.vf_ranges.add(host, checked, obj["spec"])
            node_policies.append(obj)
        self.policies.extend(node_policies)
        return node_policies, node_resources

    def _host_local_network(self, errs, host, hv, node_name, resource_name, *, net_settings, rail=None, vfs=None):
        if resource_name in self.resource_owner:
            errs.add(
                host,
                "sriov_networks_resource_name",
                resource_name,
                "resourceName already used by host %s; with host-local IPAM each node needs its own resourceName "
                "so its pods land on the node whose subnet they get" % self.resource_owner[resource_name],
                "leave sriov_networks_resource_name unset (per-node default) or make it unique per node",
                fix_vars=[{host: {"sriov_networks_resource_name": None}}],
            )
            return
        self.resource_owner[resource_name] = host
        sub = self._node_subnet(errs, host, hv, net_settings["ipam_routes"], rail, vfs=vfs)
        if sub is None:
            return
        net, gw = sub
        ipam_cfg = {"type": "host-local", "subnet": str(net), "gateway": str(gw), "routes": net_settings["ipam_routes"]}
        if gw is None:
            del ipam_cfg["gateway"]  # an InfiniBand rail: the routes to the rail's pool are on-link
        name = node_network_name(self.name_prefix, node_name)
        if rail:
            # With host-local IPAM a network is one node's: the node's name keeps them apart.
            name = rail_network_name(self.name_prefix, node_name, rail)
        self.networks.append(_network_object(name, self.namespace, resource_name, net_settings, ipam_cfg))
        return name

    def _node_subnet(self, errs, host, hv, routes, rail, *, vfs=None):
        """The node's pod subnet and gateway (parsed) with its IPAM routes checked against them, kept for the
        cross-node overlap check; None after a problem."""
        sub = check_pod_subnet(errs, host, hv, gateway=not _is_ib(hv))
        if sub is None:
            return None
        net, gw = sub
        if not check_ipam_routes(errs, host, routes, net, gw, "the pod subnet"):
            return None
        self.subnets.append((net.version, int(net.network_address), int(net.broadcast_address), net, host, gw, rail and rail["name"]))
        self._pod_addresses_warning(host, net, vfs, hv["roce_num_vfs"], rail)
        if any(("%s" % r["dst"]).endswith("/0") for r in routes):  # checked above: 0.0.0.0/0 or ::/0
            field = rail_field(rail["name"], "sriov_networks_ipam_routes") if rail else "sriov_networks_ipam_routes"
            self.default_routes.setdefault((field, json.dumps(routes, sort_keys=True), rail and rail["name"]), []).append(host)
        return net, gw

    def _warn(self, hosts, field, value, problem, fix):
        self.warned.setdefault((field, json.dumps(value, sort_keys=True), problem, fix), (value, []))[1].extend(hosts)

    def _pod_addresses_warning(self, host, net, vfs, num_vfs, rail):
        """A pod of the node's network takes one VF and one address of the node's pod subnet: fewer addresses than VFs
        leave VFs whose pods get no address (the CNI refuses them at start), which the scheduler cannot see. ``vfs``: the
        VFs of the network's resource (all of ``num_vfs``, the policy's, unless extra policies partition the PF)."""
        free = net.num_addresses - (2 if net.version == 4 else 1) - 1  # network (and broadcast) addresses, the gateway
        if not vfs or free >= vfs:
            return
        prefix = net.max_prefixlen - max(2, (vfs + 2).bit_length())
        field = rail_field(rail["name"], "roce_num_vfs") if rail else "roce_num_vfs"
        problem = ("is more than the %d pod address%s a /%d pod subnet holds beside its gateway: the node offers %d VFs to pods, and "
                   "a pod on a VF beyond them gets no address and does not start" % (free, "" if free == 1 else "es", net.prefixlen, vfs))
        if rail:
            fix = ("give rail %s a subnet of at least /%d per node (subnet_prefix: %d or less in roce_rails, e.g. 24, or a larger "
                   "roce_rail_overrides.%s.subnet), or lower its num_vfs to %d" % (rail["name"], prefix, prefix, rail["name"], free))
        else:
            fix = ("give every node a pod subnet of at least /%d, e.g. a /24 each (roce_pod_subnet: 10.255.0.0/24 with roce_pod_gateway: "
                   "10.255.0.254, the next node 10.255.1.0/24), or lower roce_num_vfs to %d" % (prefix, free))
        self._warn([host], field, num_vfs, problem, fix)

    def _default_route_warnings(self):
        """IPAM routes with a default route: every pod has its default route on eth0 (the cluster network), and that one
        wins, so the pods reach the other nodes' pod subnets through eth0, not through the rail's gateway."""
        for (field, routes, rail), hosts in self.default_routes.items():
            if rail:
                fix = "route the rail's own plane only: leave routes of rail %s unset (its default is [{dst: <its subnet_pool>}])" % rail
            else:
                fabric = _covering([s[3] for s in self.subnets if not s[6]])
                fix = ("route only the pod subnets of the fabric: sriov_networks_ipam_routes: [{dst: %s}] (the smallest network "
                       "holding every node's roce_pod_subnet), through the node's gateway" % (fabric or "<a network holding every node's roce_pod_subnet>"))
            self._warn(hosts, field, json.loads(routes),
                       "gives the pods a second default route, on the VF: the default route of eth0 (the cluster network) wins, so "
                       "traffic to the other nodes' pod subnets leaves through eth0 instead of the rail", fix)

    def _nv_ipam_network(self, errs, host, hv, node_name, resource_name, *, net_settings, rail=None, vfs=None):
        """The node's block of its rail's CIDRPool: the subnet and gateway host-local would give it, checked the same way."""
        routes = net_settings["ipam_routes"]
        sub = self._node_subnet(errs, host, hv, routes, rail, vfs=vfs)
        if sub is None:
            return None
        net, gw = sub
        via = [r for r in routes if "gw" in r]
        if via:
            errs.add(
                host,
                "sriov_networks_ipam_routes",
                via[0],
                "an nv-ipam pool's routes go through each node's gateway (CIDRPool routes have no gw of their own)",
                "drop gw from the route: the pod then reaches %s through its node's gateway" % via[0]["dst"],
                fix_vars=[{host: {"sriov_networks_ipam_routes": [{"dst": r["dst"]} for r in routes]}}],
            )
            return None
        shared = self.nv_pools.resource_of(rail)
        if shared is not None and shared != resource_name:
            errs.add(
                host,
                "sriov_networks_resource_name",
                resource_name,
                "with nv-ipam's rendered pools every node of a rail shares the rail's one resourceName (%s, the first node's), "
                "so that one pod template fits every node" % shared,
                "leave sriov_networks_resource_name unset on every node, or set it to %s on all of them (e.g. in group_vars)" % shared,
                fix_vars=[{host: {"sriov_networks_resource_name": shared}}],
            )
            return None
        field = rail_field(rail["name"], "roce_pod_subnet") if rail else "roce_pod_subnet"
        self.nv_pools.add(host, node_name, net, gw, routes=routes, resource_name=resource_name, rail=rail, field=field)
        self._collect_shared_network(host, resource_name, net_settings)
        return pool_name(self.name_prefix, rail)

    def _collect_shared_network(self, host, resource_name, net_settings):
        key = [json.dumps(net_settings[k], sort_keys=True) for k, _f in _NETWORK_KEYS]
        if resource_name not in self.shared:
            self.shared[resource_name] = (key, host, net_settings)
            self.pending_shared.append((resource_name, net_settings))
            return
        prev_key, prev_host, prev_settings = self.shared[resource_name]
        diff = [i for i, (a, b) in enumerate(zip(key, prev_key)) if a != b]
        if diff:
            k0, f0 = _NETWORK_KEYS[diff[0]]
            self.errs.add(
                host,
                f0,
                net_settings[k0],
                "nodes sharing resourceName %s share one SriovNetwork, but this differs from host %s" % (resource_name, prev_host),
                "set %s the same on every node with resourceName %s (e.g. in group_vars)" % (", ".join(_NETWORK_KEYS[i][1] for i in diff), resource_name),
                fix_vars=[{host: {_NETWORK_KEYS[i][1]: prev_settings[_NETWORK_KEYS[i][0]] for i in diff}}],
            )

    def _check_subnet_overlaps(self):
        """Pod subnets must not overlap between nodes: one sort, then neighbours only."""
        self.subnets.sort(key=lambda s: (s[0], s[1]))
        top = {}  # version -> highest last address: a same-sized block above it is free
        for version, _first, last, _net, _host, _gw, _rail in self.subnets:
            top[version] = max(top.get(version, last), last)
        for (v1, _s1, e1, n1, h1, _g1, r1), (v2, s2, _e2, n2, h2, g2, r2) in zip(self.subnets, self.subnets[1:]):
            if v1 == v2 and s2 <= e1:
                if r2:
                    # A rail's subnet comes from its pool: the fix is the plan, not one node's variables.
                    self.errs.add(
                        h2,
                        rail_field(r2, "roce_pod_subnet"),
                        str(n2),
                        "overlaps %s of host %s%s" % (n1, h1, " (rail %s)" % r1 if r1 else ""),
                        "give every rail a subnet_pool of its own, disjoint from the other rails' pools and the one-rail nodes' "
                        "roce_pod_subnet, and every node its own roce_node_index",
                    )
                    continue
                free = free_subnet(h2, n2, g2, top)
                example = ", e.g. set roce_pod_subnet to %(roce_pod_subnet)s and roce_pod_gateway to %(roce_pod_gateway)s" % free[0][h2] if free else ""
                self.errs.add(
                    h2,
                    "roce_pod_subnet",
                    str(n2),
                    "overlaps %s of host %s%s" % (n1, h1, " (rail %s)" % r1 if r1 else ""),
                    "give every node a distinct, non-overlapping pod subnet with its gateway inside it%s" % example,
                    fix_vars=free,
                )

    def _shared_networks(self):
        """Cluster-wide IPAM: one SriovNetwork per resourceName, named after it when there are several."""
        multi = len(self.pending_shared) > 1
        pools = self.nv_pools.resources() if self.nv_pools is not None else {}
        for resource_name, settings in self.pending_shared:
            if resource_name in pools:
                # The rail's network is named after its CIDRPool, and its addresses come from it.
                self.networks.append(
                    _network_object(pools[resource_name], self.namespace, resource_name, settings,
                                    {"type": "nv-ipam", "poolName": pools[resource_name], "poolType": "cidrpool"})
                )
                continue
            name = "%s-%s" % (self.name_prefix, slug(resource_name.replace("_", "-"))) if multi else self.name_prefix
            ipam_cfg = dict(self.cluster_ipam)
            if self.ipam == "whereabouts" and settings["ipam_routes"]:
                ipam_cfg["routes"] = settings["ipam_routes"]
            self.networks.append(_network_object(name, self.namespace, resource_name, settings, ipam_cfg))


class _RailErrors:
    """The error collector seen by the per-node checks while they check one rail: the one-rail
    variable names they blame become the rail's own keys (``roce_pod_subnet`` -> ``roce_rails[rail3].subnet``)."""

    def __init__(self, errs, rail):
        self._errs, self._rail = errs, rail

    @property
    def items(self):
        return self._errs.items

    def _fix_vars(self, fix_vars):
        if not fix_vars:
            return fix_vars
        return [{h: {rail_field(self._rail, k): v for k, v in a.items()} for h, a in alt.items()} for alt in fix_vars]

    def add(self, host, field, value, problem, fix, *, fix_vars=None):
        self._errs.add(host, rail_field(self._rail, field), value, problem, fix, fix_vars=self._fix_vars(fix_vars))

    def attach(self, before, fix_vars):
        self._errs.attach(before, self._fix_vars(fix_vars))


def _is_ib(hv):
    """Whether the node's (or, in a rail's view of the node, the rail's) network is InfiniBand."""
    value = hv.get("sriov_networks_link_type")
    return isinstance(value, str) and value.lower() == "ib"


def _node_entry(host, node_name, policies, resources):
    return {
        "host": host,
        "node_name": node_name,
        "policies": [p["metadata"]["name"] for p in policies],
        "resources": resources,
        "interfaces": _node_interfaces(policies),
    }


def _covering(nets):
    """The smallest network holding every one of ``nets`` (one family), or None when none is narrower than a /8."""
    if not nets:
        return None
    cover = nets[0]
    for net in nets[1:]:
        if net.version != cover.version:
            return None
        while not net.subnet_of(cover):
            if cover.prefixlen <= 8:
                return None
            cover = cover.supernet()
    return cover


def _gateway_of(ipam_cfg):
    gw = ipam_cfg.get("gateway")
    return ipaddress.ip_address(gw) if gw else None


def _node_interfaces(policies):
    """What the node's SriovNetworkNodeState spec must carry once the operator has taken the policies in:
    per PF the numVfs and MTU (the highest-priority policy wins, as the operator merges them)."""
    wanted = {}
    for pol in policies:
        spec = pol["spec"]
        for entry in spec["nicSelector"]["pfNames"]:
            pf = parse_pf_name(entry)[0]
            prev = wanted.get(pf)
            if prev is None or spec["priority"] < prev["priority"]:
                wanted[pf] = {"name": pf, "numVfs": spec["numVfs"], "mtu": spec["mtu"], "priority": spec["priority"]}
    return [{"name": w["name"], "numVfs": w["numVfs"], "mtu": w["mtu"]} for w in sorted(wanted.values(), key=lambda w: w["name"])]


def _check_extra_policy(errs, host, f, extra, *, node_name, names):
    """Shape of one extra policy; ``names`` collects the node's suffixes (two equal ones would be one object)."""
    if not isinstance(extra, dict):
        errs.add(host, f, extra, "must be a mapping", "give at least name, pf_names and resource_name")
        return False
    unknown = sorted(set(extra) - set(_EXTRA_POLICY_KEYS))
    if unknown:
        known = {k: v for k, v in extra.items() if k in _EXTRA_POLICY_KEYS}
        errs.add(host, f, unknown, "unknown key(s)", "use only: %s" % ", ".join(_EXTRA_POLICY_KEYS), fix_vars=[{host: {f: known}}])
        return False
    name = extra.get("name")
    if not isinstance(name, str) or not DNS_LABEL_RE.match(name or ""):
        example = next(n for n in ("dpdk", "dpdk%d" % len(names), "extra%d" % len(names)) if n not in names)
        errs.add(
            host,
            f + ".name",
            name,
            "each extra policy needs a name suffix",
            "set name to a DNS label such as %s" % example,
            fix_vars=[{host: {f + ".name": example}}],
        )
        return False
    if name in names:
        example = "%s%d" % (name, len(names) + 1)
        errs.add(
            host,
            f + ".name",
            name,
            "another extra policy of this node has the same name, so both would render as one object",
            "give each extra policy its own name, e.g. %s" % example,
            fix_vars=[{host: {f + ".name": example}}],
        )
        return False
    names.add(name)
    if _is_unset(extra.get("resource_name")):
        example = "%s_%s" % (ident(name), ident(node_name))
        errs.add(
            host,
            f + ".resource_name",
            None,
            "each extra policy needs its own resourceName",
            "set resource_name, e.g. %s" % example,
            fix_vars=[{host: {f + ".resource_name": example}}],
        )
        return False
    return True


def _network_object(name, namespace, resource_name, s, ipam_cfg):
    if s.get("link_type") == "ib":
        return _ib_network_object(name, namespace, resource_name, s, ipam_cfg)
    spec = {
        "resourceName": resource_name,
        "networkNamespace": s["network_namespace"],
        "vlan": s["vlan"],
        "vlanQoS": s["vlan_qos"],
        "trust": s["trust"],
        "spoofChk": s["spoof_chk"],
        "linkState": s["link_state"],
        "ipam": json.dumps(ipam_cfg, sort_keys=True),
    }
    if s["min_tx_rate"] is not None:
        spec["minTxRate"] = s["min_tx_rate"]
    if s["max_tx_rate"] is not None:
        spec["maxTxRate"] = s["max_tx_rate"]
    return {"apiVersion": SRIOV_API_VERSION, "kind": "SriovNetwork", "metadata": _managed_metadata(name, namespace), "spec": spec}


def _ib_network_object(name, namespace, resource_name, s, ipam_cfg):
    """An InfiniBand rail's network: the operator writes an ib-sriov NetworkAttachmentDefinition from it. No VLAN, trust,
    spoofChk, vlanQoS or rates: the CRD has none of them (they are the Ethernet rails' settings)."""
    spec = {"resourceName": resource_name, "networkNamespace": s["network_namespace"], "ipam": json.dumps(ipam_cfg, sort_keys=True)}
    if s["link_state"] is not None:
        spec["linkState"] = s["link_state"]
    return {"apiVersion": SRIOV_API_VERSION, "kind": "SriovIBNetwork", "metadata": _managed_metadata(name, namespace), "spec": spec}

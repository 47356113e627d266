# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SriovNetworkNodePolicies and SriovNetworks: validation against the sriov-network-operator
admission rules and rendering, for the whole inventory in one pass (:func:`render_sriov`)."""

import ipaddress
import json
import re

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_common import (
    DNS_LABEL_RE,
    DNS_SUBDOMAIN_RE,
    LABEL_KEY_RE,
    LABEL_VALUE_RE,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    MELLANOX_VENDOR,
    _as_bool,
    _as_int,
    _Errors,
    _ident,
    _is_unset,
    _lookup,
    _plain,
    _slug,
)

SRIOV_API_VERSION = "sriovnetwork.openshift.io/v1"
MLX_MAX_VFS = 128
RESOURCE_NAME_RE = re.compile(r"^[a-zA-Z0-9_]+$")
PF_RANGE_RE = re.compile(r"^(?P<pf>[^#\s]+)#(?P<first>\d+)-(?P<last>\d+)$")
NETDEV_RE = re.compile(r"^[^/\s:#]{1,15}$")

IPAM_MODES = ("host-local", "whereabouts", "nv-ipam")
LINK_TYPES = ("eth", "ETH", "ib", "IB")
DEVICE_TYPES = ("netdevice", "vfio-pci")
LINK_STATES = ("auto", "enable", "disable")
ON_OFF = ("on", "off")
VF_MODES = ("operator", "host")

# Built-in fallbacks. The roles pass their own defaults (defaults/main.yml) on top of these,
# and each node's hostvars override both. Keys are the inventory variable names.
SRIOV_BUILTIN_DEFAULTS = {
    "roce_num_vfs": 8,
    "roce_mtu": 9000,
    "roce_vlan_id": 100,
    "roce_vf_mode": "operator",
    "sriov_networks_namespace": "nvidia-network-operator",
    "sriov_networks_resource_prefix": "nvidia.com",
    "sriov_networks_ipam": "host-local",
    "sriov_networks_name_prefix": "roce",
    "sriov_networks_resource_name": "",
    "sriov_networks_pf_names": [],
    "sriov_networks_link_type": "eth",
    "sriov_networks_device_type": "netdevice",
    "sriov_networks_is_rdma": True,
    "sriov_networks_priority": 99,
    "sriov_networks_nic_vendor": MELLANOX_VENDOR,
    "sriov_networks_node_selector": {},
    "sriov_networks_extra_policies": [],
    "sriov_networks_vlan_qos": 0,
    "sriov_networks_trust": "on",
    "sriov_networks_spoof_chk": "off",
    "sriov_networks_link_state": "enable",
    "sriov_networks_min_tx_rate": None,
    "sriov_networks_max_tx_rate": None,
    "sriov_networks_network_namespace": "default",
    "sriov_networks_ipam_routes": [{"dst": "0.0.0.0/0"}],
    "sriov_networks_whereabouts_range": "",
    "sriov_networks_whereabouts_exclude": [],
    "sriov_networks_whereabouts_gateway": "",
    "sriov_networks_nv_ipam_pool": "",
    "sriov_networks_nv_ipam_pool_type": "ippool",
}

# Variables read per node (hostvars first, then the role defaults). Everything else in
# SRIOV_BUILTIN_DEFAULTS is cluster-wide and read from the play host only.
SRIOV_PER_HOST_KEYS = (
    "roce_node_name",
    "roce_pf",
    "roce_num_vfs",
    "roce_mtu",
    "roce_vlan_id",
    "roce_pod_subnet",
    "roce_pod_gateway",
    "roce_vf_mode",
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


def parse_pf_name(entry):
    """Return (pf, first, last) for 'pf' or 'pf#first-last'; first/last are None without a range."""
    m = PF_RANGE_RE.match(entry)
    if m:
        return m.group("pf"), int(m.group("first")), int(m.group("last"))
    return entry, None, None


def _check_num_vfs(errs, host, fields, pol):
    num_vfs = _as_int(errs, host, fields["num_vfs"], pol["num_vfs"])
    if num_vfs is None:
        return None
    if num_vfs < 1:
        errs.add(host, fields["num_vfs"], num_vfs, "numVfs must be at least 1", "set %s to 1..%d" % (fields["num_vfs"], MLX_MAX_VFS))
        return None
    if str(pol["nic_vendor"]).lower() == MELLANOX_VENDOR and num_vfs > MLX_MAX_VFS:
        errs.add(
            host,
            fields["num_vfs"],
            num_vfs,
            "numVfs exceeds the Mellanox maximum of %d VFs per PF" % MLX_MAX_VFS,
            "set %s to %d or less" % (fields["num_vfs"], MLX_MAX_VFS),
        )
        return None
    return num_vfs


def _check_device(errs, host, fields, pol):
    """linkType, deviceType and isRdma, and the combinations the operator refuses. Returns (ok, is_rdma)."""
    ok = True
    link_type = pol["link_type"]
    if link_type not in LINK_TYPES:
        errs.add(host, fields["link_type"], link_type, "linkType must be one of eth, ib", "set %s to 'eth' (RoCE) or 'ib' (InfiniBand)" % fields["link_type"])
        ok = False
    device_type = pol["device_type"]
    if device_type not in DEVICE_TYPES:
        errs.add(
            host,
            fields["device_type"],
            device_type,
            "deviceType must be 'netdevice' or 'vfio-pci'",
            "set %s to 'netdevice' for RDMA VFs" % fields["device_type"],
        )
        ok = False
    is_rdma = _as_bool(errs, host, fields["is_rdma"], pol["is_rdma"])
    if device_type == "vfio-pci" and is_rdma:
        errs.add(
            host,
            fields["device_type"],
            device_type,
            "deviceType 'vfio-pci' conflicts with isRdma: true",
            "set %s to 'netdevice', or set %s to false" % (fields["device_type"], fields["is_rdma"]),
        )
        ok = False
    if link_type in ("ib", "IB") and is_rdma is False:
        errs.add(host, fields["is_rdma"], is_rdma, "linkType 'ib' requires isRdma: true", "set %s to true or linkType to 'eth'" % fields["is_rdma"])
        ok = False
    return ok, is_rdma


def _check_node_selector(errs, host, fields, pol):
    node_selector = pol["node_selector"]
    if not isinstance(node_selector, dict) or not node_selector:
        errs.add(
            host,
            fields["node_selector"],
            node_selector,
            "nodeSelector must be a non-empty mapping of label to string value",
            "leave %s unset (defaults to kubernetes.io/hostname: <roce_node_name>) or give a mapping" % fields["node_selector"],
        )
        return False
    ok = True
    for k, v in node_selector.items():
        if not isinstance(k, str) or not LABEL_KEY_RE.match(k) or not isinstance(v, str) or not LABEL_VALUE_RE.match(v):
            errs.add(
                host,
                fields["node_selector"],
                {k: v},
                "not a valid Kubernetes label selector entry (values must be strings)",
                "quote the value and use a valid label key, e.g. kubernetes.io/hostname: '%s'" % pol["node_name"],
            )
            ok = False
    return ok


def _check_pf_names(errs, host, fields, pf_names, num_vfs):
    """Parse the PF selectors; returns the list of (pf, first, last, entry) or None when any is invalid."""
    if not isinstance(pf_names, list) or not pf_names:
        errs.add(
            host,
            fields["pf_names"],
            pf_names,
            "no PF to select",
            "set roce_pf (e.g. enp157s0np0) or %s to a list of PF names" % fields["pf_names"].replace("roce_pf", "sriov_networks_pf_names"),
        )
        return None
    ranges, ok = [], True
    for entry in pf_names:
        if not isinstance(entry, str) or not entry:
            errs.add(host, fields["pf_names"], entry, "PF names must be non-empty strings", "write the PF netdev name, e.g. enp157s0np0 or enp157s0np0#0-3")
            ok = False
            continue
        pf, first, last = parse_pf_name(entry)
        if "#" in entry and first is None:
            errs.add(
                host,
                fields["pf_names"],
                entry,
                "invalid VF range syntax",
                "write '<pf>#<first>-<last>' with whole numbers, e.g. %s#0-%d" % (entry.split("#")[0], max((num_vfs or 8) - 1, 0)),
            )
            ok = False
            continue
        if not NETDEV_RE.match(pf):
            errs.add(
                host,
                fields["pf_names"],
                entry,
                "'%s' is not a valid netdev name (max 15 chars, no '/', ':' or spaces)" % pf,
                "use the PF's interface name, e.g. enp157s0np0",
            )
            ok = False
            continue
        if first is not None:
            if first > last:
                errs.add(host, fields["pf_names"], entry, "VF range starts after it ends", "write the range as %s#%d-%d" % (pf, last, first))
                ok = False
                continue
            if num_vfs is not None and last >= num_vfs:
                errs.add(
                    host,
                    fields["pf_names"],
                    entry,
                    "VF range end %d is not below numVfs %d (VF indexes run 0..%d)" % (last, num_vfs, num_vfs - 1),
                    "end the range at %d or less, or raise %s" % (num_vfs - 1, fields["num_vfs"]),
                )
                ok = False
                continue
        ranges.append((pf, first, last, entry))
    return ranges if ok else None


def _check_policy(errs, host, fields, pol):
    """Validate one policy description (plain dict with resolved values). Returns cleaned dict or None."""
    num_vfs = _check_num_vfs(errs, host, fields, pol)
    mtu = _as_int(
        errs, host, fields["mtu"], pol["mtu"], lo=1, hi=9978, what="(bytes)", fix="set %s to the VF MTU, e.g. 9000 (must not exceed the PF MTU)" % fields["mtu"]
    )
    priority = _as_int(
        errs, host, fields["priority"], pol["priority"], lo=0, hi=99, what="(0 is the highest priority)", fix="set %s to 0..99" % fields["priority"]
    )
    ok, is_rdma = _check_device(errs, host, fields, pol)
    resource_name = pol["resource_name"]
    if not isinstance(resource_name, str) or not RESOURCE_NAME_RE.match(resource_name):
        errs.add(
            host,
            fields["resource_name"],
            resource_name,
            "resourceName must match ^[a-zA-Z0-9_]+$",
            "use only letters, digits and underscores, e.g. %s" % _ident(resource_name or "roce"),
        )
        ok = False
    ok = _check_node_selector(errs, host, fields, pol) and ok
    ranges = _check_pf_names(errs, host, fields, pol["pf_names"], num_vfs)
    if not ok or ranges is None or None in (mtu, priority, num_vfs, is_rdma):
        return None
    return {
        "name": pol["name"],
        "num_vfs": num_vfs,
        "mtu": mtu,
        "priority": priority,
        "link_type": pol["link_type"],
        "device_type": pol["device_type"],
        "is_rdma": is_rdma,
        "resource_name": resource_name,
        "node_selector": {str(k): str(v) for k, v in pol["node_selector"].items()},
        "nic_vendor": pol["nic_vendor"],
        "externally_managed": pol.get("externally_managed", False),
        "pf_names": [r[3] for r in ranges],
        "ranges": ranges,
        "fields": fields,
    }


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


def _check_network_settings(errs, host, hv):
    """Validate the per-host SriovNetwork settings; returns dict or None."""
    ok = True
    out = {}
    out["vlan"] = _as_int(errs, host, "roce_vlan_id", hv["roce_vlan_id"], lo=0, hi=4094, what="(0 = untagged)", fix="set roce_vlan_id to 0..4094")
    out["vlan_qos"] = _as_int(
        errs, host, "sriov_networks_vlan_qos", hv["sriov_networks_vlan_qos"], lo=0, hi=7, what="(802.1p priority)", fix="set sriov_networks_vlan_qos to 0..7"
    )
    for key, field in (("trust", "sriov_networks_trust"), ("spoof_chk", "sriov_networks_spoof_chk")):
        value = hv[field]
        if value not in ON_OFF or not isinstance(value, str):
            hint = " (unquoted on/off/yes/no are YAML booleans)" if isinstance(value, bool) else ""
            errs.add(host, field, value, "must be the string 'on' or 'off'%s" % hint, "quote it: %s: 'on' or %s: 'off'" % (field, field))
            ok = False
        out[key] = value
    link_state = hv["sriov_networks_link_state"]
    if link_state not in LINK_STATES:
        errs.add(
            host,
            "sriov_networks_link_state",
            link_state,
            "linkState must be auto, enable or disable",
            "set sriov_networks_link_state to 'enable' (or 'auto'/'disable')",
        )
        ok = False
    out["link_state"] = link_state
    rates = {}
    for key in ("min_tx_rate", "max_tx_rate"):
        field = "sriov_networks_" + key
        value = hv[field]
        if _is_unset(value):
            rates[key] = None
        else:
            rates[key] = _as_int(
                errs, host, field, value, lo=0, hi=None, what="(Mbps)", fix="set %s to a non-negative whole number of Mbps, or leave it unset" % field
            )
            ok = ok and rates[key] is not None
    if rates["min_tx_rate"] is not None and rates["max_tx_rate"] is not None and rates["max_tx_rate"] > 0 and rates["min_tx_rate"] > rates["max_tx_rate"]:
        errs.add(
            host,
            "sriov_networks_min_tx_rate",
            rates["min_tx_rate"],
            "minTxRate is above maxTxRate (%d)" % rates["max_tx_rate"],
            "lower sriov_networks_min_tx_rate or raise sriov_networks_max_tx_rate",
        )
        ok = False
    out.update(rates)
    ns = hv["sriov_networks_network_namespace"]
    if not isinstance(ns, str) or not DNS_LABEL_RE.match(ns) or len(ns) > 63:
        errs.add(host, "sriov_networks_network_namespace", ns, "not a valid namespace name", "use a DNS-1123 label, e.g. default")
        ok = False
    out["network_namespace"] = ns
    routes = hv["sriov_networks_ipam_routes"]
    if not isinstance(routes, list):
        errs.add(host, "sriov_networks_ipam_routes", routes, "must be a list of {dst, gw?}", "e.g. [{dst: 0.0.0.0/0}] for a default route, or [] for none")
        ok = False
    else:
        clean = []
        for r in routes:
            try:
                if not isinstance(r, dict) or "dst" not in r:
                    raise ValueError
                route = {"dst": str(ipaddress.ip_network(str(r["dst"]), strict=True))}
                if r.get("gw"):
                    route["gw"] = str(ipaddress.ip_address(str(r["gw"])))
                clean.append(route)
            except ValueError:
                errs.add(
                    host,
                    "sriov_networks_ipam_routes",
                    r,
                    "not a valid route",
                    "write {dst: <network/prefix>} with an optional gw address, e.g. {dst: 0.0.0.0/0}",
                )
                ok = False
        routes = clean
    out["ipam_routes"] = routes
    if any(v is None for k, v in out.items() if k in ("vlan", "vlan_qos")):
        ok = False
    return out if ok else None


def _check_pod_subnet(errs, host, hv):
    subnet_v, gw_v = hv.get("roce_pod_subnet"), hv.get("roce_pod_gateway")
    net = gw = None
    if _is_unset(subnet_v):
        errs.add(host, "roce_pod_subnet", subnet_v, "required with host-local IPAM", "set roce_pod_subnet to this node's pod subnet, e.g. 10.255.0.0/30")
    else:
        try:
            net = ipaddress.ip_network(str(subnet_v), strict=True)
        except ValueError:
            try:
                fixed = ipaddress.ip_network(str(subnet_v), strict=False)
                errs.add(host, "roce_pod_subnet", subnet_v, "host bits are set", "write the network address: %s" % fixed)
            except ValueError:
                errs.add(host, "roce_pod_subnet", subnet_v, "not a CIDR network", "write it as <network>/<prefix>, e.g. 10.255.0.0/30")
    if _is_unset(gw_v):
        errs.add(host, "roce_pod_gateway", gw_v, "required with host-local IPAM", "set roce_pod_gateway to the node's gateway address inside roce_pod_subnet")
    else:
        try:
            gw = ipaddress.ip_address(str(gw_v))
        except ValueError:
            errs.add(
                host,
                "roce_pod_gateway",
                gw_v,
                "not an IP address (no prefix length)",
                "write the plain address, e.g. 10.255.0.2 (the prefix comes from roce_pod_subnet)",
            )
    if net is None or gw is None:
        return None
    if gw.version != net.version or gw not in net:
        errs.add(
            host,
            "roce_pod_gateway",
            str(gw_v),
            "gateway is outside the node's pod subnet %s" % net,
            "pick a host address inside %s (the address vlan_gateway puts on <roce_pf>.<roce_vlan_id>)" % net,
        )
        return None
    if net.num_addresses > 2 and gw in (net.network_address, net.broadcast_address):
        errs.add(host, "roce_pod_gateway", str(gw_v), "gateway is the network or broadcast address of %s" % net, "use a host address of %s" % net)
        return None
    usable = net.num_addresses - (2 if net.num_addresses > 2 else 0)
    if usable < 2:
        errs.add(host, "roce_pod_subnet", str(net), "leaves no address for pods next to the gateway", "use at least a /30 (IPv4) so one pod address remains")
        return None
    return net, gw


def render_sriov(hosts, host_vars, defaults=None):
    """Validate and render the SR-IOV objects for every host in ``hosts``.

    ``host_vars`` maps host -> mapping of that host's variables (the inventory names:
    ``roce_*`` and ``sriov_networks_*``). ``defaults`` holds the role's values (the play
    host's view), used when a host does not define a per-host variable and for every
    cluster-wide setting. Returns ``{"policies", "networks", "nodes"}``; raises
    :class:`RenderValidationError` listing every problem in the whole inventory.
    """
    return _SriovRender(defaults).run(hosts, host_vars)


class _SriovRender:
    """One pass over the inventory. State is what the cross-node rules need to see all of."""

    def __init__(self, defaults):
        self.defaults = dict(defaults or {})
        self.errs = _Errors()
        self.policies, self.networks, self.nodes = [], [], []
        self.node_owner = {}  # node_name -> host
        self.resource_owner = {}  # resourceName -> host (host-local: one node per resourceName)
        self.per_pf = {}  # (node target key, pf) -> [(first, last, policy, host, field, entry, num_vfs, num_vfs field)]
        self.subnets = []  # (version, first address, last address, network, host)
        self.shared = {}  # cluster-wide IPAM: resourceName -> (settings key, host)
        self.pending_shared = []  # cluster-wide IPAM: (resourceName, settings) in inventory order

    def cluster(self, key):
        return _lookup(None, self.defaults, SRIOV_BUILTIN_DEFAULTS, key)

    def run(self, hosts, host_vars):
        self._cluster_settings()
        if not hosts:
            self.errs.add(
                "(inventory)", "groups['roce_nodes']", list(hosts or []), "no hosts to render", "add the Kubernetes worker nodes to the roce_nodes group"
            )
        for host in hosts:
            self._host(host, host_vars.get(host))
        self._check_subnet_overlaps()
        self._check_vf_ranges()
        self.errs.raise_if_any()
        self._shared_networks()
        return {"policies": self.policies, "networks": self.networks, "nodes": self.nodes}

    def _cluster_settings(self):
        errs, cluster = self.errs, self.cluster
        self.namespace = cluster("sriov_networks_namespace")
        if not isinstance(self.namespace, str) or not DNS_LABEL_RE.match(self.namespace):
            errs.add(
                "(cluster)",
                "sriov_networks_namespace",
                self.namespace,
                "not a valid namespace name",
                "use the network-operator namespace, e.g. nvidia-network-operator",
            )
        self.prefix = cluster("sriov_networks_resource_prefix")
        if not isinstance(self.prefix, str) or not DNS_SUBDOMAIN_RE.match(self.prefix):
            errs.add(
                "(cluster)", "sriov_networks_resource_prefix", self.prefix, "not a valid resource prefix", "use the chart's resourcePrefix, e.g. nvidia.com"
            )
        self.name_prefix = cluster("sriov_networks_name_prefix")
        if not isinstance(self.name_prefix, str) or not DNS_LABEL_RE.match(self.name_prefix):
            errs.add(
                "(cluster)",
                "sriov_networks_name_prefix",
                self.name_prefix,
                "not a valid object name prefix",
                "use lower-case letters, digits and '-', e.g. roce",
            )
            self.name_prefix = "roce"
        self.ipam = cluster("sriov_networks_ipam")
        if self.ipam not in IPAM_MODES:
            errs.add("(cluster)", "sriov_networks_ipam", self.ipam, "unknown IPAM mode", "set sriov_networks_ipam to one of %s" % ", ".join(IPAM_MODES))
        self.cluster_ipam = None
        if self.ipam == "whereabouts":
            self.cluster_ipam = _whereabouts_ipam(errs, cluster)
        elif self.ipam == "nv-ipam":
            self.cluster_ipam = _nv_ipam(errs, cluster)

    def _node_name(self, host, hv):
        node_name = hv["roce_node_name"] or host
        if not isinstance(node_name, str) or not DNS_SUBDOMAIN_RE.match(node_name) or len(node_name) > 253:
            self.errs.add(
                host, "roce_node_name", node_name, "not a valid Kubernetes node name", "set roce_node_name to the node's name as shown by kubectl get nodes"
            )
            return None
        if node_name in self.node_owner:
            self.errs.add(
                host,
                "roce_node_name",
                node_name,
                "node name already used by host %s" % self.node_owner[node_name],
                "give each host its own roce_node_name (the Kubernetes node name)",
            )
            return None
        self.node_owner[node_name] = host
        return node_name

    def _host(self, host, hv_raw):
        if hv_raw is None:
            self.errs.add(host, "hostvars", None, "host is in roce_nodes but has no variables", "check the inventory for a typo in the host name")
            return
        hv = {key: _plain(_lookup(hv_raw, self.defaults, SRIOV_BUILTIN_DEFAULTS, key)) for key in SRIOV_PER_HOST_KEYS}
        node_name = self._node_name(host, hv)
        if node_name is None:
            return
        resource_name = hv["sriov_networks_resource_name"]
        if _is_unset(resource_name):
            resource_name = "%s_%s" % (_ident(self.name_prefix), _ident(node_name)) if self.ipam == "host-local" else _ident(self.name_prefix)
        self._node_policies(host, hv, node_name, resource_name)
        net_settings = _check_network_settings(self.errs, host, hv)
        if net_settings is None:
            return
        if self.ipam == "host-local":
            self._host_local_network(host, hv, node_name, resource_name, net_settings)
        elif self.ipam in ("whereabouts", "nv-ipam"):
            self._collect_shared_network(host, resource_name, net_settings)

    def _vf_mode(self, host, hv):
        mode = hv["roce_vf_mode"]
        if mode not in VF_MODES:
            self.errs.add(
                host,
                "roce_vf_mode",
                mode,
                "must be 'operator' or 'host'",
                "set roce_vf_mode to 'operator' (the sriov-network-operator creates the VFs) or 'host' (sriov_vf creates them)",
            )
            return None
        return mode

    def _candidates(self, host, hv, node_name, resource_name):
        """The node's main policy and its extra policies, each with the inventory field names to blame."""
        pf_names, pf_field = hv["sriov_networks_pf_names"], "sriov_networks_pf_names"
        if _is_unset(pf_names) or pf_names == []:
            pf_field = "roce_pf"
            pf_names = [] if _is_unset(hv["roce_pf"]) else [hv["roce_pf"]]
        base = {
            "name": "%s-%s" % (self.name_prefix, _slug(node_name)),
            "node_name": node_name,
            "pf_names": pf_names,
            "num_vfs": hv["roce_num_vfs"],
            "mtu": hv["roce_mtu"],
            "priority": hv["sriov_networks_priority"],
            "link_type": hv["sriov_networks_link_type"],
            "device_type": hv["sriov_networks_device_type"],
            "is_rdma": hv["sriov_networks_is_rdma"],
            "resource_name": resource_name,
            "node_selector": hv["sriov_networks_node_selector"] or {"kubernetes.io/hostname": node_name},
            "nic_vendor": hv["sriov_networks_nic_vendor"],
            "externally_managed": self._vf_mode(host, hv) == "host",
        }
        fields = dict(_POLICY_FIELDS, pf_names=pf_field)
        candidates = [(base, fields)]
        extras = hv["sriov_networks_extra_policies"] or []
        if not isinstance(extras, list):
            self.errs.add(host, "sriov_networks_extra_policies", extras, "must be a list of policy mappings", "write a YAML list, or [] for none")
            extras = []
        for i, extra in enumerate(extras):
            f = "sriov_networks_extra_policies[%d]" % i
            if not _check_extra_policy(self.errs, host, f, extra, node_name):
                continue
            p = dict(base)
            p.update({k: v for k, v in extra.items() if v is not None and k != "name"})
            p["name"] = "%s-%s" % (base["name"], extra["name"])
            candidates.append((p, {k: "%s.%s" % (f, k) for k in fields}))
        return candidates

    def _node_policies(self, host, hv, node_name, resource_name):
        node_resources, node_policies, seen_rn = {}, [], {}
        for pol, flds in self._candidates(host, hv, node_name, resource_name):
            if len(pol["name"]) > 253:
                self.errs.add(
                    host, "roce_node_name", pol["name"], "policy name longer than 253 characters", "shorten roce_node_name or sriov_networks_name_prefix"
                )
                continue
            checked = _check_policy(self.errs, host, flds, pol)
            if checked is None:
                continue
            rn = checked["resource_name"]
            if rn in seen_rn:
                self.errs.add(
                    host,
                    flds["resource_name"],
                    rn,
                    "resourceName already used by policy %s on this node" % seen_rn[rn],
                    "give every policy on a node its own resourceName",
                )
                continue
            seen_rn[rn] = checked["name"]
            target = tuple(sorted(checked["node_selector"].items()))
            for pf, first, last, entry in checked["ranges"]:
                lo, hi = (0, checked["num_vfs"] - 1) if first is None else (first, last)
                self.per_pf.setdefault((target, pf), []).append((lo, hi, checked["name"], host, flds["pf_names"], entry, checked["num_vfs"], flds["num_vfs"]))
            count = sum((checked["num_vfs"] if first is None else last - first + 1) for _pf, first, last, _e in checked["ranges"])
            full = "%s/%s" % (self.prefix, rn)
            node_resources[full] = node_resources.get(full, 0) + count
            node_policies.append(_policy_object(checked, self.namespace))
        self.policies.extend(node_policies)
        self.nodes.append(
            {
                "host": host,
                "node_name": node_name,
                "policies": [p["metadata"]["name"] for p in node_policies],
                "resources": node_resources,
                "interfaces": _node_interfaces(node_policies),
            }
        )

    def _host_local_network(self, host, hv, node_name, resource_name, net_settings):
        if resource_name in self.resource_owner:
            self.errs.add(
                host,
                "sriov_networks_resource_name",
                resource_name,
                "resourceName already used by host %s; with host-local IPAM each node needs its own resourceName "
                "so its pods land on the node whose subnet they get" % self.resource_owner[resource_name],
                "leave sriov_networks_resource_name unset (per-node default) or make it unique per node",
            )
            return
        self.resource_owner[resource_name] = host
        sub = _check_pod_subnet(self.errs, host, hv)
        if sub is None:
            return
        net, gw = sub
        self.subnets.append((net.version, int(net.network_address), int(net.broadcast_address), net, host))
        ipam_cfg = {"type": "host-local", "subnet": str(net), "gateway": str(gw), "routes": net_settings["ipam_routes"]}
        name = "%s-%s" % (self.name_prefix, _slug(node_name))
        self.networks.append(_network_object(name, self.namespace, resource_name, net_settings, ipam_cfg))

    def _collect_shared_network(self, host, resource_name, net_settings):
        key = [json.dumps(net_settings[k], sort_keys=True) for k, _f in _NETWORK_KEYS]
        if resource_name not in self.shared:
            self.shared[resource_name] = (key, host)
            self.pending_shared.append((resource_name, net_settings))
            return
        prev_key, prev_host = self.shared[resource_name]
        diff = [i for i, (a, b) in enumerate(zip(key, prev_key)) if a != b]
        if diff:
            k0, f0 = _NETWORK_KEYS[diff[0]]
            self.errs.add(
                host,
                f0,
                net_settings[k0],
                "nodes sharing resourceName %s share one SriovNetwork, but this differs from host %s" % (resource_name, prev_host),
                "set %s the same on every node with resourceName %s (e.g. in group_vars)" % (", ".join(_NETWORK_KEYS[i][1] for i in diff), resource_name),
            )

    def _check_subnet_overlaps(self):
        """Pod subnets must not overlap between nodes: one sort, then neighbours only."""
        self.subnets.sort(key=lambda s: (s[0], s[1]))
        for (v1, _s1, e1, n1, h1), (v2, s2, _e2, n2, h2) in zip(self.subnets, self.subnets[1:]):
            if v1 == v2 and s2 <= e1:
                self.errs.add(h2, "roce_pod_subnet", str(n2), "overlaps %s of host %s" % (n1, h1), "give every node a distinct, non-overlapping pod subnet")

    def _check_vf_ranges(self):
        """VF ranges on the same PF of the same node(s) must not overlap, and must agree on numVfs."""
        for (_target, pf), entries in self.per_pf.items():
            if len(entries) < 2:
                continue
            entries.sort(key=lambda e: (e[0], e[1]))
            first = entries[0]
            for e in entries[1:]:
                if e[6] != first[6]:
                    self.errs.add(
                        e[3],
                        e[7],
                        e[6],
                        "policies %s and %s partition PF %s but ask for different numVfs (%d vs %d)" % (first[2], e[2], pf, first[6], e[6]),
                        "use the same numVfs in every policy that selects %s" % pf,
                    )
            hi_owner = entries[0]
            for e in entries[1:]:
                if e[0] <= hi_owner[1]:
                    self.errs.add(
                        e[3],
                        e[4],
                        e[5],
                        "VF range %d-%d of policy %s overlaps VFs %d-%d of policy %s on the same PF %s"
                        % (e[0], e[1], e[2], hi_owner[0], hi_owner[1], hi_owner[2], pf),
                        "split the VFs with disjoint '%s#first-last' ranges (or target different nodes)" % pf,
                    )
                if e[1] > hi_owner[1]:
                    hi_owner = e

    def _shared_networks(self):
        """Cluster-wide IPAM: one SriovNetwork per resourceName, named after it when there are several."""
        multi = len(self.pending_shared) > 1
        for resource_name, settings in self.pending_shared:
            name = "%s-%s" % (self.name_prefix, _slug(resource_name.replace("_", "-"))) if multi else self.name_prefix
            ipam_cfg = dict(self.cluster_ipam)
            if self.ipam == "whereabouts" and settings["ipam_routes"]:
                ipam_cfg["routes"] = settings["ipam_routes"]
            self.networks.append(_network_object(name, self.namespace, resource_name, settings, ipam_cfg))


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


def _check_extra_policy(errs, host, f, extra, node_name):
    if not isinstance(extra, dict):
        errs.add(host, f, extra, "must be a mapping", "give at least name, pf_names and resource_name")
        return False
    unknown = sorted(set(extra) - set(_EXTRA_POLICY_KEYS))
    if unknown:
        errs.add(host, f, unknown, "unknown key(s)", "use only: %s" % ", ".join(_EXTRA_POLICY_KEYS))
        return False
    if not isinstance(extra.get("name"), str) or not DNS_LABEL_RE.match(extra.get("name") or ""):
        errs.add(host, f + ".name", extra.get("name"), "each extra policy needs a name suffix", "set name to a DNS label such as dpdk")
        return False
    if _is_unset(extra.get("resource_name")):
        errs.add(
            host,
            f + ".resource_name",
            None,
            "each extra policy needs its own resourceName",
            "set resource_name, e.g. %s_%s" % (_ident(extra["name"]), _ident(node_name)),
        )
        return False
    return True


def _nv_ipam(errs, cluster):
    pool = cluster("sriov_networks_nv_ipam_pool")
    pool_type = cluster("sriov_networks_nv_ipam_pool_type")
    if not isinstance(pool, str) or not DNS_SUBDOMAIN_RE.match(pool):
        errs.add(
            "(cluster)",
            "sriov_networks_nv_ipam_pool",
            pool,
            "nv-ipam needs the name of an existing IPPool",
            "set sriov_networks_nv_ipam_pool to the IPPool name, e.g. roce-pool",
        )
    if pool_type not in ("ippool", "cidrpool"):
        errs.add("(cluster)", "sriov_networks_nv_ipam_pool_type", pool_type, "unknown nv-ipam pool type", "set it to 'ippool' or 'cidrpool'")
    return {"type": "nv-ipam", "poolName": pool, "poolType": pool_type}


def _whereabouts_ipam(errs, cluster):
    rng = cluster("sriov_networks_whereabouts_range")
    cfg = {"type": "whereabouts"}
    net = None
    try:
        net = ipaddress.ip_network(str(rng), strict=True)
        cfg["range"] = str(net)
    except ValueError:
        errs.add(
            "(cluster)",
            "sriov_networks_whereabouts_range",
            rng,
            "whereabouts needs one cluster-wide CIDR range",
            "set sriov_networks_whereabouts_range, e.g. 10.255.0.0/16",
        )
    exclude = cluster("sriov_networks_whereabouts_exclude") or []
    clean = []
    for ex in exclude if isinstance(exclude, list) else [exclude]:
        try:
            clean.append(str(ipaddress.ip_network(str(ex), strict=False)))
        except ValueError:
            errs.add("(cluster)", "sriov_networks_whereabouts_exclude", ex, "not a CIDR", "list CIDRs to keep out of the range, e.g. 10.255.0.0/30")
    if clean:
        cfg["exclude"] = clean
    gw = cluster("sriov_networks_whereabouts_gateway")
    if not _is_unset(gw):
        try:
            addr = ipaddress.ip_address(str(gw))
            if net is not None and addr not in net:
                errs.add(
                    "(cluster)",
                    "sriov_networks_whereabouts_gateway",
                    gw,
                    "gateway is outside the whereabouts range %s" % net,
                    "pick a gateway inside the range or leave it empty",
                )
            cfg["gateway"] = str(addr)
        except ValueError:
            errs.add("(cluster)", "sriov_networks_whereabouts_gateway", gw, "not an IP address", "set an address or leave it empty")
    return cfg


def _network_object(name, namespace, resource_name, s, ipam_cfg):
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

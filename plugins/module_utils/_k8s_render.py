# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure-Python renderer and validator for the Kubernetes side of gpufabric.roce.

Nothing here imports Ansible: the filter plugin ``gpufabric.roce.k8s_render`` is a thin
wrapper, and the unit tests and benchmarks import this module directly.

Three renderers, each validating its whole input first and raising
:class:`RenderValidationError` carrying *every* problem found (never just the first):

* :func:`render_sriov` - one SriovNetworkNodePolicy per node (plus optional extra
  policies), SriovNetworks (one per node with host-local IPAM, one per resourceName with
  whereabouts / nv-ipam), and a per-node summary of the allocatable resources to expect.
* :func:`render_nic_cluster_policy` - the NicClusterPolicy the network-operator chart no
  longer deploys (since 24.10).
* :func:`render_helm_values` / :func:`render_chart_reference` - the Helm values and the
  chart coordinates of the network-operator release, with the air-gapped image relocation.

Every error is a dict ``{host, field, value, problem, fix, message}``; ``message`` reads
``<host>: <field>=<value>: <problem>. Fix: <fix>``.
"""

import copy
import ipaddress
import json
import re

SRIOV_API_VERSION = "sriovnetwork.openshift.io/v1"
NCP_API_VERSION = "mellanox.com/v1alpha1"
NCP_NAME = "nic-cluster-policy"  # the operator only reconciles a NicClusterPolicy with this name
MELLANOX_VENDOR = "15b3"
MLX_MAX_VFS = 128

RESOURCE_NAME_RE = re.compile(r"^[a-zA-Z0-9_]+$")
DNS_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
PF_RANGE_RE = re.compile(r"^(?P<pf>[^#\s]+)#(?P<first>\d+)-(?P<last>\d+)$")
NETDEV_RE = re.compile(r"^[^/\s:#]{1,15}$")
IMAGE_NAME_RE = re.compile(r"^[a-zA-Z0-9\-]+$")
REPOSITORY_RE = re.compile(r"^[a-zA-Z0-9.\-/:]+$")
REGISTRY_RE = re.compile(r"^[a-zA-Z0-9.\-]+(:[0-9]+)?(/[a-zA-Z0-9._\-]+)*$")
LABEL_KEY_RE = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$")

IPAM_MODES = ("host-local", "whereabouts", "nv-ipam")
NCP_IPAM_MODES = ("nv-ipam", "whereabouts", "none")
LINK_TYPES = ("eth", "ETH", "ib", "IB")
DEVICE_TYPES = ("netdevice", "vfio-pci")
LINK_STATES = ("auto", "enable", "disable")
ON_OFF = ("on", "off")

# Built-in fallbacks. The roles pass their own defaults (defaults/main.yml) on top of these,
# and each node's hostvars override both. Keys are the inventory variable names.
SRIOV_BUILTIN_DEFAULTS = {
    "roce_num_vfs": 8,
    "roce_mtu": 9000,
    "roce_vlan_id": 100,
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

_EXTRA_POLICY_KEYS = ("name", "pf_names", "resource_name", "num_vfs", "mtu", "link_type", "device_type", "is_rdma", "priority", "node_selector")

# ---------------------------------------------------------------------------------------------
# network-operator chart 26.4.1: every image the chart values reference (chart-values.yaml),
# as (path in values, kind, default). kind "ref": full image reference; "repo": a repository
# prefix the chart joins with an image name; "repo_full": repository including the image name.
CHART_IMAGES = {
    "26.4.1": (
        (("operator", "repository"), "repo", "nvcr.io/nvidia/cloud-native"),
        (("operator", "ofedDriver", "initContainer", "repository"), "repo", "nvcr.io/nvidia/mellanox"),
        (("node-feature-discovery", "image", "repository"), "repo_full", "nvcr.io/nvidia/mellanox/node-feature-discovery"),
        (("maintenance-operator-chart", "operator", "image", "repository"), "repo", "nvcr.io/nvidia/mellanox"),
        (("sriov-network-operator", "images", "operator"), "ref", "nvcr.io/nvidia/mellanox/sriov-network-operator:network-operator-v26.4.1"),
        (
            ("sriov-network-operator", "images", "sriovConfigDaemon"),
            "ref",
            "nvcr.io/nvidia/mellanox/sriov-network-operator-config-daemon:network-operator-v26.4.1",
        ),
        (("sriov-network-operator", "images", "sriovCni"), "ref", "nvcr.io/nvidia/mellanox/sriov-cni:network-operator-v26.4.1"),
        (("sriov-network-operator", "images", "ibSriovCni"), "ref", "nvcr.io/nvidia/mellanox/ib-sriov-cni:network-operator-v26.4.1"),
        (("sriov-network-operator", "images", "ovsCni"), "ref", "nvcr.io/nvidia/mellanox/ovs-cni-plugin:network-operator-v26.4.1"),
        (("sriov-network-operator", "images", "rdmaCni"), "ref", "nvcr.io/nvidia/mellanox/rdma-cni:network-operator-v26.4.1"),
        (
            ("sriov-network-operator", "images", "sriovDevicePlugin"),
            "ref",
            "nvcr.io/nvidia/mellanox/sriov-network-device-plugin:network-operator-v26.4.1",
        ),
        (("sriov-network-operator", "images", "sriovDraDriver"), "ref", "nvcr.io/nvidia/mellanox/dra-driver-sriov:network-operator-v26.4.1"),
        (("sriov-network-operator", "images", "resourcesInjector"), "ref", "ghcr.io/k8snetworkplumbingwg/network-resources-injector:v1.7.0"),
        (("sriov-network-operator", "images", "webhook"), "ref", "nvcr.io/nvidia/mellanox/sriov-network-operator-webhook:network-operator-v26.4.1"),
    ),
}

# Where each chart (and sub-chart) takes its pull secrets, and in which shape.
# "names": a list of secret names; "refs": a list of {name: <secret>} (upstream NFD chart).
CHART_PULL_SECRETS = (
    (("imagePullSecrets",), "names"),
    (("sriov-network-operator", "imagePullSecrets"), "names"),
    (("maintenance-operator-chart", "imagePullSecrets"), "names"),
    (("node-feature-discovery", "imagePullSecrets"), "refs"),
)

# NicClusterPolicy component images for network-operator 26.4.1 (NVIDIA's NicClusterPolicy
# reference for that release). Keys are the network_operator_images keys.
NCP_DEFAULT_IMAGES = {
    "multus": {"repository": "nvcr.io/nvidia/mellanox", "image": "multus-cni", "version": "network-operator-v26.4.1"},
    "cni_plugins": {"repository": "nvcr.io/nvidia/mellanox", "image": "plugins", "version": "network-operator-v26.4.1"},
    "nv_ipam": {"repository": "nvcr.io/nvidia/mellanox", "image": "nvidia-k8s-ipam", "version": "network-operator-v26.4.1"},
    "rdma_shared_device_plugin": {"repository": "nvcr.io/nvidia/mellanox", "image": "k8s-rdma-shared-dev-plugin", "version": "network-operator-v26.4.1"},
    "ofed_driver": {"repository": "nvcr.io/nvidia/mellanox", "image": "doca-driver", "version": "doca3.4.1-26.04-1.1.0.0-1"},
}

NCP_BUILTIN_DEFAULTS = {
    "network_operator_ipam": "nv-ipam",
    "network_operator_nv_ipam_enable_webhook": False,
    "network_operator_ofed_driver": False,
    "network_operator_rdma_shared_device_plugin": False,
    "network_operator_rdma_shared_device_plugin_config": {
        "configList": [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63, "selectors": {"vendors": [MELLANOX_VENDOR]}}]
    },
    "network_operator_images": {},
    "network_operator_airgap": {},
    "network_operator_nic_cluster_policy_overrides": {},
}

HELM_BUILTIN_DEFAULTS = {
    "network_operator_chart_repo_url": "https://helm.ngc.nvidia.com/nvidia",
    "network_operator_chart_name": "network-operator",
    "network_operator_chart_version": "26.4.1",
    "network_operator_release_name": "network-operator",
    "network_operator_namespace": "nvidia-network-operator",
    "network_operator_nfd_enabled": True,
    "network_operator_sriov_enabled": True,
    "network_operator_resource_prefix": "nvidia.com",
    "network_operator_helm_values_overrides": {},
    "network_operator_airgap": {},
}

AIRGAP_KEYS = ("registry", "preserve_path", "image_pull_secrets")


class RenderValidationError(ValueError):
    """Raised with every validation error found; ``errors`` is the list of error dicts."""

    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__(format_errors(self.errors))


def format_errors(errors):
    count = len(errors)
    head = "%d problem%s found; nothing was rendered or applied:" % (count, "" if count == 1 else "s")
    return "\n".join([head] + ["  - " + e["message"] for e in errors])


def _show(value):
    """Stable, readable rendering of a value for error messages (plain types only)."""
    plain = _plain(value)
    try:
        return json.dumps(plain, sort_keys=True)
    except (TypeError, ValueError):
        return repr(plain)


def _plain(value):
    """Strip subclasses (Ansible's tagged/unsafe strings, lazy containers) down to builtins."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class _Errors:
    def __init__(self):
        self.items = []

    def add(self, host, field, value, problem, fix):
        msg = "%s: %s=%s: %s. Fix: %s" % (host, field, _show(value), problem, fix)
        self.items.append({"host": host, "field": field, "value": _plain(value), "problem": problem, "fix": fix, "message": msg})

    def raise_if_any(self):
        if self.items:
            raise RenderValidationError(self.items)


def _is_unset(value):
    return value is None or (isinstance(value, str) and value == "")


def _lookup(hvars, defaults, builtin, key):
    value = hvars.get(key) if hvars is not None else None
    if value is None:
        value = defaults.get(key) if defaults else None
    if value is None:
        value = builtin.get(key)
    return value


def _as_int(errs, host, field, value, *, lo=None, hi=None, what="", fix=None):
    """Integer check that rejects booleans and accepts digit strings (templated values)."""
    if isinstance(value, bool) or value is None:
        ok = False
    elif isinstance(value, int):
        ok = True
    elif isinstance(value, str) and re.match(r"^-?\d+$", value.strip()):
        value = int(value.strip())
        ok = True
    else:
        ok = False
    if not ok:
        errs.add(host, field, value, "must be an integer%s" % (" " + what if what else ""), fix or "set %s to a whole number" % field)
        return None
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = "between %s and %s" % (lo, hi) if hi is not None else "at least %s" % lo
        errs.add(host, field, value, "must be %s%s" % (bounds, " " + what if what else ""), fix or "set %s to a value %s" % (field, bounds))
        return None
    return value


def _as_bool(errs, host, field, value):
    if isinstance(value, bool):
        return value
    errs.add(host, field, value, "must be a boolean", "set %s to true or false (unquoted)" % field)
    return None


def _slug(name):
    s = re.sub(r"[^a-z0-9.-]+", "-", str(name).lower()).strip("-.")
    return s or "node"


def _ident(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", str(name))


def parse_pf_name(entry):
    """Return (pf, first, last) for 'pf' or 'pf#first-last'; first/last are None without a range."""
    m = PF_RANGE_RE.match(entry)
    if m:
        return m.group("pf"), int(m.group("first")), int(m.group("last"))
    return entry, None, None


# ----------------------------------------------------------------------------------------- sriov


def _check_policy(errs, host, fields, pol):
    """Validate one policy description (plain dict with resolved values). Returns cleaned dict or None."""
    ok = True
    num_vfs = _as_int(errs, host, fields["num_vfs"], pol["num_vfs"])
    vendor = pol["nic_vendor"]
    if num_vfs is not None:
        if num_vfs < 1:
            errs.add(host, fields["num_vfs"], num_vfs, "numVfs must be at least 1", "set %s to 1..%d" % (fields["num_vfs"], MLX_MAX_VFS))
            num_vfs = None
        elif str(vendor).lower() == MELLANOX_VENDOR and num_vfs > MLX_MAX_VFS:
            errs.add(
                host,
                fields["num_vfs"],
                num_vfs,
                "numVfs exceeds the Mellanox maximum of %d VFs per PF" % MLX_MAX_VFS,
                "set %s to %d or less" % (fields["num_vfs"], MLX_MAX_VFS),
            )
            num_vfs = None
    ok = ok and num_vfs is not None

    mtu = _as_int(
        errs, host, fields["mtu"], pol["mtu"], lo=1, hi=9978, what="(bytes)", fix="set %s to the VF MTU, e.g. 9000 (must not exceed the PF MTU)" % fields["mtu"]
    )
    priority = _as_int(
        errs, host, fields["priority"], pol["priority"], lo=0, hi=99, what="(0 is the highest priority)", fix="set %s to 0..99" % fields["priority"]
    )

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

    node_selector = pol["node_selector"]
    if not isinstance(node_selector, dict) or not node_selector:
        errs.add(
            host,
            fields["node_selector"],
            node_selector,
            "nodeSelector must be a non-empty mapping of label to string value",
            "leave %s unset (defaults to kubernetes.io/hostname: <roce_node_name>) or give a mapping" % fields["node_selector"],
        )
        ok = False
    else:
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

    pf_names = pol["pf_names"]
    ranges = []
    if not isinstance(pf_names, list) or not pf_names:
        errs.add(
            host,
            fields["pf_names"],
            pf_names,
            "no PF to select",
            "set roce_pf (e.g. enp157s0np0) or %s to a list of PF names" % fields["pf_names"].replace("roce_pf", "sriov_networks_pf_names"),
        )
        ok = False
    else:
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

    if not ok or None in (mtu, priority, num_vfs, is_rdma):
        return None
    return {
        "name": pol["name"],
        "num_vfs": num_vfs,
        "mtu": mtu,
        "priority": priority,
        "link_type": link_type,
        "device_type": device_type,
        "is_rdma": is_rdma,
        "resource_name": resource_name,
        "node_selector": {str(k): str(v) for k, v in node_selector.items()},
        "nic_vendor": vendor,
        "pf_names": [r[3] for r in ranges],
        "ranges": ranges,
        "fields": fields,
    }


def _policy_object(p, namespace):
    nic_selector = {"pfNames": list(p["pf_names"])}
    if p["nic_vendor"]:
        nic_selector["vendor"] = str(p["nic_vendor"])
    return {
        "apiVersion": SRIOV_API_VERSION,
        "kind": "SriovNetworkNodePolicy",
        "metadata": {"name": p["name"], "namespace": namespace},
        "spec": {
            "resourceName": p["resource_name"],
            "nodeSelector": dict(p["node_selector"]),
            "priority": p["priority"],
            "mtu": p["mtu"],
            "numVfs": p["num_vfs"],
            "nicSelector": nic_selector,
            "deviceType": p["device_type"],
            "isRdma": p["is_rdma"],
            "linkType": p["link_type"],
        },
    }


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
    defaults = dict(defaults or {})
    errs = _Errors()
    B = SRIOV_BUILTIN_DEFAULTS

    def cluster(key):
        return _lookup(None, defaults, B, key)

    namespace = cluster("sriov_networks_namespace")
    if not isinstance(namespace, str) or not DNS_LABEL_RE.match(namespace):
        errs.add(
            "(cluster)", "sriov_networks_namespace", namespace, "not a valid namespace name", "use the network-operator namespace, e.g. nvidia-network-operator"
        )
    prefix = cluster("sriov_networks_resource_prefix")
    if not isinstance(prefix, str) or not DNS_SUBDOMAIN_RE.match(prefix):
        errs.add("(cluster)", "sriov_networks_resource_prefix", prefix, "not a valid resource prefix", "use the chart's resourcePrefix, e.g. nvidia.com")
    name_prefix = cluster("sriov_networks_name_prefix")
    if not isinstance(name_prefix, str) or not DNS_LABEL_RE.match(name_prefix):
        errs.add("(cluster)", "sriov_networks_name_prefix", name_prefix, "not a valid object name prefix", "use lower-case letters, digits and '-', e.g. roce")
        name_prefix = "roce"
    ipam = cluster("sriov_networks_ipam")
    if ipam not in IPAM_MODES:
        errs.add("(cluster)", "sriov_networks_ipam", ipam, "unknown IPAM mode", "set sriov_networks_ipam to one of %s" % ", ".join(IPAM_MODES))
    cluster_ipam = None
    if ipam == "whereabouts":
        cluster_ipam = _whereabouts_ipam(errs, cluster)
    elif ipam == "nv-ipam":
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
        cluster_ipam = {"type": "nv-ipam", "poolName": pool, "poolType": pool_type}

    if not hosts:
        errs.add("(inventory)", "groups['roce_nodes']", list(hosts or []), "no hosts to render", "add the Kubernetes worker nodes to the roce_nodes group")

    policies_out, networks_out, nodes_out = [], [], []
    node_owner = {}  # node_name -> host
    resource_owner = {}  # resourceName -> host (host-local: one node per resourceName)
    per_pf = {}  # (node target key, pf) -> [(first, last, policy name, host, field, num_vfs)]
    subnets = []  # (version, network, host)
    shared = {}  # cluster-wide IPAM: resourceName -> (settings, host)
    pending_shared = []  # cluster-wide IPAM: (resourceName, settings) in inventory order

    for host in hosts:
        hv_raw = host_vars.get(host)
        if hv_raw is None:
            errs.add(host, "hostvars", None, "host is in roce_nodes but has no variables", "check the inventory for a typo in the host name")
            continue
        hv = {}
        for key in SRIOV_PER_HOST_KEYS:
            hv[key] = _plain(_lookup(hv_raw, defaults, B, key))
        node_name = hv["roce_node_name"] or host
        if not isinstance(node_name, str) or not DNS_SUBDOMAIN_RE.match(node_name) or len(node_name) > 253:
            errs.add(
                host, "roce_node_name", node_name, "not a valid Kubernetes node name", "set roce_node_name to the node's name as shown by kubectl get nodes"
            )
            continue
        if node_name in node_owner:
            errs.add(
                host,
                "roce_node_name",
                node_name,
                "node name already used by host %s" % node_owner[node_name],
                "give each host its own roce_node_name (the Kubernetes node name)",
            )
            continue
        node_owner[node_name] = host
        slug = _slug(node_name)

        pf_names = hv["sriov_networks_pf_names"]
        pf_field = "sriov_networks_pf_names"
        if _is_unset(pf_names) or pf_names == []:
            pf_field = "roce_pf"
            pf_names = [] if _is_unset(hv["roce_pf"]) else [hv["roce_pf"]]
        resource_name = hv["sriov_networks_resource_name"]
        if _is_unset(resource_name):
            resource_name = "%s_%s" % (_ident(name_prefix), _ident(node_name)) if ipam == "host-local" else _ident(name_prefix)
        node_selector = hv["sriov_networks_node_selector"] or {"kubernetes.io/hostname": node_name}

        base = {
            "name": "%s-%s" % (name_prefix, slug),
            "node_name": node_name,
            "pf_names": pf_names,
            "num_vfs": hv["roce_num_vfs"],
            "mtu": hv["roce_mtu"],
            "priority": hv["sriov_networks_priority"],
            "link_type": hv["sriov_networks_link_type"],
            "device_type": hv["sriov_networks_device_type"],
            "is_rdma": hv["sriov_networks_is_rdma"],
            "resource_name": resource_name,
            "node_selector": node_selector,
            "nic_vendor": hv["sriov_networks_nic_vendor"],
        }
        fields = {
            "num_vfs": "roce_num_vfs",
            "mtu": "roce_mtu",
            "priority": "sriov_networks_priority",
            "link_type": "sriov_networks_link_type",
            "device_type": "sriov_networks_device_type",
            "is_rdma": "sriov_networks_is_rdma",
            "resource_name": "sriov_networks_resource_name",
            "node_selector": "sriov_networks_node_selector",
            "pf_names": pf_field,
        }
        candidates = [(base, fields)]
        extras = hv["sriov_networks_extra_policies"] or []
        if not isinstance(extras, list):
            errs.add(host, "sriov_networks_extra_policies", extras, "must be a list of policy mappings", "write a YAML list, or [] for none")
            extras = []
        for i, extra in enumerate(extras):
            f = "sriov_networks_extra_policies[%d]" % i
            if not isinstance(extra, dict):
                errs.add(host, f, extra, "must be a mapping", "give at least name, pf_names and resource_name")
                continue
            unknown = sorted(set(extra) - set(_EXTRA_POLICY_KEYS))
            if unknown:
                errs.add(host, f, unknown, "unknown key(s)", "use only: %s" % ", ".join(_EXTRA_POLICY_KEYS))
                continue
            if not isinstance(extra.get("name"), str) or not DNS_LABEL_RE.match(extra.get("name") or ""):
                errs.add(host, f + ".name", extra.get("name"), "each extra policy needs a name suffix", "set name to a DNS label such as dpdk")
                continue
            if _is_unset(extra.get("resource_name")):
                errs.add(
                    host,
                    f + ".resource_name",
                    None,
                    "each extra policy needs its own resourceName",
                    "set resource_name, e.g. %s_%s" % (_ident(extra["name"]), _ident(node_name)),
                )
                continue
            p = dict(base)
            p.update({k: v for k, v in extra.items() if v is not None and k != "name"})
            p["name"] = "%s-%s" % (base["name"], extra["name"])
            candidates.append((p, {k: "%s.%s" % (f, k) for k in fields}))

        node_resources = {}
        node_policy_names = []
        seen_rn = {}
        for pol, flds in candidates:
            if len(pol["name"]) > 253:
                errs.add(host, "roce_node_name", pol["name"], "policy name longer than 253 characters", "shorten roce_node_name or sriov_networks_name_prefix")
                continue
            checked = _check_policy(errs, host, flds, pol)
            if checked is None:
                continue
            rn = checked["resource_name"]
            if rn in seen_rn:
                errs.add(
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
                per_pf.setdefault((target, pf), []).append((lo, hi, checked["name"], host, flds["pf_names"], entry, checked["num_vfs"], flds["num_vfs"]))
            count = sum((checked["num_vfs"] if first is None else last - first + 1) for _pf, first, last, _e in checked["ranges"])
            full = "%s/%s" % (prefix, rn)
            node_resources[full] = node_resources.get(full, 0) + count
            node_policy_names.append(checked["name"])
            policies_out.append(_policy_object(checked, namespace))
        nodes_out.append({"host": host, "node_name": node_name, "policies": node_policy_names, "resources": node_resources})

        net_settings = _check_network_settings(errs, host, hv)
        if net_settings is None:
            continue
        if ipam == "host-local":
            if resource_name in resource_owner:
                errs.add(
                    host,
                    "sriov_networks_resource_name",
                    resource_name,
                    "resourceName already used by host %s; with host-local IPAM each node needs its own resourceName "
                    "so its pods land on the node whose subnet they get" % resource_owner[resource_name],
                    "leave sriov_networks_resource_name unset (per-node default) or make it unique per node",
                )
                continue
            resource_owner[resource_name] = host
            sub = _check_pod_subnet(errs, host, hv)
            if sub is None:
                continue
            net, gw = sub
            subnets.append((net.version, int(net.network_address), int(net.broadcast_address), net, host))
            ipam_cfg = {"type": "host-local", "subnet": str(net), "gateway": str(gw), "routes": net_settings["ipam_routes"]}
            networks_out.append(_network_object("%s-%s" % (name_prefix, slug), namespace, resource_name, net_settings, ipam_cfg))
        elif ipam in ("whereabouts", "nv-ipam"):
            key = [json.dumps(net_settings[k], sort_keys=True) for k, _f in _NETWORK_KEYS]
            if resource_name in shared:
                prev_key, prev_host = shared[resource_name]
                diff = [i for i, (a, b) in enumerate(zip(key, prev_key)) if a != b]
                if diff:
                    k0, f0 = _NETWORK_KEYS[diff[0]]
                    errs.add(
                        host,
                        f0,
                        net_settings[k0],
                        "nodes sharing resourceName %s share one SriovNetwork, but this differs from host %s" % (resource_name, prev_host),
                        "set %s the same on every node with resourceName %s (e.g. in group_vars)"
                        % (", ".join(_NETWORK_KEYS[i][1] for i in diff), resource_name),
                    )
                continue
            shared[resource_name] = (key, host)
            pending_shared.append((resource_name, net_settings))

    # pod subnets must not overlap between nodes
    subnets.sort(key=lambda s: (s[0], s[1]))
    for (v1, _s1, e1, n1, h1), (v2, s2, _e2, n2, h2) in zip(subnets, subnets[1:]):
        if v1 == v2 and s2 <= e1:
            errs.add(h2, "roce_pod_subnet", str(n2), "overlaps %s of host %s" % (n1, h1), "give every node a distinct, non-overlapping pod subnet")

    # VF ranges on the same PF of the same node(s) must not overlap, and must agree on numVfs
    for (_target, pf), entries in per_pf.items():
        if len(entries) < 2:
            continue
        entries.sort(key=lambda e: (e[0], e[1]))
        first = entries[0]
        for e in entries[1:]:
            if e[6] != first[6]:
                errs.add(
                    e[3],
                    e[7],
                    e[6],
                    "policies %s and %s partition PF %s but ask for different numVfs (%d vs %d)" % (first[2], e[2], pf, first[6], e[6]),
                    "use the same numVfs in every policy that selects %s" % pf,
                )
        hi_owner = entries[0]
        for e in entries[1:]:
            if e[0] <= hi_owner[1]:
                errs.add(
                    e[3],
                    e[4],
                    e[5],
                    "VF range %d-%d of policy %s overlaps VFs %d-%d of policy %s on the same PF %s"
                    % (e[0], e[1], e[2], hi_owner[0], hi_owner[1], hi_owner[2], pf),
                    "split the VFs with disjoint '%s#first-last' ranges (or target different nodes)" % pf,
                )
            if e[1] > hi_owner[1]:
                hi_owner = e

    errs.raise_if_any()

    if ipam in ("whereabouts", "nv-ipam"):
        multi = len(pending_shared) > 1
        for resource_name, settings in pending_shared:
            name = "%s-%s" % (name_prefix, _slug(resource_name.replace("_", "-"))) if multi else name_prefix
            ipam_cfg = dict(cluster_ipam)
            if ipam == "whereabouts" and settings["ipam_routes"]:
                ipam_cfg["routes"] = settings["ipam_routes"]
            networks_out.append(_network_object(name, namespace, resource_name, settings, ipam_cfg))

    return {"policies": policies_out, "networks": networks_out, "nodes": nodes_out}


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
    return {"apiVersion": SRIOV_API_VERSION, "kind": "SriovNetwork", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


# ------------------------------------------------------------------------------- network operator


def deep_merge(base, override):
    """Recursively merge ``override`` into a copy of ``base`` (dicts merge, anything else replaces)."""
    out = copy.deepcopy(base)
    for k, v in (override or {}).items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _split_registry(ref):
    first, _sep, rest = ref.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first, rest
    return "docker.io", ref


def relocate_image(ref, registry, preserve_path=True, kind="ref"):
    """Point an image reference or repository at ``registry``.

    ``kind`` is "ref" (``repo/name:tag``), "repo_full" (a repository ending in the image name) or "repo"
    (a repository prefix the image name is appended to). ``nvcr.io/nvidia/mellanox/sriov-cni:v1`` with
    ``registry.local:5000/mirror`` becomes ``registry.local:5000/mirror/nvidia/mellanox/sriov-cni:v1``
    (preserve_path) or ``registry.local:5000/mirror/sriov-cni:v1`` (flattened); a "repo" prefix such as
    ``nvcr.io/nvidia/mellanox`` becomes ``registry.local:5000/mirror/nvidia/mellanox`` or, flattened,
    ``registry.local:5000/mirror``.
    """
    registry = registry.rstrip("/")
    _host, path = _split_registry(ref)
    if preserve_path:
        return "%s/%s" % (registry, path)
    if kind == "repo":
        return registry
    return "%s/%s" % (registry, path.rsplit("/", 1)[-1])


def _set_path(d, path, value):
    for k in path[:-1]:
        d = d.setdefault(k, {})
    d[path[-1]] = value


def _check_airgap(errs, airgap, field="network_operator_airgap"):
    if airgap in (None, ""):
        return {}
    if not isinstance(airgap, dict):
        errs.add("(cluster)", field, airgap, "must be a mapping", "write {registry: <host[:port]/path>, preserve_path: true, image_pull_secrets: [<secret>]}")
        return None
    unknown = sorted(set(airgap) - set(AIRGAP_KEYS))
    if unknown:
        errs.add("(cluster)", field, unknown, "unknown key(s)", "use only %s" % ", ".join(AIRGAP_KEYS))
    registry = airgap.get("registry") or ""
    if registry and (not isinstance(registry, str) or not REGISTRY_RE.match(registry)):
        errs.add(
            "(cluster)",
            field + ".registry",
            registry,
            "not a registry/repository prefix",
            "write host[:port][/path] without scheme or trailing slash, e.g. registry.local:5000/nvidia-mirror",
        )
    secrets = airgap.get("image_pull_secrets") or []
    if not isinstance(secrets, list) or not all(isinstance(s, str) and DNS_SUBDOMAIN_RE.match(s) for s in secrets):
        errs.add(
            "(cluster)",
            field + ".image_pull_secrets",
            secrets,
            "must be a list of Secret names",
            "e.g. [ngc-pull-secret]; create the Secrets in the operator namespace first",
        )
    preserve = airgap.get("preserve_path", True)
    if not isinstance(preserve, bool):
        errs.add(
            "(cluster)",
            field + ".preserve_path",
            preserve,
            "must be a boolean",
            "true keeps nvidia/mellanox/... under the registry, false flattens to <registry>/<image>",
        )
    return {"registry": registry, "preserve_path": preserve is not False, "image_pull_secrets": list(secrets) if isinstance(secrets, list) else []}


def render_helm_values(cfg=None):
    """Return the Helm values for the network-operator release.

    Keys of ``cfg`` are the role variables (HELM_BUILTIN_DEFAULTS). The overrides
    (``network_operator_helm_values_overrides``) are deep-merged last and always win.
    """
    cfg = deep_merge(HELM_BUILTIN_DEFAULTS, {k: v for k, v in (cfg or {}).items() if v is not None})
    errs = _Errors()
    for key in ("network_operator_nfd_enabled", "network_operator_sriov_enabled"):
        _as_bool(errs, "(cluster)", key, cfg[key])
    prefix = cfg["network_operator_resource_prefix"]
    if not isinstance(prefix, str) or not DNS_SUBDOMAIN_RE.match(prefix):
        errs.add("(cluster)", "network_operator_resource_prefix", prefix, "not a valid resource prefix", "use e.g. nvidia.com")
    overrides = cfg["network_operator_helm_values_overrides"] or {}
    if not isinstance(overrides, dict):
        errs.add(
            "(cluster)",
            "network_operator_helm_values_overrides",
            overrides,
            "must be a mapping of Helm values",
            "write it as YAML values, e.g. {operator: {nodeSelector: {...}}}",
        )
        overrides = {}
    airgap = _check_airgap(errs, cfg["network_operator_airgap"])
    version = str(cfg["network_operator_chart_version"])
    if airgap and airgap.get("registry") and version not in CHART_IMAGES:
        errs.add(
            "(cluster)",
            "network_operator_chart_version",
            version,
            "the image list for air-gapped relocation is only known for chart %s" % ", ".join(sorted(CHART_IMAGES)),
            "pin network_operator_chart_version to a known version, or add the chart's image keys to CHART_IMAGES in plugins/module_utils/_k8s_render.py",
        )
    errs.raise_if_any()

    values = {
        "nfd": {"enabled": cfg["network_operator_nfd_enabled"]},
        "sriovNetworkOperator": {"enabled": cfg["network_operator_sriov_enabled"]},
        "sriov-network-operator": {"operator": {"resourcePrefix": prefix}},
    }
    if airgap:
        if airgap["registry"]:
            for path, kind, default in CHART_IMAGES[version]:
                _set_path(values, path, relocate_image(default, airgap["registry"], airgap["preserve_path"], kind))
        if airgap["image_pull_secrets"]:
            for path, shape in CHART_PULL_SECRETS:
                secrets = airgap["image_pull_secrets"]
                _set_path(values, path, [{"name": s} for s in secrets] if shape == "refs" else list(secrets))
    return _plain(deep_merge(values, overrides))


def render_chart_reference(cfg=None, values_file="helm-values.yaml"):
    cfg = deep_merge(HELM_BUILTIN_DEFAULTS, {k: v for k, v in (cfg or {}).items() if v is not None})
    errs = _Errors()
    ns = cfg["network_operator_namespace"]
    if not isinstance(ns, str) or not DNS_LABEL_RE.match(ns) or len(ns) > 63:
        errs.add("(cluster)", "network_operator_namespace", ns, "not a valid namespace name", "use a DNS-1123 label, e.g. nvidia-network-operator")
    release = cfg["network_operator_release_name"]
    if not isinstance(release, str) or not DNS_LABEL_RE.match(release) or len(release) > 53:
        errs.add("(cluster)", "network_operator_release_name", release, "not a valid Helm release name (DNS label, max 53 chars)", "use e.g. network-operator")
    version = cfg["network_operator_chart_version"]
    if _is_unset(version) or not re.match(r"^v?\d+\.\d+\.\d+([-+].+)?$", str(version)):
        errs.add("(cluster)", "network_operator_chart_version", version, "not a chart version", "pin an exact chart version, e.g. 26.4.1")
    errs.raise_if_any()
    repo, chart = cfg["network_operator_chart_repo_url"], cfg["network_operator_chart_name"]
    return {
        "repository": repo,
        "chart": chart,
        "version": str(version),
        "release_name": release,
        "namespace": ns,
        "values_file": values_file,
        "helm_command": "helm upgrade --install %s %s --repo %s --version %s --namespace %s --create-namespace -f %s"
        % (release, chart, repo, version, ns, values_file),
    }


def render_nic_cluster_policy(cfg=None):
    """Return the NicClusterPolicy object (cluster-scoped, name ``nic-cluster-policy``)."""
    cfg = dict(NCP_BUILTIN_DEFAULTS, **{k: v for k, v in (cfg or {}).items() if v is not None})
    errs = _Errors()
    ipam = cfg["network_operator_ipam"]
    if ipam not in NCP_IPAM_MODES:
        errs.add("(cluster)", "network_operator_ipam", ipam, "unknown IPAM component", "set network_operator_ipam to nv-ipam, whereabouts or none")
    flags = {}
    for key in ("network_operator_ofed_driver", "network_operator_rdma_shared_device_plugin", "network_operator_nv_ipam_enable_webhook"):
        flags[key] = _as_bool(errs, "(cluster)", key, cfg[key])
    images = cfg["network_operator_images"] or {}
    if not isinstance(images, dict):
        errs.add(
            "(cluster)", "network_operator_images", images, "must be a mapping of component to {repository, image, version}", "e.g. {multus: {version: v4.1.0}}"
        )
        images = {}
    unknown = sorted(set(images) - set(NCP_DEFAULT_IMAGES))
    if unknown:
        errs.add("(cluster)", "network_operator_images", unknown, "unknown component(s)", "use only %s" % ", ".join(sorted(NCP_DEFAULT_IMAGES)))
    resolved = {}
    for comp, dflt in NCP_DEFAULT_IMAGES.items():
        img = dict(dflt)
        override = images.get(comp) or {}
        if not isinstance(override, dict):
            errs.add("(cluster)", "network_operator_images.%s" % comp, override, "must be a mapping", "write {repository: ..., image: ..., version: ...}")
            override = {}
        img.update({k: str(v) for k, v in override.items() if v is not None})
        if not IMAGE_NAME_RE.match(img.get("image", "")):
            errs.add(
                "(cluster)",
                "network_operator_images.%s.image" % comp,
                img.get("image"),
                "image name must match [a-zA-Z0-9-]+",
                "give the image name without registry or tag",
            )
        if not REPOSITORY_RE.match(img.get("repository", "")):
            errs.add("(cluster)", "network_operator_images.%s.repository" % comp, img.get("repository"), "not a repository", "e.g. nvcr.io/nvidia/mellanox")
        if not img.get("version"):
            errs.add(
                "(cluster)",
                "network_operator_images.%s.version" % comp,
                img.get("version"),
                "version (image tag) is empty",
                "set the tag, e.g. network-operator-v26.4.1",
            )
        resolved[comp] = img
    rdma_cfg = cfg["network_operator_rdma_shared_device_plugin_config"]
    if flags.get("network_operator_rdma_shared_device_plugin"):
        if isinstance(rdma_cfg, str):
            try:
                json.loads(rdma_cfg)
            except ValueError:
                errs.add(
                    "(cluster)",
                    "network_operator_rdma_shared_device_plugin_config",
                    rdma_cfg,
                    "not valid JSON",
                    "give a mapping (it is serialised for you) or a JSON string",
                )
        elif not isinstance(rdma_cfg, dict) or "configList" not in rdma_cfg:
            errs.add(
                "(cluster)",
                "network_operator_rdma_shared_device_plugin_config",
                rdma_cfg,
                "must be a mapping with configList",
                "e.g. {configList: [{resourceName: rdma_shared_device_a, rdmaHcaMax: 63, selectors: {vendors: ['15b3']}}]}",
            )
    overrides = cfg["network_operator_nic_cluster_policy_overrides"] or {}
    if not isinstance(overrides, dict):
        errs.add("(cluster)", "network_operator_nic_cluster_policy_overrides", overrides, "must be a mapping merged into spec", "e.g. {tolerations: [...]}")
        overrides = {}
    airgap = _check_airgap(errs, cfg["network_operator_airgap"])
    errs.raise_if_any()

    secrets = (airgap or {}).get("image_pull_secrets") or []

    def component(comp, **extra):
        img = resolved[comp]
        repo = img["repository"]
        if airgap and airgap.get("registry"):
            repo = relocate_image(repo, airgap["registry"], airgap["preserve_path"], "repo")
        out = {"image": img["image"], "repository": repo, "version": img["version"]}
        if secrets:
            out["imagePullSecrets"] = list(secrets)
        out.update(extra)
        return out

    spec = {"secondaryNetwork": {"multus": component("multus"), "cniPlugins": component("cni_plugins")}}
    if ipam == "nv-ipam":
        spec["nvIpam"] = component("nv_ipam", enableWebhook=flags["network_operator_nv_ipam_enable_webhook"])
    if flags["network_operator_ofed_driver"]:
        spec["ofedDriver"] = component(
            "ofed_driver",
            startupProbe={"initialDelaySeconds": 10, "periodSeconds": 20},
            livenessProbe={"initialDelaySeconds": 30, "periodSeconds": 30},
            readinessProbe={"initialDelaySeconds": 10, "periodSeconds": 30},
        )
    if flags["network_operator_rdma_shared_device_plugin"]:
        conf = rdma_cfg if isinstance(rdma_cfg, str) else json.dumps(_plain(rdma_cfg), sort_keys=True)
        spec["rdmaSharedDevicePlugin"] = component("rdma_shared_device_plugin", config=conf)
    spec = deep_merge(spec, _plain(overrides))
    return {"apiVersion": NCP_API_VERSION, "kind": "NicClusterPolicy", "metadata": {"name": NCP_NAME}, "spec": spec}


def ncp_component_names(policy):
    """Names of the components a NicClusterPolicy asks for (for status messages)."""
    spec = policy.get("spec", {})
    names = [k for k in spec if k != "secondaryNetwork"]
    names += ["secondaryNetwork.%s" % k for k in spec.get("secondaryNetwork", {})]
    return sorted(names)


# ------------------------------------------------------------------------- cluster status checks


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

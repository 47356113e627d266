# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The QoS model applied the operator way: NicConfigurationTemplates for NVIDIA's NIC Configuration Operator
(configuration.net.nvidia.com/v1alpha1, the version network-operator 26.4.1 deploys), from the fabric table.

What the operator does with a template (Mellanox/nic-configuration-operator at network-operator-v26.4.1,
README "Configuration details", pkg/configuration/configvalidation.go, internal/controller/template_matcher.go):

- ``roceOptimized.enabled`` sets trust, PFC and ToS on each PF at runtime (``qos``; without it dscp,
  "0,0,0,1,0,0,0,0", 0) and the nvconfig ROCE_CC_PRIO_MASK_P<n>=255, CNP_DSCP_P<n>=4, CNP_802P_PRIO_P<n>=6;
  ``rawNvConfig`` entries override those (``_P2`` ones are dropped on a one-port NIC). nvconfig changes take a
  firmware reset or reboot, which the operator coordinates (maintenance operator).
- The 26.4.1 CRD's ``qos`` has trust, pfc and tos only. So the model's ECN priorities and CNP DSCP/priority are
  rawNvConfig entries, rendered only where they differ from what roceOptimized sets. Link pause has no field:
  ``pause_frames: true`` is refused here (the operator would leave link pause as it finds it, and PFC, which
  it does configure, cannot run beside link pause on a ConnectX port).
- A NicDevice (one physical NIC, all its ports) selected by two templates gets neither: its configuration is
  cleared and an event says "Several templates matching this device". Two templates must never select one
  NIC, so every template selects its NICs by PCI address (the rails' PFs, and only them: a DGX's storage
  ConnectX of the same type is left alone), and the groups are checked for a NIC two of them would select
  before anything is applied.

Templates: one per (node selector, NIC type, numVfs, QoS). ``roce_nic_config_node_selector`` empty (the
default): each node its own templates, ``kubernetes.io/hostname: <node>`` (exact, and any per-node QoS can be
expressed). A label map: one template per group for every node carrying the labels (those must be this
fabric's nodes only, which the inventory cannot check, and no node whose ``roce_qos_via`` is host); a rail whose
QoS differs per node is then refused when its NICs sit at the same PCI address, as on identical boards. Nodes with
``roce_qos_via: host`` (the default) get no template: the host_network phase applies their QoS."""

import hashlib
import re

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import plain, slug
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import (
    DNS_LABEL_RE,
    LABEL_KEY_RE,
    LABEL_VALUE_RE,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    _Errors,
    require_keys,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._common.qos import pfc_string, prio_mask

NIC_CONFIG_API_VERSION = "configuration.net.nvidia.com/v1alpha1"
NIC_CONFIG_KIND = "NicConfigurationTemplate"
HOSTNAME_LABEL = "kubernetes.io/hostname"
# What roceOptimized writes itself (configvalidation.go ConstructNvParamMapFromTemplate), per port.
ROCE_OPTIMIZED_NVCONFIG = {"ROCE_CC_PRIO_MASK": 255, "CNP_DSCP": 4, "CNP_802P_PRIO": 6}
PORTS = (1, 2)
# PCI device ids of NVIDIA NICs (NicDevice status.type, lower-case hex as sysfs gives it).
NIC_TYPES = {
    "101b": "ConnectX-6", "101d": "ConnectX-6 Dx", "101f": "ConnectX-6 Lx", "1021": "ConnectX-7", "1023": "ConnectX-8",
    "1025": "ConnectX-9", "a2d6": "BlueField-2", "a2dc": "BlueField-3",
}
NIC_TYPE_RE = re.compile(r"^[0-9a-f]{4}\Z")
PCI_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\Z")
# systemd's predictable names of a PCI netdev: en[P<domain>]p<bus>s<slot>[f<function>][np<port>], numbers in decimal.
PREDICTABLE_RE = re.compile(r"^en(?:P([0-9]+))?p([0-9]+)s([0-9]+)(?:f([0-9]+))?(?:np[0-9]+)?\Z")
# The cluster settings read besides each node's own; the caller passes every one (the filter
# gpufabric.roce._nic_config_templates fills in the role's defaults/main.yml and _fabric.rails.ROCE_DEFAULTS,
# plugin_utils/_role_defaults.py). roce_nic_config_node_selector has no default: unset, no selector is added.
NIC_CONFIG_DEFAULT_KEYS = ("sriov_networks_namespace", "sriov_networks_name_prefix", "roce_num_vfs", "roce_qos_via")
QOS_VIA = ("host", "operator")
_NIC_TYPE_FIX = ("set it to the PCI device id of the rail's NIC as NicDevice status.type shows it, quoted: %s (lspci -n -d 15b3: "
                 "on the node prints it after 15b3:)" % ", ".join('"%s" %s' % kv for kv in sorted(NIC_TYPES.items())))


def qos_via(nodes, host, cfg):
    """Who applies ``host``'s QoS: its roce_qos_via (``nodes``: host -> the variables it sets), else the cluster's
    (``cfg``)."""
    value = (nodes.get(host) or {}).get("roce_qos_via")
    return value if value not in (None, "") else cfg["roce_qos_via"]


def pci_from_ifname(name):
    """The PCI address in a predictable interface name (enp12s0np0 -> 0000:0c:00.0), or None."""
    m = PREDICTABLE_RE.match(name or "")
    if not m:
        return None
    domain, bus, slot, function = (int(g) if g else 0 for g in m.groups())
    if domain > 0xFFFF or bus > 0xFF or slot > 0x1F or function > 7:
        return None
    return "%04x:%02x:%02x.%d" % (domain, bus, slot, function)


def nvconfig_overrides(qos):
    """rawNvConfig for what the model wants and roceOptimized does not set (per port; P2 is dropped on one-port NICs)."""
    wanted = {"ROCE_CC_PRIO_MASK": prio_mask(qos["ecn_priorities"]), "CNP_DSCP": qos["cnp_dscp"], "CNP_802P_PRIO": qos["cnp_priority"]}
    return [{"name": "%s_P%d" % (base, port), "value": str(value)}
            for base, value in wanted.items() if value != ROCE_OPTIMIZED_NVCONFIG[base] for port in PORTS]


def template_spec(nic_type, num_vfs, qos):
    """The spec.template of a NicConfigurationTemplate for one QoS setting."""
    spec = {
        "numVfs": num_vfs,
        "linkType": "Ethernet",
        "roceOptimized": {"enabled": True, "qos": {"trust": qos["trust"], "pfc": pfc_string(qos["pfc_priorities"]), "tos": qos["tos"]}},
    }
    raw = nvconfig_overrides(qos)
    if raw:
        spec["rawNvConfig"] = raw
    return spec


def _dns_name(parts):
    name = "-".join(p for p in parts if p)
    if len(name) <= 63:
        return name
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
    return "%s-%s" % (name[:54].rstrip("-."), digest)


def _rail_var(hv, rail, key):
    """(field, value) of a rail key, the node's override first; (None, None) when neither sets it."""
    override = (hv.get("roce_rail_overrides") or {}).get(rail)
    if isinstance(override, dict) and override.get(key) is not None:
        return "roce_rail_overrides.%s.%s" % (rail, key), override[key]
    for r in hv.get("roce_rails") or []:
        if isinstance(r, dict) and r.get("name") == rail and r.get(key) is not None:
            return "roce_rails[%s].%s" % (rail, key), r[key]
    return None, None


def _setting(hv, rail, key, node_var):
    field, value = _rail_var(hv, rail, key) if rail else (None, None)
    if field is None and node_var and hv.get(node_var) is not None:
        field, value = node_var, hv[node_var]
    return field, value


def _nic_type(errs, host, hv, rail):
    """(nic type, field it came from), or (None, None) after a problem."""
    field, value = _setting(hv, rail, "nic_type", "roce_nic_type")
    if field is None:
        errs.add(host, "roce_rails[%s].nic_type" % rail if rail else "roce_nic_type", None,
                 "is not set, and a NicConfigurationTemplate must name the NIC type it configures",
                 "set roce_nic_type for every rail (group_vars/roce_nodes), or nic_type per rail; " + _NIC_TYPE_FIX)
        return None, None
    text = ("%d" % value if isinstance(value, int) and not isinstance(value, bool) else "%s" % value).strip().lower()
    if not NIC_TYPE_RE.match(text):
        errs.add(host, field, value, "is not a PCI device id (4 hex digits)", _NIC_TYPE_FIX)
        return None, None
    return text, field


def _pci_address(errs, host, hv, rail, pf):
    """(PCI address, field it came from: the PF's when read from its name), or (None, None) after a problem."""
    field, value = _setting(hv, rail, "pci_address", None if rail else "roce_pf_pci_address")
    if field is None:
        derived = pci_from_ifname(pf)
        if derived is None:
            errs.add(host, "roce_rails[%s].pci_address" % rail if rail else "roce_pf_pci_address", None,
                     "is not set, and the PF name %s is no predictable name (en[P<domain>]p<bus>s<slot>[f<fn>]...) to read it from; "
                     "the templates select the rails' NICs by PCI address, and only them" % pf,
                     "set the PF's PCI address (ethtool -i %s: bus-info), e.g. %s: \"0000:0c:00.0\"%s"
                     % (pf, "roce_rail_overrides.%s.pci_address" % rail if rail else "roce_pf_pci_address",
                        " (or pci_address in roce_rails when every node has it there)" if rail else ""))
            return None, None
        return derived, ("roce_rails[%s].pf" % rail if rail else "roce_pf")
    text = ("%s" % value).strip().lower()
    if not PCI_RE.match(text):
        errs.add(host, field, value, "is not a PCI address (domain:bus:device.function)", "write it as ethtool -i <pf> shows bus-info, e.g. \"0000:0c:00.0\"")
        return None, None
    return text, field


def _source_field(hv, rail, key, node_var):
    field = _rail_var(hv, rail, key)[0] if rail else None
    return field or node_var


def _check_cfg(errs, cfg):
    namespace, prefix = cfg["sriov_networks_namespace"], cfg["sriov_networks_name_prefix"]
    if not isinstance(namespace, str) or not DNS_LABEL_RE.match(namespace) or len(namespace) > 63:
        errs.add("(cluster)", "sriov_networks_namespace", namespace, "not a valid namespace name",
                 "use the network-operator namespace, e.g. nvidia-network-operator")
    if not isinstance(prefix, str) or not DNS_LABEL_RE.match(prefix) or len(prefix) > 40:
        errs.add("(cluster)", "sriov_networks_name_prefix", prefix, "not a valid object name prefix (a DNS label, at most 40 characters)", "use e.g. roce")
    selector = cfg.get("roce_nic_config_node_selector") or {}
    if not isinstance(selector, dict) or not all(isinstance(k, str) and LABEL_KEY_RE.match(k) and isinstance(v, str) and LABEL_VALUE_RE.match(v)
                                                 for k, v in selector.items()):
        errs.add("(cluster)", "roce_nic_config_node_selector", selector, "must be a mapping of node label to label value (strings)",
                 "write e.g. {example.com/gpu-pool: pool-a} (a label only this fabric's nodes carry, quoted values), or {} for one template "
                 "set per node (kubernetes.io/hostname)")
        selector = {}
    return plain(selector)


def _entries(errs, table, inputs, hosts, cfg):
    """One entry per (node, rail) with QoS on: where it is, what its template must say, and where its settings come from."""
    out = []
    for host in hosts:
        node = table["nodes"].get(host)
        if node is None:
            continue
        hv = inputs.get(host) or {}
        node_name = hv.get("roce_node_name") or host
        via = qos_via(inputs, host, cfg)
        if via not in QOS_VIA:
            errs.add(host, "roce_qos_via", via, "is not host or operator", "set roce_qos_via: operator (the NIC Configuration Operator applies "
                     "roce_qos) or host (the host_network phase does)")
        if via != "operator":
            continue
        for r in node["rails"]:
            if r.get("qos") is None:
                continue
            rail, qos = r.get("rail"), table["qos_profiles"][r["qos"]]
            if qos["pause_frames"]:
                errs.add(host, _source_field(hv, rail, "qos", "roce_qos") + ".pause_frames", True,
                         "asks for link pause, which the NIC Configuration Operator cannot set (v26.4.1 roceOptimized sets trust, PFC and "
                         "ToS only)", "set pause_frames: false and pfc_priorities (PFC replaces link pause), or apply QoS the host way "
                         "(roce_qos_via: host)")
                continue
            (nic_type, nic_field), (pci, pci_field) = _nic_type(errs, host, hv, rail), _pci_address(errs, host, hv, rail, r["pf"])
            num_vfs = int(r["num_vfs"])
            if nic_type and pci:
                out.append({"host": host, "node_name": node_name, "rail": rail, "pf": r["pf"], "nic_type": nic_type, "nic_type_field": nic_field,
                            "pci_address": pci, "pci_field": pci_field, "num_vfs": num_vfs, "qos": r["qos"],
                            "num_vfs_field": _source_field(hv, rail, "num_vfs", "roce_num_vfs"), "num_vfs_value": num_vfs,
                            "qos_field": _source_field(hv, rail, "qos", "roce_qos"), "qos_value": qos})
    return out


def _node_problems(errs, entries):
    """Two rails of a node on one PCI address, or one NIC (domain:bus:device) given two types."""
    seen, types, ok = {}, {}, []
    for e in entries:
        other = seen.get((e["host"], e["pci_address"]))
        if other is not None:
            errs.add(e["host"], e["pci_field"], e["pci_address"],
                     "is the PCI address of rail %s too (PF %s)" % (other["rail"], other["pf"]),
                     "give each rail its own PF's address (ethtool -i <pf>: bus-info)")
            continue
        device = (e["host"], e["pci_address"][:-2])
        first = types.setdefault(device, e)
        if first["nic_type"] != e["nic_type"]:
            errs.add(e["host"], e["nic_type_field"], e["nic_type"],
                     "differs from %s of rail %s, a port of the same NIC (%s)" % (first["nic_type"], first["rail"], device[1]),
                     "give both ports of one NIC the same nic_type")
            continue
        seen[(e["host"], e["pci_address"])] = e
        ok.append(e)
    return ok


def _conflicts(errs, entries, groups, profiles):
    """Refuse every NIC that two templates would select (the operator would apply neither)."""
    index, by_device, count = {}, {}, {}
    for key, members in groups.items():
        for e in members:
            index.setdefault((key[0], e["nic_type"], e["pci_address"]), set()).add(key)
            where = (e["rail"] or e["pci_address"], key)
            count[where] = count.get(where, 0) + 1
        for e in members:
            by_device.setdefault((e["host"], e["pci_address"][:-2]), []).append(e)
    majority = {}
    for (where, key), _n in sorted(count.items(), key=lambda kv: -kv[1]):
        majority.setdefault(where, key)
    for (host, device), ports in by_device.items():
        selecting = set().union(*(index[(e["group"][0], e["nic_type"], e["pci_address"])] for e in ports))
        if len(selecting) < 2:
            continue
        first = ports[0]
        if len({e["group"] for e in ports}) > 1:
            e = next(p for p in ports if p["group"] != first["group"])
            differs = _differs(profiles, e, first)
            errs.add(host, e[differs + "_field"], e[differs + "_value"],
                     "rail %s is a port of the same NIC (%s) as rail %s, whose %s differs; the NIC Configuration Operator configures "
                     "a NIC with one template" % (e["rail"], device, first["rail"], differs),
                     "give the ports of one NIC the same qos and num_vfs, or apply QoS the host way (roce_qos_via: host)")
            continue
        addresses = {e["pci_address"] for e in ports}
        other_key = sorted(selecting - {first["group"]}, key=repr)[0]
        other = next((m for m in groups[other_key] if m["pci_address"] in addresses), groups[other_key][0])
        for e in ports:
            differs = _differs(profiles, e, other)
            field = e[differs + "_field"]
            override = field.startswith("roce_rail_overrides.")
            if majority[e["rail"] or e["pci_address"]] == e["group"] and not override:
                continue
            where = "rail %s" % e["rail"] if e["rail"] else "the PF"
            errs.add(host, field, e[differs + "_value"],
                     "%s of %s differs from host %s%s at the same PCI address (%s), and roce_nic_config_node_selector is one for every "
                     "node: both templates would select this NIC, and the NIC Configuration Operator applies neither"
                     % (differs, where, other["host"], " rail %s" % other["rail"] if other["rail"] else "", e["pci_address"]),
                     "give %s the same %s on every node%s, or set roce_nic_config_node_selector: {} (one template set per node, "
                     "kubernetes.io/hostname)" % (where, differs, " (remove %s)" % field if override else ""))


def _differs(profiles, a, b):
    return "qos" if profiles[a["qos"]] != profiles[b["qos"]] else "num_vfs"


def render_nic_config_templates(table, inputs, hosts=None, cfg=None):
    """NicConfigurationTemplates for the QoS of every (node, rail) of the fabric table that has QoS on.

    ``table``: ``_fabric.pod_network.fabric_table``; ``inputs``: host -> the variables it sets (roce_node_name, roce_nic_type,
    roce_pf_pci_address, roce_rails / roce_rail_overrides with nic_type and pci_address, roce_num_vfs); ``cfg``: the
    cluster settings (every key of NIC_CONFIG_DEFAULT_KEYS; roce_nic_config_node_selector if any). Returns
    ``{"templates": [...], "devices": [...]}``, ``devices``
    one ``{node_name, rail, pf, pci_address, nic_type, template}`` per (node, rail) configured; raises
    RenderValidationError naming host, field, value and fix for every problem of the whole inventory."""
    cfg = {k: v for k, v in (cfg or {}).items() if v is not None}
    require_keys(cfg, NIC_CONFIG_DEFAULT_KEYS, "render_nic_config_templates", "nic_config_templates")
    errs = _Errors()
    selector = _check_cfg(errs, cfg)
    hosts = list(table["nodes"]) if hosts is None else list(hosts)
    entries = _node_problems(errs, _entries(errs, table, inputs, hosts, cfg))
    errs.raise_if_any()
    shared = "%s" % sorted(selector.items()) if selector else ""
    groups = {}
    for e in entries:
        e["group"] = (shared or e["node_name"], e["nic_type"], e["num_vfs"], e["qos"])
        groups.setdefault(e["group"], []).append(e)
    profiles = table.get("qos_profiles") or []
    _conflicts(errs, entries, groups, profiles)
    errs.raise_if_any()
    templates, names = [], {}
    siblings = {}
    for key in groups:
        siblings.setdefault(key[:2], []).append(key)
    for key, members in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[1][0]["rail"] or "", kv[0][2], kv[0][3])):
        parts = [cfg["sriov_networks_name_prefix"], "" if shared else slug(key[0]).replace(".", "-"), key[1]]
        if len(siblings[key[:2]]) > 1:
            first = members[0]["rail"]
            clash = first is None or sum(1 for k in siblings[key[:2]] if groups[k][0]["rail"] == first) > 1
            parts.append(hashlib.sha1(repr(sorted((m["node_name"], m["rail"] or "") for m in members)).encode()).hexdigest()[:8]
                         if clash else first)
        name = _dns_name(parts)
        if name in names.values():  # node names that slug alike (a.b, a-b): the group's own digest keeps them apart
            name = _dns_name(parts + [hashlib.sha1(repr(key).encode()).hexdigest()[:8]])
        names[key] = name
        node_selector = dict(selector) if shared else {HOSTNAME_LABEL: key[0]}
        templates.append({
            "apiVersion": NIC_CONFIG_API_VERSION,
            "kind": NIC_CONFIG_KIND,
            "metadata": {"name": name, "namespace": cfg["sriov_networks_namespace"], "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}},
            "spec": {
                "nodeSelector": node_selector,
                "nicSelector": {"nicType": key[1], "pciAddresses": sorted({m["pci_address"] for m in members})},
                "template": template_spec(key[1], key[2], profiles[key[3]]),
            },
        })
    devices = [{"node_name": e["node_name"], "rail": e["rail"], "pf": e["pf"], "pci_address": e["pci_address"], "nic_type": e["nic_type"],
                "template": names[e["group"]]} for e in entries]
    return {"templates": templates, "devices": devices}


# What the sriov_networks role reads of each node for the templates (filter gpufabric.roce._nic_config_templates).
NIC_CONFIG_PER_HOST_KEYS = ("roce_node_name", "roce_qos_via", "roce_nic_type", "roce_pf_pci_address", "roce_rails", "roce_rail_overrides",
                            "roce_num_vfs")
CONFIG_CONDITION = "ConfigUpdateInProgress"
# The ConfigUpdateInProgress reason of a spec the daemon refuses (configvalidation.go, v26.4.1): it does not clear by itself.
CONFIG_FAILED_REASONS = ("IncorrectSpec",)


def _condition(obj, kind):
    return next((c for c in ((obj.get("status") or {}).get("conditions") or []) if c.get("type") == kind), None)


def nic_config_progress(templates, nic_devices, devices):
    """One poll of the wait for the NicConfigurationTemplates (gpufabric.roce.rollout_wait check=nic_config).

    ``templates`` and ``nic_devices``: the live NicConfigurationTemplates and NicDevices of the namespace; ``devices``:
    the ``devices`` of :func:`render_nic_config_templates`. A rail's NIC is matched when a NicDevice of its node has a
    port at the rail's PCI address and the rail's template lists that device in ``status.nicDevices`` (the operator
    copied the template into the device's spec). Matched by node and PCI address, not by the device's name. Returns
    ``(matched, pending, failed, states)``: the count of matched NICs, what is still missing (one line each), the devices
    whose spec the daemon refuses (ConfigUpdateInProgress IncorrectSpec: it does not clear by itself), and
    ``{reason: count}`` of the matched devices' ConfigUpdateInProgress reasons (UpdateSuccessful, PendingReboot, ...)."""
    listed = {(t.get("metadata") or {}).get("name"): set((t.get("status") or {}).get("nicDevices") or []) for t in templates or []}
    by_port = {}
    for dev in nic_devices or []:
        status = dev.get("status") or {}
        for port in status.get("ports") or []:
            by_port[(status.get("node"), (port.get("pci") or "").lower())] = dev
    matched, pending, failed, states = 0, [], [], {}
    seen = set()
    for d in devices or []:
        where = "%s %s (%s)" % (d["node_name"], "rail %s" % d["rail"] if d.get("rail") else "PF", d["pci_address"])
        dev = by_port.get((d["node_name"], d["pci_address"]))
        if dev is None:
            pending.append("%s: no NicDevice has this port yet (the NIC Configuration daemon of the node reports one per NVIDIA NIC)" % where)
            continue
        name = dev["metadata"]["name"]
        if d["template"] not in listed:
            pending.append("%s: NicConfigurationTemplate %s is not in the cluster" % (where, d["template"]))
            continue
        if name not in listed[d["template"]]:
            pending.append("%s: NicConfigurationTemplate %s does not list NicDevice %s yet (a device two templates select is listed by neither)"
                           % (where, d["template"], name))
            continue
        matched += 1
        if name in seen:  # both ports of one NIC: one device
            continue
        seen.add(name)
        cond = _condition(dev, CONFIG_CONDITION) or {}
        reason = cond.get("reason") or "unknown"
        states[reason] = states.get(reason, 0) + 1
        if reason in CONFIG_FAILED_REASONS:
            failed.append("%s: NicDevice %s: %s: %s" % (where, name, reason, cond.get("message") or "no message"))
    return matched, pending, failed, states

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The "fake hardware" file: which nodes exist and which SR-IOV PFs each one has.

A JSON or YAML mapping, node name -> description (see lab/k8s/README.md):

    node1:
      labels: {example.com/rack: r1}          # optional, added to the Node
      capacity: {cpu: "64", memory: 512Gi}    # optional, overrides DEFAULT_CAPACITY
      interfaces:                             # optional, the PFs the config daemon reports
        - {name: enp157s0np0, pciAddress: "0000:9d:00.0", vendor: "15b3", deviceID: "101d",
           driver: mlx5_core, totalvfs: 16, mtu: 9000, linkType: ETH, numVfs: 0}

Everything is checked before anything is written to the cluster; an error names the file, the node,
the field, the value and what to write instead.
"""

import json
import re
from pathlib import Path

import yaml

DEFAULT_CAPACITY = {"cpu": "32", "memory": "256Gi", "pods": "110", "ephemeral-storage": "500Gi"}

INTERFACE_DEFAULTS = {
    "vendor": "15b3",
    "deviceID": "101d",
    "driver": "mlx5_core",
    "totalvfs": 16,
    "mtu": 1500,
    "linkType": "ETH",
    "numVfs": 0,
}
INTERFACE_KEYS = {"name", "pciAddress"} | set(INTERFACE_DEFAULTS)
NODE_KEYS = {"labels", "capacity", "interfaces"}

# PF device ID -> VF device ID of the NVIDIA entries in the supported-nic-ids ConfigMap of the
# sriov-network-operator subchart in network-operator 26.4.1 (templates/configmap.yaml).
VF_DEVICE_IDS = {"1013": "1014", "1015": "1016", "1017": "1018", "1019": "101a", "101b": "101c", "101d": "101e",
                 "101f": "101e", "1021": "101e", "1023": "101e", "1025": "101e", "a2d6": "101e", "a2dc": "101e"}

_PCI = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-1][0-9a-f]\.[0-7]$")
_HEX4 = re.compile(r"^[0-9a-f]{4}$")
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LINK_TYPES = ("ETH", "IB")


class HardwareError(ValueError):
    """The hardware file (or a --node argument) cannot describe a node."""


def _fail(source, node, field, value, fix):
    where = "node %r" % node if node is not None else "top level"
    raise HardwareError("%s: %s, %s: %r is invalid; %s" % (source, where, field, value, fix))


def _check_interface(source, node, idx, iface):
    field = "interfaces[%d]" % idx
    if not isinstance(iface, dict):
        _fail(source, node, field, iface, "write a mapping with at least name and pciAddress")
    unknown = sorted(set(iface) - INTERFACE_KEYS)
    if unknown:
        _fail(source, node, "%s.%s" % (field, unknown[0]), iface[unknown[0]],
              "known keys are %s" % ", ".join(sorted(INTERFACE_KEYS)))
    out = dict(INTERFACE_DEFAULTS)
    out.update(iface)
    if not isinstance(out.get("name"), str) or not out.get("name"):
        _fail(source, node, field + ".name", out.get("name"), "give the PF netdev name, e.g. enp157s0np0")
    pci = str(out.get("pciAddress", "")).lower()
    if not _PCI.match(pci):
        _fail(source, node, field + ".pciAddress", out.get("pciAddress"), "write domain:bus:device.function, e.g. 0000:9d:00.0")
    out["pciAddress"] = pci
    for key in ("vendor", "deviceID"):
        out[key] = str(out[key]).lower()
        if not _HEX4.match(out[key]):
            _fail(source, node, "%s.%s" % (field, key), iface.get(key), "write 4 hex digits, quoted, e.g. \"15b3\"")
    for key, low in (("totalvfs", 0), ("mtu", 68), ("numVfs", 0)):
        if isinstance(out[key], bool) or not isinstance(out[key], int) or out[key] < low:
            _fail(source, node, "%s.%s" % (field, key), out[key], "write an integer >= %d" % low)
    if out["numVfs"] > out["totalvfs"]:
        _fail(source, node, field + ".numVfs", out["numVfs"], "at most totalvfs (%d)" % out["totalvfs"])
    if str(out["linkType"]).upper() not in _LINK_TYPES:
        _fail(source, node, field + ".linkType", out["linkType"], "write ETH or IB")
    out["linkType"] = str(out["linkType"]).upper()
    return out


def _check_strmap(source, node, field, value, fix):
    if value is None:
        return {}
    if not isinstance(value, dict):
        _fail(source, node, field, value, fix)
    out = {}
    for key, val in value.items():
        if not isinstance(key, str) or isinstance(val, (dict, list)) or val is None or isinstance(val, bool):
            _fail(source, node, "%s.%s" % (field, key), val, fix)
        out[key] = str(val)
    return out


def check_node(source, name, spec):
    """Validate one node's description; returns it with defaults filled in."""
    if not isinstance(name, str) or len(name) > 253 or not _DNS1123.match(name):
        _fail(source, None, "node name", name, "use a lowercase DNS-1123 name such as node1 (it becomes the Node's name)")
    spec = {} if spec is None else spec
    if not isinstance(spec, dict):
        _fail(source, name, "description", spec, "write a mapping with labels, capacity and interfaces (all optional)")
    unknown = sorted(set(spec) - NODE_KEYS)
    if unknown:
        _fail(source, name, unknown[0], spec[unknown[0]], "known keys are %s" % ", ".join(sorted(NODE_KEYS)))
    labels = _check_strmap(source, name, "labels", spec.get("labels"), "labels are a mapping of string keys to string values (quote \"true\")")
    capacity = dict(DEFAULT_CAPACITY)
    capacity.update(_check_strmap(source, name, "capacity", spec.get("capacity"), "capacity is a mapping such as {cpu: \"64\", memory: 512Gi}"))
    raw = spec.get("interfaces") or []
    if not isinstance(raw, list):
        _fail(source, name, "interfaces", raw, "write a list of PFs")
    interfaces = [_check_interface(source, name, i, iface) for i, iface in enumerate(raw)]
    seen = {}
    for iface in interfaces:
        for key in ("name", "pciAddress"):
            if (key, iface[key]) in seen:
                _fail(source, name, "interfaces[].%s" % key, iface[key], "each PF needs its own %s" % key)
            seen[(key, iface[key])] = True
    return {"labels": labels, "capacity": capacity, "interfaces": interfaces}


def load(path=None, node_names=(), extra_labels=None):
    """Nodes from a hardware file and/or plain names: {name: {labels, capacity, interfaces}}."""
    nodes = {}
    if path:
        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as err:
            raise HardwareError("%s: cannot read the hardware file (%s); pass an existing JSON or YAML file" % (source, err)) from err
        try:
            data = json.loads(text) if source.endswith(".json") else yaml.safe_load(text)
        except ValueError as err:
            raise HardwareError("%s: not valid JSON/YAML (%s)" % (source, err)) from err
        if not isinstance(data, dict) or not data:
            _fail(source, None, "document", type(data).__name__, "write a mapping of node name -> {labels, capacity, interfaces}")
        for name, spec in data.items():
            nodes[name] = check_node(source, name, spec)
    for name in node_names:
        if name not in nodes:
            nodes[name] = check_node("--node", name, {})
    if not nodes:
        raise HardwareError("no nodes: pass --hardware <file> or --node <name> (repeatable)")
    extra = _check_strmap("--label", None, "labels", extra_labels or {}, "write --label key=value")
    for spec in nodes.values():
        merged = dict(extra)
        merged.update(spec["labels"])
        spec["labels"] = merged
    return nodes


def pci_class(iface):
    """PCI class code NFD reports for the PF: Ethernet controller or InfiniBand controller."""
    return "0207" if iface["linkType"] == "IB" else "0200"


def vf_device_id(iface):
    return VF_DEVICE_IDS.get(iface["deviceID"], iface["deviceID"])


def vf_pci_address(iface, vf_id):
    """PCI address of VF `vf_id`: ConnectX PFs put VF 0 two functions after the PF, stride 1."""
    domain, bus, devfn = iface["pciAddress"].split(":")
    dev, fn = devfn.split(".")
    routing = int(bus, 16) * 256 + int(dev, 16) * 8 + int(fn) + 2 + vf_id
    bus_n, rest = divmod(routing, 256)
    return "%s:%02x:%02x.%d" % (domain, bus_n, rest >> 3, rest & 7)

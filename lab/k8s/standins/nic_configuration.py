# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nic-configuration stand-in: plays NVIDIA's NIC Configuration Operator and its configuration daemon.

Upstream (Mellanox/nic-configuration-operator, tag network-operator-v26.4.1, the component network-operator 26.4.1
deploys with the NicClusterPolicy's ``nicConfigurationOperator``):
- daemon, device discovery (internal/controller/devicediscovery_controller.go): one NicDevice per physical NVIDIA NIC
  (vendor 15b3, its ports grouped by PCI domain:bus:device), in the operator namespace, named
  ``<node>-<type>-<domain>-<bus>-<device>`` (getCRName), owned by the Node; status node, type, serialNumber, partNumber,
  psid, firmwareVersion, modelName, dpu, superNIC, ports[] {pci, networkInterface, rdmaInterface}, and the initial
  conditions (setInitialsConditionsForDevice, setFwConfigConditionsForDevice without an OFED version);
- operator (internal/controller/nicconfigurationtemplate_controller.go, template_matcher.go): a device matches a
  template when the node has every nodeSelector label, status.type == nicSelector.nicType, and (when listed) one of its
  ports' PCI addresses, its serial number, its part number is in the selector. One match: the template's spec.template
  (and resetToDefault) is copied into spec.configuration and the device is listed in the template's status.nicDevices;
  none: spec.configuration is cleared; several: cleared, dropped from every template's status, and a Warning event
  ``SpecError`` "Several templates matching this device: <a>,<b>" on the device;
- daemon, configuration (internal/controller/nicdevice_controller.go, pkg/configuration/configvalidation.go, pkg/consts):
  condition ConfigUpdateInProgress: no spec -> False/DeviceConfigSpecEmpty; roceOptimized with Infiniband, gpuDirect
  without pciPerformance -> False/IncorrectSpec with upstream's message; nvconfig to change -> True/UpdateStarted, then
  True/PendingReboot, the reboot (maintenance operator) applies it; then the runtime settings (trust, PFC, ToS) ->
  annotation ``lastAppliedState`` (the spec as JSON) and False/UpdateSuccessful. A spec that differs from
  lastAppliedState needs a reboot again. The node label ``network.nvidia.com/operator.nic-configuration.wait`` is
  ``true`` while a device of the node is being configured and ``false`` once none is (maintenancemanager.go).
Nothing happens before the NicClusterPolicy ``nic-cluster-policy`` has ``nicConfigurationOperator`` (the operator is
not deployed), and only on nodes labelled ``network.nvidia.com/operator.mofed.wait=false`` (the daemon's nodeSelector).
**Does not**: touch hardware (the nvconfig is remembered in memory, empty at start: a restart reconfigures), reboot
nodes, create NodeMaintenance objects, update firmware (NicFirmwareTemplate/Source), rename interfaces
(NicInterfaceNameTemplate), handle NicDevices of nodes that left, or model firmware that refuses a parameter.
"""

import copy
import json
import logging
import time
from pathlib import Path

from . import _delays, _kube

LOG = logging.getLogger("standins.nic_configuration")
GROUP, VERSION = "configuration.net.nvidia.com", "v1alpha1"
NCP = _kube.path("mellanox.com", "v1alpha1", "nicclusterpolicies", name="nic-cluster-policy")
MOFED_WAIT_LABEL = "network.nvidia.com/operator.mofed.wait"
WAIT_LABEL = "network.nvidia.com/operator.nic-configuration.wait"
LAST_APPLIED = "lastAppliedState"
CONFIG_COND, FW_COND, FW_MATCH_COND = "ConfigUpdateInProgress", "FirmwareUpdateInProgress", "FirmwareConfigMatch"
ROCE_NVCONFIG = {"ROCE_CC_PRIO_MASK": "255", "CNP_DSCP": "4", "CNP_802P_PRIO": "6"}
PART_NUMBERS = {"101b": "mcx653106a-hdat", "101d": "mcx623106an-cdat", "101f": "mcx631102an-adat", "1021": "mcx75310aas-neat",
                "1023": "900-9x81q-00cn-st0", "a2dc": "900-9d3b6-00cv-aa0"}


def device_name(node, dev_type, pci_device):
    """getCRName: node, type and the PCI device address with ':' and '.' as '-', lower case."""
    return ("%s-%s-%s" % (node, dev_type, pci_device.replace(":", "-").replace(".", "-"))).lower()


def discovered(node, interfaces):
    """{name: status} of the node's NVIDIA NICs as device discovery reports them (conditions excluded)."""
    devices, functions = {}, 0
    for iface in sorted(interfaces, key=lambda i: i["pciAddress"]):
        if iface.get("vendor", "15b3") != "15b3":
            continue
        key = iface["pciAddress"].rsplit(".", 1)[0]
        dev_type = iface.get("deviceID", "101d")
        serial = "mt%s%s" % (dev_type, key.replace(":", "")[-6:])
        status = devices.setdefault(device_name(node, dev_type, key), {
            "node": node, "type": dev_type, "serialNumber": serial, "partNumber": PART_NUMBERS.get(dev_type, "mcx000000a-xxxx"),
            "psid": "mt_0000000%s" % dev_type, "firmwareVersion": "28.44.1036", "modelName": "", "dpu": False, "superNIC": False,
            "ports": []})
        status["ports"].append({"pci": iface["pciAddress"], "networkInterface": iface["name"], "rdmaInterface": "mlx5_%d" % functions})
        functions += 1
    return devices


def initial_conditions(now):
    """setInitialsConditionsForDevice + setFwConfigConditionsForDevice with no OFED version on the node."""
    return [
        _cond(CONFIG_COND, "False", "DeviceConfigSpecEmpty", "Device configuration spec is empty, cannot update configuration", now),
        _cond(FW_COND, "False", "DeviceFirmwareSpecEmpty", "Device firmware spec is empty, cannot update firmware", now),
        _cond(FW_MATCH_COND, "Unknown", "DeviceFirmwareConfigMatch", "Can't get OFED version to check recommended firmware version", now),
    ]


def _cond(kind, status, reason, message, now, *, generation=None):
    out = {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}
    if generation is not None:
        out["observedGeneration"] = generation
    return out


def set_condition(conditions, cond):
    """meta.SetStatusCondition: replace by type, keep lastTransitionTime unless the status changes. True when changed."""
    for i, old in enumerate(conditions):
        if old["type"] == cond["type"]:
            if old["status"] == cond["status"]:
                cond = dict(cond, lastTransitionTime=old["lastTransitionTime"])
            if old == cond:
                return False
            conditions[i] = cond
            return True
    conditions.append(cond)
    return True


def matches(device, node_labels, template):
    """deviceMatchesConfigurationTemplateSelectors."""
    spec, status = template.get("spec") or {}, device.get("status") or {}
    if any(node_labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    sel = spec.get("nicSelector") or {}
    if sel.get("nicType") != status.get("type"):
        return False
    if sel.get("pciAddresses") and not any(p.get("pci") in sel["pciAddresses"] for p in status.get("ports") or []):
        return False
    if sel.get("serialNumbers") and status.get("serialNumber") not in sel["serialNumbers"]:
        return False
    return not (sel.get("partNumbers") and status.get("partNumber") not in sel["partNumbers"])


def match_templates(templates, devices, labels_of):
    """matchDevicesToTemplates: ({device: configuration or None}, {template: nicDevices}, [(device, event message)])."""
    status = {t["metadata"]["name"]: list((t.get("status") or {}).get("nicDevices") or []) for t in templates}
    configs, events = {}, []
    for dev in sorted(devices, key=lambda d: d["metadata"]["name"]):
        name = dev["metadata"]["name"]
        labels = labels_of(dev["status"].get("node"))
        if labels is None:
            continue  # "device doesn't match any node, skipping"
        found = [t for t in templates if matches(dev, labels, t)]
        for t in templates:
            if (t not in found[:1] or len(found) > 1) and name in status[t["metadata"]["name"]]:
                status[t["metadata"]["name"]].remove(name)
        if len(found) == 1:
            spec = found[0]["spec"]
            config = {"template": copy.deepcopy(spec["template"])}
            if spec.get("resetToDefault"):
                config["resetToDefault"] = True
            configs[name] = config
            if name not in status[found[0]["metadata"]["name"]]:
                status[found[0]["metadata"]["name"]].append(name)
        else:
            configs[name] = None
            if found:
                events.append((name, "Several templates matching this device: %s" % ",".join(t["metadata"]["name"] for t in found)))
    return configs, status, events


def nvconfig(template, port_count):
    """ConstructNvParamMapFromTemplate for a device whose link type can be changed (default values left out)."""
    out = {"SRIOV_EN": "1" if template.get("numVfs", 0) > 0 else "0", "NUM_OF_VFS": str(max(template.get("numVfs", 0), 0))}
    for port in range(1, port_count + 1):
        out["LINK_TYPE_P%d" % port] = "1" if template.get("linkType") == "Infiniband" else "2"
        if (template.get("roceOptimized") or {}).get("enabled"):
            out.update({"%s_P%d" % (k, port): v for k, v in ROCE_NVCONFIG.items()})
    if (template.get("gpuDirectOptimized") or {}).get("enabled"):
        out["ATS_ENABLED"] = "0"
    for raw in template.get("rawNvConfig") or []:
        suffix = raw["name"].rsplit("_P", 1)
        if len(suffix) == 2 and suffix[1].isdigit() and int(suffix[1]) > port_count:
            continue
        out[raw["name"]] = raw["value"]
    return out


def spec_problem(template):
    """The IncorrectSpec errors of ConstructNvParamMapFromTemplate, or None."""
    if (template.get("roceOptimized") or {}).get("enabled") and template.get("linkType") == "Infiniband":
        return "RoceOptimized settings can only be used with link type Ethernet"
    gpu = template.get("gpuDirectOptimized") or {}
    if gpu.get("enabled") and gpu.get("env") != "Baremetal":
        return "GpuDirectOptimized supports only Baremetal env"
    if gpu.get("enabled") and not (template.get("pciPerformanceOptimized") or {}).get("enabled"):
        return "GpuDirectOptimized should only be enabled together with PciPerformanceOptimized"
    return None


class NicConfigurationStandin:
    """NicDevices of the nodes' NVIDIA NICs, templates matched to them, and their configuration reported as applied."""

    name = "nic-configuration"

    def __init__(self, kube, nodes, namespace, apply_delay=2.0, state_dir=None):
        self.kube, self.nodes, self.namespace, self.apply_delay = kube, nodes, namespace, apply_delay
        # A test that must see the reboot pending (the role's wait does not wait for it) widens it for one step, as the
        # SR-IOV stand-in's sync delay is widened: the number of seconds in this file, while it exists.
        self.reboot_delay_file = Path(state_dir) / "standins-reboot-delay" if state_dir else None
        self.firmware = {}  # device -> nvconfig in force (what a reboot applied)
        self.progress = {}  # device -> (spec json, phase, since)
        self.events = set()  # (device, message) already reported

    def _path(self, resource, name=None, sub=None):
        return _kube.path(GROUP, VERSION, resource, namespace=self.namespace, name=name, sub=sub)

    def _reboot_delay(self):
        return _delays.seconds(self.reboot_delay_file, self.apply_delay)

    def tick(self, t):
        ncp = self.kube.get_or_none(NCP)
        if ncp is None or not (ncp.get("spec") or {}).get("nicConfigurationOperator"):
            return {"waiting_for": "NicClusterPolicy nic-cluster-policy with nicConfigurationOperator"}
        if self.kube.get_or_none(_kube.path("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                                            name="nicdevices.configuration.net.nvidia.com")) is None:
            return {"waiting_for": "the NicDevice CRD"}
        now = _kube_time(t)
        node_objs = {n: self.kube.get_or_none(_kube.path("", "v1", "nodes", name=n)) for n in self.nodes}
        labels = {n: (o["metadata"].get("labels") or {}) for n, o in node_objs.items() if o is not None}
        daemon_nodes = [n for n in self.nodes if labels.get(n, {}).get(MOFED_WAIT_LABEL) == "false"]
        existing = {d["metadata"]["name"]: d for d in self.kube.items(self._path("nicdevices"))}
        for node in daemon_nodes:
            for name, status in discovered(node, self.nodes[node]["interfaces"]).items():
                if name not in existing:
                    existing[name] = self._create_device(name, status, node_objs[node], now)
        templates = self.kube.items(self._path("nicconfigurationtemplates"))
        configs, template_status, events = match_templates(templates, list(existing.values()), labels.get)
        for name, config in configs.items():
            dev = existing[name]
            if (dev.get("spec") or {}).get("configuration") != config:
                dev = self.kube.patch(self._path("nicdevices", name=name), {"spec": {"configuration": config}})
                existing[name] = dev
        for name, message in events:
            self._event(existing[name], message, now)
        for tpl in templates:
            wanted = template_status[tpl["metadata"]["name"]]
            if (tpl.get("status") or {}).get("nicDevices") != wanted:
                self.kube.patch(self._path("nicconfigurationtemplates", name=tpl["metadata"]["name"], sub="status"), {"status": {"nicDevices": wanted}})
        busy = {}
        for _name, dev in sorted(existing.items()):
            node = dev["status"].get("node")
            if node in daemon_nodes:
                busy[node] = self._configure(dev, t, now) or busy.get(node, False)
        for node in daemon_nodes:
            want = "true" if busy.get(node) else "false"
            if labels[node].get(WAIT_LABEL) != want:
                self.kube.patch(_kube.path("", "v1", "nodes", name=node), {"metadata": {"labels": {WAIT_LABEL: want}}}, strategic=True)
        return {"devices": len(existing), "templates": {k: len(v) for k, v in template_status.items()},
                "configured": sorted(n for n, d in existing.items() if _reason(d) == "UpdateSuccessful")}

    def _create_device(self, name, status, node_obj, now):
        body = {"apiVersion": "%s/%s" % (GROUP, VERSION), "kind": "NicDevice",
                "metadata": {"name": name, "namespace": self.namespace, "ownerReferences": [{
                    "apiVersion": "v1", "kind": "Node", "name": node_obj["metadata"]["name"], "uid": node_obj["metadata"]["uid"]}]}}
        try:
            dev = self.kube.create(self._path("nicdevices"), body)
        except _kube.KubeError as err:
            if err.status != 409:
                raise
            dev = self.kube.get(self._path("nicdevices", name=name))
        dev = self.kube.patch(self._path("nicdevices", name=name, sub="status"), {"status": dict(status, conditions=initial_conditions(now))})
        LOG.info("NicDevice %s (%s on %s)", name, status["type"], status["node"])
        return dev

    def _event(self, dev, message, now):
        meta = dev["metadata"]
        body = {"metadata": {"generateName": meta["name"] + ".", "namespace": self.namespace},
                "involvedObject": {"apiVersion": "%s/%s" % (GROUP, VERSION), "kind": "NicDevice", "name": meta["name"],
                                   "namespace": self.namespace, "uid": meta["uid"]},
                "type": "Warning", "reason": "SpecError", "message": message, "firstTimestamp": now, "lastTimestamp": now, "count": 1,
                "source": {"component": "NicConfigurationTemplateReconciler"}}
        if (meta["name"], message) not in self.events:
            self.kube.create(_kube.path("", "v1", "events", namespace=self.namespace), body)
            self.events.add((meta["name"], message))

    def _set(self, dev, status, reason, message, now):
        conditions = list(dev["status"].get("conditions") or [])
        if set_condition(conditions, _cond(CONFIG_COND, status, reason, message, now, generation=dev["metadata"].get("generation"))):
            dev["status"] = self.kube.patch(self._path("nicdevices", name=dev["metadata"]["name"], sub="status"),
                                            {"status": {"conditions": conditions}})["status"]

    def _configure(self, dev, t, now):
        """The daemon's reconcile of one device; True while its configuration is in progress."""
        name, config = dev["metadata"]["name"], (dev.get("spec") or {}).get("configuration")
        if not config:
            self.progress.pop(name, None)
            if _reason(dev) != "DeviceConfigSpecEmpty":
                self._set(dev, "False", "DeviceConfigSpecEmpty", "", now)
            return False
        template = config.get("template") or {}
        problem = spec_problem(template)
        if problem:
            self._set(dev, "False", "IncorrectSpec", problem, now)
            return False
        spec_json = json.dumps(dev["spec"], sort_keys=True, separators=(",", ":"))
        applied = (dev["metadata"].get("annotations") or {}).get(LAST_APPLIED)
        if applied == spec_json:
            if _reason(dev) != "UpdateSuccessful":  # the spec came back unchanged: runtime settings re-applied, no reboot
                self._set(dev, "False", "UpdateSuccessful", "", now)
            return False
        wanted = nvconfig(template, len(dev["status"]["ports"]))
        spec_key, phase, since = self.progress.get(name, (None, None, t))
        if spec_key != spec_json:
            # applyRuntimeConfig: a spec other than the last applied one needs a reboot, whatever it changes
            phase, since = ("UpdateStarted" if self.firmware.get(name) != wanted else "PendingReboot" if applied else "Runtime"), t
            if phase == "PendingReboot":
                self.progress[name] = (spec_json, phase, since)
                self._set(dev, "True", "PendingReboot", "", now)
                return True
            self.progress[name] = (spec_json, phase, since)
            if phase == "UpdateStarted":
                self._set(dev, "True", "UpdateStarted", "", now)
                return True
        if phase == "UpdateStarted" and t - since >= self.apply_delay:
            self.progress[name] = (spec_json, "PendingReboot", t)
            self._set(dev, "True", "PendingReboot", "", now)
        elif phase == "PendingReboot" and t - since >= self._reboot_delay():
            self.firmware[name] = wanted  # the node rebooted: the nvconfig is in force
            self.progress[name] = (spec_json, "Runtime", t)
        elif phase == "Runtime":
            self.kube.patch(self._path("nicdevices", name=name), {"metadata": {"annotations": {LAST_APPLIED: spec_json}}})
            self._set(dev, "False", "UpdateSuccessful", "", now)
            self.progress.pop(name, None)
            LOG.info("NicDevice %s: configuration applied", name)
            return False
        return True


def _reason(dev):
    for cond in (dev.get("status") or {}).get("conditions") or []:
        if cond["type"] == CONFIG_COND:
            return cond["reason"]
    return None


def _kube_time(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))

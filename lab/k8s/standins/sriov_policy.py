# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure functions of the SR-IOV stand-in: policies -> node state spec -> applied status -> resources.

Each follows the upstream function named in its docstring (k8snetworkplumbingwg/sriov-network-operator,
v1.6.0 / network-operator-26.4.x). Dicts are shaped as Go's encoding/json writes the upstream types:
fields tagged `omitempty` are left out when zero (so `numVfs: 0` is absent, not 0).
"""

from . import hardware

DEFAULT_POLICY_NAME = "default"  # upstream ignores the deprecated policy of that name
DEFAULT_DAEMON_SELECTOR = {"node-role.kubernetes.io/worker": "", "kubernetes.io/os": "linux"}
INVALID_VF_INDEX = -1


def _omitempty(d):
    return {k: v for k, v in d.items() if v not in (None, "", 0, False, [], {})}


def labels_match(selector, labels):
    """SriovNetworkNodePolicy.Selected / client.MatchingLabels: every key present with that value."""
    return all(k in labels and labels[k] == v for k, v in (selector or {}).items())


def daemon_nodes(operator_config, nodes):
    """Nodes the policy reconciler syncs (sriovnetworknodepolicy_controller.go Reconcile)."""
    selector = (operator_config.get("spec") or {}).get("configDaemonNodeSelector") or DEFAULT_DAEMON_SELECTOR
    return [n for n in nodes if labels_match(selector, n["metadata"].get("labels") or {})]


def parse_vf_range(selector):
    """ParseVfRange: "pf#2-5" -> ("pf", 2, 5); "pf" -> ("pf", -1, -1)."""
    if "#" not in selector:
        return selector, INVALID_VF_INDEX, INVALID_VF_INDEX
    name, rng = selector.split("#", 1)
    start, end = rng.split("-", 1)
    return name, int(start), int(end)


def nic_selector_empty(sel):
    return not (sel.get("vendor") or sel.get("deviceID") or sel.get("rootDevices") or sel.get("pfNames") or sel.get("netFilter"))


def nic_selected(sel, iface):
    """SriovNetworkNicSelector.Selected against a status interface."""
    if sel.get("vendor") and sel["vendor"] != iface.get("vendor"):
        return False
    if sel.get("deviceID") and sel["deviceID"] != iface.get("deviceID"):
        return False
    if sel.get("rootDevices") and iface.get("pciAddress") not in sel["rootDevices"]:
        return False
    if sel.get("pfNames") and iface.get("name") not in [p.split("#", 1)[0] for p in sel["pfNames"]]:
        return False
    # netFilter (OpenStack network IDs) is never matched: fake nodes carry no netFilter.
    return not sel.get("netFilter")


def _vf_group(policy, iface):
    """generatePfNameVfGroup."""
    spec = policy["spec"]
    start = end = INVALID_VF_INDEX
    found = False
    for selector in spec["nicSelector"].get("pfNames") or []:
        name, start, end = parse_vf_range(selector)
        if name == iface["name"]:
            found = True
            break
    if not found or (start == INVALID_VF_INDEX and end == INVALID_VF_INDEX):
        start, end = 0, spec["numVfs"] - 1
    return _omitempty({
        "resourceName": spec.get("resourceName"), "deviceType": spec.get("deviceType"), "vfRange": "%d-%d" % (start, end),
        "policyName": policy["metadata"]["name"], "mtu": spec.get("mtu"), "isRdma": spec.get("isRdma"), "vdpaType": spec.get("vdpaType"),
    })


def _range(vf_range):
    start, end = vf_range.split("-", 1)
    return int(start), int(end)


def _overlaps(a, b):
    """VfGroup.isVFRangeOverlapping."""
    (s1, e1), (s2, e2) = _range(a["vfRange"]), _range(b["vfRange"])
    if s1 < s2:
        return s1 <= s2 <= e1 or s1 <= e2 <= e1
    return s2 <= s1 <= e2 or s2 <= e1 <= e2


def _merge(existing, new, equal_priority):
    """Interface.mergeConfigs: keep the other policies' non-overlapping VF groups."""
    merged = False
    for group in existing.get("vfGroups") or []:
        if group.get("resourceName") == new["vfGroups"][0].get("resourceName") or _overlaps(group, new["vfGroups"][0]):
            continue
        merged = True
        new["vfGroups"].append(group)
    if not equal_priority and not merged:
        return
    for key in ("mtu", "numVfs"):
        if (new.get(key) or 0) < (existing.get(key) or 0):
            new[key] = existing[key]


def _apply(policy, interfaces, status_interfaces, equal_priority):
    """SriovNetworkNodePolicy.Apply."""
    spec = policy["spec"]
    if nic_selector_empty(spec.get("nicSelector") or {}):
        return
    for iface in status_interfaces:
        if not nic_selected(spec["nicSelector"], iface):
            continue
        result = {"pciAddress": iface["pciAddress"], "numVfs": spec.get("numVfs"), "mtu": spec.get("mtu"), "name": iface.get("name"),
                  "linkType": spec.get("linkType"), "eSwitchMode": spec.get("eSwitchMode"), "externallyManaged": spec.get("externallyManaged")}
        if not spec.get("numVfs"):
            continue
        result["vfGroups"] = [_vf_group(policy, iface)]
        for i, current in enumerate(interfaces):
            if current["pciAddress"] == result["pciAddress"]:
                _merge(current, result, equal_priority)
                interfaces[i] = _omitempty(result)
                break
        else:
            interfaces.append(_omitempty(result))


def render_spec(policies, node_labels, status_interfaces):
    """syncSriovNetworkNodeState: the spec the operator writes for one node (sorted ByPriority)."""
    ordered = sorted(policies, key=lambda p: (-(p["spec"].get("priority") or 0), p["metadata"]["name"]))
    interfaces = []
    previous_priority = 100
    for policy in ordered:
        if policy["metadata"]["name"] == DEFAULT_POLICY_NAME or not labels_match(policy["spec"].get("nodeSelector"), node_labels):
            continue
        priority = policy["spec"].get("priority") or 0
        _apply(policy, interfaces, status_interfaces, previous_priority == priority)
        previous_priority = priority
    return {"interfaces": interfaces} if interfaces else {}


# ---- config daemon ---------------------------------------------------------------------------
class SyncError(Exception):
    """What the config daemon would put in lastSyncError."""


def apply_spec(hw_interfaces, spec):
    """The PF configuration after the daemon applies `spec` (sriov.go configSriovDevice/checkExternallyManagedPF).

    Returns {pciAddress: {numVfs, mtu, linkType, externallyManaged, vfGroups}}; raises SyncError as
    the daemon fails. PFs absent from the spec go back to the host's own VFs (hardware numVfs).
    """
    by_pci = {i["pciAddress"]: i for i in (spec or {}).get("interfaces") or []}
    applied = {}
    for hw in hw_interfaces:
        want = by_pci.get(hw["pciAddress"])
        state = {"numVfs": hw["numVfs"], "mtu": hw["mtu"], "linkType": hw["linkType"], "externallyManaged": False, "vfGroups": []}
        if want:
            num = want.get("numVfs") or 0
            if num > hw["totalvfs"]:
                raise SyncError("cannot config SRIOV device: NumVfs (%d) is larger than TotalVfs (%d)" % (num, hw["totalvfs"]))
            if want.get("externallyManaged"):
                if num > hw["numVfs"]:
                    raise SyncError("checkExternallyManagedPF(): number of request virtual functions %d is not equal to configured virtual "
                                    "functions %d but the policy is configured as ExternallyManaged for device %s" % (num, hw["numVfs"], hw["pciAddress"]))
            else:
                state["numVfs"] = num
            state.update(mtu=want.get("mtu") or hw["mtu"], linkType=(want.get("linkType") or hw["linkType"]).upper(),
                         externallyManaged=bool(want.get("externallyManaged")), vfGroups=want.get("vfGroups") or [])
        applied[hw["pciAddress"]] = state
    return applied


def status_interfaces(hw_interfaces, applied=None):
    """status.interfaces as the daemon discovers them (InterfaceExt, with the VFs that exist)."""
    out = []
    for hw in hw_interfaces:
        state = (applied or {}).get(hw["pciAddress"]) or {"numVfs": hw["numVfs"], "mtu": hw["mtu"], "linkType": hw["linkType"], "vfGroups": []}
        vfs = []
        for vf_id in range(state["numVfs"]):
            group = next((g for g in state["vfGroups"] if _range(g["vfRange"])[0] <= vf_id <= _range(g["vfRange"])[1]), {})
            driver = "vfio-pci" if group.get("deviceType") == "vfio-pci" else hw["driver"]
            vfs.append(_omitempty({"pciAddress": hardware.vf_pci_address(hw, vf_id), "vfID": vf_id, "vendor": hw["vendor"],
                                   "deviceID": hardware.vf_device_id(hw), "driver": driver, "mtu": group.get("mtu") or state["mtu"]}))
            vfs[-1]["vfID"] = vf_id  # required by the schema even when 0
        iface = _omitempty({"name": hw["name"], "pciAddress": hw["pciAddress"], "vendor": hw["vendor"], "deviceID": hw["deviceID"],
                            "driver": hw["driver"], "mtu": state["mtu"], "numVfs": state["numVfs"], "linkType": state["linkType"],
                            "eSwitchMode": "legacy", "linkAdminState": "up", "totalvfs": hw["totalvfs"], "Vfs": vfs,
                            "externallyManaged": state.get("externallyManaged")})
        out.append(iface)
    return out


def device_plugin_resources(spec, status, prefix):
    """What the SR-IOV device plugin advertises: per resource name, the VFs of its groups that exist."""
    numvfs = {i["pciAddress"]: i.get("numVfs") or 0 for i in (status or {}).get("interfaces") or []}
    resources = {}
    for iface in (spec or {}).get("interfaces") or []:
        for group in iface.get("vfGroups") or []:
            start, end = _range(group["vfRange"])
            count = max(0, min(end, numvfs.get(iface["pciAddress"], 0) - 1) - start + 1)
            key = "%s/%s" % (prefix, group["resourceName"])
            resources[key] = resources.get(key, 0) + count
    return resources

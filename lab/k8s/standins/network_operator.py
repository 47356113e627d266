# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""network-operator stand-in: the status the NVIDIA Network Operator writes on NicClusterPolicy.

Upstream (Mellanox/network-operator v26.4.1):
- controllers/nicclusterpolicy_controller.go Reconcile/updateCrStatus: only the instance named
  `nic-cluster-policy` is reconciled (others get state `ignore` and a reason, handleUnsupportedInstance);
  `status.appliedStates` gets one entry per state of the state manager: the component's state, or
  `ignore` when its spec section is absent; `status.state` is `ready` when no state is notReady/error;
- state names: pkg/state/state_*.go, the same table as api/v1alpha1 StateNameToConditionType;
- handleMOFEDWaitLabels[NoConfig]: nodes labelled feature.node.kubernetes.io/pci-15b3.present get
  network.nvidia.com/operator.mofed.wait=false when no OFED is deployed, or once the OFED pod on the
  node is ready (the chart's SriovOperatorConfig selects config-daemon nodes by that label);
- state-multus-cni (manifests/state-multus-cni): deploys Multus, whose manifests carry the
  NetworkAttachmentDefinition CRD; state-nv-ipam-cni (manifests/state-nv-ipam-cni/005-*.yaml) deploys
  nv-ipam, whose manifests carry the IPPool and CIDRPool CRDs (nv-ipam.nvidia.com); state-nic-configuration-operator
  (manifests/state-nic-configuration-operator/00[1-5]-*.yaml) deploys the NIC Configuration Operator with its five CRDs
  (configuration.net.nvidia.com; standins/nic_configuration.py plays the operator and its daemon).
NicNodePolicy (26.4 and later; controllers/nicnodepolicy_controller.go, pkg/state/factory.go newNicNodePolicyStates):
every instance is reconciled, whatever its name, by a state manager of three states only (state-OFED,
state-RDMA-device-plugin, state-SRIOV-device-plugin), and its status written by the same updatePolicyCRStatus as the
NicClusterPolicy's (appliedStates, state, and from 26.7 the conditions). The stand-in writes that status; it does not
play the runtime node-overlap check (which sets state error when two policies select a node) nor the MOFED wait labels.
The stand-in deploys no DaemonSet: every component present in the spec is reported `ready`, and the
OFED driver counts as ready on every node.

Network-operator 26.7 (v26.7.0-rc.2) also writes `status.conditions` in the same status update
(controllers/nic_policy_helpers.go updatePolicyCRStatus, controllers/conditions.go computePolicyConditions,
api/v1alpha1/nicclusterpolicyconditions.go): for each state of StateNameToConditionType that is not `ignore`, a
`<Component>Ready` condition (True/ComponentReady with an empty message when ready; False/ComponentNotReady or
False/ComponentError with the error otherwise), conditions of ignored or absent components removed, then the aggregate
`Ready` (True/AllComponentsReady, or False/ComponentError before False/ComponentsNotReady with their fixed messages);
every condition carries `observedGeneration` (the policy's generation) and keeps its `lastTransitionTime` while its status
does not change (apimeta.SetStatusCondition). The stand-in plays the operator of the chart whose NicClusterPolicy CRD is
installed: it writes conditions when that CRD has `status.conditions` (26.7's), and none otherwise (26.4.1's operator
has no conditions, and the API server would prune them). An instance of another name gets no conditions
(handleUnsupportedInstance sets state and reason only).

The stand-in's own switch (a test's, not upstream's): while the state dir has ``standins-network-operator.json``, its
``hold`` lists policies (``NicClusterPolicy/<name>``, ``NicNodePolicy/<name>``) whose status the stand-in leaves as it is
(a policy created meanwhile keeps an empty status: no network-operator has reconciled it), and its ``unready`` reports a
component of a policy as upstream reports a state that is not ready: ``{"NicNodePolicy/h100": {"state-OFED": ["notReady",
""]}}`` or ``["error", "<the error>"]``. Upstream's status for those (updatePolicyCRStatus, computePolicyConditions): the
applied state's ``state`` and ``message`` (the sync error, empty without one), ``status.state`` ``notReady``
(pkg/state/manager.go SyncState), the component's condition False/ComponentNotReady or False/ComponentError with the error
as its message, and the aggregate Ready False/ComponentError ("One or more components are in error state") before
False/ComponentsNotReady ("One or more components are not yet ready").
"""

import json
import logging
import time
from pathlib import Path

import yaml

from . import _kube

LOG = logging.getLogger("standins.network_operator")
NCP = _kube.path("mellanox.com", "v1alpha1", "nicclusterpolicies")
NNP = _kube.path("mellanox.com", "v1alpha1", "nicnodepolicies")
SUPPORTED_NAME = "nic-cluster-policy"
MLNX_NIC_LABEL = "feature.node.kubernetes.io/pci-15b3.present"
MOFED_WAIT_LABEL = "network.nvidia.com/operator.mofed.wait"
# The CRDs a state's manifests carry: (spec section that enables the state, state, [(CRD name, file under the CRD dir)]).
STATE_CRDS = (
    (("secondaryNetwork", "multus"), "state-multus-cni",
     [("network-attachment-definitions.k8s.cni.cncf.io", "network-operator-v26.4.1/k8s.cni.cncf.io_networkattachmentdefinitions_crd.yaml")]),
    (("nvIpam",), "state-nv-ipam-cni",
     [("ippools.nv-ipam.nvidia.com", "nv-ipam-network-operator-v26.4.1/nv-ipam.nvidia.com_ippools.yaml"),
      ("cidrpools.nv-ipam.nvidia.com", "nv-ipam-network-operator-v26.4.1/nv-ipam.nvidia.com_cidrpools.yaml")]),
    # manifests/state-nic-configuration-operator/00[1-5]-*.yaml: the five CRDs of the component tag (schema-equal copies)
    (("nicConfigurationOperator",), "state-nic-configuration-operator",
     [("%s.configuration.net.nvidia.com" % plural,
       "nic-configuration-operator-network-operator-v26.4.1/configuration.net.nvidia.com_%s.yaml" % plural)
      for plural in ("nicconfigurationtemplates", "nicdevices", "nicfirmwaresources", "nicfirmwaretemplates", "nicinterfacenametemplates")]),
)

# (state name, path of the NicClusterPolicy spec section that enables it), in the state manager's order.
STATES = (
    ("state-OFED", ("ofedDriver",)),
    ("state-RDMA-device-plugin", ("rdmaSharedDevicePlugin",)),
    ("state-SRIOV-device-plugin", ("sriovDevicePlugin",)),
    ("state-ib-kubernetes", ("ibKubernetes",)),
    ("state-multus-cni", ("secondaryNetwork", "multus")),
    ("state-container-networking-plugins", ("secondaryNetwork", "cniPlugins")),
    ("state-ipoib-cni", ("secondaryNetwork", "ipoib")),
    ("state-nv-ipam-cni", ("nvIpam",)),
    ("state-nic-feature-discovery", ("nicFeatureDiscovery",)),
    ("state-doca-telemetry-service", ("docaTelemetryService",)),
    ("state-nic-configuration-operator", ("nicConfigurationOperator",)),
    ("state-spectrum-x-operator", ("spectrumXOperator",)),
)


# api/v1alpha1/nicclusterpolicyconditions.go StateNameToConditionType (26.7).
CONDITION_TYPES = {
    "state-OFED": "OFEDDriverReady",
    "state-RDMA-device-plugin": "RDMASharedDevicePluginReady",
    "state-SRIOV-device-plugin": "SRIOVDevicePluginReady",
    "state-ib-kubernetes": "IBKubernetesReady",
    "state-multus-cni": "MultusCNIReady",
    "state-container-networking-plugins": "CNIPluginsReady",
    "state-ipoib-cni": "IPoIBCNIReady",
    "state-nv-ipam-cni": "NVIPAMReady",
    "state-nic-feature-discovery": "NICFeatureDiscoveryReady",
    "state-doca-telemetry-service": "DOCATelemetryServiceReady",
    "state-nic-configuration-operator": "NICConfigurationOperatorReady",
    "state-spectrum-x-operator": "SpectrumXOperatorReady",
}
NCP_CRD = _kube.path("apiextensions.k8s.io", "v1", "customresourcedefinitions") + "/nicclusterpolicies.mellanox.com"
NNP_CRD = _kube.path("apiextensions.k8s.io", "v1", "customresourcedefinitions") + "/nicnodepolicies.mellanox.com"
# newNicNodePolicyStates: the three states shared with the NicClusterPolicy (newCommonNicPolicyStates).
NNP_STATES = STATES[:3]
# The stand-in's switch in the state dir (module docstring).
SWITCH_FILE = "standins-network-operator.json"
# controllers/conditions.go: the aggregate Ready's fixed messages.
READY_ERROR = ("ComponentError", "One or more components are in error state")
READY_NOT_READY = ("ComponentsNotReady", "One or more components are not yet ready")


def _section(spec, keys):
    for key in keys:
        spec = spec.get(key) if isinstance(spec, dict) else None
    return spec


def _rfc3339(t=None):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if t is None else t))


def _set_condition(conditions, cond, now):
    """apimeta.SetStatusCondition: add, or update in place keeping lastTransitionTime unless the status changes."""
    for i, old in enumerate(conditions):
        if old["type"] == cond["type"]:
            keep = old.get("lastTransitionTime") if old.get("status") == cond["status"] else None
            conditions[i] = dict(cond, lastTransitionTime=keep or now)
            return
    conditions.append(dict(cond, lastTransitionTime=now))


def policy_conditions(existing, applied, generation, now=None):
    """computePolicyConditions for the states the stand-in reports: ``ready`` and ``ignore``, and ``notReady`` or
    ``error`` (with its ``message``) where the switch says so."""
    now = now or _rfc3339()
    conditions = [dict(c) for c in existing or []]
    seen = set()
    for st in applied:
        ctype = CONDITION_TYPES.get(st["name"])
        if ctype is None:
            continue
        seen.add(ctype)
        if st["state"] == "ignore":
            conditions = [c for c in conditions if c["type"] != ctype]
            continue
        if st["state"] == "ready":
            status, reason = "True", "ComponentReady"
        else:
            status, reason = "False", "ComponentError" if st["state"] == "error" else "ComponentNotReady"
        _set_condition(conditions, {"type": ctype, "status": status, "reason": reason, "message": st.get("message", ""),
                                    "observedGeneration": generation}, now)
    # stale component conditions of states missing from this reconcile are pruned
    conditions = [c for c in conditions if c["type"] not in set(CONDITION_TYPES.values()) - seen]
    states = {st["state"] for st in applied}
    ready = READY_ERROR if "error" in states else READY_NOT_READY if "notReady" in states else None
    _set_condition(conditions, {"type": "Ready", "status": "False" if ready else "True", "reason": ready[0] if ready else "AllComponentsReady",
                                "message": ready[1] if ready else "", "observedGeneration": generation}, now)
    return conditions


def read_switch(state_dir):
    """The switch file of ``state_dir`` (module docstring) as ``{"hold": set, "unready": dict}``; empty without one."""
    try:
        doc = json.loads((Path(state_dir) / SWITCH_FILE).read_text(encoding="utf-8")) if state_dir else {}
    except (OSError, ValueError):
        doc = {}
    return {"hold": set(doc.get("hold") or ()), "unready": doc.get("unready") or {}}


def policy_status(policy, conditions=False, now=None, node_policy=False, unready=None):
    """The status upstream writes once every component present in the spec is ready; with ``conditions`` (26.7's CRD) also
    status.conditions, merged into the policy's current ones. ``node_policy``: a NicNodePolicy (any name, three states).
    ``unready``: {state name: [notReady or error, message]} for components the switch holds back."""
    name = policy["metadata"]["name"]
    if name != SUPPORTED_NAME and not node_policy:
        status = {"state": "ignore",
                  "reason": "Unsupported NicClusterPolicy instance %s. Only instance with name %s is supported" % (name, SUPPORTED_NAME)}
        current = (policy.get("status") or {}).get("conditions")
        return dict(status, conditions=current) if conditions and current else status
    spec = policy.get("spec") or {}
    applied = []
    for state, keys in NNP_STATES if node_policy else STATES:
        entry = {"name": state, "state": "ready" if _section(spec, keys) is not None else "ignore"}
        held = (unready or {}).get(state)
        if held and entry["state"] == "ready":
            entry["state"] = held[0]
            if len(held) > 1 and held[1]:
                entry["message"] = held[1]
        applied.append(entry)
    states = {st["state"] for st in applied}
    # pkg/state/manager.go SyncState: notReady while any state is notReady or error
    status = {"state": "notReady" if states & {"notReady", "error"} else "ready", "appliedStates": applied}
    if conditions:
        status["conditions"] = policy_conditions((policy.get("status") or {}).get("conditions"), applied,
                                                 policy["metadata"].get("generation"), now)
    return status


def crd_has_conditions(crd):
    """Whether an installed NicClusterPolicy CRD has status.conditions (network-operator 26.7 and later)."""
    for ver in (crd or {}).get("spec", {}).get("versions", []):
        status = ((ver.get("schema") or {}).get("openAPIV3Schema") or {}).get("properties", {}).get("status") or {}
        if "conditions" in (status.get("properties") or {}):
            return True
    return False


class NetworkOperatorStandin:
    """NicClusterPolicy status, the MOFED wait label, and the CRDs of Multus and nv-ipam."""

    name = "network-operator"

    def __init__(self, kube, nodes, crds_dir, state_dir=None):
        self.kube = kube
        self.nodes = nodes
        self.crds_dir = Path(crds_dir)
        self.state_dir = state_dir

    def _install_crd(self, name, file, state):
        crd_path = _kube.path("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        if self.kube.get_or_none(crd_path + "/" + name) is not None:
            return False
        source = self.crds_dir / file
        crd = yaml.safe_load(source.read_text(encoding="utf-8"))
        try:
            self.kube.create(crd_path, crd)
        except _kube.KubeError as err:
            if err.status != 409:
                raise
        LOG.info("installed the CRD %s from %s (%s)", name, source, state)
        return True

    def _mofed_wait_labels(self):
        """With OFED absent or ready, nodes with an NVIDIA NIC get mofed.wait=false."""
        for name in self.nodes:
            node = self.kube.get_or_none(_kube.path("", "v1", "nodes", name=name))
            if node is None:
                continue
            labels = node["metadata"].get("labels") or {}
            want = "false" if labels.get(MLNX_NIC_LABEL) == "true" else None
            if labels.get(MOFED_WAIT_LABEL) != want:
                self.kube.patch(_kube.path("", "v1", "nodes", name=name), {"metadata": {"labels": {MOFED_WAIT_LABEL: want}}}, strategic=True)
                LOG.info("node %s: %s=%s", name, MOFED_WAIT_LABEL, want)

    def _crd_file(self, file, conditions):
        """The CRD file of the operator being played: 26.7's manifests carry their own copies (SOURCES.md there)."""
        if not conditions:
            return file
        directory, name = file.split("/", 1)
        sub = {"network-operator-v26.4.1": "network-operator", "nv-ipam-network-operator-v26.4.1": "nv-ipam",
               "nic-configuration-operator-network-operator-v26.4.1": "nic-configuration-operator"}[directory]
        return "network-operator-v26.7.0-rc.2/%s/%s" % (sub, name)

    def tick(self, _t):
        policies = self.kube.items(NCP)
        note = {"policies": {}}
        switch = read_switch(self.state_dir)
        conditions = crd_has_conditions(self.kube.get_or_none(NCP_CRD)) if policies else False
        for policy in policies:
            name = policy["metadata"]["name"]
            if "NicClusterPolicy/" + name in switch["hold"]:
                note["policies"][name] = "held"
                continue
            status = policy_status(policy, conditions, unready=switch["unready"].get("NicClusterPolicy/" + name))
            for section, state, crds in STATE_CRDS if name == SUPPORTED_NAME else ():
                if _section(policy.get("spec") or {}, section) is not None:
                    for crd_name, crd_file in crds:
                        self._install_crd(crd_name, self._crd_file(crd_file, conditions), state)
            if (policy.get("status") or {}) != status:
                # A merge patch keeps keys it does not mention: null out the ones this status lacks.
                body = dict({"reason": None, "appliedStates": None, "conditions": None}, **status)
                self.kube.patch(_kube.path("mellanox.com", "v1alpha1", "nicclusterpolicies", name=name, sub="status"), {"status": body})
                LOG.info("NicClusterPolicy %s: status.state=%s%s", name, status["state"],
                         " with %d conditions" % len(status["conditions"]) if status.get("conditions") else "")
            note["policies"][name] = status["state"]
        if any(p["metadata"]["name"] == SUPPORTED_NAME for p in policies):
            self._mofed_wait_labels()
        node_policies = self.kube.items(NNP)
        nnp_conditions = crd_has_conditions(self.kube.get_or_none(NNP_CRD)) if node_policies else False
        for policy in node_policies:
            name = policy["metadata"]["name"]
            if "NicNodePolicy/" + name in switch["hold"]:
                note["policies"]["NicNodePolicy/" + name] = "held"
                continue
            status = policy_status(policy, nnp_conditions, node_policy=True, unready=switch["unready"].get("NicNodePolicy/" + name))
            if (policy.get("status") or {}) != status:
                body = dict({"reason": None, "appliedStates": None, "conditions": None}, **status)
                self.kube.patch(_kube.path("mellanox.com", "v1alpha1", "nicnodepolicies", name=name, sub="status"), {"status": body})
                LOG.info("NicNodePolicy %s: status.state=%s%s", name, status["state"],
                         " with %d conditions" % len(status["conditions"]) if status.get("conditions") else "")
            note["policies"]["NicNodePolicy/" + name] = status["state"]
        return note

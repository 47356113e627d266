# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sriov-network-operator + sriov-network-config-daemon + SR-IOV device plugin, as stand-ins.

Upstream (k8snetworkplumbingwg/sriov-network-operator v1.6.0 / network-operator-26.4.x):
- operator, controllers/sriovnetworknodepolicy_controller.go: nothing is reconciled while the
  SriovOperatorConfig `default` is missing in the operator namespace ("cannot reconcile ... Requeue");
  nodes are those matching its configDaemonNodeSelector (default: node-role.kubernetes.io/worker=""
  and kubernetes.io/os=linux); for each, a SriovNetworkNodeState of the node's name is created with
  an empty spec, owned by the SriovOperatorConfig; the policies are written into spec.interfaces only
  once the daemon has reported status.interfaces, and the operator does not watch node states (it
  acts 1 s after a policy/node event, else at its 5-minute resync). The stand-in models that gap as
  `sync_delay`: a new desired spec reaches the node state `sync_delay` seconds after it is seen (a test may
  override it while the file `standins-sync-delay` exists in the state directory).
- config daemon, pkg/daemon: reports the node's PFs in status.interfaces with syncStatus Succeeded
  (an empty spec is in sync), then, for every new spec generation: InProgress, and after applying
  (`apply_delay` here) Succeeded with status.interfaces carrying numVfs/mtu, or Failed with
  lastSyncError. Failures come from upstream's own checks (numVfs > totalvfs; externallyManaged
  with fewer VFs on the host than requested) or from the node annotation SYNC_ERROR_ANNOTATION.
- device plugin + kubelet: each time the daemon applied a spec (Succeeded), which is when upstream's
  daemon restarts the device plugin, Node capacity/allocatable carry <RESOURCE_PREFIX>/<resourceName>
  = the VFs of the groups of that resource; resources no longer configured are removed (the kubelet
  drops a device plugin's resources when it stops advertising). A node state deleted and created
  again (daemon restart) changes nothing until its next applied sync.
"""

import json
import logging
from pathlib import Path

from . import _delays, _kube, sriov_policy

LOG = logging.getLogger("standins.sriov")
SYNC_ERROR_ANNOTATION = "standin.gpufabric.roce/sync-error"
GROUP, VERSION = "sriovnetwork.openshift.io", "v1"
CONFIG_NAME = "default"


def _owner(config):
    return {"apiVersion": "%s/%s" % (GROUP, VERSION), "kind": "SriovOperatorConfig", "name": config["metadata"]["name"],
            "uid": config["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


class SriovStandin:
    """One pass per tick over the operator, the config daemons of the fake nodes and their device plugins."""

    name = "sriov"

    def __init__(self, kube, nodes, namespace, prefix, *, sync_delay=5.0, apply_delay=2.0, state_dir=None):
        self.kube = kube
        self.nodes = nodes
        self.namespace = namespace
        self.prefix = prefix
        self.sync_delay = sync_delay
        self.apply_delay = apply_delay
        self.pending = {}  # node -> (desired spec as JSON, first seen)
        self.daemon = {}  # node -> {"gen", "phase", "since", "error_for"}
        self.checkpoint = Path(state_dir) / "standins-device-plugin.json" if state_dir else None
        # A test may lengthen the delay for one step only (molecule k8s, tasks/sync.yml): the file, while it exists,
        # holds the delay in seconds. A test knob, not upstream behaviour; every other step keeps the short delay.
        self.delay_file = Path(state_dir) / "standins-sync-delay" if state_dir else None
        self.advertised = self._load_checkpoint()

    def _path(self, resource, name=None, sub=None):
        return _kube.path(GROUP, VERSION, resource, namespace=self.namespace, name=name, sub=sub)

    def _current_sync_delay(self):
        return _delays.seconds(self.delay_file, self.sync_delay)

    # ---- operator -------------------------------------------------------------------------
    def _operator(self, config, t, note):
        sync_delay = self._current_sync_delay()
        policies = self.kube.items(self._path("sriovnetworknodepolicies"))
        states = {s["metadata"]["name"]: s for s in self.kube.items(self._path("sriovnetworknodestates"))}
        for node in sriov_policy.daemon_nodes(config, self.kube.items(_kube.path("", "v1", "nodes"))):
            name = node["metadata"]["name"]
            state = states.get(name)
            if state is None:
                body = {"apiVersion": "%s/%s" % (GROUP, VERSION), "kind": "SriovNetworkNodeState",
                        "metadata": {"name": name, "namespace": self.namespace, "ownerReferences": [_owner(config)]}, "spec": {}}
                self.kube.create(self._path("sriovnetworknodestates"), body)
                self.pending.pop(name, None)  # a new state waits the whole delay again
                LOG.info("SriovNetworkNodeState %s created with an empty spec", name)
                continue
            reported = (state.get("status") or {}).get("interfaces") or []
            if not reported:
                continue  # upstream: "Status Interfaces are empty. Skip update of policies in spec"
            desired = sriov_policy.render_spec(policies, node["metadata"].get("labels") or {}, reported)
            if desired == (state.get("spec") or {}):
                self.pending.pop(name, None)
                continue
            key = json.dumps(desired, sort_keys=True)
            if self.pending.get(name, (None, 0))[0] != key:
                self.pending[name] = (key, t)
            if t - self.pending[name][1] < sync_delay:
                note[name + "/operator"] = "spec pending (%.0fs of %.0fs)" % (t - self.pending[name][1], sync_delay)
                continue
            self.kube.patch(self._path("sriovnetworknodestates", name), {"spec": {"interfaces": desired.get("interfaces")}})
            self.pending.pop(name, None)
            LOG.info("SriovNetworkNodeState %s: spec written from the policies: %s", name, key)

    # ---- config daemon --------------------------------------------------------------------
    def _write_status(self, name, status):
        body = dict({"lastSyncError": None}, **status)
        self.kube.patch(self._path("sriovnetworknodestates", name, "status"), {"status": body})

    def _daemon(self, state, t):
        name = state["metadata"]["name"]
        hw = self.nodes[name]["interfaces"]
        gen = state["metadata"].get("generation")
        status = state.get("status") or {}
        mem = self.daemon.get(name)
        if not status.get("interfaces") and not status.get("syncStatus"):
            empty = not (state.get("spec") or {}).get("interfaces")
            self._write_status(name, {"interfaces": sriov_policy.status_interfaces(hw), "syncStatus": "Succeeded" if empty else "InProgress"})
            self.daemon[name] = {"gen": gen if empty else None, "phase": "Succeeded" if empty else "InProgress", "since": t, "error_for": None,
                                 "applied": None}
            LOG.info("config daemon %s: reported %d PF(s), syncStatus %s", name, len(hw), self.daemon[name]["phase"])
            return self.daemon[name]["phase"]
        if mem is None:  # restarted: trust a Succeeded status, redo anything else
            synced = status.get("syncStatus") == "Succeeded"
            mem = self.daemon[name] = {"gen": gen if synced else None, "phase": status.get("syncStatus"), "since": t, "error_for": None,
                                       "applied": (state["metadata"]["uid"], gen) if synced else None}
        if mem["phase"] == "InProgress":
            if t - mem["since"] >= self.apply_delay:
                self._apply(state, mem)
            return mem["phase"]
        retry = mem["phase"] == "Failed" and self._injected_error(name) != mem["error_for"]
        if gen != mem["gen"] or retry:
            self._write_status(name, {"syncStatus": "InProgress"})
            mem.update(phase="InProgress", since=t)
            LOG.info("config daemon %s: generation %s, syncStatus InProgress", name, gen)
        return mem["phase"]

    def _injected_error(self, name):
        node = self.kube.get_or_none(_kube.path("", "v1", "nodes", name=name)) or {"metadata": {}}
        return (node["metadata"].get("annotations") or {}).get(SYNC_ERROR_ANNOTATION)

    def _apply(self, state, mem):
        name = state["metadata"]["name"]
        # The spec may have moved on while InProgress: apply what is there now, like the daemon does.
        state = self.kube.get(self._path("sriovnetworknodestates", name))
        gen = state["metadata"].get("generation")
        injected = self._injected_error(name)
        try:
            if injected:
                raise sriov_policy.SyncError(injected)
            applied = sriov_policy.apply_spec(self.nodes[name]["interfaces"], state.get("spec"))
        except sriov_policy.SyncError as err:
            self._write_status(name, {"syncStatus": "Failed", "lastSyncError": str(err)})
            mem.update(phase="Failed", gen=gen, error_for=injected)
            LOG.info("config daemon %s: syncStatus Failed: %s", name, err)
            return
        self._write_status(name, {"interfaces": sriov_policy.status_interfaces(self.nodes[name]["interfaces"], applied), "syncStatus": "Succeeded"})
        mem.update(phase="Succeeded", gen=gen, error_for=None, applied=(state["metadata"]["uid"], gen))
        LOG.info("config daemon %s: generation %s applied, syncStatus Succeeded", name, gen)

    # ---- device plugin --------------------------------------------------------------------
    def _load_checkpoint(self):
        if self.checkpoint and self.checkpoint.exists():
            return {k: set(v) for k, v in json.loads(self.checkpoint.read_text(encoding="utf-8")).items()}
        return {}

    def _device_plugin(self, name, state):
        """Advertise what the last applied sync configured; nothing else changes the resources.

        The config daemon restarts the device plugin only after it applied a spec: a node state that
        is deleted and created again (empty spec, Succeeded) leaves the node's resources as they were.
        """
        mem = self.daemon.get(name) or {}
        if state is None or mem.get("applied") != (state["metadata"]["uid"], state["metadata"].get("generation")):
            return None
        if (state.get("status") or {}).get("syncStatus") != "Succeeded":
            return None
        wanted = sriov_policy.device_plugin_resources(state.get("spec"), state.get("status"), self.prefix)
        node = self.kube.get_or_none(_kube.path("", "v1", "nodes", name=name))
        if node is None:
            return None
        capacity = (node.get("status") or {}).get("capacity") or {}
        stale = self.advertised.get(name, set()) - set(wanted)
        patch = {k: str(v) for k, v in wanted.items() if capacity.get(k) != str(v)}
        patch.update({k: None for k in stale if k in capacity})
        if patch:
            self.kube.patch(_kube.path("", "v1", "nodes", name=name, sub="status"), {"status": {"capacity": patch, "allocatable": patch}}, strategic=True)
            LOG.info("device plugin %s: capacity/allocatable %s", name, patch)
        if self.advertised.get(name, set()) != set(wanted):
            self.advertised[name] = set(wanted)
            if self.checkpoint:
                self.checkpoint.write_text(json.dumps({k: sorted(v) for k, v in self.advertised.items()}), encoding="utf-8")
        return wanted

    # ---- tick -----------------------------------------------------------------------------
    def tick(self, t):
        note = {}
        config = self.kube.get_or_none(self._path("sriovoperatorconfigs", CONFIG_NAME))
        if config is None:
            note["waiting_for"] = "SriovOperatorConfig %s/%s" % (self.namespace, CONFIG_NAME)
        else:
            self._operator(config, t, note)
        states = {s["metadata"]["name"]: s for s in self.kube.items(self._path("sriovnetworknodestates"))}
        for name in self.nodes:
            try:
                if name in states:
                    note[name + "/daemon"] = self._daemon(states[name], t)
                resources = self._device_plugin(name, states.get(name))
                if resources:
                    note[name + "/resources"] = resources
            except _kube.KubeError as err:
                if not _kube.status_is(err, 404, 409):
                    raise
        return note

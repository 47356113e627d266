# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubelet stand-in: what the kubelet of each fake node writes to the API server, nothing else.

Upstream behaviour it plays (kubernetes v1.36, pkg/kubelet):
- registration (kubelet_node_status.go registerWithAPIServer/initialNode): the Node with the
  well-known labels kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch and their beta.*
  twins, capacity and allocatable;
- heartbeat (nodelease/controller.go, kubelet_node_status.go): the Lease in kube-node-lease renewed
  every 10 s (leaseDuration 40 s), the Ready condition posted, so kube-controller-manager's
  node-lifecycle controller does not taint the node unreachable;
- pod status (status/status_manager.go): Pods bound to the node run: phase Running, conditions
  PodReadyToStartContainers/Initialized/ContainersReady/Ready/PodScheduled True, every container
  running and ready, a podIP (hostIP for hostNetwork pods). Pods owned by a Job run to completion:
  phase Succeeded, containers terminated with exit code 0 (the chart's upgrade-crd hook first does
  what its container does: upgrade_crd_hook.py);
- pod deletion (status_manager.go canBeDeleted): a Pod with a deletionTimestamp is deleted with
  grace period 0 once its containers are stopped (here: at once).
There is no container runtime: images are not pulled, probes and commands never run.
"""

import hashlib
import logging
import time

from . import _kube, upgrade_crd_hook

LOG = logging.getLogger("standins.kubelet")
LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION = 40
LEASE_RENEW_SECONDS = 10  # kubelet renews at a quarter of the lease duration
STATUS_REPORT_SECONDS = 60  # kubelet posts an unchanged status every 5 min; a lease covers the rest


def now_rfc3339(t=None):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if t is None else t))


def now_micro(t=None):
    t = time.time() if t is None else t
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%06dZ" % int((t % 1) * 1e6)


def node_ip(index):
    return "10.0.0.%d" % (10 + index)


def node_manifest(name, spec):
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
    }
    labels.update(spec["labels"])
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def register_nodes(kube, nodes):
    """Create the Node objects (kubelet's registerWithAPIServer); existing Nodes get the labels merged."""
    for name, spec in sorted(nodes.items()):
        body = node_manifest(name, spec)
        try:
            kube.create(_kube.path("", "v1", "nodes"), body)
            LOG.info("registered node %s", name)
        except _kube.KubeError as err:
            if err.status != 409:
                raise
            kube.patch(_kube.path("", "v1", "nodes", name=name), {"metadata": {"labels": body["metadata"]["labels"]}}, strategic=True)


def _ready_conditions(t, ready_since):
    conds = []
    for ctype, status, reason, msg in (
        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ("Ready", "True", "KubeletReady", "kubelet stand-in (gpufabric.roce lab/k8s) is posting ready status"),
    ):
        conds.append({"type": ctype, "status": status, "reason": reason, "message": msg,
                      "lastHeartbeatTime": now_rfc3339(t), "lastTransitionTime": now_rfc3339(ready_since)})
    return conds


class KubeletStandin:
    """Node heartbeats and pod status for the fake nodes."""

    name = "kubelet"

    def __init__(self, kube, nodes, crd_hook=None):
        self.kube = kube
        # The container of the chart's upgrade-crd hook Job (upgrade_crd_hook.py): runs before its pod completes.
        self.crd_hook = crd_hook
        self.nodes = nodes
        self.index = {n: i for i, n in enumerate(sorted(nodes))}
        self.started = time.time()
        self.last_lease = {}
        self.last_status = {}

    # ---- node -----------------------------------------------------------------------------
    def _node_status(self, name, t):
        spec = self.nodes[name]
        return {
            "conditions": _ready_conditions(t, self.started),
            "addresses": [{"type": "InternalIP", "address": node_ip(self.index[name])}, {"type": "Hostname", "address": name}],
            "capacity": dict(spec["capacity"]),
            "allocatable": dict(spec["capacity"]),
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": hashlib.md5(name.encode()).hexdigest(),  # noqa: S324 - an identifier, not a secret
                "systemUUID": hashlib.md5(("uuid" + name).encode()).hexdigest(),  # noqa: S324
                "bootID": hashlib.md5(("%s%d" % (name, self.started)).encode()).hexdigest(),  # noqa: S324
                "kernelVersion": "6.1.0-standin", "osImage": "gpufabric.roce kubelet stand-in",
                "containerRuntimeVersion": "standin://0", "kubeletVersion": "v1.36.2", "kubeProxyVersion": "",
                "operatingSystem": "linux", "architecture": "amd64",
            },
        }

    def _heartbeat(self, t):
        for name in self.nodes:
            if t - self.last_status.get(name, 0) >= STATUS_REPORT_SECONDS:
                try:
                    self.kube.patch(_kube.path("", "v1", "nodes", name=name, sub="status"), {"status": self._node_status(name, t)}, strategic=True)
                    self.last_status[name] = t
                except _kube.KubeError as err:
                    if err.status != 404:  # a deleted Node stays deleted: kubelet does not re-register
                        raise
            if t - self.last_lease.get(name, 0) >= LEASE_RENEW_SECONDS:
                self._renew_lease(name, t)
                self.last_lease[name] = t

    def _renew_lease(self, name, t):
        lease_path = _kube.path("coordination.k8s.io", "v1", "leases", namespace=LEASE_NAMESPACE, name=name)
        spec = {"holderIdentity": name, "leaseDurationSeconds": LEASE_DURATION, "renewTime": now_micro(t)}
        try:
            self.kube.patch(lease_path, {"spec": spec})
        except _kube.KubeError as err:
            if err.status != 404:
                raise
            node = self.kube.get_or_none(_kube.path("", "v1", "nodes", name=name))
            if node is None:
                return
            owner = {"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"]}
            self.kube.create(_kube.path("coordination.k8s.io", "v1", "leases", namespace=LEASE_NAMESPACE),
                             {"metadata": {"name": name, "namespace": LEASE_NAMESPACE, "ownerReferences": [owner]}, "spec": spec})

    # ---- pods -----------------------------------------------------------------------------
    def _pod_ip(self, pod, used):
        if pod["spec"].get("hostNetwork"):
            return node_ip(self.index[pod["spec"]["nodeName"]])
        current = pod.get("status", {}).get("podIP")
        if current:
            return current
        base = "10.244.%d." % self.index[pod["spec"]["nodeName"]]
        for host in range(2, 255):
            if base + str(host) not in used:
                used.add(base + str(host))
                return base + str(host)
        raise RuntimeError("the kubelet stand-in ran out of pod IPs on %s (253 pods)" % pod["spec"]["nodeName"])

    def _pod_status(self, pod, ip, t):
        node = pod["spec"]["nodeName"]
        completes = any(o.get("kind") == "Job" for o in pod["metadata"].get("ownerReferences") or [])
        started = pod.get("status", {}).get("startTime") or now_rfc3339(t)
        uid = pod["metadata"]["uid"]

        def container(c, terminated):
            cid = "standin://" + hashlib.sha256((uid + c["name"]).encode()).hexdigest()[:32]
            st = {"name": c["name"], "image": c.get("image", ""), "imageID": "", "containerID": cid, "restartCount": 0}
            if terminated:
                done = {"exitCode": 0, "reason": "Completed", "startedAt": started, "finishedAt": now_rfc3339(t), "containerID": cid}
                st.update(ready=False, started=False, state={"terminated": done})
            else:
                st.update(ready=True, started=True, state={"running": {"startedAt": started}})
            return st

        conditions = []
        for ctype in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"):
            cond = {"type": ctype, "status": "True", "lastTransitionTime": now_rfc3339(t)}
            if completes and ctype in ("PodReadyToStartContainers", "Ready", "ContainersReady"):
                cond.update(status="False", reason="PodCompleted")
            conditions.append(cond)
        status = {
            "phase": "Succeeded" if completes else "Running",
            "conditions": conditions,
            "hostIP": node_ip(self.index[node]),
            "hostIPs": [{"ip": node_ip(self.index[node])}],
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": started,
            "containerStatuses": [container(c, completes) for c in pod["spec"].get("containers", [])],
        }
        if pod["spec"].get("initContainers"):
            status["initContainerStatuses"] = [container(c, True) for c in pod["spec"]["initContainers"]]
        return status

    def _sync_pod(self, pod, used, t):
        """One pod; returns what happened to it."""
        meta = pod["metadata"]
        pod_path = _kube.path("", "v1", "pods", namespace=meta["namespace"], name=meta["name"])
        if meta.get("deletionTimestamp"):
            self.kube.delete(pod_path, {"gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}})
            LOG.info("deleted pod %s/%s (deletionTimestamp was set)", meta["namespace"], meta["name"])
            return "deleted"
        phase = pod.get("status", {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            return "completed"
        if phase == "Running" and pod.get("status", {}).get("podIP"):
            return "running"
        if upgrade_crd_hook.is_hook_pod(pod):
            if self.crd_hook is None:
                return "hook-not-run"
            try:
                self.crd_hook.run(pod)
            except upgrade_crd_hook.HookError as err:
                # As a crash-looping container: the pod never completes and Helm's wait fails.
                LOG.error("hook pod %s/%s: %s", meta["namespace"], meta["name"], err)
                return "hook-failed"
        status = self._pod_status(pod, self._pod_ip(pod, used), t)
        # PUT with the listed resourceVersion: a pod changed meanwhile answers 409 and is retried next tick.
        self.kube.request("PUT", pod_path + "/status", body={"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod["spec"], "status": status})
        LOG.info("pod %s/%s on %s: %s", meta["namespace"], meta["name"], pod["spec"]["nodeName"], status["phase"])
        return status["phase"].lower()

    def _sync_pods(self, t):
        mine = [p for p in self.kube.items(_kube.path("", "v1", "pods")) if p["spec"].get("nodeName") in self.nodes]
        used = {p.get("status", {}).get("podIP") for p in mine}
        counts = {}
        for pod in mine:
            try:
                what = self._sync_pod(pod, used, t)
            except _kube.KubeError as err:
                if not _kube.status_is(err, 404, 409):
                    raise
                what = "retry"
            counts[what] = counts.get(what, 0) + 1
        return counts

    def tick(self, t):
        self._heartbeat(t)
        return {"pods": self._sync_pods(t)}

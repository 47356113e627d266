# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Scripted cluster for the kubernetes.core test double (molecule/k8s_stubbed). No cluster is contacted.

State lives in $GPUFABRIC_STUB_DIR: script.json (what the cluster does), calls.jsonl (every call) and
counters.json (how many times each kind was read).
"""

import json
import os

COMMON = dict(
    kubeconfig=dict(type="raw"),
    context=dict(type="str"),
    namespace=dict(type="str"),
    name=dict(type="str"),
    kind=dict(type="str"),
    api_version=dict(type="str", default="v1"),
    wait=dict(type="bool", default=False),
    wait_timeout=dict(type="raw"),
)


def stub_dir():
    return os.environ["GPUFABRIC_STUB_DIR"]


def load(name, default):
    try:
        with open(os.path.join(stub_dir(), name)) as fh:
            return json.load(fh)
    except OSError:
        return default


def record(module_name, params):
    with open(os.path.join(stub_dir(), "calls.jsonl"), "a") as fh:
        fh.write(json.dumps({"module": module_name, "params": params}, sort_keys=True) + "\n")


def bump(kind):
    counters = load("counters.json", {})
    counters[kind] = counters.get(kind, 0) + 1
    with open(os.path.join(stub_dir(), "counters.json"), "w") as fh:
        json.dump(counters, fh)
    return counters[kind]


def read(kind, name=None):
    """Resources of ``kind`` at the n-th read, per script.json."""
    script = load("script.json", {})
    n = bump(kind)
    if kind == "CustomResourceDefinition":
        return [{"metadata": {"name": c}} for c in script.get("crds", []) if name in (None, c)]
    if kind == "NicClusterPolicy":
        ready = n >= script.get("ncp_ready_at_read", 1)
        states = [
            {"name": "state-multus-cni", "state": "ready"},
            {"name": "state-nv-ipam-cni", "state": "ready" if ready else "notReady", "message": "" if ready else "waiting for daemonset nv-ipam-node"},
        ]
        return [{"metadata": {"name": "nic-cluster-policy"}, "status": {"state": "ready" if ready else "notReady", "appliedStates": states}}]
    if kind == "Deployment":
        return [{"metadata": {"name": d}, "spec": {"replicas": 1}, "status": {"availableReplicas": 1}} for d in script.get("deployments", [])]
    if kind == "SriovNetworkNodeState":
        out = []
        for node in script.get("nodes", []):
            stuck = node in script.get("stuck_nodes", [])
            done = not stuck and n >= script.get("sync_at_read", 1)
            status = {"syncStatus": "Succeeded" if done else ("Failed" if stuck else "InProgress")}
            if not done:
                status["lastSyncError"] = script.get("sync_error", "")
            out.append({"metadata": {"name": node}, "status": status})
        return out
    if kind == "Node":
        return [{"metadata": {"name": node}, "status": {"allocatable": dict(alloc)}} for node, alloc in script.get("allocatable", {}).items()]
    return []

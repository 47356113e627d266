# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host VF mode: the drain around a VF reset (roles/host_network/tasks/drain.yml, uncordon.yml), issue 21.

On a control plane of this module's own (conftest.py's own_cluster, stopped when the module ends): node2 is a real
Node object and the kubelet stand-in runs the pods bound to it and completes their deletion (status_manager.go
canBeDeleted: a pod with a deletionTimestamp is deleted with grace period 0), as a kubelet does after an eviction; the
eviction API and the PodDisruptionBudget checks are the real apiserver's, the budget's status the real kube-controller-manager's disruption controller.

The host is a local connection host; sriov_vf's prediction of a reset (check mode, vfs.yml) is the one input
given directly (__host_network_vf_reset), since predicting it needs a real PF (proven in the lab scenarios). A
task between drain.yml and uncordon.yml plays the VF change and records what the cluster looks like then.

- check mode: reports the drain, changes nothing;
- a PodDisruptionBudget that allows no disruption holds the drain until host_network_drain_timeout, and the run
  stops with a message naming the node, the budget and the fix; the change is not made; the node stays cordoned
  with this role's label;
- a later run without a reset uncordons it (the label says the cordon is ours);
- without the budget: the pods (owned by a ReplicaSet, with an emptyDir) are evicted, the node is cordoned during
  the change, schedulable and unlabelled after; the replacement pods are not bound to the cordoned node.
- an admin's cordon (no label) is never undone;
- a pod that no controller recreates stops the drain (nothing evicted, k8s_drain undoes its cordon) unless
  host_network_drain_force.
The cluster has no network-operator; each test empties the workloads' namespace and leaves node2 as it found it.
"""

import json
import os
import sys

import ansible_runner
import pytest
import yaml
from k8s_helpers import REPO, secret_leaks, token_needles, wait_for
from standins import _kube

VENV_BIN = os.path.dirname(sys.executable)
NS = "drain-test"
NODE = "node2"
LABEL = "gpufabric.roce/cordoned"

PLAYBOOK = """
- name: The drain around a VF reset, with the VF change played by a task that records the cluster (as tasks/vfs.yml)
  hosts: gpu-node2
  gather_facts: false
  tasks:
    - name: Drain, change, uncordon
      block:
        - name: Kubeconfig given as content
          ansible.builtin.include_role:
            name: gpufabric.roce.host_network
            tasks_from: kubeconfig.yml
          when: host_network_kubeconfig is mapping

        - name: Drain
          ansible.builtin.include_role:
            name: gpufabric.roce.host_network
            tasks_from: drain.yml
          vars:
            __host_network_vf_reset: "{{ vf_reset }}"

        - name: The VF change (stand-in for sriov_vf) - record the node and its pods now
          kubernetes.core.k8s_info:
            kind: Pod
            namespace: %(ns)s
            kubeconfig: "{{ record_kubeconfig }}"
          delegate_to: localhost
          register: during_pods

        - name: Record the node during the change
          kubernetes.core.k8s_info:
            kind: Node
            name: %(node)s
            kubeconfig: "{{ record_kubeconfig }}"
          delegate_to: localhost
          register: during_node

        - name: Write what was recorded
          ansible.builtin.copy:
            content: "{{ {'pods': during_pods.resources, 'node': during_node.resources[0]} | to_json }}"
            dest: "{{ record }}"
            mode: "0600"
          delegate_to: localhost
          check_mode: false

        - name: Uncordon
          ansible.builtin.include_role:
            name: gpufabric.roce.host_network
            tasks_from: uncordon.yml
          vars:
            __host_network_vf_reset: "{{ vf_reset }}"
      always:
        - name: Remove the private kubeconfig file (as tasks/vfs.yml)
          ansible.builtin.file:
            path: "{{ __host_network_kubeconfig_dir.path }}"
            state: absent
          delegate_to: localhost
          check_mode: false
          when: __host_network_kubeconfig_dir.path is defined
""" % {"ns": NS, "node": NODE}


SECRET_FILE = os.path.join("inventory", "host_vars", "gpu-node2.yml")


def _run(cluster, tmp_path, vf_reset, *args, verbosity=0, **extra_vars):
    """The playbook through ansible-runner (as AWX runs it), with the kubeconfig given as content (a mapping): every
    run also proves that its token reaches no sink (issue 43) - stdout, the log file, the job events, temporary files."""
    content = json.loads(cluster.kubeconfig.read_text(encoding="utf-8"))
    token = content["users"][0]["user"]["token"]
    assert len(token) >= 32  # random per cluster start: a match can only be a leak
    root = tmp_path / ("run%d" % len(list(tmp_path.glob("run*"))))
    (root / "inventory" / "host_vars").mkdir(parents=True)
    (root / "inventory" / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": {"gpu-node2": None}}}))
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "roce_node_name": NODE,
            "host_network_kubeconfig": content, "record_kubeconfig": str(cluster.kubeconfig), "host_network_drain_delegate_to": "localhost",
            "host_network_drain_timeout": 6, "host_network_drain_poll_interval": 1}
    host.update(extra_vars)
    (root / SECRET_FILE).write_text(yaml.safe_dump(host))
    (root / "project").mkdir()
    (root / "project" / "drain.yml").write_text(PLAYBOOK)
    record = root / "record.json"
    tmp = root / "tmp"
    tmp.mkdir()
    env = {"ANSIBLE_COLLECTIONS_PATH": str(REPO / ".build" / "collections"), "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
           "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_LOG_PATH": str(root / "ansible.log"), "TMPDIR": str(tmp),
           "ANSIBLE_LOCAL_TEMP": str(tmp / "local"), "ANSIBLE_REMOTE_TEMP": str(tmp / "remote"),
           "PATH": "%s:%s" % (VENV_BIN, cluster.env["PATH"]), "HOME": os.environ.get("HOME", str(root))}
    result = ansible_runner.run(private_data_dir=str(root), playbook="drain.yml", verbosity=verbosity, quiet=True, envvars=env,
                                extravars={"vf_reset": vf_reset, "record": str(record)}, cmdline=" ".join(args) or None)
    with result.stdout as f:
        stdout = f.read()
    assert (root / "ansible.log").stat().st_size > 0 and list((root / "artifacts").rglob("job_events/*.json"))
    assert secret_leaks(root, stdout, token_needles(token), skip=(SECRET_FILE,)) == []
    assert not list(tmp.rglob("gpufabric-roce-kubeconfig.*"))  # the private file is gone, also after a failure
    seen = json.loads(record.read_text()) if record.exists() else None
    ran = [e["event_data"].get("task") for e in result.events if e.get("event") == "runner_on_ok"]
    return result.rc, " ".join(stdout.split()), seen, ran


def _node(cluster):
    return cluster.kube.get(_kube.path("", "v1", "nodes", name=NODE))


def _pods_on_node(cluster):
    return sorted(p["metadata"]["name"] for p in cluster.kube.items(_kube.path("", "v1", "pods", namespace=NS))
                  if p["spec"].get("nodeName") == NODE and not p["metadata"].get("deletionTimestamp"))


def _running(cluster):
    return [p for p in cluster.kube.items(_kube.path("", "v1", "pods", namespace=NS))
            if p["spec"].get("nodeName") == NODE and (p.get("status") or {}).get("phase") == "Running"]


@pytest.fixture(scope="module")
def cluster(own_cluster):
    """This module's control plane, not the session's: stopped with the module instead of idling until the session
    ends (an idle control plane with its stand-ins polling takes about a tenth of a core)."""
    return own_cluster


@pytest.fixture(scope="module")
def namespace(cluster):
    """The workloads' namespace, made once: it goes with the module's control plane. Each test empties it, which takes a
    loop or two of the kubelet stand-in; deleting it waits for the namespace controller's sweep."""
    cluster.kube.create(_kube.path("", "v1", "namespaces"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    return cluster


@pytest.fixture
def workload(namespace):
    """Two pods of a Deployment on node2 (emptyDir scratch, as GPU jobs' /dev/shm); afterwards node2 is as before and the
    namespace holds no pod, Deployment or budget."""
    cluster = namespace
    before = _node(cluster)
    assert not before["spec"].get("unschedulable") and LABEL not in before["metadata"].get("labels", {})
    assert not cluster.kube.items(_kube.path("", "v1", "pods", namespace=NS))
    cluster.kube.create(_kube.path("apps", "v1", "deployments", namespace=NS), {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "trainer", "namespace": NS},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "trainer"}}, "template": {
            "metadata": {"labels": {"app": "trainer"}},
            "spec": {"nodeSelector": {"kubernetes.io/hostname": NODE},
                     "containers": [{"name": "c", "image": "registry.example/trainer:1", "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}]}],
                     "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}]}}}})
    wait_for("two trainer pods running on %s" % NODE, lambda: len(_running(cluster)) == 2, timeout=180)
    yield cluster
    cluster.kube.patch(_kube.path("", "v1", "nodes", name=NODE), {"spec": {"unschedulable": None}, "metadata": {"labels": {LABEL: None}}})
    for group, version, resource in (("apps", "v1", "deployments"), ("apps", "v1", "replicasets"), ("policy", "v1", "poddisruptionbudgets"),
                                     ("", "v1", "pods")):
        for obj in cluster.kube.items(_kube.path(group, version, resource, namespace=NS)):
            cluster.kube.delete(_kube.path(group, version, resource, namespace=NS, name=obj["metadata"]["name"]))
    wait_for("no pod left in namespace %s" % NS, lambda: not cluster.kube.items(_kube.path("", "v1", "pods", namespace=NS)), timeout=180)


def test_drain_around_a_vf_reset(workload, tmp_path):
    cluster = workload
    pods = _pods_on_node(cluster)
    assert len(pods) == 2

    # Check mode: reported, nothing touched.
    rc, out, _seen, _ran = _run(cluster, tmp_path, True, "--check")
    assert rc == 0, out[-6000:]
    assert "an apply run first cordons and drains node %s" % NODE in out
    assert not _node(cluster)["spec"].get("unschedulable") and _pods_on_node(cluster) == pods

    # A budget that allows no disruption holds the drain until the timeout; the change is not made.
    cluster.kube.create(_kube.path("policy", "v1", "poddisruptionbudgets", namespace=NS), {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "trainer", "namespace": NS},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "trainer"}}}})
    wait_for("the budget's status (disruption controller)", lambda: (cluster.kube.get(_kube.path(
        "policy", "v1", "poddisruptionbudgets", namespace=NS, name="trainer")).get("status") or {}).get("currentHealthy") == 2, timeout=120)
    rc, out, seen, _ran = _run(cluster, tmp_path, True)
    assert rc != 0 and seen is None, out[-6000:]  # stopped before the change
    assert "gpu-node2: draining node %s before its VF reset failed" % NODE in out, out[-6000:]
    assert "disruption budget" in out and "The VFs were not changed" in out
    assert "relax the budget, or raise host_network_drain_timeout (now 6s)" in out
    assert "The node is left cordoned (label %s=host_network)" % LABEL in out
    node = _node(cluster)
    assert node["spec"].get("unschedulable") is True and node["metadata"]["labels"].get(LABEL) == "host_network"
    assert _pods_on_node(cluster) == pods  # nothing evicted

    # A later run without a reset undoes this role's cordon.
    rc, out, seen, _ran = _run(cluster, tmp_path, False)
    assert rc == 0, out[-6000:]
    node = _node(cluster)
    assert not node["spec"].get("unschedulable") and LABEL not in node["metadata"].get("labels", {})

    # Without the budget: drained, cordoned during the change, uncordoned after. At -vvv (issue 43): every sink of a drain
    # that works, checked by _run; the other runs of this module are at the default verbosity.
    cluster.kube.delete(_kube.path("policy", "v1", "poddisruptionbudgets", namespace=NS, name="trainer"))
    rc, out, seen, ran = _run(cluster, tmp_path, True, verbosity=3)
    assert rc == 0, out[-6000:]
    # The cluster tasks got the private file's path: the mapping was written to it first.
    assert "Kubeconfig | write it (mode 0600)" in ran and "Uncordon | remove the label of this role's cordon" in ran, ran
    during = {p["metadata"]["name"]: p for p in seen["pods"]}
    assert not set(pods) & set(during), "evicted pods still there during the change: %s" % sorted(during)
    assert all(not p["spec"].get("nodeName") for p in during.values())  # replacements wait: node2 is cordoned
    assert seen["node"]["spec"].get("unschedulable") is True and seen["node"]["metadata"]["labels"].get(LABEL) == "host_network"
    node = _node(cluster)
    assert not node["spec"].get("unschedulable") and LABEL not in node["metadata"].get("labels", {})


def test_an_admins_cordon_is_left_in_place(workload, tmp_path):
    cluster = workload
    cluster.kube.patch(_kube.path("", "v1", "nodes", name=NODE), {"spec": {"unschedulable": True}})
    rc, out, seen, _ran = _run(cluster, tmp_path, True)
    assert rc == 0, out[-6000:]
    assert not any(p["spec"].get("nodeName") == NODE for p in seen["pods"])  # drained all the same
    node = _node(cluster)
    assert node["spec"].get("unschedulable") is True and LABEL not in node["metadata"].get("labels", {})


def test_a_host_that_is_no_kubernetes_node_is_refused_before_its_vfs_change(cluster, tmp_path):
    rc, out, seen, _ran = _run(cluster, tmp_path, True, roce_node_name="gpu-node-9")
    assert rc != 0 and seen is None
    assert 'gpu-node2: roce_node_name="gpu-node-9": no such node in the cluster' in out, out[-4000:]
    assert "set host_network_drain: false" in out


def test_a_pod_no_controller_recreates_stops_the_drain_unless_forced(workload, tmp_path):
    cluster = workload
    cluster.kube.create(_kube.path("", "v1", "pods", namespace=NS), {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "scratch", "namespace": NS},
        "spec": {"nodeName": NODE, "containers": [{"name": "c", "image": "registry.example/scratch:1"}]}})
    rc, out, seen, _ran = _run(cluster, tmp_path, True)
    assert rc != 0 and seen is None, out[-6000:]
    assert "cannot delete Pods not managed by ReplicationController" in out and "%s/scratch" % NS in out
    assert "k8s_drain refused before evicting anything and undid its cordon" in out
    assert "unless host_network_drain_force: true (they are deleted for good)" in out
    assert "scratch" in _pods_on_node(cluster) and len(_pods_on_node(cluster)) == 3
    assert not _node(cluster)["spec"].get("unschedulable")
    # Forced: drained, the bare pod gone for good; label and cordon undone after.
    rc, out, seen, _ran = _run(cluster, tmp_path, True, host_network_drain_force=True)
    assert rc == 0, out[-6000:]
    assert "scratch" not in {p["metadata"]["name"] for p in seen["pods"]}
    node = _node(cluster)
    assert not node["spec"].get("unschedulable") and LABEL not in node["metadata"].get("labels", {})


def test_a_kubeconfig_given_as_content_reaches_no_sink_at_vvv(cluster, tmp_path):
    # Issue 43: the drain's cluster tasks got the mapping itself. Every run of this module gives the kubeconfig as content
    # and checks every sink (_run); a drain that works does so at -vvv in test_drain_around_a_vf_reset. Here -vvv, one
    # that fails at its first cluster task (a context the kubeconfig lacks), which must still tell the cause.
    rc, out, _seen, _ran = _run(cluster, tmp_path, True, verbosity=3, host_network_kube_context="no-such-context")
    assert rc != 0 and "no-such-context" in out, out[-4000:]

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A kubeconfig given as a mapping never reaches a log (issue 13, part 5).

site.yml runs the apply path (phases operator, sriov and verify in pod mode, pods scheduled) against the
real control plane of conftest.py, under ansible-runner as AWX runs it, with network_operator_kubeconfig
given in the inventory as a mapping that carries the cluster's real admin token (read from its kubeconfig
file, random per cluster start). The run must work (the token is the only credential it gets: KUBECONFIG
is unset), and the token must appear in no output sink: runner stdout, the ANSIBLE_LOG_PATH file, every
file of the runner's artifacts directory (job events, stdout, command), the rendered files and reports,
and any file left in the run's temporary directories. Once at default verbosity, which is what AWX
stores, and once with -vvv. A failing run (a namespace that does not exist) must still tell the cause.
"""

import base64
import json
import os
import sys

import ansible_runner
import pytest
import yaml
from k8s_helpers import REPO, chart_path

SITE = str(REPO / "playbooks" / "site.yml")
VENV_BIN = os.path.dirname(sys.executable)
SECRET_FILE = os.path.join("inventory", "group_vars", "k8s_controller.yml")


def _inventory(root, kubeconfig):
    inv = root / "inventory"
    (inv / "group_vars").mkdir(parents=True)
    (inv / "host_vars").mkdir()
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {
        "roce_nodes": {"hosts": {"node1": None, "node2": None}},
        "k8s_controller": {"hosts": {"localhost": {
            "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}},
    }}}))
    (inv / "group_vars" / "roce_nodes.yml").write_text(yaml.safe_dump(
        {"roce_pf": "enp157s0np0", "roce_num_vfs": 8, "roce_mtu": 9000, "roce_vlan_id": 100, "roce_vf_mode": "operator"}))
    for i, name in enumerate(("node1", "node2")):
        (inv / "host_vars" / ("%s.yml" % name)).write_text(yaml.safe_dump({
            "roce_node_name": name, "roce_pod_subnet": "10.255.0.%d/30" % (4 * i), "roce_pod_gateway": "10.255.0.%d" % (4 * i + 2)}))
    (inv / "group_vars" / "k8s_controller.yml").write_text(yaml.safe_dump({
        "roce_k8s_mode": "apply",
        "roce_render_dir": str(root / "render-out"),
        "rdma_verify_report_dir": str(root / "report"),
        "network_operator_chart_path": str(chart_path()),
        # The secret: the kubeconfig's content, not a path.
        "network_operator_kubeconfig": kubeconfig,
        "network_operator_helm_timeout": 600,
        "network_operator_ready_timeout": 300,
        "network_operator_poll_interval": 2,
        "sriov_networks_sync_timeout": 300,
        "sriov_networks_poll_interval": 2,
        "rdma_verify_pod_image": "registry.invalid/perftest:never-pulled",
        "rdma_verify_pod_ready_timeout": 120,
    }))


def _run(root, cluster, verbosity, extravars=None, tags="operator,sriov,verify"):
    tmp = root / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {
        "ANSIBLE_COLLECTIONS_PATH": str(REPO / ".build" / "collections"),
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_LOG_PATH": str(root / "ansible.log"),
        # Anything a module or helm leaves behind lands here and is searched too.
        "TMPDIR": str(tmp),
        "ANSIBLE_LOCAL_TEMP": str(tmp / "local"),
        "ANSIBLE_REMOTE_TEMP": str(tmp / "remote"),
        "PATH": "%s:%s" % (VENV_BIN, cluster.env["PATH"]),
        "HOME": os.environ.get("HOME", str(root)),
    }
    result = ansible_runner.run(
        private_data_dir=str(root), playbook=SITE, tags=tags, verbosity=verbosity, quiet=True, envvars=env,
        extravars=dict({"rdma_verify_mode": "pod", "rdma_verify_pod_action": "schedule"}, **(extravars or {})),
    )
    with result.stdout as f:
        stdout = f.read()
    return result, stdout


def _needles(token):
    # The token as written, and as a kubeconfig or an HTTP header would carry it encoded.
    return {token, base64.b64encode(token.encode()).decode(), "Bearer " + token}


def _leaks(root, stdout, needles):
    found = [("runner stdout", n) for n in needles if n in stdout]
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.relpath(path, root) == SECRET_FILE or os.path.islink(path):
                continue  # the inventory file is where the user put the secret
            with open(path, "rb") as f:
                data = f.read()
            found += [(os.path.relpath(path, root), n) for n in needles if n.encode() in data]
    return found


@pytest.fixture
def kubeconfig(own_cluster):
    os.environ.pop("KUBECONFIG", None)
    os.environ.pop("K8S_AUTH_KUBECONFIG", None)
    content = json.loads(own_cluster.kubeconfig.read_text(encoding="utf-8"))
    token = content["users"][0]["user"]["token"]
    assert len(token) >= 32  # random per cluster start: a match can only be a leak
    return content, token


@pytest.mark.parametrize("verbosity", [0, 3])
def test_kubeconfig_token_reaches_no_sink(own_cluster, kubeconfig, tmp_path, verbosity):
    content, token = kubeconfig
    root = tmp_path / ("v%d" % verbosity)
    _inventory(root, content)
    result, stdout = _run(root, own_cluster, verbosity)
    failed = [e["event_data"].get("task") for e in result.events if e.get("event") == "runner_on_failed"]
    assert result.status == "successful", "status %s rc %s failed tasks %s\n%s" % (result.status, result.rc, failed, stdout[-6000:])
    # The apply path really ran with the mapping: the chart was installed and the test pods were placed.
    assert "rdma-verify-node1" in stdout and "Ready on node1" in stdout, stdout[-4000:]
    assert (root / "ansible.log").stat().st_size > 0
    assert list((root / "artifacts").rglob("job_events/*.json"))
    assert _leaks(root, stdout, _needles(token)) == []


def test_a_failure_under_no_log_still_tells_its_cause(own_cluster, kubeconfig, tmp_path):
    # A namespace that does not exist (and is not created): helm fails. The task runs with no_log, so
    # its result is censored; the cause must still be printed, without the token. The name shares no
    # text with the kubeconfig: Ansible masks every string of a no_log value ("gpufabric", "admin",
    # "default", ...) wherever it appears in a message.
    content, token = kubeconfig
    root = tmp_path / "failing"
    _inventory(root, content)
    namespace = "roce-missing-ns"
    result, stdout = _run(root, own_cluster, 0, tags="operator", extravars={
        "network_operator_namespace": namespace, "network_operator_create_namespace": False})
    assert result.status == "failed", stdout[-4000:]
    assert _leaks(root, stdout, _needles(token)) == []
    flat = " ".join(stdout.split())
    assert "no_log: true" in flat  # the result itself is hidden
    # ... and the cause is shown: helm's own error, naming the namespace (release conflict or namespace not found).
    assert "Failure when executing Helm command" in flat and "Error:" in flat and namespace in flat, stdout[-4000:]

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

import json
import os
import re
import sys

import ansible_runner
import pytest
import yaml
from k8s_helpers import REPO, chart_path, chart_version, secret_leaks, token_needles

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
        "network_operator_chart_path": str(chart_path()), "network_operator_chart_version": chart_version(),
        # The secret: the kubeconfig's content, not a path.
        "network_operator_kubeconfig": kubeconfig,
        "network_operator_helm_timeout": 600,
        "network_operator_ready_timeout": 300,
        "network_operator_poll_interval": 2,
        "sriov_networks_sync_timeout": 300,
        "sriov_networks_poll_interval": 2,
        "rdma_verify_pod_image": "registry.invalid/perftest:never-pulled",
        "rdma_verify_pod_ready_timeout": 120,
        "rdma_verify_pod_poll_interval": 1,
    }))


def _run(root, cluster, verbosity, extravars=None, tags="operator,sriov,verify", *, cmdline=None):
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
        cmdline=cmdline,
    )
    with result.stdout as f:
        stdout = f.read()
    return result, stdout


def _needles(token):
    return token_needles(token)


def _leaks(root, stdout, needles):
    return secret_leaks(root, stdout, needles, skip=(SECRET_FILE,))


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


def test_a_failure_with_a_mapping_kubeconfig_tells_its_cause(own_cluster, kubeconfig, tmp_path):
    # A namespace that does not exist (and is not created): helm fails. The cluster tasks receive the path of a
    # private file, not the content, so they run without no_log: the cause is printed whole, without the token.
    content, token = kubeconfig
    root = tmp_path / "failing"
    _inventory(root, content)
    namespace = "roce-missing-ns"
    result, stdout = _run(root, own_cluster, 0, tags="operator", extravars={
        "network_operator_namespace": namespace, "network_operator_create_namespace": False})
    assert result.status == "failed", stdout[-4000:]
    assert _leaks(root, stdout, _needles(token)) == []
    flat = " ".join(stdout.split())
    if "already has 1 release(s) of the network-operator chart" in flat:
        # This module's earlier tests rolled the release out in the operator's namespace: the release planner refuses
        # the second namespace before helm runs (issue 17, brownfield), and says so in full.
        assert "This run manages release 'network-operator' in namespace '%s'" % namespace in flat, stdout[-4000:]
        assert "Nothing was changed. Fix:" in flat, stdout[-4000:]
    else:
        assert "Failure when executing Helm command" in flat and "Error:" in flat and namespace in flat, stdout[-4000:]
    # The private directory (kubeconfig file, Helm values) was removed although the play failed.
    assert not list(root.rglob("gpufabric-roce-*")), list(root.rglob("gpufabric-roce-*"))


def test_check_diff_with_a_mapping_kubeconfig_shows_real_diffs_and_no_secret(own_cluster, kubeconfig, tmp_path):
    # Issue 17: a mapping used to put every cluster task under no_log, so --check --diff said "changed" and
    # showed nothing. Now only the task that writes the private 0600 file is no_log; at -vvv, in the log file
    # and in the job events the token must still be absent, and the diffs of the cluster objects present.
    content, token = kubeconfig
    root = tmp_path / "check-diff"
    _inventory(root, content)
    # The release this module's first test rolled out (rolled out here when this test runs alone): check mode
    # on a cluster without the operator's CRDs is another matter (day one, issue 17).
    if "nicclusterpolicies.mellanox.com" not in own_cluster.run("kubectl", "get", "crd", "-o", "name").stdout:
        first, out = _run(root, own_cluster, 0, tags="operator,sriov")
        assert first.status == "successful", out[-4000:]
    # A value the cluster does not have (MTU 1500), so the policies differ whether or not a run applied them.
    result, stdout = _run(root, own_cluster, 3, tags="operator,sriov", cmdline="--check --diff", extravars={"roce_mtu": 1500})
    assert result.status == "successful", stdout[-6000:]
    stdout = re.sub(r"\x1b\[[0-9;]*m", "", stdout)
    # Censored: only the task that writes the private file, once per role that talks to the cluster, and the helm
    # install itself (skipped in check mode; its result carries the release's values, which may hold a secret: the
    # release planner shows the values diff instead).
    censored = [seg.split("]")[0] for seg in stdout.split("TASK [")[1:] if "the output has been hidden" in seg]
    assert censored and all(name.endswith("Kubeconfig | write it (mode 0600)") or "Helm release (atomic" in name
                            for name in censored), censored
    assert len([name for name in censored if name.endswith("Kubeconfig | write it (mode 0600)")]) == 2, censored
    assert "+++ after" in stdout and "SriovNetworkNodePolicy" in stdout, stdout[-6000:]
    assert '"mtu": 1500' in stdout or "mtu: 1500" in stdout or "+    mtu: 1500" in stdout, stdout[-6000:]
    assert (root / "ansible.log").stat().st_size > 0
    log = (root / "ansible.log").read_text(encoding="utf-8", errors="replace")
    assert "+++ after" in log
    assert _leaks(root, stdout, _needles(token)) == []
    assert not list(root.rglob("gpufabric-roce-kubeconfig.*"))


def test_a_kubeconfig_given_as_a_string_is_refused_without_echoing_it(own_cluster, kubeconfig, tmp_path):
    # The content pasted as a string (a common AWX mistake): refused by the variable check before any change,
    # naming the variable, never the value, in every sink and at -vvv.
    content, token = kubeconfig
    root = tmp_path / "string"
    _inventory(root, yaml.safe_dump(content))
    result, stdout = _run(root, own_cluster, 3, tags="operator")
    assert result.status == "failed", stdout[-4000:]
    flat = " ".join(stdout.split())
    assert "network_operator_kubeconfig" in flat and "is a string but not the path of a file on the controller" in flat, stdout[-4000:]
    needles = _needles(token) | {content["clusters"][0]["cluster"]["server"]}
    assert _leaks(root, stdout, needles) == []

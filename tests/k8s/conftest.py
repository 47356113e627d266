# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real control plane (lab/k8s/controlplane.py) for the session, and the real network-operator chart.

The binaries come from $KUBEBUILDER_ASSETS or ../shared/envtest, the chart from
$GPUFABRIC_NETWORK_OPERATOR_CHART or ../shared/charts: when they are missing the tests fail, with
the message of controlplane.py saying what to provide. They never skip.
"""

import json
import os
import subprocess
import time

import pytest
from k8s_helpers import APPLY_DELAY, CONTROLPLANE, HARDWARE, NAMESPACE, RELEASE, REPO, SYNC_DELAY, TIMINGS, Cluster, chart_path


def _control_plane(tmp_path_factory, name, hardware=None):
    """Start a control plane of its own (state dir, ports, nodes, stand-ins) and stop it afterwards."""
    state_dir = tmp_path_factory.mktemp(name) / "run"
    hw = state_dir.parent / "hardware.json"
    hw.write_text(json.dumps(hardware or HARDWARE), encoding="utf-8")
    t0 = time.time()
    proc = subprocess.run([*CONTROLPLANE, "--state-dir", str(state_dir), "start", "--hardware", str(hw),  # noqa: S603
                           "--standin-delay", str(SYNC_DELAY), "--standin-apply-delay", str(APPLY_DELAY)],
                          capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode:
        pytest.fail("controlplane.py start failed (exit %d):\n%s\n%s" % (proc.returncode, proc.stdout[-4000:], proc.stderr[-4000:]))
    TIMINGS["controlplane start (s)"] = round(time.time() - t0, 1)
    c = Cluster(state_dir)
    TIMINGS.update({"controlplane %s (s)" % k: v for k, v in c.info["timings_seconds"].items()})
    yield c
    c.kube.close()
    subprocess.run([*CONTROLPLANE, "--state-dir", str(state_dir), "stop"], capture_output=True, text=True, timeout=120, check=False)  # noqa: S603


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    yield from _control_plane(tmp_path_factory, "k8s")


@pytest.fixture(scope="module")
def own_cluster(tmp_path_factory):
    """For tests that roll the collection out (their helm release would collide with the session's)."""
    yield from _control_plane(tmp_path_factory, "k8s-own")


@pytest.fixture(scope="module")
def multirail_cluster(tmp_path_factory, request):
    """A control plane whose nodes have the PFs of the module's MULTIRAIL_HARDWARE (several RoCE NICs each)."""
    yield from _control_plane(tmp_path_factory, "k8s-multirail", request.module.MULTIRAIL_HARDWARE)


@pytest.fixture(scope="module")
def module_cluster(tmp_path_factory, request):
    """A control plane of the module's own (its CLUSTER_HARDWARE): for a cluster-wide state no other test may see,
    such as CRDs of an older chart (CRDs are cluster-scoped) or exactly one release of the chart."""
    yield from _control_plane(tmp_path_factory, "k8s-" + request.module.__name__.rsplit(".", 1)[-1], request.module.CLUSTER_HARDWARE)


@pytest.fixture(scope="session")
def helm_release(cluster):
    chart = chart_path()
    if not chart.is_file():
        pytest.fail("the network-operator chart %s does not exist: set GPUFABRIC_NETWORK_OPERATOR_CHART to the .tgz "
                    "or GPUFABRIC_SHARED_DIR to the directory holding charts/network-operator-26.4.1.tgz" % chart)
    t0 = time.time()
    proc = cluster.run("helm", "install", RELEASE, str(chart), "--namespace", NAMESPACE, "--create-namespace",
                       "--set", "sriovNetworkOperator.enabled=true", "--wait", "--timeout", "5m")
    TIMINGS["helm install --wait (s)"] = round(time.time() - t0, 1)
    return {"chart": chart, "output": proc.stdout}


def pytest_terminal_summary(terminalreporter):
    if TIMINGS:
        terminalreporter.write_line("tests/k8s timings: " + ", ".join("%s=%s" % kv for kv in TIMINGS.items()))
        out = REPO / "tests" / "output"
        out.mkdir(exist_ok=True)
        # make k8s runs two halves side by side (GPUFABRIC_K8S_HALF): a file each.
        half = os.environ.get("GPUFABRIC_K8S_HALF")
        (out / ("k8s-timings%s.json" % ("-" + half if half else ""))).write_text(json.dumps(TIMINGS, indent=2), encoding="utf-8")


def pytest_configure(config):
    config.addinivalue_line("markers", "stops_session_cluster: ends the session control plane; runs after every other test")


def pytest_collection_modifyitems(items):
    # The session control plane is stopped by a test of its own (nothing left behind): every test that uses the
    # cluster must run before it, whichever file sorts after test_standins.py.
    items.sort(key=lambda item: item.get_closest_marker("stops_session_cluster") is not None)

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 17, upgrades: the NicClusterPolicy's component versions follow network_operator_chart_version
(the release table, checked against the real charts' values.yaml), and an unknown version is refused
before anything changes unless every deployed component's version is given."""

import os
import re
import tarfile
from pathlib import Path

import pytest
import yaml
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import operator as op
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import RenderValidationError
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_checks import role_problems
from role_fallbacks import ncp_defaults

REPO = Path(__file__).resolve().parents[5]
CHARTS = Path(os.environ.get("GPUFABRIC_SHARED_DIR") or REPO.parent / "shared") / "charts"


def _chart_values(version):
    path = CHARTS / ("network-operator-%s.tgz" % version)
    if not path.is_file():
        pytest.fail("chart %s not found: set GPUFABRIC_SHARED_DIR to the directory holding charts/" % path)
    with tarfile.open(path) as tar:
        return yaml.safe_load(tar.extractfile("network-operator/values.yaml"))


def _nvidia_tags(node, found):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("tag", "version") and isinstance(value, str) and value.startswith("network-operator-v"):
                found.add(value)
            _nvidia_tags(value, found)
    elif isinstance(node, str):
        match = re.match(r"^nvcr\.io/nvidia/[^:]+:(network-operator-v.*)$", node)
        if match:
            found.add(match.group(1))
    return found


@pytest.mark.parametrize("version", ["26.1.2", "26.4.1"])
def test_release_table_matches_the_charts_values(version):
    """Every NVIDIA image tag of the chart's values.yaml is the table's component tag for that chart."""
    tags = _nvidia_tags(_chart_values(version), set())
    assert tags == {op.NCP_RELEASES[version]["components_tag"]}


@pytest.mark.parametrize("version", ["26.1.2", "26.4.1", "v26.1.2"])
def test_ncp_component_versions_follow_the_chart_version(version):
    ncp = op.render_nic_cluster_policy(ncp_defaults({"network_operator_chart_version": version, "network_operator_ofed_driver": True,
                                                     "network_operator_rdma_shared_device_plugin": True}))
    release = op.NCP_RELEASES[version.lstrip("v")]
    spec = ncp["spec"]
    for comp in (spec["secondaryNetwork"]["multus"], spec["secondaryNetwork"]["cniPlugins"], spec["nvIpam"], spec["rdmaSharedDevicePlugin"]):
        assert comp["version"] == release["components_tag"]
    assert spec["ofedDriver"]["version"] == release["ofed_driver"]


def test_the_default_chart_version_renders_as_before():
    assert op.render_nic_cluster_policy(ncp_defaults({})) == op.render_nic_cluster_policy(ncp_defaults({"network_operator_chart_version": "26.4.1"}))
    assert op.NCP_DEFAULT_IMAGES["multus"]["version"] == "network-operator-v26.4.1"


def test_unknown_chart_version_is_refused_with_the_fix():
    with pytest.raises(RenderValidationError) as exc:
        op.render_nic_cluster_policy(ncp_defaults({"network_operator_chart_version": "26.7.1"}))
    (err,) = exc.value.errors
    assert err["field"] == "network_operator_chart_version"
    assert err["value"] == "26.7.1"
    assert "known for chart 26.1.2, 26.4.1 only" in err["problem"]
    assert "multus, cni_plugins, nv_ipam" in err["problem"]
    assert "network_operator_images.multus.version" in err["fix"] and "network_operator_images.nv_ipam.version" in err["fix"]


def test_unknown_chart_version_with_every_deployed_version_given_renders():
    images = {c: {"version": "network-operator-v26.7.1"} for c in ("multus", "cni_plugins", "nv_ipam")}
    ncp = op.render_nic_cluster_policy(ncp_defaults({"network_operator_chart_version": "26.7.1", "network_operator_images": images}))
    assert ncp["spec"]["nvIpam"]["version"] == "network-operator-v26.7.1"
    assert ncp["spec"]["nvIpam"]["image"] == "nvidia-k8s-ipam"


def test_unknown_chart_version_is_refused_in_the_validation_play():
    """The cross-field rules of validate_role_arguments (before phase 1) refuse it too."""
    problems = role_problems("network_operator", {"network_operator_chart_version": "26.7.1"}, "localhost")
    assert [p[0] for p in problems] == ["network_operator_chart_version"]
    assert "network_operator_images.multus.version" in problems[0][3]

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

import k8s_crd_schema

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


@pytest.mark.parametrize("version", ["26.1.2", "26.4.1", "26.7.0-rc.2"])
def test_release_table_matches_the_charts_values(version):
    """Every NVIDIA image tag of the chart's values.yaml is the table's component tag for that chart."""
    tags = _nvidia_tags(_chart_values(version), set())
    assert tags == {op.NCP_RELEASES[version]["components_tag"]}


def test_the_rc_components_come_from_the_registry_of_its_chart():
    """The release candidate's chart pulls every NVIDIA image from the staging registry; so do its components."""
    values = _chart_values("26.7.0-rc.2")
    assert values["sriov-network-operator"]["images"]["sriovCni"].startswith(op.NCP_RELEASES["26.7.0-rc.2"]["repository"] + "/")
    assert {i["repository"] for i in op.ncp_default_images("26.7.0-rc.2").values()} == {"nvcr.io/nvstaging/mellanox"}
    assert {i["repository"] for i in op.ncp_default_images("26.7.1").values()} == {"nvcr.io/nvidia/mellanox"}


@pytest.mark.parametrize("version", ["26.1.2", "26.4.1", "v26.1.2", "26.7.0-rc.2"])
def test_ncp_component_versions_follow_the_chart_version(version):
    ncp = op.render_nic_cluster_policy(ncp_defaults({"network_operator_chart_version": version, "network_operator_ofed_driver": True,
                                                     "network_operator_rdma_shared_device_plugin": True}))
    release = op.NCP_RELEASES[version.lstrip("v")]
    spec = ncp["spec"]
    for comp in (spec["secondaryNetwork"]["multus"], spec["secondaryNetwork"]["cniPlugins"], spec["nvIpam"], spec["rdmaSharedDevicePlugin"]):
        assert comp["version"] == release["components_tag"]
    assert spec["ofedDriver"]["version"] == release["ofed_driver"]


def test_the_default_chart_version_is_the_roles():
    defaults = yaml.safe_load((REPO / "roles" / "network_operator" / "defaults" / "main.yml").read_text(encoding="utf-8"))
    assert defaults["network_operator_chart_version"] == op.DEFAULT_CHART_VERSION == "26.7.1"
    assert op.render_nic_cluster_policy(ncp_defaults({})) == op.render_nic_cluster_policy(ncp_defaults({"network_operator_chart_version": "26.7.1"}))
    assert op.NCP_DEFAULT_IMAGES["multus"]["version"] == "network-operator-v26.7.1"


def test_26_7_1_without_the_driver_renders_at_its_tag():
    spec = op.render_nic_cluster_policy(ncp_defaults({"network_operator_rdma_shared_device_plugin": True}))["spec"]
    assert {spec["secondaryNetwork"]["multus"]["version"], spec["nvIpam"]["version"], spec["rdmaSharedDevicePlugin"]["version"]} == {
        "network-operator-v26.7.1"}


def test_26_7_1_with_the_driver_needs_its_tag_from_the_release_notes():
    """The DOCA driver tag of 26.7.1 is in no source read here: deploying the driver without it is refused, naming the fix."""
    with pytest.raises(RenderValidationError) as exc:
        op.render_nic_cluster_policy(ncp_defaults({"network_operator_ofed_driver": True}))
    (err,) = exc.value.errors
    assert (err.host, err.field, err.value) == ("(cluster)", "network_operator_chart_version", "26.7.1")
    assert err.problem == "the release table has no ofed_driver tag for chart 26.7.1, so ofed_driver would have no image tag"
    assert err.fix == ("set network_operator_images.ofed_driver.version to the tag the release notes give "
                       "(https://github.com/Mellanox/network-operator/releases/tag/v26.7.1), or pin network_operator_chart_version to one of "
                       "26.1.2, 26.4.1, 26.7.0-rc.2")
    ncp = op.render_nic_cluster_policy(ncp_defaults({"network_operator_ofed_driver": True,
                                                     "network_operator_images": {"ofed_driver": {"version": "doca3.5.0-26.07-0.7.9.0-0"}}}))
    assert ncp["spec"]["ofedDriver"]["version"] == "doca3.5.0-26.07-0.7.9.0-0"
    problems = role_problems("network_operator", {"network_operator_ofed_driver": True}, "localhost")
    assert [p[0] for p in problems] == ["network_operator_chart_version"]


@pytest.mark.parametrize("version", sorted(op.NCP_RELEASES))
def test_every_release_renders_crd_valid_against_its_own_line(version):
    """The NicClusterPolicy of each release, everything deployed, against the CRDs of that release's line."""
    images = {} if op.NCP_RELEASES[version]["ofed_driver"] else {"ofed_driver": {"version": "doca3.5.0-26.07-0.7.9.0-0"}}
    ncp = op.render_nic_cluster_policy(ncp_defaults({
        "network_operator_chart_version": version, "network_operator_ofed_driver": True, "network_operator_rdma_shared_device_plugin": True,
        "network_operator_nic_configuration_operator": True, "network_operator_nv_ipam_enable_webhook": True, "network_operator_images": images}))
    crds = k8s_crd_schema.load_crds(line=k8s_crd_schema.crd_line(version))
    assert k8s_crd_schema.validate_object(ncp, crds) == []


def test_unknown_chart_version_is_refused_with_the_fix():
    with pytest.raises(RenderValidationError) as exc:
        op.render_nic_cluster_policy(ncp_defaults({"network_operator_chart_version": "26.10.0"}))
    (err,) = exc.value.errors
    assert err.field == "network_operator_chart_version"
    assert err.value == "26.10.0"
    assert "known for chart 26.1.2, 26.4.1, 26.7.0-rc.2, 26.7.1 only" in err.problem
    assert "multus, cni_plugins, nv_ipam" in err.problem
    assert "network_operator_images.multus.version" in err.fix and "network_operator_images.nv_ipam.version" in err.fix


def test_unknown_chart_version_with_every_deployed_version_given_renders():
    images = {c: {"version": "network-operator-v26.10.0"} for c in ("multus", "cni_plugins", "nv_ipam")}
    ncp = op.render_nic_cluster_policy(ncp_defaults({"network_operator_chart_version": "26.10.0", "network_operator_images": images}))
    assert ncp["spec"]["nvIpam"]["version"] == "network-operator-v26.10.0"
    assert ncp["spec"]["nvIpam"]["image"] == "nvidia-k8s-ipam"


def test_unknown_chart_version_is_refused_in_the_validation_play():
    """The cross-field rules of validate_role_arguments (before phase 1) refuse it too."""
    problems = role_problems("network_operator", {"network_operator_chart_version": "26.10.0"}, "localhost")
    assert [p[0] for p in problems] == ["network_operator_chart_version"]
    assert "network_operator_images.multus.version" in problems[0][3]

"""The NicClusterPolicy is checked against its CRD schema with the overrides merged in, before anything is
applied (plugins/module_utils/_k8s/ncp_schema.py), and the chart reference's helm command is shell-safe.

The embedded schema must be what tests/crds/gen_ncp_schema.py gives for the CRD in $GPUFABRIC_CRDS_DIR, and
the collection's own checker must agree with jsonschema on the tests' strict form of the same CRD.
"""

import copy
import os
import shlex
import subprocess
import sys

import jsonschema
import pytest
from k8s_crd_schema import crds_dir, load_crds

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import common
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import operator as op
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.ncp_schema import (
    NCP_SCHEMA_CHART_VERSION,
    NCP_SCHEMA_CHART_VERSIONS,
    NCP_SPEC_SCHEMA,
    schema_problems,
)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "crds"))
import gen_ncp_schema  # noqa: E402
from role_fallbacks import helm_defaults, ncp_defaults

CRD_FILE = "network-operator-v%s/mellanox.com_nicclusterpolicies.yaml" % NCP_SCHEMA_CHART_VERSION
# 26.7.1's DOCA driver tag is not in the release table: a user deploying the driver gives it.
OFED_TAG = {"ofed_driver": {"version": "doca3.5.0-26.07-0.7.1.0-0"}}


def test_the_embedded_schema_is_the_crds():
    assert gen_ncp_schema.spec_schema(os.path.join(crds_dir(), CRD_FILE)) == NCP_SPEC_SCHEMA


def test_26_7_has_the_same_spec_schema():
    """26.7 added status.conditions only: its spec schema is the embedded one, so the check holds for both lines."""
    assert NCP_SCHEMA_CHART_VERSIONS == ("26.4.1", "26.7.0-rc.2")
    path = os.path.join(crds_dir(), "network-operator-v26.7.0-rc.2", "network-operator", "mellanox.com_nicclusterpolicies.yaml")
    assert gen_ncp_schema.spec_schema(path) == NCP_SPEC_SCHEMA


def _full():
    return op.render_nic_cluster_policy(
        ncp_defaults({"network_operator_ofed_driver": True, "network_operator_rdma_shared_device_plugin": True,
                      "network_operator_images": OFED_TAG, "network_operator_airgap": {"image_pull_secrets": ["p"]}}))


# (id, overrides merged into the spec, valid?)
SPECS = [
    ("defaults", {}, True),
    ("force-precompiled", {"ofedDriver": {"forcePrecompiled": True}}, True),
    ("tolerations", {"tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]}, True),
    ("ofed-env", {"ofedDriver": {"env": [{"name": "UNLOAD_STORAGE_MODULES", "value": "true"}]}}, True),
    ("int-or-string-probe", {"ofedDriver": {"upgradePolicy": {"maxParallelUpgrades": 1, "autoUpgrade": True}}}, True),
    ("unknown-top-level", {"bogus": 1}, False),
    ("typo-in-component", {"ofedDriver": {"forcePrecompiledd": True}}, False),
    ("tolerations-not-a-list", {"tolerations": "gpu"}, False),
    ("version-not-a-string", {"secondaryNetwork": {"multus": {"version": 5}}}, False),
    ("bool-as-string", {"nvIpam": {"enableWebhook": "yes"}}, False),
    ("pattern", {"nicConfigurationOperator": {"nicFirmwareStorage": {"availableStorageSize": "1GB"}}}, False),
    ("null-component-field", {"ofedDriver": {"repository": None}}, False),
    ("probe-negative-or-wrong-type", {"ofedDriver": {"startupProbe": {"periodSeconds": "often"}}}, False),
]


@pytest.mark.parametrize("overrides,valid", [(o, v) for _i, o, v in SPECS], ids=[i for i, _o, _v in SPECS])
def test_the_checker_agrees_with_jsonschema_on_the_crd(overrides, valid):
    policy = _full()
    policy["spec"] = op.deep_merge(policy["spec"], overrides)
    crd = load_crds()[(op.NCP_API_VERSION, "NicClusterPolicy")]
    upstream = list(jsonschema.Draft7Validator(crd["schema"]).iter_errors(policy))
    ours = schema_problems(policy["spec"], path="spec")
    assert (not upstream) == valid, [e.message for e in upstream]
    assert (not ours) == valid, ours


@pytest.mark.parametrize("overrides,valid", [(o, v) for _i, o, v in SPECS], ids=[i for i, _o, _v in SPECS])
def test_bad_overrides_are_refused_before_anything_applies(overrides, valid):
    cfg = {
        "network_operator_ofed_driver": True,
        "network_operator_rdma_shared_device_plugin": True,
        "network_operator_images": OFED_TAG,
        "network_operator_airgap": {"image_pull_secrets": ["p"]},
        "network_operator_nic_cluster_policy_overrides": copy.deepcopy(overrides),
    }
    if valid:
        op.render_nic_cluster_policy(ncp_defaults(cfg))
        return
    with pytest.raises(common.RenderValidationError) as info:
        op.render_nic_cluster_policy(ncp_defaults(cfg))
    for err in info.value.errors:
        assert err.host == "(cluster)" and err.field.startswith("network_operator_nic_cluster_policy_overrides."), err
        assert "fails the CRD schema of network-operator 26.4.1 and 26.7.0-rc.2" in err.problem and err.fix


def test_an_unknown_key_is_named_with_the_fields_the_crd_knows_there():
    with pytest.raises(common.RenderValidationError) as info:
        op.render_nic_cluster_policy(ncp_defaults({"network_operator_nic_cluster_policy_overrides": {"nvIpam": {"enableWebhok": True}}}))
    (err,) = info.value.errors
    assert str(err) == (
        "(cluster): network_operator_nic_cluster_policy_overrides.nvIpam.enableWebhok=true: is not a field of the CRD: "
        "the merged NicClusterPolicy fails the CRD schema of network-operator 26.4.1 and 26.7.0-rc.2 at spec.nvIpam.enableWebhok. "
        "Fix: remove it from network_operator_nic_cluster_policy_overrides, or use a field the CRD knows at spec.nvIpam: "
        "containerResources, enableWebhook, image, imagePullSecrets, repository, version"
    )


def test_a_component_the_overrides_turn_into_a_string_is_refused():
    with pytest.raises(common.RenderValidationError) as info:
        op.render_nic_cluster_policy(ncp_defaults({"network_operator_nic_cluster_policy_overrides": {"secondaryNetwork": "multus"}}))
    assert [e.field for e in info.value.errors] == ["network_operator_nic_cluster_policy_overrides.secondaryNetwork"]


# ------------------------------------------------------------------------------ helm_command

HOSTILE_URL = "https://charts.example/nv?a=1&b=$(touch${IFS}%s);x|y>z`id`"


def test_helm_command_is_unchanged_for_the_default_chart():
    ref = op.render_chart_reference(helm_defaults({}))
    assert ref["helm_command"] == (
        "helm upgrade --install network-operator network-operator --repo https://helm.ngc.nvidia.com/nvidia --version 26.7.1 "
        "--namespace nvidia-network-operator --create-namespace -f helm-values.yaml"
    )


def test_helm_command_quotes_a_repo_url_with_shell_metacharacters(tmp_path):
    marker = tmp_path / "pwned"
    url = "https://charts.example/nv?a=1&b=$(touch${IFS}%s);x|y>z" % marker
    ref = op.render_chart_reference(helm_defaults({"network_operator_chart_repo_url": url}))
    argv = shlex.split(ref["helm_command"])
    assert argv[argv.index("--repo") + 1] == url
    # What a shell does with it: printf stands in for helm, each argument on a line of its own.
    out = subprocess.run(["/bin/sh", "-c", "printf '%s\\n' " + ref["helm_command"][len("helm ") :]], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert out.stdout.splitlines() == argv[1:]
    assert not marker.exists() and os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "url",
    ["https://charts.example/a b", "ftp://charts.example/", "charts.example/nvidia", "https://x/`id`", "https://x/'q'", "https://x/\nrm -rf /", ""],
)
def test_a_repo_url_that_is_no_url_is_refused(url):
    with pytest.raises(common.RenderValidationError) as info:
        op.render_chart_reference(helm_defaults({"network_operator_chart_repo_url": url}))
    (err,) = info.value.errors
    assert err.field == "network_operator_chart_repo_url" and "https://helm.ngc.nvidia.com/nvidia" in err.fix


@pytest.mark.parametrize("url", ["https://helm.ngc.nvidia.com/nvidia", "oci://registry.local:5000/charts", "http://10.0.0.1:8080/charts?token=a&b=c"])
def test_real_repo_urls_pass(url):
    assert op.render_chart_reference(helm_defaults({"network_operator_chart_repo_url": url}))["repository"] == url


def test_chart_name_and_version_are_strict():
    with pytest.raises(common.RenderValidationError) as info:
        op.render_chart_reference(helm_defaults({"network_operator_chart_name": "network-operator;id", "network_operator_chart_version": "26.4.1-rc1;id"}))
    assert sorted(e.field for e in info.value.errors) == ["network_operator_chart_name", "network_operator_chart_version"]
    assert op.render_chart_reference(helm_defaults({"network_operator_chart_version": "v26.4.1-rc.1+build.5"}))["version"] == "v26.4.1-rc.1+build.5"

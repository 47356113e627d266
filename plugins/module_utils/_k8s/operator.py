# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The network-operator Helm release (values, chart reference, air-gapped relocation) and the
NicClusterPolicy the chart no longer deploys (since 24.10)."""

import json
import re
import shlex

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import dra
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import (
    DNS_LABEL_RE,
    DNS_SUBDOMAIN_RE,
    _as_bool,
    _Errors,
    _is_unset,
    require_keys,
    plain,
    deep_merge,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.ncp_schema import NCP_SCHEMA_CHART_VERSIONS, schema_problems

NCP_API_VERSION = "mellanox.com/v1alpha1"
NCP_NAME = "nic-cluster-policy"  # the operator only reconciles a NicClusterPolicy with this name
IMAGE_NAME_RE = re.compile(r"^[a-zA-Z0-9\-]+\Z")
REPOSITORY_RE = re.compile(r"^[a-zA-Z0-9.\-/:]+\Z")
REGISTRY_RE = re.compile(r"^[a-zA-Z0-9.\-]+(:[0-9]+)?(/[a-zA-Z0-9._\-]+)*\Z")
# An exact chart version (semver, optional v, pre-release/build of [0-9A-Za-z.-]).
CHART_VERSION_RE = re.compile(r"^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?\Z", re.ASCII)
CHART_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z", re.ASCII)
# A chart repository: http(s) or OCI, a host, no whitespace, quotes, backslashes or control characters.
CHART_REPO_RE = re.compile(r"^(https?|oci)://[A-Za-z0-9\[][^\s'\"`\\\x00-\x1f\x7f]*\Z", re.ASCII)
NCP_IPAM_MODES = ("nv-ipam", "whereabouts", "none")

# ---------------------------------------------------------------------------------------------
# Every image a network-operator chart's values reference (its values.yaml), per chart version,
# as (path in values, kind, default). kind "ref": full image reference; "repo": a repository
# prefix the chart joins with an image name; "repo_full": repository including the image name.


def _chart_images(tag, mellanox, operator_repo):
    """The image keys of the 26.x charts: NVIDIA's images under ``mellanox`` with ``tag``, the operator under ``operator_repo``."""
    sriov = (("operator", "sriov-network-operator"), ("sriovConfigDaemon", "sriov-network-operator-config-daemon"), ("sriovCni", "sriov-cni"),
             ("ibSriovCni", "ib-sriov-cni"), ("ovsCni", "ovs-cni-plugin"), ("rdmaCni", "rdma-cni"),
             ("sriovDevicePlugin", "sriov-network-device-plugin"), ("sriovDraDriver", "dra-driver-sriov"))
    return (
        (("operator", "repository"), "repo", operator_repo),
        (("operator", "ofedDriver", "initContainer", "repository"), "repo", mellanox),
        (("node-feature-discovery", "image", "repository"), "repo_full", mellanox + "/node-feature-discovery"),
        (("maintenance-operator-chart", "operator", "image", "repository"), "repo", mellanox),
    ) + tuple((("sriov-network-operator", "images", key), "ref", "%s/%s:%s" % (mellanox, image, tag)) for key, image in sriov) + (
        (("sriov-network-operator", "images", "resourcesInjector"), "ref", "ghcr.io/k8snetworkplumbingwg/network-resources-injector:v1.7.0"),
        (("sriov-network-operator", "images", "webhook"), "ref", "%s/sriov-network-operator-webhook:%s" % (mellanox, tag)),
    )


CHART_IMAGES = {
    # chart-values.yaml of ../shared/crds/network-operator-v26.4.1 (tests/unit/.../test_k8s_render.py compares).
    "26.4.1": _chart_images("network-operator-v26.4.1", "nvcr.io/nvidia/mellanox", "nvcr.io/nvidia/cloud-native"),
    # The release candidate's chart (../shared/charts) pulls from NVIDIA's staging registry.
    "26.7.0-rc.2": _chart_images("network-operator-v26.7.0-rc.2", "nvcr.io/nvstaging/mellanox", "nvcr.io/nvstaging/mellanox"),
    # 26.7.1's chart is not in any snapshot here: its keys are the rc.2 chart's; the registries and tags are those of
    # NVIDIA's 26.7.1 image list (docs.nvidia.com/networking/display/kubernetes2671/advanced/images-sha256.html).
    "26.7.1": _chart_images("network-operator-v26.7.1", "nvcr.io/nvidia/mellanox", "nvcr.io/nvidia/cloud-native"),
}

# Where each chart (and sub-chart) takes its pull secrets, and in which shape.
# "names": a list of secret names; "refs": a list of {name: <secret>} (upstream NFD chart).
CHART_PULL_SECRETS = (
    (("imagePullSecrets",), "names"),
    (("sriov-network-operator", "imagePullSecrets"), "names"),
    # The maintenance chart writes its value verbatim into the pod spec (toJson), so it needs refs.
    (("maintenance-operator-chart", "imagePullSecrets"), "refs"),
    (("node-feature-discovery", "imagePullSecrets"), "refs"),
)

# The release table: NicClusterPolicy component images per network-operator chart version, so the
# components follow the chart. Every NVIDIA image in a chart's values.yaml carries the tag
# network-operator-v<chart version> (tests/unit/.../test_k8s_release_table.py checks that against the
# charts in ../shared/charts), and NVIDIA's NicClusterPolicy reference for the release uses the same tag
# for Multus, the CNI plugins, nv-ipam and the RDMA shared device plugin. The DOCA driver is not in the
# chart: its tag is the release notes' (github.com/Mellanox/network-operator/releases/tag/v<version>), or the
# release's hack/release.yaml (Mofed) for a release candidate. ``repository`` replaces the components' registry
# (a release candidate's images are in NVIDIA's staging registry). ``ofed_driver: None``: the DOCA driver tag of
# that release is not known here, so deploying the driver needs network_operator_images.ofed_driver.version.
NCP_RELEASES = {
    "26.1.2": {"components_tag": "network-operator-v26.1.2", "ofed_driver": "doca3.3.0-26.01-1.0.0.0-6"},
    "26.4.1": {"components_tag": "network-operator-v26.4.1", "ofed_driver": "doca3.4.1-26.04-1.1.0.0-1"},
    "26.7.0-rc.2": {"components_tag": "network-operator-v26.7.0-rc.2", "ofed_driver": "doca3.5.0-26.07-0.7.1.0-0",
                    "repository": "nvcr.io/nvstaging/mellanox"},
    "26.7.1": {"components_tag": "network-operator-v26.7.1", "ofed_driver": None},
}
# Where the release notes name a release's component tags (the fix of a refusal points there).
RELEASE_NOTES = "https://github.com/Mellanox/network-operator/releases/tag/v%s"
NCP_COMPONENT_IMAGES = {
    "multus": {"repository": "nvcr.io/nvidia/mellanox", "image": "multus-cni"},
    "cni_plugins": {"repository": "nvcr.io/nvidia/mellanox", "image": "plugins"},
    "nv_ipam": {"repository": "nvcr.io/nvidia/mellanox", "image": "nvidia-k8s-ipam"},
    "rdma_shared_device_plugin": {"repository": "nvcr.io/nvidia/mellanox", "image": "k8s-rdma-shared-dev-plugin"},
    "ofed_driver": {"repository": "nvcr.io/nvidia/mellanox", "image": "doca-driver"},
    # The NIC Configuration Operator and its daemon (network-operator hack/release.yaml: nicConfigurationOperator,
    # nicConfigurationConfigDaemon; images named as in nic-configuration-operator's chart values). The network-operator
    # chart's values.yaml carries no NicClusterPolicy image defaults since 24.10.
    "nic_configuration_operator": {"repository": "nvcr.io/nvidia/mellanox", "image": "nic-configuration-operator"},
    "nic_configuration_daemon": {"repository": "nvcr.io/nvidia/mellanox", "image": "nic-configuration-operator-daemon"},
}
NIC_CONFIGURATION_LOG_LEVELS = ("info", "debug")


def release_key(version):
    """The release table's key of a chart version (26.4.1 for 26.4.1 and v26.4.1), or None."""
    key = str(version)[1:] if str(version).startswith("v") else str(version)
    return key if key in NCP_RELEASES else None


def ncp_default_images(version):
    """Component images of the NicClusterPolicy for a chart version of the release table (version "" where unknown)."""
    release = NCP_RELEASES[release_key(version)]
    return {
        comp: dict(img, repository=release.get("repository") or img["repository"],
                   version=(release["ofed_driver"] or "") if comp == "ofed_driver" else release["components_tag"])
        for comp, img in NCP_COMPONENT_IMAGES.items()
    }


# The default chart version (roles/network_operator/defaults/main.yml; a unit test keeps the two equal), and its defaults.
DEFAULT_CHART_VERSION = "26.7.1"
NCP_DEFAULT_IMAGES = ncp_default_images(DEFAULT_CHART_VERSION)


def chart_line(version):
    """(major, minor) of a chart version (26.7 for 26.7.0-rc.2 and v26.7.1), or None when it is not one."""
    match = re.match(r"^v?([0-9]+)\.([0-9]+)\.", str(version or ""))
    return (int(match.group(1)), int(match.group(2))) if match else None


# The first chart line of each feature the collection renders or waits on differently.
CHART_FEATURES = {
    "node_policies": (26, 4),  # the NicNodePolicy CRD
    "conditions": (26, 7),  # status.conditions on NicClusterPolicy and NicNodePolicy
    "keep_ncp": (26, 7),  # the keep-ncp hook and its keepNCP value
    "dra": (26, 7),  # the sriov-network-operator's DRA driver image and its CRDs (SriovResourcePolicy, DeviceAttributes)
}


def chart_has(version, feature):
    """Whether a chart version (26.7.0-rc.2, v26.7.1) has ``feature`` of CHART_FEATURES; False when it is not a version."""
    line = chart_line(version)
    return line is not None and line >= CHART_FEATURES[feature]


# The role variables each renderer reads. Their defaults are not written here: the caller passes every one (the
# filters of plugins/filter/k8s_render.py, and the role-argument check, fill in what they were not given from
# roles/network_operator/defaults/main.yml, plugin_utils/_role_defaults.py).
# network_operator_nic_configuration_operator is optional: its role default is derived from roce_qos_via, and
# without it the NIC Configuration Operator is not deployed.
NCP_DEFAULT_KEYS = (
    "network_operator_chart_version",
    "network_operator_ipam",
    "network_operator_nv_ipam_enable_webhook",
    "network_operator_ofed_driver",
    "network_operator_rdma_shared_device_plugin",
    "network_operator_nic_configuration_log_level",
    "network_operator_rdma_shared_device_plugin_config",
    "network_operator_images",
    "network_operator_airgap",
    "network_operator_nic_cluster_policy_overrides",
)

HELM_DEFAULT_KEYS = (
    "network_operator_chart_repo_url",
    "network_operator_chart_name",
    "network_operator_chart_version",
    "network_operator_chart_path",
    "network_operator_release_name",
    "network_operator_namespace",
    "network_operator_nfd_enabled",
    "network_operator_sriov_enabled",
    "network_operator_resource_prefix",
    "network_operator_helm_values_overrides",
    "network_operator_airgap",
)


def _complete(cfg, keys, what, filter_name):
    """``cfg`` without its unset (None) values, refused when it lacks a key of ``keys``."""
    cfg = {k: v for k, v in (cfg or {}).items() if v is not None}
    require_keys(cfg, keys, what, filter_name)
    return cfg


AIRGAP_KEYS = ("registry", "preserve_path", "image_pull_secrets")


def _split_registry(ref):
    first, _sep, rest = ref.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first, rest
    return "docker.io", ref


def relocate_image(ref, registry, preserve_path=True, kind="ref"):
    """Point an image reference or repository at ``registry``.

    ``kind`` is "ref" (``repo/name:tag``), "repo_full" (a repository ending in the image name) or "repo"
    (a repository prefix the image name is appended to). ``nvcr.io/nvidia/mellanox/sriov-cni:v1`` with
    ``registry.local:5000/mirror`` becomes ``registry.local:5000/mirror/nvidia/mellanox/sriov-cni:v1``
    (preserve_path) or ``registry.local:5000/mirror/sriov-cni:v1`` (flattened); a "repo" prefix such as
    ``nvcr.io/nvidia/mellanox`` becomes ``registry.local:5000/mirror/nvidia/mellanox`` or, flattened,
    ``registry.local:5000/mirror``.
    """
    registry = registry.rstrip("/")
    _host, path = _split_registry(ref)
    if preserve_path:
        return "%s/%s" % (registry, path)
    if kind == "repo":
        return registry
    return "%s/%s" % (registry, path.rsplit("/", 1)[-1])


def _set_path(d, path, value):
    for k in path[:-1]:
        d = d.setdefault(k, {})
    d[path[-1]] = value


def _check_airgap(errs, airgap, field="network_operator_airgap"):
    if airgap in (None, ""):
        return {}
    if not isinstance(airgap, dict):
        errs.add("(cluster)", field, airgap, "must be a mapping", "write {registry: <host[:port]/path>, preserve_path: true, image_pull_secrets: [<secret>]}")
        return None
    unknown = sorted(set(airgap) - set(AIRGAP_KEYS))
    if unknown:
        errs.add("(cluster)", field, unknown, "unknown key(s)", "use only %s" % ", ".join(AIRGAP_KEYS))
    registry = airgap.get("registry") or ""
    if registry and (not isinstance(registry, str) or not REGISTRY_RE.match(registry)):
        errs.add(
            "(cluster)",
            field + ".registry",
            registry,
            "not a registry/repository prefix",
            "write host[:port][/path] without scheme or trailing slash, e.g. registry.local:5000/nvidia-mirror",
        )
    secrets = airgap.get("image_pull_secrets") or []
    if not isinstance(secrets, list) or not all(isinstance(s, str) and DNS_SUBDOMAIN_RE.match(s) for s in secrets):
        errs.add(
            "(cluster)",
            field + ".image_pull_secrets",
            secrets,
            "must be a list of Secret names",
            "e.g. [ngc-pull-secret]; create the Secrets in the operator namespace first",
        )
    preserve = airgap.get("preserve_path", True)
    if not isinstance(preserve, bool):
        errs.add(
            "(cluster)",
            field + ".preserve_path",
            preserve,
            "must be a boolean",
            "true keeps nvidia/mellanox/... under the registry, false flattens to <registry>/<image>",
        )
    return {"registry": registry, "preserve_path": preserve is not False, "image_pull_secrets": list(secrets) if isinstance(secrets, list) else []}


def render_helm_values(cfg=None):
    """Return the Helm values for the network-operator release.

    Keys of ``cfg`` are the role variables (every key of HELM_DEFAULT_KEYS). The overrides
    (``network_operator_helm_values_overrides``) are deep-merged last and always win.
    """
    cfg = _complete(cfg, HELM_DEFAULT_KEYS, "render_helm_values", "network_operator_helm_values")
    errs = _Errors()
    for key in ("network_operator_nfd_enabled", "network_operator_sriov_enabled"):
        _as_bool(errs, "(cluster)", key, cfg[key])
    prefix = cfg["network_operator_resource_prefix"]
    if not isinstance(prefix, str) or not DNS_SUBDOMAIN_RE.match(prefix):
        errs.add("(cluster)", "network_operator_resource_prefix", prefix, "not a valid resource prefix", "use e.g. nvidia.com")
    overrides = cfg["network_operator_helm_values_overrides"] or {}
    if not isinstance(overrides, dict):
        errs.add(
            "(cluster)",
            "network_operator_helm_values_overrides",
            overrides,
            "must be a mapping of Helm values",
            "write it as YAML values, e.g. {operator: {nodeSelector: {...}}}",
        )
        overrides = {}
    airgap = _check_airgap(errs, cfg["network_operator_airgap"])
    version = str(cfg["network_operator_chart_version"])
    if cfg.get("sriov_networks_resource_api") == "dra" and not chart_has(version, "dra"):
        newer = ", ".join(v for v in sorted(NCP_RELEASES) if chart_has(v, "dra"))
        errs.add("(cluster)", "sriov_networks_resource_api", "dra",
                 "network-operator chart %s has no DRA driver for SR-IOV (dra-driver-sriov and its CRDs came with 26.7)" % version,
                 "set network_operator_chart_version to a 26.7 release (%s), or sriov_networks_resource_api: device-plugin" % newer)
    if airgap and airgap.get("registry") and version not in CHART_IMAGES:
        errs.add(
            "(cluster)",
            "network_operator_chart_version",
            version,
            "the image list for air-gapped relocation is only known for chart %s" % ", ".join(sorted(CHART_IMAGES)),
            "pin network_operator_chart_version to a known version, or add the chart's image keys to CHART_IMAGES in plugins/module_utils/_k8s/operator.py",
        )
    errs.raise_if_any()

    values = {
        # The chart's NodeFeatureRule is gated on deployNodeFeatureRules, not on nfd.enabled, and its CRD
        # comes with the NFD sub-chart: without NFD the rule would fail the whole install.
        "nfd": {"enabled": cfg["network_operator_nfd_enabled"], "deployNodeFeatureRules": cfg["network_operator_nfd_enabled"]},
        "sriovNetworkOperator": {"enabled": cfg["network_operator_sriov_enabled"]},
        "sriov-network-operator": {"operator": {"resourcePrefix": prefix}},
    }
    # Optional: a caller without it (a playbook of the user's) keeps the device plugin, the chart's default.
    values = deep_merge(values, dra.helm_values(cfg.get("sriov_networks_resource_api")))
    if airgap:
        if airgap["registry"]:
            for path, kind, default in CHART_IMAGES[version]:
                _set_path(values, path, relocate_image(default, airgap["registry"], airgap["preserve_path"], kind))
        if airgap["image_pull_secrets"]:
            for path, shape in CHART_PULL_SECRETS:
                secrets = airgap["image_pull_secrets"]
                _set_path(values, path, [{"name": s} for s in secrets] if shape == "refs" else list(secrets))
    return plain(deep_merge(values, overrides))


def render_chart_reference(cfg=None, values_file="helm-values.yaml"):
    cfg = _complete(cfg, HELM_DEFAULT_KEYS, "render_chart_reference", "network_operator_chart_reference")
    errs = _Errors()
    ns = cfg["network_operator_namespace"]
    if not isinstance(ns, str) or not DNS_LABEL_RE.match(ns) or len(ns) > 63:
        errs.add("(cluster)", "network_operator_namespace", ns, "not a valid namespace name", "use a DNS-1123 label, e.g. nvidia-network-operator")
    release = cfg["network_operator_release_name"]
    if not isinstance(release, str) or not DNS_LABEL_RE.match(release) or len(release) > 53:
        errs.add("(cluster)", "network_operator_release_name", release, "not a valid Helm release name (DNS label, max 53 chars)", "use e.g. network-operator")
    version = cfg["network_operator_chart_version"]
    if _is_unset(version) or not CHART_VERSION_RE.match(str(version)):
        errs.add("(cluster)", "network_operator_chart_version", version, "not a chart version", "pin an exact chart version, e.g. %s" % DEFAULT_CHART_VERSION)
    repo, chart = cfg["network_operator_chart_repo_url"], cfg["network_operator_chart_name"]
    if not isinstance(repo, str) or not CHART_REPO_RE.match(repo):
        errs.add(
            "(cluster)",
            "network_operator_chart_repo_url",
            repo,
            "not a chart repository URL (http://, https:// or oci://, no spaces, quotes or control characters)",
            "set network_operator_chart_repo_url to the repository URL, e.g. https://helm.ngc.nvidia.com/nvidia or oci://registry.local/charts",
        )
    if not isinstance(chart, str) or not CHART_NAME_RE.match(chart):
        errs.add(
            "(cluster)", "network_operator_chart_name", chart, "not a chart name", "use the chart's name as in the repository index, e.g. network-operator"
        )
    path = cfg["network_operator_chart_path"]
    if path is not None and not isinstance(path, str):
        errs.add("(cluster)", "network_operator_chart_path", path, "not a path", "give the chart archive or directory as a string, or leave it empty")
    errs.raise_if_any()
    # Every argument quoted: the command is written into helm-chart.yaml for a human or a pipeline to run.
    # A local chart (air-gapped) is the chart itself: no repository, and its version is the archive's own.
    source = [path] if path else [chart, "--repo", repo, "--version", str(version)]
    argv = ["helm", "upgrade", "--install", release] + source + ["--namespace", ns, "--create-namespace", "-f", values_file]
    ref = {
        "repository": repo,
        "chart": chart,
        "version": str(version),
        "release_name": release,
        "namespace": ns,
        "values_file": values_file,
        "helm_command": " ".join(shlex.quote("%s" % a) for a in argv),
    }
    if path:
        ref["chart_path"] = path
    return ref


def render_nic_cluster_policy(cfg=None):
    """Return the NicClusterPolicy object (cluster-scoped, name ``nic-cluster-policy``)."""
    cfg = _complete(cfg, NCP_DEFAULT_KEYS, "render_nic_cluster_policy", "nic_cluster_policy")
    cfg.setdefault("network_operator_nic_configuration_operator", False)  # optional: absent, the operator is not deployed
    errs = _Errors()
    ipam = cfg["network_operator_ipam"]
    if ipam not in NCP_IPAM_MODES:
        errs.add("(cluster)", "network_operator_ipam", ipam, "unknown IPAM component", "set network_operator_ipam to nv-ipam, whereabouts or none")
    flags = {}
    for key in ("network_operator_ofed_driver", "network_operator_rdma_shared_device_plugin", "network_operator_nv_ipam_enable_webhook",
                "network_operator_nic_configuration_operator"):
        flags[key] = _as_bool(errs, "(cluster)", key, cfg[key])
    log_level = cfg["network_operator_nic_configuration_log_level"]
    if flags["network_operator_nic_configuration_operator"] and log_level not in NIC_CONFIGURATION_LOG_LEVELS:
        errs.add("(cluster)", "network_operator_nic_configuration_log_level", log_level, "not a log level of the NIC Configuration Operator",
                 "set it to info or debug")
    images = cfg["network_operator_images"] or {}
    if not isinstance(images, dict):
        errs.add(
            "(cluster)", "network_operator_images", images, "must be a mapping of component to {repository, image, version}", "e.g. {multus: {version: v4.1.0}}"
        )
        images = {}
    unknown = sorted(set(images) - set(NCP_COMPONENT_IMAGES))
    if unknown:
        errs.add("(cluster)", "network_operator_images", unknown, "unknown component(s)", "use only %s" % ", ".join(sorted(NCP_COMPONENT_IMAGES)))
    resolved = _resolve_images(errs, cfg["network_operator_chart_version"], images, _deployed_components(ipam, flags))
    rdma_cfg = cfg["network_operator_rdma_shared_device_plugin_config"]
    if flags.get("network_operator_rdma_shared_device_plugin"):
        if isinstance(rdma_cfg, str):
            try:
                json.loads(rdma_cfg)
            except ValueError:
                errs.add(
                    "(cluster)",
                    "network_operator_rdma_shared_device_plugin_config",
                    rdma_cfg,
                    "not valid JSON",
                    "give a mapping (it is serialised for you) or a JSON string",
                )
        elif not isinstance(rdma_cfg, dict) or "configList" not in rdma_cfg:
            errs.add(
                "(cluster)",
                "network_operator_rdma_shared_device_plugin_config",
                rdma_cfg,
                "must be a mapping with configList",
                "e.g. {configList: [{resourceName: rdma_shared_device_a, rdmaHcaMax: 63, selectors: {vendors: ['15b3']}}]}",
            )
    overrides = cfg["network_operator_nic_cluster_policy_overrides"] or {}
    if not isinstance(overrides, dict):
        errs.add("(cluster)", "network_operator_nic_cluster_policy_overrides", overrides, "must be a mapping merged into spec", "e.g. {tolerations: [...]}")
        overrides = {}
    airgap = _check_airgap(errs, cfg["network_operator_airgap"])
    errs.raise_if_any()

    secrets = (airgap or {}).get("image_pull_secrets") or []

    def component(comp, **extra):
        img = resolved[comp]
        repo = img["repository"]
        if airgap and airgap.get("registry"):
            repo = relocate_image(repo, airgap["registry"], airgap["preserve_path"], "repo")
        out = {"image": img["image"], "repository": repo, "version": img["version"]}
        if secrets:
            out["imagePullSecrets"] = list(secrets)
        out.update(extra)
        return out

    spec = {"secondaryNetwork": {"multus": component("multus"), "cniPlugins": component("cni_plugins")}}
    if ipam == "nv-ipam":
        spec["nvIpam"] = component("nv_ipam", enableWebhook=flags["network_operator_nv_ipam_enable_webhook"])
    if flags["network_operator_ofed_driver"]:
        spec["ofedDriver"] = component(
            "ofed_driver",
            startupProbe={"initialDelaySeconds": 10, "periodSeconds": 20},
            livenessProbe={"initialDelaySeconds": 30, "periodSeconds": 30},
            readinessProbe={"initialDelaySeconds": 10, "periodSeconds": 30},
        )
    if flags["network_operator_rdma_shared_device_plugin"]:
        conf = rdma_cfg if isinstance(rdma_cfg, str) else json.dumps(plain(rdma_cfg), sort_keys=True)
        spec["rdmaSharedDevicePlugin"] = component("rdma_shared_device_plugin", config=conf)
    if flags["network_operator_nic_configuration_operator"]:
        # Applies the QoS of the NicConfigurationTemplates (module_utils/_k8s/nic_config.py); its daemon runs on the nodes
        # labelled network.nvidia.com/operator.mofed.wait=false, as the operator deploys it.
        spec["nicConfigurationOperator"] = {
            "operator": component("nic_configuration_operator"),
            "configurationDaemon": component("nic_configuration_daemon"),
            "logLevel": log_level,
        }
    spec = deep_merge(spec, plain(overrides))
    _check_merged_spec(errs, spec, overrides)
    errs.raise_if_any()
    return {"apiVersion": NCP_API_VERSION, "kind": "NicClusterPolicy", "metadata": {"name": NCP_NAME}, "spec": spec}


def _deployed_components(ipam, flags):
    comps = ["multus", "cni_plugins"] + (["nv_ipam"] if ipam == "nv-ipam" else [])
    comps += ["ofed_driver"] if flags.get("network_operator_ofed_driver") else []
    comps += ["nic_configuration_operator", "nic_configuration_daemon"] if flags.get("network_operator_nic_configuration_operator") else []
    return comps + (["rdma_shared_device_plugin"] if flags.get("network_operator_rdma_shared_device_plugin") else [])


def _resolve_images(errs, version, images, deployed):
    """Each component's image: the release table's for the chart version, then network_operator_images.

    A chart version the table does not know gives no default tag: every deployed component needs its
    version from network_operator_images, or the NicClusterPolicy would silently keep another release's."""
    known = release_key(version)
    defaults = ncp_default_images(known) if known else {c: dict(i, version="") for c, i in NCP_COMPONENT_IMAGES.items()}
    resolved, untagged = {}, []
    for comp, dflt in defaults.items():
        img = dict(dflt)
        override = images.get(comp) or {}
        if not isinstance(override, dict):
            errs.add("(cluster)", "network_operator_images.%s" % comp, override, "must be a mapping", "write {repository: ..., image: ..., version: ...}")
            override = {}
        img.update({k: str(v) for k, v in override.items() if v is not None})
        if not IMAGE_NAME_RE.match(img.get("image", "")):
            errs.add(
                "(cluster)",
                "network_operator_images.%s.image" % comp,
                img.get("image"),
                "image name must match [a-zA-Z0-9-]+",
                "give the image name without registry or tag",
            )
        if not REPOSITORY_RE.match(img.get("repository", "")):
            errs.add("(cluster)", "network_operator_images.%s.repository" % comp, img.get("repository"), "not a repository", "e.g. nvcr.io/nvidia/mellanox")
        if not img.get("version") and known and dflt["version"]:
            errs.add(
                "(cluster)",
                "network_operator_images.%s.version" % comp,
                img.get("version"),
                "version (image tag) is empty",
                "set the tag, e.g. network-operator-v%s" % known,
            )
        elif not img.get("version") and comp in deployed:
            untagged.append(comp)
        resolved[comp] = img
    if untagged and known:
        # A release of the table whose tag for this component is not known here (26.7.1's DOCA driver).
        errs.add(
            "(cluster)",
            "network_operator_chart_version",
            version,
            "the release table has no %s tag for chart %s, so %s would have no image tag" % (
                "/".join(untagged), known, ", ".join(untagged)),
            "set %s to the tag the release notes give (%s), or pin network_operator_chart_version to one of %s"
            % (" and ".join("network_operator_images.%s.version" % c for c in untagged), RELEASE_NOTES % known,
               ", ".join(v for v in sorted(NCP_RELEASES) if NCP_RELEASES[v]["ofed_driver"])),
        )
    elif untagged:
        errs.add(
            "(cluster)",
            "network_operator_chart_version",
            version,
            "the NicClusterPolicy component versions are known for chart %s only (the release table in "
            "plugins/module_utils/_k8s/operator.py), so %s would have no image tag" % (", ".join(sorted(NCP_RELEASES)), ", ".join(untagged)),
            "pin network_operator_chart_version to one of %s, or set the version of every deployed component yourself: %s"
            % (", ".join(sorted(NCP_RELEASES)), ", ".join("network_operator_images.%s.version" % c for c in untagged)),
        )
    return resolved


_PATH_PART = re.compile(r"([^.\[\]]+)|\[([0-9]+)\]")


def _dig(obj, path):
    """(True, value) at ``path`` (``a.b[0].c``) in ``obj``, or (False, None) when it is not there."""
    for name, index in _PATH_PART.findall(path):
        if index:
            if not isinstance(obj, list) or int(index) >= len(obj):
                return False, None
            obj = obj[int(index)]
        elif isinstance(obj, dict) and name in obj:
            obj = obj[name]
        else:
            return False, None
    return True, obj


def _check_merged_spec(errs, spec, overrides):
    """The spec, with the overrides merged in, against the NicClusterPolicy CRD schema (26.4.1's, the same as 26.7's)."""
    for path, problem, allowed in schema_problems(spec):
        parent = path.rsplit(".", 1)[0] if "." in path else ""
        in_override, value = _dig(overrides, path)
        if not in_override:
            # A field the CRD requires, missing from a component the overrides add, is the overrides' too.
            in_override = problem == "is required" and _dig(overrides, parent)[0] and isinstance(_dig(overrides, parent)[1], dict)
            value = _dig(spec, path)[1]
        if allowed is not None:
            shown = ", ".join(allowed[:15]) + (", ..." if len(allowed) > 15 else "")
            fix = "remove it from network_operator_nic_cluster_policy_overrides, or use a field the CRD knows at spec%s: %s" % (
                "." + parent if parent else "",
                shown,
            )
        else:
            fix = "correct or remove it in network_operator_nic_cluster_policy_overrides (spec.%s %s)" % (path, problem)
        errs.add(
            "(cluster)",
            "network_operator_nic_cluster_policy_overrides.%s" % path if in_override else "NicClusterPolicy spec.%s" % path,
            value,
            "%s: the merged NicClusterPolicy fails the CRD schema of network-operator %s at spec.%s" % (problem, " and ".join(NCP_SCHEMA_CHART_VERSIONS), path),
            fix,
        )


def ncp_component_names(policy):
    """Names of the components a NicClusterPolicy asks for (for status messages)."""
    spec = policy.get("spec", {})
    names = [k for k in spec if k != "secondaryNetwork"]
    names += ["secondaryNetwork.%s" % k for k in spec.get("secondaryNetwork", {})]
    return sorted(names)

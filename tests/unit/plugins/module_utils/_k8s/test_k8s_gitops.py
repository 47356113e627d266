"""Unit tests of plugins/module_utils/_k8s/gitops.py: the release for Flux and Argo CD, kustomizations, and the
roots that deploy the rendered tree in order.

Every Flux and Argo CD object is checked against the upstream CRDs (the gitops/ directory of the CRD directory,
k8s_crd_schema.py); the kustomizations are built by the real kubectl kustomize and the whole tree is applied with a
server-side dry run in tests/k8s/test_gitops_render.py.
"""

import os
import sys

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import gitops as g
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import operator as op

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import k8s_crd_schema  # noqa: E402
from role_fallbacks import helm_defaults

CHART = op.render_chart_reference(helm_defaults({}))
VALUES = op.render_helm_values(helm_defaults({}))
# What a GitOps tool installs the default chart (26.7.1) with: its keep-ncp hook off (the chart's README for GitOps).
GITOPS_VALUES = dict(VALUES, keepNCP=False)


def test_flux_release_installs_the_pinned_chart_with_the_values():
    source, release = g.flux_helm_release(CHART, VALUES)
    assert source == {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmRepository",
        "metadata": {"name": "network-operator", "namespace": "flux-system"},
        "spec": {"interval": "10m", "url": "https://helm.ngc.nvidia.com/nvidia"},
    }
    assert release["apiVersion"] == "helm.toolkit.fluxcd.io/v2" and release["kind"] == "HelmRelease"
    spec = release["spec"]
    assert spec["chart"]["spec"] == {
        "chart": "network-operator",
        "version": "26.7.1",
        "sourceRef": {"kind": "HelmRepository", "name": "network-operator", "namespace": "flux-system"},
    }
    assert (spec["releaseName"], spec["targetNamespace"]) == ("network-operator", "nvidia-network-operator")
    assert spec["values"] == GITOPS_VALUES
    # The Namespace comes labelled from the roots; one made by Helm would lack the Pod Security labels.
    assert spec["install"] == {"createNamespace": False, "crds": "CreateReplace"}


def test_an_oci_mirror_gives_an_oci_source():
    chart = op.render_chart_reference(helm_defaults({"network_operator_chart_repo_url": "oci://registry.local:5000/charts"}))
    source, _release = g.flux_helm_release(chart, VALUES, {"flux_namespace": "gitops"})
    assert source["spec"] == {"interval": "10m", "url": "oci://registry.local:5000/charts", "type": "oci"}
    assert source["metadata"]["namespace"] == "gitops"
    app = g.argocd_application(chart, VALUES)
    assert app["spec"]["source"]["repoURL"] == "registry.local:5000/charts"


def test_argocd_application():
    app = g.argocd_application(CHART, VALUES, {"argocd_project": "gpu"})
    assert app["apiVersion"] == "argoproj.io/v1alpha1" and app["kind"] == "Application"
    assert app["metadata"] == {"name": "network-operator", "namespace": "argocd"}
    assert app["spec"]["project"] == "gpu"
    assert app["spec"]["source"] == {
        "repoURL": "https://helm.ngc.nvidia.com/nvidia",
        "chart": "network-operator",
        "targetRevision": "26.7.1",
        "helm": {"releaseName": "network-operator", "valuesObject": GITOPS_VALUES},
    }
    assert app["spec"]["destination"] == {"server": "https://kubernetes.default.svc", "namespace": "nvidia-network-operator"}
    assert app["spec"]["syncPolicy"]["syncOptions"] == ["ServerSideApply=true"]


def test_kustomization_lists_the_files_sorted():
    assert g.kustomization(["b.yaml", "a.yaml"]) == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": ["a.yaml", "b.yaml"],
    }


NAMESPACE = {"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": "nvidia-network-operator", "labels": {"pod-security.kubernetes.io/enforce": "privileged"}}}
DIRS = ["network-operator", "sriov-networks"]


@pytest.fixture(scope="module")
def crds():
    return k8s_crd_schema.load_crds()


def _objects(roots):
    for files in roots.values():
        for content in files.values():
            for doc in content if isinstance(content, list) else [content]:
                if doc.get("kind") != "Kustomization" or doc["apiVersion"] != g.KUSTOMIZE_API:
                    yield doc


def test_flux_root_applies_the_chart_first_and_the_resources_after_it(crds):
    roots = g.gitops_roots(CHART, VALUES, NAMESPACE, DIRS, {"repo_path": "./clusters/gpu/"})
    assert roots["flux"]["kustomization.yaml"]["resources"] == ["kustomizations.yaml"]
    chart_ks, *crs = roots["flux"]["kustomizations.yaml"]
    assert chart_ks["metadata"] == {"name": "network-operator-chart", "namespace": "flux-system"}
    assert chart_ks["spec"]["path"] == "./clusters/gpu/flux/release" and chart_ks["spec"]["wait"] is True
    assert [(k["metadata"]["name"], k["spec"]["path"], k["spec"]["dependsOn"]) for k in crs] == [
        ("network-operator", "./clusters/gpu/network-operator", [{"name": "network-operator-chart"}]),
        ("sriov-networks", "./clusters/gpu/sriov-networks", [{"name": "network-operator-chart"}]),
    ]
    assert chart_ks["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "flux-system", "namespace": "flux-system"}
    release = roots["flux/release"]
    assert release["kustomization.yaml"]["resources"] == ["helm-release.yaml", "namespace.yaml"]
    assert release["namespace.yaml"] == [NAMESPACE]
    assert [d["kind"] for d in release["helm-release.yaml"]] == ["HelmRepository", "HelmRelease"]
    problems = [p for o in _objects(roots) if o["kind"] != "Namespace" for p in k8s_crd_schema.validate_object(o, crds)]
    assert problems == []


def test_argocd_root_orders_namespace_chart_and_resources_with_waves(crds):
    roots = g.gitops_roots(CHART, VALUES, NAMESPACE, DIRS)
    argo = roots["argocd"]
    assert argo["kustomization.yaml"]["resources"] == ["application.yaml", "namespace.yaml", "resources"]
    assert argo["namespace.yaml"]["metadata"]["annotations"] == {g.ARGO_WAVE: "-1"}
    assert argo["namespace.yaml"]["metadata"]["labels"] == NAMESPACE["metadata"]["labels"]
    assert argo["application.yaml"]["metadata"]["annotations"] == {g.ARGO_WAVE: "0"}
    res = roots["argocd/resources"]["kustomization.yaml"]
    assert res["resources"] == ["../../network-operator", "../../sriov-networks"]
    assert res["commonAnnotations"] == {g.ARGO_WAVE: "1", g.ARGO_SYNC_OPTIONS: "SkipDryRunOnMissingResource=true"}
    assert k8s_crd_schema.validate_object(argo["application.yaml"], crds) == []
    # The input object is not changed by the annotations.
    assert "annotations" not in NAMESPACE["metadata"]


def test_without_a_namespace_to_create_the_roots_have_none():
    roots = g.gitops_roots(CHART, VALUES, None, DIRS)
    assert "namespace.yaml" not in roots["flux/release"] and "namespace.yaml" not in roots["argocd"]
    assert roots["flux/release"]["kustomization.yaml"]["resources"] == ["helm-release.yaml"]


def test_a_local_chart_is_read_from_the_gitops_repository(crds):
    chart = op.render_chart_reference(helm_defaults({"network_operator_chart_path": "/srv/charts/network-operator-26.4.1.tgz"}))
    assert chart["helm_command"] == ("helm upgrade --install network-operator /srv/charts/network-operator-26.4.1.tgz "
                                     "--namespace nvidia-network-operator --create-namespace -f helm-values.yaml")
    assert "helm.ngc.nvidia.com" not in chart["helm_command"]
    settings = {"repo_path": "./gpu", "argocd_repo_url": "https://git.example.com/gitops.git"}
    (release,) = g.flux_helm_release(chart, VALUES, settings)
    assert release["spec"]["chart"]["spec"] == {
        "chart": "./gpu/charts/network-operator",
        "sourceRef": {"kind": "GitRepository", "name": "flux-system", "namespace": "flux-system"},
    }
    app = g.argocd_application(chart, VALUES, settings)
    assert app["spec"]["source"] == {
        "repoURL": "https://git.example.com/gitops.git",
        "targetRevision": "HEAD",
        "path": "./gpu/charts/network-operator",
        "helm": {"releaseName": "network-operator", "valuesObject": GITOPS_VALUES},
    }
    roots = g.gitops_roots(chart, VALUES, NAMESPACE, DIRS, settings)
    assert [d["kind"] for d in roots["flux/release"]["helm-release.yaml"]] == ["HelmRelease"]
    problems = [p for o in _objects(roots) if o["kind"] != "Namespace" for p in k8s_crd_schema.validate_object(o, crds)]
    assert problems == []


def test_the_default_chart_reference_is_unchanged_without_a_local_chart():
    assert "chart_path" not in CHART
    assert CHART["helm_command"] == ("helm upgrade --install network-operator network-operator --repo https://helm.ngc.nvidia.com/nvidia "
                                     "--version 26.7.1 --namespace nvidia-network-operator --create-namespace -f helm-values.yaml")


@pytest.mark.parametrize("version,keep", [("26.4.1", None), ("26.7.0-rc.2", False), ("26.7.1", False), ("v26.10.0", False)])
def test_keep_ncp_is_off_for_gitops_from_26_7(version, keep):
    """26.7's chart runs a keep-ncp hook on install and upgrade; Argo CD runs hooks on every sync (network-operator#2956) and
    the chart's README tells a first GitOps install to set keepNCP: false. Older charts have no such value."""
    chart = op.render_chart_reference(helm_defaults({"network_operator_chart_version": version}))
    (_source, release) = g.flux_helm_release(chart, VALUES)
    app = g.argocd_application(chart, VALUES)
    for values in (release["spec"]["values"], app["spec"]["source"]["helm"]["valuesObject"]):
        assert values.get("keepNCP") is keep
        assert {k: v for k, v in values.items() if k != "keepNCP"} == VALUES


def test_keep_ncp_set_by_the_user_is_kept():
    values = op.render_helm_values(helm_defaults({"network_operator_helm_values_overrides": {"keepNCP": True}}))
    (_source, release) = g.flux_helm_release(CHART, values)
    assert release["spec"]["values"]["keepNCP"] is True

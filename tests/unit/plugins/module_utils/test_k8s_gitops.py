"""Unit tests of plugins/module_utils/_k8s_gitops.py: the release for Flux and Argo CD, kustomizations.

No Flux or Argo CD schema can be fetched where these tests run (no internet, not on PyPI): the shapes
below follow the published APIs (source.toolkit.fluxcd.io/v1 HelmRepository, helm.toolkit.fluxcd.io/v2
HelmRelease, argoproj.io/v1alpha1 Application). The kustomizations are checked by the real kubectl
kustomize in tests/k8s/test_gitops_render.py.
"""

from ansible_collections.gpufabric.roce.plugins.module_utils import _k8s_gitops as g
from ansible_collections.gpufabric.roce.plugins.module_utils import _k8s_operator as op

CHART = op.render_chart_reference({})
VALUES = op.render_helm_values({})


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
        "version": "26.4.1",
        "sourceRef": {"kind": "HelmRepository", "name": "network-operator", "namespace": "flux-system"},
    }
    assert (spec["releaseName"], spec["targetNamespace"]) == ("network-operator", "nvidia-network-operator")
    assert spec["values"] == VALUES
    assert spec["install"] == {"createNamespace": True, "crds": "CreateReplace"}


def test_an_oci_mirror_gives_an_oci_source():
    chart = op.render_chart_reference({"network_operator_chart_repo_url": "oci://registry.local:5000/charts"})
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
        "targetRevision": "26.4.1",
        "helm": {"releaseName": "network-operator", "valuesObject": VALUES},
    }
    assert app["spec"]["destination"] == {"server": "https://kubernetes.default.svc", "namespace": "nvidia-network-operator"}
    assert "CreateNamespace=true" in app["spec"]["syncPolicy"]["syncOptions"]


def test_kustomization_lists_the_files_sorted():
    assert g.kustomization(["b.yaml", "a.yaml"]) == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": ["a.yaml", "b.yaml"],
    }

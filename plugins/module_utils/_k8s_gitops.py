# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render mode for GitOps tools: the network-operator release as a Flux HelmRelease (with its source) and
as an Argo CD Application, and a kustomization.yaml over a directory of manifests.

Input is what the Helm renderer already validated (:func:`render_chart_reference` and
:func:`render_helm_values` of ``_k8s_operator``), so nothing here re-checks the inventory.
"""

FLUX_SOURCE_API = "source.toolkit.fluxcd.io/v1"
FLUX_HELM_API = "helm.toolkit.fluxcd.io/v2"
ARGO_API = "argoproj.io/v1alpha1"
KUSTOMIZE_API = "kustomize.config.k8s.io/v1beta1"

GITOPS_DEFAULTS = {
    "flux_namespace": "flux-system",
    "flux_interval": "10m",
    "argocd_namespace": "argocd",
    "argocd_project": "default",
    "argocd_destination_server": "https://kubernetes.default.svc",
}


def flux_helm_release(chart, values, settings=None):
    """A Flux HelmRepository (an OCI one for an ``oci://`` repository, as air-gapped mirrors serve charts)
    and the HelmRelease installing ``chart`` with ``values``."""
    s = dict(GITOPS_DEFAULTS, **(settings or {}))
    repo = chart["repository"]
    source_name = chart["chart"]
    source = {
        "apiVersion": FLUX_SOURCE_API,
        "kind": "HelmRepository",
        "metadata": {"name": source_name, "namespace": s["flux_namespace"]},
        "spec": {"interval": s["flux_interval"], "url": repo},
    }
    if repo.startswith("oci://"):
        source["spec"]["type"] = "oci"
    release = {
        "apiVersion": FLUX_HELM_API,
        "kind": "HelmRelease",
        "metadata": {"name": chart["release_name"], "namespace": s["flux_namespace"]},
        "spec": {
            "interval": s["flux_interval"],
            "releaseName": chart["release_name"],
            "targetNamespace": chart["namespace"],
            "install": {"createNamespace": True, "crds": "CreateReplace"},
            "upgrade": {"crds": "CreateReplace"},
            "chart": {
                "spec": {
                    "chart": chart["chart"],
                    "version": chart["version"],
                    "sourceRef": {"kind": "HelmRepository", "name": source_name, "namespace": s["flux_namespace"]},
                }
            },
            "values": values,
        },
    }
    return [source, release]


def argocd_application(chart, values, settings=None):
    """An Argo CD Application installing the chart from its Helm repository with ``values``."""
    s = dict(GITOPS_DEFAULTS, **(settings or {}))
    repo = chart["repository"]
    source = {"chart": chart["chart"], "targetRevision": chart["version"], "helm": {"releaseName": chart["release_name"], "valuesObject": values}}
    # Argo CD takes an OCI registry without the scheme.
    source["repoURL"] = repo[len("oci://") :] if repo.startswith("oci://") else repo
    return {
        "apiVersion": ARGO_API,
        "kind": "Application",
        "metadata": {"name": chart["release_name"], "namespace": s["argocd_namespace"]},
        "spec": {
            "project": s["argocd_project"],
            "source": source,
            "destination": {"server": s["argocd_destination_server"], "namespace": chart["namespace"]},
            # The chart's CRDs are large: server-side apply avoids the last-applied annotation size limit.
            "syncPolicy": {"syncOptions": ["CreateNamespace=true", "ServerSideApply=true"]},
        },
    }


def kustomization(resources):
    """A kustomization.yaml listing the manifest files of one directory."""
    return {"apiVersion": KUSTOMIZE_API, "kind": "Kustomization", "resources": sorted(resources)}

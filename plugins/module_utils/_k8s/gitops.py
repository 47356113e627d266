# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render mode for GitOps tools: the network-operator release as a Flux HelmRelease (with its source) and
as an Argo CD Application, a kustomization.yaml over a directory of manifests, and the two roots that deploy
the whole rendered tree in order (:func:`gitops_roots`).

Input is what the Helm renderer already validated (:func:`render_chart_reference` and
:func:`render_helm_values` of ``_k8s.operator``), so nothing here re-checks the inventory.
"""

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.operator import chart_has

FLUX_SOURCE_API = "source.toolkit.fluxcd.io/v1"
FLUX_HELM_API = "helm.toolkit.fluxcd.io/v2"
FLUX_KUSTOMIZE_API = "kustomize.toolkit.fluxcd.io/v1"
ARGO_API = "argoproj.io/v1alpha1"
KUSTOMIZE_API = "kustomize.config.k8s.io/v1beta1"

GITOPS_DEFAULTS = {
    "flux_namespace": "flux-system",
    "flux_interval": "10m",
    "argocd_namespace": "argocd",
    "argocd_project": "default",
    "argocd_destination_server": "https://kubernetes.default.svc",
    "flux_source": {"kind": "GitRepository", "name": "flux-system"},
    "repo_path": "./render-out",
    "argocd_repo_url": "",
    "argocd_target_revision": "HEAD",
}

# Where render mode puts a local chart (network_operator_chart_path) inside roce_render_dir: the GitOps tools read
# it from the GitOps repository, as they cannot reach the controller's file system.
CHART_SUBDIR = "charts"
# The custom resources wait for the chart that brings their CRDs: Argo CD sync waves (the Namespace, then the chart's
# Application, then the resources) and no dry run of a kind whose CRD is not there yet.
ARGO_WAVE = "argocd.argoproj.io/sync-wave"
ARGO_SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
ARGO_RESOURCE_ANNOTATIONS = {ARGO_WAVE: "1", ARGO_SYNC_OPTIONS: "SkipDryRunOnMissingResource=true"}


def gitops_values(chart, values):
    """The chart values a GitOps tool installs with. From 26.7 the chart's keep-ncp pre-install/pre-upgrade hook protects
    a NicClusterPolicy an old chart made; Argo CD runs hooks on every sync, where it stalls the first one
    (network-operator#2956), and the chart's README tells a first GitOps install to set ``keepNCP: false``. The collection
    never lets the chart make the NicClusterPolicy, so there is nothing to keep: false, unless the overrides set it."""
    if not chart_has(chart.get("version"), "keep_ncp") or "keepNCP" in (values or {}):
        return values
    return dict(values or {}, keepNCP=False)


def flux_helm_release(chart, values, settings=None):
    """A Flux HelmRepository (an OCI one for an ``oci://`` repository, as air-gapped mirrors serve charts)
    and the HelmRelease installing ``chart`` with ``values``."""
    s = dict(GITOPS_DEFAULTS, **(settings or {}))
    values = gitops_values(chart, values)
    repo = chart["repository"]
    source_name = chart["chart"]
    if chart.get("chart_path"):
        # The local chart, copied into the GitOps repository by render mode: Flux reads it from its Git source.
        ref = dict(s["flux_source"], namespace=s["flux_source"].get("namespace") or s["flux_namespace"])
        return [_flux_release(chart, values, s, {"chart": chart_repo_dir(chart, s), "sourceRef": ref})]
    source = {
        "apiVersion": FLUX_SOURCE_API,
        "kind": "HelmRepository",
        "metadata": {"name": source_name, "namespace": s["flux_namespace"]},
        "spec": {"interval": s["flux_interval"], "url": repo},
    }
    if repo.startswith("oci://"):
        source["spec"]["type"] = "oci"
    chart_spec = {"chart": chart["chart"], "version": chart["version"],
                  "sourceRef": {"kind": "HelmRepository", "name": source_name, "namespace": s["flux_namespace"]}}
    return [source, _flux_release(chart, values, s, chart_spec)]


def _flux_release(chart, values, s, chart_spec):
    return {
        "apiVersion": FLUX_HELM_API,
        "kind": "HelmRelease",
        "metadata": {"name": chart["release_name"], "namespace": s["flux_namespace"]},
        "spec": {
            "interval": s["flux_interval"],
            "releaseName": chart["release_name"],
            "targetNamespace": chart["namespace"],
            # The Namespace comes labelled for Pod Security from the rendered tree (gitops_roots); one created
            # here would lack the labels, and the privileged daemons would be refused.
            "install": {"createNamespace": False, "crds": "CreateReplace"},
            "upgrade": {"crds": "CreateReplace"},
            "chart": {"spec": chart_spec},
            "values": values,
        },
    }


def chart_repo_dir(chart, settings=None):
    """The local chart's directory in the GitOps repository (``<repo_path>/charts/<chart>``)."""
    s = dict(GITOPS_DEFAULTS, **(settings or {}))
    return "%s/%s/%s" % (s["repo_path"].rstrip("/"), CHART_SUBDIR, chart["chart"])


def argocd_application(chart, values, settings=None):
    """An Argo CD Application installing the chart from its Helm repository with ``values``."""
    s = dict(GITOPS_DEFAULTS, **(settings or {}))
    repo = chart["repository"]
    helm = {"releaseName": chart["release_name"], "valuesObject": gitops_values(chart, values)}
    if chart.get("chart_path"):
        # The local chart, copied into the GitOps repository by render mode (Argo CD reads a chart in Git as a directory).
        source = {"repoURL": s["argocd_repo_url"], "targetRevision": s["argocd_target_revision"], "path": chart_repo_dir(chart, s), "helm": helm}
    else:
        source = {"chart": chart["chart"], "targetRevision": chart["version"], "helm": helm}
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
            # The chart's CRDs are large: server-side apply avoids the last-applied annotation size limit. No
            # CreateNamespace: the Namespace comes labelled for Pod Security from the rendered tree (gitops_roots).
            "syncPolicy": {"syncOptions": ["ServerSideApply=true"]},
        },
    }


def kustomization(resources):
    """A kustomization.yaml listing the manifest files of one directory."""
    return {"apiVersion": KUSTOMIZE_API, "kind": "Kustomization", "resources": sorted(resources)}


def _flux_kustomization(name, path, s, depends_on=None, wait=False):
    spec = {
        "interval": s["flux_interval"],
        "path": path,
        "prune": True,
        "sourceRef": dict(s["flux_source"], namespace=s["flux_source"].get("namespace") or s["flux_namespace"]),
    }
    if depends_on:
        spec["dependsOn"] = [{"name": d} for d in depends_on]
    if wait:
        spec["wait"] = True
    return {"apiVersion": FLUX_KUSTOMIZE_API, "kind": "Kustomization", "metadata": {"name": name, "namespace": s["flux_namespace"]}, "spec": spec}


def _with_annotations(obj, annotations):
    meta = dict(obj.get("metadata") or {})
    meta["annotations"] = dict(meta.get("annotations") or {}, **annotations)
    return dict(obj, metadata=meta)


def gitops_roots(chart, values, namespace, dirs, settings=None):
    """The roots that deploy the rendered tree as it is, in order: the chart (which brings the CRDs) first, then the
    custom resources of ``dirs`` (directories of ``roce_render_dir``, each with its own kustomization.yaml).

    ``namespace`` is the release's Namespace object (labelled for Pod Security), or None when the user manages it.
    Returns ``{directory: {file name: content}}`` relative to ``roce_render_dir``:

    - ``flux``: Flux Kustomizations (point one of yours at this directory): ``<release>-chart`` applies ``flux/release``
      (the Namespace, the chart's source and HelmRelease) and waits for them to be ready; one per directory of
      ``dirs`` (named after it) depends on it.
    - ``argocd``: one Argo CD sync of the Namespace (wave -1), the chart's Application (wave 0) and the custom
      resources (wave 1, no dry run while their CRDs are missing; Argo CD retries until the chart brought them).
    """
    s = dict(GITOPS_DEFAULTS, **(settings or {}))
    release = chart["release_name"]
    repo_path = s["repo_path"].rstrip("/")
    ns_docs = [namespace] if namespace else []
    flux_release = {"namespace.yaml": ns_docs} if ns_docs else {}
    flux_release["helm-release.yaml"] = flux_helm_release(chart, values, s)
    flux_release["kustomization.yaml"] = kustomization(list(flux_release))
    chart_ks = "%s-chart" % release
    flux_objects = [_flux_kustomization(chart_ks, "%s/flux/release" % repo_path, s, wait=True)]
    flux_objects += [_flux_kustomization(d.replace("/", "-"), "%s/%s" % (repo_path, d), s, depends_on=[chart_ks]) for d in dirs]
    argo = {"application.yaml": _with_annotations(argocd_application(chart, values, s), {ARGO_WAVE: "0"})}
    if ns_docs:
        argo["namespace.yaml"] = _with_annotations(namespace, {ARGO_WAVE: "-1"})
    # The directories' own files stay as they are (for kubectl apply -k and Flux): a kustomization of its own gives
    # every object they build the wave and the sync option.
    argo_resources = kustomization(["../../%s" % d for d in dirs])
    argo_resources["commonAnnotations"] = dict(ARGO_RESOURCE_ANNOTATIONS)
    argo["kustomization.yaml"] = kustomization(list(argo) + ["resources"])
    return {
        "flux": {"kustomization.yaml": kustomization(["kustomizations.yaml"]), "kustomizations.yaml": flux_objects},
        "flux/release": flux_release,
        "argocd": argo,
        "argocd/resources": {"kustomization.yaml": argo_resources},
    }

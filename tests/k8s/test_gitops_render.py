# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render mode's GitOps tree, deployed as it is: site.yml renders the example inventory; the real kubectl kustomize
(v1.36.2) builds every kustomization.yaml, and the real API server takes the Flux and the Argo CD roots with a
server-side dry run, with the Flux and Argo CD CRDs (../shared/crds/gitops) and the network-operator and sriov CRDs
installed. Every Flux and Argo CD object also validates against its CRD schema (k8s_crd_schema.py).

This module has a control plane of its own (module_cluster): the session's must stay without the operator's CRDs until
test_shared_cluster.py has run its day-one dry run, and the dry run here needs them."""

import os
import subprocess
import sys

import yaml
from k8s_helpers import HARDWARE, REPO, shared_chart  # puts lab/k8s on sys.path

sys.path.insert(0, str(REPO / "tests" / "unit" / "plugins" / "module_utils"))
import k8s_crd_schema  # noqa: E402

CLUSTER_HARDWARE = HARDWARE


def _render(out, *extra, inventory="example"):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build", "collections"), ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"))
    playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    proc = subprocess.run(  # noqa: S603
        [playbook, "-i", os.path.join(REPO, "inventories", inventory), "gpufabric.roce.render", "-e", "roce_render_dir=%s" % out, *extra],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def _build(cluster, path):
    out = cluster.run("kubectl", "kustomize", str(path))
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def _prepare(cluster):
    """The CRDs of Flux, Argo CD and those the default chart's line brings (network-operator 26.7: the chart's, its
    sub-charts' and its components'), and the GitOps tools' namespaces. Idempotent: each test of the module may be first."""
    crd_dir = k8s_crd_schema.crds_dir()
    for sub in k8s_crd_schema.CRD_LINES[k8s_crd_schema.DEFAULT_LINE]:
        files = sorted(os.path.join(root, f) for root, _dirs, names in os.walk(os.path.join(crd_dir, sub)) for f in names
                       if f.endswith(".yaml") and f not in ("Chart.yaml", "chart-values.yaml"))
        cluster.run("kubectl", "apply", "--server-side", *sum((["-f", f] for f in files), []))
    cluster.run("kubectl", "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
    for ns in ("flux-system", "argocd"):
        proc = cluster.run("kubectl", "create", "namespace", ns, check=False)
        assert proc.returncode == 0 or "AlreadyExists" in proc.stderr, proc.stderr


def _kinds(docs):
    return sorted((d["kind"], d["metadata"]["name"]) for d in docs)


def test_the_rendered_tree_builds_and_the_server_takes_it(module_cluster, tmp_path):
    cluster = module_cluster
    out = tmp_path / "render-out"
    _render(out)
    assert _kinds(_build(cluster, out / "network-operator")) == [("NicClusterPolicy", "nic-cluster-policy")]
    # The NCCL ConfigMap the training jobs mount, with what the inventory determines (issue 42).
    assert _kinds(_build(cluster, out / "sriov-networks")) == [
        ("ConfigMap", "gpufabric-nccl"),
        ("SriovNetwork", "roce-node1"), ("SriovNetwork", "roce-node2"),
        ("SriovNetworkNodePolicy", "roce-node1"), ("SriovNetworkNodePolicy", "roce-node2"),
        ("SriovNetworkPoolConfig", "roce-pool"),
    ]
    values = yaml.safe_load((out / "network-operator" / "helm-values.yaml").read_text())

    # Flux: the chart's Kustomization first (wait), the custom resources' ones depend on it.
    flux = _build(cluster, out / "flux")
    assert sorted((k["metadata"]["name"], k["spec"]["path"], k["spec"].get("dependsOn") or []) for k in flux) == [
        ("network-operator", "./render-out/network-operator", [{"name": "network-operator-chart"}]),
        ("network-operator-chart", "./render-out/flux/release", []),
        ("sriov-networks", "./render-out/sriov-networks", [{"name": "network-operator-chart"}]),
    ]
    release = _build(cluster, out / "flux" / "release")
    assert _kinds(release) == [("HelmRelease", "network-operator"), ("HelmRepository", "network-operator"), ("Namespace", "nvidia-network-operator")]
    ns = next(d for d in release if d["kind"] == "Namespace")
    # The labels apply mode sets, from the one place they are defined.
    with open(REPO / "roles" / "network_operator" / "vars" / "main.yml") as f:
        assert ns["metadata"]["labels"] == yaml.safe_load(f)["__network_operator_namespace_labels"]
    helm_release = next(d for d in release if d["kind"] == "HelmRelease")
    # GitOps installs of 26.7 turn the chart's keep-ncp hook off (the chart's README; network-operator#2956).
    assert helm_release["spec"]["values"] == dict(values, keepNCP=False) and helm_release["spec"]["install"]["createNamespace"] is False

    # Argo CD: Namespace (wave -1), the chart's Application (0), every custom resource (1, no dry run before its CRD).
    argo = _build(cluster, out / "argocd")
    waves = {(d["kind"], d["metadata"]["name"]): d["metadata"]["annotations"] for d in argo}
    assert waves.pop(("Namespace", "nvidia-network-operator")) == {"argocd.argoproj.io/sync-wave": "-1"}
    app = argo[[d["kind"] for d in argo].index("Application")]
    assert waves.pop(("Application", "network-operator")) == {"argocd.argoproj.io/sync-wave": "0"}
    assert app["spec"]["source"]["helm"]["valuesObject"] == dict(values, keepNCP=False)
    assert sorted(waves) == [("ConfigMap", "gpufabric-nccl"), ("NicClusterPolicy", "nic-cluster-policy"),
                             ("SriovNetwork", "roce-node1"), ("SriovNetwork", "roce-node2"),
                             ("SriovNetworkNodePolicy", "roce-node1"), ("SriovNetworkNodePolicy", "roce-node2"),
                             ("SriovNetworkPoolConfig", "roce-pool")]
    assert all(a == {"argocd.argoproj.io/sync-wave": "1", "argocd.argoproj.io/sync-options": "SkipDryRunOnMissingResource=true"}
               for a in waves.values())

    # Every Flux and Argo CD object against its CRD schema.
    crds = k8s_crd_schema.load_crds()
    gitops = [d for d in flux + release + argo if d["apiVersion"].startswith(("kustomize.toolkit", "helm.toolkit", "source.toolkit", "argoproj.io"))]
    assert len(gitops) == 6
    assert [p for d in gitops for p in k8s_crd_schema.validate_object(d, crds)] == []

    # The real API server (the CRDs and the GitOps tools' namespaces in place), each root with a server-side dry run
    # (strict field validation).
    _prepare(cluster)
    for root in ("flux", "flux/release"):
        proc = cluster.run("kubectl", "apply", "--dry-run=server", "--validate=strict", "-k", str(out / root), check=False)
        assert proc.returncode == 0, "%s: %s%s" % (root, proc.stdout, proc.stderr)
    # The Argo root once its Namespace exists (the wave before the resources): every custom resource is taken as well.
    cluster.run("kubectl", "apply", "-f", str(out / "argocd" / "namespace.yaml"))
    proc = cluster.run("kubectl", "apply", "--dry-run=server", "--validate=strict", "-k", str(out / "argocd"), check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("(server dry run)") == len(argo), proc.stdout


def test_eight_rails_on_the_26_7_chart_render_objects_valid_against_its_crds_that_the_server_takes(module_cluster, tmp_path):
    """inventories/example-multirail with the 26.7 line's chart (26.7.0-rc.2, as a local chart rendered into the tree) and
    no image overrides: the components take the release table's tags, every object is valid against the 26.7 CRDs, and
    the real API server takes every root with a server-side dry run."""
    version = "26.7.0-rc.2"
    chart = shared_chart(version)
    out = tmp_path / "render-out"
    _render(out, "-e", "network_operator_chart_path=%s" % chart, "-e", "network_operator_chart_version=%s" % version, "-e",
            '{"network_operator_gitops": {"argocd_repo_url": "https://git.example.com/gitops.git"}}', inventory="example-multirail")
    helm = yaml.safe_load((out / "network-operator" / "helm-chart.yaml").read_text())
    assert helm["helm_command"].startswith("helm upgrade --install network-operator %s " % chart)
    assert "helm.ngc.nvidia.com" not in helm["helm_command"]
    assert (out / "charts" / "network-operator" / "Chart.yaml").is_file()
    release = _build(module_cluster, out / "flux" / "release")
    hr = next(d for d in release if d["kind"] == "HelmRelease")
    assert hr["spec"]["chart"]["spec"]["chart"] == "./render-out/charts/network-operator"
    assert not [d for d in release if d["kind"] == "HelmRepository"]
    argo = _build(module_cluster, out / "argocd")
    app = next(d for d in argo if d["kind"] == "Application")
    assert app["spec"]["source"]["path"] == "./render-out/charts/network-operator"

    # No image given: every NicClusterPolicy component is the release's own, from its registry.
    (ncp,) = _build(module_cluster, out / "network-operator")
    images = {k: v for k, v in ncp["spec"].items() if isinstance(v, dict) and "version" in v}
    images.update({k: v for k, v in ncp["spec"].get("secondaryNetwork", {}).items() if isinstance(v, dict) and "version" in v})
    assert images and {(v["repository"], v["version"]) for v in images.values()} == {("nvcr.io/nvstaging/mellanox", "network-operator-v%s" % version)}
    # Eight rails on two nodes: a policy and a network per node and rail.
    objects = _build(module_cluster, out / "sriov-networks")
    kinds = [d["kind"] for d in objects]
    assert kinds.count("SriovNetworkNodePolicy") == 16 and kinds.count("SriovNetwork") == 16

    # Every custom resource and GitOps object against the 26.7 CRDs' schemas, then the server.
    crds = k8s_crd_schema.load_crds(line=k8s_crd_schema.crd_line(version))
    custom = [d for d in [ncp, *objects, *release, *argo] if d["kind"] not in ("Namespace", "ConfigMap")]
    assert [p for d in custom for p in k8s_crd_schema.validate_object(d, crds)] == []
    _prepare(module_cluster)
    module_cluster.run("kubectl", "apply", "-f", str(out / "argocd" / "namespace.yaml"))
    for root in ("flux", "flux/release", "argocd"):
        proc = module_cluster.run("kubectl", "apply", "--dry-run=server", "--validate=strict", "-k", str(out / root), check=False)
        assert proc.returncode == 0, "%s: %s%s" % (root, proc.stdout, proc.stderr)
    assert proc.stdout.count("(server dry run)") == len(argo), proc.stdout

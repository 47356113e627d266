# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render mode's GitOps output, read by the real kubectl kustomize (v1.36.2, from KUBEBUILDER_ASSETS or
../shared/envtest): site.yml renders the example inventory, and each kustomization.yaml must build into
exactly the objects of its directory. Flux and Argo CD publish no schema that can be fetched here; their
objects' shapes are unit-tested (tests/unit/plugins/module_utils/test_k8s_gitops.py)."""

import os
import subprocess
import sys

import yaml
from k8s_helpers import REPO  # puts lab/k8s on sys.path

import controlplane


def test_site_render_writes_kustomizations_that_kubectl_builds(tmp_path):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build", "collections"), ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"))
    playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    proc = subprocess.run(  # noqa: S603
        [
            playbook,
            "-i",
            os.path.join(REPO, "inventories", "example"),
            os.path.join(REPO, "playbooks", "site.yml"),
            "--tags",
            "operator,sriov",
            "-e",
            "roce_k8s_mode=render",
            "-e",
            "roce_render_dir=%s" % tmp_path,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    kubectl = str(controlplane.resolve_assets() / "kubectl")
    built = {}
    for sub in ("network-operator", "sriov-networks"):
        out = subprocess.run([kubectl, "kustomize", str(tmp_path / sub)], capture_output=True, text=True, timeout=120, check=False)  # noqa: S603
        assert out.returncode == 0, out.stderr
        built[sub] = sorted((d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(out.stdout) if d)
    assert built["network-operator"] == [("NicClusterPolicy", "nic-cluster-policy")]
    assert built["sriov-networks"] == [
        ("SriovNetwork", "roce-node1"),
        ("SriovNetwork", "roce-node2"),
        ("SriovNetworkNodePolicy", "roce-node1"),
        ("SriovNetworkNodePolicy", "roce-node2"),
        ("SriovNetworkPoolConfig", "roce-pool"),
    ]
    flux = list(yaml.safe_load_all((tmp_path / "network-operator" / "flux-helm-release.yaml").read_text()))
    assert [d["kind"] for d in flux] == ["HelmRepository", "HelmRelease"]
    values = yaml.safe_load((tmp_path / "network-operator" / "helm-values.yaml").read_text())
    assert flux[1]["spec"]["values"] == values
    app = yaml.safe_load((tmp_path / "network-operator" / "argocd-application.yaml").read_text())
    assert app["spec"]["source"]["helm"]["valuesObject"] == values

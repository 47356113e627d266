#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Download the pinned upstream CRDs the schema tests validate against, and check their sha256.

    python tests/crds/fetch_upstream_crds.py [DEST]      # default DEST: <repo>/.cache/crds

DEST gets the same layout as ../shared/crds (one directory per operator release), so
GPUFABRIC_CRDS_DIR=DEST works too. Every file is checked against the sha256 pinned below
before it is moved into place; a mismatch (a moved tag, a wrong path upstream) fails and
leaves nothing behind. k8s_crd_schema.py runs this when GPUFABRIC_CRDS_DIR is unset and
../shared/crds does not exist.

The sha256 values are those of the files in ../shared/crds (sriov-network-operator v1.6.0,
network-operator v26.4.1, nv-ipam at network-operator v26.4.1's component tag, and gitops/: Flux
and Argo CD at the commits of its SOURCES.md). The download itself has not been run where it was
written (no internet there); if an upstream path moved, the error names the URL. The nv-ipam
files were checked against a snapshot of Mellanox/nvidia-k8s-ipam at that tag (git show).
"""

import argparse
import hashlib
import os
import sys
import tempfile
import urllib.request

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", ".."))
DEFAULT_DEST = os.path.join(REPO, ".cache", "crds")

SRIOV_TAG = "v1.6.0"
NETOP_TAG = "v26.4.1"
SRIOV_BASE = "https://raw.githubusercontent.com/k8snetworkplumbingwg/sriov-network-operator/%s/deployment/sriov-network-operator-chart/crds/" % SRIOV_TAG
NETOP_BASE = "https://raw.githubusercontent.com/Mellanox/network-operator/%s/deployment/network-operator/" % NETOP_TAG

# directory -> (base URL, [(file name written, path relative to the base URL, sha256)])
PINNED = {
    "sriov-network-operator-" + SRIOV_TAG: (
        SRIOV_BASE,
        [
            (name, name, sha)
            for name, sha in (
                ("k8s.cni.cncf.io_networkattachmentdefinitions_crd.yaml", "727ecdb83f29e4f2f538a86cf1dbc93b751ecd63d1b5a7c3a2b1b63dad4a26d9"),
                ("sriovnetwork.openshift.io_ovsnetworks.yaml", "14a0b35a3dc7a20e76e8155420bd9c1ccc1e169cbef0a91b550b6904a07cc6b0"),
                ("sriovnetwork.openshift.io_sriovibnetworks.yaml", "e7395ee40ef164ccc695f74ffae3189848dfeba430fd316827daf6722ab26f40"),
                ("sriovnetwork.openshift.io_sriovnetworknodepolicies.yaml", "fcc06af66a10ad77cb6b9596a6d38fd4c6e3544852d7d9ddcb289fb4a6b14ce4"),
                ("sriovnetwork.openshift.io_sriovnetworknodestates.yaml", "86dead6d931c9eb97676acaa85512b691e170a3fdad6677b8b9e760584bc2a15"),
                ("sriovnetwork.openshift.io_sriovnetworkpoolconfigs.yaml", "d6706a05e49f3c1c0949ea792ed84062cc2fff8fdfadb47d9e8ae9f0d3ea243a"),
                ("sriovnetwork.openshift.io_sriovnetworks.yaml", "c3f3bbdf909c0c7a89d2873d1f8cc9e630dc87717479621280e2a299cf4c8dd5"),
                ("sriovnetwork.openshift.io_sriovoperatorconfigs.yaml", "91115f124eccabcb7f15e061f3dbae04a98c4e669b09e46c5c3d6472f422fb96"),
            )
        ],
    ),
    "network-operator-" + NETOP_TAG: (
        NETOP_BASE,
        [
            ("Chart.yaml", "Chart.yaml", "766812d2dac7e06265e29051a95cb6435aa005e9b6ebb90f58e61c3901fa0067"),
            ("chart-values.yaml", "values.yaml", "18f0caf13a7c728c1c08f7232e4ca4422d8d7515f0b2f19713bec9c62e9bcac5"),
        ]
        + [
            (name, "crds/" + name, sha)
            for name, sha in (
                ("k8s.cni.cncf.io_networkattachmentdefinitions_crd.yaml", "727ecdb83f29e4f2f538a86cf1dbc93b751ecd63d1b5a7c3a2b1b63dad4a26d9"),
                ("mellanox.com_hostdevicenetworks.yaml", "7ac5de3bab610c3cc1178e47a11388ed6a45ad8c63f209c3306eaee7e30c96f0"),
                ("mellanox.com_ipoibnetworks.yaml", "367adbec5f20b7293544e5dba9d425d58b5e9e89c6c317987c04f00dea656c36"),
                ("mellanox.com_macvlannetworks.yaml", "84e2d3258a3e17f330a0e68d78a6fc7cffba5262e82cb5ad5ac416b76b2d4d43"),
                ("mellanox.com_nicclusterpolicies.yaml", "6e7233dcad83ff1f2f2e14dde7b7bce85129cfd249ec87780f76d67c49fc67df"),
                ("mellanox.com_nicnodepolicies.yaml", "30f089fb2e0cb818dc94778488e703f0c801763a8174b9e490a720d5eca2c275"),
            )
        ],
    ),
    # nv-ipam's pools (sriov_networks_ipam: nv-ipam renders CIDRPools): the component tag network-operator 26.4.1 deploys
    # (../shared/crds/SOURCES-nv-ipam-nic-config.md).
    "nv-ipam-network-operator-" + NETOP_TAG: (
        "https://raw.githubusercontent.com/Mellanox/nvidia-k8s-ipam/network-operator-%s/deploy/crds/" % NETOP_TAG,
        [
            (name, name, sha)
            for name, sha in (
                ("nv-ipam.nvidia.com_cidrpools.yaml", "8c3dc0a4b95ce3b53022358b5bfcdaece2b81a732c06266728148390fabc67f5"),
                ("nv-ipam.nvidia.com_ippools.yaml", "daa715fb3008aafc344626b8be0e3225d57f79f700cd6e1547799cf652faa220"),
            )
        ],
    ),
    # Flux and Argo CD, for the GitOps roots of render mode (../shared/crds/gitops/SOURCES.md): several repositories, so
    # each path starts with the repository and its commit.
    "gitops": (
        "https://raw.githubusercontent.com/",
        [
            (name, "%s/%s/%s" % (repo, commit, path), sha)
            for name, repo, commit, path, sha in (
                ("helm.toolkit.fluxcd.io_helmreleases.yaml", "fluxcd/helm-controller", "0f61a8607a62be64638f2f912d9487e653960a6e",
                 "config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml", "aa8638ac68465ceac1f93a617baf5be833c589c51fd78a7384a4a274c252becc"),
                ("source.toolkit.fluxcd.io_helmrepositories.yaml", "fluxcd/source-controller", "39b711b111fa906c3db0a424e252a5d12e48646d",
                 "config/crd/bases/source.toolkit.fluxcd.io_helmrepositories.yaml", "0f3c34df4a25c88c7ad7825ada26d696aa53d92ec2c0ca540e1f9a05db247fa9"),
                ("source.toolkit.fluxcd.io_gitrepositories.yaml", "fluxcd/source-controller", "39b711b111fa906c3db0a424e252a5d12e48646d",
                 "config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml", "bd0c08183287b2eea0d885751fc686bc4b2b583e919de6bd57859170b8d1727f"),
                ("kustomize.toolkit.fluxcd.io_kustomizations.yaml", "fluxcd/kustomize-controller", "186fb3b29138ce82ff61ba1a9370b96a3dd598fe",
                 "config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml", "da23ca0e6b4c80d3d26a91583137491e147ef4ef1e2208aece0d0af4ef851974"),
                ("source.toolkit.fluxcd.io_helmcharts.yaml", "fluxcd/source-controller", "39b711b111fa906c3db0a424e252a5d12e48646d",
                 "config/crd/bases/source.toolkit.fluxcd.io_helmcharts.yaml", "3e319fc2b5c4aeaf8fa3ca161c253037e2f78177b986a0df3e85ba4853615b05"),
                ("source.toolkit.fluxcd.io_ocirepositories.yaml", "fluxcd/source-controller", "39b711b111fa906c3db0a424e252a5d12e48646d",
                 "config/crd/bases/source.toolkit.fluxcd.io_ocirepositories.yaml", "80c7c6e5c8de0764cc83acd4de5c74bea8e51186085304d22cecc5f2eb35500e"),
                ("application-crd.yaml", "argoproj/argo-cd", "37ee0097cf851bc2dd7665fc081bbce61a7e836e", "manifests/crds/application-crd.yaml",
                 "9fd0da3e7097ad6d1af614fabd5c960bc7ddb00d768c3ef485a2fda6e9460df8"),
                ("appproject-crd.yaml", "argoproj/argo-cd", "37ee0097cf851bc2dd7665fc081bbce61a7e836e", "manifests/crds/appproject-crd.yaml",
                 "ab225266944322750136f1198d93786e4a79a0e43c8d149abfba44da30a3eac8"),
            )
        ],
    ),
}


class FetchError(Exception):
    pass


def manifest(bases=None):
    """[(directory, file name, URL, sha256)]; ``bases`` overrides the base URL per directory (tests, mirrors)."""
    out = []
    for directory, (pinned_base, files) in PINNED.items():
        base = (bases or {}).get(directory, pinned_base)
        for name, remote, sha in files:
            out.append((directory, name, base + remote, sha))
    return out


def is_complete(dest):
    """True when every pinned file is in ``dest`` with its pinned sha256."""
    for directory, name, _url, sha in manifest():
        path = os.path.join(dest, directory, name)
        if not os.path.isfile(path) or _sha256_file(path) != sha:
            return False
    return True


def _sha256_file(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def fetch(dest=DEFAULT_DEST, bases=None, timeout=60):
    """Download every pinned file into ``dest``; raises FetchError naming the URL on any failure.

    All files are downloaded and checked in a temporary directory first, then moved into place,
    so a failure leaves ``dest`` as it was."""
    os.makedirs(dest, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=dest) as tmp:
        staged = []
        for directory, name, url, sha in manifest(bases):
            try:
                with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - pinned https URLs (file:// in tests)
                    data = resp.read()
            except Exception as exc:
                raise FetchError("download of %s failed: %s" % (url, exc)) from exc
            got = hashlib.sha256(data).hexdigest()
            if got != sha:
                raise FetchError("%s: sha256 %s, pinned %s; the upstream file changed or moved. Nothing was written to %s" % (url, got, sha, dest))
            path = os.path.join(tmp, directory, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
            staged.append((path, os.path.join(dest, directory, name)))
        for src, dst in staged:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            os.replace(src, dst)
    return dest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", nargs="?", default=DEFAULT_DEST)
    args = ap.parse_args(argv)
    try:
        fetch(args.dest)
    except FetchError as exc:
        print("fetch_upstream_crds: %s" % exc, file=sys.stderr)
        return 1
    print("fetch_upstream_crds: %d files in %s, sha256 checked" % (len(manifest()), args.dest))
    return 0


if __name__ == "__main__":
    sys.exit(main())

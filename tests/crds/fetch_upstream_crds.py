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
network-operator v26.4.1, nv-ipam at network-operator v26.4.1's component tag, network-operator v26.7.0-rc.2 with its
sub-charts and components, and gitops/: Flux
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
NETOP_267_TAG = "v26.7.0-rc.2"
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
    # The 26.7 line (network-operator v26.7.0-rc.2, ../shared/crds/network-operator-v26.7.0-rc.2/SOURCES.md): the chart's
    # CRDs and its sub-charts', and those the operator's manifests carry (their numeric prefix dropped), one subdirectory
    # per component as in ../shared.
    "network-operator-" + NETOP_267_TAG: (
        "https://raw.githubusercontent.com/Mellanox/network-operator/%s/" % NETOP_267_TAG,
        [
            ('maintenance-operator/maintenance.nvidia.com_maintenanceoperatorconfigs.yaml',
             'deployment/network-operator/charts/maintenance-operator-chart/crds/maintenance.nvidia.com_maintenanceoperatorconfigs.yaml',
             'de25219e9a6b3bc3536254e098e19f64ae5c9413211bd2c89eaeb8c514b6117c'),
            ('maintenance-operator/maintenance.nvidia.com_nodemaintenances.yaml',
             'deployment/network-operator/charts/maintenance-operator-chart/crds/maintenance.nvidia.com_nodemaintenances.yaml',
             '4c5ccab7fce4b23f933e35b9789963de8b8ef867ac767f69f1a54f639c5db1c9'),
            ('network-operator/Chart.yaml',
             'deployment/network-operator/Chart.yaml',
             'ad720a8c35f5faab661ba56daccc2af2eb53d97ff0c368fa9bb2ddb44f918afe'),
            ('network-operator/chart-values.yaml',
             'deployment/network-operator/values.yaml',
             '04f9c524c0f4d24f96d7d6a72c0458b07708240af780d99aaf0b5cc09ee04823'),
            ('network-operator/k8s.cni.cncf.io_networkattachmentdefinitions_crd.yaml',
             'deployment/network-operator/crds/k8s.cni.cncf.io_networkattachmentdefinitions_crd.yaml',
             '747d79ff867d49a32c1d1d51f66d19cdfa2d447fadde255699bdcf4ad0760c09'),
            ('network-operator/mellanox.com_hostdevicenetworks.yaml',
             'deployment/network-operator/crds/mellanox.com_hostdevicenetworks.yaml',
             '2b82a5ee6875bddc4c386535d3e62b5019a19d22ed96830b85bbca8fe0bf0468'),
            ('network-operator/mellanox.com_ipoibnetworks.yaml',
             'deployment/network-operator/crds/mellanox.com_ipoibnetworks.yaml',
             '45714afe7663b52f1c2e5a34b2e672164b2fe7135e00f44fc7fe8271f136f3f0'),
            ('network-operator/mellanox.com_macvlannetworks.yaml',
             'deployment/network-operator/crds/mellanox.com_macvlannetworks.yaml',
             'c96b97de448c0603b0c764790c5fb362d4f6167fefa4e69c2fcdd5001245e647'),
            ('network-operator/mellanox.com_nicclusterpolicies.yaml',
             'deployment/network-operator/crds/mellanox.com_nicclusterpolicies.yaml',
             'dc18351711ce90efeb93bd4d2cacea38c3db84c55badda640c2c346c1e2feeba'),
            ('network-operator/mellanox.com_nicnodepolicies.yaml',
             'deployment/network-operator/crds/mellanox.com_nicnodepolicies.yaml',
             '6770cf103dbeffda776b3f8b7f005204fa14c3003c6caa420a10c34dc9a52777'),
            ('nic-configuration-operator/configuration.net.nvidia.com_nicconfigurationtemplates.yaml',
             'manifests/state-nic-configuration-operator/001-configuration.net.nvidia.com_nicconfigurationtemplates.yaml',
             'f0afc6c044d2734287fe8c6ae8a6da4d6d0bd1c23e1c2c2f5754503a66366983'),
            ('nic-configuration-operator/configuration.net.nvidia.com_nicdevices.yaml',
             'manifests/state-nic-configuration-operator/002-configuration.net.nvidia.com_nicdevices.yaml',
             '3a1891590abfafee487f4cc62988e8e6342967f103d015298a0781575bdafffb'),
            ('nic-configuration-operator/configuration.net.nvidia.com_nicfirmwaresources.yaml',
             'manifests/state-nic-configuration-operator/003-configuration.net.nvidia.com_nicfirmwaresources.yaml',
             '0044b1eb9ccbe88e28f4cb94461614e72df19d8e1c9219c04228efc841437233'),
            ('nic-configuration-operator/configuration.net.nvidia.com_nicfirmwaretemplates.yaml',
             'manifests/state-nic-configuration-operator/004-configuration.net.nvidia.com_nicfirmwaretemplates.yaml',
             '83a89c1b75e88b3ae82c9573587a95e1fe3465c689d4086c4849ddac28c48664'),
            ('nic-configuration-operator/configuration.net.nvidia.com_nicinterfacenametemplates.yaml',
             'manifests/state-nic-configuration-operator/005-configuration.net.nvidia.com_nicinterfacenametemplates.yaml',
             'ba7af654d18240f17df07baaaee4cfc61884c37621d752aa66d28e1a14477016'),
            ('nv-ipam/nv-ipam.nvidia.com_cidrpools.yaml',
             'manifests/state-nv-ipam-cni/005-nv-ipam.nvidia.com_cidrpools.yaml',
             '5a8f34ce70ce8fc3cb7dcab718a2a108086d4b812e0a6613dc6d9750f7191878'),
            ('nv-ipam/nv-ipam.nvidia.com_ippools.yaml',
             'manifests/state-nv-ipam-cni/005-nv-ipam.nvidia.com_ippools.yaml',
             'd9b459c15b7d57edc8cbb6d406c1952a2120c2ab1126ce1c017cb4c1cfb0dc5a'),
            ('spectrum-x-operator/spectrumx.nvidia.com_spectrumxrailpoolconfigs.yaml',
             'manifests/state-spectrum-x-operator/0001-spectrumx.nvidia.com_spectrumxrailpoolconfigs.yaml',
             'ab3b9d9c10ac95508acb0c648b05f159436c31919b6c7d982fefe615eec5ec0c'),
            ('sriov-network-operator/Chart.yaml',
             'deployment/network-operator/charts/sriov-network-operator/Chart.yaml',
             'e987bf93cb5b1a1ee023e351e0b20a9e09bb196d0fa8722b45537810ff5b23aa'),
            ('sriov-network-operator/sriovnetwork.k8snetworkplumbingwg.io_deviceattributes.yaml',
             'deployment/network-operator/charts/sriov-network-operator/crds/sriovnetwork.k8snetworkplumbingwg.io_deviceattributes.yaml',
             '8cdb9b3c23af10e1a20f9414b590b2d40c524ab766dfea05d8471f5f46361d85'),
            ('sriov-network-operator/sriovnetwork.k8snetworkplumbingwg.io_sriovresourcepolicies.yaml',
             'deployment/network-operator/charts/sriov-network-operator/crds/sriovnetwork.k8snetworkplumbingwg.io_sriovresourcepolicies.yaml',
             '7def3100c833f00c3ff0391add2f15ce767900b4af97d2c27b4e2f520708d4c9'),
            ('sriov-network-operator/sriovnetwork.openshift.io_ovsnetworks.yaml',
             'deployment/network-operator/charts/sriov-network-operator/crds/sriovnetwork.openshift.io_ovsnetworks.yaml',
             'ecc9aff54d01b5d791084149ae323eb4e56eac85fd34cfb83ce18bd28b51acf9'),
            ('sriov-network-operator/sriovnetwork.openshift.io_sriovibnetworks.yaml',
             'deployment/network-operator/charts/sriov-network-operator/crds/sriovnetwork.openshift.io_sriovibnetworks.yaml',
             '3b7bd2bd646cb4dbdef097e0d0c24b1892610abda7e1593f57955b31fc67eab2'),
            ('sriov-network-operator/sriovnetwork.openshift.io_sriovnetworknodepolicies.yaml',
             'deployment/network-operator/charts/sriov-network-operator/crds/sriovnetwork.openshift.io_sriovnetworknodepolicies.yaml',
             'd5c7015453c2e06047dfb3d0b05d966166231f9724fc9a3b97289362ef53a783'),
            ('sriov-network-operator/sriovnetwork.openshift.io_sriovnetworknodestates.yaml',
             'deployment/network-operator/charts/sriov-network-operator/crds/sriovnetwork.openshift.io_sriovnetworknodestates.yaml',
             '241fb297859166e26ba60d600f5b2c8985b31c749ca17757750f103608d2f9c6'),
            ('sriov-network-operator/sriovnetwork.openshift.io_sriovnetworkpoolconfigs.yaml',
             'deployment/network-operator/charts/sriov-network-operator/crds/sriovnetwork.openshift.io_sriovnetworkpoolconfigs.yaml',
             'aeca1dfcb14872a0d76c972517295dff24b6debff98920aad22d80428c2f599c'),
            ('sriov-network-operator/sriovnetwork.openshift.io_sriovnetworks.yaml',
             'deployment/network-operator/charts/sriov-network-operator/crds/sriovnetwork.openshift.io_sriovnetworks.yaml',
             '6ff12b06a1b8560883315b35990f28bd97dba79d861c7bb752c40db1f3355674'),
            ('sriov-network-operator/sriovnetwork.openshift.io_sriovoperatorconfigs.yaml',
             'deployment/network-operator/charts/sriov-network-operator/crds/sriovnetwork.openshift.io_sriovoperatorconfigs.yaml',
             'c926d1724408d6c135c0d29a82f61bbdd1c273ed9ec099314e9955b05b84f2d2'),
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

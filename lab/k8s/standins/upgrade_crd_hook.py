# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-in for the container of the network-operator chart's hook Job network-operator-upgrade-crd.

Helm installs a chart's crds/ on the first install only and never upgrades them. The chart's
pre-install/pre-upgrade hook Job (templates/upgrade-crd-hook.yaml) runs the operator image's
``/apply-crds --crds-dir=/crds/network-operator [--crds-dir=/crds/sriov-network-operator]
[--crds-dir=/crds/node-feature-discovery] [--crds-dir=/crds/maintenance-operator]``: the image
carries the CRDs of its own release (the chart's crds/ and those of its sub-charts), and apply-crds
(upstream cmd/apply-crds) creates each CRD that is missing and updates each that exists.

There is no container runtime here, so the kubelet stand-in calls this for a hook pod before it
marks the pod Succeeded. It does exactly that with the CRDs of the chart the hook belongs to: the
release being installed or upgraded to, named by the pod's ``helm.sh/chart`` label
(network-operator-<version>), read from ``<charts dir>/network-operator-<version>.tgz``. When that
archive is missing the pod is left running (not Succeeded), as a crash-looping container would be,
and Helm's wait fails.
"""

import logging
import tarfile
from pathlib import Path

import yaml

from . import _kube

LOG = logging.getLogger("standins.upgrade_crd_hook")
COMMAND = ["/apply-crds"]
# The image's /crds/<dir> -> where the chart archive holds those CRDs.
CRDS_DIRS = {
    "/crds/network-operator": "network-operator/crds/",
    "/crds/sriov-network-operator": "network-operator/charts/sriov-network-operator/crds/",
    "/crds/node-feature-discovery": "network-operator/charts/node-feature-discovery/crds/",
    "/crds/maintenance-operator": "network-operator/charts/maintenance-operator-chart/crds/",
}
CRD_PATH = _kube.path("apiextensions.k8s.io", "v1", "customresourcedefinitions")


class HookError(Exception):
    pass


def is_hook_pod(pod):
    return any(c.get("command") == COMMAND for c in pod["spec"].get("containers", []))


def _crds_dirs(pod):
    dirs = []
    for c in pod["spec"].get("containers", []):
        if c.get("command") == COMMAND:
            dirs += [a.split("=", 1)[1] for a in c.get("args", []) if a.startswith("--crds-dir=")]
    return dirs


def chart_crds(archive, dirs):
    """The CRD documents of ``dirs`` (image paths) in the chart archive, in file order."""
    unknown = [d for d in dirs if d not in CRDS_DIRS]
    if unknown:
        raise HookError("unknown --crds-dir %s (known: %s)" % (", ".join(unknown), ", ".join(CRDS_DIRS)))
    crds = []
    with tarfile.open(archive) as tar:
        members = sorted((m for m in tar.getmembers() if m.isfile() and m.name.endswith((".yaml", ".yml"))), key=lambda m: m.name)
        for d in dirs:
            for m in members:
                if m.name.startswith(CRDS_DIRS[d]) and "/" not in m.name[len(CRDS_DIRS[d]):]:
                    crds += [doc for doc in yaml.safe_load_all(tar.extractfile(m)) if doc and doc.get("kind") == "CustomResourceDefinition"]
    return crds


class UpgradeCrdHook:
    def __init__(self, kube, charts_dir):
        self.kube = kube
        self.charts_dir = Path(charts_dir)

    def archive(self, pod):
        chart = (pod["metadata"].get("labels") or {}).get("helm.sh/chart", "")
        if not chart.startswith("network-operator-"):
            raise HookError("pod %s has no helm.sh/chart=network-operator-<version> label" % pod["metadata"]["name"])
        path = self.charts_dir / (chart + ".tgz")
        if not path.is_file():
            raise HookError("%s not found: the hook stand-in applies the CRDs of the chart being installed (set GPUFABRIC_SHARED_DIR)" % path)
        return path

    def run(self, pod):
        """Apply the CRDs as /apply-crds does; returns the names created and updated."""
        archive = self.archive(pod)
        done = {"created": [], "updated": []}
        for crd in chart_crds(archive, _crds_dirs(pod)):
            name = crd["metadata"]["name"]
            current = self.kube.get_or_none(CRD_PATH + "/" + name)
            if current is None:
                self.kube.create(CRD_PATH, crd)
                done["created"].append(name)
            else:
                crd["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                self.kube.request("PUT", CRD_PATH + "/" + name, body=crd)
                done["updated"].append(name)
        LOG.info("hook pod %s/%s: applied the CRDs of %s: created %s, updated %d", pod["metadata"]["namespace"], pod["metadata"]["name"],
                 archive.name, done["created"] or "none", len(done["updated"]))
        return done

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""network_operator_ipam: whereabouts on network-operator 26.4.1 (issue 18, "defects found on the way").

The NicClusterPolicy of 26.x has no whereabouts component, so nothing would deploy it and every pod of a whereabouts
SriovNetwork would fail at creation. On a real control plane without the whereabouts CRD, site.yml's operator phase
must stop with the cause and a fix that works, before it changes anything: no namespace, no Helm release.

On the session control plane while it is still empty: this module runs before test_shared_cluster.py and
test_standins.py (file order), whose session Helm release would create the namespace. A refusal needs no control plane
of its own.
"""

import os
import shutil
import subprocess
import sys

import yaml
from k8s_helpers import REPO, chart_path, chart_version

SITE = str(REPO / "playbooks" / "site.yml")
VENV_BIN = os.path.dirname(sys.executable)
NAMESPACE = "nvidia-network-operator"


def test_whereabouts_without_its_crd_is_refused_before_any_change(cluster, tmp_path):
    # The session cluster as this test needs it: nothing installed yet.
    assert cluster.kube.get_or_none("/api/v1/namespaces/%s" % NAMESPACE) is None
    inv = tmp_path / "inventory"
    shutil.copytree(REPO / "inventories" / "example", inv)
    controller = inv / "group_vars" / "k8s_controller.yml"
    values = yaml.safe_load(controller.read_text(encoding="utf-8"))
    values.update({"roce_k8s_mode": "apply", "network_operator_chart_path": str(chart_path()), "network_operator_chart_version": chart_version(),
                   "network_operator_kubeconfig": str(cluster.kubeconfig), "network_operator_ipam": "whereabouts"})
    controller.write_text(yaml.safe_dump(values), encoding="utf-8")
    env = dict(cluster.env, ANSIBLE_COLLECTIONS_PATH=str(REPO / ".build" / "collections"), ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PATH="%s:%s" % (VENV_BIN, cluster.env["PATH"]))
    cmd = [os.path.join(VENV_BIN, "ansible-playbook"), "-i", str(inv), SITE, "--tags", "operator"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, check=False, cwd=str(tmp_path))  # noqa: S603
    out = proc.stdout + proc.stderr
    flat = " ".join(out.split())
    assert proc.returncode != 0, out[-6000:]
    assert ("network_operator_ipam=whereabouts but the CRD ippools.whereabouts.cni.cncf.io is not installed: network-operator 26.x "
            "no longer deploys whereabouts. Fix: install whereabouts (k8snetworkplumbingwg/whereabouts) first, or set "
            "network_operator_ipam: nv-ipam.") in flat, out[-6000:]
    # Nothing changed: no namespace, no release.
    assert cluster.kube.get_or_none("/api/v1/namespaces/%s" % NAMESPACE) is None
    releases = cluster.run("helm", "list", "--all-namespaces", "--output", "json").stdout
    assert yaml.safe_load(releases) == [], releases

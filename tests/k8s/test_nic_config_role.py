# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The QoS model the operator way through the roles (site.yml --tags operator,sriov, apply mode) on the real control plane.

inventories/example with ``roce_qos: {}``, ``roce_qos_via: operator`` and ``roce_nic_type: "1021"`` in group_vars/all
(so that the controller sees it too and the NicClusterPolicy gets ``nicConfigurationOperator``): the operator phase
installs the chart and the policy, whose stand-in brings the NIC Configuration Operator's CRDs; the sriov phase applies
one NicConfigurationTemplate per node, with the fabric label, before the node policies, and waits until each template
lists its node's rail NIC (the nic-configuration stand-in plays the operator and its daemon). node1's second ConnectX-7,
which no rail uses, is left alone. Then node2 goes back to ``roce_qos_via: host``: its template is pruned, node1's stays.
A --check run before the first install predicts the templates (created once their CRD is served) and changes nothing.
What this does not prove: firmware, nvconfig or mlnx_qos on a ConnectX (no NIC here). Its own control plane (a module
cluster): test_nic_config.py creates the NicClusterPolicy by hand on its own.
"""

import os
import re
import shutil
import subprocess
import sys

import yaml
from k8s_helpers import REPO, chart_path, chart_version

SITE = str(REPO / "playbooks" / "site.yml")
VENV_BIN = os.path.dirname(sys.executable)
NAMESPACE = "nvidia-network-operator"
MLNX = {"feature.node.kubernetes.io/pci-15b3.present": "true"}
CX7 = {"vendor": "15b3", "deviceID": "1021", "totalvfs": 16, "mtu": 9000}
CLUSTER_HARDWARE = {
    "node1": {
        "labels": MLNX,
        "interfaces": [dict(CX7, name="enp157s0np0", pciAddress="0000:9d:00.0"), dict(CX7, name="enp160s0np0", pciAddress="0000:a0:00.0")],
    },  # not a rail: left alone
    "node2": {"labels": MLNX, "interfaces": [dict(CX7, name="enp157s0np0", pciAddress="0000:9d:00.0")]},
}
TEMPLATES = "/apis/configuration.net.nvidia.com/v1alpha1/namespaces/%s/nicconfigurationtemplates" % NAMESPACE
DEVICES = "/apis/configuration.net.nvidia.com/v1alpha1/namespaces/%s/nicdevices" % NAMESPACE


def _inventory(tmp_path, cluster):
    inv = tmp_path / "inventory"
    shutil.copytree(REPO / "inventories" / "example", inv)
    (inv / "group_vars" / "all.yml").write_text('---\nroce_qos: {}\nroce_qos_via: operator\nroce_nic_type: "1021"\n', encoding="utf-8")
    controller = inv / "group_vars" / "k8s_controller.yml"
    values = yaml.safe_load(controller.read_text(encoding="utf-8"))
    values.update(
        {
            "roce_fabric_name": "qos-lab",
            "network_operator_chart_path": str(chart_path()), "network_operator_chart_version": chart_version(),
            "network_operator_kubeconfig": str(cluster.kubeconfig),
            "network_operator_ready_timeout": 300,
            "network_operator_poll_interval": 2,
            "sriov_networks_sync_timeout": 120,
            "sriov_networks_poll_interval": 2,
        }
    )
    controller.write_text(yaml.safe_dump(values), encoding="utf-8")
    return inv


def _site(inv, cluster, tmp_path, tags, *args):
    env = dict(
        cluster.env,
        ANSIBLE_COLLECTIONS_PATH=str(REPO / ".build" / "collections"),
        ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        PATH="%s:%s" % (VENV_BIN, cluster.env["PATH"]),
    )
    cmd = [os.path.join(VENV_BIN, "ansible-playbook"), "-i", str(inv), SITE, "--tags", tags, *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False, cwd=str(tmp_path))  # noqa: S603
    return proc.returncode, proc.stdout + proc.stderr


def _task_status(out, name):
    """The first status word (ok, changed, skipping) after the task whose title starts with ``name``."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("TASK [") and name in line)
    return next(line.split(":", 1)[0] for line in lines[start + 1:] if line.split(":", 1)[0] in ("ok", "changed", "skipping"))


def _reason(dev):
    return next((c["reason"] for c in (dev.get("status") or {}).get("conditions") or [] if c["type"] == "ConfigUpdateInProgress"), None)


def test_the_sriov_phase_applies_the_templates_waits_for_the_match_and_prunes_a_node_back_to_host(module_cluster, tmp_path):
    cluster, kube = module_cluster, module_cluster.kube
    inv = _inventory(tmp_path, cluster)
    # check mode before the first install: the templates are predicted, to be created once their CRD is served
    rc, out = _site(inv, cluster, tmp_path, "operator,sriov", "--check")
    assert rc == 0, out[-8000:]
    flat = " ".join(out.split())
    assert "nicConfigurationOperator): " in flat and "NicConfigurationTemplate/roce-node1-1021, NicConfigurationTemplate/roce-node2-1021" in flat, out[-6000:]
    # ... and changed nothing: no namespace, no release, no CRD of the chart or of the NIC Configuration Operator
    assert kube.get_or_none("/api/v1/namespaces/%s" % NAMESPACE) is None
    assert cluster.run("helm", "list", "--all-namespaces", "-q").stdout.strip() == ""
    crds = {c["metadata"]["name"] for c in kube.items("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")}
    assert not {"nicclusterpolicies.mellanox.com", "nicconfigurationtemplates.configuration.net.nvidia.com"} & crds, sorted(crds)

    # The firmware reboot is not waited for: the stand-in keeps it pending for 10 minutes (its state dir's
    # standins-reboot-delay) while the role's wait returns on the match. Without the file, a loaded machine's first poll
    # could already find the 2 s reboot over.
    reboot_delay = cluster.state_dir / "standins-reboot-delay"
    reboot_delay.write_text("600\n", encoding="utf-8")
    try:
        rc, out = _site(inv, cluster, tmp_path, "operator,sriov")
    finally:
        reboot_delay.unlink()
    assert rc == 0, out[-8000:]
    flat = " ".join(out.split())
    # The wait returned on the match, with both NICs still updating: the stand-in's apply step (UpdateStarted, its apply
    # delay) or the firmware reboot it keeps pending. Which of the two the first poll sees depends on the machine's load.
    listed = re.search(r"2/2 rail NICs listed by their NicConfigurationTemplate \(([^)]*)\)", flat)
    assert listed, out[-6000:]
    reasons = dict((reason, int(n)) for n, reason in (part.split(" ", 1) for part in listed.group(1).split(", ")))
    assert sum(reasons.values()) == 2 and set(reasons) <= {"UpdateStarted", "PendingReboot"}, listed.group(0)
    # applied before the node policies: the objects of the one apply, in the order it applied them
    applied = flat.split("Objects of fabric qos-lab (created or changed): ", 1)[1]
    assert applied.startswith("NicConfigurationTemplate/roce-node1-1021, NicConfigurationTemplate/roce-node2-1021, "
                              "SriovNetworkNodePolicy/roce-node1"), applied[:400]

    assert _task_status(out, "Apply the NicConfigurationTemplates") == "changed"
    # idempotence: check mode then an apply again leave the templates as they are
    for args in (["--check"], []):
        rc, again = _site(inv, cluster, tmp_path, "sriov", *args)
        assert rc == 0, again[-8000:]
        assert _task_status(again, "Apply the NicConfigurationTemplates") == "ok", again[-6000:]

    templates = {t["metadata"]["name"]: t for t in kube.items(TEMPLATES)}
    assert sorted(templates) == ["roce-node1-1021", "roce-node2-1021"]
    for name, t in templates.items():
        assert t["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "gpufabric.roce", "gpufabric.roce/fabric": "qos-lab"}
        assert t["spec"]["nicSelector"] == {"nicType": "1021", "pciAddresses": ["0000:9d:00.0"]}
        assert t["status"]["nicDevices"] == ["%s-1021-0000-9d-00" % name.split("-")[1]]
    devices = {d["metadata"]["name"]: d for d in kube.items(DEVICES)}
    assert devices["node2-1021-0000-9d-00"]["spec"]["configuration"]["template"] == templates["roce-node2-1021"]["spec"]["template"]
    spare = devices["node1-1021-0000-a0-00"]
    assert not (spare.get("spec") or {}).get("configuration") and _reason(spare) == "DeviceConfigSpecEmpty"

    # node2 back to the host way: its template is pruned, node1's stays (same object)
    version = templates["roce-node1-1021"]["metadata"]["resourceVersion"]
    with open(inv / "host_vars" / "node2.yml", "a", encoding="utf-8") as f:
        f.write("roce_qos_via: host\n")
    rc, out = _site(inv, cluster, tmp_path, "sriov")
    assert rc == 0, out[-8000:]
    flat = " ".join(out.split())
    assert "Deleting 1 object(s) of fabric qos-lab no longer in the inventory: NicConfigurationTemplate/roce-node2-1021" in flat, out[-6000:]
    assert "Pruned (no longer in the inventory): NicConfigurationTemplate/roce-node2-1021" in flat, out[-6000:]
    templates = {t["metadata"]["name"]: t for t in kube.items(TEMPLATES)}
    assert sorted(templates) == ["roce-node1-1021"] and templates["roce-node1-1021"]["metadata"]["resourceVersion"] == version

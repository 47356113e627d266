# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The QoS model the operator way (issue 19) on the real control plane: the NicClusterPolicy with
nicConfigurationOperator brings the NIC Configuration Operator's CRDs (network-operator stand-in, as the real
operator's state-nic-configuration-operator does), the rendered NicConfigurationTemplates pass the real API server
(openAPI schema and CEL rules), and the nic-configuration stand-in (the operator and its daemon) configures every
rail's NIC and no other: a second ConnectX-7 on node1 that no rail uses keeps an empty spec. A template that selects a
rail's NIC a second time leaves it unconfigured with upstream's SpecError event, and the NIC is configured again once
that template is gone. What this does not prove: firmware, nvconfig or mlnx_qos on a ConnectX (no NIC here)."""

import copy
import os
import sys

import yaml
from k8s_helpers import REPO, wait_for  # puts lab/k8s on sys.path
from standins import _kube

sys.path.insert(0, str(REPO / "tests" / "unit" / "plugins" / "module_utils"))
sys.path.insert(0, str(REPO / ".build" / "collections"))  # the link tests/unit/conftest.py and the Makefile make
import k8s_crd_schema  # noqa: E402

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nic_config import NIC_CONFIG_DEFAULT_KEYS, render_nic_config_templates
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.operator import NCP_DEFAULT_KEYS, render_nic_cluster_policy
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults

NAMESPACE = "nvidia-network-operator"
GROUP = ("configuration.net.nvidia.com", "v1alpha1")
MLNX = {"feature.node.kubernetes.io/pci-15b3.present": "true"}  # what NFD's nvidia-nics-rules would set
CX7 = {"vendor": "15b3", "deviceID": "1021", "totalvfs": 16, "mtu": 9000}
CLUSTER_HARDWARE = {
    "node1": {"labels": MLNX, "interfaces": [dict(CX7, name="enp157s0np0", pciAddress="0000:9d:00.0"),
                                             dict(CX7, name="enp160s0np0", pciAddress="0000:a0:00.0")]},  # not a rail: left alone
    "node2": {"labels": MLNX, "interfaces": [dict(CX7, name="enp157s0np0", pciAddress="0000:9d:00.0")]},
}


def _yaml(path):
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _shared_crds():
    return k8s_crd_schema.crds_dir()


def _inventory():
    base = REPO / "inventories" / "example"
    group = yaml.safe_load((base / "group_vars" / "roce_nodes.yml").read_text(encoding="utf-8"))
    hv = {h: dict(group, **yaml.safe_load((base / "host_vars" / ("%s.yml" % h)).read_text(encoding="utf-8")),
                  roce_qos={}, roce_qos_via="operator", roce_nic_type="1021") for h in ("node1", "node2")}
    hv["node2"]["roce_qos"] = {"tos": 98, "cnp_priority": 5}  # node2's own QoS: its own template
    return list(hv), hv


def _path(resource, name=None, sub=None, namespace=NAMESPACE):
    return _kube.path(*GROUP, resource, namespace=namespace, name=name, sub=sub)


def _reason(dev):
    return next((c["reason"] for c in dev.get("status", {}).get("conditions", []) if c["type"] == "ConfigUpdateInProgress"), None)


def test_templates_applied_on_the_real_api_server_configure_every_rail_nic(module_cluster):
    kube = module_cluster.kube
    crd_path = _kube.path("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    ncp_crd = _yaml(os.path.join(_shared_crds(), "network-operator-v26.4.1", "mellanox.com_nicclusterpolicies.yaml"))
    kube.create(crd_path, ncp_crd)
    kube.create(_kube.path("", "v1", "namespaces"), {"metadata": {"name": NAMESPACE}})
    wait_for("the NicClusterPolicy CRD", lambda: _established(kube, "nicclusterpolicies.mellanox.com"), timeout=30)
    settings = {"network_operator_nic_configuration_operator": True, "network_operator_ipam": "none"}
    policy = render_nic_cluster_policy(with_role_defaults("network_operator", NCP_DEFAULT_KEYS, settings))
    wait_for("the NicClusterPolicy to be accepted", lambda: _create(kube, _kube.path("mellanox.com", "v1alpha1", "nicclusterpolicies"), policy), 30)
    # the network-operator stand-in installs the five CRDs of state-nic-configuration-operator
    for plural in ("nicconfigurationtemplates", "nicdevices", "nicfirmwaresources", "nicfirmwaretemplates", "nicinterfacenametemplates"):
        wait_for("CRD %s" % plural, lambda p=plural: _established(kube, "%s.configuration.net.nvidia.com" % p), timeout=30)

    # the upstream example: the original fails the real API server's validation, the fixed copy passes (server dry run)
    examples = os.path.join(_shared_crds(), "nic-configuration-operator-network-operator-v26.4.1", "examples")
    for name, ok in (("example-nicconfigurationtemplate-connectx6dx.yaml", False), ("example-nicconfigurationtemplate-connectx6dx.fixed.yaml", True)):
        obj = _yaml(os.path.join(examples, name))
        obj["metadata"]["namespace"] = NAMESPACE
        try:
            kube.request("POST", _path("nicconfigurationtemplates"), body=obj, query={"dryRun": "All"})
            accepted = True
        except _kube.KubeError as err:
            accepted = False
            assert err.status == 422 and "pciAddresses[1]" in err.message, err.message
        assert accepted is ok, name

    hosts, hv = _inventory()
    rendered = render_nic_config_templates(fabric_table(hv, hosts), hv, hosts, with_role_defaults("sriov_networks", NIC_CONFIG_DEFAULT_KEYS))
    assert len(rendered["templates"]) == 2
    for tpl in rendered["templates"]:
        kube.create(_path("nicconfigurationtemplates"), tpl)  # the API server checks the schema and the CEL rules

    def configured():
        devs = {d["metadata"]["name"]: d for d in kube.items(_path("nicdevices"))}
        want = {"%s-1021-%s" % (d["node_name"], d["pci_address"][:-2].replace(":", "-")): d for d in rendered["devices"]}
        if not set(want) <= set(devs) or any(_reason(devs[n]) != "UpdateSuccessful" for n in want):
            return None
        return devs, want

    devs, want = wait_for("every rail's NicDevice to report UpdateSuccessful", configured, timeout=60)
    templates = {t["metadata"]["name"]: t for t in rendered["templates"]}
    for name, d in want.items():
        assert devs[name]["spec"]["configuration"] == {"template": templates[d["template"]]["spec"]["template"]}
        assert devs[name]["metadata"]["annotations"]["lastAppliedState"]
        assert devs[name]["metadata"]["ownerReferences"][0]["kind"] == "Node"
    assert devs["node2-1021-0000-9d-00"]["spec"]["configuration"]["template"]["roceOptimized"]["qos"]["tos"] == 98
    spare = devs["node1-1021-0000-a0-00"]  # the ConnectX-7 no rail uses
    assert not spare.get("spec", {}).get("configuration") and _reason(spare) == "DeviceConfigSpecEmpty"
    for name in templates:
        status = kube.get(_path("nicconfigurationtemplates", name=name)).get("status", {})
        assert status.get("nicDevices") == [n for n, d in want.items() if d["template"] == name]

    # The stand-in, as the operator, labels a node after configuring its devices in the same pass: wait for the label
    # rather than read it between the two writes.
    def labelled():
        labels = {n: kube.get(_kube.path("", "v1", "nodes", name=n))["metadata"]["labels"] for n in ("node1", "node2")}
        return labels if all(v.get("network.nvidia.com/operator.nic-configuration.wait") == "false" for v in labels.values()) else None

    wait_for("both nodes labelled nic-configuration.wait=false", labelled, timeout=30)

    # a second template selecting node1's rail NIC: the operator applies neither, as upstream
    rogue = copy.deepcopy(templates["roce-node1-1021"])
    rogue["metadata"]["name"] = "not-ours"
    rogue["spec"]["nicSelector"].pop("pciAddresses")
    kube.create(_path("nicconfigurationtemplates"), rogue)
    wait_for("node1's rail NIC to lose its configuration", lambda: not kube.get(_path("nicdevices", name="node1-1021-0000-9d-00"))
             .get("spec", {}).get("configuration"), timeout=30)
    # the event is an object of its own, written after the device's spec: a reader can see the spec first
    wait_for("upstream's SpecError event naming both templates", lambda: any(
        e["reason"] == "SpecError" and e["involvedObject"]["name"] == "node1-1021-0000-9d-00"
        and "not-ours" in e["message"] and "roce-node1-1021" in e["message"]
        for e in kube.items(_kube.path("", "v1", "events", namespace=NAMESPACE))), timeout=30)
    kube.delete(_path("nicconfigurationtemplates", name="not-ours"))
    wait_for("node1's rail NIC configured again", lambda: _reason(kube.get(_path("nicdevices", name="node1-1021-0000-9d-00"))) == "UpdateSuccessful"
             and kube.get(_path("nicdevices", name="node1-1021-0000-9d-00")).get("spec", {}).get("configuration"), timeout=30)


def _create(kube, path, body):
    kube.create(path, body)
    return True


def _established(kube, name):
    crd = kube.get_or_none(_kube.path("apiextensions.k8s.io", "v1", "customresourcedefinitions", name=name))
    return crd and any(c["type"] == "Established" and c["status"] == "True" for c in (crd.get("status") or {}).get("conditions") or [])

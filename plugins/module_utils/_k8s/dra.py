# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DRA mode (``sriov_networks_resource_api: dra``): the pods' VFs come from ResourceClaims instead of the SR-IOV
device plugin's extended resources.

With the sriov-network-operator's ``dynamicResourceAllocation`` feature gate on, the operator deploys
k8snetworkplumbingwg/dra-driver-sriov instead of the device plugin and makes, from the SriovNetworkNodePolicies, what
the driver needs: a SriovResourcePolicy per node, a DeviceAttributes per resourceName (which gives each VF the attribute
``k8s.cni.cncf.io/resourceName = <prefix>/<resourceName>``), the driver's DeviceClass and one DeviceClass per
resourceName. The collection renders only what the operator does not make: the feature gate (a Helm value of the
network-operator chart, :func:`helm_values`) and one ResourceClaimTemplate per rail (:func:`claim_templates`).

A rail's claim asks the driver's own DeviceClass (named after the driver) for one RDMA-capable VF whose resourceName
attribute is the rail's: the same attribute the operator's per-resourceName classes select on, without depending on
how the operator names those classes. With ``sriov_networks_dra_align_gpu`` the claim also takes one GPU and requires
both devices to share ``resource.kubernetes.io/pcieRoot``, the standard attribute both drivers publish: the scheduler
picks the pair on each node, so no PCI address is ever written into a claim.

That pairing is wrong on ConnectX-8 "Data Direct" systems (GB300, Vera Rubin): the NIC's DMA goes through a separate
PCI function under another PCIe root than the NIC's own, so the GPU that pairs with a VF is not on the root the VF
publishes, and NVIDIA's drivers do not model that yet. :func:`data_direct_refusal` refuses the alignment on the nodes
whose rail NICs are, or may be, Data Direct, from what the preflight role found on them (``preflight_data_direct``).
"""

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, GpufabricErrors, plain
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import hosts_named
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import MANAGED_BY_LABEL, MANAGED_BY_VALUE, is_dns_subdomain

DRIVER = "sriovnetwork.k8snetworkplumbingwg.io"
# The driver's DeviceClass (the operator's bindata and the driver's chart both name it after the driver).
VF_DEVICE_CLASS = DRIVER
# Set on each VF by the operator's DeviceAttributes: the resource prefix and the policy's resourceName.
RESOURCE_NAME_DOMAIN, RESOURCE_NAME_ATTRIBUTE = "k8s.cni.cncf.io", "resourceName"
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"
FEATURE_GATE = "dynamicResourceAllocation"
RESOURCE_APIS = ("device-plugin", "dra")
VF_REQUEST, GPU_REQUEST = "vf", "gpu"
CLAIM_API_VERSION = "resource.k8s.io/v1"
VF_CONFIG_API_VERSION = DRIVER + "/v1alpha1"

# The variables read here (cluster-wide, from the play host).
DRA_DEFAULT_KEYS = ("sriov_networks_resource_api", "sriov_networks_dra_align_gpu", "sriov_networks_dra_gpu_device_class")

_HOST = "(cluster)"


def check_settings(errs, cluster, ipam):
    """The DRA settings, checked: ``{"dra": bool, "align_gpu": bool, "gpu_class": str}``, or None after a problem.
    ``cluster(key)`` reads a cluster-wide variable; ``ipam``: sriov_networks_ipam (already checked by the caller)."""
    before = len(errs.items)
    api = cluster("sriov_networks_resource_api")
    if api not in RESOURCE_APIS:
        errs.add(_HOST, "sriov_networks_resource_api", api, "must be device-plugin or dra",
                 "set sriov_networks_resource_api to device-plugin (pods request <prefix>/<resourceName> as an extended "
                 "resource) or dra (pods claim their VFs through the rendered ResourceClaimTemplates)",
                 fix_vars=[{_HOST: {"sriov_networks_resource_api": a}} for a in RESOURCE_APIS])
    align = cluster("sriov_networks_dra_align_gpu")
    if not isinstance(align, bool):
        errs.add(_HOST, "sriov_networks_dra_align_gpu", align, "must be a boolean",
                 "set sriov_networks_dra_align_gpu to true (each rail's claim also takes the GPU on its VF's PCIe root) or false, "
                 "unquoted",
                 fix_vars=[{_HOST: {"sriov_networks_dra_align_gpu": b}} for b in (False, True)])
    gpu_class = cluster("sriov_networks_dra_gpu_device_class")
    if not is_dns_subdomain(gpu_class):
        errs.add(_HOST, "sriov_networks_dra_gpu_device_class", gpu_class, "not a DeviceClass name",
                 "set it to the DeviceClass of the GPUs' DRA driver, e.g. gpu.nvidia.com (NVIDIA's DRA driver for GPUs)",
                 fix_vars=[{_HOST: {"sriov_networks_dra_gpu_device_class": "gpu.nvidia.com"}}])
    if len(errs.items) > before:
        return None
    if api == "device-plugin" and align:
        errs.add(_HOST, "sriov_networks_dra_align_gpu", align,
                 "pairs each rail's VF with a GPU only in DRA mode, and sriov_networks_resource_api is device-plugin: nothing "
                 "would be aligned",
                 "set sriov_networks_resource_api to dra as well, or sriov_networks_dra_align_gpu to false",
                 fix_vars=[{_HOST: {"sriov_networks_resource_api": "dra"}}, {_HOST: {"sriov_networks_dra_align_gpu": False}}])
        return None
    if api == "dra" and ipam == "host-local":
        # host-local gives every node its own resourceName and network per rail: a claim template per rail would fit one node.
        errs.add(_HOST, "sriov_networks_resource_api", api,
                 "claims one VF of each rail by the rail's resourceName with one template for every node, but with "
                 "sriov_networks_ipam host-local every node has its own resourceName and network per rail",
                 "set sriov_networks_ipam to nv-ipam with sriov_networks_nv_ipam_pool empty (one network, resource and CIDRPool per "
                 "rail for every node), or sriov_networks_resource_api to device-plugin",
                 fix_vars=[{_HOST: {"sriov_networks_ipam": "nv-ipam", "sriov_networks_nv_ipam_pool": ""}},
                           {_HOST: {"sriov_networks_resource_api": "device-plugin"}}])
        return None
    return {"dra": api == "dra", "align_gpu": align, "gpu_class": gpu_class}


def _vf_selector(resource):
    return ('device.attributes["%s"].%s == "%s" && device.attributes["%s"].rdmaCapable'
            % (RESOURCE_NAME_DOMAIN, RESOURCE_NAME_ATTRIBUTE, resource, DRIVER))


def claim_template(network, resource, if_name, settings):
    """The ResourceClaimTemplate of one rail, named and placed as its SriovNetwork ``network`` (whose
    NetworkAttachmentDefinition the operator writes into the network's ``networkNamespace``, where the pods run): one VF
    of ``resource`` (``<prefix>/<resourceName>``), configured for that network as ``if_name``; with align_gpu, one GPU on
    the VF's PCIe root."""
    name, namespace = network["metadata"]["name"], network["spec"]["networkNamespace"]
    requests = [{"name": VF_REQUEST, "exactly": {"deviceClassName": VF_DEVICE_CLASS, "count": 1,
                                                 "selectors": [{"cel": {"expression": _vf_selector(resource)}}]}}]
    devices = {"requests": requests}
    if settings["align_gpu"]:
        requests.append({"name": GPU_REQUEST, "exactly": {"deviceClassName": settings["gpu_class"], "count": 1}})
        devices["constraints"] = [{"requests": [VF_REQUEST, GPU_REQUEST], "matchAttribute": PCIE_ROOT}]
    # The driver's own settings for the VF; in the operator's MULTUS mode the pod's Multus annotation attaches the same
    # network under the same name, so both modes give the pod the same interface.
    devices["config"] = [{"requests": [VF_REQUEST], "opaque": {"driver": DRIVER, "parameters": {
        "apiVersion": VF_CONFIG_API_VERSION, "kind": "VfConfig", "ifName": if_name,
        "netAttachDefName": name, "netAttachDefNamespace": namespace}}}]
    return {"apiVersion": CLAIM_API_VERSION, "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace, "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}},
            "spec": {"spec": {"devices": devices}}}


def claim_templates(settings, networks, prefix):
    """One ResourceClaimTemplate per rendered SriovNetwork (with a cluster-wide IPAM: one per rail, in the rails' order);
    the rail's interface is ``net<i>``, as Multus names the networks of a pod's annotation. Empty unless ``settings`` is
    DRA mode."""
    if not settings or not settings["dra"]:
        return []
    return [plain(claim_template(n, "%s/%s" % (prefix, n["spec"]["resourceName"]), "net%d" % i, settings))
            for i, n in enumerate(networks, start=1)]


def helm_values(resource_api):
    """The network-operator chart's values that DRA mode needs: the sriov-network-operator's feature gate, which the
    sub-chart writes into SriovOperatorConfig/default. Empty in device-plugin mode (the chart's default, no gate)."""
    if resource_api != "dra":
        return {}
    return {"sriov-network-operator": {"sriovOperatorConfig": {"featureGates": {FEATURE_GATE: True}}}}


ALIGN_FIELD = "sriov_networks_dra_align_gpu"


def _data_direct_rail(rail):
    """One rail of ``preflight_data_direct`` (``rail_data_direct`` of _common/pci_topology.py), in words."""
    found = rail.get("data_direct") or {}
    nic = "rail NIC %s (PF %s, %s on pcieRoot %s)" % (rail.get("rdma_device") or "none", rail.get("pf"),
                                                      rail.get("pci_address") or "no PCI function", rail.get("root_complex") or "unknown")
    if found.get("pairing") == "unknown":
        functions = ", ".join("%s on %s" % (c.get("device"), c.get("root_complex")) for c in found.get("candidates") or []) or "none listed"
        return ("%s may be ConnectX-8 Data Direct: the node has the Data Direct function(s) %s, and which one serves this NIC is "
                "unknown (%s)" % (nic, functions, found.get("reason") or "no reason given"))
    return ("%s is ConnectX-8 Data Direct: its DMA goes through %s on pcieRoot %s (ansible_facts.rdma.gpu_nic_topology.nics.%s.data_direct)"
            % (nic, found.get("device"), found.get("root_complex"), rail.get("rdma_device")))


def data_direct_refusal(findings, hosts):
    """GPU alignment checked against the nodes' Data Direct NICs: ``{"message", "refused", "unchecked"}``.

    ``findings``: per host, its ``preflight_data_direct`` (the rails whose NIC is or may be Data Direct, empty when none);
    ``hosts``: the rendered nodes. ``message``: every refusal, one line per problem (the nodes with the same one named
    together), or None; ``refused``: the hosts refused; ``unchecked``: the hosts without findings (the preflight role did
    not run on them in this run, or the render has no node facts)."""
    findings = plain(findings) or {}
    by_problem = {}
    for host in hosts:
        rails = findings.get(host)
        if not rails:
            continue
        roots = sorted(set(r["data_direct"]["root_complex"] for r in rails
                           if (r.get("data_direct") or {}).get("root_complex")))
        problem = ("%s; so the GPU that pairs with its VFs is not on the resource.kubernetes.io/pcieRoot they publish, and a claim that "
                   "matches pcieRoot takes the wrong GPU or none (NVIDIA's DRA drivers do not model Data Direct yet)"
                   % "; ".join(_data_direct_rail(r) for r in rails))
        fix = ("set sriov_networks_dra_align_gpu: false (each rail's claim then takes a VF only), or pin the claim by hand: a "
               "ResourceClaimTemplate of your own whose GPU request selects the GPU on the Data Direct function's root (%s), "
               "for the pods of these nodes" % (", ".join(roots) if roots else "see ansible_facts.rdma.data_direct"))
        by_problem.setdefault((problem, fix), []).append(host)
    errors = [GpufabricError(hosts_named(h), ALIGN_FIELD, True, problem, fix, fix_vars=[{_HOST: {ALIGN_FIELD: False}}])
              for (problem, fix), h in by_problem.items()]
    refused = [h for group in by_problem.values() for h in group]
    message = None
    if errors:
        head = ("GPU alignment by resource.kubernetes.io/pcieRoot refused on %d node(s) whose rail NICs are or may be ConnectX-8 "
                "Data Direct; nothing was written or applied:" % len(refused))
        message = str(GpufabricErrors(errors, "\n".join([head] + ["  - %s" % e for e in errors])))
    return {"message": message, "refused": refused, "unchecked": [h for h in hosts if h not in findings]}

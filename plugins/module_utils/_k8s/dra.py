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
"""

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import plain
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

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-ins for the DRA side of a GPU node, for tests/k8s/test_dra.py: what the real kube-scheduler allocates from.

- **dra-driver-sriov's kubelet plugin** (k8snetworkplumbingwg/dra-driver-sriov, pkg/devicestate/discovery.go and
  pkg/driver/driver.go, read at its commit cd9404f): one ResourceSlice per node of driver
  ``sriovnetwork.k8snetworkplumbingwg.io`` whose one pool is named after the node; one device per VF, named after the VF's
  PCI address with ``:`` and ``.`` made ``-``, with the attributes the driver discovers (``<driver>/PFName``,
  ``<driver>/pciAddress``, ``<driver>/rdmaCapable``, ``resource.kubernetes.io/pcieRoot`` and ``pciBusID``, ...) plus
  ``k8s.cni.cncf.io/resourceName = <prefix>/<resourceName>``, which the sriov-network-operator's DeviceAttributes give
  every VF of a policy's resource.
- **a GPU DRA driver**: one ResourceSlice per node of driver ``gpu.nvidia.com`` (NVIDIA's DRA driver for GPUs), a device
  per GPU with the attributes this stand-in chose in that driver's style (``type``, ``index``, ``uuid``, ``productName``,
  in the driver's own domain) and the standard ``resource.kubernetes.io/pcieRoot`` and ``pciBusID``: the alignment
  depends on ``pcieRoot`` only, which a real GPU driver must publish for it to work.
- **the DeviceClasses**: the driver's own class, as the sriov-network-operator deploys it with the feature gate on
  (bindata/manifests/dra-driver/001-deviceclass.yaml) and the driver's chart does, and ``gpu.nvidia.com``, as the GPU
  driver's chart does: each selects its driver's devices.

Nothing here allocates: that is kube-scheduler's work, the real one.
"""

SRIOV_DRIVER = "sriovnetwork.k8snetworkplumbingwg.io"
GPU_DRIVER = "gpu.nvidia.com"
RESOURCE_API = ("resource.k8s.io", "v1")


def _s(value):
    return {"string": value}


def device_name(pci):
    return pci.replace(":", "-").replace(".", "-")


def vf_device(pf, vf_id, vf_pci, resource):
    """One VF of ``pf`` (``{"name", "pci", "root", "numa"}``) as dra-driver-sriov publishes it, with the resourceName
    attribute the operator's DeviceAttributes add."""
    d = SRIOV_DRIVER + "/"
    return {"name": device_name(vf_pci), "attributes": {
        d + "vendor": _s("15b3"), d + "deviceID": _s("101e"), d + "pfDeviceID": _s("1021"),
        d + "pciAddress": _s(vf_pci), "k8s.cni.cncf.io/deviceID": _s(vf_pci), d + "PFName": _s(pf["name"]),
        d + "EswitchMode": _s("legacy"), d + "vfID": {"int": vf_id}, "resource.kubernetes.io/pcieRoot": _s(pf["root"]),
        d + "pfPciAddress": _s(pf["pci"]), "resource.kubernetes.io/pciBusID": _s(vf_pci), d + "linkType": _s("ethernet"),
        d + "rdmaCapable": {"bool": True}, "dra.net/numaNode": {"int": pf["numa"]},
        "k8s.cni.cncf.io/resourceName": _s(resource)}}


def gpu_device(index, pci, root):
    return {"name": "gpu-%d" % index, "attributes": {
        "type": _s("gpu"), "index": {"int": index}, "uuid": _s("GPU-%08d-0000-0000-0000-%012d" % (index, int(pci[5:7], 16))),
        "productName": _s("NVIDIA H100 80GB HBM3"), "resource.kubernetes.io/pcieRoot": _s(root),
        "resource.kubernetes.io/pciBusID": _s(pci)}}


def resource_slice(driver, node, devices):
    return {"apiVersion": "/".join(RESOURCE_API), "kind": "ResourceSlice",
            "metadata": {"name": "%s-%s" % (node, driver.replace(".", "-"))},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}


def node_slices(node, rails, gpus):
    """The two slices of a node. ``rails``: ``[(pf, [(vf_id, vf_pci)], resource)]``; ``gpus``: ``[(pci, root)]``."""
    vfs = [vf_device(pf, vf_id, pci, resource) for pf, vf_list, resource in rails for vf_id, pci in vf_list]
    return [resource_slice(SRIOV_DRIVER, node, vfs),
            resource_slice(GPU_DRIVER, node, [gpu_device(i, pci, root) for i, (pci, root) in enumerate(gpus)])]


def device_classes():
    return [{"apiVersion": "/".join(RESOURCE_API), "kind": "DeviceClass", "metadata": {"name": driver},
             "spec": {"selectors": [{"cel": {"expression": "device.driver == '%s'" % driver}}]}}
            for driver in (SRIOV_DRIVER, GPU_DRIVER)]

"""Unit tests of plugins/module_utils/_k8s_{common,sriov,operator,status}.py (renderer, validator, status helpers)."""

import copy
import ipaddress
import json
import os

import pytest
import yaml
from k8s_crd_schema import crds_dir

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import common, status
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import operator as op
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import vlan_gateway_plan
from planned_render import render_sriov
from role_fallbacks import helm_defaults, ncp_defaults, sriov_defaults

PF = "enp157s0np0"


def reference_hostvars():
    """The reference two-node cluster of docs/inventory.md, as hostvars."""
    return {
        "node1": {"roce_node_name": "node1", "roce_pf": PF, "roce_pod_subnet": "10.255.0.0/30", "roce_pod_gateway": "10.255.0.2"},
        "node2": {"roce_node_name": "node2", "roce_pf": PF, "roce_pod_subnet": "10.255.0.4/30", "roce_pod_gateway": "10.255.0.6"},
    }


REFERENCE_DEFAULTS = {"roce_num_vfs": 8, "roce_mtu": 9000, "roce_vlan_id": 100}


def render(hv=None, defaults=None, hosts=None):
    hv = reference_hostvars() if hv is None else hv
    return render_sriov(list(hv) if hosts is None else hosts, hv, sriov_defaults(dict(REFERENCE_DEFAULTS, **(defaults or {}))))


def errors_of(hv=None, defaults=None, hosts=None):
    with pytest.raises(common.RenderValidationError) as info:
        render(hv, defaults, hosts)
    return info.value


# ------------------------------------------------------------------------------ reference render


def test_reference_two_node_render_every_field():
    out = render()
    assert [p["metadata"]["name"] for p in out["policies"]] == ["roce-node1", "roce-node2"]
    assert [n["metadata"]["name"] for n in out["networks"]] == ["roce-node1", "roce-node2"]
    for node, subnet, gateway in (("node1", "10.255.0.0/30", "10.255.0.2"), ("node2", "10.255.0.4/30", "10.255.0.6")):
        policy = next(p for p in out["policies"] if p["metadata"]["name"] == "roce-" + node)
        assert policy == {
            "apiVersion": "sriovnetwork.openshift.io/v1",
            "kind": "SriovNetworkNodePolicy",
            "metadata": {"name": "roce-" + node, "namespace": "nvidia-network-operator", "labels": {"app.kubernetes.io/managed-by": "gpufabric.roce"}},
            "spec": {
                "resourceName": "roce_" + node,
                "nodeSelector": {"kubernetes.io/hostname": node},
                "priority": 99,
                "mtu": 9000,
                "numVfs": 8,
                "nicSelector": {"pfNames": [PF], "vendor": "15b3"},
                "deviceType": "netdevice",
                "isRdma": True,
                "linkType": "eth",
            },
        }
        network = next(n for n in out["networks"] if n["metadata"]["name"] == "roce-" + node)
        spec = network["spec"]
        assert network["apiVersion"] == "sriovnetwork.openshift.io/v1"
        assert network["kind"] == "SriovNetwork"
        assert network["metadata"]["namespace"] == "nvidia-network-operator"
        assert network["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "gpufabric.roce"}
        assert spec["resourceName"] == "roce_" + node
        assert spec["vlan"] == 100
        assert spec["vlanQoS"] == 0
        assert spec["trust"] == "on" and isinstance(spec["trust"], str)
        assert spec["spoofChk"] == "off" and isinstance(spec["spoofChk"], str)
        assert spec["linkState"] == "enable"
        assert spec["networkNamespace"] == "default"
        assert "minTxRate" not in spec and "maxTxRate" not in spec
        assert json.loads(spec["ipam"]) == {"type": "host-local", "subnet": subnet, "gateway": gateway, "routes": [{"dst": "0.0.0.0/0"}]}
    assert out["nodes"] == [
        {
            "host": "node1",
            "node_name": "node1",
            "policies": ["roce-node1"],
            "resources": {"nvidia.com/roce_node1": 8},
            "interfaces": [{"name": PF, "numVfs": 8, "mtu": 9000}],
        },
        {
            "host": "node2",
            "node_name": "node2",
            "policies": ["roce-node2"],
            "resources": {"nvidia.com/roce_node2": 8},
            "interfaces": [{"name": PF, "numVfs": 8, "mtu": 9000}],
        },
    ]


def test_too_few_pod_addresses_and_a_default_route_on_the_vf_are_warned_once_for_every_node():
    """Issue 42 item 7: the seed's /30 per node leaves one pod address beside the gateway for 8 VFs, and a default route on
    the VF loses to eth0's, so pods reached the other nodes' subnets through the cluster network. Both rendered silently."""
    out = render()  # the seed: /30s, and the role's default routes [{dst: 0.0.0.0/0}]
    assert out["warnings"] == [
        "node1 (and 1 other node: node2): roce_num_vfs=8: is more than the 1 pod address a /30 pod subnet holds beside its gateway: "
        "the node offers 8 VFs to pods, and a pod on a VF beyond them gets no address and does not start. Fix: give every node a pod "
        "subnet of at least /28, e.g. a /24 each (roce_pod_subnet: 10.255.0.0/24 with roce_pod_gateway: 10.255.0.254, the next node "
        "10.255.1.0/24), or lower roce_num_vfs to 1",
        'node1 (and 1 other node: node2): sriov_networks_ipam_routes=[{"dst": "0.0.0.0/0"}]: gives the pods a second default route, '
        "on the VF: the default route of eth0 (the cluster network) wins, so traffic to the other nodes' pod subnets leaves through "
        "eth0 instead of the rail. Fix: route only the pod subnets of the fabric: sriov_networks_ipam_routes: [{dst: 10.255.0.0/29}] "
        "(the smallest network holding every node's roce_pod_subnet), through the node's gateway",
    ]
    # What inventories/example has now: a /24 per node, the fabric's range as the route. Nothing to say.
    hv = {"node1": {"roce_pf": PF, "roce_pod_subnet": "10.255.0.0/24", "roce_pod_gateway": "10.255.0.254"},
          "node2": {"roce_pf": PF, "roce_pod_subnet": "10.255.1.0/24", "roce_pod_gateway": "10.255.1.254"}}
    assert render(hv, {"sriov_networks_ipam_routes": [{"dst": "10.255.0.0/16"}]})["warnings"] == []
    # Only the pod network's own VFs take addresses: a /29 (5 addresses) is enough for half the PF's 8.
    hv = {"node1": {"roce_pf": PF, "roce_pod_subnet": "10.255.0.0/29", "roce_pod_gateway": "10.255.0.6", "sriov_networks_pf_names": [PF + "#0-3"],
                    "sriov_networks_extra_policies": [{"name": "dpdk", "pf_names": [PF + "#4-7"], "resource_name": "dpdk_node1",
                                                       "device_type": "vfio-pci", "is_rdma": False}]}}
    assert render(hv, {"sriov_networks_ipam_routes": [{"dst": "10.255.0.0/16"}]})["warnings"] == []


@pytest.mark.parametrize("ipam", ["host-local", "nv-ipam"])
def test_a_rails_small_subnets_and_default_route_are_named_by_the_rails_own_keys(ipam):
    rails = [{"name": "rail0", "pf": "enp12s0np0", "vlan": 101, "subnet_pool": "10.101.0.0/16", "subnet_prefix": 24},
             {"name": "rail1", "pf": "enp18s0np0", "vlan": 102, "subnet_pool": "10.102.0.0/16", "subnet_prefix": 29, "routes": [{"dst": "0.0.0.0/0"}]}]
    warnings = render({"gpu1": {"roce_rails": rails}, "gpu2": {"roce_rails": rails}}, {"sriov_networks_ipam": ipam})["warnings"]
    assert [w.split(": ")[:2] for w in warnings] == [["gpu1 (and 1 other node", "gpu2)"]] * 2
    assert "roce_rails[rail1].num_vfs=8: is more than the 5 pod addresses a /29 pod subnet holds beside its gateway" in warnings[0]
    assert warnings[0].endswith("Fix: give rail rail1 a subnet of at least /28 per node (subnet_prefix: 28 or less in roce_rails, e.g. 24, "
                                "or a larger roce_rail_overrides.rail1.subnet), or lower its num_vfs to 5")
    assert 'roce_rails[rail1].routes=[{"dst": "0.0.0.0/0"}]: gives the pods a second default route' in warnings[1]
    assert warnings[1].endswith("Fix: route the rail's own plane only: leave routes of rail rail1 unset (its default is "
                                "[{dst: <its subnet_pool>}])")


def test_builtin_defaults_match_the_seed_without_role_defaults():
    hv = reference_hostvars()
    out = render_sriov(list(hv), hv, sriov_defaults({}))
    assert out["policies"][0]["spec"]["numVfs"] == 8
    assert out["policies"][0]["spec"]["mtu"] == 9000
    assert out["networks"][0]["spec"]["vlan"] == 100


def test_node_name_defaults_to_inventory_hostname():
    hv = reference_hostvars()
    del hv["node1"]["roce_node_name"]
    out = render(hv)
    assert out["policies"][0]["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "node1"}


def test_group_defaults_apply_and_host_values_win():
    hv = reference_hostvars()
    hv["node2"]["sriov_networks_priority"] = 10
    hv["node2"]["roce_num_vfs"] = 16
    out = render(hv, defaults={"sriov_networks_priority": 50, "roce_num_vfs": 4})
    assert [p["spec"]["priority"] for p in out["policies"]] == [50, 10]
    assert [p["spec"]["numVfs"] for p in out["policies"]] == [4, 16]


def test_templated_digit_strings_become_integers():
    hv = reference_hostvars()
    hv["node1"]["roce_num_vfs"] = "8"
    hv["node1"]["roce_vlan_id"] = "100"
    out = render(hv)
    assert out["policies"][0]["spec"]["numVfs"] == 8
    assert out["networks"][0]["spec"]["vlan"] == 100


def test_vf_ranges_extra_policy_and_allocatable_counts():
    hv = reference_hostvars()
    hv["node1"]["sriov_networks_pf_names"] = [PF + "#0-5"]
    hv["node1"]["sriov_networks_extra_policies"] = [
        {"name": "dpdk", "pf_names": [PF + "#6-7"], "resource_name": "dpdk_node1", "device_type": "vfio-pci", "is_rdma": False}
    ]
    out = render(hv)
    names = [p["metadata"]["name"] for p in out["policies"]]
    assert names == ["roce-node1", "roce-node1-dpdk", "roce-node2"]
    dpdk = out["policies"][1]["spec"]
    assert dpdk["nicSelector"]["pfNames"] == [PF + "#6-7"]
    assert dpdk["deviceType"] == "vfio-pci" and dpdk["isRdma"] is False
    assert dpdk["nodeSelector"] == {"kubernetes.io/hostname": "node1"}
    assert out["nodes"][0]["resources"] == {"nvidia.com/roce_node1": 6, "nvidia.com/dpdk_node1": 2}
    assert len(out["networks"]) == 2  # extra policies get no network


def test_tx_rates_are_rendered_when_set():
    hv = reference_hostvars()
    hv["node1"].update(sriov_networks_min_tx_rate=100, sriov_networks_max_tx_rate=1000, sriov_networks_vlan_qos=3)
    spec = render(hv)["networks"][0]["spec"]
    assert (spec["minTxRate"], spec["maxTxRate"], spec["vlanQoS"]) == (100, 1000, 3)


def test_whereabouts_renders_one_cluster_wide_network():
    out = render(defaults={"sriov_networks_ipam": "whereabouts", "sriov_networks_whereabouts_range": "10.255.0.0/16"})
    assert [n["metadata"]["name"] for n in out["networks"]] == ["roce"]
    assert [p["spec"]["resourceName"] for p in out["policies"]] == ["roce", "roce"]
    assert json.loads(out["networks"][0]["spec"]["ipam"]) == {"type": "whereabouts", "range": "10.255.0.0/16", "routes": [{"dst": "0.0.0.0/0"}]}
    assert out["nodes"][1]["resources"] == {"nvidia.com/roce": 8}


def test_nv_ipam_references_the_pool():
    out = render(defaults={"sriov_networks_ipam": "nv-ipam", "sriov_networks_nv_ipam_pool": "roce-pool"})
    assert len(out["networks"]) == 1
    assert json.loads(out["networks"][0]["spec"]["ipam"]) == {"type": "nv-ipam", "poolName": "roce-pool", "poolType": "ippool"}


def test_cluster_wide_ipam_one_network_per_resource_name():
    hv = reference_hostvars()
    hv["node2"]["sriov_networks_resource_name"] = "roce_b"
    out = render(hv, defaults={"sriov_networks_ipam": "nv-ipam", "sriov_networks_nv_ipam_pool": "roce-pool"})
    assert [(n["metadata"]["name"], n["spec"]["resourceName"]) for n in out["networks"]] == [("roce-roce", "roce"), ("roce-roce-b", "roce_b")]


# ------------------------------------------------------------------------------ bad inputs


def _set(host, **kv):
    def mutate(hv, defaults):
        hv[host].update(kv)

    return mutate


def _cluster(**kv):
    def mutate(hv, defaults):
        defaults.update(kv)

    return mutate


def _delete(host, key):
    def mutate(hv, defaults):
        del hv[host][key]

    return mutate


_DPDK = {"name": "dpdk", "pf_names": [PF + "#4-7"], "resource_name": "dpdk_node1", "device_type": "vfio-pci", "is_rdma": False}

# (id, mutation, exact message expected among the errors)
BAD_INPUTS = [
    (
        "resource-name-chars",
        _set("node1", sriov_networks_resource_name="roce-node1"),
        'node1: sriov_networks_resource_name="roce-node1": resourceName must match ^[a-zA-Z0-9_]+$. '
        "Fix: use only letters, digits and underscores, e.g. roce_node1",
    ),
    ("num-vfs-zero", _set("node1", roce_num_vfs=0), "node1: roce_num_vfs=0: numVfs must be at least 1. Fix: set roce_num_vfs to 1..128"),
    (
        "num-vfs-above-mellanox-max",
        _set("node2", roce_num_vfs=129),
        "node2: roce_num_vfs=129: numVfs exceeds the Mellanox maximum of 128 VFs per PF. Fix: set roce_num_vfs to 128 or less",
    ),
    ("num-vfs-not-int", _set("node1", roce_num_vfs="eight"), 'node1: roce_num_vfs="eight": must be an integer. Fix: set roce_num_vfs to a whole number'),
    (
        "priority-range",
        _set("node1", sriov_networks_priority=100),
        "node1: sriov_networks_priority=100: must be between 0 and 99 (0 is the highest priority). Fix: set sriov_networks_priority to 0..99",
    ),
    ("vlan-range", _set("node2", roce_vlan_id=4095), "node2: roce_vlan_id=4095: must be between 0 and 4094 (0 = untagged). Fix: set roce_vlan_id to 0..4094"),
    (
        "vlan-qos-range",
        _set("node1", sriov_networks_vlan_qos=8),
        "node1: sriov_networks_vlan_qos=8: must be between 0 and 7 (802.1p priority). Fix: set sriov_networks_vlan_qos to 0..7",
    ),
    (
        "vf-range-end-not-below-numvfs",
        _set("node1", sriov_networks_pf_names=[PF + "#0-8"]),
        'node1: sriov_networks_pf_names="enp157s0np0#0-8": VF range end 8 is not below numVfs 8 (VF indexes run 0..7). '
        "Fix: end the range at 7 or less, or raise roce_num_vfs",
    ),
    (
        "vf-range-reversed",
        _set("node1", sriov_networks_pf_names=[PF + "#5-2"]),
        'node1: sriov_networks_pf_names="enp157s0np0#5-2": VF range starts after it ends. Fix: write the range as enp157s0np0#2-5',
    ),
    (
        "vf-range-syntax",
        _set("node1", sriov_networks_pf_names=[PF + "#a-3"]),
        'node1: sriov_networks_pf_names="enp157s0np0#a-3": invalid VF range syntax. '
        "Fix: write '<pf>#<first>-<last>' with whole numbers, e.g. enp157s0np0#0-7",
    ),
    (
        "vf-ranges-overlap-same-pf",
        _set("node1", sriov_networks_pf_names=[PF + "#0-4"], sriov_networks_extra_policies=[_DPDK]),
        'node1: sriov_networks_extra_policies[0].pf_names="enp157s0np0#4-7": VF range 4-7 of policy roce-node1-dpdk overlaps VFs 0-4 of policy '
        "roce-node1 on the same PF enp157s0np0. "
        'Fix: give the policies disjoint VF ranges: set sriov_networks_extra_policies[0].pf_names to ["enp157s0np0#5-7"]',
    ),
    (
        "vfio-pci-with-rdma",
        _set("node2", sriov_networks_device_type="vfio-pci"),
        "node2: sriov_networks_device_type=\"vfio-pci\": deviceType 'vfio-pci' conflicts with isRdma: true. "
        "Fix: set sriov_networks_device_type to 'netdevice', or set sriov_networks_is_rdma to false",
    ),
    (
        "trust-yaml-boolean",
        _set("node1", sriov_networks_trust=True),
        "node1: sriov_networks_trust=true: must be the string 'on' or 'off' (unquoted on/off/yes/no are YAML booleans). "
        "Fix: quote it: sriov_networks_trust: 'on' or sriov_networks_trust: 'off'",
    ),
    (
        "spoofchk-not-on-off",
        _set("node2", sriov_networks_spoof_chk="disabled"),
        "node2: sriov_networks_spoof_chk=\"disabled\": must be the string 'on' or 'off'. "
        "Fix: quote it: sriov_networks_spoof_chk: 'on' or sriov_networks_spoof_chk: 'off'",
    ),
    (
        "pod-subnets-overlap",
        _set("node2", roce_pod_subnet="10.255.0.0/29"),
        'node2: roce_pod_subnet="10.255.0.0/29": overlaps 10.255.0.0/30 of host node1. Fix: give every node a distinct, non-overlapping pod subnet '
        "with its gateway inside it, e.g. set roce_pod_subnet to 10.255.0.8/29 and roce_pod_gateway to 10.255.0.14",
    ),
    (
        "gateway-outside-subnet",
        _set("node1", roce_pod_gateway="10.255.0.6"),
        'node1: roce_pod_gateway="10.255.0.6": gateway is outside the node\'s pod subnet 10.255.0.0/30. '
        "Fix: pick a host address inside 10.255.0.0/30 (the address vlan_gateway puts on <roce_pf>.<roce_vlan_id>)",
    ),
    (
        "gateway-is-network-address",
        _set("node1", roce_pod_gateway="10.255.0.0"),
        'node1: roce_pod_gateway="10.255.0.0": gateway is the network or broadcast address of 10.255.0.0/30. Fix: use a host address of 10.255.0.0/30',
    ),
    (
        "subnet-host-bits",
        _set("node1", roce_pod_subnet="10.255.0.1/30"),
        'node1: roce_pod_subnet="10.255.0.1/30": host bits are set. Fix: write the network address: 10.255.0.0/30',
    ),
    (
        "subnet-missing",
        _delete("node2", "roce_pod_subnet"),
        "node2: roce_pod_subnet=null: required with host-local IPAM. Fix: set roce_pod_subnet to this node's pod subnet, e.g. 10.255.0.4/30 "
        "(the /30 around roce_pod_gateway)",
    ),
    (
        "resource-name-reused-across-nodes-host-local",
        lambda hv, d: [hv["node1"].update(sriov_networks_resource_name="roce"), hv["node2"].update(sriov_networks_resource_name="roce")],
        'node2: sriov_networks_resource_name="roce": resourceName already used by host node1; with host-local IPAM each node needs its own '
        "resourceName so its pods land on the node whose subnet they get. Fix: leave sriov_networks_resource_name unset (per-node default) "
        "or make it unique per node",
    ),
    (
        "resource-name-reused-on-one-node",
        _set("node1", sriov_networks_pf_names=[PF + "#0-3"], sriov_networks_extra_policies=[dict(_DPDK, resource_name="roce_node1")]),
        'node1: sriov_networks_extra_policies[0].resource_name="roce_node1": resourceName already used by policy roce-node1 on this node. '
        "Fix: give every policy on a node its own resourceName",
    ),
    (
        "link-state",
        _set("node1", sriov_networks_link_state="up"),
        'node1: sriov_networks_link_state="up": linkState must be auto, enable or disable. '
        "Fix: set sriov_networks_link_state to 'enable' (or 'auto'/'disable')",
    ),
    (
        "pf-missing",
        _delete("node1", "roce_pf"),
        "node1: roce_pf=[]: no PF to select. Fix: set roce_pf (e.g. enp157s0np0) or sriov_networks_pf_names to a list of PF names",
    ),
    (
        "duplicate-node-name",
        _set("node2", roce_node_name="node1"),
        'node2: roce_node_name="node1": node name already used by host node1. Fix: give each host its own roce_node_name (the Kubernetes node name)',
    ),
    (
        "min-above-max-tx-rate",
        _set("node1", sriov_networks_min_tx_rate=2000, sriov_networks_max_tx_rate=1000),
        "node1: sriov_networks_min_tx_rate=2000: minTxRate is above maxTxRate (1000). "
        "Fix: lower sriov_networks_min_tx_rate or raise sriov_networks_max_tx_rate",
    ),
    (
        "unknown-ipam",
        _cluster(sriov_networks_ipam="dhcp"),
        '(cluster): sriov_networks_ipam="dhcp": unknown IPAM mode. Fix: per-node subnets from roce_pod_subnet: set sriov_networks_ipam to "host-local"; '
        'or one cluster-wide range: set sriov_networks_ipam to "whereabouts" and set sriov_networks_whereabouts_range to "10.255.0.0/16"; '
        'or an existing NVIDIA IPAM pool: set sriov_networks_ipam to "nv-ipam" and set sriov_networks_nv_ipam_pool to "roce-pool"',
    ),
    (
        "whereabouts-without-range",
        _cluster(sriov_networks_ipam="whereabouts"),
        '(cluster): sriov_networks_whereabouts_range="": whereabouts needs one cluster-wide CIDR range. '
        "Fix: set sriov_networks_whereabouts_range, e.g. 10.255.0.0/16",
    ),
    (
        "nv-ipam-bad-pool-name",
        # An empty name is not an error: the pools are then rendered from the inventory (test_k8s_nv_ipam.py).
        _cluster(sriov_networks_ipam="nv-ipam", sriov_networks_nv_ipam_pool="Roce_Pool"),
        '(cluster): sriov_networks_nv_ipam_pool="Roce_Pool": not the name of an nv-ipam pool. '
        "Fix: set sriov_networks_nv_ipam_pool to the name of your IPPool or CIDRPool, e.g. roce-pool, or leave it empty "
        "to have one CIDRPool per rail rendered from the inventory",
    ),
    (
        "partitions-disagree-on-numvfs",
        _set("node1", sriov_networks_pf_names=[PF + "#0-3"], sriov_networks_extra_policies=[dict(_DPDK, num_vfs=16)]),
        "node1: sriov_networks_extra_policies[0].num_vfs=16: policies roce-node1 and roce-node1-dpdk partition PF enp157s0np0 but ask for "
        "different numVfs (8 vs 16). Fix: use the same numVfs in every policy that selects enp157s0np0",
    ),
    (
        "node-selector-non-string",
        _set("node1", sriov_networks_node_selector={"rack": 7}),
        'node1: sriov_networks_node_selector={"rack": 7}: not a valid Kubernetes label selector entry (values must be strings). '
        'Fix: write it as {"kubernetes.io/hostname": "node1", "rack": "7"} (quoted values; the kubernetes.io/hostname entry keeps the policy on its own node)',
    ),
    (
        "ib-without-rdma",
        _set(
            "node2",
            sriov_networks_extra_policies=[{"name": "ib", "pf_names": ["ibp1s0f0"], "resource_name": "ib_node2", "link_type": "ib", "is_rdma": False}],
        ),
        "node2: sriov_networks_extra_policies[0].is_rdma=false: linkType 'ib' requires isRdma: true with deviceType 'netdevice'. "
        "Fix: set sriov_networks_extra_policies[0].is_rdma to true, or sriov_networks_extra_policies[0].link_type to 'eth'",
    ),
    (
        "extra-policy-unknown-key",
        # The main policy keeps 0-3, so that the extra policy's 4-7 is fine once its typo is fixed.
        _set("node1", sriov_networks_pf_names=[PF + "#0-3"], sriov_networks_extra_policies=[dict(_DPDK, numvfs=4)]),
        'node1: sriov_networks_extra_policies[0]=["numvfs"]: unknown key(s). Fix: use only: name, pf_names, resource_name, num_vfs, mtu, link_type, '
        "device_type, is_rdma, priority, node_selector",
    ),
    (
        "same-nodeselector-full-pf-overlap",
        lambda hv, d: [hv[h].update(sriov_networks_node_selector={"feature.node.kubernetes.io/network-sriov.capable": "true"}) for h in hv],
        'node2: roce_pf="enp157s0np0": VF range 0-7 of policy roce-node2 overlaps VFs 0-7 of policy roce-node1 (host node1) on the same PF '
        "enp157s0np0 of a node both may select (a nodeSelector without kubernetes.io/hostname is taken to select any node it does not rule out). "
        'Fix: let each policy select only its own node: set sriov_networks_node_selector to {"feature.node.kubernetes.io/network-sriov.capable": "true", '
        '"kubernetes.io/hostname": "node2"} and set sriov_networks_node_selector of host node1 to '
        '{"feature.node.kubernetes.io/network-sriov.capable": "true", "kubernetes.io/hostname": "node1"}; '
        'or give the policies disjoint VF ranges: set sriov_networks_pf_names of host node1 to ["enp157s0np0#0-3"] '
        'and set sriov_networks_pf_names to ["enp157s0np0#4-7"]',
    ),
    (
        "extra-policy-duplicate-name",
        _set(
            "node1",
            sriov_networks_pf_names=[PF + "#0-3"],
            sriov_networks_extra_policies=[dict(_DPDK, pf_names=[PF + "#4-5"]), dict(_DPDK, pf_names=[PF + "#6-7"], resource_name="dpdk2_node1")],
        ),
        'node1: sriov_networks_extra_policies[1].name="dpdk": another extra policy of this node has the same name, so both would render as one object. '
        "Fix: give each extra policy its own name, e.g. dpdk2",
    ),
    (
        "vf-range-end-with-numvfs-set-twice",
        _set("node1", sriov_networks_pf_names=[PF + "#0-3"], sriov_networks_extra_policies=[dict(_DPDK, pf_names=[PF + "#4-8"], num_vfs=8)]),
        'node1: sriov_networks_extra_policies[0].pf_names="enp157s0np0#4-8": VF range end 8 is not below numVfs 8 (VF indexes run 0..7). '
        "Fix: end the range at 7 or less, or raise roce_num_vfs and sriov_networks_extra_policies[0].num_vfs",
    ),
    (
        "mtu-range",
        _set("node1", roce_mtu=0),
        "node1: roce_mtu=0: must be between 68 and 9978 (bytes). Fix: set roce_mtu to the VF MTU, e.g. 9000 (must not exceed the PF MTU)",
    ),
    (
        # The renderer used to take 1..67, which only the node module refused (after phases 1-2).
        "mtu-below-the-kernel-minimum",
        _set("node1", roce_mtu=67),
        "node1: roce_mtu=67: must be between 68 and 9978 (bytes). Fix: set roce_mtu to the VF MTU, e.g. 9000 (must not exceed the PF MTU)",
    ),
    (
        # RFC 3021 /31: the host-local CNI plugin refuses it ("too small to allocate from").
        "pod-subnet-slash-31",
        _set("node1", roce_pod_subnet="10.255.0.0/31", roce_pod_gateway="10.255.0.0"),
        'node1: roce_pod_subnet="10.255.0.0/31": host-local IPAM cannot allocate from a /31 (the CNI plugin refuses networks smaller than /30, '
        "RFC 3021 point-to-point addressing included), so no pod would get an address next to the gateway. "
        "Fix: use at least a /30 that holds the gateway, e.g. roce_pod_subnet: 10.255.0.0/30 with roce_pod_gateway: 10.255.0.2",
    ),
    (
        "pod-subnet-slash-32",
        _set("node1", roce_pod_subnet="10.255.0.1/32", roce_pod_gateway="10.255.0.1"),
        'node1: roce_pod_subnet="10.255.0.1/32": host-local IPAM cannot allocate from a /32 (the CNI plugin refuses networks smaller than /30, '
        "RFC 3021 point-to-point addressing included), so no pod would get an address next to the gateway. "
        "Fix: use at least a /30 that holds the gateway, e.g. roce_pod_subnet: 10.255.0.0/30 with roce_pod_gateway: 10.255.0.1",
    ),
    (
        "pod-subnet-ipv6-slash-127",
        _set("node1", roce_pod_subnet="fd00::/127", roce_pod_gateway="fd00::1", sriov_networks_ipam_routes=[{"dst": "::/0"}]),
        'node1: roce_pod_subnet="fd00::/127": host-local IPAM cannot allocate from a /127 (the CNI plugin refuses networks smaller than /126, '
        "RFC 3021 point-to-point addressing included), so no pod would get an address next to the gateway. "
        "Fix: use at least a /126 that holds the gateway, e.g. roce_pod_subnet: fd00::/126 with roce_pod_gateway: fd00::1",
    ),
    (
        # An IPv6 pod subnet with the role's default (IPv4) default route.
        "ipv6-pod-subnet-with-an-ipv4-route",
        _set("node1", roce_pod_subnet="fd00:0:0:1::/64", roce_pod_gateway="fd00:0:0:1::1"),
        'node1: sriov_networks_ipam_routes={"dst": "0.0.0.0/0"}: route 0 is IPv4 but the pod subnet fd00:0:0:1::/64 is IPv6: '
        "the IPAM plugin would hand pods a route they cannot use. "
        "Fix: write the routes in the pod network's family, e.g. sriov_networks_ipam_routes: [{dst: '::/0'}]",
    ),
    (
        "route-gateway-outside-the-pod-subnet",
        _set("node1", sriov_networks_ipam_routes=[{"dst": "10.0.0.0/8", "gw": "192.168.1.1"}]),
        'node1: sriov_networks_ipam_routes={"dst": "10.0.0.0/8", "gw": "192.168.1.1"}: route 0\'s gw 192.168.1.1 is not a host address of '
        "the pod subnet 10.255.0.0/30: the pod has no on-link path to it. "
        "Fix: set its gw to the pod gateway 10.255.0.2, or leave gw out of the route (the pod then uses the IPAM gateway)",
    ),
    (
        "route-gateway-is-the-broadcast-address",
        _set("node1", sriov_networks_ipam_routes=[{"dst": "0.0.0.0/0"}, {"dst": "10.0.0.0/8", "gw": "10.255.0.3"}]),
        'node1: sriov_networks_ipam_routes={"dst": "10.0.0.0/8", "gw": "10.255.0.3"}: route 1\'s gw 10.255.0.3 is not a host address of '
        "the pod subnet 10.255.0.0/30: the pod has no on-link path to it. "
        "Fix: set its gw to the pod gateway 10.255.0.2, or leave gw out of the route (the pod then uses the IPAM gateway)",
    ),
    (
        "whereabouts-route-gateway-outside-the-range",
        lambda hv, d: (
            d.update(sriov_networks_ipam="whereabouts", sriov_networks_whereabouts_range="10.255.0.0/16", sriov_networks_whereabouts_gateway="10.255.0.1"),
            d.update(sriov_networks_ipam_routes=[{"dst": "10.0.0.0/8", "gw": "10.254.0.1"}]),
        ),
        'node1: sriov_networks_ipam_routes={"dst": "10.0.0.0/8", "gw": "10.254.0.1"}: route 0\'s gw 10.254.0.1 is not a host address of '
        "the whereabouts range 10.255.0.0/16: the pod has no on-link path to it. "
        "Fix: set its gw to the pod gateway 10.255.0.1, or leave gw out of the route (the pod then uses the IPAM gateway)",
    ),
    (
        # Issue 43 class 9: one mistake (the cluster's vlan_qos) is one message naming the nodes it applies to.
        "vlan-qos-outside-pfc-under-trust-pcp",
        lambda hv, d: (hv["node1"].update(roce_qos={"trust": "pcp"}), hv["node2"].update(roce_qos={"trust": "pcp"}),
                       d.update(sriov_networks_vlan_qos=5)),
        "node1 (and 1 other node: node2): sriov_networks_vlan_qos=5: puts the VFs' traffic, RoCE included, on priority 5 (the priority "
        "of the VLAN tag the VFs' traffic gets, by which trust: pcp classifies it), but PFC is on [3]: RoCE in the pods would not be "
        "lossless. Fix: set sriov_networks_vlan_qos to 3, the RoCE priority (tos 106 >> 5), or use trust: dscp in roce_qos (RoCE is "
        "then classified by its DSCP, whatever the VLAN priority)",
    ),
]


@pytest.mark.parametrize("mutation,expected", [(m, e) for _i, m, e in BAD_INPUTS], ids=[i for i, _m, _e in BAD_INPUTS])
def test_bad_input_is_reported_with_host_field_value_and_fix(mutation, expected):
    hv, defaults = reference_hostvars(), {}
    mutation(hv, defaults)
    exc = errors_of(hv, defaults)
    messages = [str(e) for e in exc.errors]
    assert expected in messages, "\n".join(messages)
    assert expected in str(exc)
    err = next(e for e in exc.errors if str(e) == expected)
    assert err.host and err.field and err.fix


def test_there_are_at_least_fifteen_distinct_bad_input_cases():
    assert len({e for _i, _m, e in BAD_INPUTS}) >= 15


def test_every_problem_in_the_inventory_is_reported_at_once():
    hv = reference_hostvars()
    hv["node1"]["sriov_networks_priority"] = 150
    hv["node1"]["roce_vlan_id"] = 5000
    hv["node2"]["roce_pod_gateway"] = "10.255.0.9"
    exc = errors_of(hv)
    assert {(e.host, e.field) for e in exc.errors} == {
        ("node1", "sriov_networks_priority"),
        ("node1", "roce_vlan_id"),
        ("node2", "roce_pod_gateway"),
    }
    assert str(exc).startswith("3 problems found; nothing was rendered or applied:")


def test_empty_node_list_is_an_error():
    exc = errors_of({}, hosts=[])
    assert str(exc.errors[0]).startswith("(inventory): groups['roce_nodes']=[]: no hosts to render.")


def test_host_without_hostvars_is_an_error():
    exc = errors_of(hosts=["node1", "node2", "node3"])
    assert "node3: hostvars=null: host is in roce_nodes but has no variables" in str(exc)


def test_cluster_wide_network_settings_must_agree():
    hv = reference_hostvars()
    hv["node2"]["roce_vlan_id"] = 200
    exc = errors_of(hv, defaults={"sriov_networks_ipam": "nv-ipam", "sriov_networks_nv_ipam_pool": "roce-pool"})
    assert (
        "node2: roce_vlan_id=200: nodes sharing resourceName roce share one SriovNetwork, but this differs from host node1. "
        "Fix: set roce_vlan_id the same on every node with resourceName roce (e.g. in group_vars)"
    ) in str(exc)


def test_input_is_not_mutated():
    hv = reference_hostvars()
    before = copy.deepcopy(hv)
    render(hv)
    assert hv == before


# ------------------------------------------------------------------------------ network operator


def test_helm_values_defaults():
    assert op.render_helm_values(helm_defaults({})) == {
        "nfd": {"enabled": True, "deployNodeFeatureRules": True},
        "sriovNetworkOperator": {"enabled": True},
        "sriov-network-operator": {"operator": {"resourcePrefix": "nvidia.com"}},
    }


def test_helm_values_overrides_deep_merge_and_win():
    values = op.render_helm_values(
        helm_defaults({
            "network_operator_helm_values_overrides": {
                "nfd": {"deployNodeFeatureRules": False},
                "sriov-network-operator": {"operator": {"resourcePrefix": "x.io"}},
            }
        }))
    assert values["nfd"] == {"enabled": True, "deployNodeFeatureRules": False}
    assert values["sriov-network-operator"]["operator"]["resourcePrefix"] == "x.io"


def test_airgap_relocates_every_chart_image_and_sets_pull_secrets():
    values = op.render_helm_values(helm_defaults({"network_operator_airgap": {"registry": "reg.local:5000/mirror", "image_pull_secrets": ["pull"]}}))
    refs = []
    for path, _kind, _default in op.CHART_IMAGES[op.DEFAULT_CHART_VERSION]:
        node = values
        for k in path:
            node = node[k]
        refs.append(node)
    assert len(refs) == 14
    assert all(ref.startswith("reg.local:5000/mirror/") for ref in refs)
    assert values["operator"]["repository"] == "reg.local:5000/mirror/nvidia/cloud-native"
    assert values["sriov-network-operator"]["images"]["resourcesInjector"] == "reg.local:5000/mirror/k8snetworkplumbingwg/network-resources-injector:v1.7.0"
    assert values["imagePullSecrets"] == ["pull"]
    assert values["sriov-network-operator"]["imagePullSecrets"] == ["pull"]
    assert values["node-feature-discovery"]["imagePullSecrets"] == [{"name": "pull"}]
    # The maintenance chart puts its value verbatim into the pod spec: plain names would fail there.
    assert values["maintenance-operator-chart"]["imagePullSecrets"] == [{"name": "pull"}]


def test_nfd_off_also_turns_off_the_node_feature_rule():
    """The chart's NodeFeatureRule is gated on nfd.deployNodeFeatureRules; its CRD comes with the NFD sub-chart."""
    values = op.render_helm_values(helm_defaults({"network_operator_nfd_enabled": False}))
    assert values["nfd"] == {"enabled": False, "deployNodeFeatureRules": False}


@pytest.mark.parametrize("version,values_file", [("26.4.1", "network-operator-v26.4.1/chart-values.yaml"),
                                                 ("26.7.0-rc.2", "network-operator-v26.7.0-rc.2/network-operator/chart-values.yaml")])
def test_airgap_table_covers_every_image_key_of_the_shared_chart_values(version, values_file):
    """Every image/repository key of the chart's values.yaml must be relocated by the airgap table."""
    path = os.path.join(crds_dir(), values_file)
    if not os.path.exists(path):
        pytest.fail("chart values %s not found; set GPUFABRIC_CRDS_DIR (see k8s_crd_schema.py)" % path)
    with open(path) as fh:
        values = yaml.safe_load(fh)
    found = set()

    def walk(node, trail):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, trail + (k,))
        elif isinstance(node, str) and (trail[-1] == "repository" or trail[-2:-1] == ("images",)):
            found.add(trail)

    walk(values, ())
    table = {path for path, _k, _d in op.CHART_IMAGES[version]}
    assert found == table
    for path, _kind, default in op.CHART_IMAGES[version]:
        node = values
        for k in path:
            node = node[k]
        assert node == default


def test_the_26_7_1_image_list_is_the_rc_charts_keys_in_the_ga_registries():
    """26.7.1's chart is in no snapshot: its keys are rc.2's, its images NVIDIA's GA registries with the 26.7.1 tag."""
    rc, ga = op.CHART_IMAGES["26.7.0-rc.2"], op.CHART_IMAGES["26.7.1"]
    assert [(p, k) for p, k, _d in rc] == [(p, k) for p, k, _d in ga]
    for (_p, _k, rc_default), (path, _kind, ga_default) in zip(rc, ga):
        if path == ("operator", "repository"):
            assert ga_default == "nvcr.io/nvidia/cloud-native"
        else:
            assert ga_default == rc_default.replace("nvcr.io/nvstaging/mellanox", "nvcr.io/nvidia/mellanox").replace("v26.7.0-rc.2", "v26.7.1")


def test_relocate_image_flatten():
    assert op.relocate_image("nvcr.io/nvidia/mellanox/sriov-cni:v1", "mirror.local", preserve_path=False) == "mirror.local/sriov-cni:v1"
    assert op.relocate_image("nvcr.io/nvidia/mellanox", "mirror.local/", preserve_path=False, kind="repo") == "mirror.local"
    assert op.relocate_image("nvcr.io/nvidia/mellanox/node-feature-discovery", "m.local", False, "repo_full") == "m.local/node-feature-discovery"
    assert op.relocate_image("busybox:1", "mirror.local") == "mirror.local/busybox:1"


def test_airgap_flattened_chart_values_give_registry_slash_image():
    values = op.render_helm_values(helm_defaults({"network_operator_airgap": {"registry": "m.local/nv", "preserve_path": False}}))
    assert values["operator"]["repository"] == "m.local/nv"
    assert values["node-feature-discovery"]["image"]["repository"] == "m.local/nv/node-feature-discovery"
    assert values["sriov-network-operator"]["images"]["sriovCni"] == "m.local/nv/sriov-cni:network-operator-v26.7.1"
    assert "imagePullSecrets" not in values


@pytest.mark.parametrize(
    "cfg,expected",
    [
        (
            {"network_operator_airgap": {"registry": "https://reg.local/"}},
            '(cluster): network_operator_airgap.registry="https://reg.local/": not a registry/repository prefix. '
            "Fix: write host[:port][/path] without scheme or trailing slash, e.g. registry.local:5000/nvidia-mirror",
        ),
        (
            {"network_operator_chart_version": "25.1.0", "network_operator_airgap": {"registry": "reg.local"}},
            '(cluster): network_operator_chart_version="25.1.0": the image list for air-gapped relocation is only known for chart 26.4.1, 26.7.0-rc.2, 26.7.1. '
            "Fix: pin network_operator_chart_version to a known version, or add the chart's image keys to CHART_IMAGES "
            "in plugins/module_utils/_k8s/operator.py",
        ),
        (
            {"network_operator_nfd_enabled": "yes"},
            '(cluster): network_operator_nfd_enabled="yes": must be a boolean. Fix: set network_operator_nfd_enabled to true or false (unquoted)',
        ),
    ],
)
def test_helm_values_validation(cfg, expected):
    with pytest.raises(common.RenderValidationError) as info:
        op.render_helm_values(helm_defaults(cfg))
    assert expected in [str(e) for e in info.value.errors]


def test_chart_reference():
    ref = op.render_chart_reference(helm_defaults({}))
    assert ref["repository"] == "https://helm.ngc.nvidia.com/nvidia"
    assert (ref["chart"], ref["version"], ref["release_name"], ref["namespace"]) == (
        "network-operator",
        "26.7.1",
        "network-operator",
        "nvidia-network-operator",
    )
    assert ref["helm_command"].startswith("helm upgrade --install network-operator network-operator --repo https://helm.ngc.nvidia.com/nvidia --version 26.7.1")
    with pytest.raises(common.RenderValidationError) as info:
        op.render_chart_reference(helm_defaults({"network_operator_namespace": "Bad_NS", "network_operator_chart_version": "latest"}))
    assert len(info.value.errors) == 2


def test_nic_cluster_policy_default():
    ncp = op.render_nic_cluster_policy(ncp_defaults({}))
    assert ncp["metadata"] == {"name": "nic-cluster-policy"}
    assert set(ncp["spec"]) == {"secondaryNetwork", "nvIpam"}
    assert ncp["spec"]["secondaryNetwork"]["multus"] == {"image": "multus-cni", "repository": "nvcr.io/nvidia/mellanox", "version": "network-operator-v26.7.1"}
    assert ncp["spec"]["nvIpam"]["enableWebhook"] is False


def test_nic_cluster_policy_full():
    ncp = op.render_nic_cluster_policy(
        ncp_defaults({
            "network_operator_ipam": "whereabouts",
            "network_operator_ofed_driver": True,
            "network_operator_rdma_shared_device_plugin": True,
            "network_operator_airgap": {"registry": "reg.local", "preserve_path": False, "image_pull_secrets": ["pull"]},
            # 26.7.1's DOCA driver tag is not in the release table: a user deploying the driver gives it.
            "network_operator_images": {"multus": {"version": "v4.1.0"}, "ofed_driver": {"version": "doca3.5.0-26.07-0.7.1.0-0"}},
            "network_operator_nic_cluster_policy_overrides": {"ofedDriver": {"forcePrecompiled": True}},
        }))
    spec = ncp["spec"]
    assert "nvIpam" not in spec  # the 26.x CRD has no whereabouts field: nothing is deployed for it
    assert spec["secondaryNetwork"]["multus"] == {"image": "multus-cni", "repository": "reg.local", "version": "v4.1.0", "imagePullSecrets": ["pull"]}
    assert spec["ofedDriver"]["image"] == "doca-driver" and spec["ofedDriver"]["forcePrecompiled"] is True
    assert json.loads(spec["rdmaSharedDevicePlugin"]["config"])["configList"][0]["resourceName"] == "rdma_shared_device_a"
    assert op.ncp_component_names(ncp) == ["ofedDriver", "rdmaSharedDevicePlugin", "secondaryNetwork.cniPlugins", "secondaryNetwork.multus"]


@pytest.mark.parametrize(
    "cfg,expected",
    [
        (
            {"network_operator_ipam": "dhcp"},
            '(cluster): network_operator_ipam="dhcp": unknown IPAM component. Fix: set network_operator_ipam to nv-ipam, whereabouts or none',
        ),
        (
            {"network_operator_images": {"sriov": {}}},
            '(cluster): network_operator_images=["sriov"]: unknown component(s). '
            "Fix: use only cni_plugins, multus, nic_configuration_daemon, nic_configuration_operator, nv_ipam, ofed_driver, rdma_shared_device_plugin",
        ),
        (
            {"network_operator_images": {"multus": {"image": "ghcr.io/multus:v4"}}},
            '(cluster): network_operator_images.multus.image="ghcr.io/multus:v4": image name must match [a-zA-Z0-9-]+. '
            "Fix: give the image name without registry or tag",
        ),
        (
            {"network_operator_rdma_shared_device_plugin": True, "network_operator_rdma_shared_device_plugin_config": "{not json"},
            '(cluster): network_operator_rdma_shared_device_plugin_config="{not json": not valid JSON. '
            "Fix: give a mapping (it is serialised for you) or a JSON string",
        ),
    ],
)
def test_nic_cluster_policy_validation(cfg, expected):
    with pytest.raises(common.RenderValidationError) as info:
        op.render_nic_cluster_policy(ncp_defaults(cfg))
    assert expected in [str(e) for e in info.value.errors]


# ------------------------------------------------------------------------------ status helpers


def test_ncp_unready_components():
    policy = {
        "status": {
            "state": "notReady",
            "appliedStates": [
                {"name": "state-multus-cni", "state": "ready"},
                {"name": "state-OFED", "state": "notReady", "message": "waiting for pods"},
                {"name": "state-rdma-device-plugin", "state": "ignore"},
            ],
        }
    }
    assert status.ncp_unready_components(policy) == ["state-OFED: notReady (waiting for pods)"]
    assert status.ncp_unready_components({}) == ["NicClusterPolicy nic-cluster-policy not found"]
    assert status.ncp_unready_components({"status": {"state": "error", "reason": "bad spec"}}) == ["state=error reason: bad spec"]
    assert status.ncp_unready_components({"status": {"state": "ready", "appliedStates": [{"name": "a", "state": "ready"}]}}) == []


def test_deployments_unavailable():
    deps = [
        {"metadata": {"name": "ok"}, "spec": {"replicas": 1}, "status": {"availableReplicas": 1}},
        {"metadata": {"name": "slow"}, "spec": {"replicas": 2}, "status": {"availableReplicas": 1}},
        {"metadata": {"name": "new"}, "spec": {"replicas": 1}, "status": {}},
    ]
    assert status.deployments_unavailable(deps) == ["slow: 1/2 available", "new: 0/1 available"]


def _state(name, sync, spec_ifaces=None, status_ifaces=None, error=None):
    st = {"metadata": {"name": name}, "spec": {}, "status": {"syncStatus": sync}}
    if spec_ifaces is not None:
        st["spec"]["interfaces"] = spec_ifaces
    if status_ifaces is not None:
        st["status"]["interfaces"] = status_ifaces
    if error:
        st["status"]["lastSyncError"] = error
    return st


_WANT = [{"node_name": "node1", "interfaces": [{"name": PF, "numVfs": 8, "mtu": 9000}]}]
_SPEC = [{"name": PF, "numVfs": 8, "mtu": 9000, "vfGroups": [{"resourceName": "roce_node1", "vfRange": "0-7"}]}]


def test_empty_spec_succeeded_is_not_synced():
    """What the config daemon reports before the operator has written the policies into the state."""
    states = [_state("node1", "Succeeded", status_ifaces=[{"name": PF, "numVfs": 0, "mtu": 1500}])]
    assert status.sriov_node_states_pending(states, _WANT) == [
        "node1: spec.interfaces has no enp157s0np0 yet: the operator has not written the policies into the node state (syncStatus=Succeeded)"
    ]
    assert status.sriov_node_states_failed(states, _WANT) == []


def test_spec_written_but_daemon_still_working_is_pending():
    states = [_state("node1", "InProgress", _SPEC, [{"name": PF, "numVfs": 0, "mtu": 1500}])]
    assert status.sriov_node_states_pending(states, _WANT) == ["node1: syncStatus=InProgress"]


def test_spec_with_other_numvfs_or_mtu_is_pending():
    states = [_state("node1", "Succeeded", [dict(_SPEC[0], numVfs=4)], [{"name": PF, "numVfs": 4, "mtu": 9000}])]
    assert status.sriov_node_states_pending(states, _WANT) == [
        "node1: spec.interfaces enp157s0np0 has numVfs=4 mtu=9000, the policies ask for numVfs=8 mtu=9000"
    ]


def test_succeeded_needs_the_vfs_in_status_too():
    states = [_state("node1", "Succeeded", _SPEC, [{"name": PF, "numVfs": 0, "mtu": 9000}])]
    assert status.sriov_node_states_pending(states, _WANT) == [
        "node1: status.interfaces enp157s0np0 reports numVfs=0 mtu=9000, expected numVfs=8 and mtu of at least 9000"
    ]


def test_synced_node_passes_and_a_larger_pf_mtu_is_fine():
    states = [_state("node1", "Succeeded", _SPEC, [{"name": PF, "numVfs": 8, "mtu": 9216}])]
    assert status.sriov_node_states_pending(states, _WANT) == []


def test_failed_on_our_spec_is_reported_at_once_with_the_error():
    states = [_state("node1", "Failed", _SPEC, [{"name": PF, "numVfs": 0, "mtu": 1500}], error="numVfs 8 > totalvfs 4")]
    assert status.sriov_node_states_failed(states, _WANT) == ["node1: syncStatus=Failed lastSyncError: numVfs 8 > totalvfs 4"]
    assert status.sriov_node_states_pending(states, _WANT) == ["node1: syncStatus=Failed lastSyncError: numVfs 8 > totalvfs 4"]


def test_failed_on_an_older_spec_is_not_ours_yet():
    states = [_state("node1", "Failed", [], error="old failure")]
    assert status.sriov_node_states_failed(states, _WANT) == []


def test_missing_node_state_and_plain_names():
    states = [_state("node1", "Succeeded")]
    assert status.sriov_node_states_pending(states, ["node1", "node3"]) == [
        "node3: no SriovNetworkNodeState yet (is the sriov-network-config-daemon running on it?)"
    ]


def test_managed_orphans_prunes_only_what_the_collection_created():
    rendered = render()["policies"]
    label = {"app.kubernetes.io/managed-by": "gpufabric.roce"}

    def live(name, labels):
        return {
            "apiVersion": "sriovnetwork.openshift.io/v1",
            "kind": "SriovNetworkNodePolicy",
            "metadata": {"name": name, "namespace": "nvidia-network-operator", "labels": labels},
        }

    objs = [
        live("roce-node1", label),
        live("roce-node2", label),
        live("roce-node3", label),
        live("hand-made", {}),
        live("other", {"app.kubernetes.io/managed-by": "helm"}),
    ]
    assert status.managed_orphans(objs, rendered) == [
        {
            "apiVersion": "sriovnetwork.openshift.io/v1",
            "kind": "SriovNetworkNodePolicy",
            "metadata": {"name": "roce-node3", "namespace": "nvidia-network-operator"},
        }
    ]
    assert status.managed_orphans(objs, []) == [
        {"apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkNodePolicy", "metadata": {"name": n, "namespace": "nvidia-network-operator"}}
        for n in ("roce-node1", "roce-node2", "roce-node3")
    ]


def test_host_vf_mode_marks_the_policy_externally_managed():
    hv = reference_hostvars()
    hv["node1"]["roce_vf_mode"] = "host"
    out = render(hv)
    assert out["policies"][0]["spec"]["externallyManaged"] is True
    assert "externallyManaged" not in out["policies"][1]["spec"]


def test_unknown_vf_mode_is_refused():
    hv = reference_hostvars()
    hv["node2"]["roce_vf_mode"] = "hots"
    assert (
        "node2: roce_vf_mode=\"hots\": must be 'operator' or 'host'. Fix: set roce_vf_mode to 'operator' "
        "(the sriov-network-operator creates the VFs) or 'host' (sriov_vf creates them)"
    ) in str(errors_of(hv))


def test_allocatable_mismatches():
    expected = render()["nodes"]
    nodes = [
        {"metadata": {"name": "node1"}, "status": {"allocatable": {"nvidia.com/roce_node1": "8", "cpu": "64"}}},
        {"metadata": {"name": "node2"}, "status": {"allocatable": {"nvidia.com/roce_node2": "4"}}},
    ]
    assert status.allocatable_mismatches(nodes, expected) == ["node2: allocatable nvidia.com/roce_node2 is 4, expected 8"]
    assert status.allocatable_mismatches(nodes[:1], expected) == ["node2: node not found"]


def test_host_local_ipam_matches_the_vlan_gateway_plan_of_each_node():
    """The pods' gateway (SriovNetwork host-local IPAM) is the address vlan_gateway puts on <pf>.<vlan>."""
    hv = reference_hostvars()
    out = render(hv)
    for network in out["networks"]:
        node = network["spec"]["resourceName"].split("_", 1)[1]
        ipam = json.loads(network["spec"]["ipam"])
        plan = vlan_gateway_plan(hv, node, list(hv))
        assert plan["addresses"] == ["%s/%d" % (ipam["gateway"], ipaddress.ip_network(ipam["subnet"]).prefixlen)]
        assert plan["name"] == "%s.%d" % (PF, network["spec"]["vlan"])
        assert plan["mtu"] == next(p for p in out["policies"] if p["spec"]["resourceName"] == network["spec"]["resourceName"])["spec"]["mtu"]


def test_gateway_with_prefix_length_is_rejected_like_vlan_gateway_does():
    hv = reference_hostvars()
    hv["node1"]["roce_pod_gateway"] = "10.255.0.2/30"
    assert (
        'node1: roce_pod_gateway="10.255.0.2/30": not an IP address (no prefix length). '
        "Fix: write the plain address, e.g. 10.255.0.2 (the prefix comes from roce_pod_subnet)"
    ) in str(errors_of(hv))

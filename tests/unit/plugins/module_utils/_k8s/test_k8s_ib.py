# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SR-IOV render of InfiniBand rails: an IB policy and a SriovIBNetwork per rail and node, IPoIB addresses from the
rail's pool without a gateway, every object valid against the CRDs of both network-operator lines."""

import json

import pytest
from k8s_crd_schema import CRD_LINES, CrdError, load_crds, validate_object

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.fabric import fabric_teardown
from planned_render import render_sriov
from role_fallbacks import sriov_defaults

ETH = [{"name": "rail%d" % i, "pf": "enp%ds0np0" % (12 + i), "vlan": 101 + i, "subnet_pool": "10.%d.0.0/16" % (101 + i)} for i in range(2)]
IB = [{"name": "ib%d" % i, "pf": "ibp%ds0" % (75 + i), "link_type": "ib", "subnet_pool": "10.%d.0.0/16" % (201 + i)} for i in range(2)]
PLAN = [ETH[0], IB[0], ETH[1], IB[1]]


@pytest.fixture(scope="module", params=sorted(CRD_LINES))
def crds(request):
    try:
        return load_crds(line=request.param)
    except CrdError as exc:
        pytest.fail(str(exc))


def render(rails=None, n=2, defaults=None, **per_host):
    rails = PLAN if rails is None else rails
    hosts = ["gpu%d" % i for i in range(n)]
    hv = {h: {"roce_rails": rails, "roce_node_index": i} for i, h in enumerate(hosts)}
    for host, extra in per_host.items():
        hv[host].update(extra)
    return render_sriov(hosts, hv, sriov_defaults(defaults))


def refused(hosts, hv, defaults=None):
    # The render's refusals, or the plan builder's: a problem of the rails is refused where they are derived, first.
    with pytest.raises(GpufabricError) as err:
        render_sriov(hosts, hv, sriov_defaults(defaults))
    return getattr(err.value, "errors", [err.value])


def _by_name(objs):
    return {o["metadata"]["name"]: o for o in objs}


@pytest.mark.parametrize("ipam", ["host-local", "nv-ipam"])
def test_two_ib_rails_beside_ethernet_rails_render_and_validate_against_the_crds(crds, ipam):
    out = render(defaults={"sriov_networks_ipam": ipam})
    objs = out["policies"] + out["networks"] + out["ip_pools"]
    assert [p for o in objs for p in validate_object(o, crds)] == []
    policies = _by_name(out["policies"])
    for node in ("gpu0", "gpu1"):
        for rail in IB:
            spec = policies["roce-%s-%s" % (node, rail["name"])]["spec"]
            assert (spec["linkType"], spec["isRdma"], spec["deviceType"], spec["mtu"]) == ("ib", True, "netdevice", 4092)
            assert spec["nicSelector"]["pfNames"] == [rail["pf"]]
        for rail in ETH:
            assert policies["roce-%s-%s" % (node, rail["name"])]["spec"]["linkType"] == "eth"
    kinds = [(n["kind"], n["metadata"]["name"]) for n in out["networks"]]
    if ipam == "host-local":
        assert sorted(k for k, _n in kinds) == ["SriovIBNetwork"] * 4 + ["SriovNetwork"] * 4
    else:
        assert sorted(kinds) == [("SriovIBNetwork", "roce-ib0"), ("SriovIBNetwork", "roce-ib1"),
                                 ("SriovNetwork", "roce-rail0"), ("SriovNetwork", "roce-rail1")]


def test_an_ib_rails_network_has_no_vlan_and_its_ipam_no_gateway():
    out = render()
    net = _by_name(out["networks"])["roce-gpu1-ib1"]
    assert net["kind"] == "SriovIBNetwork"
    assert set(net["spec"]) == {"resourceName", "networkNamespace", "ipam", "linkState"}
    assert net["spec"]["resourceName"] == "roce_gpu1_ib1"
    # The same plan as the Ethernet rails (node 1 gets the pool's 2nd /24); routes to the pool on-link (no gateway).
    assert json.loads(net["spec"]["ipam"]) == {"type": "host-local", "subnet": "10.202.1.0/24", "routes": [{"dst": "10.202.0.0/16"}]}
    eth = _by_name(out["networks"])["roce-gpu1-rail1"]
    assert eth["kind"] == "SriovNetwork" and eth["spec"]["vlan"] == 102 and json.loads(eth["spec"]["ipam"])["gateway"] == "10.102.1.254"
    rails = {r["name"]: r for r in out["nodes"][1]["rails"]}
    assert rails["ib1"] == {"name": "ib1", "pf": "ibp76s0", "vlan": None, "subnet": "10.202.1.0/24", "gateway": None,
                            "resource": "nvidia.com/roce_gpu1_ib1", "network": "roce-gpu1-ib1", "link_type": "ib"}


def test_with_nv_ipam_an_ib_rails_cidrpool_has_no_gateway():
    out = render(defaults={"sriov_networks_ipam": "nv-ipam"})
    pool = _by_name(out["ip_pools"])["roce-ib0"]["spec"]
    assert pool == {"cidr": "10.201.0.0/16", "perNodeNetworkPrefix": 24, "routes": [{"dst": "10.201.0.0/16"}],
                    "staticAllocations": [{"nodeName": "gpu0", "prefix": "10.201.0.0/24"}, {"nodeName": "gpu1", "prefix": "10.201.1.0/24"}]}
    assert _by_name(out["ip_pools"])["roce-rail0"]["spec"]["gatewayIndex"] == 254
    assert json.loads(_by_name(out["networks"])["roce-ib0"]["spec"]["ipam"]) == {"type": "nv-ipam", "poolName": "roce-ib0", "poolType": "cidrpool"}


def test_a_one_rail_ib_node_gets_an_ib_policy_and_a_sriov_ib_network(crds):
    hv = {"n%d" % i: {"roce_pf": "ibp75s0", "roce_pod_subnet": "10.250.%d.0/24" % i, "sriov_networks_link_type": "ib",
                      "sriov_networks_ipam_routes": [{"dst": "10.250.0.0/16"}]} for i in range(2)}
    out = render_sriov(list(hv), hv, sriov_defaults())
    assert [p for o in out["policies"] + out["networks"] for p in validate_object(o, crds)] == []
    assert [(p["spec"]["linkType"], p["spec"]["mtu"]) for p in out["policies"]] == [("ib", 4092), ("ib", 4092)]
    net = _by_name(out["networks"])["roce-n1"]
    assert net["kind"] == "SriovIBNetwork"
    assert json.loads(net["spec"]["ipam"]) == {"type": "host-local", "subnet": "10.250.1.0/24", "routes": [{"dst": "10.250.0.0/16"}]}
    hv["n1"]["roce_mtu"] = 2044
    assert render_sriov(list(hv), hv, sriov_defaults())["policies"][1]["spec"]["mtu"] == 2044


def test_sriov_networks_link_type_on_a_node_with_rails_is_refused_with_the_fix():
    errs = refused(["gpu0"], {"gpu0": {"roce_rails": PLAN, "sriov_networks_link_type": "IB"}})
    assert [(e.host, e.field, e.value) for e in errs] == [("gpu0", "sriov_networks_link_type", "IB")]
    assert errs[0].fix == "remove sriov_networks_link_type from this node and set link_type: ib on the InfiniBand rails of roce_rails"


def test_a_rail_whose_link_type_differs_between_nodes_is_named_for_that_not_its_vlan():
    odd = [ETH[0], dict(IB[0], link_type="eth", vlan=201), ETH[1], IB[1]]
    hv = {"gpu%d" % i: {"roce_rails": PLAN, "roce_node_index": i} for i in range(3)}
    hv["gpu2"]["roce_rails"] = odd
    errs = refused(list(hv), hv)
    assert [(e.host, e.field, e.value) for e in errs] == [("gpu2", "roce_rails[ib0].link_type", "eth")]
    assert "gpu0 and the other nodes" in errs[0].problem and "group_vars/roce_nodes" in errs[0].fix


def test_teardown_deletes_sriov_ib_networks_with_the_networks_before_the_policies():
    out = render()
    labels = {"app.kubernetes.io/managed-by": "gpufabric.roce", "gpufabric.roce/fabric": "f"}
    live = [dict(o, metadata=dict(o["metadata"], labels=labels)) for o in out["policies"] + out["networks"]]
    kinds = [o["kind"] for o in fabric_teardown(live, "f")["delete"]]
    assert set(kinds[:8]) == {"SriovNetwork", "SriovIBNetwork"} and set(kinds[8:]) == {"SriovNetworkNodePolicy"}

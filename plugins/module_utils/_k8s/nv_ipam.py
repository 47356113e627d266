# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nv-ipam CIDRPools rendered from the inventory: one pool per rail (one for a one-rail cluster).

With ``sriov_networks_ipam: nv-ipam`` and no pool name, every rail gets one SriovNetwork and one
resourceName for the whole cluster, and its addresses come from a CIDRPool whose blocks are the nodes'
pod subnets: ``staticAllocations`` pins each node to the subnet and gateway its VLAN gateway holds
(the same per-node values host-local renders, from ``roce_pod_subnet``/``roce_pod_gateway`` or the
rail's ``subnet_pool`` and ``roce_node_index``), so the two can only agree. One pod template can then
ask for ``<prefix>/<resource>`` of every rail and land on any node.

The checks are nv-ipam's own (api/v1alpha1 ``CIDRPool.Validate`` of nvidia-k8s-ipam), made before
anything is applied and named after the inventory: every block inside the pool's ``cidr`` and of its
``perNodeNetworkPrefix``, each gateway inside its block (the renderer's subnet check), no two nodes on
one block (its overlap check), the ``gatewayIndex`` inside a block, routes in the pool's family.
"""

import ipaddress

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import ident, pod_subnet_problem
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import hosts_named

NV_IPAM_API_VERSION = "nv-ipam.nvidia.com/v1alpha1"


def pool_name(name_prefix, rail):
    """The CIDRPool of a rail, and the name of the rail's SriovNetwork: ``<prefix>-<rail>`` (``<prefix>`` with one rail)."""
    return "%s-%s" % (name_prefix, rail["name"]) if rail else name_prefix


def pool_resource_name(name_prefix, rail):
    """The rail's one resourceName for every node: the rail's ``resource_name``, else ``<prefix>_<rail>``."""
    if rail:
        return rail.get("resource_name") or "%s_%s" % (ident(name_prefix), ident(rail["name"]))
    return ident(name_prefix)


# The private ranges (RFC 1918): blocks in one of them belong together; elsewhere a block's /8 is its range.
_PRIVATE = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))


def _home(net):
    """The range a block belongs to when a pool's blocks are far apart."""
    if net.version != 4:
        return net.supernet(new_prefix=min(net.prefixlen, 16))
    return next((p for p in _PRIVATE if net.subnet_of(p)), net.supernet(new_prefix=min(net.prefixlen, 8)))


def _gateway_index(net, gw):
    return int(gw) - int(net.network_address)


class NvIpamPools:
    """The pools of one render: each node adds its block as the renderer validates it; :meth:`render`
    checks what only the whole pool shows and returns the CIDRPool objects."""

    def __init__(self, namespace, name_prefix):
        self.namespace, self.name_prefix = namespace, name_prefix
        self._pools = {}  # pool name -> {"rail", "cidr" (the rail's subnet_pool or None), "routes", "allocations"}

    def add(self, host, node_name, net, gw, *, routes, resource_name, rail=None, field=None):
        """One node's block ``net`` with gateway ``gw`` (parsed, already checked by the renderer) on ``rail``
        (None: the one-rail cluster). ``field`` is what a message about this block names. Returns the pool name."""
        name = pool_name(self.name_prefix, rail)
        pool = self._pools.setdefault(
            name,
            {
                "rail": rail["name"] if rail else None,
                "cidr": rail.get("subnet_pool") if rail else None,
                "routes": routes,
                "resource": resource_name,
                "allocations": [],
            },
        )
        pool["allocations"].append({"host": host, "node_name": node_name, "net": net, "gw": gw, "field": field or "roce_pod_subnet"})
        return name

    def resource_of(self, rail):
        """The resourceName the rail's pool has so far (the first node's), or None."""
        pool = self._pools.get(pool_name(self.name_prefix, rail))
        return pool["resource"] if pool else None

    def resources(self):
        """resourceName -> the pool (and SriovNetwork) name of the rail that has it."""
        return {pool["resource"]: name for name, pool in self._pools.items()}

    def render(self, errs):
        out, cidrs = [], []
        for name, pool in self._pools.items():
            obj = self._pool_object(errs, name, pool)
            if obj is not None:
                out.append(obj)
                cidrs.append((name, pool, ipaddress.ip_network(obj["spec"]["cidr"])))
        self._overlaps(errs, cidrs)
        return out

    def _cidr(self, errs, name, pool):
        allocs = pool["allocations"]
        if pool["cidr"]:
            cidr = ipaddress.ip_network(pool["cidr"], strict=False)
        else:
            # No rail pool (one-rail nodes, or a rail whose every node names its subnet): the smallest network
            # that holds every node's block.
            cidr = allocs[0]["net"]
            for a in allocs[1:]:
                while not (a["net"].version == cidr.version and a["net"].subnet_of(cidr)):
                    if cidr.prefixlen == 0 or a["net"].version != cidr.version:
                        cidr = None
                        break
                    cidr = cidr.supernet()
                if cidr is None:
                    errs.add(
                        a["host"],
                        a["field"],
                        str(a["net"]),
                        "is IPv%d, but the first node's block of nv-ipam pool %s is IPv%d: one CIDRPool has one address family"
                        % (a["net"].version, name, allocs[0]["net"].version),
                        "give every node of the pool a subnet of the same family",
                    )
                    return None
            return cidr if self._scattered(errs, name, pool, cidr) is None else None
        ok = True
        for a in allocs:
            if a["net"].version != cidr.version or not a["net"].subnet_of(cidr):
                errs.add(
                    a["host"],
                    a["field"],
                    str(a["net"]),
                    "is outside rail %s's subnet_pool %s, the cidr of nv-ipam pool %s: nv-ipam refuses a static allocation "
                    "outside its pool (\"prefix is not part of the pool cidr\")" % (pool["rail"], cidr, name),
                    "pick a /%d block of %s for this node (or drop the override and let roce_node_index pick it)" % (a["net"].prefixlen, cidr),
                )
                ok = False
        return cidr if ok else None

    def _scattered(self, errs, name, pool, cidr):
        """The pool of blocks far apart would be the smallest network holding them all (0.0.0.0/0 for 10.x and 172.16.x),
        and nv-ipam hands the blocks of its cidr to any node without a static allocation: the pool's cidr must obey the
        address rules of a pod subnet (pod_subnet_problem). The odd node is one outside the range most blocks are in."""
        problem = pod_subnet_problem(cidr)
        allocs = pool["allocations"]
        if problem is None or any(pod_subnet_problem(a["net"]) for a in allocs):
            return None  # a block outside the address rules is the fabric plan's to name
        homes = {}
        for a in allocs:
            homes.setdefault(_home(a["net"]), []).append(a)
        meant = max(homes, key=lambda h: (len(homes[h]), -allocs.index(homes[h][0])))
        odd = next((a for a in allocs if _home(a["net"]) != meant), allocs[-1])
        others = homes[meant] if odd not in homes[meant] else [a for a in allocs if a is not odd]
        near = others[0]["net"]
        for a in others[1:]:
            while not a["net"].subnet_of(near):
                near = near.supernet()
        rail = pool["rail"]
        fix = ("give %s a /%d block near the other nodes' blocks of the pool, inside %s (%s's is %s)%s"
               % (odd["host"], odd["net"].prefixlen, near, others[0]["host"], others[0]["net"],
                  ", and roce_pod_gateway a host address of it" if rail is None else
                  " (roce_rail_overrides.%s.subnet), or give rail %s a subnet_pool in roce_rails that holds every node's block" % (rail, rail)))
        errs.add(odd["host"], odd["field"], str(odd["net"]),
                 "is far from the other nodes' blocks of nv-ipam pool %s (%s's %s): the pool's cidr, the smallest network holding "
                 "them all, would be %s, which %s; nv-ipam gives a block of its cidr to any node without a static allocation"
                 % (name, others[0]["host"], others[0]["net"], cidr, problem), fix)
        return problem

    def _overlaps(self, errs, pools):
        """Pools of different rails must not overlap (a rail's pool nested in another's): nv-ipam could give a node of one
        rail a block of the other's, and the wider rail's routes would cover the other's plane. ``pools``: (name, pool,
        cidr) of each pool rendered."""
        seen, order = [], {n: i for i, n in enumerate(self._pools)}
        for name, pool, cidr in sorted(pools, key=lambda p: (p[2].version, int(p[2].network_address), -p[2].prefixlen)):
            other = next(((n, p, c) for n, p, c in reversed(seen) if c.version == cidr.version and c.overlaps(cidr)), None)
            seen.append((name, pool, cidr))
            if other is None:
                continue
            # The later rail of roce_rails is named; the message says which other pool it overlaps.
            (name_a, pool_a, cidr_a), (name_b, pool_b, cidr_b) = sorted([other, (name, pool, cidr)], key=lambda p: order[p[0]])
            hosts = [a["host"] for a in pool_b["allocations"]]
            field = "roce_rails[%s].subnet_pool" % pool_b["rail"] if pool_b["cidr"] else pool_b["allocations"][0]["field"]
            value = pool_b["cidr"] or str(pool_b["allocations"][0]["net"])
            errs.add(hosts_named(hosts) if pool_b["cidr"] else pool_b["allocations"][0]["host"], field, value,
                     "overlaps rail %s's %s: their nv-ipam CIDRPools %s and %s would overlap, so nv-ipam could give a node of one "
                     "rail a block of the other's, and a pod's route to one rail's plane would cover the other's"
                     % (pool_a["rail"], "subnet_pool %s" % cidr_a if pool_a["cidr"] else "nodes' blocks (pool cidr %s)" % cidr_a,
                        name_a, name_b),
                     "give every rail a subnet_pool of its own, disjoint from the other rails': narrow rail %s's so that it leaves "
                     "out %s, or move rail %s's outside %s" % (pool_a["rail"], cidr_b, pool_b["rail"], cidr_a))

    def _prefix(self, errs, name, allocs):
        first = allocs[0]
        ok = True
        for a in allocs[1:]:
            # A block of the other family is named once, by _cidr.
            if a["net"].version == first["net"].version and a["net"].prefixlen != first["net"].prefixlen:
                errs.add(
                    a["host"],
                    a["field"],
                    str(a["net"]),
                    "nv-ipam pool %s gives every node a block of one size (perNodeNetworkPrefix /%d, from host %s's %s), "
                    "but this subnet is a /%d" % (name, first["net"].prefixlen, first["host"], first["net"], a["net"].prefixlen),
                    "give every node of the pool a /%d subnet" % first["net"].prefixlen,
                )
                ok = False
        return first["net"].prefixlen if ok else None

    def _pool_object(self, errs, name, pool):
        allocs = pool["allocations"]
        cidr = self._cidr(errs, name, pool)
        prefix = self._prefix(errs, name, allocs)
        if cidr is None or prefix is None:
            return None
        # The gateway sits at the same offset in every block by construction (the rail's last host); a node
        # whose own gateway differs keeps it through its static allocation, which nv-ipam prefers.
        if allocs[0]["gw"] is None:
            # An InfiniBand rail: no gateway, so the pods' routes to the pool are on-link (one IPoIB link).
            spec = {"cidr": str(cidr), "perNodeNetworkPrefix": prefix,
                    "staticAllocations": [{"nodeName": a["node_name"], "prefix": str(a["net"])} for a in allocs]}
        else:
            spec = {
                "cidr": str(cidr),
                "perNodeNetworkPrefix": prefix,
                "gatewayIndex": _gateway_index(allocs[0]["net"], allocs[0]["gw"]),
                "staticAllocations": [{"nodeName": a["node_name"], "prefix": str(a["net"]), "gateway": str(a["gw"])} for a in allocs],
            }
        routes = [{"dst": r["dst"]} for r in pool["routes"]]
        if routes:
            spec["routes"] = routes
        return {
            "apiVersion": NV_IPAM_API_VERSION,
            "kind": "CIDRPool",
            "metadata": {"name": name, "namespace": self.namespace, "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}},
            "spec": spec,
        }

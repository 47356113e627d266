# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SriovNetwork settings, the pods' IPAM and each node's pod subnet: the checks behind render_sriov.

Errors carry ``fix_vars`` as described in _k8s.sriov_checks.
"""

import ipaddress

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import (
    DNS_LABEL_RE,
    DNS_SUBDOMAIN_RE,
    _as_int,
    _is_unset,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov_checks import as_int

LINK_STATES = ("auto", "enable", "disable")
ON_OFF = ("on", "off")


def _on_off(errs, host, field, value):
    if value in ON_OFF and isinstance(value, str):
        return True
    hint = " (unquoted on/off/yes/no are YAML booleans)" if isinstance(value, bool) else ""
    # A YAML boolean's intent is clear: offer its meaning first.
    order = ("off", "on") if value is False else ("on", "off")
    errs.add(
        host,
        field,
        value,
        "must be the string 'on' or 'off'%s" % hint,
        "quote it: %s: '%s' or %s: '%s'" % (field, order[0], field, order[1]),
        fix_vars=[{host: {field: v}} for v in order],
    )
    return False


def _check_rates(errs, host, hv):
    rates, ok = {}, True
    for key in ("min_tx_rate", "max_tx_rate"):
        field = "sriov_networks_" + key
        value = hv[field]
        if _is_unset(value):
            rates[key] = None
            continue
        before = len(errs.items)
        rates[key] = _as_int(
            errs, host, field, value, lo=0, hi=None, what="(Mbps)", fix="set %s to a non-negative whole number of Mbps, or leave it unset" % field
        )
        if rates[key] is None:
            errs.attach(before, [{host: {field: None}}])
            ok = False
    low, high = rates["min_tx_rate"], rates["max_tx_rate"]
    if low is not None and high is not None and high > 0 and low > high:
        errs.add(
            host,
            "sriov_networks_min_tx_rate",
            low,
            "minTxRate is above maxTxRate (%d)" % high,
            "lower sriov_networks_min_tx_rate or raise sriov_networks_max_tx_rate",
            fix_vars=[{host: {"sriov_networks_min_tx_rate": high}}, {host: {"sriov_networks_max_tx_rate": low}}],
        )
        ok = False
    return rates if ok else None


def _check_routes(errs, host, routes):
    if not isinstance(routes, list):
        errs.add(
            host,
            "sriov_networks_ipam_routes",
            routes,
            "must be a list of {dst, gw?}",
            "e.g. [{dst: 0.0.0.0/0}] for a default route, or [] for none",
            fix_vars=[{host: {"sriov_networks_ipam_routes": [{"dst": "0.0.0.0/0"}]}}, {host: {"sriov_networks_ipam_routes": []}}],
        )
        return None
    clean, ok = [], True
    for i, r in enumerate(routes):
        try:
            if not isinstance(r, dict) or "dst" not in r:
                raise ValueError
            route = {"dst": str(ipaddress.ip_network(str(r["dst"]), strict=True))}
            if r.get("gw"):
                route["gw"] = str(ipaddress.ip_address(str(r["gw"])))
            clean.append(route)
        except ValueError:
            fixed = list(routes)
            fixed[i] = {"dst": "0.0.0.0/0"}
            errs.add(
                host,
                "sriov_networks_ipam_routes",
                r,
                "not a valid route",
                "write {dst: <network/prefix>} with an optional gw address, e.g. {dst: 0.0.0.0/0}",
                fix_vars=[{host: {"sriov_networks_ipam_routes": fixed}}],
            )
            ok = False
    return clean if ok else None


def check_network_settings(errs, host, hv):
    """Validate the per-host SriovNetwork settings; returns dict or None."""
    out = {}
    out["vlan"] = as_int(errs, host, "roce_vlan_id", hv["roce_vlan_id"], example=100, lo=0, hi=4094, what="(0 = untagged)", fix="set roce_vlan_id to 0..4094")
    out["vlan_qos"] = as_int(
        errs,
        host,
        "sriov_networks_vlan_qos",
        hv["sriov_networks_vlan_qos"],
        example=0,
        lo=0,
        hi=7,
        what="(802.1p priority)",
        fix="set sriov_networks_vlan_qos to 0..7",
    )
    ok = out["vlan"] is not None and out["vlan_qos"] is not None
    for key, field in (("trust", "sriov_networks_trust"), ("spoof_chk", "sriov_networks_spoof_chk")):
        out[key] = hv[field]
        ok = _on_off(errs, host, field, out[key]) and ok
    link_state = out["link_state"] = hv["sriov_networks_link_state"]
    if link_state not in LINK_STATES:
        errs.add(
            host,
            "sriov_networks_link_state",
            link_state,
            "linkState must be auto, enable or disable",
            "set sriov_networks_link_state to 'enable' (or 'auto'/'disable')",
            fix_vars=[{host: {"sriov_networks_link_state": v}} for v in ("enable", "auto", "disable")],
        )
        ok = False
    rates = _check_rates(errs, host, hv)
    ok = ok and rates is not None
    out.update(rates or {})
    ns = out["network_namespace"] = hv["sriov_networks_network_namespace"]
    if not isinstance(ns, str) or not DNS_LABEL_RE.match(ns) or len(ns) > 63:
        errs.add(
            host,
            "sriov_networks_network_namespace",
            ns,
            "not a valid namespace name",
            "use a DNS-1123 label, e.g. default",
            fix_vars=[{host: {"sriov_networks_network_namespace": "default"}}],
        )
        ok = False
    routes = out["ipam_routes"] = _check_routes(errs, host, hv["sriov_networks_ipam_routes"])
    return out if ok and routes is not None else None


def _around(addr):
    """The smallest subnet that leaves a pod address next to ``addr`` (a /30 or /126) and holds it as a host."""
    net = ipaddress.ip_network("%s/%d" % (addr, 30 if addr.version == 4 else 126), strict=False)
    return net if addr not in (net.network_address, net.broadcast_address) else None


def _last_host(net):
    return net.broadcast_address - 1 if net.num_addresses > 2 else net.broadcast_address


def _example_subnet(gw):
    """The example of a missing or unreadable pod subnet: the /30 around the gateway when there is one.
    Returns (example, fix_vars value or None)."""
    around = _around(gw) if gw is not None else None
    return (str(around), str(around)) if around else ("10.255.0.0/30", None)


def _parse_pod_subnet(errs, host, subnet_v, gw):
    """roce_pod_subnet; ``gw`` (the parsed gateway or None) makes the example a subnet around it."""
    if _is_unset(subnet_v):
        example, fixed = _example_subnet(gw)
        errs.add(
            host,
            "roce_pod_subnet",
            subnet_v,
            "required with host-local IPAM",
            "set roce_pod_subnet to this node's pod subnet, e.g. %s%s" % (example, " (the /30 around roce_pod_gateway)" if fixed else ""),
            fix_vars=[{host: {"roce_pod_subnet": fixed}}] if fixed else None,
        )
        return None
    try:
        return ipaddress.ip_network(str(subnet_v), strict=True)
    except ValueError:
        pass
    try:
        fixed = ipaddress.ip_network(str(subnet_v), strict=False)
        errs.add(
            host, "roce_pod_subnet", subnet_v, "host bits are set", "write the network address: %s" % fixed, fix_vars=[{host: {"roce_pod_subnet": str(fixed)}}]
        )
    except ValueError:
        example, fixed = _example_subnet(gw)
        errs.add(
            host,
            "roce_pod_subnet",
            subnet_v,
            "not a CIDR network",
            "write it as <network>/<prefix>, e.g. %s" % example,
            fix_vars=[{host: {"roce_pod_subnet": fixed}}] if fixed else None,
        )
    return None


def _parse_pod_gateway(errs, host, gw_v):
    if _is_unset(gw_v):
        return None
    try:
        return ipaddress.ip_address(str(gw_v))
    except ValueError:
        pass
    try:
        plain = str(ipaddress.ip_interface(str(gw_v)).ip)
    except ValueError:
        plain = None
    errs.add(
        host,
        "roce_pod_gateway",
        gw_v,
        "not an IP address (no prefix length)",
        "write the plain address, e.g. %s (the prefix comes from roce_pod_subnet)" % (plain or "10.255.0.2"),
        fix_vars=[{host: {"roce_pod_gateway": plain}}] if plain else None,
    )
    return False


def check_pod_subnet(errs, host, hv, gateway=True):
    """The node's pod subnet and gateway, parsed and checked: ``(net, gw)`` or None. ``gateway=False``: a network without
    gateway (an InfiniBand rail), ``(net, None)``."""
    subnet_v, gw_v = hv.get("roce_pod_subnet"), hv.get("roce_pod_gateway")
    gw = _parse_pod_gateway(errs, host, gw_v) if gateway else None
    net = _parse_pod_subnet(errs, host, subnet_v, gw or None)
    if not gateway:
        return _host_local_size(errs, host, net, None) if net is not None else None
    if gw is None:
        errs.add(
            host,
            "roce_pod_gateway",
            gw_v,
            "required with host-local IPAM",
            "set roce_pod_gateway to the node's gateway address inside roce_pod_subnet",
            fix_vars=[{host: {"roce_pod_gateway": str(_last_host(net))}}] if net is not None and net.num_addresses > 2 else None,
        )
    if net is None or not gw:
        return None
    if gw.version != net.version or gw not in net:
        errs.add(
            host,
            "roce_pod_gateway",
            str(gw_v),
            "gateway is outside the node's pod subnet %s" % net,
            "pick a host address inside %s (the address vlan_gateway puts on <roce_pf>.<roce_vlan_id>)" % net,
            fix_vars=[{host: {"roce_pod_gateway": str(_last_host(net))}}] if net.num_addresses > 2 else None,
        )
        return None
    if net.num_addresses > 2 and gw in (net.network_address, net.broadcast_address):
        errs.add(
            host,
            "roce_pod_gateway",
            str(gw_v),
            "gateway is the network or broadcast address of %s" % net,
            "use a host address of %s" % net,
            fix_vars=[{host: {"roce_pod_gateway": str(_last_host(net))}}],
        )
        return None
    return _host_local_size(errs, host, net, gw)


def _host_local_size(errs, host, net, gw):
    """``(net, gw)``, or None when host-local IPAM cannot allocate from ``net``. ``gw``: None for a network without one."""
    if net.prefixlen > net.max_prefixlen - 2:
        # RFC 3021 makes both addresses of a /31 usable on a point-to-point link, but the host-local CNI
        # plugin refuses any network smaller than /30 (/126): "Network ... too small to allocate from".
        wider = net.supernet(new_prefix=net.max_prefixlen - 2)
        if gw is None:
            errs.add(host, "roce_pod_subnet", str(net), "host-local IPAM cannot allocate from a /%d (the CNI plugin refuses networks "
                     "smaller than /%d)" % (net.prefixlen, net.max_prefixlen - 2), "use at least a /%d, e.g. %s" % (net.max_prefixlen - 2, wider),
                     fix_vars=[{host: {"roce_pod_subnet": str(wider)}}])
            return None
        wider_gw = gw if gw not in (wider.network_address, wider.broadcast_address) else _last_host(wider)
        errs.add(
            host,
            "roce_pod_subnet",
            str(net),
            "host-local IPAM cannot allocate from a /%d (the CNI plugin refuses networks smaller than /%d, "
            "RFC 3021 point-to-point addressing included), so no pod would get an address next to the gateway"
            % (net.prefixlen, net.max_prefixlen - 2),
            "use at least a /%d that holds the gateway, e.g. roce_pod_subnet: %s with roce_pod_gateway: %s"
            % (net.max_prefixlen - 2, wider, wider_gw),
            fix_vars=[{host: {"roce_pod_subnet": str(wider), "roce_pod_gateway": str(wider_gw)}}],
        )
        return None
    return net, gw


def _route_in_family(route, version):
    """``route`` rewritten for the other address family when it is a default route, else None."""
    if ipaddress.ip_network(route["dst"]).prefixlen != 0:
        return None
    return {"dst": "0.0.0.0/0" if version == 4 else "::/0"}


def check_ipam_routes(errs, host, routes, net, gw, where, owner=None):  # noqa: PLR0917 - the call sites read in order
    """The IPAM routes against the pod network ``net`` (a node's subnet or the whereabouts range) and its
    gateway ``gw`` (None when the IPAM has none): every route in the pod network's address family, every
    route gateway reachable on-link (inside ``net``). ``owner`` is who the fix sets the routes for (the host,
    or ``(cluster)`` when the nodes share one network). Returns True when they agree."""
    owner = owner or host
    ok = True
    for i, r in enumerate(routes):
        dst = ipaddress.ip_network(r["dst"])
        if dst.version != net.version:
            same = [x for x in (_route_in_family(q, net.version) if ipaddress.ip_network(q["dst"]).version != net.version else q for q in routes) if x]
            errs.add(
                host,
                "sriov_networks_ipam_routes",
                r,
                "route %d is IPv%d but %s %s is IPv%d: the IPAM plugin would hand pods a route they cannot use"
                % (i, dst.version, where, net, net.version),
                "write the routes in the pod network's family, e.g. sriov_networks_ipam_routes: [{dst: '%s'}]" % ("0.0.0.0/0" if net.version == 4 else "::/0"),
                fix_vars=[{owner: {"sriov_networks_ipam_routes": same}}],
            )
            ok = False
            continue
        if "gw" not in r:
            continue
        via = ipaddress.ip_address(r["gw"])
        if via.version == net.version and via in net and (net.version == 6 or via not in (net.network_address, net.broadcast_address)):
            continue
        alternatives = [[dict(q, gw=str(gw)) if j == i else q for j, q in enumerate(routes)]] if gw is not None else []
        alternatives.append([{"dst": q["dst"]} if j == i else q for j, q in enumerate(routes)])
        errs.add(
            host,
            "sriov_networks_ipam_routes",
            r,
            "route %d's gw %s is not a host address of %s %s: the pod has no on-link path to it" % (i, via, where, net),
            "%sleave gw out of the route (the pod then uses the IPAM gateway)"
            % ("set its gw to the pod gateway %s, or " % gw if gw is not None else ""),
            fix_vars=[{owner: {"sriov_networks_ipam_routes": alt}} for alt in alternatives],
        )
        ok = False
    return ok


def free_subnet(host, net, gw, top):
    """A same-sized block above every pod subnet, with the gateway at the same offset (the fix of an overlap)."""
    size = net.num_addresses
    start = (top[net.version] // size + 1) * size
    cls = ipaddress.IPv4Network if net.version == 4 else ipaddress.IPv6Network
    if start + size - 1 > int(cls((0, 0)).broadcast_address):
        return None
    new = cls((start, net.prefixlen))
    new_gw = new.network_address + (int(gw) - int(net.network_address))
    return [{host: {"roce_pod_subnet": str(new), "roce_pod_gateway": str(new_gw)}}]


def nv_ipam(errs, cluster):
    """The IPAM config naming the user's own nv-ipam pool, or None without a pool name: the pools are then
    rendered from the inventory (_k8s.nv_ipam)."""
    pool = cluster("sriov_networks_nv_ipam_pool")
    pool_type = cluster("sriov_networks_nv_ipam_pool_type")
    if _is_unset(pool):
        return None
    if not isinstance(pool, str) or not DNS_SUBDOMAIN_RE.match(pool):
        errs.add(
            "(cluster)",
            "sriov_networks_nv_ipam_pool",
            pool,
            "not the name of an nv-ipam pool",
            "set sriov_networks_nv_ipam_pool to the name of your IPPool or CIDRPool, e.g. roce-pool, or leave it empty "
            "to have one CIDRPool per rail rendered from the inventory",
            fix_vars=[{"(cluster)": {"sriov_networks_nv_ipam_pool": "roce-pool"}}],
        )
    if pool_type not in ("ippool", "cidrpool"):
        errs.add(
            "(cluster)",
            "sriov_networks_nv_ipam_pool_type",
            pool_type,
            "unknown nv-ipam pool type",
            "set it to 'ippool' or 'cidrpool'",
            fix_vars=[{"(cluster)": {"sriov_networks_nv_ipam_pool_type": t}} for t in ("ippool", "cidrpool")],
        )
    return {"type": "nv-ipam", "poolName": pool, "poolType": pool_type}


def whereabouts_ipam(errs, cluster):
    rng = cluster("sriov_networks_whereabouts_range")
    cfg = {"type": "whereabouts"}
    net = None
    try:
        net = ipaddress.ip_network(str(rng), strict=True)
        cfg["range"] = str(net)
    except ValueError:
        errs.add(
            "(cluster)",
            "sriov_networks_whereabouts_range",
            rng,
            "whereabouts needs one cluster-wide CIDR range",
            "set sriov_networks_whereabouts_range, e.g. 10.255.0.0/16",
            fix_vars=[{"(cluster)": {"sriov_networks_whereabouts_range": "10.255.0.0/16"}}],
        )
    exclude = cluster("sriov_networks_whereabouts_exclude") or []
    exclude = exclude if isinstance(exclude, list) else [exclude]
    clean = []
    for ex in exclude:
        try:
            clean.append(str(ipaddress.ip_network(str(ex), strict=False)))
        except ValueError:
            errs.add(
                "(cluster)",
                "sriov_networks_whereabouts_exclude",
                ex,
                "not a CIDR",
                "list CIDRs to keep out of the range, e.g. 10.255.0.0/30",
                fix_vars=[{"(cluster)": {"sriov_networks_whereabouts_exclude": [e for e in exclude if e is not ex]}}],
            )
    if clean:
        cfg["exclude"] = clean
    gw = cluster("sriov_networks_whereabouts_gateway")
    if not _is_unset(gw):
        try:
            addr = ipaddress.ip_address(str(gw))
            if net is not None and addr not in net:
                inside = [{"(cluster)": {"sriov_networks_whereabouts_gateway": str(net.network_address + 1)}}] if net.num_addresses > 2 else []
                errs.add(
                    "(cluster)",
                    "sriov_networks_whereabouts_gateway",
                    gw,
                    "gateway is outside the whereabouts range %s" % net,
                    "pick a gateway inside the range or leave it empty",
                    fix_vars=inside + [{"(cluster)": {"sriov_networks_whereabouts_gateway": ""}}],
                )
            cfg["gateway"] = str(addr)
        except ValueError:
            errs.add(
                "(cluster)",
                "sriov_networks_whereabouts_gateway",
                gw,
                "not an IP address",
                "set an address or leave it empty",
                fix_vars=[{"(cluster)": {"sriov_networks_whereabouts_gateway": ""}}],
            )
    return cfg

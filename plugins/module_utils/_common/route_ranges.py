# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Routes in range form: a route with ``count: N`` stands for N routes, the k-th (from 0) with its ``dst`` and ``via``
advanced by k times the size of ``dst``; the other keys (``onlink``, ``metric``) are the same for all N.

Why: a gateway's routes go to every other node's pod subnet on its rail, so they grow with the fleet, and every
copy of them (the module's arguments over SSH, its diff, its registered result on the controller, each AWX job
event) is nodes x nodes x rails: 800 million routes at 10,000 nodes x 8 rails. Pod subnets carved from a pool
in node order, with the gateway at the same offset in each, are one range on either side of the node itself. A
subnet outside that pattern (an override) is a range of one, which is written exactly as a plain route.

Addresses are read with ``socket.inet_pton``: the controller compresses every node's routes, where
``ipaddress`` would cost several times more per route."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import ipaddress
import socket

_FAMILY = {4: (socket.AF_INET, 32), 6: (socket.AF_INET6, 128)}


def _addr(text):
    """(version, int) of a plain address."""
    family, bits = (_FAMILY[6] if ':' in text else _FAMILY[4])
    return (6 if bits == 128 else 4), int.from_bytes(socket.inet_pton(family, text), 'big')


def _text(version, value):
    family, bits = _FAMILY[version]
    return socket.inet_ntop(family, value.to_bytes(bits // 8, 'big'))


def _key(route):
    dst, _slash, prefix = ('%s' % route['dst']).partition('/')
    version, net = _addr(dst)
    via = route.get('via')
    via = None if via in (None, '') else _addr('%s' % via)[1]
    return version, int(prefix), net, via


def compress(routes):
    """``routes`` (plain routes or ranges) as the fewest ranges, sorted by address family, destination and metric.
    A range of one has no ``count``. Each route keeps ``onlink`` and ``metric`` only when it had them; no other key
    is kept (a route of vlan_gateway has no other). The controller
    runs this for every rail of every node: one pass of plain tuples, sorted once (the routes come in pool order)."""
    parsed = []
    for r in routes:
        dst = r['dst']
        cut = dst.index('/')
        version, net = _addr(dst[:cut])
        prefix = int(dst[cut + 1:])
        via = r.get('via')
        via = None if via in (None, '') else _addr(via)[1]
        # The keys besides dst and via, the same for a whole range; one left out (or a metric of None) stays out.
        extra = (('onlink' in r, bool(r.get('onlink'))), (r.get('metric') is not None, r.get('metric') or 0))
        size = 1 << ((32 if version == 4 else 128) - prefix)
        count = r.get('count') or 1
        for k in range(count):
            off = k * size
            parsed.append((version, net + off, prefix, via is None, extra, -1 if via is None else via - net, size))
    parsed.sort()
    # Runs: same family, prefix, next-hop presence and other keys; each dst the previous one's plus its size, and the
    # next hop at the same offset from it.
    runs, open_runs = [], {}
    for version, first, prefix, no_via, extra, offset, size in parsed:
        group = (version, prefix, no_via, extra)
        run = open_runs.get(group)
        if run is not None and run[1] == first and run[2] == offset:
            run[3] += 1
            run[1] += size
            continue
        run = [first, first + size, offset, 1, group]
        open_runs[group] = run
        runs.append(run)
    out = []
    for first, _next, offset, count, (version, prefix, no_via, extra) in runs:
        route = {'dst': '%s/%d' % (_text(version, first), prefix)}
        if not no_via:
            route['via'] = _text(version, first + offset)
        if extra[0][0]:
            route['onlink'] = extra[0][1]
        if extra[1][0]:
            route['metric'] = extra[1][1]
        if count > 1:
            route['count'] = count
        out.append((version, first, extra[1][1], route))
    out.sort(key=lambda t: t[:3])
    return [t[3] for t in out]


def without(ranges, route):
    """``ranges`` (as ``compress`` returns them) without the plain ``route``: the range holding it, at the same next-hop
    offset, is split around it. Equal to compressing the routes without it, in O(ranges): a node's routes are the
    rail's ranges without its own subnet (``_fabric.plan.route_index``)."""
    version, prefix, net, via = _key(route)
    size = 1 << ((32 if version == 4 else 128) - prefix)
    out = []
    for r in ranges:
        v, p, first, rvia = _key(r)
        count = int(r.get('count') or 1)
        k = (net - first) // size
        if (v, p) != (version, prefix) or not 0 <= k < count or (net - first) % size or \
                (rvia is None) != (via is None) or (via is not None and rvia - first != via - net) or \
                any(r.get(key) != route.get(key) for key in ('onlink', 'metric')):
            out.append(r)
            continue
        base = {key: val for key, val in r.items() if key != 'count'}
        if k:
            out.append(dict(base, count=k) if k > 1 else base)
        if count - k - 1:
            start = first + (k + 1) * size
            right = dict(base, dst='%s/%d' % (_text(version, start), prefix))
            if rvia is not None:
                right['via'] = _text(version, rvia + (k + 1) * size)
            if count - k - 1 > 1:
                right['count'] = count - k - 1
            out.append(right)
    return out


def expand(route):
    """The plain routes a range stands for (a copy of ``route`` without ``count`` when it has none or 1).
    Raises ValueError when ``dst`` or ``via`` is not an address, or the range runs past the address space."""
    count = int(route.get('count') or 1)
    base = {k: v for k, v in route.items() if k != 'count'}
    if count == 1:
        return [base]
    net = ipaddress.ip_network('%s' % route['dst'], strict=True)
    size = net.num_addresses
    first = int(net.network_address)
    via = route.get('via')
    via = None if via in (None, '') else int(ipaddress.ip_address('%s' % via))
    top = 1 << net.max_prefixlen
    if first + count * size > top or (via is not None and via + (count - 1) * size >= top):
        raise ValueError('%d routes from %s run past the end of the IPv%d address space' % (count, net, net.version))
    out = []
    for k in range(count):
        r = dict(base, dst='%s/%d' % (ipaddress.ip_address(first + k * size), net.prefixlen))
        if via is not None:
            r['via'] = '%s' % ipaddress.ip_address(via + k * size)
        out.append(r)
    return out


def total(routes):
    """How many plain routes ``routes`` (plain or ranges) stand for."""
    return sum(int(r.get('count') or 1) for r in routes or [])


def last(route):
    """The last plain route of a range (arithmetic: a range may stand for thousands)."""
    count = int(route.get('count') or 1)
    if count == 1:
        return {k: v for k, v in route.items() if k != 'count'}
    version, prefix, net, via = _key(route)
    step = (count - 1) << ((32 if version == 4 else 128) - prefix)
    out = {k: v for k, v in route.items() if k != 'count'}
    out['dst'] = '%s/%d' % (_text(version, net + step), prefix)
    if via is not None:
        out['via'] = _text(version, via + step)
    return out

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

import random

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._common import route_ranges as rr


def pool_routes(n, skip, prefix=24, base='10.100', gw=254):
    """The routes of a node of a pool-carved fabric: every other node's /24 via its gateway at .254."""
    return [{'dst': '%s.%d.0/%d' % (base, k, prefix), 'via': '%s.%d.%d' % (base, k, gw), 'onlink': True}
            for k in range(n) if k != skip]


def plain(routes):
    return sorted((r['dst'], r.get('via'), r.get('onlink'), r.get('metric')) for x in routes for r in rr.expand(x))


def test_a_pool_carved_fabric_is_one_range_each_side_of_the_node():
    assert rr.compress(pool_routes(200, 7)) == [
        {'dst': '10.100.0.0/24', 'via': '10.100.0.254', 'onlink': True, 'count': 7},
        {'dst': '10.100.8.0/24', 'via': '10.100.8.254', 'onlink': True, 'count': 192}]


def test_a_route_outside_the_pattern_is_written_as_a_plain_route():
    odd = {'dst': '10.200.0.0/16', 'via': '10.200.0.1', 'onlink': True}
    moved = {'dst': '10.100.5.0/24', 'via': '10.100.5.1', 'onlink': True}  # the gateway at another offset
    routes = [r for r in pool_routes(10, 0) if r['dst'] != moved['dst']] + [moved, odd]
    assert rr.compress(routes) == [
        {'dst': '10.100.1.0/24', 'via': '10.100.1.254', 'onlink': True, 'count': 4}, moved,
        {'dst': '10.100.6.0/24', 'via': '10.100.6.254', 'onlink': True, 'count': 4}, odd]


def test_compress_then_expand_gives_back_the_routes_whatever_their_mix():
    rnd = random.Random(21)
    routes = []
    for k in range(400):
        if rnd.random() < 0.8:
            routes.append({'dst': '10.%d.%d.0/24' % (k // 256, k % 256), 'via': '10.%d.%d.254' % (k // 256, k % 256),
                           'onlink': True, 'metric': rnd.choice([0, 0, 0, 50])})
    routes += [{'dst': 'fd00:0:0:%x::/64' % k, 'via': 'fd00:0:0:%x::1' % k, 'metric': 1024} for k in range(1, 6)]
    routes += [{'dst': '192.0.2.%d/32' % k} for k in range(0, 8, 2)]  # no next hop, not adjacent
    rnd.shuffle(routes)
    compressed = rr.compress(routes)
    assert plain(compressed) == plain(routes)
    assert rr.total(compressed) == len(routes)
    assert len(compressed) < len(routes)
    assert rr.compress(compressed) == compressed  # a range is read like its routes


def test_the_last_route_of_a_range_is_arithmetic():
    r = {'dst': 'fd00::/64', 'via': 'fd00::1', 'count': 3}
    assert rr.last(r) == {'dst': 'fd00:0:0:2::/64', 'via': 'fd00:0:0:2::1'} == rr.expand(r)[-1]
    assert rr.last({'dst': '10.0.0.0/30'}) == {'dst': '10.0.0.0/30'}


@pytest.mark.parametrize('route', [
    {'dst': '255.255.255.0/24', 'count': 2},
    {'dst': '10.0.0.0/24', 'via': '255.255.255.254', 'count': 2},
    {'dst': '10.0.0.1/24', 'count': 2},  # host bits
])
def test_expand_refuses_a_range_it_cannot_stand_for(route):
    with pytest.raises(ValueError):
        rr.expand(route)


@pytest.mark.parametrize("routes", [
    pool_routes(12, -1),
    [r for r in pool_routes(12, -1) if r["dst"] != "10.100.5.0/24"] + [{"dst": "10.100.5.0/24", "via": "10.100.5.1", "onlink": True}],
    [{"dst": "fd00:0:0:%x::/64" % k, "via": "fd00:0:0:%x::1" % k, "metric": 1024} for k in range(1, 9)],
    [{"dst": "192.0.2.%d/32" % k} for k in range(6)],
], ids=["one-range", "an-odd-gateway", "ipv6", "no-next-hop"])
def test_without_equals_compressing_without_the_route(routes):
    whole = rr.compress(routes)
    for route in routes:
        rest = [r for r in routes if r is not route]
        assert rr.without(whole, route) == rr.compress(rest), route["dst"]


def test_without_leaves_ranges_alone_when_the_route_is_not_in_them():
    whole = rr.compress(pool_routes(12, -1))
    assert rr.without(whole, {"dst": "10.100.3.0/24", "via": "10.100.3.1", "onlink": True}) == whole  # another next hop
    assert rr.without(whole, {"dst": "10.100.3.0/24", "via": "10.100.3.254"}) == whole  # not onlink
    assert rr.without(whole, {"dst": "10.100.30.0/24", "via": "10.100.30.254", "onlink": True}) == whole

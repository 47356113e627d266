# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Logic of gpufabric.roce.vlan_gateway: validation and planning are pure functions over
plain dicts; reading and applying use one pyroute2 IPRoute session."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import ipaddress
import socket

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import (
    GpufabricError,
    Sysfs,
    check_ifname,
    oserror_text,
    write_sysfs,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._common import route_ranges as _route_ranges
from ansible_collections.gpufabric.roce.plugins.module_utils._host.vlan_gateway_unit import persist, routes_file_path

PF_FIX = ('give the PF netdev name (roce_pf), at most 15 characters of letters, digits, "_", "." and "-" '
          'not starting with "-" or ".", e.g. enp157s0np0')
IFF_UP = 1
RTNH_F_ONLINK = 4
RT_TABLE_MAIN = 254
RTPROT_KERNEL, RTPROT_RA, RTPROT_DHCP = 2, 9, 16
U32_MAX = 0xFFFFFFFF
# Sysctls of the gateway interface the module may manage (IPv4; per interface).
SYSCTL_KEYS = ('forwarding', 'rp_filter', 'send_redirects')


def _text(value):
    return '%s' % value


def default_name(pf, vlan_id):
    return '%s.%s' % (pf, vlan_id)


def _default_metric(version):
    return 0 if version == 4 else 1024


# --- validation (pure) -------------------------------------------------------

def _expanded(host, routes):
    """(field, plain route) of every route, ranges (``count``) expanded; each route of a range is named by the
    range's field, so an error names the entry the user wrote (and its value names the route)."""
    for i, route in enumerate(routes):
        field = 'routes[%d]' % i
        count = route.get('count')
        if count is None or count == 1:
            yield field, route
            continue
        if count < 1:
            raise GpufabricError(host, field + '.count', count, 'is less than 1', 'give count 1 or more, or leave it out for one route')
        try:
            plain = _route_ranges.expand(route)
        except ValueError as exc:
            # The range's first route is checked as a plain one: its message names dst or via.
            yield field, dict(route, count=None)
            raise GpufabricError(host, field + '.count', count, '%s' % exc,
                                 'lower count, or split the routes in ranges that stay inside the address space') from None
        for r in plain:
            yield field, r


def validate_params(host, params):
    """Check every argument; return the normalized desired state. Raises GpufabricError."""
    pf = params['pf']
    vlan_id = params['vlan_id']
    check_ifname(host, 'pf', pf, PF_FIX)
    if not 1 <= vlan_id <= 4094:
        raise GpufabricError(host, 'vlan_id', vlan_id, 'is outside 1..4094', 'use a VLAN id between 1 and 4094 (roce_vlan_id)')
    name = params.get('name') or default_name(pf, vlan_id)
    check_ifname(host, 'name', name, 'set name explicitly to at most 15 characters of letters, digits, "_", "." and "-", '
                 'e.g. vlan%d' % vlan_id)
    mtu = params.get('mtu')
    if mtu is not None and not 68 <= mtu <= 65535:
        raise GpufabricError(host, 'mtu', mtu, 'is outside 68..65535', 'use an MTU no larger than the PF MTU, e.g. 9000 or 1500')
    desired = {'pf': pf, 'vlan_id': vlan_id, 'name': name, 'mtu': mtu, 'addresses': None, 'routes': None}
    networks = []
    if params.get('addresses') is not None:
        addrs = []
        for i, raw in enumerate(params['addresses']):
            field = 'addresses[%d]' % i
            if '/' not in _text(raw):
                raise GpufabricError(host, field, raw, 'has no prefix length', 'write the address in CIDR form, e.g. %s/30' % raw)
            try:
                iface = ipaddress.ip_interface(_text(raw))
            except ValueError:
                raise GpufabricError(host, field, raw, 'is not a valid CIDR address', 'write it like 10.255.0.2/30') from None
            net = iface.network
            if iface.version == 4 and net.prefixlen < 31 and iface.ip in (net.network_address, net.broadcast_address):
                raise GpufabricError(host, field, raw, 'is the network or broadcast address of %s' % net,
                                     'use a host address of %s, e.g. %s/%d' % (net, next(net.hosts()), net.prefixlen))
            if _text(iface) in addrs:
                raise GpufabricError(host, field, raw, 'is listed twice', 'list each address once')
            addrs.append(_text(iface))
            networks.append(net)
        desired['addresses'] = addrs
    if params.get('routes') is not None:
        routes = []
        keys = set()
        for field, route in _expanded(host, params['routes']):
            dst_raw = route.get('dst')
            try:
                dst = ipaddress.ip_network(_text(dst_raw), strict=False)
            except ValueError:
                raise GpufabricError(host, field + '.dst', dst_raw, 'is not a valid CIDR network', 'write it like 10.255.0.4/30') from None
            if _text(dst) != _text(dst_raw) and '/' in _text(dst_raw):
                raise GpufabricError(host, field + '.dst', dst_raw, 'has host bits set', 'use the network address %s' % dst)
            if '/' not in _text(dst_raw):
                raise GpufabricError(host, field + '.dst', dst_raw, 'has no prefix length',
                                     'write the network in CIDR form, e.g. %s/%d' % (dst_raw, dst.max_prefixlen))
            via_raw = route.get('via')
            via = None
            onlink = bool(route.get('onlink'))
            if via_raw is not None:
                try:
                    via = ipaddress.ip_address(_text(via_raw))
                except ValueError:
                    raise GpufabricError(host, field + '.via', via_raw, 'is not an IP address',
                                         'give the next hop as a plain address, e.g. 10.255.0.6') from None
                if via.version != dst.version:
                    raise GpufabricError(host, field + '.via', via_raw, 'is IPv%d but dst %s is IPv%d' % (via.version, dst, dst.version),
                                         'use a next hop of the same address family as dst')
                if not onlink and not any(via in net for net in networks):
                    raise GpufabricError(
                        host, field + '.via', via_raw,
                        'is not on a connected subnet of %s (%s)' % (name, ', '.join(_text(n) for n in networks) or 'no addresses'),
                        'set onlink: true (the next hop is reachable on the VLAN without a shared subnet) or add an address covering it')
            elif onlink:
                raise GpufabricError(host, field + '.onlink', True, 'onlink needs a next hop but via is not set', 'set via, or drop onlink')
            metric = route.get('metric')
            if metric is None:
                metric = _default_metric(dst.version)
            if not 0 <= metric <= U32_MAX:
                raise GpufabricError(host, field + '.metric', metric, 'is outside 0..4294967295', 'use a small metric such as 0 or 100')
            key = (_text(dst), metric)
            if key in keys:
                raise GpufabricError(host, field + '.dst', dst_raw, 'a route to %s with metric %d is listed twice' % key,
                                     'list each destination once per metric')
            keys.add(key)
            routes.append({'dst': _text(dst), 'via': _text(via) if via else None, 'onlink': onlink, 'metric': metric})
        desired['routes'] = sorted(routes, key=lambda r: (r['dst'], r['metric']))
    for key in SYSCTL_KEYS:
        desired[key] = params.get(key)
    return desired


def validate_state(host, desired, state):
    """Checks against the live state (PF present, MTU, name not taken). Raises GpufabricError."""
    pf, name = desired['pf'], desired['name']
    absent = desired.get('state', 'present') == 'absent'
    if state['pf'] is None and not (absent and state['link'] is None):
        raise GpufabricError(host, 'pf', pf, 'no such network interface',
                             'set pf (roce_pf) to an existing PF netdev, see ansible_facts.rdma.netdevs')
    link = state['link']
    pf_index = state['pf']['index'] if state['pf'] else None
    if link is not None and not (link['kind'] == 'vlan' and link['parent'] == pf_index and link['vlan_id'] == desired['vlan_id']):
        what = 'a %s interface' % link['kind'] if link['kind'] != 'vlan' else 'VLAN %s on ifindex %s' % (link['vlan_id'], link['parent'])
        raise GpufabricError(host, 'name', name, 'already exists as %s, not VLAN %d on %s' % (what, desired['vlan_id'], pf),
                             'choose another name, or remove the existing interface first')
    if not absent and desired['mtu'] is not None and desired['mtu'] > state['pf']['mtu']:
        raise GpufabricError(host, 'mtu', desired['mtu'], 'exceeds the MTU %d of PF %s' % (state['pf']['mtu'], pf),
                             'lower mtu to at most %d, or raise the PF MTU first' % state['pf']['mtu'])


# --- planning (pure) ---------------------------------------------------------

def sysctl_path(iface, key):
    return 'sys/net/ipv4/conf/%s/%s' % (iface, key)


def desired_sysctls(desired, current_all):
    """{proc-relative path: value} to write. ``current_all``: {key: value} of conf/all.

    The kernel uses max(all, iface) for rp_filter and (all OR iface) for send_redirects,
    so lowering the interface value alone can be ineffective; ``all`` is lowered too and a
    warning says so."""
    name = desired['name']
    want = {}
    warnings = []
    if desired.get('forwarding') is not None:
        want[sysctl_path(name, 'forwarding')] = int(desired['forwarding'])
    rp = desired.get('rp_filter')
    if rp is not None:
        want[sysctl_path(name, 'rp_filter')] = rp
        cur_all = current_all.get('rp_filter')
        if cur_all is not None and cur_all > rp:
            want[sysctl_path('all', 'rp_filter')] = rp
            warnings.append('net.ipv4.conf.all.rp_filter is %d and the kernel applies max(all, interface), so it is lowered to %d '
                            'for rp_filter=%d on %s to take effect; other interfaces keep their own rp_filter value' % (cur_all, rp, rp, name))
    sr = desired.get('send_redirects')
    if sr is not None:
        want[sysctl_path(name, 'send_redirects')] = int(sr)
        if not sr and current_all.get('send_redirects'):
            want[sysctl_path('all', 'send_redirects')] = 0
            warnings.append('net.ipv4.conf.all.send_redirects is set to 0: the kernel sends redirects when all OR the interface allows it')
    return want, warnings


def route_changes(current, desired):
    """{added, removed, changed}: the routes (in range form) that are new, gone, or whose next hop or onlink changed.
    The change-impact report reads these, not the diff: it would otherwise expand every node's routes."""
    have = {(r['dst'], r['metric']): r for r in current}
    want = {(r['dst'], r['metric']): r for r in desired}
    changed = [want[k] for k in set(have) & set(want)
               if (have[k]['via'], bool(have[k]['onlink'])) != (want[k]['via'], bool(want[k]['onlink']))]
    return {'added': _route_ranges.compress(want[k] for k in set(want) - set(have)),
            'removed': _route_ranges.compress(have[k] for k in set(have) - set(want)),
            'changed': _route_ranges.compress(changed)}


def plan(desired, state, current_sysctls, current_all):
    """Compare desired with the live ``state``; return (actions, before, after, warnings).

    ``current_sysctls``: {proc path: int or None} of the paths desired_sysctls() returns
    (for an interface that does not exist yet, the values of conf/default)."""
    name = desired['name']
    link = state['link']
    actions = []
    before = {'interface': name, 'present': link is not None}
    after = {'interface': name, 'present': desired.get('state', 'present') == 'present'}
    if desired.get('state', 'present') == 'absent':
        if link is not None:
            actions.append(('delete',))
            before.update({'vlan_id': link['vlan_id'], 'pf': desired['pf'], 'addresses': link['addresses'], 'routes': link['routes']})
        return actions, before, after, []

    if not state['pf']['up']:
        actions.append(('pf_up',))
    before['pf_up'] = state['pf']['up']
    after['pf_up'] = True
    if link is None:
        actions.append(('create',))
        cur = {'mtu': state['pf']['mtu'], 'up': False, 'addresses': [], 'routes': []}
    else:
        cur = link
    before.update({'vlan_id': link['vlan_id'] if link else None, 'pf': desired['pf'] if link else None,
                   'mtu': cur['mtu'] if link else None, 'up': cur['up'] if link else None})
    after.update({'vlan_id': desired['vlan_id'], 'pf': desired['pf'], 'mtu': desired['mtu'] or cur['mtu'], 'up': True})
    if desired['mtu'] is not None and desired['mtu'] != cur['mtu']:
        actions.append(('mtu', desired['mtu']))
    if not cur['up']:
        actions.append(('up',))

    if desired['addresses'] is not None:
        have = set(cur['addresses'])
        want = set(desired['addresses'])
        for addr in sorted(have - want):
            actions.append(('addr_del', addr))
        for addr in desired['addresses']:
            if addr not in have:
                actions.append(('addr_add', addr))
        before['addresses'] = sorted(have) if link else []
        after['addresses'] = sorted(want)

    if desired['routes'] is not None:
        have = {(r['dst'], r['metric']): r for r in cur['routes']}
        want = {(r['dst'], r['metric']): r for r in desired['routes']}
        for key in sorted(set(have) - set(want)):
            actions.append(('route_del', have[key]))
        for key in sorted(want):
            old = have.get(key)
            new = want[key]
            if old is None or old['via'] != new['via'] or bool(old['onlink']) != new['onlink']:
                actions.append(('route_replace', new))
        # In range form (module_utils/_common/route_ranges.py): a gateway's routes grow with the fleet, and so would every
        # copy of its diff on the controller.
        before['routes'] = _route_ranges.compress(have.values()) if link else []
        after['routes'] = _route_ranges.compress(want.values())

    want_sysctls, warnings = desired_sysctls(desired, current_all)
    before['sysctls'] = {}
    after['sysctls'] = {}
    for path in sorted(want_sysctls):
        key = path[len('sys/'):]
        before['sysctls'][key] = current_sysctls.get(path)
        after['sysctls'][key] = want_sysctls[path]
        if current_sysctls.get(path) != want_sysctls[path]:
            actions.append(('sysctl', path, want_sysctls[path]))
    return actions, before, after, warnings


# --- reading and applying (pyroute2) -----------------------------------------

def _route_dict(msg):
    family = msg['family']
    dst = msg.get_attr('RTA_DST')
    if dst is None:
        dst = '0.0.0.0' if family == socket.AF_INET else '::'
    net = ipaddress.ip_network('%s/%d' % (dst, msg['dst_len']), strict=False)
    priority = msg.get_attr('RTA_PRIORITY')
    return {'dst': _text(net), 'via': msg.get_attr('RTA_GATEWAY'), 'onlink': bool(msg['flags'] & RTNH_F_ONLINK),
            'metric': priority if priority is not None else 0}


def read_link(ipr, index):
    msg = ipr.link('get', index=index)[0]
    info = msg.get_attr('IFLA_LINKINFO')
    kind = info.get_attr('IFLA_INFO_KIND') if info is not None else None
    vlan_id = None
    if kind == 'vlan':
        data = info.get_attr('IFLA_INFO_DATA')
        vlan_id = data.get_attr('IFLA_VLAN_ID') if data is not None else None
    addresses = []
    for a in ipr.get_addr(index=index):
        ip = ipaddress.ip_address(a.get_attr('IFA_ADDRESS'))
        if ip.version == 6 and ip.is_link_local:
            continue
        addresses.append('%s/%d' % (ip, a['prefixlen']))
    routes = []
    for family in (socket.AF_INET, socket.AF_INET6):
        for r in ipr.get_routes(family=family):
            if r.get_attr('RTA_OIF') != index or (r.get_attr('RTA_TABLE') or r['table']) != RT_TABLE_MAIN:
                continue
            if r['proto'] in (RTPROT_KERNEL, RTPROT_RA, RTPROT_DHCP) or r['type'] != 1:
                continue
            routes.append(_route_dict(r))
    return {
        'index': index,
        'kind': kind,
        'vlan_id': vlan_id,
        'parent': msg.get_attr('IFLA_LINK'),
        'mtu': msg.get_attr('IFLA_MTU'),
        'up': bool(msg['flags'] & IFF_UP),
        'addresses': sorted(addresses),
        'routes': sorted(routes, key=lambda r: (r['dst'], r['metric'])),
    }


def read_state(ipr, pf, name):
    state = {'pf': None, 'link': None}
    idx = ipr.link_lookup(ifname=pf)
    if idx:
        msg = ipr.link('get', index=idx[0])[0]
        state['pf'] = {'index': idx[0], 'mtu': msg.get_attr('IFLA_MTU'), 'up': bool(msg['flags'] & IFF_UP)}
    idx = ipr.link_lookup(ifname=name)
    if idx:
        state['link'] = read_link(ipr, idx[0])
    return state


def read_sysctls(fs, paths, name, exists):
    """Current values; for a not-yet-created interface, conf/default is what it will inherit."""
    values = {}
    for path in paths:
        real = path
        if not exists and '/conf/%s/' % name in path:
            real = path.replace('/conf/%s/' % name, '/conf/default/')
        values[path] = fs.read_int_file(fs.proc(real))
    return values


def describe(action):
    """Human-readable form of a planned action (returned as ``actions``)."""
    op = action[0]
    if op in ('route_replace', 'route_del', 'route_kept'):
        return _describe_route(op, action[1])
    if op == 'sysctl':
        return 'sysctl %s=%s' % (action[1][len('sys/'):], action[2])
    return ' '.join(_text(a) for a in action)


def _describe_route(op, r):
    text = '%s %s' % (op, r['dst'])
    if r.get('via'):
        text += ' via %s' % r['via']
    text += ' metric %d%s' % (r.get('metric') or 0, ' onlink' if r.get('onlink') else '')
    if (r.get('count') or 1) > 1:
        end = _route_ranges.last(r)
        text += ' .. %s%s (%d routes)' % (end['dst'], ' via %s' % end['via'] if end.get('via') else '', r['count'])
    return text


def describe_all(actions):
    """``describe`` of each action, a run of route actions of one kind as ranges: the first apply of a gateway at
    10,000 nodes would otherwise return 10,000 lines, and the controller holds every node's."""
    out, i = [], 0
    while i < len(actions):
        op = actions[i][0]
        if op not in ('route_replace', 'route_del', 'route_kept'):
            out.append(describe(actions[i]))
            i += 1
            continue
        j = i
        while j < len(actions) and actions[j][0] == op:
            j += 1
        out.extend(_describe_route(op, r) for r in _route_ranges.compress(a[1] for a in actions[i:j]))
        i = j
    return out


def apply(host, ipr, fs, *, desired, state, actions):
    name = desired['name']
    index = state['link']['index'] if state['link'] else None
    for action in actions:
        op = action[0]
        try:
            if op == 'delete':
                ipr.link('del', index=index)
            elif op == 'pf_up':
                ipr.link('set', index=state['pf']['index'], state='up')
            elif op == 'create':
                ipr.link('add', ifname=name, kind='vlan', link=state['pf']['index'], vlan_id=desired['vlan_id'])
                index = ipr.link_lookup(ifname=name)[0]
            elif op == 'mtu':
                ipr.link('set', index=index, mtu=action[1])
            elif op == 'up':
                ipr.link('set', index=index, state='up')
            elif op in ('addr_add', 'addr_del'):
                iface = ipaddress.ip_interface(action[1])
                ipr.addr('add' if op == 'addr_add' else 'del', index=index, address=_text(iface.ip), prefixlen=iface.network.prefixlen)
            elif op in ('route_replace', 'route_del'):
                r = action[1]
                spec = {'dst': r['dst'], 'oif': index, 'priority': r['metric'], 'table': RT_TABLE_MAIN}
                if r['via']:
                    spec['gateway'] = r['via']
                if op == 'route_replace':
                    spec['proto'] = 'static'
                    if r['onlink']:
                        spec['flags'] = RTNH_F_ONLINK
                    ipr.route('replace', **spec)
                else:
                    ipr.route('del', **spec)
            elif op == 'sysctl':
                write_sysfs(fs.proc(action[1]), action[2])
        except OSError as exc:
            raise GpufabricError(host, 'name', name, '%s failed: %s' % (describe(action), oserror_text(exc)),
                                 'fix the cause above and re-run; the steps before it were applied') from exc
        except Exception as exc:  # pyroute2 NetlinkError
            raise GpufabricError(host, 'name', name, '%s failed: %s' % (describe(action), exc),
                                 'fix the cause above and re-run; the steps before it were applied') from exc
    return index


def keep_unlisted_routes(desired, state):
    """``desired`` with the interface's unlisted routes added to its routes (``purge_routes=false``): a run that
    cannot know the whole fabric (an AWX slice, a plan marked incomplete) must not delete a route it cannot
    account for, nor drop it from the persisted unit. Returns the routes kept."""
    link = state.get('link')
    if desired.get('purge_routes', True) or desired['routes'] is None or link is None:
        return []
    listed = {(r['dst'], r['metric']) for r in desired['routes']}
    kept = [dict(r) for r in link['routes'] if (r['dst'], r['metric']) not in listed]
    desired['routes'] = sorted(desired['routes'] + kept, key=lambda r: (r['dst'], r['metric']))
    return kept


def run(host, params, ipr, check_mode, *, fs=None, persist_fn=None, file_fn=None):
    fs = fs or Sysfs()
    desired = validate_params(host, params)
    desired['state'] = params.get('state', 'present')
    desired['purge_routes'] = params.get('purge_routes') is not False
    persisting = params.get('persist') or desired['state'] == 'absent'
    # Checked with the other arguments, before anything changes.
    routes_path = routes_file_path(host, params.get('unit_dir') or '/etc/systemd/system', desired['name']) if persisting else None
    state = read_state(ipr, desired['pf'], desired['name'])
    validate_state(host, desired, state)
    kept = keep_unlisted_routes(desired, state)
    all_paths = {k: fs.read_int_file(fs.proc(sysctl_path('all', k))) for k in SYSCTL_KEYS}
    want_sysctls, _w = desired_sysctls(desired, all_paths)
    current_sysctls = read_sysctls(fs, list(want_sysctls), desired['name'], state['link'] is not None)
    actions, before, after, warnings = plan(desired, state, current_sysctls, all_paths)
    result = {'changed': bool(actions), 'interface': desired['name'], 'actions': describe_all(actions)}
    if kept:
        result['kept_routes'] = describe_all([('route_kept', r) for r in kept])
    if desired['state'] == 'present' and desired['routes'] is not None:
        result['route_changes'] = route_changes(state['link']['routes'] if state['link'] else [], desired['routes'])
        if kept:
            result['route_changes']['kept'] = _route_ranges.compress(kept)
    if not check_mode and actions:
        index = apply(host, ipr, fs, desired=desired, state=state, actions=actions)
        if desired['state'] == 'present':
            link = read_link(ipr, index)
            after.update({'mtu': link['mtu'], 'up': link['up']})
            if desired['addresses'] is not None:
                after['addresses'] = link['addresses']
            if desired['routes'] is not None:
                after['routes'] = _route_ranges.compress(link['routes'])
    if desired['state'] == 'present':
        result['ifindex'] = state['link']['index'] if state['link'] else None
        if not check_mode and actions:
            result['ifindex'] = ipr.link_lookup(ifname=desired['name'])[0]
    result['diff'] = {'before': before, 'after': after}
    result['warnings'] = warnings
    if persisting:
        persist(desired, result, routes_path, persist_fn, file_fn)
    return result

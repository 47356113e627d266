# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._host import vlan_gateway as vg
from ansible_collections.gpufabric.roce.plugins.module_utils._host import vlan_gateway_unit as vu
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, Sysfs

HOST = 'node1'
NODE1 = {'pf': 'enp157s0np0', 'vlan_id': 100, 'name': None, 'mtu': 9000, 'addresses': ['10.255.0.2/30'],
         'routes': [{'dst': '10.255.0.4/30', 'via': '10.255.0.6', 'onlink': True, 'metric': None}],
         'forwarding': True, 'rp_filter': None, 'send_redirects': None, 'state': 'present'}


def params(**kw):
    p = dict(NODE1)
    p.update(kw)
    return p


def route(dst, via=None, onlink=False, metric=None):
    return {'dst': dst, 'via': via, 'onlink': onlink, 'metric': metric}


BAD = [
    ('vlan-zero', params(vlan_id=0), 'node1: vlan_id=0: is outside 1..4094. Fix: use a VLAN id between 1 and 4094 (roce_vlan_id)'),
    ('vlan-4095', params(vlan_id=4095), 'node1: vlan_id=4095: is outside 1..4094. Fix: use a VLAN id between 1 and 4094 (roce_vlan_id)'),
    ('name-too-long', params(pf='enp157s0np0', vlan_id=1000),
     'node1: name="enp157s0np0.1000": is not a valid interface name (Linux allows at most 15 bytes, this has 16). '
     'Fix: set name explicitly to at most 15 characters of letters, digits, "_", "." and "-", e.g. vlan1000'),
    ('pf-injection', params(pf='e;reboot'),
     'node1: pf="e;reboot": is not a valid interface name: it contains \';\', which a shell or systemd unit line would '
     'interpret. Fix: give the PF netdev name (roce_pf), at most 15 characters of letters, digits, "_", "." and "-" '
     'not starting with "-" or ".", e.g. enp157s0np0'),
    ('name-injection', params(name='v`id`'),
     'node1: name="v`id`": is not a valid interface name: it contains \'`\', which a shell or systemd unit line would '
     'interpret. Fix: set name explicitly to at most 15 characters of letters, digits, "_", "." and "-", e.g. vlan100'),
    ('name-option', params(name='-v100'),
     'node1: name="-v100": is not a valid interface name: it starts with \'-\'. '
     'Fix: set name explicitly to at most 15 characters of letters, digits, "_", "." and "-", e.g. vlan100'),
    ('mtu-range', params(mtu=50), 'node1: mtu=50: is outside 68..65535. Fix: use an MTU no larger than the PF MTU, e.g. 9000 or 1500'),
    ('addr-no-prefix', params(addresses=['10.255.0.2']),
     'node1: addresses[0]="10.255.0.2": has no prefix length. Fix: write the address in CIDR form, e.g. 10.255.0.2/30'),
    ('addr-invalid', params(addresses=['10.255.0.300/30']),
     'node1: addresses[0]="10.255.0.300/30": is not a valid CIDR address. Fix: write it like 10.255.0.2/30'),
    ('addr-network', params(addresses=['10.255.0.0/30']),
     'node1: addresses[0]="10.255.0.0/30": is the network or broadcast address of 10.255.0.0/30. Fix: use a host address of 10.255.0.0/30, e.g. 10.255.0.1/30'),
    ('addr-twice', params(addresses=['10.255.0.2/30', '10.255.0.2/30']),
     'node1: addresses[1]="10.255.0.2/30": is listed twice. Fix: list each address once'),
    ('dst-invalid', params(routes=[route('10.255.0.x/30', '10.255.0.6', True)]),
     'node1: routes[0].dst="10.255.0.x/30": is not a valid CIDR network. Fix: write it like 10.255.0.4/30'),
    ('dst-host-bits', params(routes=[route('10.255.0.5/30', '10.255.0.6', True)]),
     'node1: routes[0].dst="10.255.0.5/30": has host bits set. Fix: use the network address 10.255.0.4/30'),
    ('dst-no-prefix', params(routes=[route('10.255.0.4', '10.255.0.6', True)]),
     'node1: routes[0].dst="10.255.0.4": has no prefix length. Fix: write the network in CIDR form, e.g. 10.255.0.4/32'),
    ('via-invalid', params(routes=[route('10.255.0.4/30', '10.255.0.6/30', True)]),
     'node1: routes[0].via="10.255.0.6/30": is not an IP address. Fix: give the next hop as a plain address, e.g. 10.255.0.6'),
    ('via-family', params(routes=[route('10.255.0.4/30', 'fd00::6', True)]),
     'node1: routes[0].via="fd00::6": is IPv6 but dst 10.255.0.4/30 is IPv4. Fix: use a next hop of the same address family as dst'),
    ('via-unreachable', params(routes=[route('10.255.0.4/30', '10.255.0.6')]),
     'node1: routes[0].via="10.255.0.6": is not on a connected subnet of enp157s0np0.100 (10.255.0.0/30). '
     'Fix: set onlink: true (the next hop is reachable on the VLAN without a shared subnet) or add an address covering it'),
    ('onlink-without-via', params(routes=[route('10.255.0.4/30', None, True)]),
     'node1: routes[0].onlink=true: onlink needs a next hop but via is not set. Fix: set via, or drop onlink'),
    ('metric-range', params(routes=[route('10.255.0.4/30', '10.255.0.6', True, -1)]),
     'node1: routes[0].metric=-1: is outside 0..4294967295. Fix: use a small metric such as 0 or 100'),
    ('route-twice', params(routes=[route('10.255.0.4/30', '10.255.0.6', True), route('10.255.0.4/30', '10.255.0.5', True)]),
     'node1: routes[1].dst="10.255.0.4/30": a route to 10.255.0.4/30 with metric 0 is listed twice. Fix: list each destination once per metric'),
]


@pytest.mark.parametrize('p,message', [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_validate_params_rejects(p, message):
    with pytest.raises(GpufabricError) as err:
        vg.validate_params(HOST, p)
    assert str(err.value) == message


PF = {'index': 2, 'mtu': 9000, 'up': True}


def link(**kw):
    base = {'index': 7, 'kind': 'vlan', 'vlan_id': 100, 'parent': 2, 'mtu': 9000, 'up': True,
            'addresses': ['10.255.0.2/30'], 'routes': [{'dst': '10.255.0.4/30', 'via': '10.255.0.6', 'onlink': True, 'metric': 0}]}
    base.update(kw)
    return base


BAD_STATE = [
    ('pf-missing', params(), {'pf': None, 'link': None},
     'node1: pf="enp157s0np0": no such network interface. Fix: set pf (roce_pf) to an existing PF netdev, see ansible_facts.rdma.netdevs'),
    ('mtu-above-pf', params(), {'pf': dict(PF, mtu=1500), 'link': None},
     'node1: mtu=9000: exceeds the MTU 1500 of PF enp157s0np0. Fix: lower mtu to at most 1500, or raise the PF MTU first'),
    ('name-taken-by-bridge', params(name='gw0'), {'pf': PF, 'link': link(kind='bridge', vlan_id=None, parent=None)},
     'node1: name="gw0": already exists as a bridge interface, not VLAN 100 on enp157s0np0. Fix: choose another name, or remove the existing interface first'),
    ('name-other-vlan', params(), {'pf': PF, 'link': link(vlan_id=200)},
     'node1: name="enp157s0np0.100": already exists as VLAN 200 on ifindex 2, not VLAN 100 on enp157s0np0. '
     'Fix: choose another name, or remove the existing interface first'),
]


@pytest.mark.parametrize('p,state,message', [b[1:] for b in BAD_STATE], ids=[b[0] for b in BAD_STATE])
def test_validate_state_rejects(p, state, message):
    desired = vg.validate_params(HOST, p)
    desired['state'] = p['state']
    with pytest.raises(GpufabricError) as err:
        vg.validate_state(HOST, desired, state)
    assert str(err.value) == message


def plan_for(p, state, sysctls=None, all_values=None):
    desired = vg.validate_params(HOST, p)
    desired['state'] = p['state']
    vg.validate_state(HOST, desired, state)
    return vg.plan(desired, state, sysctls or {}, all_values or {})


def test_plan_from_scratch():
    actions, before, after, warnings = plan_for(params(), {'pf': dict(PF, up=False), 'link': None},
                                                {'sys/net/ipv4/conf/enp157s0np0.100/forwarding': 0})
    assert [vg.describe(a) for a in actions] == [
        'pf_up', 'create', 'up', 'addr_add 10.255.0.2/30', 'route_replace 10.255.0.4/30 via 10.255.0.6 metric 0 onlink',
        'sysctl net/ipv4/conf/enp157s0np0.100/forwarding=1']
    assert before['present'] is False and after['addresses'] == ['10.255.0.2/30']
    assert warnings == []


def test_plan_idempotent():
    actions, before, after, _w = plan_for(params(), {'pf': PF, 'link': link()}, {'sys/net/ipv4/conf/enp157s0np0.100/forwarding': 1})
    assert actions == []
    assert before == after


def test_plan_removes_only_unlisted_and_changes_nexthop():
    current = link(addresses=['10.255.0.2/30', '192.0.2.1/24'],
                   routes=[{'dst': '10.255.0.4/30', 'via': '10.255.0.5', 'onlink': True, 'metric': 0},
                           {'dst': '10.9.0.0/16', 'via': '10.255.0.1', 'onlink': False, 'metric': 0}])
    actions, _b, _a, _w = plan_for(params(forwarding=None, mtu=1500), {'pf': PF, 'link': current})
    assert [vg.describe(a) for a in actions] == [
        'mtu 1500', 'addr_del 192.0.2.1/24', 'route_del 10.9.0.0/16 via 10.255.0.1 metric 0',
        'route_replace 10.255.0.4/30 via 10.255.0.6 metric 0 onlink']


def test_plan_leaves_unmanaged_lists_alone():
    current = link(addresses=['192.0.2.1/24'], routes=[])
    actions, _b, after, _w = plan_for(params(addresses=None, routes=None, forwarding=None), {'pf': PF, 'link': current})
    assert actions == [] and 'addresses' not in after and 'routes' not in after


def test_plan_absent():
    actions, before, after, _w = plan_for(params(state='absent'), {'pf': PF, 'link': link()})
    assert actions == [('delete',)] and before['present'] is True and after['present'] is False
    assert plan_for(params(state='absent'), {'pf': None, 'link': None})[0] == []


def test_rp_filter_lowers_all_with_warning_and_redirects():
    desired = vg.validate_params(HOST, params(rp_filter=0, send_redirects=False))
    want, warnings = vg.desired_sysctls(desired, {'rp_filter': 1, 'send_redirects': 1})
    assert want == {'sys/net/ipv4/conf/enp157s0np0.100/forwarding': 1, 'sys/net/ipv4/conf/enp157s0np0.100/rp_filter': 0,
                    'sys/net/ipv4/conf/all/rp_filter': 0, 'sys/net/ipv4/conf/enp157s0np0.100/send_redirects': 0,
                    'sys/net/ipv4/conf/all/send_redirects': 0}
    assert warnings[0].startswith('net.ipv4.conf.all.rp_filter is 1 and the kernel applies max(all, interface)')
    want, warnings = vg.desired_sysctls(desired, {'rp_filter': 0, 'send_redirects': 0})
    assert 'sys/net/ipv4/conf/all/rp_filter' not in want and warnings == []


def test_sysctls_of_new_interface_read_from_default(tmp_path):
    conf = tmp_path / 'sys' / 'net' / 'ipv4' / 'conf' / 'default'
    conf.mkdir(parents=True)
    (conf / 'forwarding').write_text('0\n')
    fs = Sysfs(str(tmp_path), str(tmp_path))
    path = 'sys/net/ipv4/conf/enp157s0np0.100/forwarding'
    assert vg.read_sysctls(fs, [path], 'enp157s0np0.100', exists=False) == {path: 0}


def test_render_unit():
    desired = vg.validate_params(HOST, params(rp_filter=2, send_redirects=False))
    path = vu.routes_file_path(HOST, '/etc/systemd/system', desired['name'])
    text = vu.render_unit(desired, path)
    assert 'ExecStart=-/sbin/ip link add link enp157s0np0 name enp157s0np0.100 type vlan id 100' in text
    assert 'ExecStart=/sbin/ip link set dev enp157s0np0.100 mtu 9000 up' in text
    # The routes: one ip for all of them, from the file beside the unit (systemd loads no *.routes file).
    assert path == '/etc/systemd/system/gpufabric-vlan-enp157s0np0.100.routes'
    assert 'ExecStart=/sbin/ip -force -batch /etc/systemd/system/gpufabric-vlan-enp157s0np0.100.routes' in text
    assert vu.render_routes(desired) == 'route replace 10.255.0.4/30 via 10.255.0.6 dev enp157s0np0.100 proto static metric 0 onlink\n'
    assert 'route replace' not in text
    assert ("ExecStart=/bin/sh -c '[ $$(cat /proc/sys/net/ipv4/conf/all/rp_filter) -le 2 ] || "
            "echo 2 > /proc/sys/net/ipv4/conf/all/rp_filter'") in text
    assert vu.unit_name('enp157s0np0.100') == 'gpufabric-vlan-enp157s0np0.100.service'
    # Bound to the PF's device and started by it whenever it appears (see test_sriov_vf.test_render_unit).
    lines = text.splitlines()
    assert 'BindsTo=sys-subsystem-net-devices-enp157s0np0.device' in lines
    assert 'After=sys-subsystem-net-devices-enp157s0np0.device gpufabric-sriov-enp157s0np0.service' in lines
    assert 'Requires=' not in text
    assert text.split('[Install]')[1].strip().splitlines() == ['WantedBy=sys-subsystem-net-devices-enp157s0np0.device']


# --- shell injection into the persisted unit: refused before anything changes --------

MALICIOUS = ['e$(reboot)', 'e`id`', 'e;reboot', 'a&b', 'a|b', "a'b", 'a"b', 'a b', 'a\tb', 'a\nb', 'e%i',
             'a\\b', 'a>b', 'a<b', 'a*', 'a?', 'a#', 'a(b', '-a', '.a', '..', 'a:b', 'a/b', 'é1']


class NoNetlink:
    """Any netlink call fails the test: validation must refuse first."""

    def __getattr__(self, name):
        raise AssertionError('netlink used before validation refused the input: %s' % name)


@pytest.mark.parametrize('field', ['pf', 'name'])
@pytest.mark.parametrize('value', MALICIOUS)
def test_run_refuses_unsafe_names_before_any_change(field, value):
    calls = []
    with pytest.raises(GpufabricError) as err:
        vg.run(HOST, params(persist=True, **{field: value}), NoNetlink(), False,
               fs=Sysfs('/nonexistent', '/nonexistent'), persist_fn=lambda *a: calls.append(a))
    assert (err.value.host, err.value.field, err.value.value) == (HOST, field, value)
    assert 'is not a valid interface name' in str(err.value) and '. Fix: ' in str(err.value)
    assert calls == []


@pytest.mark.parametrize('field', ['pf', 'name'])
def test_render_unit_never_writes_an_unsafe_name(field):
    desired = vg.validate_params(HOST, params())
    desired[field] = "x';reboot;'"  # as if a caller skipped validate_params
    with pytest.raises(ValueError):
        vu.render_unit(desired)
    with pytest.raises(ValueError):
        vu.unit_name('x$(id)')


def test_render_unit_of_a_legit_name_is_unchanged_by_quoting():
    desired = vg.validate_params(HOST, params(name='vlan-100_a.b', rp_filter=2, send_redirects=False))
    text = vu.render_unit(desired)
    assert 'ExecStart=-/sbin/ip link add link enp157s0np0 name vlan-100_a.b type vlan id 100' in text
    assert "ExecStart=/bin/sh -c 'echo 1 > /proc/sys/net/ipv4/conf/vlan-100_a.b/forwarding'" in text
    assert "ExecStart=/bin/sh -c 'echo 2 > /proc/sys/net/ipv4/conf/vlan-100_a.b/rp_filter'" in text


def _kept_run(monkeypatch, purge, persisted):
    """``persisted``: the unit's text, then the routes file's."""
    current = link(routes=[{'dst': '10.255.0.4/30', 'via': '10.255.0.6', 'onlink': True, 'metric': 0},
                           {'dst': '10.255.0.8/30', 'via': '10.255.0.10', 'onlink': True, 'metric': 0}])
    monkeypatch.setattr(vg, 'read_state', lambda ipr, pf, name: {'pf': PF, 'link': current})
    monkeypatch.setattr(vg, 'read_sysctls', lambda fs, paths, name, exists: {p: 1 for p in paths})
    files = {}

    def persist(unit, content, state):
        persisted.append(content)

    def write(path, content):
        files[path] = content
        return {'changed': True, 'before': None, 'after': content}
    result = vg.run(HOST, params(purge_routes=purge, persist=True, unit_dir='/etc/systemd/system'), object(), True,
                    fs=Sysfs('/nonexistent', '/nonexistent'), persist_fn=persist, file_fn=write)
    persisted.append(files['/etc/systemd/system/gpufabric-vlan-enp157s0np0.100.routes'])
    return result


def test_purge_routes_false_removes_no_route_and_persists_the_kept_ones(monkeypatch):
    # The route to 10.255.0.8/30 belongs to a node this run cannot see (another AWX slice).
    persisted = []
    result = _kept_run(monkeypatch, False, persisted)
    assert not any(a.startswith('route_del') for a in result['actions'])
    assert result['kept_routes'] == ['route_kept 10.255.0.8/30 via 10.255.0.10 metric 0 onlink']
    # The diff is in range form: the two routes are consecutive /30s with the next hop at the same offset.
    assert result['diff']['after']['routes'] == [{'dst': '10.255.0.4/30', 'via': '10.255.0.6', 'onlink': True, 'metric': 0, 'count': 2}]
    assert result['route_changes'] == {'added': [], 'removed': [], 'changed': [],
                                       'kept': [{'dst': '10.255.0.8/30', 'via': '10.255.0.10', 'onlink': True, 'metric': 0}]}
    assert 'route replace 10.255.0.8/30 via 10.255.0.10 dev enp157s0np0.100 proto static metric 0 onlink' in persisted[1]
    # The routes file is in the diff by its size and digest, not its text (it grows with the fleet).
    assert result['diff']['after']['routes_file']['routes'] == 2 and result['diff']['before']['routes_file'] is None


def test_purge_routes_true_removes_the_unlisted_route(monkeypatch):
    persisted = []
    result = _kept_run(monkeypatch, True, persisted)
    assert 'route_del 10.255.0.8/30 via 10.255.0.10 metric 0 onlink' in result['actions']
    assert 'kept_routes' not in result
    assert '10.255.0.8/30' not in persisted[1]


# --- routes in range form (count) ----------------------------------------------------------------------------

def _range_run(monkeypatch, routes, current_routes=(), check=True):
    monkeypatch.setattr(vg, 'read_state', lambda ipr, pf, name: {'pf': PF, 'link': link(routes=list(current_routes))})
    monkeypatch.setattr(vg, 'read_sysctls', lambda fs, paths, name, exists: {p: 1 for p in paths})
    return vg.run(HOST, params(routes=routes), object(), check, fs=Sysfs('/nonexistent', '/nonexistent'))


def test_a_range_stands_for_its_routes_in_the_desired_state_and_the_unit():
    desired = vg.validate_params(HOST, params(routes=[dict(route('10.100.0.0/24', '10.100.0.254', True), count=3)]))
    assert [(r['dst'], r['via']) for r in desired['routes']] == [
        ('10.100.0.0/24', '10.100.0.254'), ('10.100.1.0/24', '10.100.1.254'), ('10.100.2.0/24', '10.100.2.254')]
    assert 'route replace 10.100.2.0/24 via 10.100.2.254 dev enp157s0np0.100 proto static metric 0 onlink' in vu.render_routes(desired)


def test_a_range_changes_only_the_routes_that_differ_and_reports_them_as_ranges(monkeypatch):
    have = [{'dst': '10.100.%d.0/24' % k, 'via': '10.100.%d.254' % k, 'onlink': True, 'metric': 0} for k in range(100) if k != 40]
    have.append({'dst': '10.100.7.0/24', 'via': '10.100.7.1', 'onlink': True, 'metric': 50})  # not in the plan: removed
    result = _range_run(monkeypatch, [dict(route('10.100.0.0/24', '10.100.0.254', True), count=100)], have)
    assert result['actions'] == ['route_del 10.100.7.0/24 via 10.100.7.1 metric 50 onlink',
                                 'route_replace 10.100.40.0/24 via 10.100.40.254 metric 0 onlink']
    assert result['route_changes']['added'] == [{'dst': '10.100.40.0/24', 'via': '10.100.40.254', 'onlink': True, 'metric': 0}]
    assert result['route_changes']['removed'] == [{'dst': '10.100.7.0/24', 'via': '10.100.7.1', 'onlink': True, 'metric': 50}]
    assert result['diff']['after']['routes'] == [{'dst': '10.100.0.0/24', 'via': '10.100.0.254', 'onlink': True, 'metric': 0, 'count': 100}]
    assert len(result['diff']['before']['routes']) == 3  # 0..39, 41..99 and the stray one


def test_a_first_apply_of_many_routes_describes_them_as_one_range(monkeypatch):
    result = _range_run(monkeypatch, [dict(route('10.16.0.0/24', '10.16.0.254', True), count=5000),
                                      dict(route('10.35.137.0/24', '10.35.137.254', True), count=4999)])
    assert [a for a in result['actions'] if a.startswith('route')] == [
        'route_replace 10.16.0.0/24 via 10.16.0.254 metric 0 onlink .. 10.35.135.0/24 via 10.35.135.254 (5000 routes)',
        'route_replace 10.35.137.0/24 via 10.35.137.254 metric 0 onlink .. 10.55.15.0/24 via 10.55.15.254 (4999 routes)']
    assert result['changed'] and len(result['route_changes']['added']) == 2


@pytest.mark.parametrize('routes,expected', [
    ([dict(route('10.255.0.4/30', '10.255.0.6', True), count=0)],
     'node1: routes[0].count=0: is less than 1. Fix: give count 1 or more, or leave it out for one route'),
    ([dict(route('255.255.255.0/24', '255.255.255.254', True), count=2)],
     'node1: routes[0].count=2: 2 routes from 255.255.255.0/24 run past the end of the IPv4 address space. '
     'Fix: lower count, or split the routes in ranges that stay inside the address space'),
    ([dict(route('10.255.0.5/30', '10.255.0.6', True), count=2)],
     'node1: routes[0].dst="10.255.0.5/30": has host bits set. Fix: use the network address 10.255.0.4/30'),
    ([dict(route('10.255.0.4/30', 'x', True), count=2)],
     'node1: routes[0].via="x": is not an IP address. Fix: give the next hop as a plain address, e.g. 10.255.0.6'),
    # The third route of the range collides with the plain route after it.
    ([dict(route('10.1.0.0/24', '10.1.0.1', True), count=3), route('10.1.2.0/24', '10.1.2.9', True)],
     'node1: routes[1].dst="10.1.2.0/24": a route to 10.1.2.0/24 with metric 0 is listed twice. Fix: list each destination once per metric'),
])
def test_a_bad_range_is_refused_by_the_route_the_user_wrote(routes, expected):
    with pytest.raises(GpufabricError) as exc:
        vg.validate_params(HOST, params(routes=routes))
    assert str(exc.value) == expected


def test_a_unit_dir_that_would_need_quoting_is_refused_before_anything_changes():
    calls = []
    with pytest.raises(GpufabricError) as exc:
        vg.run(HOST, params(persist=True, unit_dir='/etc/systemd/system $(id)'), NoNetlink(), False,
               fs=Sysfs('/nonexistent', '/nonexistent'), persist_fn=lambda *a: calls.append(a), file_fn=lambda *a: calls.append(a))
    assert str(exc.value).startswith('node1: unit_dir="/etc/systemd/system $(id)": is not an absolute path of letters')
    assert calls == []


def test_absent_removes_the_unit_before_its_routes_file(monkeypatch):
    monkeypatch.setattr(vg, 'read_state', lambda ipr, pf, name: {'pf': PF, 'link': None})
    order = []
    result = vg.run(HOST, params(state='absent', unit_dir='/u'), object(), True, fs=Sysfs('/nonexistent', '/nonexistent'),
                    persist_fn=lambda unit, content, state: order.append(('unit', unit, content)) or None,
                    file_fn=lambda path, content: order.append(('file', path, content)) or {'changed': True, 'before': 'x\n', 'after': None})
    assert order == [('unit', 'gpufabric-vlan-enp157s0np0.100.service', None), ('file', '/u/gpufabric-vlan-enp157s0np0.100.routes', None)]
    assert result['changed'] and result['diff']['after']['routes_file'] is None

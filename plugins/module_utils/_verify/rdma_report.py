# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Logic of the ``rdma_verify`` role: the ring plan (rounds of disjoint pairs), ping output
parsing, the results matrix and its three reports (table, JSON, JUnit XML); pod mode's test pods are
in _rdma_pods.py.  Pure Python, unit-tested; the filters in plugins/filter/rdma_report.py
are thin wrappers.  Private to this collection."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import ipaddress
import json
import re
from xml.etree import ElementTree as ET

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import format_error
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.rdma_isolation import verdict_lines
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.rdma_rounds import round_duties

KINDS = ('ping', 'bw', 'lat')


class ReportError(Exception):
    pass


def _err(host, field, value, problem, fix):
    return ReportError(format_error(host, field, value, problem, fix))


# ---------------------------------------------------------------------------------------------
# plan
# ---------------------------------------------------------------------------------------------

def ring_rounds(nodes, full_duplex=False):
    """Ring pairing: node i is the client of node i+1 (and so the server of node i-1).

    The ring's pairs are split into rounds in which every node is in at most one pair, so a
    round's pairs can all run at the same time without sharing a node: 2 rounds for an even
    number of nodes, 3 for an odd one, whatever the node count.  With ``full_duplex`` every pair is in
    one round: each node sends to the next and receives from the previous at once, as NCCL's ring does,
    so each node is the client of one pair and the server of another.  Returns a list of rounds, each a
    list of ``{'client', 'server'}``.
    """
    nodes = list(nodes)
    if len(set(nodes)) != len(nodes):
        dupes = sorted({n for n in nodes if nodes.count(n) > 1})
        raise _err('(play)', 'rdma_verify_hosts', dupes, 'a node is listed twice', 'list each node once')
    n = len(nodes)
    if n < 2:
        raise _err('(play)', 'rdma_verify_hosts', nodes, 'a ring needs at least two nodes',
                   'run the role against two or more hosts of roce_nodes')
    pairs = [{'client': nodes[i], 'server': nodes[(i + 1) % n]} for i in range(n)]
    if full_duplex:
        return [pairs]
    if n == 2:
        return [[pairs[0]], [pairs[1]]]
    even = [pairs[i] for i in range(0, n, 2)]
    odd = [pairs[i] for i in range(1, n, 2)]
    if n % 2 == 0:
        return [even, odd]
    # odd ring: the last pair (n-1 -> 0) shares node 0 with pair 0 -> 1
    return [even[:-1], odd, [even[-1]]]


def plan(nodes, addresses, base_port=18515, rails=None, full_duplex=False):
    """Per-node duties for every round: ``{node: [{'round', 'client_to', 'server_for', 'peer_address', 'client_port',
    'server_port', 'tcp_port'}]}`` (_verify.rdma_rounds.round_duties).

    ``addresses`` maps each node to the address its peers use to reach it (the VLAN gateway address
    in host mode).  Every pair of a round gets its own TCP port (base_port + pair index), so a test
    can run several servers on one machine (all-in-one labs) without clashing.

    ``rails`` (nodes with several RoCE NICs): ``{node: [{'name', 'address', 'netdev'}]}``, or the rails as
    the fabric plan gives them (``gateway`` is the address, ``<pf>.<vlan>`` the netdev). Then every rail
    is a ring of its own, rail *i* to rail *i*, never across rails: the rails' rounds follow each other,
    and every pair and duty carries its ``rail`` and the ``netdev`` the node tests it on.

    ``full_duplex``: a ring's pairs in one round (``ring_rounds``), one round per rail.
    """
    if rails:
        return _rail_plan(nodes, rails, base_port, full_duplex)
    return _one_plan(nodes, addresses, base_port, full_duplex)


def fabric_nodes(fabric, hosts):
    """What ``plan`` needs of ``hosts``, read from the fabric plan (``_fabric.plan``: the plan, its JSON text, or its bare
    table) instead of every node's variables: ``{'addresses': {node: gateway}, 'rails': {node: [rail]} or None}``, each
    rail ``{name, gateway, pf, vlan}`` as the plan's table holds it. The plan holds what the validation made
    of each node's variables, so the ring is the one those variables give, and a run reading a plan (an AWX slice) needs
    no other node's variables."""
    data = json.loads(fabric) if isinstance(fabric, str) else fabric
    table = data.get('fabric') if isinstance(data, dict) and 'fabric' in data else data
    nodes = (table or {}).get('nodes') if isinstance(table, dict) else None
    if not isinstance(nodes, dict):
        raise _err('(play)', 'rdma_verify_fabric', type(data).__name__, 'is not a fabric plan',
                   'pass the plan site.yml computed or roce_plan_out wrote, or leave rdma_verify_fabric unset')
    missing = [h for h in hosts if h not in nodes]
    if missing:
        raise _err(missing[0], 'rdma_verify_hosts', missing[:10], 'is not in the fabric plan (%d nodes; %d host(s) missing)'
                   % (len(nodes), len(missing)), 'verify only nodes of the plan (rdma_verify_hosts, --limit), or plan again from an inventory that '
                   'has these nodes (site.yml --tags never -e roce_plan_out=<file>)')
    addresses, rails = {}, {}
    for host in hosts:
        entry = nodes[host]
        # Host mode tests RoCE over each rail's VLAN gateway; an InfiniBand rail has none (its pods are tested in pod mode).
        eth = [r for r in entry['rails'] if r.get('link_type') != 'ib']
        if not eth:
            raise _err(host, 'rdma_verify_hosts', host, 'has no Ethernet rail: host mode tests RoCE between the nodes\' VLAN gateways, '
                       'and an InfiniBand rail has no gateway', 'use rdma_verify_mode: pod for InfiniBand nodes, or leave the node out of '
                       'rdma_verify_hosts')
        if eth[0]['rail']:
            rails[host] = [{'name': r['rail'], 'gateway': r['gateway'], 'pf': r['pf'], 'vlan': r['vlan_id']} for r in eth]
        else:
            addresses[host] = eth[0]['gateway']  # a one-rail node: the ring has no rails
    return {'addresses': addresses, 'rails': rails or None}


def _rail_plan(nodes, rails, base_port, full_duplex=False):
    names = [r.get('name') for r in rails.get(nodes[0]) or []] if nodes else []
    for node in nodes:
        mine = [r.get('name') for r in rails.get(node) or []]
        if mine != names:
            raise _err(node, 'roce_rails', mine, 'the node has rails %s, but %s has %s: a ring tests rail i to rail i on every node'
                       % (mine, nodes[0], names), 'give every node of the ring the same rails (roce_rails in group_vars)')
    out_rounds, duties = [], {n: [] for n in nodes}
    addresses, netdevs = {}, {}
    for i, name in enumerate(names):
        sub = _one_plan(nodes, {n: _rail_address(rails[n][i]) for n in nodes}, base_port, full_duplex)
        addresses[name] = sub['addresses']
        netdevs[name] = {n: _rail_netdev(rails[n][i]) for n in nodes}
        offset = len(out_rounds)
        out_rounds += [[dict(pair, rail=name) for pair in pairs] for pairs in sub['rounds']]
        for n in nodes:
            for duty in sub['duties'][n]:
                duties[n].append(dict(duty, round=duty['round'] + offset, rail=name, netdev=_rail_netdev(rails[n][i])))
    # Each node's address and netdev per rail: what the isolation rounds (_verify.rdma_isolation) pair nodes by.
    return {'rounds': out_rounds, 'duties': duties, 'rails': names, 'addresses': addresses, 'netdevs': netdevs}


def _rail_address(rail):
    return rail.get('address') or rail.get('gateway')


def _rail_netdev(rail):
    if rail.get('netdev'):
        return rail['netdev']
    if rail.get('pf') and rail.get('vlan'):
        return '%s.%s' % (rail['pf'], rail['vlan'])
    return rail.get('pf')


def _one_plan(nodes, addresses, base_port, full_duplex=False):
    rounds = ring_rounds(nodes, full_duplex)
    missing = [n for n in nodes if not addresses.get(n)]
    if missing:
        raise _err(missing[0], 'rdma_verify_address', addresses.get(missing[0]),
                   'no address to reach this node (%d node(s) without one: %s)' % (len(missing), ', '.join(missing)),
                   "set roce_pod_gateway (the VLAN gateway address) for every node, or rdma_verify_address_var "
                   "to the name of the variable holding each node's address")
    for node in nodes:
        try:
            ipaddress.ip_address(str(addresses[node]))
        except ValueError:
            raise _err(node, 'rdma_verify_address', addresses[node], 'is not an IP address',
                       'use the IPv4 address of the VLAN gateway of the node') from None
    duties = round_duties(nodes, rounds, lambda rail, node: str(addresses[node]), base_port)
    return {'rounds': rounds, 'duties': duties, 'addresses': {n: str(addresses[n]) for n in nodes}}


# ---------------------------------------------------------------------------------------------
# ping
# ---------------------------------------------------------------------------------------------

_PING_STATS = re.compile(r'(\d+) packets transmitted, (\d+) (?:packets )?received(?:, \+(\d+) errors)?, '
                         r'(?:\+\d+ duplicates, )?([\d.]+)% packet loss')
_PING_RTT = re.compile(r'(?:rtt|round-trip) min/avg/max(?:/(?:mdev|stddev))? = ([\d.]+)/([\d.]+)/([\d.]+)(?:/([\d.]+))? ms')


def parse_ping(stdout, rc=None):
    """iputils (and busybox) ping summary -> numbers. ``ok`` is True when every packet came back."""
    out = {'transmitted': None, 'received': None, 'loss_pct': None, 'rtt_min_ms': None, 'rtt_avg_ms': None,
           'rtt_max_ms': None, 'ok': False}
    m = _PING_STATS.search(stdout or '')
    if m:
        out.update(transmitted=int(m.group(1)), received=int(m.group(2)), loss_pct=float(m.group(4)))
    m = _PING_RTT.search(stdout or '')
    if m:
        out.update(rtt_min_ms=float(m.group(1)), rtt_avg_ms=float(m.group(2)), rtt_max_ms=float(m.group(3)))
    out['ok'] = bool(out['transmitted']) and out['received'] == out['transmitted'] and rc in (None, 0)
    return out


def round_records(host, duty, tests, result, remeasure=False):
    """The records (``build_matrix``) of one node's part of a round: its ``duty`` in the round (_verify.rdma_rounds), the
    round's ``tests``, and the result of its ``perftest_round`` task (``{ping, clients, servers}``; a failed or
    unreachable task fails every side of the node's pairs with its message). A pair measured again keeps its first
    ping."""
    lost = bool(result.get('failed') or result.get('unreachable')) or 'clients' not in result
    lost_msg = '%s: %s' % (host, result.get('msg') or 'the round did not run')
    rail = duty.get('rail')
    records = []
    if duty.get('client_to') is not None and not remeasure:
        ping = result.get('ping') or {}
        parsed = parse_ping(ping.get('stdout') or '', ping.get('rc'))
        msg = ''
        if lost:
            msg = lost_msg
        elif not parsed['ok']:
            stderr = (ping.get('stderr') or '').strip()
            msg = 'ping %s: rc=%s, %s of %s replies%s' % (
                duty['peer_address'], ping.get('rc'), '?' if parsed['received'] is None else parsed['received'],
                '?' if parsed['transmitted'] is None else parsed['transmitted'], ' (%s)' % stderr if stderr else '')
        records.append({'kind': 'ping', 'side': 'client', 'client': host, 'server': duty['client_to'], 'rail': rail,
                        'ok': not lost and parsed['ok'], 'ping': parsed, 'msg': msg})
    for index, test in enumerate(tests):
        kind = 'bw' if test.endswith('_bw') else 'lat'
        if duty.get('client_to') is not None:
            c = {} if lost else result['clients'][index]
            records.append({
                'kind': kind, 'side': 'client', 'test': test, 'client': host, 'server': duty['client_to'], 'rail': rail,
                'remeasured': bool(remeasure), 'ok': bool(c.get('ok')), 'msg': lost_msg if lost else c.get('msg') or '',
                'error_class': c.get('error_class'), 'metrics': c.get('metrics') or {}, 'gid_index': c.get('gid_index'),
                'gid_ipv4': c.get('gid_ipv4'), 'netdev': c.get('netdev'),
                'thresholds_skipped': c.get('thresholds_skipped') or [], 'port_counters': c.get('port_counters'),
                'counter_flags': c.get('counter_flags') or []})
        if duty.get('server_for') is not None:
            s = {} if lost else result['servers'][index]
            records.append({
                'kind': kind, 'side': 'server', 'test': test, 'client': duty['server_for'], 'server': host, 'rail': rail,
                'ok': bool(s.get('ok')), 'msg': lost_msg if lost else s.get('msg') or '',
                'error_class': s.get('error_class'), 'metrics': s.get('metrics') or {}, 'gid_index': s.get('gid_index')})
    return records


# ---------------------------------------------------------------------------------------------
# matrix
# ---------------------------------------------------------------------------------------------

def build_matrix(rounds, records, tests):
    """One row per ring pair, in plan order, from the records the hosts left.

    ``records``: ``[{'kind': 'ping'|'bw'|'lat', 'side': 'client'|'server', 'client', 'server', 'test',
    'ok', 'msg', 'metrics', 'gid_index', 'ping'}]``.  A check with no client record is a failure
    ("not run": the host failed or was unreachable).  Of two records of one check the later wins: a pair taken
    again (its records carry ``remeasured``) is judged on its second run.
    """
    kinds = ['ping'] + [kind_of(t) for t in tests]
    index = {}
    for rec in records or []:
        index[(rec.get('kind'), rec.get('side', 'client'), rec.get('client'), rec.get('server'), rec.get('rail'))] = rec
    rows = []
    for r, pairs in enumerate(rounds):
        for pair in pairs:
            c, s, rail = pair['client'], pair['server'], pair.get('rail')
            row = {'pair': ('%s: ' % rail if rail else '') + '%s -> %s' % (c, s), 'client': c, 'server': s, 'round': r,
                   'checks': {}, 'failures': []}
            if rail:
                row['rail'] = rail
            for kind in kinds:
                rec = index.get((kind, 'client', c, s, rail))
                srv = index.get((kind, 'server', c, s, rail))
                check = _check(kind, rec, srv)
                row['checks'][kind] = check
                if not check['ok']:
                    row['failures'].append('%s: %s' % (check['name'], check['message']))
            row['passed'] = not row['failures']
            # Taken once more because perftest measured nothing the first time (_verify.rdma_rounds.remeasure_plan): these figures
            # are the second run's.
            if any((index.get((kind, 'client', c, s, rail)) or {}).get('remeasured') for kind in kinds):
                row['remeasured'] = True
            # Passed, but the port counted loss or retransmission meanwhile (_common.rdma_counters): a lucky pass, flagged.
            row['flags'] = [f for check in row['checks'].values() for f in check.get('counter_flags') or []]
            rows.append(row)
    nodes = {}
    for r in rows:
        for node in (r['client'], r['server']):
            nodes.setdefault(node, {'passed': True, 'failed_pairs': []})
            if not r['passed']:
                nodes[node]['passed'] = False
                nodes[node]['failed_pairs'].append(r['pair'])
    out = {
        'pairs': rows,
        'passed': all(r['passed'] for r in rows),
        'total': len(rows),
        'failed': sum(1 for r in rows if not r['passed']),
        'flagged': sum(1 for r in rows if r['passed'] and r['flags']),
        'remeasured': sum(1 for r in rows if r.get('remeasured')),
        'checks': kinds,
        # per node: passed when every pair it took part in (as client or server) passed
        'nodes': nodes,
    }
    if any('rail' in r for r in rows):
        rails = {}
        for r in rows:
            entry = rails.setdefault(r.get('rail'), {'passed': True, 'total': 0, 'failed': 0})
            entry['total'] += 1
            if not r['passed']:
                entry['passed'] = False
                entry['failed'] += 1
        out['rails'] = rails
    return out


def kind_of(test):
    return 'bw' if test.endswith('_bw') else 'lat'


def _check(kind, rec, srv):
    name = {'ping': 'ping'}.get(kind) or (rec or srv or {}).get('test') or kind
    if rec is None:
        msg = 'not run (no result from the client host)'
        if srv and not srv.get('ok', True):
            msg += '; server: %s' % srv.get('msg')
        return {'name': name, 'ok': False, 'message': msg, 'metrics': {}}
    check = {'name': name, 'ok': bool(rec.get('ok')), 'metrics': rec.get('metrics') or rec.get('ping') or {},
             'gid_index': rec.get('gid_index'), 'gid_ipv4': rec.get('gid_ipv4'), 'netdev': rec.get('netdev'),
             'message': rec.get('msg') or ''}
    for key in ('thresholds_skipped', 'counter_flags'):
        if rec.get(key):
            check[key] = list(rec[key])
    # The perftest module's class of each side's failure (_verify.perftest_output.ERRORS): what a retry or an alert selects on,
    # rather than perftest's wording.
    if not check['ok'] and rec.get('error_class'):
        check['error_class'] = rec['error_class']
    if srv and not srv.get('ok', True) and srv.get('error_class'):
        check['server_error_class'] = srv['error_class']
    if rec.get('port_counters'):
        check['port_counters'] = rec['port_counters']
    if kind == 'ping':
        p = rec.get('ping') or {}
        if not check['ok'] and not check['message']:
            check['message'] = '%s of %s packets received' % (p.get('received'), p.get('transmitted'))
    elif not check['ok'] and srv and not srv.get('ok', True) and srv.get('msg'):
        check['message'] = '%s; server: %s' % (check['message'], srv['msg'])
    return check


# ---------------------------------------------------------------------------------------------
# reports
# ---------------------------------------------------------------------------------------------

def _fmt(value, spec):
    return '-' if value is None else spec % value


def table_rows(matrix):
    rails = bool(matrix.get('rails'))
    out = []
    for row in matrix['pairs']:
        ping = row['checks'].get('ping', {})
        bw = row['checks'].get('bw')
        lat = row['checks'].get('lat')
        pm = ping.get('metrics') or {}
        # With rails the rail has a column of its own and the pair is the nodes only.
        cells = ([row.get('rail') or '-', '%s -> %s' % (row['client'], row['server'])] if rails else [row['pair']])
        cells.append(('ok %s ms' % _fmt(pm.get('rtt_avg_ms'), '%.3f')) if ping.get('ok') else 'FAIL')
        if bw is not None:
            m = bw.get('metrics') or {}
            cells.append(_fmt(m.get('bw_average_gbps'), '%.2f') if m else 'FAIL')
            cells.append(_fmt(m.get('bw_pct_of_link'), '%.1f') if m else '-')
        if lat is not None:
            m = lat.get('metrics') or {}
            cells.append(_fmt(m.get('t_avg_us'), '%.2f') if m else 'FAIL')
        cells.append(('PASS*' if row['flags'] else 'PASS') if row['passed'] else 'FAIL')
        out.append(cells)
    return out


def render_table(matrix):
    """The at-a-glance table printed at the end of the play, then one line per failure."""
    header = (['rail'] if matrix.get('rails') else []) + ['pair', 'ping']
    if 'bw' in matrix['checks']:
        header += ['bw avg Gb/s', '% of link']
    if 'lat' in matrix['checks']:
        header += ['lat avg us']
    header.append('result')
    rows = table_rows(matrix)
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = ['  '.join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header] + rows]
    lines.insert(1, '  '.join('-' * w for w in widths))
    lines.append('%d of %d pairs passed' % (matrix['total'] - matrix['failed'], matrix['total']))
    for rail, entry in (matrix.get('rails') or {}).items():
        lines.append('rail %s: %d of %d pairs passed' % (rail, entry['total'] - entry['failed'], entry['total']))
    for row in matrix['pairs']:
        for failure in row['failures']:
            lines.append('FAIL %s: %s' % (row['pair'], failure))
        for flag in row.get('flags') or [] if row['passed'] else []:
            lines.append('PASS* %s: %s' % (row['pair'], flag))
        if row.get('remeasured'):
            lines.append('AGAIN %s: perftest measured nothing the first time (it could not calibrate its clock); '
                         'these are the figures of its second run' % row['pair'])
    lines += verdict_lines(matrix.get('isolation'))
    return '\n'.join(lines)


def render_junit(matrix, suite_name='rdma_verify'):
    """JUnit XML: one testsuite, one testcase per pair and check (classname = the pair)."""
    cases = []
    for row in matrix['pairs']:
        for kind in matrix['checks']:
            check = row['checks'][kind]
            cases.append((row, check))
    failures = sum(1 for case in cases if not case[1]['ok'])
    suite = ET.Element('testsuite', name=suite_name, tests=str(len(cases)), failures=str(failures), errors='0')
    for row, check in cases:
        case = ET.SubElement(suite, 'testcase', classname='%s.%s' % (suite_name, row['pair'].replace(' -> ', '_to_').replace(': ', '.')),
                             name='%s %s' % (check['name'], row['pair']))
        m = check.get('metrics') or {}
        summary = ', '.join('%s=%s' % (k, m[k]) for k in sorted(m) if isinstance(m[k], (int, float)) and not isinstance(m[k], bool))
        if summary:
            ET.SubElement(case, 'system-out').text = summary
        if not check['ok']:
            ET.SubElement(case, 'failure', message=check['message'] or 'failed', type=check['name']).text = check['message']
    suites = ET.Element('testsuites', name=suite_name, tests=str(len(cases)), failures=str(failures))
    suites.append(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding='unicode') + '\n'

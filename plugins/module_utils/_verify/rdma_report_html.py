# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rdma_verify matrix (_verify.rdma_report.build_matrix) as one self-contained HTML page (issues 19 and 42).

A 1,000-node x 8-rail result does not read as a table, so the page leads with the answer. The header: the verdict, the
run (``matrix['run']``, updated with ``run``: ``fabric``, ``time``, ``thresholds`` and ``versions``, any other key
shown as it is) and links to the JSON, JUnit and text reports beside the page (``<title>.json``, ``.xml``, ``.txt``,
as rdma_verify names them). Under it the likely culprits (``blame``): the nodes isolation found at fault and the
nodes whose every pair of a rail failed while their peers passed others, each with its victims (the nodes that
failed only with it), then the suspects (failing pairs with no culprit named) and the rails where every pair failed.

Then the summary (pairs passed, failed and flagged, per rail), the failing nodes (culprits, suspects, victims), a
heatmap with one row per node and one column per rail, headed by the rail's name (the node's worst % of link as
client on that rail; failed pairs marked, a victim's apart from a culprit's; where the link speed is unknown, Gb/s
relative to the rail's median; above ONLY_FAILED_ABOVE nodes it opens on the nodes that failed, were flagged or fell
below the bar), the isolation verdicts, the failed pairs, the flagged pairs (passed while the port counted loss), the
PCIe findings (``matrix['pcie']``, ``{node: [finding]}``) and the thresholds skipped.

Self-contained: inline CSS and JavaScript, no URL but the relative links to the reports beside it, and a
Content-Security-Policy that forbids fetching anything. Everything from the matrix is escaped (html.escape; in the
links also percent-encoded; in the embedded JSON ``<``, ``>`` and ``&`` are \\u-escaped). The heatmap is drawn by the
script from that JSON (a few hundred KB at 8,000 pairs); the rest is static HTML. Pure Python, stdlib only. Private to
this collection."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import datetime
import html
import json
import os
import re
import statistics
import sys
from urllib.parse import quote

MAX_LISTED = 1000  # failing nodes / failed pairs / flagged pairs listed; the rest are counted (all are in the JSON)
MAX_MESSAGE = 300
MAX_LEAD = 10  # culprits, and suspects, named at the top: a short box (the failing-nodes table has them all)
MAX_LEAD_MESSAGE = 180
MAX_VICTIMS = 6  # victims named beside a culprit
ONLY_FAILED_ABOVE = 100  # nodes: above this, the heatmap opens on the failed, flagged and below-the-bar nodes only
# heatmap cell flags (the script reads them); VICTIM: a failed pair whose other node is the likely culprit
FAILED, RELATIVE, FLAGGED, UNTESTED, VICTIM = 1, 2, 4, 8, 16
# a node's part in the failures; the script's role codes are 1 + the index (0: none)
ROLES = ('culprit', 'suspect', 'victim')

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{margin:0 0 .2em}h2{margin:1.6em 0 .5em;border-bottom:1px solid #ccc}
.verdict{display:inline-block;padding:.2em .7em;border-radius:4px;color:#fff;font-weight:bold}
.pass{background:#1a7f37}.fail{background:#b2182b}
header.head{display:flex;flex-wrap:wrap;gap:.3em 2.5em;align-items:flex-start}header.head p{margin:.2em 0}
dl.run{display:grid;grid-template-columns:max-content minmax(0,60em);gap:0 .8em;margin:.2em 0;font-size:13px}
dl.run dt{color:#666}dl.run dd{margin:0;overflow-wrap:anywhere}
.lead{border:2px solid #b2182b;border-radius:6px;padding:.2em 1em .5em;margin:.8em 0;background:#fff6f6}
.lead.ok{border-color:#1a7f37;background:#f4fbf6}.lead h2{margin:.3em 0;border:0}.lead p{margin:.3em 0}
.cards{display:flex;gap:1em;flex-wrap:wrap;margin:.8em 0}.card{border:1px solid #ccc;border-radius:6px;padding:.5em 1em}
.card b{display:block;font-size:1.6em}
table.t{border-collapse:collapse;margin:.4em 0}table.t th,table.t td{border:1px solid #ddd;padding:.2em .5em;
text-align:left;vertical-align:top}table.t th{background:#f3f3f3}td.num{text-align:right}
.msg{font-family:monospace;font-size:12px;white-space:pre-wrap;word-break:break-word}
.muted{color:#666}.bad{color:#b2182b;font-weight:bold}
.nm{display:inline-block;padding:0 .4em;margin:0 .2em .1em 0;border-radius:3px}
.culprit{background:#b2182b;color:#fff;font-weight:bold}.suspect{background:#fdb863;color:#222;font-weight:bold}
.victim{background:#f2f2f2;color:#555;font-weight:normal;box-shadow:inset 0 0 0 1px #aaa}
#heat{display:flex;flex-wrap:wrap;gap:10px 18px;align-items:flex-start}
table.hm{border-collapse:separate;border-spacing:1px;font-size:11px}
table.hm th{font-weight:normal;color:#555;padding:0 1px;vertical-align:bottom}table.hm td.n{padding:0 4px 0 2px;
max-width:11em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
table.hm th.r span{display:inline-block;writing-mode:vertical-rl;transform:rotate(180deg);max-height:7em;overflow:hidden;
text-overflow:ellipsis;white-space:nowrap}
.c{width:14px;height:12px;padding:0;background-color:#ddd}
.b0{background-color:#1a9850}.b1{background-color:#91cf60}.b2{background-color:#fee08b}.b3{background-color:#fc8d59}
.b4{background-color:#d73027}.ok{background-color:#1a9850}.nt{background-color:#e8e8e8}
.cf{background-color:#40004b;background-image:repeating-linear-gradient(45deg,#fff 0 2px,transparent 2px 5px)}
.cv{background-color:#e7b9c8;background-image:repeating-linear-gradient(45deg,#fff 0 2px,transparent 2px 5px)}
.rel{background-image:radial-gradient(circle,#fff 28%,transparent 33%)}.flag{box-shadow:inset 0 0 0 2px #7b3294}
.legend{display:flex;flex-wrap:wrap;gap:.3em 1.2em;margin:.5em 0;align-items:center}
.legend span.c{display:inline-block;vertical-align:middle;margin-right:.3em}
.controls{margin:.5em 0}.controls>*{margin-right:1em}
"""

_JS = r"""
(function () {
  var d = JSON.parse(document.getElementById('heat-data').textContent);
  var R = d.rails.length, P = d.pass, box = document.getElementById('heat');
  var sortSel = document.getElementById('heat-sort'), filt = document.getElementById('heat-filter');
  var only = document.getElementById('heat-only'), status = document.getElementById('heat-status');
  var T = Math.min(P + 5, 100);
  // role codes: 1 culprit, 2 suspect, 3 victim; worst first puts culprits, then suspects, then victims on top
  var ROLE = ['', 'culprit', 'suspect', 'victim'], RANK = [3, 0, 1, 2];
  var ROLETIP = ['', 'likely culprit', 'suspect: in a failing pair, no culprit named',
                 'not at fault: failed only with a likely culprit, or cleared by isolation'];
  function bucket(v) { return v >= T ? 0 : v >= P ? 1 : v >= P - 10 ? 2 : v >= P - 30 ? 3 : 4; }
  function cls(c) {
    var f = c[3], k = 'c ';
    if (f & 8) return k + 'nt';
    k += (f & 1) ? ((f & 16) ? 'cv' : 'cf') : c[0] === null ? 'ok' : 'b' + bucket(c[0]) + ((f & 2) ? ' rel' : '');
    return k + ((f & 4) ? ' flag' : '');
  }
  function tip(i, r, c) {
    var rail = d.rails[r], t = d.nodes[i] + (rail.name ? ' \u00b7 rail ' + rail.name : '') + ': ', f = c[3];
    if (f & 8) return t + 'not tested as client';
    var peer = c[2] >= 0 ? ' as client to ' + d.nodes[c[2]] : '';
    if (c[1] !== null) {
      t += (f & 2) ? '% of link n/a (link speed unknown); ' + c[1] + ' Gb/s = ' + c[0] + ' % of the rail median ' + rail.median + ' Gb/s'
                   : c[0] + ' % of link (' + c[1] + ' Gb/s)';
    } else { t += 'no bandwidth figure'; }
    t += peer;
    if (f & 1) t += '\nFAILED' + ((f & 16) ? ' with ' + d.nodes[c[2]] + ', the likely culprit' : '') + ': ' + (d.reasons[i * R + r] || '');
    if (f & 4) t += '\nflagged: the port counted loss or retransmission';
    return t;
  }
  var score = d.nodes.map(function (n, i) {
    var bad = 0, worst = 1e9, flagged = 0;
    for (var r = 0; r < R; r++) {
      var c = d.cells[i * R + r];
      if (c[3] & 1) bad++;
      if (c[3] & 4) flagged++;
      if (c[0] !== null && c[0] < worst) worst = c[0];
    }
    return [bad, worst, flagged];
  });
  function draw() {
    var idx = d.nodes.map(function (n, i) { return i; }), q = filt.value.toLowerCase();
    if (q) idx = idx.filter(function (i) { return d.nodes[i].toLowerCase().indexOf(q) >= 0; });
    if (only.checked) idx = idx.filter(function (i) { return d.role[i] || score[i][0] > 0 || score[i][2] > 0 || score[i][1] < P; });
    if (sortSel.value === 'worst') idx.sort(function (a, b) {
      return RANK[d.role[a]] - RANK[d.role[b]] || score[b][0] - score[a][0] || d.bad[b] - d.bad[a] || score[a][1] - score[b][1]
        || score[b][2] - score[a][2] || a - b;
    });
    box.textContent = '';
    var frag = document.createDocumentFragment(), cells = 0, table, body;
    idx.forEach(function (i, k) {
      if (k % d.block === 0) {
        table = document.createElement('table'); table.className = 'hm';
        var hr = table.createTHead().insertRow(), th = document.createElement('th');
        th.textContent = 'node'; hr.appendChild(th);
        d.rails.forEach(function (rail) {
          var h = document.createElement('th'), s = document.createElement('span');
          h.className = 'r'; h.title = 'rail ' + (rail.name || 'all'); s.textContent = rail.name || 'all';
          h.appendChild(s); hr.appendChild(h);
        });
        body = table.createTBody(); frag.appendChild(table);
      }
      var tr = body.insertRow(), n = tr.insertCell(), role = d.role[i];
      n.className = 'n' + (d.bad[i] ? ' bad' : '') + (role ? ' ' + ROLE[role] : '');
      n.textContent = d.nodes[i]; n.title = d.nodes[i] + (role ? ': ' + ROLETIP[role] : '');
      for (var r = 0; r < R; r++) {
        var c = d.cells[i * R + r], td = tr.insertCell();
        td.className = cls(c); td.title = tip(i, r, c); cells++;
      }
    });
    box.appendChild(frag);
    document.body.setAttribute('data-heatmap-cells', String(cells));
    document.body.setAttribute('data-heatmap-nodes', String(idx.length));
    status.textContent = idx.length + ' of ' + d.nodes.length + ' nodes shown' +
      (only.checked ? ' (only failed, flagged or below the bar: untick to see all)' : '') + ', ' + cells + ' cells';
  }
  sortSel.onchange = draw; filt.oninput = draw; only.onchange = draw;
  draw();
})();
"""


def _e(value):
    return html.escape('%s' % value, quote=True)


def _clip(text):
    text = '%s' % text
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 3] + '...'


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _metric(row, kind, name):
    return _number((((row.get('checks') or {}).get(kind) or {}).get('metrics') or {}).get(name))


def _moved(rows):
    """The problem and congestion counters that moved in ``rows``' checks (the client's port), summed."""
    out = {}
    for row in rows:
        for check in (row.get('checks') or {}).values():
            pc = check.get('port_counters') or {}
            for key in ('problems', 'congestion'):
                for name, value in (pc.get(key) or {}).items():
                    if _number(value):
                        out[name] = out.get(name, 0) + value
    return ', '.join('%s +%s' % (k, out[k]) for k in sorted(out)) or '-'


def _table(header, rows, cls='t'):
    head = ''.join('<th>%s</th>' % _e(h) for h in header)
    return '<table class="%s"><thead><tr>%s</tr></thead><tbody>%s</tbody></table>' % (cls, head, ''.join(rows))


def _td(value, cls=''):
    return '<td%s>%s</td>' % (' class="%s"' % cls if cls else '', _e(value))


def _stats(values, spec):
    if not values:
        return 'n/a'
    return ' / '.join(spec % v for v in (min(values), statistics.median(values), max(values)))


def _rail_of(row):
    return row.get('rail') or ''


def _peer(row, node):
    return row['server'] if row['client'] == node else row['client']


def _rails_text(subset, rails):
    if len(rails) > 1 and set(subset) == set(rails):
        return 'every rail (%d)' % len(rails)
    return ', '.join(r or 'all' for r in sorted(subset, key=rails.index))


def blame(matrix):
    """Who is to blame for the failed pairs of ``matrix``, rail by rail (``''`` without rails):

    - a *culprit* on a rail: the isolation rounds found it at fault there, or every pair it took part in on that rail
      failed while a peer of it passed another pair of that rail (unless isolation found it not at fault there);
    - in a failed pair with a culprit, the other node is a *victim*;
    - in a failed pair without one, a node isolation did not clear is a *suspect*; where isolation cleared both
      nodes, the path between them is to blame (``paths``).

    ``{'role': {node: 'culprit'|'suspect'|'victim'}, 'culprit_on': {(node, rail)}, 'culprits': [{node, rails, evidence,
    reason, victims, failed, pairs}], 'suspects': [{node, rails, peers, reason, failed, pairs}], 'paths': [(node,
    node, rail)], 'rails_down': [(rail, pairs)], 'isolated': bool}``, a node with all its pairs failed first."""
    rows = matrix.get('pairs') or []
    order = {n: i for i, n in enumerate(matrix.get('nodes') or {})}
    rails, mine, of_node, per_rail = [], {}, {}, {}
    for r in rows:
        rail = _rail_of(r)
        if rail not in per_rail:
            rails.append(rail)
            per_rail[rail] = [0, 0]
        per_rail[rail][0] += 1
        per_rail[rail][1] += 0 if r.get('passed') else 1
        for n in (r['client'], r['server']):
            mine.setdefault((n, rail), []).append(r)
            of_node.setdefault(n, []).append(r)
    passed_some = {key for key, rs in mine.items() if any(r.get('passed') for r in rs)}
    verdicts = {}
    for v in matrix.get('isolation') or []:
        key = (v.get('node'), v.get('rail') or '')
        if key not in verdicts or v.get('verdict') == 'at fault':
            verdicts[key] = v
    culprit_on = set()
    for key, rs in mine.items():
        verdict = (verdicts.get(key) or {}).get('verdict')
        every = not any(r.get('passed') for r in rs)
        if verdict == 'at fault' or (every and verdict != 'not at fault' and any((_peer(r, key[0]), key[1]) in passed_some for r in rs)):
            culprit_on.add(key)
    victims_of, peers_of, suspect_rails, cleared, paths = {}, {}, {}, set(), []
    for r in rows:
        if r.get('passed'):
            continue
        pair, rail = (r['client'], r['server']), _rail_of(r)
        guilty = [n for n in pair if (n, rail) in culprit_on]
        if guilty:
            for n in pair:
                if n not in guilty:
                    victims_of.setdefault(guilty[0], set()).add(n)
            continue
        ok = [n for n in pair if (verdicts.get((n, rail)) or {}).get('verdict') == 'not at fault']
        cleared.update(ok)
        if len(ok) == 2:
            paths.append(pair + (rail,))
        for n in pair:
            if n not in ok:
                peers_of.setdefault(n, set()).add(_peer(r, n))
                suspect_rails.setdefault(n, set()).add(rail)
    victims = {n for vs in victims_of.values() for n in vs} | cleared
    guilty_nodes = {}
    for n, rail in culprit_on:
        guilty_nodes.setdefault(n, []).append(rail)
    role = {n: 'victim' for n in victims}
    role.update((n, 'suspect') for n in peers_of)
    role.update((n, 'culprit') for n in guilty_nodes)

    def first_failure(n):
        failed = [r for r in of_node[n] if not r.get('passed')]
        for r in sorted(failed, key=lambda r: r['client'] != n):
            for f in r.get('failures') or []:
                return f
        return ''

    def rank(n):
        return order.get(n, len(order))

    culprits = []
    for n, on in guilty_nodes.items():
        failed = sum(1 for r in of_node[n] if not r.get('passed'))
        at_fault = [rail for rail in on if (verdicts.get((n, rail)) or {}).get('verdict') == 'at fault']
        every = [rail for rail in on if not any(r.get('passed') for r in mine[(n, rail)])]
        evidence = []
        if failed == len(of_node[n]):
            evidence.append('every pair failed (%d of %d)' % (failed, len(of_node[n])))
        elif every:
            evidence.append('every pair on %s failed' % _rails_text(every, rails))
        if at_fault:
            evidence.append('isolation: at fault%s' % (' on ' + _rails_text(at_fault, rails) if rails != [''] else ''))
        reason = verdicts[(n, sorted(at_fault, key=rails.index)[0])]['reason'] if at_fault else first_failure(n)
        culprits.append({'node': n, 'rails': sorted(on, key=rails.index), 'evidence': evidence, 'reason': reason or '',
                         'victims': sorted(victims_of.get(n, ()), key=rank), 'failed': failed, 'pairs': len(of_node[n])})
    culprits.sort(key=lambda c: (c['failed'] != c['pairs'], -len(c['rails']), -c['failed'], rank(c['node'])))
    suspects = []
    for n, peers in peers_of.items():
        if n in guilty_nodes:
            continue
        suspects.append({'node': n, 'rails': sorted(suspect_rails[n], key=rails.index), 'peers': sorted(peers, key=rank),
                         'reason': first_failure(n), 'failed': sum(1 for r in of_node[n] if not r.get('passed')),
                         'pairs': len(of_node[n])})
    suspects.sort(key=lambda c: (-c['failed'], rank(c['node'])))
    # too few pairs on a rail (two nodes) to tell the rail from one node
    down = [(rail, per_rail[rail][0]) for rail in rails if per_rail[rail][0] >= 3 and per_rail[rail][1] == per_rail[rail][0]]
    return {'role': role, 'culprit_on': culprit_on, 'culprits': culprits, 'suspects': suspects, 'paths': paths,
            'rails_down': down, 'isolated': bool(matrix.get('isolation'))}


def _summary(matrix, rows, rails):
    flagged = [r for r in rows if r.get('passed') and r.get('flags')]
    nodes = matrix.get('nodes') or {}
    failed_nodes = sum(1 for v in nodes.values() if not v.get('passed'))
    cards = [('pairs', len(rows)), ('passed', len(rows) - sum(1 for r in rows if not r.get('passed'))),
             ('failed', sum(1 for r in rows if not r.get('passed'))), ('flagged', len(flagged)),
             ('nodes', len(nodes)), ('failing nodes', failed_nodes)]
    out = ['<div class="cards" id="summary-cards">']
    out += ['<div class="card" data-key="%s"><b>%s</b>%s</div>' % (_e(k), _e(v), _e(k)) for k, v in cards]
    out.append('</div>')
    body = []
    for rail in rails:
        mine = [r for r in rows if _rail_of(r) == rail]
        pct = [v for v in (_metric(r, 'bw', 'bw_pct_of_link') for r in mine) if v is not None]
        gbps = [v for v in (_metric(r, 'bw', 'bw_average_gbps') for r in mine) if v is not None]
        lat = [v for v in (_metric(r, 'lat', 't_avg_us') for r in mine) if v is not None]
        failed = sum(1 for r in mine if not r.get('passed'))
        body.append('<tr data-rail="%s">%s%s%s%s%s%s%s%s</tr>' % (
            _e(rail or 'all'), _td(rail or 'all'), _td(len(mine), 'num'), _td(len(mine) - failed, 'num'),
            _td(failed, 'num' + (' bad' if failed else '')), _td(sum(1 for r in mine if r.get('passed') and r.get('flags')), 'num'),
            _td(_stats(pct, '%.1f')), _td(_stats(gbps, '%.2f')), _td(_stats(lat, '%.2f'))))
    out.append(_table(['rail', 'pairs', 'passed', 'failed', 'flagged', '% of link min / median / max',
                       'Gb/s min / median / max', 'latency us min / median / max'], body, 't rails'))
    return '<h2 id="summary">Summary</h2>' + ''.join(out)


def _heat_data(matrix, rows, rails, pass_pct, who):
    nodes = list(matrix.get('nodes') or {})
    index = {n: i for i, n in enumerate(nodes)}
    for r in rows:
        for n in (r['client'], r['server']):
            if n not in index:
                index[n] = len(nodes)
                nodes.append(n)
    rail_index = {rail: i for i, rail in enumerate(rails)}
    width = len(rails)
    cells = [[None, None, -1, UNTESTED] for dummy in range(len(nodes) * width)]
    reasons = {}
    medians = {}
    for rail in rails:
        gbps = [v for v in (_metric(r, 'bw', 'bw_average_gbps') for r in rows if _rail_of(r) == rail) if v is not None]
        medians[rail] = statistics.median(gbps) if gbps else None
    for r in rows:
        rail = _rail_of(r)
        pos = index[r['client']] * width + rail_index[rail]
        pct, gbps = _metric(r, 'bw', 'bw_pct_of_link'), _metric(r, 'bw', 'bw_average_gbps')
        flags = 0 if r.get('passed') else FAILED
        if flags and (r['server'], rail) in who['culprit_on'] and (r['client'], rail) not in who['culprit_on']:
            flags |= VICTIM
        if r.get('passed') and r.get('flags'):
            flags |= FLAGGED
        if pct is None and gbps is not None:
            flags |= RELATIVE
            pct = gbps / medians[rail] * 100.0 if medians[rail] else None
        new = [None if pct is None else round(pct, 1), None if gbps is None else round(gbps, 3), index[r['server']], flags]
        old = cells[pos]
        # the node's worst pair as client on this rail: a failure, else the lowest figure
        if (old[3] & UNTESTED or (flags & FAILED and not old[3] & FAILED)
                or ((flags & FAILED) == (old[3] & FAILED) and new[0] is not None and (old[0] is None or new[0] < old[0]))):
            cells[pos] = new
            if flags & FAILED:
                reasons[pos] = _clip('; '.join(r.get('failures') or []))
    bad = [0 if (matrix.get('nodes') or {}).get(n, {}).get('passed', True) else 1 for n in nodes]
    codes = {name: i + 1 for i, name in enumerate(ROLES)}
    role = [codes.get(who['role'].get(n), 0) for n in nodes]
    return {'rails': [{'name': rail, 'median': None if medians[rail] is None else round(medians[rail], 3)} for rail in rails],
            'nodes': nodes, 'cells': cells, 'reasons': reasons, 'bad': bad, 'role': role, 'pass': pass_pct, 'block': 50}


def _json_script(data):
    text = json.dumps(data, separators=(',', ':'), sort_keys=False)
    return text.replace('&', '\\u0026').replace('<', '\\u003c').replace('>', '\\u003e')


def _heatmap(data, pass_pct):
    p = pass_pct
    top = min(p + 5, 100)
    swatches = [('b0', '&ge; %g %% of link' % top), ('b1', '%g-%g %%' % (p, top)), ('b2', '%g-%g %%' % (p - 10, p)),
                ('b3', '%g-%g %%' % (p - 30, p - 10)), ('b4', '&lt; %g %%' % (p - 30)), ('ok', 'passed, no bandwidth test'),
                ('cf', 'failed pair'), ('cv', 'failed with a likely culprit: not this node\'s fault'),
                ('b0 flag', 'passed, flagged (port counters moved)'), ('nt', 'not tested'), ('b0 rel', '"n/a": link speed unknown')]
    legend = ''.join('<span><span class="c %s"></span>%s</span>' % (c, t) for c, t in swatches)
    legend += ''.join('<span><span class="nm %s">node</span>%s</span>' % (c, t) for c, t in (
        ('culprit', 'likely culprit'), ('suspect', 'suspect'), ('victim', 'not at fault (a victim)')))
    rel = any(c[3] & RELATIVE for c in data['cells'])
    only = len(data['nodes']) > ONLY_FAILED_ABOVE
    return ''.join([
        '<h2 id="heatmap">Heatmap: % of link per node and rail</h2>',
        '<p>One row per node, one column per rail: the node\'s <em>worst</em> pair as client on that rail. Hover a cell for '
        'its figures, peer and reason.%s</p>' % ('' if len(data['rails']) > 1 else ' One column: no rails.'),
        '<div class="legend" id="heat-legend">%s</div>' % legend,
        '<p id="heat-relative"%s>Cells marked "n/a" (white dot): the link speed is unknown (virtual NICs), so %% of link is '
        'n/a; they are coloured by Gb/s relative to the rail\'s median instead (100 %% = the median).%s</p>'
        % ('' if rel else ' class="muted"', '' if rel else ' None in this report.'),
        '<div class="controls"><label>order <select id="heat-sort"><option value="worst">worst first</option>'
        '<option value="plan">inventory order</option></select></label><label>node <input id="heat-filter" '
        'type="search" placeholder="filter"></label><label><input id="heat-only" type="checkbox"%s> only failed, flagged or '
        'below the bar</label><span id="heat-status" class="muted"></span></div>' % (' checked' if only else ''),
        '<noscript><p class="bad">The heatmap is drawn by the page\'s script: enable JavaScript.</p></noscript>',
        '<div id="heat"></div>',
        '<script type="application/json" id="heat-data">%s</script>' % _json_script(data),
    ])


def _isolation(matrix):
    verdicts = matrix.get('isolation') or []
    if not verdicts:
        return ''
    body = ['<tr class="%s">%s</tr>' % ('bad' if v.get('verdict') == 'at fault' else '',
                                        _td(v.get('verdict')) + _td(v.get('node')) + _td(v.get('rail') or '-') + _td(v.get('against'))
                                        + _td(_clip(v.get('reason')), 'msg'))
            for v in verdicts[:MAX_LISTED]]
    return ('<h2 id="isolation">Known-good isolation: the nodes at fault</h2>'
            + _table(['verdict', 'node', 'rail', 'tested against', 'reason'], body, 't isolation') + _more(len(verdicts), 'verdicts'))


def _more(total, what):
    left = total - MAX_LISTED
    return '<p class="muted">%d more %s are in the JSON report.</p>' % (left, what) if left > 0 else ''


def _pill(node, role):
    return '<span class="nm %s">%s</span>' % (role, _e(node)) if role else _e(node)


def _failing_nodes(matrix, rows, who):
    if all(r.get('passed') for r in rows):
        return '<h2 id="failing">Failing nodes</h2><p id="no-failures">Every pair passed.</p>'
    order = {n: i for i, n in enumerate(matrix.get('nodes') or {})}
    culprits_of = {}
    for c in who['culprits']:
        for v in c['victims']:
            culprits_of.setdefault(v, []).append(c['node'])
    culprit_rails = {c['node']: c['rails'] for c in who['culprits']}
    suspect_peers = {s['node']: s['peers'] for s in who['suspects']}
    rank = {name: i for i, name in enumerate(ROLES)}
    pairs_of = {}
    for r in rows:
        for n in (r['client'], r['server']):
            pairs_of.setdefault(n, []).append(r)
    nodes = []
    for n, mine in pairs_of.items():
        bad = [r for r in mine if not r.get('passed')]
        if bad:
            nodes.append((rank.get(who['role'].get(n), len(ROLES)), len(bad) != len(mine), -len(bad), order.get(n, len(order)), n, mine, bad))
    nodes.sort(key=lambda t: t[:4])
    rails = [_rail_of(r) for r in rows]
    rails = sorted(set(rails), key=rails.index)
    body = []
    for entry in nodes[:MAX_LISTED]:
        partly, n, mine, bad = entry[1], entry[4], entry[5], entry[6]
        role = who['role'].get(n)
        if role == 'culprit':
            verdict = 'likely culprit' + (' on %s' % _rails_text(culprit_rails[n], rails) if rails != [''] else '')
        elif role == 'suspect':
            verdict = 'suspect: failed with %s' % ', '.join('%s' % p for p in suspect_peers[n])
        elif culprits_of.get(n):
            verdict = 'not at fault: failed with %s, the likely culprit' % ', '.join('%s' % c for c in culprits_of[n])
        else:
            verdict = 'not at fault (isolation)'
        reasons = sorted({f for r in bad for f in (r.get('failures') or [])})
        text = '\n'.join(_clip(f) for f in reasons[:3]) + ('\n(+%d more)' % (len(reasons) - 3) if len(reasons) > 3 else '')
        body.append('<tr data-node="%s" data-role="%s" data-all-failed="%s"><td class="%s">%s</td>%s%s%s%s%s</tr>' % (
            _e(n), role or '', 'false' if partly else 'true', '' if partly else 'bad', _pill(n, role), _td(verdict),
            _td('%d of %d' % (len(bad), len(mine)) if partly else 'all %d' % len(mine), 'num'),
            _td(', '.join(sorted({_rail_of(r) or 'all' for r in bad}))), _td(text, 'msg'), _td(_moved(r for r in bad if r['client'] == n), 'msg')))
    return ''.join([
        '<h2 id="failing">Failing nodes</h2>',
        '<p>Likely culprits first, then suspects, then the nodes that failed only with a culprit (its victims). Counters: the '
        'problem and congestion counters that moved on the node\'s port while it was the client.</p>',
        _table(['node', 'verdict', 'failed pairs', 'rails', 'reason', 'counters that moved'], body, 't failing-nodes'),
        _more(len(nodes), 'failing nodes')])


def _failed_pairs(rows):
    failed = [r for r in rows if not r.get('passed')]
    if not failed:
        return ''
    return ''.join(['<h2 id="pairs">Failed pairs</h2>',
                    _table(['rail', 'pair', 'failures', 'counters that moved'], _pair_rows(failed, 'failures'), 't failed-pairs'),
                    _more(len(failed), 'failed pairs')])


def _lead(rows, who):
    """The answer first: the likely culprits with their victims, the suspects, the rails and paths to blame."""
    failed = sum(1 for r in rows if not r.get('passed'))
    head = '<section id="culprits" class="lead%s"><h2 id="culprits-title">Likely culprits</h2>'
    if not failed:
        flagged = sum(1 for r in rows if r.get('flags'))
        return (head % ' ok') + '<p id="no-culprits">None: every pair passed.%s</p></section>' % (
            ' %d pairs passed while their port counted loss or retransmission: see <a href="#flagged">flagged pairs</a>.' % flagged
            if flagged else '')
    rails = [_rail_of(r) for r in rows]
    rails = sorted(set(rails), key=rails.index)
    out = [head % '']
    for rail, total in who['rails_down']:
        out.append('<p class="bad" data-rail="%s">Rail %s: every pair failed (%d of %d): the rail itself (switch, VLAN, '
                   'cabling) or a setting every node shares on it, rather than one node.</p>' % (_e(rail), _e(rail), total, total))
    body = []

    def why(evidence, reason):
        return '<td class="why"><b>%s</b><div class="msg">%s</div></td>' % (
            _e('; '.join(evidence)), _e(reason if len(reason) <= MAX_LEAD_MESSAGE else reason[:MAX_LEAD_MESSAGE - 3] + '...'))

    seen = set()

    def pills(nodes, default):
        seen.update(who['role'].get(n, default) for n in nodes[:MAX_VICTIMS])
        shown = ''.join(_pill(n, who['role'].get(n, default)) for n in nodes[:MAX_VICTIMS])
        return (shown + (' +%d more' % (len(nodes) - MAX_VICTIMS) if len(nodes) > MAX_VICTIMS else '')) or '-'

    on = (lambda rs: _rails_text(rs, rails)) if rails != [''] else (lambda rs: '-')
    for c in who['culprits'][:MAX_LEAD]:
        seen.add('culprit')
        body.append('<tr data-node="%s" data-role="culprit"><td>%s</td>%s%s<td class="with">%s</td></tr>' % (
            _e(c['node']), _pill(c['node'], 'culprit'), _td(on(c['rails'])), why(c['evidence'], c['reason']), pills(c['victims'], 'victim')))
    for s in who['suspects'][:MAX_LEAD]:
        seen.add('suspect')
        body.append('<tr data-node="%s" data-role="suspect"><td>%s</td>%s%s<td class="with">%s</td></tr>' % (
            _e(s['node']), _pill(s['node'], 'suspect'), _td(on(s['rails'])),
            why(['%d of %d pairs failed, no culprit named' % (s['failed'], s['pairs'])], s['reason']), pills(s['peers'], 'suspect')))
    if body:
        out.append('<p class="muted" id="culprits-key">%s</p>' % ' &middot; '.join(_pill('node', name) + ' ' + text for name, text in (
            ('culprit', 'at fault'), ('suspect', 'in a failing pair, no culprit named'),
            ('victim', 'failed only with a culprit: not at fault')) if name in seen))
        out.append(_table(['node', 'rails', 'why', 'failed with it'], body, 't lead-culprits'))
    for what, entries in (('likely culprits', who['culprits']), ('suspects', who['suspects'])):
        if len(entries) > MAX_LEAD:
            out.append('<p>%d more %s: see <a href="#failing">failing nodes</a>.</p>' % (len(entries) - MAX_LEAD, what))
    for a, b, rail in who['paths'][:MAX_LEAD]:
        out.append('<p class="path">%s and %s%s: both pass against known-good nodes, so the path between them (cable, switch '
                   'port) is at fault.</p>' % (_pill(a, 'victim'), _pill(b, 'victim'), ' (rail %s)' % _e(rail) if rail else ''))
    if who['suspects'] and not who['isolated']:
        out.append('<p class="muted">Which node of a suspect pair is at fault: known-good isolation (<code>rdma_verify_isolate'
                   '</code>, host mode) tests each against a node that passed.</p>')
    out.append('</section>')
    return ''.join(out)


def _value(value):
    if value is None:
        return 'off'
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    if isinstance(value, dict):
        return ', '.join('%s %s' % (k, _value(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ', '.join(_value(v) for v in value)
    return '%s' % value


def _collection_version():
    # This file is <collection>/plugins/module_utils/_verify/: the installed collection's MANIFEST.json, or a checkout's galaxy.yml
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir))
    try:
        with open(os.path.join(root, 'MANIFEST.json')) as f:
            return json.load(f)['collection_info']['version']
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        with open(os.path.join(root, 'galaxy.yml')) as f:
            found = re.search(r'^version:\s*["\']?([^"\'\s#]+)', f.read(), re.M)
    except OSError:
        return None
    return found.group(1) if found else None


def _ansible_version():
    # The running ansible-core's, when the filter renders the page; looked up, not imported (module_utils import no
    # controller code).
    return getattr(sys.modules.get('ansible.release'), '__version__', None)


def _head(matrix, run, title, *, pass_pct, given_pct, rows, nodes, rails):
    info = dict(matrix['run']) if isinstance(matrix.get('run'), dict) else {}
    info.update(run or {})
    items = []
    if info.get('fabric') not in (None, ''):
        items.append(('fabric', _e(_value(info['fabric']))))
    now = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')
    items.append(('time', _e(_value(info['time'])) if info.get('time') else 'report written %s' % now))
    thresholds = info.get('thresholds')
    if isinstance(thresholds, dict) and thresholds:
        text = ' &middot; '.join('%s %s' % (_e(k), _e(_value(v))) for k, v in thresholds.items())
    else:
        text = 'min_bw_pct_of_link %g' % pass_pct if given_pct else 'none given (colour scale at %g %% of link)' % pass_pct
    skipped = sum(1 for r in rows for check in (r.get('checks') or {}).values() if check.get('thresholds_skipped'))
    if skipped:
        text += ' <span class="muted">(%d checks skipped a threshold: <a href="#skipped">why</a>)</span>' % skipped
    items.append(('thresholds', text))
    versions = {'gpufabric.roce': _collection_version(), 'ansible-core': _ansible_version()}
    versions.update(info['versions'] if isinstance(info.get('versions'), dict) else {})
    items.append(('versions', ' &middot; '.join('%s %s' % (_e(k), _e(_value(v))) for k, v in versions.items() if v is not None) or '-'))
    for key in sorted(k for k in info if k not in ('fabric', 'time', 'thresholds', 'versions')):
        items.append((_e(key), _e(_value(info[key]))))
    # The role writes <name>.json, .xml and .txt beside <name>.html: relative links, percent-encoded and with "./" so a
    # name is never read as a URL scheme.
    name = ('%s' % title).rsplit('/', 1)[-1]
    links = ' &middot; '.join('<a href="./%s" data-report="%s">%s</a> (%s)' % (_e(quote(name + ext, safe='')), kind, _e(name + ext), kind)
                              for ext, kind in (('.json', 'json'), ('.xml', 'junit'), ('.txt', 'text')))
    items.append(('reports', links + ' <span class="muted">beside this page</span>'))
    verdict = ('<span class="verdict pass" id="verdict">PASSED</span>' if matrix.get('passed')
               else '<span class="verdict fail" id="verdict">FAILED</span>')
    return ''.join([
        '<header class="head"><div><h1>%s: RDMA verification %s</h1>' % (_e(title), verdict),
        '<p class="muted">Checks: %s. %d pairs, %d nodes, %d rail(s).</p></div>' % (
            _e(', '.join(matrix.get('checks') or [])), len(rows), nodes, len(rails)),
        '<dl class="run" id="run">%s</dl></header>' % ''.join('<dt>%s</dt><dd data-key="%s">%s</dd>' % (k, k, v) for k, v in items),
    ])


def _flagged(rows):
    flagged = [r for r in rows if r.get('passed') and r.get('flags')]
    out = ['<h2 id="flagged">Flagged pairs: passed, but the port counted loss</h2>']
    if not flagged:
        return out[0] + '<p>None.</p>'
    return ''.join(out + [_table(['rail', 'pair', 'flags', 'counters that moved'], _pair_rows(flagged, 'flags'), 't flagged-pairs'),
                          _more(len(flagged), 'flagged pairs')])


def _pair_rows(rows, key):
    """One table row per pair (at most MAX_LISTED): rail, pair, its ``key`` messages, the counters that moved."""
    return ['<tr data-pair="%s">%s</tr>' % (_e(r.get('pair')), _td(_rail_of(r) or '-') + _td('%s -> %s' % (r['client'], r['server']))
                                            + _td('\n'.join(_clip(f) for f in r.get(key) or []), 'msg') + _td(_moved([r]), 'msg'))
            for r in rows[:MAX_LISTED]]


def _pcie(matrix):
    pcie = matrix.get('pcie')
    if pcie is None:
        return ''
    body = ['<tr data-node="%s">%s%s</tr>' % (_e(n), _td(n), _td('\n'.join(_clip(f) for f in pcie[n] or []), 'msg'))
            for n in sorted(pcie) if pcie[n]]
    return ('<h2 id="pcie">PCIe findings</h2>'
            + (_table(['node', 'findings'], body[:MAX_LISTED], 't pcie') + _more(len(body), 'nodes with findings') if body else '<p>None.</p>'))


def _skipped(rows):
    counts = {}
    for r in rows:
        for check in (r.get('checks') or {}).values():
            for msg in check.get('thresholds_skipped') or []:
                counts[msg] = counts.get(msg, 0) + 1
    if not counts:
        return ''
    body = ['<tr>%s%s</tr>' % (_td(counts[m], 'num'), _td(_clip(m), 'msg')) for m in sorted(counts, key=lambda m: (-counts[m], m))[:100]]
    return '<h2 id="skipped">Thresholds not checked</h2>' + _table(['checks', 'why'], body, 't skipped')


def render_html(matrix, title='rdma_verify', pass_pct=90, run=None):
    """The page for ``matrix``; ``pass_pct``: the % of link the colour scale puts its top bucket at (the pass bar);
    ``run``: what to say of the run in the header, over ``matrix['run']`` (``fabric``, ``time``, ``thresholds`` and
    ``versions``, a dict each, and any other key)."""
    given_pct = pass_pct
    pass_pct = float(pass_pct) if pass_pct else 90.0
    rows = matrix.get('pairs') or []
    rails = []
    for r in rows:
        if _rail_of(r) not in rails:
            rails.append(_rail_of(r))
    who = blame(matrix)
    data = _heat_data(matrix, rows, rails, pass_pct, who)
    sections = [('summary', 'summary', _summary(matrix, rows, rails)), ('failing', 'failing nodes', _failing_nodes(matrix, rows, who)),
                ('heatmap', 'heatmap', _heatmap(data, pass_pct)), ('isolation', 'isolation verdicts', _isolation(matrix)),
                ('pairs', 'failed pairs', _failed_pairs(rows)), ('flagged', 'flagged pairs', _flagged(rows)),
                ('pcie', 'PCIe findings', _pcie(matrix)), ('skipped', 'thresholds not checked', _skipped(rows))]
    return ''.join([
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        # Nothing may be fetched at view time: inline style and script only.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
        'script-src \'unsafe-inline\'">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<title>%s: RDMA verification</title><style>%s</style></head>' % (_e(title), _CSS),
        '<body data-passed="%s">' % ('true' if matrix.get('passed') else 'false'),
        _head(matrix, run, title, pass_pct=pass_pct, given_pct=given_pct, rows=rows, nodes=len(data['nodes']), rails=rails),
        _lead(rows, who),
        '<nav>%s</nav>' % ' &middot; '.join('<a href="#%s">%s</a>' % (k, label) for k, label, text in sections if text),
    ] + [section[2] for section in sections] + ['<script>%s</script></body></html>\n' % _JS])

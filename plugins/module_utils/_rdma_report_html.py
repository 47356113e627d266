# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rdma_verify matrix (_rdma_report.build_matrix) as one self-contained HTML page (issue 19).

A 1,000-node x 8-rail result does not read as a table. The page has: the summary (pairs passed, failed and
flagged, per rail), the isolation verdicts, a heatmap with one row per node and one cell per rail (the node's worst
% of link as client on that rail; failed pairs marked; where the link speed is unknown, Gb/s relative to the
rail's median), the failing nodes (those whose every pair failed first) and pairs with their reasons and the
counters that moved, the flagged pairs (passed while the port counted loss), the PCIe findings (``matrix['pcie']``,
``{node: [finding]}``) and the thresholds skipped.

Self-contained: inline CSS and JavaScript, no URL at all, and a Content-Security-Policy that forbids fetching
anything. Everything from the matrix is escaped (html.escape; in the embedded JSON ``<``, ``>`` and ``&`` are
\\u-escaped). The heatmap is drawn by the script from that JSON (a few hundred KB at 8,000 pairs); the rest is
static HTML. Pure Python, stdlib only. Private to this collection."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import html
import json
import statistics

MAX_LISTED = 1000  # failing nodes / failed pairs / flagged pairs listed; the rest are counted (all are in the JSON)
MAX_MESSAGE = 300
# heatmap cell flags (the script reads them)
FAILED, RELATIVE, FLAGGED, UNTESTED = 1, 2, 4, 8

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{margin:0 0 .3em}h2{margin:1.6em 0 .5em;border-bottom:1px solid #ccc}
.verdict{display:inline-block;padding:.2em .7em;border-radius:4px;color:#fff;font-weight:bold}
.pass{background:#1a7f37}.fail{background:#b2182b}
.cards{display:flex;gap:1em;flex-wrap:wrap;margin:.8em 0}.card{border:1px solid #ccc;border-radius:6px;padding:.5em 1em}
.card b{display:block;font-size:1.6em}
table.t{border-collapse:collapse;margin:.4em 0}table.t th,table.t td{border:1px solid #ddd;padding:.2em .5em;
text-align:left;vertical-align:top}table.t th{background:#f3f3f3}td.num{text-align:right}
.msg{font-family:monospace;font-size:12px;white-space:pre-wrap;word-break:break-word}
.muted{color:#666}.bad{color:#b2182b;font-weight:bold}
#heat{display:flex;flex-wrap:wrap;gap:10px 18px;align-items:flex-start}
table.hm{border-collapse:separate;border-spacing:1px;font-size:11px}
table.hm th{font-weight:normal;color:#555;padding:0 1px}table.hm td.n{padding-right:4px;max-width:11em;overflow:hidden;
text-overflow:ellipsis;white-space:nowrap}
.c{width:14px;height:12px;padding:0;background-color:#ddd}
.b0{background-color:#1a9850}.b1{background-color:#91cf60}.b2{background-color:#fee08b}.b3{background-color:#fc8d59}
.b4{background-color:#d73027}.ok{background-color:#1a9850}.nt{background-color:#e8e8e8}
.cf{background-color:#40004b;background-image:repeating-linear-gradient(45deg,#fff 0 2px,transparent 2px 5px)}
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
  function bucket(v) { return v >= T ? 0 : v >= P ? 1 : v >= P - 10 ? 2 : v >= P - 30 ? 3 : 4; }
  function cls(c) {
    var f = c[3], k = 'c ';
    if (f & 8) return k + 'nt';
    k += (f & 1) ? 'cf' : c[0] === null ? 'ok' : 'b' + bucket(c[0]) + ((f & 2) ? ' rel' : '');
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
    if (f & 1) t += '\nFAILED: ' + (d.reasons[i * R + r] || '');
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
    if (only.checked) idx = idx.filter(function (i) { return score[i][0] > 0 || score[i][2] > 0 || score[i][1] < P; });
    if (sortSel.value === 'worst') idx.sort(function (a, b) {
      return score[b][0] - score[a][0] || d.bad[b] - d.bad[a] || score[a][1] - score[b][1] || score[b][2] - score[a][2] || a - b;
    });
    box.textContent = '';
    var frag = document.createDocumentFragment(), cells = 0, table, body;
    idx.forEach(function (i, k) {
      if (k % d.block === 0) {
        table = document.createElement('table'); table.className = 'hm';
        var hr = table.createTHead().insertRow(), th = document.createElement('th');
        th.textContent = 'node'; hr.appendChild(th);
        d.rails.forEach(function (rail, r) {
          var h = document.createElement('th'); h.textContent = R > 1 ? String(r + 1) : 'all'; h.title = rail.name || 'all'; hr.appendChild(h);
        });
        body = table.createTBody(); frag.appendChild(table);
      }
      var tr = body.insertRow(), n = tr.insertCell();
      n.className = 'n' + (d.bad[i] ? ' bad' : ''); n.textContent = d.nodes[i]; n.title = d.nodes[i];
      for (var r = 0; r < R; r++) {
        var c = d.cells[i * R + r], td = tr.insertCell();
        td.className = cls(c); td.title = tip(i, r, c); cells++;
      }
    });
    box.appendChild(frag);
    document.body.setAttribute('data-heatmap-cells', String(cells));
    document.body.setAttribute('data-heatmap-nodes', String(idx.length));
    status.textContent = idx.length + ' of ' + d.nodes.length + ' nodes shown, ' + cells + ' cells';
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


def _heat_data(matrix, rows, rails, pass_pct):
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
    return {'rails': [{'name': rail, 'median': None if medians[rail] is None else round(medians[rail], 3)} for rail in rails],
            'nodes': nodes, 'cells': cells, 'reasons': reasons, 'bad': bad, 'pass': pass_pct, 'block': 50}


def _json_script(data):
    text = json.dumps(data, separators=(',', ':'), sort_keys=False)
    return text.replace('&', '\\u0026').replace('<', '\\u003c').replace('>', '\\u003e')


def _heatmap(data, pass_pct):
    p = pass_pct
    top = min(p + 5, 100)
    swatches = [('b0', '&ge; %g %% of link' % top), ('b1', '%g-%g %%' % (p, top)), ('b2', '%g-%g %%' % (p - 10, p)),
                ('b3', '%g-%g %%' % (p - 30, p - 10)), ('b4', '&lt; %g %%' % (p - 30)), ('ok', 'passed, no bandwidth test'),
                ('cf', 'failed pair'), ('b0 flag', 'passed, flagged (port counters moved)'), ('nt', 'not tested'),
                ('b0 rel', '"n/a": link speed unknown')]
    legend = ''.join('<span><span class="c %s"></span>%s</span>' % (c, t) for c, t in swatches)
    rel = any(c[3] & RELATIVE for c in data['cells'])
    key = ', '.join('%d = %s' % (i + 1, _e(r['name'])) for i, r in enumerate(data['rails'])) if len(data['rails']) > 1 else ''
    return ''.join([
        '<h2 id="heatmap">Heatmap: % of link per node and rail</h2>',
        '<p>One row per node, one cell per rail: the node\'s <em>worst</em> pair as client on that rail. Hover a cell for its '
        'figures, peer and reason. Rails: %s</p>' % (key or 'one (no rails)'),
        '<div class="legend" id="heat-legend">%s</div>' % legend,
        '<p id="heat-relative"%s>Cells marked "n/a" (white dot): the link speed is unknown (virtual NICs), so %% of link is '
        'n/a; they are coloured by Gb/s relative to the rail\'s median instead (100 %% = the median).%s</p>'
        % ('' if rel else ' class="muted"', '' if rel else ' None in this report.'),
        '<div class="controls"><label>order <select id="heat-sort"><option value="worst">worst first</option>'
        '<option value="plan">inventory order</option></select></label><label>node <input id="heat-filter" '
        'type="search" placeholder="filter"></label><label><input id="heat-only" type="checkbox"> only failed, flagged or below '
        'the bar</label><span id="heat-status" class="muted"></span></div>',
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


def _failing(matrix, rows):
    failed = [r for r in rows if not r.get('passed')]
    if not failed:
        return '<h2 id="failing">Failing nodes and pairs</h2><p id="no-failures">Every pair passed.</p>'
    order = {n: i for i, n in enumerate(matrix.get('nodes') or {})}
    pairs_of = {}
    for r in rows:
        for n in (r['client'], r['server']):
            pairs_of.setdefault(n, []).append(r)
    nodes = []
    for n, mine in pairs_of.items():
        bad = [r for r in mine if not r.get('passed')]
        if bad:
            nodes.append((len(bad) != len(mine), -len(bad), order.get(n, len(order)), n, mine, bad))
    nodes.sort(key=lambda t: t[:3])
    body = []
    for entry in nodes[:MAX_LISTED]:
        partly, n, mine, bad = entry[0], entry[3], entry[4], entry[5]
        reasons = sorted({f for r in bad for f in (r.get('failures') or [])})
        text = '\n'.join(_clip(f) for f in reasons[:3]) + ('\n(+%d more)' % (len(reasons) - 3) if len(reasons) > 3 else '')
        body.append('<tr data-node="%s" data-all-failed="%s">%s%s%s%s%s</tr>' % (
            _e(n), 'false' if partly else 'true', _td(n, '' if partly else 'bad'),
            _td('%d of %d' % (len(bad), len(mine)) if partly else 'all %d' % len(mine), 'num'),
            _td(', '.join(sorted({_rail_of(r) or 'all' for r in bad}))), _td(text, 'msg'), _td(_moved(r for r in bad if r['client'] == n), 'msg')))
    out = ['<h2 id="failing">Failing nodes and pairs</h2>',
           '<p>A node whose every pair failed is named first: it, not its peers, is the likely culprit. Counters: the '
           'problem and congestion counters that moved on the node\'s port while it was the client.</p>',
           _table(['node', 'failed pairs', 'rails', 'reason', 'counters that moved'], body, 't failing-nodes'),
           _more(len(nodes), 'failing nodes')]
    out += ['<h3>Failed pairs</h3>', _table(['rail', 'pair', 'failures', 'counters that moved'], _pair_rows(failed, 'failures'), 't failed-pairs'),
            _more(len(failed), 'failed pairs')]
    return ''.join(out)


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


def render_html(matrix, title='rdma_verify', pass_pct=90):
    """The page for ``matrix``; ``pass_pct``: the % of link the colour scale puts its top bucket at (the pass bar)."""
    pass_pct = float(pass_pct) if pass_pct else 90.0
    rows = matrix.get('pairs') or []
    rails = []
    for r in rows:
        if _rail_of(r) not in rails:
            rails.append(_rail_of(r))
    data = _heat_data(matrix, rows, rails, pass_pct)
    verdict = ('<span class="verdict pass" id="verdict">PASSED</span>' if matrix.get('passed')
               else '<span class="verdict fail" id="verdict">FAILED</span>')
    sections = [('summary', 'summary', _summary(matrix, rows, rails)), ('isolation', 'nodes at fault', _isolation(matrix)),
                ('heatmap', 'heatmap', _heatmap(data, pass_pct)), ('failing', 'failing nodes and pairs', _failing(matrix, rows)),
                ('flagged', 'flagged pairs', _flagged(rows)), ('pcie', 'PCIe findings', _pcie(matrix)),
                ('skipped', 'thresholds not checked', _skipped(rows))]
    return ''.join([
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        # Nothing may be fetched at view time: inline style and script only.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
        'script-src \'unsafe-inline\'">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<title>%s: RDMA verification</title><style>%s</style></head>' % (_e(title), _CSS),
        '<body data-passed="%s"><h1>%s: RDMA verification %s</h1>' % ('true' if matrix.get('passed') else 'false', _e(title), verdict),
        '<p class="muted">Checks: %s. %d pairs, %d nodes, %d rail(s). The JSON, JUnit and text reports beside this page '
        'have every figure.</p>' % (_e(', '.join(matrix.get('checks') or [])), len(rows), len(data['nodes']), len(rails)),
        '<nav>%s</nav>' % ' &middot; '.join('<a href="#%s">%s</a>' % (k, label) for k, label, text in sections if text),
    ] + [section[2] for section in sections] + ['<script>%s</script></body></html>\n' % _JS])

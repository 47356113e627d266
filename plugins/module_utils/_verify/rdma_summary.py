# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rdma_verify summary that AWX keeps (set_stats): under AWX the report files land in the runner's
artifacts directory, which AWX does not keep, so this is the only record of a job's verification there.

It says every pair's result and stays bounded at fleet scale (10,000 nodes x 8 rails = 80,000 pairs):
every failing pair with its failures (up to MAX_FAILURES; a pair not listed passed, and the count of
failing pairs left out is given), the failing nodes (same bound), and per rail the pair counts and the
min / average / max of the passing measurements. A passing pair's own figures are only in the files.
Private to this collection."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

MAX_FAILURES = 1000
MAX_MESSAGE = 300
# (summary key, check kind, metric)
_FIGURES = (
    ('ping_rtt_ms', 'ping', 'rtt_avg_ms'),
    ('bw_gbps', 'bw', 'bw_average_gbps'),
    ('bw_pct_of_link', 'bw', 'bw_pct_of_link'),
    ('lat_us', 'lat', 't_avg_us'),
)


def _stats(values):
    if not values:
        return None
    return {'min': round(min(values), 3), 'avg': round(sum(values) / len(values), 3), 'max': round(max(values), 3), 'pairs': len(values)}


def _clip(text):
    text = '%s' % text
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 3] + '...'


def summary(matrix, max_failures=MAX_FAILURES):
    """The bounded summary of ``matrix`` (build_matrix's result) for set_stats."""
    rows = matrix.get('pairs') or []
    failing = [r for r in rows if not r.get('passed')]
    failures = []
    for r in failing[:max_failures]:
        entry = {'pair': r['pair'], 'client': r['client'], 'server': r['server'], 'round': r.get('round'),
                 'failures': [_clip(f) for f in r.get('failures') or []]}
        if r.get('rail'):
            entry['rail'] = r['rail']
        failures.append(entry)
    nodes = sorted({n for r in failing for n in (r['client'], r['server'])})
    rails, figures = {}, {}
    for r in rows:
        name = r.get('rail') or 'all'
        entry = rails.setdefault(name, {'pairs': 0, 'failed': 0, 'passed': True})
        entry['pairs'] += 1
        if not r.get('passed'):
            entry['failed'] += 1
            entry['passed'] = False
            continue
        for key, kind, metric in _FIGURES:
            value = ((r.get('checks') or {}).get(kind) or {}).get('metrics', {}).get(metric)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                figures.setdefault((name, key), []).append(float(value))
    for (name, key), values in figures.items():
        rails[name][key] = _stats(values)
    return {
        'passed': bool(matrix.get('passed')),
        'pairs': matrix.get('total', len(rows)),
        'failed_pairs': matrix.get('failed', len(failing)),
        'checks': list(matrix.get('checks') or []),
        'rails': rails,
        'failures': failures,
        'failures_omitted': max(0, len(failing) - max_failures),
        'failed_nodes': nodes[:max_failures],
        'failed_nodes_omitted': max(0, len(nodes) - max_failures),
        # Known-good isolation's verdicts (_verify.rdma_isolation): the nodes at fault, each with its rail.
        'at_fault': [{'node': v['node'], 'rail': v['rail'], 'reason': _clip(v['reason'])}
                     for v in matrix.get('isolation') or [] if v['verdict'] == 'at fault'][:max_failures],
        'flagged_pairs': matrix.get('flagged', 0),
        # Pairs perftest measured nothing for at first (clock calibration), judged on their second run.
        'remeasured_pairs': matrix.get('remeasured', 0),
    }

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Known-good isolation: after the ring, name the node (and rail) at fault instead of the pair (issue 19).

A failing ring pair has two suspects. Each node of a failing pair is tested again, on the same rail, against a node
that passed every pair of that rail (a known-good node): if it fails there too, it is at fault; if it passes, the
fault is its failed partner's or between them. Known-good nodes are shared round-robin, so the extra rounds are one per
batch of suspects (one round while there are no more suspects than known-good nodes), whatever the fleet's size.

Where no node of the rail passed (a two-node lab, or a rail down everywhere), a suspect is tested against itself over
its own address: a node that cannot even reach itself (its address, GID or RDMA device broken) is at fault; one that
can is reported as inconclusive, with what that rules out.

The extra rounds have the ring's shape (``_verify.rdma_rounds.pack``: rounds, and per node a duty for every round), so the
same tasks run them; the verdicts come from their matrix (``_verify.rdma_report.build_matrix``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible_collections.gpufabric.roce.plugins.module_utils._verify.rdma_rounds import pack


def _suspects_and_good(matrix, nodes):
    """Per rail (None without rails): the nodes of failing pairs, and the nodes all of whose pairs passed."""
    by_rail = {}
    for row in matrix['pairs']:
        entry = by_rail.setdefault(row.get('rail'), {'suspects': set(), 'seen': set()})
        entry['seen'].update((row['client'], row['server']))
        if not row['passed']:
            entry['suspects'].update((row['client'], row['server']))
    order = {n: i for i, n in enumerate(nodes)}
    out = {}
    for rail, entry in by_rail.items():
        if entry['suspects']:
            out[rail] = {'suspects': sorted(entry['suspects'], key=order.get),
                         'good': sorted(entry['seen'] - entry['suspects'], key=order.get)}
    return out


def isolation_plan(plan, matrix, base_port=18515):
    """The isolation rounds for the ring ``plan`` whose results are ``matrix``: ``{rounds, duties, tests}``, where
    ``tests`` lists each isolation pair with its rail and kind (``known-good`` or ``self``). Empty rounds when the
    ring passed."""
    nodes = list(plan['duties'])
    pairs = []
    for rail, entry in sorted(_suspects_and_good(matrix, nodes).items(), key=lambda kv: (kv[0] is not None, kv[0] or '')):
        good = entry['good']
        for i, suspect in enumerate(entry['suspects']):
            partner = good[i % len(good)] if good else suspect
            pairs.append({'client': suspect, 'server': partner, 'rail': rail, 'kind': 'known-good' if good else 'self',
                          'batch': i // len(good) if good else 0})
    out = pack(plan, pairs, base_port)
    out['tests'] = pairs
    return out


def verdicts(iso_plan, iso_matrix):
    """One verdict per suspect: ``{node, rail, verdict, against, reason}``, verdict ``at fault``, ``not at fault``
    or ``inconclusive``; the nodes at fault first."""
    rows = {(r['client'], r['server'], r.get('rail')): r for r in iso_matrix['pairs']}
    out = []
    for test in iso_plan['tests']:
        row = rows.get((test['client'], test['server'], test['rail']))
        node, rail, passed = test['client'], test['rail'], bool(row and row['passed'])
        why = '; '.join(row['failures']) if row and row['failures'] else 'no result'
        if test['kind'] == 'known-good':
            verdict = 'not at fault' if passed else 'at fault'
            reason = ('passes against %s, which passed every pair%s: the fault is its failed partner\'s, or between them'
                      % (test['server'], ' of rail %s' % rail if rail else '') if passed else
                      'fails against %s, which passed every pair%s: %s' % (test['server'], ' of rail %s' % rail if rail else '', why))
        else:
            verdict = 'inconclusive' if passed else 'at fault'
            reason = ('reaches itself over its own address (its RDMA device, GID and address work), and no node%s passed to '
                      'test it against: the fault is on the wire (cable, switch port, VLAN) or at its peers'
                      % (' of rail %s' % rail if rail else '') if passed else
                      'fails even against itself over its own address (no node%s passed to test it against): %s'
                      % (' of rail %s' % rail if rail else '', why))
        out.append({'node': node, 'rail': rail, 'verdict': verdict, 'against': test['server'], 'reason': reason})
    rank = {'at fault': 0, 'inconclusive': 1, 'not at fault': 2}
    return sorted(out, key=lambda v: (rank[v['verdict']], v['rail'] or '', v['node']))


def verdict_lines(isolation):
    """The report's lines for the verdicts: ``AT FAULT node2 (rail0): ...``."""
    return ['%s %s%s: %s' % (v['verdict'].upper(), v['node'], ' (%s)' % v['rail'] if v['rail'] else '', v['reason'])
            for v in isolation or []]

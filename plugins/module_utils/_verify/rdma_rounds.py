# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Extra rounds over chosen pairs of a ring plan, in the ring's shape (rounds, and per node a duty for every round), so
the role's round tasks run them as they run the ring: known-good isolation's pairs (_verify.rdma_isolation), and the pairs
perftest could not measure, taken once more (``remeasure_plan``).

perftest times a test with the CPU's cycle counter, calibrated against the system clock when it writes its report. On a
busy node (a loaded VM, a node in training) that calibration can fail: perftest then reports nothing, though the test
ran. Such a pair was not judged; one more run, once, tells a fabric fault from a busy node. Any other failure is a
result and stands."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

# The perftest module's error classes (_verify.perftest_output) that mean "nothing was measured", not "the fabric failed".
UNMEASURED = ('clock_calibration',)


def _address(plan, rail, node):
    return (plan['addresses'][rail] if rail is not None else plan['addresses'])[node]


def round_duties(nodes, rounds, address_of, base_port=18515, netdev_of=None):
    """Per node, its duty in every round of ``rounds`` (lists of ``{client, server[, rail]}``): ``{node: [{'round',
    'client_to', 'server_for', 'peer_address', 'client_port', 'server_port', 'tcp_port'[, 'rail', 'netdev']}]}``. Every
    pair of a round gets its own TCP port (base_port + its index): ``client_port`` is the port of the pair the node is the
    client of, ``server_port`` of the pair it serves. A full-duplex ring (_verify.rdma_report.ring_rounds) has a node in two pairs
    of a round, one per side; ``tcp_port`` is the port of the node's pair when it is in one only (None when in two).
    ``address_of(rail, node)`` is the address a client reaches its server at, ``netdev_of(rail, node)`` the netdev a
    node tests a rail on. The ring's plan (_verify.rdma_report) and the extra rounds (``pack``) both build their duties here."""
    duties = {n: [] for n in nodes}
    for r, rnd in enumerate(rounds):
        for n in nodes:
            duties[n].append({'round': r, 'client_to': None, 'server_for': None, 'peer_address': None, 'client_port': None,
                              'server_port': None, 'tcp_port': None})
        for i, pair in enumerate(rnd):
            port = base_port + i
            c, s, rail = pair['client'], pair['server'], pair.get('rail')
            duties[c][r].update(client_to=s, peer_address=address_of(rail, s), client_port=port)
            duties[s][r].update(server_for=c, server_port=port)
            if rail is not None:
                for n in (c, s):
                    duties[n][r].update(rail=rail, netdev=netdev_of(rail, n))
        for n in nodes:
            duty = duties[n][r]
            if duty['client_port'] is None or duty['server_port'] is None:
                duty['tcp_port'] = duty['client_port'] if duty['server_port'] is None else duty['server_port']
    return duties


def pack(plan, pairs, base_port=18515):
    """``pairs`` (``{client, server, rail}``) of ``plan`` in rounds: ``{rounds, duties}``.

    A round holds every node in at most one pair (a node against itself is one pair): a node has one duty per round,
    with one rail and one port, and with rails a node can be in pairs of several rails (two pairs of one round would
    overwrite its duty, and its server would listen on the other rail's netdev and port)."""
    nodes = list(plan['duties'])
    rounds, busy = [], []
    for pair in pairs:
        members = {pair['client'], pair['server']}
        for rnd, used in zip(rounds, busy):
            if not members & used:
                rnd.append(pair)
                used.update(members)
                break
        else:
            rounds.append([pair])
            busy.append(set(members))
    duties = round_duties(nodes, rounds, lambda rail, node: _address(plan, rail, node), base_port,
                          lambda rail, node: plan['netdevs'][rail][node])
    return {'rounds': [[{k: p[k] for k in ('client', 'server', 'rail') if p.get(k) is not None} for p in rnd] for rnd in rounds],
            'duties': duties}


def unmeasured(row):
    """Whether a failed row of the matrix failed only because perftest measured nothing: its ping passed, and every
    failed perftest check carries an UNMEASURED class on its client's or its server's side."""
    if row.get('passed'):
        return False
    failed = [(kind, check) for kind, check in (row.get('checks') or {}).items() if not check.get('ok')]

    def nothing_measured(kind, check):
        return kind != 'ping' and (check.get('error_class') in UNMEASURED or check.get('server_error_class') in UNMEASURED)

    return bool(failed) and all(nothing_measured(kind, check) for kind, check in failed)


def remeasure_plan(plan, matrix, base_port=18515):
    """The rounds that take once more every pair of ``matrix`` (the results of ``plan``'s rounds) that perftest could
    not measure (``unmeasured``): ``{rounds, duties, pairs, tests}``, ``pairs`` naming them as the report does, and
    ``tests`` the perftest programs to run again, those that measured nothing for one of them (in the matrix's order;
    the ping and the tests that measured keep their first run's results). Empty rounds when there is none."""
    rows = [r for r in matrix.get('pairs') or [] if unmeasured(r)]
    out = pack(plan, [{'client': r['client'], 'server': r['server'], 'rail': r.get('rail')} for r in rows], base_port)
    out['pairs'] = [r['pair'] for r in rows]
    names = []
    for kind in matrix.get('checks') or []:
        for row in rows:
            check = row['checks'].get(kind) or {}
            if check and not check.get('ok') and check['name'] not in names:
                names.append(check['name'])
    out['tests'] = names
    return out

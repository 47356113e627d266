# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTML report leads with the answer (issue 42): who is to blame (``_verify.rdma_report_html.blame``), the likely-culprits
box under the verdict, the run in the header with links to the other reports, a culprit told apart from its victims,
and the heatmap's rail names and its "only failed, flagged or below the bar" default at fleet size. Where the box is
laid out in a browser: tests/integration/test_rdma_report_browser.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import copy
import importlib.util
import json
import os

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_report as rr
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_report_html as rh

_FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'rdma_verify')


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(_FIXTURES, name + '.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


fx = _load('report_fixtures')
rc = _load('report_culprits')


@pytest.fixture(scope='module')
def isolated():
    return rc.isolated_fleet_matrix()


@pytest.fixture(scope='module')
def fleet():
    return fx.fleet_matrix()


def lead_rows(doc):
    (box,) = [s for s in doc.iter('section') if s.get('id') == 'culprits']
    table = [t for t in box.iter('table') if 'lead-culprits' in (t.get('class') or '').split()]
    return box, (table[0].find('tbody').findall('tr') if table else [])


def heat_data(doc):
    (script,) = [s for s in doc.iter('script') if s.get('id') == 'heat-data']
    return json.loads(script.text)


def run_items(doc):
    return {dd.get('data-key'): fx.text_of(dd) for dd in doc.iter('dd')}


def ring(nodes, ok, rails=None):
    """build_matrix over a ring of ``nodes`` where a pair's ping passes when ``ok(client, server, rail)``."""
    if rails:
        plan = rr.plan(nodes, {}, rails={n: [{'name': r, 'address': '10.0.%d.%d' % (k, i + 1), 'netdev': 'eth%d' % k}
                                             for k, r in enumerate(rails)] for i, n in enumerate(nodes)})
        rounds = plan['rounds']
    else:
        rounds = rr.ring_rounds(nodes)
    recs = [{'kind': 'ping', 'client': p['client'], 'server': p['server'], 'rail': p.get('rail'),
             'ok': ok(p['client'], p['server'], p.get('rail')), 'msg': 'ping %s: 0 of 3 replies' % p['server'], 'ping': {}}
            for rnd in rounds for p in rnd]
    return rr.build_matrix(rounds, recs, [])


# ---------------------------------------------------------------- who is to blame

def test_blame_with_isolation_names_the_culprits_and_their_victims(isolated):
    who = rh.blame(isolated)
    assert [(c['node'], c['rails'], c['victims']) for c in who['culprits']] == [
        ('node0007', ['rail%d' % i for i in range(8)], ['node0006', 'node0008']), ('node0123', ['rail3'], ['node0124'])]
    assert who['culprits'][0]['evidence'] == ['every pair failed (16 of 16)', 'isolation: at fault on every rail (8)']
    assert who['culprits'][1]['evidence'] == ['isolation: at fault on rail3']
    assert who['culprits'][1]['reason'].startswith('fails against node0003, which passed every pair of rail rail3: ib_write_bw')
    assert who['role'] == {'node0007': 'culprit', 'node0123': 'culprit', 'node0006': 'victim', 'node0008': 'victim', 'node0124': 'victim'}
    assert who['suspects'] == [] and who['paths'] == [] and who['rails_down'] == []


def test_blame_without_isolation_a_node_failing_every_pair_is_the_culprit(fleet):
    who = rh.blame(fleet)
    assert [(c['node'], c['evidence']) for c in who['culprits']] == [('node0007', ['every pair failed (16 of 16)'])]
    # the slow node and its peer: one failed pair, nothing tells them apart
    assert [(s['node'], s['rails'], s['peers']) for s in who['suspects']] == [
        ('node0123', ['rail3'], ['node0124']), ('node0124', ['rail3'], ['node0123'])]
    assert who['role']['node0006'] == who['role']['node0008'] == 'victim'


def test_blame_a_node_failing_every_pair_of_one_rail():
    # n2's rail b is down: both its pairs of rail b fail, its peers pass their other pairs of rail b
    matrix = ring(['n1', 'n2', 'n3', 'n4'], lambda c, s, rail: not (rail == 'b' and 'n2' in (c, s)), rails=['a', 'b'])
    who = rh.blame(matrix)
    assert [(c['node'], c['rails'], c['evidence'], c['victims']) for c in who['culprits']] == [
        ('n2', ['b'], ['every pair on b failed'], ['n1', 'n3'])]
    assert who['suspects'] == []


def test_blame_two_nodes_cannot_tell_without_isolation_and_can_with_it():
    matrix = ring(['node1', 'node2'], lambda c, s, rail: False)
    who = rh.blame(matrix)
    assert who['culprits'] == [] and sorted(s['node'] for s in who['suspects']) == ['node1', 'node2']
    # isolation against themselves: node2 cannot reach even itself, node1 can
    matrix['isolation'] = [
        {'node': 'node2', 'rail': None, 'verdict': 'at fault', 'against': 'node2', 'reason': 'fails even against itself'},
        {'node': 'node1', 'rail': None, 'verdict': 'inconclusive', 'against': 'node1', 'reason': 'reaches itself'}]
    who = rh.blame(matrix)
    assert [(c['node'], c['victims']) for c in who['culprits']] == [('node2', ['node1'])]
    assert who['role'] == {'node2': 'culprit', 'node1': 'victim'} and who['suspects'] == []


def test_blame_a_rail_down_everywhere_and_a_path_between_two_good_nodes():
    nodes = ['n%d' % i for i in range(6)]
    who = rh.blame(ring(nodes, lambda c, s, rail: rail != 'b', rails=['a', 'b']))
    assert who['rails_down'] == [('b', 6)] and who['culprits'] == []
    matrix = ring(nodes, lambda c, s, rail: (c, s) != ('n2', 'n3'))
    matrix['isolation'] = [{'node': n, 'rail': None, 'verdict': 'not at fault', 'against': 'n0', 'reason': 'passes'} for n in ('n2', 'n3')]
    who = rh.blame(matrix)
    assert who['paths'] == [('n2', 'n3', '')] and who['culprits'] == who['suspects'] == []
    assert who['role'] == {'n2': 'victim', 'n3': 'victim'}


# ---------------------------------------------------------------- the page

def test_the_box_comes_first_and_names_the_culprits(isolated):
    text = rh.render_html(isolated)
    doc = fx.parse_html(text)
    body = doc.find('html/body')
    assert [c.tag for c in body][:3] == ['header', 'section', 'nav']
    box, rows = lead_rows(doc)
    assert box.get('class') == 'lead'
    assert [(tr.get('data-node'), tr.get('data-role')) for tr in rows] == [('node0007', 'culprit'), ('node0123', 'culprit')]
    assert fx.text_of(rows[0][1]) == 'every rail (8)' and fx.text_of(rows[1][1]) == 'rail3'
    assert fx.text_of(rows[0][2]).startswith('every pair failed (16 of 16); isolation: at fault on every rail (8)fails against node0001')
    assert [(s.get('class'), fx.text_of(s)) for s in rows[0][3]] == [('nm victim', 'node0006'), ('nm victim', 'node0008')]
    assert rows[0][0][0].get('class') == 'nm culprit'
    # the failing-nodes table says the same, with the culprits first
    (table,) = [t for t in doc.iter('table') if 'failing-nodes' in (t.get('class') or '').split()]
    assert [(tr.get('data-node'), fx.text_of(tr[1])) for tr in table.find('tbody')] == [
        ('node0007', 'likely culprit on every rail (8)'), ('node0123', 'likely culprit on rail3'),
        ('node0006', 'not at fault: failed with node0007, the likely culprit'),
        ('node0008', 'not at fault: failed with node0007, the likely culprit'),
        ('node0124', 'not at fault: failed with node0123, the likely culprit')]
    nav = [a.get('href') for a in doc.find('.//nav')]
    assert nav == ['#summary', '#failing', '#heatmap', '#isolation', '#pairs', '#flagged', '#pcie', '#skipped']


def test_the_box_names_suspects_and_says_how_to_tell_them_apart(fleet):
    doc = fx.parse_html(rh.render_html(fleet))
    box, rows = lead_rows(doc)
    assert [(tr.get('data-node'), tr.get('data-role')) for tr in rows] == [
        ('node0007', 'culprit'), ('node0123', 'suspect'), ('node0124', 'suspect')]
    assert fx.text_of(rows[1][2]).startswith('1 of 16 pairs failed, no culprit named')
    assert [(s.get('class'), fx.text_of(s)) for s in rows[1][3]] == [('nm suspect', 'node0124')]
    assert 'known-good isolation (rdma_verify_isolate, host mode)' in fx.text_of(box)


def test_the_box_when_every_pair_passed():
    doc = fx.parse_html(rh.render_html(fx.lab_matrix()))
    box, rows = lead_rows(doc)
    assert box.get('class') == 'lead ok' and rows == []
    assert fx.text_of(box) == ('Likely culpritsNone: every pair passed. 2 pairs passed while their port counted loss or '
                               'retransmission: see flagged pairs.')


def test_the_box_is_bounded(monkeypatch):
    # 30 nodes down among 90: every one a culprit
    nodes = ['n%02d' % i for i in range(90)]
    down = set(nodes[::3])
    matrix = ring(nodes, lambda c, s, rail: not {c, s} & down)
    monkeypatch.setattr(rh, 'MAX_VICTIMS', 1)
    doc = fx.parse_html(rh.render_html(matrix))
    box, rows = lead_rows(doc)
    assert len(rows) == rh.MAX_LEAD and all(tr.get('data-role') == 'culprit' for tr in rows)
    assert '20 more likely culprits: see failing nodes.' in fx.text_of(box)
    assert fx.text_of(rows[0][3]) == 'n01 +1 more'


def test_a_rail_down_and_a_path_are_said_in_the_box():
    nodes = ['n%d' % i for i in range(6)]
    doc = fx.parse_html(rh.render_html(ring(nodes, lambda c, s, rail: rail != 'b', rails=['a', 'b'])))
    box, dummy = lead_rows(doc)
    assert 'Rail b: every pair failed (6 of 6): the rail itself' in fx.text_of(box)
    matrix = ring(nodes, lambda c, s, rail: (c, s) != ('n2', 'n3'))
    matrix['isolation'] = [{'node': n, 'rail': None, 'verdict': 'not at fault', 'against': 'n0', 'reason': 'passes'} for n in ('n2', 'n3')]
    box, dummy = lead_rows(fx.parse_html(rh.render_html(matrix)))
    assert 'n2 and n3: both pass against known-good nodes, so the path between them' in fx.text_of(box)


def test_the_header_says_the_run_and_links_the_other_reports(isolated):
    doc = fx.parse_html(rh.render_html(isolated, 'prod-a-verify', 90))
    run = run_items(doc)
    assert list(run) == ['fabric', 'time', 'thresholds', 'versions', 'reports']
    assert run['fabric'] == 'prod-a' and run['time'] == '2026-11-29T07:30:00Z'
    assert run['thresholds'].startswith('min_bw_pct_of_link 90 \u00b7 min_bw_gbps off \u00b7 max_lat_us off \u00b7 link_speed_unknown skip')
    assert '(998 checks skipped a threshold: why)' in run['thresholds']
    assert run['versions'].startswith('gpufabric.roce 0.1.0 \u00b7 ansible-core 2.18.1 \u00b7 perftest 24.07.0')
    links = [a for a in doc.iter('a') if a.get('data-report')]
    assert [(a.get('data-report'), a.get('href'), fx.text_of(a)) for a in links] == [
        ('json', './prod-a-verify.json', 'prod-a-verify.json'), ('junit', './prod-a-verify.xml', 'prod-a-verify.xml'),
        ('text', './prod-a-verify.txt', 'prod-a-verify.txt')]


def test_the_header_without_run_metadata_and_with_the_run_argument():
    matrix = fx.lab_matrix()
    run = run_items(fx.parse_html(rh.render_html(matrix)))
    assert 'fabric' not in run and run['time'].startswith('report written ') and run['time'].endswith(' UTC')
    assert run['thresholds'].startswith('min_bw_pct_of_link 90 (2 checks skipped a threshold')
    with open(os.path.join(os.path.dirname(rh.__file__), '..', '..', '..', 'galaxy.yml')) as f:
        galaxy = f.read()
    assert 'gpufabric.roce %s' % galaxy.split('\nversion:', 1)[1].split()[0] in run['versions']
    assert 'none given (colour scale at 90 % of link)' in run_items(fx.parse_html(rh.render_html(matrix, 'x', None)))['thresholds']
    # ``run`` over the matrix's, other keys shown as they are
    matrix = dict(matrix, run={'fabric': 'a', 'time': 't0'})
    run = run_items(fx.parse_html(rh.render_html(matrix, run={'fabric': 'b', 'mode': 'host', 'versions': {'perftest': None}})))
    assert (run['fabric'], run['time'], run['mode']) == ('b', 't0', 'host')


def test_run_metadata_and_the_links_are_escaped():
    matrix = copy.deepcopy(fx.lab_matrix())
    evil = '<script>alert(1)</script>'
    matrix['run'] = {'fabric': evil, 'time': '"><img src=x>', 'thresholds': {evil: evil}, 'versions': {evil: '<b>1</b>'}, evil: evil}
    text = rh.render_html(matrix, title='javascript:alert(1)/../x y&<z>')
    assert '<script>alert' not in text and '<img' not in text and '<b>1' not in text
    assert text.count('<script') == 2
    doc = fx.parse_html(text)
    run = run_items(doc)
    assert run['fabric'] == evil and run['time'] == '"><img src=x>' and run[evil] == evil
    # the file name only (the role writes the reports beside the page), percent-encoded, never read as a scheme
    hrefs = [a.get('href') for a in doc.iter('a') if a.get('data-report')]
    assert hrefs == ['./x%20y%26%3Cz%3E.json', './x%20y%26%3Cz%3E.xml', './x%20y%26%3Cz%3E.txt']


def test_node_names_in_the_box_are_escaped():
    evil = '<img src=x onerror=alert(1)>'
    nodes = [evil, 'n2', 'n3', 'n4']
    text = rh.render_html(ring(nodes, lambda c, s, rail: evil not in (c, s)))
    assert '<img' not in text
    box, rows = lead_rows(fx.parse_html(text))
    assert rows[0].get('data-node') == evil and fx.text_of(rows[0][0]) == evil


def test_heatmap_roles_victim_cells_and_the_default_filter(isolated):
    data = heat_data(fx.parse_html(rh.render_html(isolated)))
    roles = dict(zip(data['nodes'], data['role']))
    assert {n: r for n, r in roles.items() if r} == {'node0006': 3, 'node0007': 1, 'node0008': 3, 'node0123': 1, 'node0124': 3}
    i = data['nodes'].index('node0006')
    assert [c[3] for c in data['cells'][i * 8:i * 8 + 8]] == [rh.FAILED | rh.VICTIM] * 8  # as client to the culprit
    i = data['nodes'].index('node0123')
    assert data['cells'][i * 8 + 3][3] == rh.FAILED  # the culprit's own failure
    assert [r['name'] for r in data['rails']] == ['rail%d' % i for i in range(8)]


@pytest.mark.parametrize('count,checked', [(100, False), (101, True)])
def test_only_failed_is_on_by_default_above_100_nodes(count, checked):
    doc = fx.parse_html(rh.render_html(ring(['n%03d' % i for i in range(count)], lambda c, s, rail: True)))
    (box,) = [i for i in doc.iter('input') if i.get('id') == 'heat-only']
    assert (box.get('checked') is not None) is checked


def test_the_fleet_page_stays_light(isolated):
    assert len(rh.render_html(isolated).encode()) < 300_000

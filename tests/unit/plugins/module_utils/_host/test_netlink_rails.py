# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every rail of a node in one module run (module_utils/_host/netlink.run_rails), with sriov_vf's own run() on two PFs of
a sysfs fixture and a fake netlink session. The kernel side is proven in the lab (molecule lab, multirail.yml)."""

import os

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import impact as im
from ansible_collections.gpufabric.roce.plugins.module_utils._host import sriov_vf as sv
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, Sysfs
from ansible_collections.gpufabric.roce.plugins.module_utils._host.netlink import RailsError, run_rails

from test_sriov_vf import FakeIPRoute, IgbIPRoute

HOST = 'node1'
PFS = {'eni10np1': 3, 'eni11np1': 4}


class TwoPfs:
    """Two PFs, each a fake netlink session of test_sriov_vf, by ifindex."""

    def __init__(self, kind=FakeIPRoute, vfs=8):
        self.pfs = {index: kind({i: dict(sv.NEW_VF) for i in range(vfs)}) for index in PFS.values()}

    def link_lookup(self, ifname):
        return [PFS[ifname]] if ifname in PFS else []

    def link(self, cmd, **kw):
        index = kw.pop('index')
        return self.pfs[index].link(cmd, index=3, **kw)

    @property
    def sets(self):
        return [s for p in self.pfs.values() for s in p.sets]


@pytest.fixture
def tree(tmp_path):
    for n, (pf, index) in enumerate(sorted(PFS.items())):
        dev = tmp_path / 'devices' / ('netdevsim%d' % n)
        dev.mkdir(parents=True)
        (dev / 'sriov_numvfs').write_text('8\n')
        (dev / 'sriov_totalvfs').write_text('16\n')
        net = tmp_path / 'class' / 'net' / pf
        net.mkdir(parents=True)
        (net / 'ifindex').write_text('%d\n' % index)
        os.symlink('../../../devices/netdevsim%d' % n, str(net / 'device'))
    return tmp_path


def numvfs(tree, n):
    return (tree / 'devices' / ('netdevsim%d' % n) / 'sriov_numvfs').read_text().strip()


def params(*rails, **top):
    return dict({'allow_vf_reset': False, 'persist': False, 'state': 'present', 'pf': None, 'num_vfs': None, 'vfs': None,
                 'rails': list(rails)}, **top)


def rail(name, pf, num_vfs=8, vfs=None):
    return {'rail': name, 'pf': pf, 'num_vfs': num_vfs, 'vfs': vfs}


def runner(tree, ipr):
    return lambda p, check: sv.run(HOST, p, ipr, check, fs=Sysfs(str(tree)))


TRUSTED = [{'id': 0, 'trust': True}]


def test_check_mode_predicts_every_rail_and_writes_nothing(tree):
    ipr = TwoPfs()
    p = params(rail('rail0', 'eni10np1', vfs=TRUSTED), rail('rail1', 'eni11np1'))
    result = run_rails(HOST, p, True, runner(tree, ipr), sv.summary)
    assert ipr.sets == []
    assert result['changed'] is True and result['vf_reset'] is False
    assert [(r['rail'], r['pf'], r['changed']) for r in result['rails']] == [('rail0', 'eni10np1', True), ('rail1', 'eni11np1', False)]
    assert all('diff' not in r for r in result['rails'])
    # One diff per rail, in the rails' order, headed by its rail (what --diff shows).
    assert [(d['before_header'], d['after']['vfs']) for d in result['diff']] == [
        ('rail0', [dict(sv.NEW_VF, id=0, trust=True)]), ('rail1', [])]


def test_apply_then_idempotent_in_one_session(tree):
    ipr = TwoPfs()
    p = params(rail('rail0', 'eni10np1', vfs=TRUSTED), rail('rail1', 'eni11np1', vfs=TRUSTED))
    first = run_rails(HOST, p, False, runner(tree, ipr), sv.summary)
    assert first['changed'] is True and len(ipr.sets) == 2
    for pf in ipr.pfs.values():
        pf.vfs[0]['trust'] = True  # what the kernel reports now
    second = run_rails(HOST, p, False, runner(tree, ipr), sv.summary)
    assert second['changed'] is False and len(ipr.sets) == 2


def test_a_bad_value_on_the_second_rail_changes_no_rail(tree):
    ipr = TwoPfs()
    p = params(rail('rail0', 'eni10np1', vfs=TRUSTED), rail('rail1', 'eni11np1', num_vfs=4), allow_vf_reset=False)
    with pytest.raises(GpufabricError) as err:
        run_rails(HOST, p, False, runner(tree, ipr), sv.summary)
    assert str(err.value).startswith('node1: rails[rail1].num_vfs=4: PF eni11np1 has 8 VFs and changing to 4 needs a write of 0 first')
    assert err.value.field == 'rails[rail1].num_vfs'
    assert ipr.sets == [] and numvfs(tree, 0) == '8' and numvfs(tree, 1) == '8'


def test_a_driver_refusal_on_a_later_rail_names_the_rails_already_changed(tree):
    ipr = TwoPfs(kind=IgbIPRoute)
    p = params(rail('rail0', 'eni10np1', vfs=TRUSTED), rail('rail1', 'eni11np1', vfs=[{'id': 2, 'link_state': 'enable'}]))
    with pytest.raises(RailsError) as err:
        run_rails(HOST, p, False, runner(tree, ipr), sv.summary)
    assert err.value.field == 'rails[rail1].vfs[id=2].link_state'
    assert str(err.value).endswith(
        'nothing was changed (what the request had set before the refusal was set back); the rails before it were changed and '
        'keep their changes: rail0. Fix: ' + sv.REFUSAL_FIX['link_state'])
    # The failed result carries the rails that were applied.
    assert err.value.results['changed'] is True
    assert [r['rail'] for r in err.value.results['rails']] == ['rail0']
    assert ipr.pfs[3].vfs[0]['trust'] is True and ipr.pfs[4].vfs[2] == dict(sv.NEW_VF)


def test_rails_are_named_by_their_pf_without_a_name_and_given_once(tree):
    ipr = TwoPfs()
    result = run_rails(HOST, params(rail(None, 'eni10np1')), True, runner(tree, ipr), sv.summary)
    assert result['rails'][0]['rail'] == 'eni10np1'
    with pytest.raises(GpufabricError) as err:
        run_rails(HOST, params(rail('a', 'eni10np1'), rail('a', 'eni11np1')), True, runner(tree, ipr))
    assert str(err.value) == 'node1: rails="a": names the same rail twice. Fix: give each rail (and its PF) once'


def test_the_top_level_arguments_reach_every_rail():
    seen = []
    run_rails(HOST, params(rail('rail0', 'eni10np1'), rail('rail1', 'eni11np1'), allow_vf_reset=True, persist=True),
              True, lambda p, check: seen.append(p) or {'changed': False, 'diff': {}})
    assert [(p['pf'], p['allow_vf_reset'], p['persist'], 'rails' in p) for p in seen] == [
        ('eni10np1', True, True, False), ('eni11np1', True, True, False)]


def test_the_change_impact_report_reads_each_rail_of_one_run(tree):
    ipr = TwoPfs()
    p = params(rail('rail0', 'eni10np1', num_vfs=4), rail('rail1', 'eni11np1'), allow_vf_reset=True)
    result = run_rails(HOST, p, True, runner(tree, ipr), sv.summary)
    assert result['vf_reset'] is True and im.reset_predicted([result])
    host = im.host_impact([result], [], drain=True)
    assert [(v['pf'], v['num_vfs_before'], v['num_vfs'], v['reset']) for v in host['vfs']] == [
        ('eni10np1', 8, 4, True), ('eni11np1', 8, 8, False)]

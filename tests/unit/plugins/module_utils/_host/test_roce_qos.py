# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roce_qos's logic four ways (check, apply, check again, apply again) on a sysfs/configfs fixture tree, with
DCB and link pause played by in-memory backends (the netlink encoding is tested in test_dcbnl.py and
test_ethtool_pause.py; the RDMA-CM ToS is proven on the lab's kernel, molecule/lab)."""

from __future__ import absolute_import, division, print_function

import os
import shutil

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, Sysfs
from ansible_collections.gpufabric.roce.plugins.module_utils._host.roce_qos import Unsupported, render_unit, run
from ansible_collections.gpufabric.roce.plugins.module_utils._host.roce_qos_kernel import EthtoolPause, NetlinkDcb

QOS = {'trust': 'dscp', 'pfc_priorities': [3], 'tos': 106, 'ecn_priorities': [3], 'cnp_dscp': 48, 'cnp_priority': 6,
       'pause_frames': False}


class FakeDcb:
    def __init__(self, supported=True):
        self.supported, self.pfc, self.apps, self.calls = supported, [], {}, []

    def read(self, iface):
        if not self.supported:
            raise Unsupported('%s has no DCB support' % iface)
        return {'pfc_priorities': list(self.pfc), 'dscp_prio': dict(self.apps)}

    def set_pfc(self, iface, priorities):
        self.calls.append(('pfc', priorities))
        self.pfc = list(priorities)

    def set_dscp_prio(self, iface, mapping):
        self.calls.append(('app+', mapping))
        self.apps.update(mapping)

    def del_dscp_prio(self, iface, mapping):
        self.calls.append(('app-', mapping))
        for k in mapping:
            self.apps.pop(k, None)


class FakePause:
    def __init__(self):
        self.rx = self.tx = True

    def read(self, iface):
        return {'autoneg': False, 'rx': self.rx, 'tx': self.tx}

    def set(self, iface, on):
        self.rx = self.tx = on


def _write(root, rel, value):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write('%s\n' % value)


@pytest.fixture
def tree(tmp_path):
    root = str(tmp_path)
    os.makedirs(os.path.join(root, 'class/net/enp1s0np0'))
    _write(root, 'class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0', 'enp1s0np0')
    _write(root, 'kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos', 0)
    ecn = 'class/net/enp1s0np0/ecn'
    for p in range(8):
        _write(root, '%s/roce_np/enable/%d' % (ecn, p), 0)
        _write(root, '%s/roce_rp/enable/%d' % (ecn, p), 0)
    _write(root, ecn + '/roce_np/cnp_dscp', 48)
    _write(root, ecn + '/roce_np/cnp_802p_prio', 6)
    return root


def _params(root, **kw):
    params = dict(QOS, interface='enp1s0np0', unsupported='fail', persist=False, sysfs_root=root)
    params.update(kw)
    return params


def test_four_ways(tree):
    dcb, pause = FakeDcb(), FakePause()
    check = run('h', _params(tree), True, dcb=dcb, pause=pause)
    assert check['changed'] and dcb.calls == [] and Sysfs(tree).read('kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos') == '0'
    assert check['diff']['after']['tos'] == {1: 106} and check['diff']['before']['pfc_priorities'] == []
    applied = run('h', _params(tree), False, dcb=dcb, pause=pause)
    assert applied['changed'] and applied['actions'] == check['actions']
    fs = Sysfs(tree)
    assert fs.read('kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos') == '106'
    assert fs.read('class/net/enp1s0np0/ecn/roce_np/enable/3') == '1' and fs.read('class/net/enp1s0np0/ecn/roce_rp/enable/2') == '0'
    assert dcb.pfc == [3] and dcb.apps == {26: 3, 48: 6} and pause.rx is False
    assert not run('h', _params(tree), True, dcb=dcb, pause=pause)['changed']
    again = run('h', _params(tree), False, dcb=dcb, pause=pause)
    assert not again['changed'] and again['actions'] == []


def test_trust_pcp_removes_the_dscp_entries(tree):
    dcb = FakeDcb()
    dcb.apps = {26: 3, 10: 1}
    result = run('h', _params(tree, trust='pcp', cnp_dscp=None), False, dcb=dcb, pause=FakePause())
    assert ('app-', {26: 3, 10: 1}) in dcb.calls and dcb.apps == {} and result['diff']['after']['dscp_prio'] == {}


def test_unsupported_fails_before_any_change(tree):
    dcb = FakeDcb(supported=False)
    with pytest.raises(GpufabricError) as exc:
        run('h', _params(tree), False, dcb=dcb, pause=FakePause())
    assert exc.value.field == 'trust' and 'unsupported=warn' in exc.value.fix
    assert Sysfs(tree).read('kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos') == '0'


def test_unsupported_warn_applies_the_rest(tree):
    result = run('h', _params(tree, unsupported='warn'), False, dcb=FakeDcb(supported=False), pause=FakePause())
    assert sorted(result['unsupported']) == ['pfc_priorities', 'trust'] and len(result['warnings']) == 2
    assert Sysfs(tree).read('kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos') == '106'


def test_no_ecn_sysfs_is_unsupported(tree):
    shutil.rmtree(os.path.join(tree, 'class/net/enp1s0np0/ecn'))
    result = run('h', _params(tree, unsupported='warn'), True, dcb=FakeDcb(), pause=FakePause())
    assert sorted(result['unsupported']) == ['cnp_dscp', 'cnp_priority', 'ecn_priorities']
    assert 'DOCA-OFED' in result['unsupported']['ecn_priorities']


def test_missing_interface_and_bad_values(tree):
    with pytest.raises(GpufabricError) as exc:
        run('h', _params(tree, interface='nope0'), True, dcb=FakeDcb(), pause=FakePause())
    assert exc.value.host == 'h' and exc.value.field == 'interface' and exc.value.value == 'nope0'
    with pytest.raises(GpufabricError) as exc:
        run('h', _params(tree, pfc_priorities=[3, 3]), True, dcb=FakeDcb(), pause=FakePause())
    assert exc.value.field == 'pfc_priorities'


def test_only_the_settings_given_are_touched(tree):
    dcb = FakeDcb(supported=False)  # not asked for: never read
    params = dict(_params(tree), **{k: None for k in QOS})
    result = run('h', dict(params, tos=104), False, dcb=dcb, pause=FakePause())
    assert result['actions'] == ['set RDMA-CM default ToS of mlx5_0 port 1 to 104'] and result['unsupported'] == {}


def test_unit_has_a_line_per_supported_setting():
    unit = render_unit('enp1s0np0', QOS, ['tos', 'trust', 'pfc_priorities'], 'mlx5_0')
    assert 'dcb app replace dev enp1s0np0 dscp-prio 26:3 48:6' in unit
    assert 'dcb pfc set dev enp1s0np0 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off' in unit
    assert 'default_roce_tos' in unit and 'ethtool' not in unit and 'ecn' not in unit.split('[Service]')[1]


def test_the_real_kernel_answers_no_dcb_and_no_pause_for_lo():
    # The kernel backends end to end against this machine's kernel: lo has no dcbnl_ops and no pause support, so both
    # settings are unsupported, named as such, and nothing else is read or written.
    pyroute2 = pytest.importorskip('pyroute2')
    params = dict(_params('/sys', interface='lo', unsupported='warn'), **{k: None for k in QOS})
    params.update(trust='pcp', pfc_priorities=[3], pause_frames=False)
    with pyroute2.IPRoute() as ipr:
        result = run('h', params, True, dcb=NetlinkDcb(ipr), pause=EthtoolPause())
    assert sorted(result['unsupported']) == ['pause_frames', 'pfc_priorities', 'trust'] and result['actions'] == []
    assert 'no DCB support' in result['unsupported']['trust'] and 'link pause' in result['unsupported']['pause_frames']


class FakeUnits:
    """persist_unit's contract (write or remove, report the change; in check mode only predict it)."""

    def __init__(self):
        self.units, self.check = {}, False

    def __call__(self, name, content, state='present'):
        before = self.units.get(name)
        after = None if state == 'absent' else content
        if not self.check:
            self.units.pop(name, None) if after is None else self.units.__setitem__(name, after)
        return {'unit': name, 'path': '/etc/systemd/system/' + name, 'changed': before != after, 'daemon_reload': False,
                'systemd_running': False, 'before': before, 'after': after}


def test_state_absent_removes_the_tos_group_and_the_unit_four_ways(tree):
    units = FakeUnits()
    run('h', _params(tree, persist=True), False, dcb=FakeDcb(), pause=FakePause(), persist_fn=units)
    assert 'gpufabric-qos-enp1s0np0.service' in units.units
    # the fixture's configfs group is a plain directory tree: empty it as configfs would on rmdir
    group = os.path.join(tree, 'kernel/config/rdma_cm/mlx5_0')
    shutil.rmtree(os.path.join(group, 'ports'))
    absent = dict(interface='enp1s0np0', state='absent', sysfs_root=tree)
    ways = []
    for check in (True, False, True, False):
        units.check = check
        result = run('h', absent, check, dcb=None, pause=None, persist_fn=units)
        ways.append(result['changed'])
    assert ways == [True, True, False, False]
    assert not os.path.exists(group) and units.units == {}
    assert 'pfc_priorities' in result['left']


def test_cnps_on_roces_own_dscp_are_refused_by_the_module_too(tree):
    """The second line (the fabric plan refuses it first): one DSCP APP entry cannot map RoCE and CNPs apart."""
    dcb = FakeDcb()
    with pytest.raises(GpufabricError) as exc:
        run('h', _params(tree, cnp_dscp=26), True, dcb=dcb, pause=FakePause())
    assert (exc.value.field, exc.value.value) == ('cnp_dscp', 26) and exc.value.fix == 'give CNPs a DSCP of their own, e.g. 48'
    assert dcb.calls == []

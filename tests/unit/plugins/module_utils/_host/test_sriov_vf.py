# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

import errno
import os

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._host import sriov_vf as sv
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, Sysfs, persist_unit
from ansible_collections.gpufabric.roce.plugins.module_utils._common import vf_settings as vfs_model

HOST = 'node1'
PF8 = {'exists': True, 'sriov_capable': True, 'num_vfs': 8, 'total_vfs': 16}


def vf(vid, **kw):
    entry = dict.fromkeys(sv.VF_KEYS)
    entry['id'] = vid
    entry.update(kw)
    return entry


# --- bad input: every case fails before any change, with the exact message ---------

BAD = [
    ('pf-name', 'en/0', PF8, 8, [], False,
     'node1: pf="en/0": is not a valid interface name: it contains \'/\', which a shell or systemd unit line would interpret. '
     'Fix: ' + vfs_model.PF_FIX),
    ('pf-missing', 'enp9s0', dict(PF8, exists=False), 8, [], False,
     'node1: pf="enp9s0": no such network interface. Fix: set pf (roce_sriov_pf) to an existing PF netdev, see ansible_facts.rdma.netdevs'),
    ('pf-not-sriov', 'enp9s0', dict(PF8, sriov_capable=False), 8, [], False,
     'node1: pf="enp9s0": has no device/sriov_numvfs, so it is not an SR-IOV PF. Fix: enable SR-IOV in the NIC firmware/BIOS '
     'or choose a PF listed with sriov_numvfs in ansible_facts.rdma.netdevs'),
    ('above-total', 'enp9s0', dict(PF8, num_vfs=0), 17, [], False,
     'node1: num_vfs=17: exceeds sriov_totalvfs=16 of PF enp9s0. Fix: request at most 16 VFs, or raise the VF limit in the NIC firmware'),
    ('negative', 'enp9s0', PF8, -1, [], False,
     'node1: num_vfs=-1: must not be negative. Fix: use 0 to remove all VFs'),
    ('reset-not-allowed', 'eni10np1', PF8, 4, [], False,
     'node1: num_vfs=4: PF eni10np1 has 8 VFs and changing to 4 needs a write of 0 first, which destroys the existing VFs '
     '(pods using them lose their interfaces); nothing was changed. Fix: set allow_vf_reset: true to accept the VF reset, or keep num_vfs: 8'),
    ('vf-id-range', 'eni10np1', PF8, 8, [vf(8, vlan=100)], False,
     'node1: vfs[id=8].id=8: PF eni10np1 will have 8 VFs (ids 0..7). Fix: use a VF id below 8 or raise num_vfs'),
    ('vf-id-no-vfs', 'eni10np1', dict(PF8, num_vfs=0), None, [vf(0, trust=True)], False,
     'node1: vfs[id=0].id=0: PF eni10np1 has no VFs. Fix: set num_vfs to create VFs first'),
    ('vf-duplicate', 'eni10np1', PF8, 8, [vf(6, vlan=100), vf(6, trust=True)], False,
     'node1: vfs[id=6]=6: VF id listed twice. Fix: merge the settings of VF 6 into one entry'),
    ('mac-syntax', 'eni10np1', PF8, 8, [vf(1, mac='02:00:00:00:01')], False,
     'node1: vfs[id=1].mac="02:00:00:00:01": is not a MAC address. Fix: write it as six hex pairs, e.g. 02:00:00:00:00:06'),
    ('mac-multicast', 'eni10np1', PF8, 8, [vf(1, mac='01:00:5e:00:00:01')], False,
     'node1: vfs[id=1].mac="01:00:5e:00:00:01": is a multicast address. Fix: use a unicast MAC (first octet even), e.g. 02:00:00:00:00:06'),
    ('vlan-range', 'eni10np1', PF8, 8, [vf(6, vlan=4095)], False,
     'node1: vfs[id=6].vlan=4095: is outside 0..4094. Fix: use 1..4094, or 0 for no VLAN'),
    ('qos-range', 'eni10np1', PF8, 8, [vf(6, vlan=100, qos=8)], False,
     'node1: vfs[id=6].qos=8: is outside 0..7. Fix: use an 802.1p priority 0..7'),
    ('qos-without-vlan', 'eni10np1', PF8, 8, [vf(6, vlan=0, qos=3)], False,
     'node1: vfs[id=6].qos=3: a priority needs a VLAN but vlan is 0. Fix: set vlan to 1..4094 or qos to 0'),
    ('qinq-without-vlan', 'eni10np1', PF8, 8, [vf(6, vlan=0, vlan_proto='802.1ad')], False,
     'node1: vfs[id=6].vlan_proto="802.1ad": needs a VLAN but vlan is 0. Fix: set vlan to 1..4094 or drop vlan_proto'),
    ('rate-order', 'eni10np1', PF8, 8, [vf(2, min_tx_rate=500, max_tx_rate=100)], False,
     'node1: vfs[id=2].min_tx_rate=500: is above max_tx_rate=100. Fix: set min_tx_rate <= max_tx_rate, or max_tx_rate: 0 for no ceiling'),
    ('rate-negative', 'eni10np1', PF8, 8, [vf(2, max_tx_rate=-5)], False,
     'node1: vfs[id=2].max_tx_rate=-5: must be 0..4294967295 (Mb/s). Fix: use 0 for no limit'),
]


@pytest.mark.parametrize('case', BAD, ids=[b[0] for b in BAD])
def test_validate_rejects(case):
    _id, pf, pf_state, num_vfs, vfs, allow, message = case
    with pytest.raises(GpufabricError) as err:
        sv.validate(HOST, pf, pf_state, num_vfs=num_vfs, vfs=vfs, allow_vf_reset=allow)
    assert str(err.value) == message


def test_validate_accepts_reset_when_allowed_and_unknown_total():
    # netdevsim: no sriov_totalvfs -> the count is not capped before the write
    sv.validate(HOST, 'eni10np1', dict(PF8, total_vfs=None), num_vfs=128, vfs=[vf(127, vlan=1)], allow_vf_reset=True)


# --- planning ----------------------------------------------------------------

def test_numvfs_writes():
    assert sv.numvfs_writes(0, 8) == [8]
    assert sv.numvfs_writes(8, 4) == [0, 4]
    assert sv.numvfs_writes(8, 0) == [0]
    assert sv.numvfs_writes(8, 8) == []
    assert sv.numvfs_writes(8, None) == []


CURRENT = {6: dict(sv.NEW_VF, spoofchk=False), 1: dict(sv.NEW_VF, min_tx_rate=10, max_tx_rate=100)}


def test_only_differences_are_written():
    desired = sv.normalize_vfs([vf(6, vlan=100, trust=True, spoofchk=False, link_state='enable')])
    planned = sv.vf_changes(CURRENT, desired, recreated=False)
    assert planned[0][3] == {'vlan': 100, 'trust': True, 'link_state': 'enable'}  # spoofchk already off
    assert sv.build_vf_requests(planned) == [{'vf': 6, 'vlan': {'vlan': 100, 'qos': 0}, 'trust': 1, 'link_state': 1}]


def test_idempotent_when_state_matches():
    desired = sv.normalize_vfs([vf(6, spoofchk=False), vf(1, max_tx_rate=100)])
    planned = sv.vf_changes(CURRENT, desired, recreated=False)
    assert [c for _v, _b, _a, c in planned] == [{}, {}]
    assert sv.build_vf_requests(planned) == []


def test_rate_keeps_the_other_bound_and_qinq_uses_vlan_list():
    desired = sv.normalize_vfs([vf(1, max_tx_rate=200, vlan=7, vlan_proto='802.1ad', mac='02-00-00-00-00-AA')])
    (req,) = sv.build_vf_requests(sv.vf_changes(CURRENT, desired, recreated=False))
    assert req == {'vf': 1, 'mac': '02:00:00:00:00:aa', 'rate': {'min_tx_rate': 10, 'max_tx_rate': 200},
                   'vlan': [{'vlan': 7, 'qos': 0, 'proto': 0x88A8}]}


def test_recreated_vfs_are_compared_with_fresh_defaults():
    desired = sv.normalize_vfs([vf(6, spoofchk=False)])
    planned = sv.vf_changes(CURRENT, desired, recreated=True)
    assert planned[0][3] == {'spoofchk': False}


class FakeNla(dict):
    def __init__(self, attrs=(), **fields):
        super().__init__(**fields)
        self.attrs = list(attrs)

    def get_attr(self, name):
        return next((v for n, v in self.attrs if n == name), None)

    def get_attrs(self, name):
        return [v for n, v in self.attrs if n == name]


def vfinfo(vid, mac, vlan, qos, proto, *, trust, spoofchk, link_state, rates):
    return FakeNla([
        ('IFLA_VF_MAC', FakeNla(vf=vid, mac=mac)),
        ('IFLA_VF_VLAN', FakeNla(vf=vid, vlan=vlan, qos=qos)),
        ('IFLA_VF_VLAN_LIST', FakeNla([('IFLA_VF_VLAN_INFO', FakeNla(vf=vid, vlan=vlan, qos=qos, proto=proto))])),
        ('IFLA_VF_TRUST', FakeNla(vf=vid, trust=trust)),
        ('IFLA_VF_SPOOFCHK', FakeNla(vf=vid, spoofchk=spoofchk)),
        ('IFLA_VF_LINK_STATE', FakeNla(vf=vid, link_state=link_state)),
        ('IFLA_VF_RATE', FakeNla(vf=vid, min_tx_rate=rates[0], max_tx_rate=rates[1])),
    ])


def test_parse_vfinfo_list():
    vflist = FakeNla([
        ('IFLA_VF_INFO', vfinfo(0, '00:00:00:00:00:00', 0, 0, 0, trust=0, spoofchk=0, link_state=0, rates=(0, 0))),  # netdevsim: proto 0
        ('IFLA_VF_INFO', vfinfo(6, '02:00:00:00:00:06', 100, 3, 0x88A8, trust=1, spoofchk=0xFFFFFFFF, link_state=1, rates=(10, 100))),
    ])
    parsed = sv.parse_vfinfo_list(vflist)
    assert parsed[0] == dict(sv.NEW_VF, spoofchk=False)
    # spoofchk -1 (u32 max): the driver cannot tell, so it is left out
    assert parsed[6] == {'mac': '02:00:00:00:00:06', 'vlan': 100, 'qos': 3, 'vlan_proto': '802.1ad', 'trust': True,
                         'link_state': 'enable', 'min_tx_rate': 10, 'max_tx_rate': 100}


def test_pyroute2_vlan_info_padding_fix():
    class Ivvi:
        fields = (('vf', 'I'), ('vlan', 'I'), ('qos', 'I'), ('proto', '>H'))

    assert sv.fix_pyroute2_vlan_info(Ivvi) is True
    assert Ivvi.fields[-1] == ('_pad', 'H')
    assert sv.fix_pyroute2_vlan_info(Ivvi) is False  # already patched


# --- a whole run against a sysfs fixture and a fake netlink session ----------------

class FakeIPRoute:
    """Stands in for pyroute2.IPRoute: one PF whose VFs are kept in ``vfs``."""

    def __init__(self, vfs):
        self.vfs = vfs
        self.sets = []
        self.gets = 0

    def link_lookup(self, ifname):
        return [3] if ifname == 'eni10np1' else []

    def link(self, cmd, **kw):
        if cmd == 'set':
            self.sets.append(kw['vf'])
            return []
        assert kw == {'index': 3, 'ext_mask': 1}
        self.gets += 1
        infos = [('IFLA_VF_INFO', vfinfo(i, v['mac'], v['vlan'], v['qos'], 0x8100, trust=int(v['trust']), spoofchk=int(v['spoofchk']),
                                         link_state=sv.LINK_STATE_ID[v['link_state']], rates=(v['min_tx_rate'], v['max_tx_rate'])))
                 for i, v in sorted(self.vfs.items())]
        return [FakeNla([('IFLA_VFINFO_LIST', FakeNla(infos))])]


@pytest.fixture
def nds_tree(tmp_path):
    dev = tmp_path / 'devices' / 'netdevsim10'
    dev.mkdir(parents=True)
    (dev / 'sriov_numvfs').write_text('8\n')
    net = tmp_path / 'class' / 'net' / 'eni10np1'
    net.mkdir(parents=True)
    os.symlink('../../../devices/netdevsim10', str(net / 'device'))
    return tmp_path


PARAMS = {'pf': 'eni10np1', 'num_vfs': 8, 'allow_vf_reset': False, 'persist': False,
          'vfs': [vf(6, vlan=100, trust=True, spoofchk=False, link_state='enable')]}


def test_run_check_mode_writes_nothing(nds_tree):
    ipr = FakeIPRoute({i: dict(sv.NEW_VF) for i in range(8)})
    result = sv.run(HOST, PARAMS, ipr, True, fs=Sysfs(str(nds_tree)))
    assert result['changed'] is True and ipr.sets == []
    assert result['diff']['before']['vfs'][0]['vlan'] == 0
    assert result['diff']['after']['vfs'][0]['vlan'] == 100


def test_run_apply_then_idempotent(nds_tree):
    ipr = FakeIPRoute({i: dict(sv.NEW_VF) for i in range(8)})
    first = sv.run(HOST, PARAMS, ipr, False, fs=Sysfs(str(nds_tree)))
    assert first['changed'] is True
    assert ipr.sets == [[{'vf': 6, 'vlan': {'vlan': 100, 'qos': 0}, 'trust': 1, 'spoofchk': 0, 'link_state': 1}]]
    ipr.vfs[6].update(vlan=100, trust=True, spoofchk=False, link_state='enable')  # what the kernel now reports
    ipr.gets = 0
    second = sv.run(HOST, PARAMS, ipr, False, fs=Sysfs(str(nds_tree)))
    # the idempotent run reads all VF settings in one dump and writes nothing
    assert second['changed'] is False and len(ipr.sets) == 1 and ipr.gets == 1
    assert second['vfs'] == [dict(sv.NEW_VF, id=6, vlan=100, trust=True, spoofchk=False, link_state='enable')]


def test_run_reset_writes_zero_then_count(nds_tree):
    ipr = FakeIPRoute({i: dict(sv.NEW_VF) for i in range(8)})
    result = sv.run(HOST, dict(PARAMS, num_vfs=4, allow_vf_reset=True, vfs=None), ipr, False, fs=Sysfs(str(nds_tree)))
    assert result['vf_reset'] is True
    assert (nds_tree / 'devices' / 'netdevsim10' / 'sriov_numvfs').read_text() == '4\n'


def test_run_refused_reset_leaves_count(nds_tree):
    ipr = FakeIPRoute({i: dict(sv.NEW_VF) for i in range(8)})
    with pytest.raises(GpufabricError):
        sv.run(HOST, dict(PARAMS, num_vfs=4), ipr, False, fs=Sysfs(str(nds_tree)))
    assert (nds_tree / 'devices' / 'netdevsim10' / 'sriov_numvfs').read_text() == '8\n'
    assert ipr.sets == []


# --- persistence ---------------------------------------------------------------

def test_render_unit():
    desired = sv.normalize_vfs([vf(6, vlan=100, trust=True, spoofchk=False, link_state='enable')])
    text = sv.render_unit('eni10np1', 8, desired, {6: dict(sv.NEW_VF, vlan=100, qos=0)})
    # Bound to the PF's device and started by it whenever it appears, not by multi-user.target
    # (whose device job fails after 90 s when the PF comes later, as in the reboot lab under load).
    assert 'BindsTo=sys-subsystem-net-devices-eni10np1.device' in text.splitlines()
    assert 'After=sys-subsystem-net-devices-eni10np1.device' in text.splitlines()
    assert 'Requires=' not in text
    assert text.split('[Install]')[1].strip().splitlines() == ['WantedBy=sys-subsystem-net-devices-eni10np1.device']
    assert ("ExecStart=/bin/sh -c 'if [ \"$$(cat /sys/class/net/eni10np1/device/sriov_numvfs)\" != 8 ]; then "
            "echo 0 > /sys/class/net/eni10np1/device/sriov_numvfs && echo 8 > /sys/class/net/eni10np1/device/sriov_numvfs; fi'") in text
    assert 'ExecStart=/sbin/ip link set dev eni10np1 vf 6 vlan 100 spoofchk off trust on state enable' in text


def test_persist_unit_is_idempotent(tmp_path):
    unit_dir = str(tmp_path)
    first = persist_unit('gpufabric-sriov-x.service', 'A\n', 'present', False, unit_dir=unit_dir)
    again = persist_unit('gpufabric-sriov-x.service', 'A\n', 'present', False, unit_dir=unit_dir)
    check = persist_unit('gpufabric-sriov-x.service', 'B\n', 'present', True, unit_dir=unit_dir)
    assert (first['changed'], again['changed'], check['changed']) == (True, False, True)
    assert (tmp_path / 'gpufabric-sriov-x.service').read_text() == 'A\n'  # check mode wrote nothing
    assert os.readlink(str(tmp_path / 'multi-user.target.wants' / 'gpufabric-sriov-x.service')) == str(tmp_path / 'gpufabric-sriov-x.service')
    gone = persist_unit('gpufabric-sriov-x.service', None, 'absent', False, unit_dir=unit_dir)
    assert gone['changed'] is True and not os.listdir(str(tmp_path / 'multi-user.target.wants'))


# --- shell injection into the persisted unit: refused before anything changes --------

MALICIOUS = ['eni$(reboot)', 'eni`id`', 'eni;reboot', 'a&b', 'a|b', "a'b", 'a"b', 'a b', 'a\tb', 'a\nb', 'eni%i',
             'a\\b', 'a>b', 'a<b', 'a*', 'a?', 'a#', 'a(b', '-a', '.a', '..', 'a:b', 'a/b', '', 'é1', 'x' * 16]


@pytest.mark.parametrize('name', MALICIOUS)
def test_run_refuses_unsafe_pf_before_any_change(nds_tree, name):
    ipr = FakeIPRoute({i: dict(sv.NEW_VF) for i in range(8)})
    calls = []
    with pytest.raises(GpufabricError) as err:
        sv.run(HOST, dict(PARAMS, pf=name, persist=True, num_vfs=4, allow_vf_reset=True), ipr, False,
               fs=Sysfs(str(nds_tree)), persist_fn=lambda *a: calls.append(a))
    assert err.value.field == 'pf' and err.value.value == name
    assert str(err.value).startswith('node1: pf=') and str(err.value).endswith('. Fix: ' + vfs_model.PF_FIX)
    assert calls == [] and ipr.sets == [] and ipr.gets == 0
    assert (nds_tree / 'devices' / 'netdevsim10' / 'sriov_numvfs').read_text() == '8\n'


def test_unsafe_pf_message_is_exact():
    with pytest.raises(GpufabricError) as err:
        sv.validate(HOST, 'eni$(reboot)', PF8, num_vfs=8, vfs=[], allow_vf_reset=False)
    assert str(err.value) == (
        'node1: pf="eni$(reboot)": is not a valid interface name: it contains \'$\' \'(\' \')\', which a shell or systemd '
        'unit line would interpret. Fix: give the PF netdev name (roce_sriov_pf), at most 15 characters of letters, digits, '
        '"_", "." and "-" not starting with "-" or ".", e.g. enp157s0np0')


def test_pf_too_long_message_is_exact():
    with pytest.raises(GpufabricError) as err:
        sv.validate(HOST, 'enp157s0np0abcde', PF8, num_vfs=8, vfs=[], allow_vf_reset=False)
    assert str(err.value) == ('node1: pf="enp157s0np0abcde": is not a valid interface name (Linux allows at most 15 bytes, '
                              'this has 16). Fix: ' + vfs_model.PF_FIX)


@pytest.mark.parametrize('name', ['eni$(reboot)', "a';reboot;'", 'eni%n'])
def test_render_unit_never_writes_an_unsafe_pf(name):
    # Defence in depth: a caller that skipped validate() gets an exception, not a unit.
    with pytest.raises(ValueError):
        sv.render_unit(name, 8, {}, {})
    with pytest.raises(ValueError):
        sv.unit_name(name)


def test_render_unit_of_legit_names_is_unchanged_by_quoting():
    for pf in ('eni10np1', 'enp157s0f0np0', 'ib0_1', 'bond-0.100'):
        text = sv.render_unit(pf, 2, {}, {})
        assert "/sys/class/net/%s/device/sriov_numvfs)\" != 2 ]" % pf in text
        assert sv.unit_name(pf) == 'gpufabric-sriov-%s.service' % pf


def test_persist_unit_links_into_the_wantedby_of_its_text(tmp_path):
    """The .wants link follows the unit's [Install] WantedBy= (the PF's device unit), as
    systemctl enable does, and a link an earlier version put in multi-user.target.wants goes."""
    unit_dir = str(tmp_path)
    name = 'gpufabric-sriov-eni10np1.service'
    dev = 'sys-subsystem-net-devices-eni10np1.device'
    old_link = tmp_path / 'multi-user.target.wants' / name
    old_link.parent.mkdir()
    os.symlink(str(tmp_path / name), str(old_link))
    text = sv.render_unit('eni10np1', 8, {}, {})
    first = persist_unit(name, text, 'present', False, unit_dir=unit_dir)
    again = persist_unit(name, text, 'present', False, unit_dir=unit_dir)
    assert (first['changed'], again['changed']) == (True, False)
    assert os.readlink(str(tmp_path / ('%s.wants' % dev) / name)) == str(tmp_path / name)
    assert not os.path.lexists(str(old_link))
    gone = persist_unit(name, None, 'absent', False, unit_dir=unit_dir)
    assert gone['changed'] is True
    assert not os.listdir(str(tmp_path / ('%s.wants' % dev)))


# --- teardown: state=absent ----------------------------------------------------

def _absent(**kw):
    return dict({'pf': 'eni10np1', 'state': 'absent', 'allow_vf_reset': True, 'persist': False, 'num_vfs': None, 'vfs': None}, **kw)


def test_absent_without_consent_is_refused_before_any_change(nds_tree, tmp_path):
    ipr = FakeIPRoute({i: dict(sv.NEW_VF) for i in range(8)})
    calls = []
    with pytest.raises(GpufabricError) as err:
        sv.run(HOST, _absent(allow_vf_reset=False), ipr, False, fs=Sysfs(str(nds_tree)), persist_fn=lambda *a: calls.append(a))
    assert str(err.value) == ('node1: num_vfs=0: removing the 8 VFs of PF eni10np1 destroys them (pods using them lose their interfaces); '
                              'nothing was changed. Fix: set allow_vf_reset: true to accept the removal '
                              '(the teardown playbook: -e roce_teardown_remove_vfs=true)')
    assert (nds_tree / 'devices' / 'netdevsim10' / 'sriov_numvfs').read_text() == '8\n' and calls == [] and ipr.sets == []


def test_absent_check_apply_idempotent_and_removes_the_unit(nds_tree, tmp_path):
    unit_dir = tmp_path / 'units'
    persist_unit('gpufabric-sriov-eni10np1.service', '[Install]\nWantedBy=sys-subsystem-net-devices-eni10np1.device\n', 'present', False,
                 unit_dir=str(unit_dir))

    def persist_fn(name, content, state='present', check=False):
        return persist_unit(name, content, state, check, unit_dir=str(unit_dir))

    numvfs = nds_tree / 'devices' / 'netdevsim10' / 'sriov_numvfs'
    ipr = FakeIPRoute({i: dict(sv.NEW_VF) for i in range(8)})
    check = sv.run(HOST, _absent(), ipr, True, fs=Sysfs(str(nds_tree)), persist_fn=lambda n, c, s: persist_fn(n, c, s, True))
    assert check['changed'] is True and check['num_vfs'] == 0 and check['vf_reset'] is True
    assert numvfs.read_text() == '8\n' and (unit_dir / 'gpufabric-sriov-eni10np1.service').exists()
    done = sv.run(HOST, _absent(), ipr, False, fs=Sysfs(str(nds_tree)), persist_fn=persist_fn)
    assert done['changed'] is True and numvfs.read_text() == '0\n'
    assert done['persist']['changed'] is True and not list(unit_dir.rglob('gpufabric-sriov-eni10np1.service'))
    again = sv.run(HOST, _absent(allow_vf_reset=False), ipr, False, fs=Sysfs(str(nds_tree)), persist_fn=persist_fn)
    assert again['changed'] is False  # no VFs left: no consent needed, nothing to do


@pytest.mark.parametrize('params, field', [({'num_vfs': 4}, 'num_vfs'), ({'vfs': [vf(1, trust=True)]}, 'vfs')])
def test_absent_refuses_a_count_or_settings(nds_tree, params, field):
    with pytest.raises(GpufabricError) as err:
        sv.run(HOST, _absent(**params), FakeIPRoute({}), False, fs=Sysfs(str(nds_tree)))
    assert err.value.field == field and 'state=absent removes every VF of the PF' in str(err.value)


def test_present_needs_a_count_or_settings(nds_tree):
    with pytest.raises(GpufabricError) as err:
        sv.run(HOST, dict(PARAMS, num_vfs=None, vfs=None), FakeIPRoute({}), False, fs=Sysfs(str(nds_tree)))
    assert 'neither num_vfs nor vfs is given' in str(err.value)


# --- a driver that refuses settings (igb: link_state, min_tx_rate, 802.1ad) -----------------

class FakeNetlinkError(Exception):
    def __init__(self, code):
        super().__init__(code, os.strerror(code))
        self.code = code


class IgbIPRoute(FakeIPRoute):
    """Applies each VF's settings in the kernel's order (do_setvfinfo) and stops at the first that igb
    refuses, leaving what came before it set, as the kernel does."""

    def link(self, cmd, **kw):
        if cmd != 'set':
            return super().link(cmd, **kw)
        self.sets.append(kw['vf'])
        for req in kw['vf']:
            state = self.vfs[req['vf']]
            if 'mac' in req:
                state['mac'] = req['mac']
            if 'vlan' in req:
                if isinstance(req['vlan'], list):
                    raise FakeNetlinkError(errno.EPROTONOSUPPORT)
                state.update(vlan=req['vlan']['vlan'], qos=req['vlan']['qos'])
            if 'rate' in req:
                if req['rate']['min_tx_rate']:
                    raise FakeNetlinkError(errno.EINVAL)
                state.update(req['rate'])
            if 'spoofchk' in req:
                state['spoofchk'] = bool(req['spoofchk'])
            if 'link_state' in req:
                raise FakeNetlinkError(errno.EOPNOTSUPP)
            if 'trust' in req:
                state['trust'] = bool(req['trust'])
        return []


REFUSED = [
    ('link_state', vf(2, vlan=300, trust=True, link_state='disable'),
     'node1: vfs[id=2].link_state="disable": the driver of PF eni10np1 refused it: Operation not supported (EOPNOTSUPP); '
     'nothing was changed (what the request had set before the refusal was set back). Fix: ' + sv.REFUSAL_FIX['link_state']),
    ('min_tx_rate', vf(2, mac='02:00:00:00:01:02', min_tx_rate=10, max_tx_rate=100),
     'node1: vfs[id=2].min_tx_rate=10: the driver of PF eni10np1 refused it: Invalid argument (EINVAL); '
     'nothing was changed (what the request had set before the refusal was set back). Fix: ' + sv.REFUSAL_FIX['min_tx_rate']),
    ('vlan_proto', vf(2, vlan=300, qos=1, vlan_proto='802.1ad'),
     'node1: vfs[id=2].vlan_proto="802.1ad": the driver of PF eni10np1 refused it: Protocol not supported (EPROTONOSUPPORT); '
     'nothing was changed (what the request had set before the refusal was set back). Fix: ' + sv.REFUSAL_FIX['vlan_proto']),
]


@pytest.mark.parametrize('case', REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_setting_is_named_and_the_rest_set_back(nds_tree, case):
    _name, entry, message = case
    ipr = IgbIPRoute({i: dict(sv.NEW_VF) for i in range(8)})
    ipr.vfs[1].update(vlan=100)  # VF 1 is asked for a change the driver takes, before VF 2's refusal
    params = dict(PARAMS, vfs=[vf(1, vlan=200), entry])
    with pytest.raises(GpufabricError) as err:
        sv.run(HOST, params, ipr, False, fs=Sysfs(str(nds_tree)))
    assert str(err.value) == message
    # VF 1's change and VF 2's settings before the refused one were applied by the kernel, then set back.
    assert ipr.vfs[1] == dict(sv.NEW_VF, vlan=100)
    assert ipr.vfs[2] == dict(sv.NEW_VF)
    assert (nds_tree / 'devices' / 'netdevsim10' / 'sriov_numvfs').read_text() == '8\n'


def test_refusal_after_creating_vfs_sets_the_count_back(nds_tree):
    (nds_tree / 'devices' / 'netdevsim10' / 'sriov_numvfs').write_text('0\n')
    ipr = IgbIPRoute({i: dict(sv.NEW_VF) for i in range(4)})
    params = dict(PARAMS, num_vfs=4, vfs=[vf(3, link_state='enable')])
    with pytest.raises(GpufabricError) as err:
        sv.run(HOST, params, ipr, False, fs=Sysfs(str(nds_tree)))
    assert 'vfs[id=3].link_state="enable"' in str(err.value)
    assert 'sriov_numvfs was set back to 0' in str(err.value)
    assert (nds_tree / 'devices' / 'netdevsim10' / 'sriov_numvfs').read_text() == '0\n'

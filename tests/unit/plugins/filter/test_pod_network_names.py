# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roce_pf and roce_sriov_pf are checked as interface names by the fabric validation (the filter that
site.yml's validation play runs for every node before phase 1), not first on the node by vlan_gateway
or sriov_vf: names with shell or systemd metacharacters, too long for the kernel, or read as options."""

import copy

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.filter.pod_network import FilterModule
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import FabricErrors, fabric_table

REFERENCE = {
    'node1': {'roce_pf': 'enp157s0np0', 'roce_pod_subnet': '10.255.0.0/30', 'roce_pod_gateway': '10.255.0.2'},
    'node2': {'roce_pf': 'enp157s0np0', 'roce_pod_subnet': '10.255.0.4/30', 'roce_pod_gateway': '10.255.0.6'},
}
NODES = ['node1', 'node2']
FIX = ('Fix: set %s to the PF netdev name as `ip link` shows it: at most 15 characters of letters, digits, "_", "." and "-", '
       'not starting with "-" or ".", e.g. enp157s0np0')


def _with(**kw):
    hv = copy.deepcopy(REFERENCE)
    hv['node2'].update(kw)
    return hv


BAD = [
    ('pf-shell', dict(roce_pf='eth0;reboot'), 'roce_pf', 'node2: roce_pf="eth0;reboot": is not a valid interface name: it contains \';\', '
     'which a shell or systemd unit line would interpret. ' + FIX % 'roce_pf'),
    ('pf-command-substitution', dict(roce_pf='$(id)'), 'roce_pf', None),
    ('pf-space', dict(roce_pf='eth0 x'), 'roce_pf', None),
    ('pf-option', dict(roce_pf='-eth0'), 'roce_pf', 'node2: roce_pf="-eth0": is not a valid interface name: it starts with \'-\'. '
     + FIX % 'roce_pf'),
    ('pf-too-long', dict(roce_pf='enp157s0np0abcde'), 'roce_pf', 'node2: roce_pf="enp157s0np0abcde": is not a valid interface name '
     '(Linux allows at most 15 bytes, this has 16). ' + FIX % 'roce_pf'),
    ('pf-newline', dict(roce_pf='eth0\n'), 'roce_pf', None),
    ('sriov-pf-shell', dict(roce_sriov_pf='eni10np1`id`'), 'roce_sriov_pf', None),
    ('sriov-pf-unit', dict(roce_sriov_pf='eni%i'), 'roce_sriov_pf', 'node2: roce_sriov_pf="eni%i": is not a valid interface name: '
     'it contains \'%\', which a shell or systemd unit line would interpret. ' + FIX % 'roce_sriov_pf'
     + ' (or leave it unset: it defaults to roce_pf)'),
]


@pytest.mark.parametrize('kw,field,message', [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_pf_names_are_refused_by_the_validation(kw, field, message):
    with pytest.raises(GpufabricError) as err:
        fabric_table(_with(**kw), NODES)
    assert (err.value.host, err.value.field) == ('node2', field)
    if message:
        assert str(err.value) == message


def test_every_node_with_a_bad_name_is_reported_at_once():
    hv = copy.deepcopy(REFERENCE)
    hv['node1']['roce_pf'] = 'a|b'
    hv['node2']['roce_sriov_pf'] = 'c&d'
    with pytest.raises(FabricErrors) as err:
        fabric_table(hv, NODES)
    assert sorted((e.host, e.field) for e in err.value.errors) == [('node1', 'roce_pf'), ('node2', 'roce_sriov_pf')]


def test_the_fabric_filter_of_the_validation_play_refuses_them():
    f = FilterModule().filters()['_vlan_gateway_fabric']
    with pytest.raises(AnsibleFilterError, match=r'roce_pf="eth0;reboot": is not a valid interface name'):
        f(_with(roce_pf='eth0;reboot'), NODES)


@pytest.mark.parametrize('name', ['enp157s0np0', 'eni10np1', 'ens1f0', 'eth0', 'bond0.1', 'ib_0-a'])
def test_legit_names_pass_and_render_as_before(name):
    table = fabric_table(_with(roce_pf=name, roce_sriov_pf=name), NODES)
    assert table is not None

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The QoS model (_qos) and its place in the fabric plan (_fabric.pod_network.fabric_table, gateway_args_list)."""

from __future__ import absolute_import, division, print_function

import ipaddress

import pytest

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table, gateway_args_list
from ansible_collections.gpufabric.roce.plugins.module_utils._common.qos import DEFAULTS, effective_qos, pfc_string, prio_mask


def test_qos_off_without_roce_qos():
    assert effective_qos(None) == (None, [])


def test_defaults_and_layers_merge_key_by_key():
    qos, problems = effective_qos({}, None, None)
    assert problems == [] and qos == {k: v for k, v in DEFAULTS.items() if k != 'enabled'}
    qos, problems = effective_qos({'cnp_dscp': 40}, {'tos': 98}, {'pause_frames': 'no'}, 'rail0')
    assert problems == [] and qos['cnp_dscp'] == 40 and qos['tos'] == 98 and qos['pause_frames'] is False and qos['pfc_priorities'] == [3]


def test_enabled_false_turns_a_node_rail_off():
    assert effective_qos({}, None, {'enabled': False}, 'rail0') == (None, [])


def test_each_bad_value_is_blamed_on_the_level_that_set_it():
    _qos, problems = effective_qos({'trust': 'ip'}, {'pfc_priorities': [3, 9]}, None, 'rail1')
    fields = sorted(p[0] for p in problems)
    assert fields == ['roce_qos.trust', 'roce_rails[rail1].qos.pfc_priorities']
    assert all(p[3] for p in problems)  # every problem has a fix


def test_unknown_key_and_shape():
    _q, problems = effective_qos({'tc': 3})
    assert problems[0][0] == 'roce_qos' and problems[0][1] == ['tc']
    _q, problems = effective_qos([3])
    assert problems[0][2].startswith('must be a mapping')


@pytest.mark.parametrize('layer,field,needle', [
    ({'tos': 0, 'ecn_priorities': []}, 'roce_qos.tos', 'puts RoCE traffic on priority 0'),
    ({'tos': 107}, 'roce_qos.tos', 'CE'),
    ({'ecn_priorities': [4]}, 'roce_qos.ecn_priorities', 'leaves out priority 3'),
    ({'pause_frames': True}, 'roce_qos.pause_frames', 'link pause or PFC'),
])
def test_rules_that_leave_roce_unprotected(layer, field, needle):
    _q, problems = effective_qos(layer)
    assert [p[0] for p in problems] == [field] and needle in problems[0][2]


def test_the_tos_fix_is_itself_valid():
    _q, problems = effective_qos({'tos': 0, 'pfc_priorities': [5], 'ecn_priorities': [5]})
    fixed_tos = int(problems[0][3].split('tos: ')[1].split(' ')[0])
    assert effective_qos({'tos': fixed_tos, 'pfc_priorities': [5], 'ecn_priorities': [5]})[1] == []


def test_pfc_string_and_mask():
    assert pfc_string([3]) == '0,0,0,1,0,0,0,0' and prio_mask([3, 4]) == 24


def _fleet(n, rails=False, **extra):
    hv = {}
    for i in range(n):
        if rails:
            hv['n%d' % i] = {'roce_rails': [{'name': 'rail0', 'pf': 'p0', 'vlan': 101, 'subnet_pool': '10.101.0.0/16'},
                                            {'name': 'rail1', 'pf': 'p1', 'vlan': 102, 'subnet_pool': '10.102.0.0/16',
                                             'qos': {'tos': 98}}]}
        else:
            net = ipaddress.ip_network('10.255.%d.0/30' % i)
            hv['n%d' % i] = {'roce_pf': 'p0', 'roce_pod_subnet': str(net), 'roce_pod_gateway': str(net[2])}
        hv['n%d' % i].update(extra)
    return hv


def test_without_qos_the_table_is_as_before():
    table = fabric_table(_fleet(3))
    assert 'qos_profiles' not in table and all('qos' not in e for e in table['nodes'].values())
    assert 'qos' not in gateway_args_list(table, 'n0')[0]


def test_the_table_keeps_each_distinct_qos_once_and_the_slice_resolves_it():
    hv = _fleet(50, rails=True, roce_qos={})
    hv['n7']['roce_rail_overrides'] = {'rail0': {'qos': {'cnp_dscp': 46}}}
    table = fabric_table(hv)
    assert len(table['qos_profiles']) == 3  # the cluster's, rail1's, and n7's rail0
    n7 = gateway_args_list(table, 'n7')
    assert n7[0]['qos']['cnp_dscp'] == 46 and n7[1]['qos']['tos'] == 98
    assert gateway_args_list(table, 'n1')[0]['qos']['cnp_dscp'] == 48


def test_a_bad_qos_names_the_host_and_the_override():
    hv = _fleet(3, rails=True, roce_qos={})
    hv['n2']['roce_rail_overrides'] = {'rail0': {'qos': {'tos': 300}}}
    with pytest.raises(GpufabricError) as exc:
        fabric_table(hv)
    assert exc.value.host == 'n2' and exc.value.field == 'roce_rail_overrides.rail0.qos.tos' and exc.value.value == 300


def test_a_rail_qos_without_roce_qos_is_refused():
    hv = _fleet(2, rails=True)
    with pytest.raises(GpufabricError) as exc:
        fabric_table(hv)
    assert exc.value.field == 'roce_rails[rail1].qos' and 'roce_qos' in exc.value.fix


def test_one_rail_nodes_carry_qos_too():
    table = fabric_table(_fleet(2, roce_qos={'tos': 104}))
    assert gateway_args_list(table, 'n1')[0]['qos']['tos'] == 104


# ---- issue 43 class 9: CNPs on RoCE's own DSCP --------------------------------------------------------------------------

def test_cnps_on_roces_own_dscp_are_refused_under_trust_dscp():
    """Before: accepted, and the roce_qos module kept RoCE's DSCP APP entry and dropped the CNPs' (wanted_dscp_apps)."""
    _q, problems = effective_qos({'cnp_dscp': 26})
    ((field, value, problem, fix),) = problems
    assert (field, value) == ('roce_qos.cnp_dscp', 26)
    assert problem.startswith("is RoCE's own DSCP (tos 106 >> 2 = 26): under trust dscp one DSCP maps to one priority")
    assert fix == 'give CNPs a DSCP of their own, e.g. cnp_dscp: 48'
    assert effective_qos({'cnp_dscp': int(fix.rsplit(' ', 1)[1])})[1] == []
    # Under trust pcp CNPs take their priority from cnp_priority (the PCP), not from a DSCP entry.
    assert effective_qos({'cnp_dscp': 26, 'trust': 'pcp'})[1] == []


def test_a_tos_on_the_cnp_dscp_is_blamed_on_the_tos_the_user_set():
    _q, problems = effective_qos({'tos': 192, 'pfc_priorities': [6], 'ecn_priorities': [6]}, {'enabled': True}, None, 'rail1')
    ((field, value, problem, fix),) = problems
    assert (field, value) == ('roce_qos.tos', 192)
    assert 'puts RoCE traffic on DSCP 48 (tos >> 2), the DSCP of CNPs (cnp_dscp 48)' in problem
    cnp = int(fix.split('cnp_dscp: ')[1].split(',')[0])
    tos = int(fix.split('tos: ')[1].rstrip(')'))
    # Both alternatives the fix offers pass.
    assert effective_qos({'tos': 192, 'pfc_priorities': [6], 'ecn_priorities': [6], 'cnp_dscp': cnp})[1] == []
    assert effective_qos({'tos': tos, 'pfc_priorities': [6], 'ecn_priorities': [6]})[1] == []


def test_a_group_qos_mistake_is_one_message_naming_the_nodes():
    with pytest.raises(GpufabricError) as exc:
        fabric_table(_fleet(30, roce_qos={'cnp_dscp': 26}))
    assert not hasattr(exc.value, 'errors')
    assert exc.value.host == 'n0 (and 29 other nodes: n1, n2, n3, ...)' and exc.value.field == 'roce_qos.cnp_dscp'

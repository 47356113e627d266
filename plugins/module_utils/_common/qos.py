# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The QoS model of a lossless (or congestion-controlled) RoCE fabric, per rail (docs/qos.md).

The inventory says it once for the cluster, a rail may differ, and a node may differ on a rail::

    roce_qos: {trust: dscp, pfc_priorities: [3], tos: 106}          # every rail of every node
    roce_rails: [{name: rail0, ..., qos: {tos: 98}}]                 # rail0 of every node
    roce_rail_overrides: {rail0: {qos: {pause_frames: false}}}       # rail0 of this node

Each level is merged key by key over the one before, then over the defaults below. ``roce_qos`` unset (or
``enabled: false``) leaves the NICs' QoS alone, as before: QoS changes how the NIC classifies and pauses
traffic, which must match the switches, so it is opt-in.

The defaults are the NIC Configuration Operator's ``roceOptimized`` ones (v26.4.1: trust dscp, PFC
"0,0,0,1,0,0,0,0", i.e. priority 3), except the ToS: the operator leaves it at 0, which puts RoCE traffic on
DSCP 0, priority 0, outside the lossless priority. 106 is DSCP 26 (AF31, priority 3 under the default
DSCP-to-priority map) with ECT(0), the value NVIDIA's RoCE configuration guides give ``cma_roce_tos`` and
NCCL_IB_TC. ECN on the RoCE priority only (DCQCN reacts on the traffic it protects); CNPs on DSCP 48,
priority 6 (the ConnectX firmware's own CNP settings); link pause off (ConnectX refuses PFC with it on).

The RoCE priority is ``tos >> 5``: under trust dscp the NIC's default map sends DSCP d to priority d >> 3, and
under trust pcp RDMA-CM sets the SL (the PCP) to tos >> 5. Both give the same priority, so one rule checks
that RoCE traffic lands where PFC and ECN are.

Problems are ``(field, value, problem, fix)`` tuples, as in ``_fabric.rails``, so the fabric's error collector names
the host with each."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import json

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import parse_bool

DEFAULTS = {
    'enabled': True,
    'trust': 'dscp',
    'pfc_priorities': [3],
    'tos': 106,
    'ecn_priorities': [3],
    'cnp_dscp': 48,
    'cnp_priority': 6,
    'pause_frames': False,
}
QOS_KEYS = tuple(DEFAULTS)
TRUST_MODES = ('dscp', 'pcp')
EXAMPLE = '{trust: dscp, pfc_priorities: [3], tos: 106, ecn_priorities: [3], cnp_dscp: 48, cnp_priority: 6, pause_frames: false}'


def roce_priority(tos):
    return tos >> 5


def pfc_string(priorities):
    """The PFC enable list as the NIC Configuration Operator and mlnx_qos write it: "0,0,0,1,0,0,0,0"."""
    return ','.join('1' if p in priorities else '0' for p in range(8))


def prio_mask(priorities):
    return sum(1 << p for p in priorities)


def _int(value, low, high):
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and low <= value <= high else None


def _priorities(value):
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        return None
    out = [_int(v, 0, 7) for v in value]
    if None in out or len(set(out)) != len(out):
        return None
    return sorted(out)


def _layer_problems(layer, field):
    if not isinstance(layer, dict):
        return [(field, layer, 'must be a mapping of QoS settings', 'write e.g. %s, or {} for the defaults' % EXAMPLE)]
    unknown = sorted(set(layer) - set(QOS_KEYS))
    if unknown:
        return [(field, unknown, 'unknown key(s)', 'use only: %s' % ', '.join(QOS_KEYS))]
    return []


def _normalise(merged, field):
    """The merged settings converted, or problems naming ``field``.<key>."""
    out, problems = {}, []
    checks = (
        ('enabled', parse_bool, 'is not a boolean', 'write true or false'),
        ('trust', lambda v: v if v in TRUST_MODES else None, 'is not a trust mode (dscp or pcp)',
         'write trust: dscp (classify RoCE by its IP DSCP, what RoCE v2 fabrics use) or pcp (by the VLAN priority)'),
        ('pfc_priorities', _priorities, 'is not a list of distinct priorities 0-7',
         'write e.g. pfc_priorities: [3] (PFC on priority 3), or [] for no PFC'),
        ('tos', lambda v: _int(v, 0, 255), 'is not a ToS byte (0-255)',
         'write the IP ToS of RoCE traffic, DSCP x 4 plus the ECN bits, e.g. tos: 106 (DSCP 26, ECT(0))'),
        ('ecn_priorities', _priorities, 'is not a list of distinct priorities 0-7',
         'write e.g. ecn_priorities: [3] (DCQCN on priority 3), or [] for no ECN'),
        ('cnp_dscp', lambda v: _int(v, 0, 63), 'is not a DSCP (0-63)', 'write e.g. cnp_dscp: 48'),
        ('cnp_priority', lambda v: _int(v, 0, 7), 'is not a priority (0-7)', 'write e.g. cnp_priority: 6'),
        ('pause_frames', parse_bool, 'is not a boolean', 'write pause_frames: false (link pause off; PFC replaces it)'),
    )
    for key, convert, problem, fix in checks:
        value = convert(merged[key])
        if value is None:
            problems.append(('%s.%s' % (field, key), merged[key], problem, fix))
        else:
            out[key] = value
    return out, problems


def _rule_problems(qos, field):
    """Settings that are each valid but together leave RoCE traffic unprotected."""
    problems = []
    prio = roce_priority(qos['tos'])
    if qos['tos'] & 3 == 3:
        problems.append(('%s.tos' % field, qos['tos'], 'sets both ECN bits (CE): every RoCE packet would arrive marked as congested',
                         'use ECT(0) or no ECN bits, e.g. tos: %d' % (qos['tos'] & ~3 | 2)))
    if qos['pfc_priorities'] and prio not in qos['pfc_priorities']:
        problems.append(('%s.tos' % field, qos['tos'], 'puts RoCE traffic on priority %d (tos >> 5), but PFC is on %s'
                         % (prio, qos['pfc_priorities']),
                         'use a ToS whose priority is lossless, e.g. tos: %d (DSCP %d), or add %d to pfc_priorities'
                         % ((qos['pfc_priorities'][0] << 5) | 10, (qos['pfc_priorities'][0] << 3) | 2, prio)))
    if qos['ecn_priorities'] and prio not in qos['ecn_priorities']:
        problems.append(('%s.ecn_priorities' % field, qos['ecn_priorities'], 'leaves out priority %d, the one RoCE traffic uses '
                         '(tos %d >> 5): DCQCN would never slow RoCE down' % (prio, qos['tos']),
                         'add %d to ecn_priorities, or [] to turn ECN off' % prio))
    if qos['pause_frames'] and qos['pfc_priorities']:
        problems.append(('%s.pause_frames' % field, True, 'is on with PFC on %s: a ConnectX port runs link pause or PFC, not both'
                         % qos['pfc_priorities'], 'set pause_frames: false, or pfc_priorities: [] for link pause alone'))
    return problems


def effective_qos(cluster, rail=None, override=None, rail_name=None):
    """The QoS of one rail of one node: ``cluster`` (roce_qos), then the rail's ``qos`` (roce_rails), then the
    node's (roce_rail_overrides.<rail>.qos), each merged key by key over the defaults. Returns ``(qos, problems)``;
    qos is None when QoS is off (roce_qos unset or enabled false) or when there are problems."""
    if cluster is None:
        if rail or override:
            where = 'roce_rail_overrides.%s.qos' % rail_name if override else 'roce_rails[%s].qos' % rail_name
            return None, [(where, override or rail, 'sets QoS, but roce_qos (the cluster\'s QoS) is not set, so QoS is off',
                           'set roce_qos (group_vars/roce_nodes; {} for the defaults), or remove this qos')]
        return None, []
    layers = [('roce_qos', cluster)]
    if rail is not None:
        layers.append(('roce_rails[%s].qos' % rail_name, rail))
    if override is not None:
        layers.append(('roce_rail_overrides.%s.qos' % rail_name, override))
    merged, where, given = dict(DEFAULTS), dict.fromkeys(DEFAULTS, 'roce_qos'), set()
    for field, layer in layers:
        problems = _layer_problems(layer, field)
        if problems:
            return None, problems
        merged.update({k: v for k, v in layer.items() if v is not None})
        where.update(dict.fromkeys(layer, field))
        given.update(k for k, v in layer.items() if v is not None)
    qos, problems = _normalise_blamed(merged, where)
    if problems:
        return None, problems
    if not qos.pop('enabled'):
        return None, []
    field = layers[-1][0] if len(layers) > 1 else 'roce_qos'
    return qos, _rule_problems(qos, field) + _cnp_problems(qos, where, given)


def _cnp_problems(qos, where, given):
    """Under trust dscp each DSCP maps to one priority: CNPs on RoCE's own DSCP would lose their mapping to cnp_priority
    (the roce_qos module keeps the RoCE one). Blamed on the key the user set: cnp_dscp, else tos."""
    roce_dscp = qos['tos'] >> 2
    if qos['trust'] != 'dscp' or qos['cnp_dscp'] != roce_dscp:
        return []
    other = DEFAULTS['cnp_dscp'] if DEFAULTS['cnp_dscp'] != roce_dscp else DEFAULTS['cnp_dscp'] - 2
    problem = ('is RoCE\'s own DSCP (tos %d >> 2 = %d): under trust dscp one DSCP maps to one priority, so CNPs would lose '
               'their mapping to cnp_priority %d and queue with the RoCE traffic they are meant to slow down'
               % (qos['tos'], roce_dscp, qos['cnp_priority']))
    if 'cnp_dscp' in given or 'tos' not in given:
        return [('%s.cnp_dscp' % where['cnp_dscp'], qos['cnp_dscp'], problem,
                 'give CNPs a DSCP of their own, e.g. cnp_dscp: %d' % other)]
    return [('%s.tos' % where['tos'], qos['tos'], 'puts RoCE traffic on DSCP %d (tos >> 2), the DSCP of CNPs (cnp_dscp %d): under '
             'trust dscp one DSCP maps to one priority, so CNPs would lose their mapping to cnp_priority %d'
             % (roce_dscp, qos['cnp_dscp'], qos['cnp_priority']),
             'give CNPs a DSCP of their own, e.g. cnp_dscp: %d, or RoCE another DSCP (a tos on the same priority, e.g. tos: %d)'
             % (other, (roce_dscp ^ 1) << 2 | qos['tos'] & 3))]


def _normalise_blamed(merged, where):
    """_normalise, each problem naming the level that set the bad key."""
    qos, problems = _normalise(merged, 'roce_qos')
    return qos, [('%s.%s' % (where[f.split('.', 1)[1]], f.split('.', 1)[1]), v, p, fix) for f, v, p, fix in problems]


class QosCache:
    """effective_qos of values many nodes share (the group's roce_qos and roce_rails objects): computed once per distinct
    value, not once per node and rail (80,000 times at 10,000 nodes x 8 rails)."""

    def __init__(self):
        self._seen = {}

    def get(self, cluster, rail=None, override=None, rail_name=None):
        try:
            key = json.dumps([cluster, rail, override, rail_name], sort_keys=True, default=str)
        except (TypeError, ValueError):
            return effective_qos(cluster, rail, override, rail_name)
        if key not in self._seen:
            qos, problems = effective_qos(cluster, rail, override, rail_name)
            self._seen[key] = (qos, problems)
        qos, problems = self._seen[key]
        return (dict(qos, pfc_priorities=list(qos['pfc_priorities']), ecn_priorities=list(qos['ecn_priorities']))
                if qos is not None else None), list(problems)

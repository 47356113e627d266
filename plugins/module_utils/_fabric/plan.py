# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric plan: the whole cluster's pod network, validated once, as one JSON document.

A plan wraps the validated table of ``_fabric.pod_network.fabric_table`` (per node, or per node and rail: PF, VLAN,
MTU, subnet, gateway; per rail also the VF count, the PF whose VFs are made and the per-VF settings) with:

- ``complete``: whether the run that computed it saw the whole fabric. Only a complete plan lets a node's
  gateway remove routes its plan does not list (``purge_routes``); an incomplete one only adds routes.
- ``nodes``, ``order`` and ``fingerprint``: the node count, the nodes in roce_nodes order (the routes' order) and the
  sha256 of all of the plan but the fingerprint (``complete`` included), so that a plan changed by hand or cut short is
  refused, not half used.

A plan read back (``check_plan``: ``roce_plan``) is trusted no more than the inventory: its table goes through the
rules that made it (``_fabric.pod_network.fabric_table``, from the variables that give it), and this run's own nodes must
still have the variables that give their entries (``drift``).

A node's slice (``node_slice``) is its gateways with their routes, derived from the table: routes are
kept by reference (each rail's subnets and gateways once), not inline, because N nodes x N routes is
800 million entries at 10,000 nodes x 8 rails. The derivation is the one the unsliced run makes, so a
run that reads the plan gives every node the same gateway arguments as the run that wrote it.

Who is complete (``plan_complete``): a run reading ``hostvars`` sees every inventory host whatever
``--limit`` says, so its plan is complete, unless the inventory itself was cut: an AWX job slice gets only
every Nth host and nothing in the job says so (AWX sets no slice variable; see docs/awx.md). Under AWX
(``awx_job_id`` or ``tower_job_id`` set) a plan computed in the job is therefore incomplete unless the job
declares ``roce_inventory_complete: true``; anywhere, ``roce_inventory_complete`` decides when given.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import copy
import hashlib
import json
import os
import re

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, parse_bool, shown_value
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import (
    FabricErrors,
    fabric_table,
    gateway_args_list,
    gateway_entries,
    grouped,
    is_fabric_table,
    qos_via_operator,
    rail_entries,
    route_to,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import SHORTHAND_FIELDS, rail_routes
from ansible_collections.gpufabric.roce.plugins.module_utils._common.route_ranges import compress, without

PLAN_KIND = 'gpufabric.roce/fabric-plan'
# 4: the plan carries what the Kubernetes phases read of each node (``inputs``; 3: every node is a list of rails, a
# one-rail node's one rail named '' with its VF settings; 2: a one-rail node was a flat entry without them; 1: the
# fingerprint covered the table only).
PLAN_VERSION = 4
# A plan's keys. The text also carries INDEX and a plan read back READ_FROM, both derived, never trusted nor covered.
PLAN_KEYS = ('kind', 'version', 'complete', 'nodes', 'order', 'fingerprint', 'fabric', 'inputs')
PLAN_COMMAND = ('ansible-playbook -i <the whole inventory> playbooks/site.yml --tags never -e roce_plan_out=<file> '
                '-e roce_inventory_complete=true')
PLAN_FIX = 'write the plan again with this collection: ' + PLAN_COMMAND


def plan_complete(declared=None, awx_job_id=None):
    """Whether a run computing its plan from its own inventory sees the whole fabric (see the module doc)."""
    if declared is not None and declared != '':
        return _bool(declared)
    return awx_job_id in (None, '')


def _bool(value):
    parsed = parse_bool(value)
    if parsed is not None:
        return parsed
    raise GpufabricError('all roce_nodes', 'roce_inventory_complete', value, 'is not a boolean',
                         'set roce_inventory_complete to true (the inventory has every node of the fabric) or false')


def fingerprint(plan):
    """sha256 of every key of PLAN_KEYS but the fingerprint. Sorted keys: a plan passed through AWX's artifacts may come
    back with its mappings reordered; the nodes' order is ``order``, a list, which is covered as it is."""
    covered = {k: plan.get(k) for k in PLAN_KEYS if k != 'fingerprint'}
    return hashlib.sha256(json.dumps(covered, sort_keys=True, separators=(',', ':'), default=str).encode('utf-8')).hexdigest()


def build_plan(table, complete, inputs=None):
    """The plan of a validated ``fabric_table``; ``inputs``: what the Kubernetes phases read of each node (host -> the
    variables it sets, as the inventory names them), packed by ``pack_inputs``. Without them the plan carries none."""
    plan = {
        'kind': PLAN_KIND,
        'version': PLAN_VERSION,
        'complete': bool(complete),
        'nodes': len(table['nodes']),
        # The nodes' order is the routes' order; kept as a list, which no JSON store reorders.
        'order': list(table['nodes']),
        'fingerprint': None,
        'fabric': table,
        'inputs': pack_inputs(inputs or {}, table['nodes']),
    }
    plan['fingerprint'] = fingerprint(plan)
    return plan


def _canonical(value):
    return json.dumps(value, sort_keys=True, separators=(',', ':'), default=str)


def pack_inputs(inputs, order):
    """``inputs`` (host -> the variables it sets) as a plan carries them: ``common``, each variable every node sets to the
    same value (a group_vars setting), once; ``nodes``, each node's other variables (every node of ``order`` that has
    inputs, ``{}`` when it has no others). Lean: only what a node sets, never a default (the roles' defaults fill in the
    rest where the inputs are read), and a group's setting once, not once per node."""
    hosts = [h for h in order if h in inputs]
    common = {}
    if hosts:
        rest = hosts[1:]
        for key, value in inputs[hosts[0]].items():
            canon = _canonical(value)
            if all(key in inputs[h] and _canonical(inputs[h][key]) == canon for h in rest):
                common[key] = value
    return {'common': common, 'nodes': {h: {k: v for k, v in inputs[h].items() if k not in common} for h in hosts}}


def node_inputs(data, hosts=None):
    """What the Kubernetes phases read of each node (``hosts``, default every node the plan has inputs for): host -> the
    variables it sets, as the inventory names them (``pack_inputs`` unpacked). ``data``: a plan or its JSON text. A host
    the plan has no inputs for is left out."""
    if isinstance(data, str):
        data = _parsed(data)
    packed = data['inputs']
    common, nodes = packed['common'], packed['nodes']
    hosts = list(nodes) if hosts is None else [h for h in hosts if h in nodes]
    return {h: dict(common, **nodes[h]) for h in hosts}


def has_inputs(data, hosts):
    """Whether the plan ``data`` carries the inputs of every host of ``hosts``."""
    nodes = (data.get('inputs') or {}).get('nodes') or {}
    return all(h in nodes for h in hosts)


INDEX = 'route_index'
# Where a plan read back came from (check_plan sets it): a run reading a plan renders the SR-IOV objects only if its
# inventory still gives that plan (check_whole_fabric). Not part of the plan's text (dumps drops it).
READ_FROM = 'read_from'


def route_index(table):
    """Each rail's routes to every node's subnet (via its gateway, onlink), in range form; a one-rail fabric's under
    ''. A node's routes are its rail's ranges without its own subnet (``_common.route_ranges.without``), O(ranges) where
    deriving them from the table is O(nodes) per rail: 0.6 s per node at 10,000 x 8, in every node's worker."""
    by_rail = {}
    for f in table['nodes'].values():
        for r in gateway_entries(f):  # an InfiniBand rail has no gateway to route to
            by_rail.setdefault(r['rail'], []).append(route_to(r))
    return {rail: compress(routes) for rail, routes in by_rail.items()}


def dumps(plan):
    """The plan as JSON text, with its ``route_index``, derived here from the table and not covered by the fingerprint:
    an index a file brings along is replaced, never trusted. Key order is kept (not sorted): the nodes' order is
    the routes' order."""
    if is_plan(plan):
        plan = {k: v for k, v in plan.items() if k != READ_FROM}
        plan[INDEX] = route_index(plan['fabric'])
    return json.dumps(plan, separators=(',', ':')) + '\n'


def is_plan(data):
    return isinstance(data, dict) and data.get('kind') == PLAN_KIND


def _listed(names):
    return ', '.join(names[:10]) + (' (and %d more)' % (len(names) - 10) if len(names) > 10 else '')


def load(path):
    """The document in the plan file ``path`` (roce_plan), parsed. A file that cannot be one (missing, a directory, empty,
    cut short) is refused naming the path, not with the JSON parser's bare message or in a later phase."""
    problem = None
    fix = ('give roce_plan the absolute path of the file roce_plan_out wrote, on the controller (where ansible-playbook runs); '
           'to make one: ' + PLAN_COMMAND)
    if not os.path.exists(path):
        problem = 'does not exist on the controller'
    elif os.path.isdir(path):
        problem = 'is a directory, not a plan file'
    elif not os.path.isfile(path):
        problem = 'is not a regular file'
    else:
        try:
            with open(path, 'rb') as fh:
                raw = fh.read()
        except OSError as exc:
            raise GpufabricError('all roce_nodes', 'roce_plan', path, 'cannot be read: %s' % (exc.strerror or exc),
                                 'let the user ansible-playbook runs as read it, or ' + fix) from None
        fix = PLAN_FIX
        if not raw.strip():
            problem = 'is empty (a write that was cut short, or not the file roce_plan_out wrote)'
        else:
            try:
                return json.loads(raw.decode('utf-8'))
            except UnicodeDecodeError:
                problem = 'is not UTF-8 text, so not a plan file'
            except ValueError as exc:
                # The parser's message names a position only, never the text.
                problem = 'is not JSON (cut short, or not the file roce_plan_out wrote): %s' % exc
    raise GpufabricError('all roce_nodes', 'roce_plan', path, problem, fix)


def _refusal(source, problem, host='all roce_nodes', fix=PLAN_FIX):
    return GpufabricError(host, 'roce_plan', source, problem, fix)


def _check_head(data, source):
    """Everything of a plan but its table's content: kind, version, keys, fingerprint, types, node list and order."""
    if not is_plan(data):
        kind = data.get('kind') if isinstance(data, dict) else type(data).__name__
        raise _refusal(source, 'is not a fabric plan (kind %r, expected %r)' % (kind, PLAN_KIND),
                       fix='give roce_plan the path of a file written by roce_plan_out, or the plan itself (the roce_plan '
                       'artifact of the planning job); %s' % PLAN_FIX)
    version = data.get('version')
    if version != PLAN_VERSION:
        known = isinstance(version, int) and not isinstance(version, bool)
        if known and version < PLAN_VERSION:
            raise _refusal(source, 'was written by an older version of this collection (plan version %d; this one reads version %d, '
                           'which carries what the Kubernetes phases read of each node)' % (version, PLAN_VERSION),
                           fix='write it again with roce_plan_out: ' + PLAN_COMMAND)
        if known:
            raise _refusal(source, 'was written by a newer version of this collection (plan version %d; this one reads version %d)'
                           % (version, PLAN_VERSION), fix='read it with the collection that wrote it, or ' + PLAN_FIX)
        raise _refusal(source, 'has plan version %s; this collection reads version %d' % (shown_value(version), PLAN_VERSION))
    missing = [k for k in PLAN_KEYS if k not in data]
    if missing:
        raise _refusal(source, 'is damaged: it has no %s' % ', '.join(missing))
    unknown = sorted('%s' % k for k in data if k not in PLAN_KEYS and k not in (INDEX, READ_FROM))
    if unknown:
        raise _refusal(source, 'is damaged: it has key(s) a plan does not have: %s' % ', '.join(unknown))
    if data['fingerprint'] != fingerprint(data):
        raise _refusal(source, 'is damaged: its content does not match its fingerprint (edited by hand or cut short)')
    # The fingerprint matches: what follows was written as it is, by hand (the fingerprint computed again) or by a bug.
    if not isinstance(data['complete'], bool):
        raise _refusal(source, 'is damaged: its complete is %s, not true or false' % shown_value(data['complete']))
    table, order = data['fabric'], data['order']
    if not is_fabric_table(table):
        raise _refusal(source, 'is damaged: its fabric is not a fabric table (kind vlan_gateway_fabric, with nodes)')
    if not isinstance(order, list) or not all(isinstance(n, str) for n in order) or len(set(order)) != len(order) \
            or len(order) != len(table['nodes']) or any(n not in table['nodes'] for n in order):
        raise _refusal(source, 'is damaged: its node order does not list each of its nodes once')
    nodes = data['nodes']
    if isinstance(nodes, bool) or nodes != len(order):
        raise _refusal(source, 'is damaged: its node count is %s, but it has %d nodes' % (shown_value(nodes), len(order)))
    packed = data['inputs']
    if not isinstance(packed, dict) or sorted(packed) != ['common', 'nodes'] or not isinstance(packed['common'], dict) \
            or not isinstance(packed['nodes'], dict) or not all(isinstance(v, dict) for v in packed['nodes'].values()):
        raise _refusal(source, 'is damaged: its inputs are not the common and per-node variables a plan carries')
    strays = [n for n in packed['nodes'] if n not in table['nodes']]
    if strays:
        raise _refusal(source, 'is damaged: it has inputs for %s, which are not among its nodes' % _listed(strays))


def _check_input_keys(data, source, keys):
    """Refuse inputs that name a variable the Kubernetes phases do not read (``keys``): a plan carries those only."""
    packed, known = data['inputs'], set(keys)
    for host, own in [('all roce_nodes', packed['common'])] + list(packed['nodes'].items()):
        unknown = sorted('%s' % k for k in own if k not in known)
        if unknown:
            raise _refusal(source, 'is invalid: its inputs have variable(s) no phase reads of a node: %s' % ', '.join(unknown),
                           host=host)


# A table key as a plan names it, from the inventory variable the rules name (check_table reads the table as variables).
_PLAN_KEY = {'roce_pf': 'pf', 'roce_vlan_id': 'vlan_id', 'roce_mtu': 'mtu', 'roce_pod_subnet': 'subnet', 'roce_pod_gateway': 'gateway',
             'roce_qos': 'qos', 'roce_rails': 'rails', 'roce_num_vfs': 'num_vfs', 'roce_sriov_pf': 'sriov_pf', 'roce_qos_via': 'qos_via',
             'sriov_networks_link_type': 'link_type'}
_RAIL_KEY = {'vlan': 'vlan_id', 'name': 'rail'}
_VARIABLE_RE = re.compile(r'\broce_rails\[([^\]]*)\]\.(\w+)|\b(%s)\b' % '|'.join(sorted(_PLAN_KEY, key=len, reverse=True)))


def _plan_words(text):
    """``text`` (a field or a problem of the rules) in the words of a plan: ``roce_rails[rail0].vlan`` is ``rails[rail0].vlan_id``."""
    def word(m):
        if m.group(3):
            return _PLAN_KEY[m.group(3)]
        return 'rails[%s].%s' % (m.group(1), _RAIL_KEY.get(m.group(2), m.group(2)))
    return _VARIABLE_RE.sub(word, '%s' % text)


def _as_variables(table, order, source):
    """The inventory variables that give ``table``'s nodes, each value as the table has it: what fabric_table reads to make
    the table again. A rail's QoS profile sits on the rail, over a cluster QoS that is off, so that a rail without one has
    none. Returns (variables, errors): errors for entries whose shape no variable can have."""
    profiles = table.get('qos_profiles', [])
    if not isinstance(profiles, list) or not all(isinstance(p, dict) for p in profiles):
        raise _refusal(source, 'is invalid: its fabric\'s qos_profiles is not a list of QoS settings')
    out, errors = {}, []

    def profile(node, field, entry):
        index = entry.get('qos')
        if index is None:
            return None
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(profiles):
            errors.append(_refusal(source, 'is invalid: the node\'s %s=%s names no entry of the fabric\'s qos_profiles (%d)'
                                   % (field, shown_value(index), len(profiles)), host=node))
            return None
        return profiles[index]

    for node in order:
        entry = table['nodes'][node]
        if not isinstance(entry, dict):
            errors.append(_refusal(source, 'is invalid: the node\'s entry is not a mapping', host=node))
            continue
        via = {'roce_qos_via': entry['qos_via']} if 'qos_via' in entry else {}
        rails = entry.get('rails')
        if not isinstance(rails, list) or not rails or not all(isinstance(r, dict) for r in rails):
            errors.append(_refusal(source, 'is invalid: the node\'s rails is not a list of rail entries', host=node))
            continue
        if len(rails) == 1 and rails[0].get('rail') == '':
            r = rails[0]  # a one-rail node: its one rail is the one-rail variables
            hv = {'roce_pf': r.get('pf'), 'roce_vlan_id': r.get('vlan_id'), 'roce_mtu': r.get('mtu'),
                  'roce_pod_subnet': r.get('subnet'), 'roce_pod_gateway': r.get('gateway'), 'roce_num_vfs': r.get('num_vfs'),
                  'roce_sriov_pf': r.get('sriov_pf'), 'roce_vfs': r.get('vfs')}
            if 'link_type' in r:
                hv['sriov_networks_link_type'] = r['link_type']
            qos = profile(node, 'qos', r)
            if qos is not None:
                hv['roce_qos'] = qos
            out[node] = dict(hv, **via)
            continue
        roce_rails = []
        for r in rails:
            rail = {'name': r.get('rail'), 'pf': r.get('pf'), 'vlan': r.get('vlan_id'), 'mtu': r.get('mtu'), 'subnet': r.get('subnet'),
                    'gateway': r.get('gateway'), 'num_vfs': r.get('num_vfs'), 'sriov_pf': r.get('sriov_pf'), 'vfs': r.get('vfs'),
                    'link_type': r.get('link_type')}
            qos = profile(node, 'rails[%s].qos' % r.get('rail'), r)
            if qos is not None:
                rail['qos'] = dict(qos, enabled=True)
            roce_rails.append({k: v for k, v in rail.items() if v is not None})
        out[node] = dict({'roce_rails': roce_rails, 'roce_qos': {'enabled': False}}, **via)
    return out, errors


def _entry_difference(have, want):
    """Where a node's entry in the plan (``have``) differs from the one the rules make of its values (``want``)."""
    if have.get('qos_via') != want.get('qos_via'):
        return 'has qos_via=%s where the rules make %s of it' % (shown_value(have.get('qos_via')), shown_value(want.get('qos_via')))
    have_rails, want_rails = list(rail_entries(have)), list(rail_entries(want))
    for h, w in zip(have_rails, want_rails):
        where = 'rails[%s].' % h['rail'] if h['rail'] else ''
        for key in sorted(set(h) | set(w)):
            if key == 'rail' or h.get(key) == w.get(key):
                continue
            if key not in h:
                return 'has no %s%s' % (where, key)
            if key not in w:
                return 'has %s%s, which a plan does not have' % (where, key)
            return 'has %s%s=%s where the rules make %s of it' % (where, key, shown_value(h[key]), shown_value(w[key]))
    return 'has an entry the rules do not make of its values'


def _rule_problem(error):
    """A problem the rules found in a table entry read as variables, in the words of the plan."""
    field = _plan_words(error.field)
    if error.value is None and error.problem.startswith('is not set'):
        return 'is invalid: the node\'s entry has no %s' % field
    return 'is invalid: the node\'s %s=%s: %s' % (field, shown_value(error.value), _plan_words(error.problem))


def check_table(table, order, source):
    """Refuse a plan's table that the rules of a computed plan would not have made: its entries are read as the
    variables that give them and validated by ``fabric_table``, once for every node, and what it makes of them must
    be the table itself (no key missing, none added, every value as the rules write it)."""
    variables, errors = _as_variables(table, order, source)
    if errors:
        _raise(errors, source)
    try:
        made = fabric_table(variables, order)
    except GpufabricError as exc:
        _raise([_refusal(source, _rule_problem(e), host=e.host) for e in getattr(exc, 'errors', [exc])], source)
    if made == table:
        return
    for key in sorted(set(table) | set(made)):
        if key != 'nodes' and table.get(key) != made.get(key):
            raise _refusal(source, 'is invalid: its fabric\'s %s is %s where the rules make %s of its nodes'
                           % (key, shown_value(table.get(key)), shown_value(made.get(key))))
    _raise([_refusal(source, 'is invalid: the node\'s entry %s' % _entry_difference(table['nodes'][n], made['nodes'][n]), host=n)
            for n in order if table['nodes'][n] != made['nodes'][n]], source)


def _input_variables(table, order, packed):
    """Each node's variables as the plan's inputs give them, for ``fabric_table`` to make its entry again. A one-rail
    node's roce_sriov_pf and roce_vfs are no Kubernetes phase's, so no input carries them: they are its entry's."""
    common, nodes = packed['common'], packed['nodes']
    out = {}
    for n in order:
        if n not in nodes:
            continue
        hv = dict(common, **nodes[n])
        entry = table['nodes'][n]
        rails = entry.get('rails') if isinstance(entry, dict) else None
        if hv.get('roce_rails') in (None, []) and isinstance(rails, list) and len(rails) == 1 and isinstance(rails[0], dict):
            hv['roce_sriov_pf'] = rails[0].get('sriov_pf')
            if rails[0].get('vfs'):
                hv['roce_vfs'] = rails[0]['vfs']
        out[n] = hv
    return out


_CONSISTENT_FIX = 'write it again with roce_plan_out, which writes the inputs and the fabric from one inventory: ' + PLAN_COMMAND


def _inconsistent(source, node, field, from_inputs, from_table):
    if field == 'roce_rails':  # a one-rail node's one rail is named '': it has no roce_rails
        from_inputs, from_table = [r for r in from_inputs if r], [r for r in from_table if r]
    return _refusal(source, 'is inconsistent (edited by hand): its inputs give %s=%s, but its fabric has %s=%s'
                    % (field, shown_value(from_inputs), _plan_words(field), shown_value(from_table)), host=node,
                    fix=_CONSISTENT_FIX)


def check_consistent(table, order, source, packed, table_valid=False):
    """Refuse a plan whose inputs give a node other rails than its table has (a plan edited by hand, its fingerprint
    computed again): the render reads the rails from the table and the rest of the node from its inputs, so both must
    be the one inventory's. The inputs go through the rules that made the table (``fabric_table``, the plan builder's
    derivation): when they make the table, the table is one the rules make, and no second pass is needed. Else the table
    is checked first (``check_table``, unless ``table_valid``), then each node's inputs on their own, and the first field
    where a node's inputs and its entry differ is named."""
    variables = _input_variables(table, order, packed)
    positions = {n: i for i, n in enumerate(order)}
    if len(variables) == len(order):
        try:
            if fabric_table(variables, order, positions) == table:
                return
        except GpufabricError:
            pass  # named below, node by node
    if not table_valid:
        check_table(table, order, source)
    errors = []
    for node, hv in variables.items():
        # One node at a time: a rule across nodes (one VLAN per rail, the same rails everywhere) would name the other nodes
        # for this node's edit; the table's cross-node rules have passed.
        try:
            made = fabric_table({node: hv}, [node], positions)
        except GpufabricError as exc:
            e = getattr(exc, 'errors', [exc])[0]
            errors.append(_refusal(source, 'is inconsistent (edited by hand): its inputs give %s=%s, which the rules refuse (%s), '
                                   'where its fabric has an entry for the node' % (e.field, shown_value(e.value), e.problem),
                                   host=node, fix=_CONSISTENT_FIX))
            continue
        planned = dict(table, nodes={node: table['nodes'][node]})
        for _node, field, have, want in _differences(planned, made):
            errors.append(_inconsistent(source, node, field, have, want))
            break  # the first: a field derived from it (a rail's sriov_pf from its pf) would repeat it
    _raise(errors, source)


def _raise(errors, source=None):
    errors = grouped(errors)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise FabricErrors(errors, 'the plan read from %s' % source if source is not None else 'the pod network of the nodes')


def check_plan(data, run_hosts, source='roce_plan', table_of=None, *, input_keys=None, inputs_of=None):
    """``data`` as a plan this run can use: its kind and version known, intact (its fingerprint covers all of it), its
    table one the rules of a computed plan make (``check_table``), and every host of ``run_hosts`` (the roce_nodes of
    this run) in it. Nodes of the plan absent from the run are fine.

    ``table_of(nodes, positions)``: the fabric table this run's variables give ``nodes`` (each at its place in the plan's
    order, which is what its roce_node_index defaults to); when given, those nodes' entries must be the plan's: a plan
    the inventory has moved on from would configure the host phases with the old values (``drift``).

    ``input_keys``: the variables a plan's inputs may name (what the Kubernetes phases read of a node); their values are
    checked where they are read, by the rules of the inventory's (the SR-IOV render validates them as it renders). The
    inputs must give the table (``check_consistent``); ``inputs_of(nodes)``, this run's inputs of ``nodes`` (host -> the
    variables it sets), spares that pass when a run of every node has the plan's inputs and table both."""
    _check_head(data, source)
    if input_keys is not None:
        _check_input_keys(data, source, input_keys)
    table, order = data['fabric'], data['order']
    if list(table['nodes']) != order:
        table = dict(table, nodes={n: table['nodes'][n] for n in order})
        data = dict(data, fabric=table)
    missing = [h for h in run_hosts if h not in table['nodes']]
    if missing:
        raise GpufabricError(missing[0], 'roce_plan', source, 'has no entry for %s of this run (the plan has %d nodes)'
                             % (_listed(missing), len(table['nodes'])),
                             'plan again from an inventory that has these nodes, or remove them from this run (--limit); '
                             + PLAN_FIX)
    if table_of is None:
        check_consistent(table, order, source, data['inputs'])
        return dict(data, **{READ_FROM: source})
    mine = set(run_hosts)
    hosts = [n for n in order if n in mine]
    try:
        current = table_of(hosts, {n: i for i, n in enumerate(order) if n in mine})
    except GpufabricError:
        check_consistent(table, order, source, data['inputs'])  # a plan that is wrong too is named first: the fix is to write it again
        raise
    # A run of every node of the plan whose variables give the plan's table: the rules made it; its inputs must give it too.
    if len(hosts) < len(order) or current != table:
        check_consistent(table, order, source, data['inputs'])
        errors = drift(dict(table, nodes={n: table['nodes'][n] for n in hosts}), current, source,
                       'which the host phases of this run would configure the node with, not with this value')
        if errors:
            _raise(errors)
    elif inputs_of is None or inputs_of(order) != node_inputs(data, order):
        check_consistent(table, order, source, data['inputs'], table_valid=True)
    return dict(data, **{READ_FROM: source})


# The last plan text parsed in this process and its parse. The gateway task's loop items (one per rail) are templated
# in one worker process, each reading the same text: parsed once, not once per rail. One entry: a worker serves one
# host and one task. The parse is only read (node_slice builds new dicts from it).
_LAST_PARSE = [None, None]


def _parsed(text):
    if _LAST_PARSE[0] is not None and _LAST_PARSE[0] == text:
        return _LAST_PARSE[1]
    data = json.loads(text) if text.strip() else {}
    _LAST_PARSE[:] = ['%s' % text, data]
    return data


PHASES = ('network_operator',)


def phase_slice(data, phase, member_keys=()):
    """What a controller phase reads of the plan (``data``, or its JSON text): for ``network_operator``,
    ``{'qos_via_operator', 'members'}``: whether some node's QoS is the NIC Configuration Operator's (roce_qos_via:
    operator), so its NicClusterPolicy deploys that operator whichever group_vars file set it; and, of a plan with
    inputs, the ``member_keys`` (the node group variables) each node sets, for the nodes that set any."""
    if isinstance(data, str):
        data = _parsed(data)
    plan = is_plan(data)
    table = data['fabric'] if plan else data
    if phase not in PHASES:
        raise ValueError('phase %r: not one of %s' % (phase, ', '.join(PHASES)))
    out = {'qos_via_operator': qos_via_operator(table)}
    if plan and member_keys:
        members = {}
        for host, own in node_inputs(data).items():
            set_here = {k: own[k] for k in member_keys if k in own}
            if set_here:
                members[host] = set_here
        out['members'] = members
    return out


_NIC_KEYS = ('rail', 'pf', 'sriov_pf', 'num_vfs', 'mtu')


def node_nics(data, host):
    """What preflight reads of ``host``: each rail's NIC (InfiniBand ones too) as the checks need it - rail, pf,
    sriov_pf, num_vfs, mtu and link_type (eth or ib). ``data``: as for ``node_slice``."""
    if isinstance(data, str):
        data = _parsed(data)
    table = data['fabric'] if is_plan(data) else data
    if host not in table['nodes']:
        raise GpufabricError(host, 'host', host, 'is not in the fabric plan (%d nodes)' % len(table['nodes']),
                             'add the host to group roce_nodes, or plan again from an inventory that has it')
    return [dict({k: r[k] for k in _NIC_KEYS}, link_type=r.get('link_type', 'eth')) for r in rail_entries(table['nodes'][host])]


# What a rail's entry in the table leaves to the node's inputs (roce_rails, and the node's roce_rail_overrides): the names
# of its SR-IOV network and resource, its pods' routes, and the pool its nodes' subnets come from.
_RAIL_NAMES = ('network_name', 'resource_name')
_RAIL_INPUTS = _RAIL_NAMES + ('routes', 'subnet_pool')


def _rail_inputs(inputs, rail, keys):
    """The ``keys`` the node's inputs give rail ``rail``: its roce_rail_overrides over roce_rails, as the rails are merged."""
    listed = next((r for r in inputs.get('roce_rails') or [] if isinstance(r, dict) and r.get('name') == rail), {})
    override = (inputs.get('roce_rail_overrides') or {}).get(rail) or {}
    out = {}
    for key in keys:
        value = override.get(key) if override.get(key) is not None else listed.get(key)
        if value is not None:
            out[key] = value
    return out


# A rail's keys in the render's shape that only some rails have in the table (an InfiniBand rail has neither VLAN nor
# gateway), with the table's names.
_TABLE_RAIL_KEYS = (('vlan', 'vlan_id'), ('gateway', 'gateway'), ('link_type', 'link_type'), ('vfs', 'vfs'))


def table_rails(table, host, inputs):
    """``host``'s rails as the SR-IOV render reads them, in the shape of ``_fabric.rails.node_rails``: each rail's entry
    in the fabric table (pf, VLAN, MTU, subnet, gateway, VF count and settings, link type; ``qos``: the rail's QoS
    profile) with what the node's ``inputs`` give it of _RAIL_INPUTS. None when the table has no entry for ``host``."""
    entry = table.get('nodes', {}).get(host)
    if entry is None:
        return None
    profiles = table.get('qos_profiles') or []
    out = []
    for r in rail_entries(entry):
        rail = {'name': r['rail'], 'pf': r['pf'], 'mtu': r['mtu'], 'subnet': r['subnet'], 'num_vfs': r['num_vfs'], 'sriov_pf': r['sriov_pf']}
        rail.update({key: r[key_in_table] for key, key_in_table in _TABLE_RAIL_KEYS if r.get(key_in_table)})
        if r.get('qos') is not None:
            rail['qos'] = profiles[r['qos']]
        rail.update(_rail_inputs(inputs, r['rail'], _RAIL_INPUTS))
        rail['routes'] = rail_routes(rail)
        out.append(rail)
    return out


def verify_slice(data, hosts):
    """What the verification reads of each host of ``hosts`` (``data``: a plan or its JSON text): host ->
    ``{node_name, rails, tos, inputs}``: its Kubernetes node name (roce_node_name, else the host); its rails, each
    ``{rail}`` with the names roce_rails and roce_rail_overrides give its network and resource (``network_name``,
    ``resource_name``); ``tos``, each rail's QoS ToS (``''``: a one-rail node's rail; None: no QoS); ``inputs``, the
    variables the node sets that the attachments' naming reads (``node_inputs``). A host the plan's table does not
    have (no pod network) has no rails and no ToS."""
    if isinstance(data, str):
        data = _parsed(data)
    # A bare fabric table (the role's input before plans carried inputs) has rails and QoS, no inputs.
    table = data.get('fabric', data)
    profiles = table.get('qos_profiles') or []
    inputs = node_inputs(data, hosts) if 'inputs' in data else {}
    missing = [h for h in hosts if h not in inputs and h not in table.get('nodes', {})]
    if missing:
        raise GpufabricError(missing[0], 'host', missing[0], 'is not in the fabric plan (%s not; it has %d nodes)'
                             % (_listed(missing), len(data['inputs']['nodes'] if 'inputs' in data else table.get('nodes', {}))),
                             'add the host to group roce_nodes, or plan again from an inventory that has it')
    out = {}
    for host in hosts:
        own = inputs.get(host, {})
        rails = rail_entries(table['nodes'][host]) if host in table.get('nodes', {}) else []
        out[host] = {
            'node_name': own['roce_node_name'] if own.get('roce_node_name') not in (None, '') else host,
            'rails': [dict({k: v for k, v in _rail_inputs(own, r['rail'], _RAIL_NAMES).items() if v}, rail=r['rail'])
                      for r in rails if r['rail']],
            'tos': {r['rail']: profiles[r['qos']]['tos'] if r.get('qos') is not None else None for r in rails},
            'inputs': own,
        }
    return out


def node_slice(data, host, routes_apart=False, route_ranges=False):
    """What ``host``'s host phases read: its gateways (one per rail, with their routes and VF settings) and
    whether its gateways may remove routes they do not list. A bare ``fabric_table`` (the role's input before
    plans existed) is read as complete, as it was then.

    ``data`` may also be the plan's JSON text (``dumps``). Under ansible-core 2.19 a plan held as a variable
    reaches a filter as lazy template containers, which wrap and check every nested value on access: at 1,000
    nodes x 8 rails that cost about a thousand times the derivation, per node. Text passes through as one value.

    ``routes_apart``: the rails without their routes, and the routes as ``routes`` (gateway name -> routes).
    Each rail's routes are O(fleet); a task that loops over the rails for their VFs or QoS would otherwise carry
    them in every loop item and every registered result.

    ``route_ranges``: each rail's routes in range form (``_common.route_ranges``): two entries per rail for a pool-carved fabric
    instead of one per other node, in the gateway's arguments, its diff and its registered result alike."""
    cached = isinstance(data, str)
    if cached:
        data = _parsed(data)
    plan = is_plan(data)
    table = data['fabric'] if plan else data
    # The text dumps wrote carries the index: the routes in range form without deriving them from every node.
    index = data.get(INDEX) if cached and plan and route_ranges else None
    out = {'rails': gateway_args_list(table, host, with_routes=index is None), 'purge_routes': bool(data['complete']) if plan else True}
    if index is not None:
        for rail, own in zip(out['rails'], gateway_entries(table['nodes'][host])):
            rail['routes'] = without(copy.deepcopy(index[own['rail']]), route_to(own))
    elif route_ranges:
        for r in out['rails']:
            r['routes'] = compress(r['routes'])
    if cached:
        # A rail's VF settings and QoS profile are the parse's own objects: the caller gets copies, the cache stays intact.
        for r in out['rails']:
            r.update({k: copy.deepcopy(r[k]) for k in ('vfs', 'qos') if k in r})
    if routes_apart:
        out['routes'] = {r['name']: r.pop('routes') for r in out['rails']}
    return out


# The SR-IOV phase (sriov_render with whole_fabric) renders objects for every node of the fabric and prunes the ones it
# did not render; some of them (the NCCL ConfigMap, the drain pools, the shared networks) hold every node at once. A run
# that sees part of the fabric would replace them with its part: under AWX job slicing, the slice that holds the
# controller host would delete every other slice's objects.
SLICE_FIX = ('run the sriov phase from a job that has every node: an unsliced job with roce_inventory_complete: true, or '
             'the workflow\'s last step, unsliced, reading the planning job\'s plan (docs/awx.md); leave it out of a sliced '
             'or partial run (--tags preflight,host_network, or --skip-tags sriov)')


def _field(rail, key):
    """A table key as the inventory names it: a rail's key in roce_rails (``vlan`` for the table's ``vlan_id``), or the
    one-rail variable (``_fabric.rails.SHORTHAND_FIELDS``; ``qos`` is ``roce_qos``)."""
    rail_key = 'vlan' if key == 'vlan_id' else key
    if rail:
        return 'roce_rails[%s].%s' % (rail, rail_key)
    if rail_key == 'link_type':
        return 'sriov_networks_link_type'  # a one-rail node's, the sriov_networks role's
    return SHORTHAND_FIELDS.get(rail_key, 'roce_' + rail_key)


def check_whole_fabric(plan, hosts, declared=None):
    """Refuse, before anything is rendered, a run whose SR-IOV objects would cover part of the fabric only. ``plan``: this
    run's plan (computed or read back, or None: nothing to check); ``hosts``: the hosts the objects are rendered for.

    - An incomplete plan (a possible AWX job slice, ``roce_inventory_complete: false``) is refused.
    - A plan read back (``roce_plan``): every node of it must be rendered. The render reads each node from the plan
      (``node_inputs``), as the host phases do, so the objects match what the host phases configured."""
    if not is_plan(plan):
        return
    source = plan.get(READ_FROM)
    if not plan.get('complete'):
        if source is not None:
            raise GpufabricError('all roce_nodes', 'roce_plan', source, 'was written by a run that may have seen part of the '
                                 'fabric (complete: false), and the sriov phase renders objects for every node', PLAN_FIX)
        raise GpufabricError('all roce_nodes', 'roce_inventory_complete', declared,
                             'this run may see part of the fabric only (an AWX job, which may be a job slice, or '
                             'roce_inventory_complete: false), and the sriov phase would replace and prune the other '
                             'nodes\' SR-IOV objects with this run\'s share', SLICE_FIX)
    if source is None:
        return
    rendered = set(hosts)
    missing = [n for n in plan['order'] if n not in rendered]
    if missing:
        raise GpufabricError(missing[0], 'roce_plan', source, 'has %d node(s) this run does not render: %s; the sriov phase would '
                             'prune their SR-IOV objects' % (len(missing), _listed(missing)), SLICE_FIX)


def check_rendered_hosts(plan, hosts):
    """Refuse a host to render that a plan read back (``roce_plan``) has no inputs for: the render reads every node from
    that plan, as the host phases did."""
    source = plan.get(READ_FROM)
    nodes = (plan.get('inputs') or {}).get('nodes') or {}
    missing = [h for h in hosts if h not in nodes]
    if source is not None and missing:
        raise GpufabricError(missing[0], 'roce_plan', source, 'has no entry for %s, which this run renders (sriov_networks_hosts)'
                             % _listed(missing), 'plan again from an inventory that has these nodes, or leave them out of '
                             'sriov_networks_hosts; ' + PLAN_FIX)


def _resolved(table, entry):
    """A table entry with its QoS profile in place of the profile's index (indices differ between tables)."""
    if 'qos' not in entry:
        return entry
    return dict(entry, qos=table.get('qos_profiles', [])[entry['qos']])


def drift(planned, current, source, why):
    """GpufabricErrors, one per node and field, where ``current`` (this run's table) differs from ``planned``; ``why``
    the difference matters."""
    fix = ('write the plan again from this inventory and run the host phases with it (%s), or set the value back to the '
           'planned one' % PLAN_COMMAND)
    errors = []
    for node, field, have, want in _differences(planned, current):
        if field == 'roce_rails':
            errors.append(GpufabricError(node, field, have, 'differs from the rails of the plan read from %s (%s)'
                                         % (source, ', '.join(want) or 'one rail'), fix))
        else:
            errors.append(GpufabricError(node, field, have, 'differs from the plan read from %s (%s), %s' % (source, json.dumps(want), why), fix))
    return errors


def _differences(planned, current):
    """``(node, field as the inventory names it, current value, planned value)`` for each field of a node where the table
    ``current`` differs from ``planned``; a node whose rails differ is named for its rails' names only."""
    # Equal entries are equal nodes when the QoS profiles their indices point into are equal too: the common case, without
    # a field-by-field walk (80,000 entries at 10,000 x 8).
    same_profiles = planned.get('qos_profiles') == current.get('qos_profiles')
    for node, want in planned['nodes'].items():
        have = current['nodes'].get(node)
        if same_profiles and have == want:
            continue
        if have and want.get('qos_via') != have.get('qos_via'):
            yield node, 'roce_qos_via', have.get('qos_via') or 'host', want.get('qos_via') or 'host'
        want_rails, have_rails = list(rail_entries(want)), list(rail_entries(have)) if have else []
        names = [r['rail'] for r in want_rails]
        if [r['rail'] for r in have_rails] != names:
            yield node, 'roce_rails', [r['rail'] for r in have_rails], names
            continue
        for planned_rail, current_rail in zip(want_rails, have_rails):
            w, h = _resolved(planned, planned_rail), _resolved(current, current_rail)
            for key in sorted(set(w) | set(h)):
                if key != 'rail' and w.get(key) != h.get(key):
                    yield node, _field(w['rail'], key), h.get(key), w.get(key)

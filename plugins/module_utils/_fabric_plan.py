# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric plan: the whole cluster's pod network, validated once, as one JSON document.

A plan wraps the validated table of ``_pod_network.fabric_table`` (per node, or per node and rail: PF, VLAN,
MTU, subnet, gateway; per rail also the VF count, the PF whose VFs are made and the per-VF settings) with:

- ``complete``: whether the run that computed it saw the whole fabric. Only a complete plan lets a node's
  gateway remove routes its plan does not list (``purge_routes``); an incomplete one only adds routes.
- ``nodes`` and ``fingerprint``: the node count and the sha256 of the table, so that a run reading the
  plan can name the plan it read.

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

from ansible_collections.gpufabric.roce.plugins.module_utils._common import GpufabricError, parse_bool
from ansible_collections.gpufabric.roce.plugins.module_utils._pod_network import FabricErrors, gateway_args_list, is_fabric_table, rail_entries, route_to
from ansible_collections.gpufabric.roce.plugins.module_utils._rails import SHORTHAND_FIELDS
from ansible_collections.gpufabric.roce.plugins.module_utils._route_ranges import compress, without

PLAN_KIND = 'gpufabric.roce/fabric-plan'
PLAN_VERSION = 1
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


def fingerprint(table):
    # Sorted keys: a plan passed through AWX's artifacts may come back with its mappings reordered.
    return hashlib.sha256(json.dumps(table, sort_keys=True, separators=(',', ':')).encode('utf-8')).hexdigest()


def build_plan(table, complete):
    """The plan of a validated ``fabric_table``."""
    return {
        'kind': PLAN_KIND,
        'version': PLAN_VERSION,
        'complete': bool(complete),
        'nodes': len(table['nodes']),
        # The nodes' order is the routes' order; kept as a list, which no JSON store reorders.
        'order': list(table['nodes']),
        'fingerprint': fingerprint(table),
        'fabric': table,
    }


INDEX = 'route_index'
# Where a plan read back came from (check_plan sets it): a run reading a plan renders the SR-IOV objects only if its
# inventory still gives that plan (check_whole_fabric). Not part of the plan's text (dumps drops it).
READ_FROM = 'read_from'


def route_index(table):
    """Each rail's routes to every node's subnet (via its gateway, onlink), in range form; a one-rail fabric's under
    ''. A node's routes are its rail's ranges without its own subnet (``_route_ranges.without``), O(ranges) where
    deriving them from the table is O(nodes) per rail: 0.6 s per node at 10,000 x 8, in every node's worker."""
    by_rail = {}
    for f in table['nodes'].values():
        for r in rail_entries(f):
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


def check_plan(data, run_hosts, source='roce_plan'):
    """``data`` as a plan this run can use: its kind and version known, its table intact, and every host
    of ``run_hosts`` (the roce_nodes of this run) in it. Nodes of the plan absent from the run are fine."""
    if not is_plan(data):
        kind = data.get('kind') if isinstance(data, dict) else type(data).__name__
        raise GpufabricError('all roce_nodes', 'roce_plan', source, 'is not a fabric plan (kind %r, expected %r)' % (kind, PLAN_KIND),
                             'give roce_plan the path of a file written by roce_plan_out, or the plan itself (the roce_plan '
                             'artifact of the planning job); %s' % PLAN_FIX)
    if data.get('version') != PLAN_VERSION:
        raise GpufabricError('all roce_nodes', 'roce_plan', source, 'has plan version %r; this collection reads version %d'
                             % (data.get('version'), PLAN_VERSION), PLAN_FIX)
    table = data.get('fabric')
    if not is_fabric_table(table) or data.get('fingerprint') != fingerprint(table):
        raise GpufabricError('all roce_nodes', 'roce_plan', source, 'is damaged: its fabric does not match its fingerprint '
                             '(edited by hand or truncated)', PLAN_FIX)
    order = data.get('order')
    if not isinstance(order, list) or sorted(order) != sorted(table['nodes']):
        raise GpufabricError('all roce_nodes', 'roce_plan', source, 'is damaged: its node order does not list its nodes', PLAN_FIX)
    if list(table['nodes']) != order:
        table = dict(table, nodes={n: table['nodes'][n] for n in order})
        data = dict(data, fabric=table)
    missing = [h for h in run_hosts if h not in table['nodes']]
    if missing:
        raise GpufabricError(missing[0], 'roce_plan', source, 'has no entry for %s of this run (the plan has %d nodes)'
                             % (_listed(missing), len(table['nodes'])),
                             'plan again from an inventory that has these nodes, or remove them from this run (--limit); '
                             + PLAN_FIX)
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

    ``route_ranges``: each rail's routes in range form (``_route_ranges``): two entries per rail for a pool-carved fabric
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
        for rail, own in zip(out['rails'], rail_entries(table['nodes'][host])):
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
    one-rail variable (``_rails.SHORTHAND_FIELDS``; ``qos`` is ``roce_qos``)."""
    rail_key = 'vlan' if key == 'vlan_id' else key
    if rail:
        return 'roce_rails[%s].%s' % (rail, rail_key)
    return SHORTHAND_FIELDS.get(rail_key, 'roce_' + rail_key)


def check_whole_fabric(plan, hosts, table_of, declared=None):
    """Refuse, before anything is rendered, a run whose SR-IOV objects would cover part of the fabric only, or a fabric
    other than the plan's. ``plan``: this run's plan (computed or read back, or None: nothing to check); ``hosts``: the
    hosts the objects are rendered for; ``table_of(nodes)``: the fabric table this run's variables give for ``nodes``.

    - An incomplete plan (a possible AWX job slice, ``roce_inventory_complete: false``) is refused.
    - A plan read back (``roce_plan``): every node of it must be rendered, and this run's variables must give the same
      table: the host phases configured the nodes from the plan, so objects rendered from changed variables would not
      match them (another VLAN or MTU on the VFs than on the gateways). A plan computed in the run is its variables."""
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
    errors = drift(plan['fabric'], table_of(plan['order']), source)
    if errors:
        raise errors[0] if len(errors) == 1 else FabricErrors(errors)


def _resolved(table, entry):
    """A table entry with its QoS profile in place of the profile's index (indices differ between tables)."""
    if 'qos' not in entry:
        return entry
    return dict(entry, qos=table.get('qos_profiles', [])[entry['qos']])


def drift(planned, current, source):
    """GpufabricErrors, one per node and field, where ``current`` (this run's table) differs from ``planned``."""
    errors = []
    fix = ('write the plan again from this inventory and run the host phases with it (%s), or set the value back to the '
           'planned one' % PLAN_COMMAND)
    # Equal entries are equal nodes when the QoS profiles their indices point into are equal too: the common case, without
    # a field-by-field walk (80,000 entries at 10,000 x 8).
    same_profiles = planned.get('qos_profiles') == current.get('qos_profiles')
    for node, want in planned['nodes'].items():
        have = current['nodes'].get(node)
        if same_profiles and have == want:
            continue
        want_rails, have_rails = list(rail_entries(want)), list(rail_entries(have)) if have else []
        names = [r['rail'] for r in want_rails]
        if [r['rail'] for r in have_rails] != names:
            errors.append(GpufabricError(node, 'roce_rails', [r['rail'] for r in have_rails], 'differs from the rails of the plan '
                                         'read from %s (%s)' % (source, ', '.join(names) or 'one rail'), fix))
            continue
        for planned_rail, current_rail in zip(want_rails, have_rails):
            w, h = _resolved(planned, planned_rail), _resolved(current, current_rail)
            for key in sorted(set(w) | set(h)):
                if key != 'rail' and w.get(key) != h.get(key):
                    errors.append(GpufabricError(node, _field(w['rail'], key), h.get(key), 'differs from the plan read from %s (%s), which '
                                                 'the host phases configured the node with' % (source, json.dumps(w.get(key))), fix))
    return errors

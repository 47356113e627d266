# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over the fabric plan (module_utils/_fabric/plan.py; docs/awx.md, "One fabric plan")."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import json

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, plain
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _plan_builder
from ansible_collections.gpufabric.roce.plugins.plugin_utils._raw_vars import view as _view


def fabric_plan(hostvars, nodes=None, complete=None, awx_job_id=None):
    try:
        return _plan_builder.build(hostvars, nodes, fp.plan_complete(complete, awx_job_id))
    except (GpufabricError, ValueError) as exc:
        raise AnsibleFilterError(str(exc)) from exc


def fabric_plan_read(data, run_hosts, source=None, hostvars=None):
    try:
        data = plain(data)
        if isinstance(data, str):
            # The path roce_plan names: read here, so that a file that is no plan is refused naming it.
            source, data = data, fp.load(data)
        table_of = None
        if hostvars is not None:
            rows = _view(hostvars)

            def table_of(nodes, positions):
                return fabric_table(rows, nodes, positions)

        return fp.check_plan(data, [str(h) for h in run_hosts or []], '%s' % (source or 'roce_plan'), table_of,
                             input_keys=_plan_builder.NODE_KEYS)
    except GpufabricError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def fabric_plan_node(data, host, routes_apart=False, route_ranges=False, nics=False):
    try:
        if nics:
            return {'nics': fp.node_nics(data, '%s' % host)}
        return fp.node_slice(data, host, routes_apart=bool(routes_apart), route_ranges=bool(route_ranges))
    except json.JSONDecodeError as exc:
        raise AnsibleFilterError('fabric_plan_node: the plan given as text is not JSON (%s); give the plan itself or the '
                                 'text fabric_plan_json wrote' % exc) from exc
    except GpufabricError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def fabric_plan_slice(data, phase):
    try:
        return fp.phase_slice(data, '%s' % phase)
    except json.JSONDecodeError as exc:
        raise AnsibleFilterError('fabric_plan_slice: the plan given as text is not JSON (%s); give the plan itself or the '
                                 'text fabric_plan_json wrote' % exc) from exc
    except ValueError as exc:
        raise AnsibleFilterError('fabric_plan_slice: %s' % exc) from exc


def fabric_plan_json(data):
    return fp.dumps(plain(data))


class FilterModule(object):
    def filters(self):
        return {'fabric_plan': fabric_plan, 'fabric_plan_read': fabric_plan_read, 'fabric_plan_node': fabric_plan_node,
                'fabric_plan_json': fabric_plan_json, '_fabric_plan_slice': fabric_plan_slice}

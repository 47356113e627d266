# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over the fabric plan (module_utils/_fabric/plan.py; docs/awx.md, "One fabric plan")."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import json
from contextlib import contextmanager

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, plain
from ansible_collections.gpufabric.roce.plugins.module_utils._common.qos import effective_qos
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import (
    node_network_name,
    node_resource_name,
    rail_network_name,
    rail_resource_name,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.node_policy import MEMBER_FIELDS
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nv_ipam import pool_name, pool_resource_name
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.rdma_report import ReportError, fabric_nodes
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _plan_builder
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults


@contextmanager
def _plan_errors(filter_name, named=False):
    """A plan given as text that is not JSON, in one message; the collection's own errors as they are (``named``: after
    the filter's name)."""
    try:
        yield
    except json.JSONDecodeError as exc:
        raise AnsibleFilterError('%s: the plan given as text is not JSON (%s); give the plan itself or the text '
                                 'fabric_plan_json wrote' % (filter_name, exc)) from exc
    except (GpufabricError, ReportError, ValueError) as exc:
        raise AnsibleFilterError('%s: %s' % (filter_name, exc) if named else str(exc)) from exc


def fabric_plan(hostvars, nodes=None, complete=None, awx_job_id=None):
    try:
        return _plan_builder.build(hostvars, nodes, fp.plan_complete(complete, awx_job_id))
    except (GpufabricError, ValueError) as exc:
        raise AnsibleFilterError(str(exc)) from exc


def fabric_has_pod_network(hostvars, host):
    try:
        return _plan_builder.has_pod_network(hostvars, host)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def fabric_plan_read(data, run_hosts, source=None, hostvars=None):
    try:
        data = plain(data)
        if isinstance(data, str):
            # The path roce_plan names: read here, so that a file that is no plan is refused naming it.
            source, data = data, fp.load(data)
        table_of = inputs_of = None
        if hostvars is not None:

            def table_of(nodes, positions):
                return _plan_builder.table(hostvars, nodes, positions)

            def inputs_of(nodes):
                return _plan_builder.Inventory(hostvars, nodes).inputs

        return fp.check_plan(data, [str(h) for h in run_hosts or []], '%s' % (source or 'roce_plan'), table_of,
                             input_keys=_plan_builder.NODE_KEYS, inputs_of=inputs_of)
    except (GpufabricError, ValueError) as exc:
        raise AnsibleFilterError(str(exc)) from exc


def fabric_plan_node(data, host, routes_apart=False, route_ranges=False, nics=False):
    with _plan_errors('fabric_plan_node'):
        if nics:
            return {'nics': fp.node_nics(data, '%s' % host)}
        return fp.node_slice(data, host, routes_apart=bool(routes_apart), route_ranges=bool(route_ranges))


def fabric_plan_slice(data, phase):
    with _plan_errors('fabric_plan_slice', named=True):
        return fp.phase_slice(data, '%s' % phase, member_keys=MEMBER_FIELDS)


def _attachments(node, name_prefix, resource_prefix, ipam, nv_ipam_pool):
    """The SriovNetwork and SR-IOV resource a test pod on the node attaches to, as the sriov_networks role names them
    (its naming functions): per rail (nv-ipam without a pool name: the rail's one network and resource for every node;
    else the node's own per rail), and for a one-rail node (host-local: the node's own; a cluster-wide IPAM: the
    cluster's one). A node's rdma_verify_pod_network / rdma_verify_pod_resource, and its sriov_networks_resource_name,
    win."""
    own, name = node['inputs'], node['node_name']
    per_rail_pool, per_node = ipam == 'nv-ipam' and not nv_ipam_pool, ipam == 'host-local'
    rails = []
    for r in node['rails']:
        rail = dict(r, name=r['rail'])
        network = pool_name(name_prefix, rail) if per_rail_pool else rail_network_name(name_prefix, name, rail)
        resource = pool_resource_name(name_prefix, rail) if per_rail_pool else rail_resource_name(name_prefix, name, rail)
        rails.append({'rail': r['rail'], 'network': network, 'resource': '%s/%s' % (resource_prefix, resource)})
    resource = own.get('sriov_networks_resource_name') or node_resource_name(name_prefix, name, per_node)
    return {'network': own.get('rdma_verify_pod_network') or (node_network_name(name_prefix, name) if per_node else name_prefix),
            'resource': own.get('rdma_verify_pod_resource') or '%s/%s' % (resource_prefix, resource), 'rails': rails}


def _inputs_tos(host, node):
    """A node the plan's table does not have (no pod network): its QoS is roce_qos alone."""
    qos, problems = effective_qos(node['inputs'].get('roce_qos'))
    if problems:
        field, value, problem, fix = problems[0]
        raise GpufabricError(host, field, value, problem, fix)
    return {'': qos['tos'] if qos else None}


# What the sriov_networks role names its networks and resources by; unset, its defaults/main.yml's values.
_NAMING_KEYS = ('sriov_networks_name_prefix', 'sriov_networks_resource_prefix', 'sriov_networks_ipam', 'sriov_networks_nv_ipam_pool')


def _source(filter_name, data, hosts, hostvars, nodes):
    """The plan given (``data``), else what the plan builder reads of the inventory for the verification."""
    data = plain(data) if not isinstance(data, str) else data
    if data:
        return data
    if hostvars is None:
        raise AnsibleFilterError('%s: no plan (empty) and no hostvars to plan from' % filter_name)
    return _plan_builder.verify_source(hostvars, hosts, nodes)


def fabric_plan_verify(data, hosts, name_prefix=None, resource_prefix=None, ipam=None, nv_ipam_pool=None,  # noqa: PLR0913,PLR0917 - filter
                       hostvars=None, nodes=None, operator_resource_prefix=None):
    with _plan_errors('_fabric_plan_verify'):
        hosts = [str(h) for h in hosts or []]
        data = _source('_fabric_plan_verify', data, hosts, hostvars, nodes)
        naming = with_role_defaults('sriov_networks', _NAMING_KEYS, dict(zip(_NAMING_KEYS, plain([name_prefix, resource_prefix, ipam, nv_ipam_pool]))),
                                    others={'network_operator_resource_prefix': plain(operator_resource_prefix)})
        out = []
        for host, node in fp.verify_slice(data, hosts).items():
            tos = node['tos'] if node['tos'] else _inputs_tos(host, node)
            out.append(dict(_attachments(node, *(naming[k] for k in _NAMING_KEYS)), host=host, node_name=node['node_name'], tos=tos))
        return out


def fabric_plan_ring(data, hosts, address_var='roce_pod_gateway', hostvars=None, nodes=None):
    """rdma_verify's ring in host mode: ``{source, addresses, rails}``. ``source``: the plan (JSON text), or where none was
    given what the plan builder reads of the inventory (the plan when the nodes have a pod network, else their inputs),
    which the ToS are read from too. Each node is reached at its plan's gateway (per rail with rails); a one-rail node at
    the variable ``address_var`` names when that is not roce_pod_gateway, and a node without a pod network always."""
    with _plan_errors('_fabric_plan_ring'):
        hosts = [str(h) for h in hosts or []]
        given = plain(data) if not isinstance(data, str) else data
        data = _source('_fabric_plan_ring', given, hosts, hostvars, nodes)
        text = data if isinstance(data, str) else fp.dumps(data)
        networked = bool(given) or bool(data['fabric']['nodes'])
        ring = fabric_nodes(text, hosts) if networked else None
        if ring is None or (address_var != 'roce_pod_gateway' and not ring['rails']):
            if hostvars is None:
                raise AnsibleFilterError('_fabric_plan_ring: the addresses are in %s, and no hostvars to read them from' % address_var)
            ring = {'addresses': _plan_builder.addresses(hostvars, hosts, address_var), 'rails': None}
        return dict(ring, source=text)


def fabric_plan_json(data):
    return fp.dumps(plain(data))


class FilterModule(object):
    def filters(self):
        return {'fabric_plan': fabric_plan, 'fabric_plan_read': fabric_plan_read, 'fabric_plan_node': fabric_plan_node,
                'fabric_plan_json': fabric_plan_json, '_fabric_plan_slice': fabric_plan_slice, '_fabric_plan_verify': fabric_plan_verify,
                '_fabric_plan_ring': fabric_plan_ring, '_fabric_has_pod_network': fabric_has_pod_network}

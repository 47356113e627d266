# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over the rail model (module_utils/_fabric/rails.py, docs/inventory.md "Rails").

gpufabric.roce._node_rails(node_vars, position)
    The node's rails with per-node subnets and gateways derived ([] for a one-rail node).
gpufabric.roce._rail_attachments(node_vars, node_name, position, name_prefix, resource_prefix, ipam, nv_ipam_pool)
    Per rail, the SriovNetwork and SR-IOV resource a pod on that node attaches to: what the
    sriov_networks role renders for the node, named by the same functions.
gpufabric.roce._pod_attachment(node_vars, node_name, name_prefix, resource_prefix, ipam)
    The same for a one-rail node: {network, resource}.
gpufabric.roce._rail_tos(node_vars, rail=None)
    The ToS of the node's rail (or of a one-rail node) under its QoS (roce_qos, docs/qos.md), None when QoS is off:
    what rdma_verify passes perftest as its traffic class.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import plain
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nv_ipam import pool_name, pool_resource_name
from ansible_collections.gpufabric.roce.plugins.module_utils._common.qos import effective_qos
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import (
    ROCE_DEFAULTS,
    node_network_name,
    node_resource_name,
    rail_network_name,
    rail_resource_name,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import node_rails as _node_rails


_READ = ('roce_rails', 'roce_rail_overrides', 'roce_node_index', 'roce_num_vfs', 'roce_mtu', 'roce_vlan_id')


def _rails(node_vars, position, who):
    hv = {k: plain(node_vars.get(k)) for k in _READ}
    rails, problems = _node_rails(hv, int(position or 0), ROCE_DEFAULTS)
    if problems:
        field, value, problem, fix = problems[0]
        raise AnsibleFilterError('%s: %s=%r: %s. Fix: %s' % (who, field, value, problem, fix))
    return rails or []


def node_rails(node_vars, position=0):
    return _rails(node_vars, position, 'node')


def _rendered_pools(ipam, nv_ipam_pool):
    """nv-ipam without a pool name: the sriov_networks role renders one network and resource per rail."""
    return ipam == 'nv-ipam' and not nv_ipam_pool


def rail_attachments(node_vars, node_name, position=0, name_prefix='roce', resource_prefix='nvidia.com',  # noqa: PLR0913,PLR0917 - filter
                     ipam='host-local', nv_ipam_pool=''):
    per_rail = _rendered_pools(ipam, nv_ipam_pool)
    return [{'rail': r['name'],
             'network': pool_name(name_prefix, r) if per_rail else rail_network_name(name_prefix, node_name, r),
             'resource': '%s/%s' % (resource_prefix, pool_resource_name(name_prefix, r) if per_rail else rail_resource_name(name_prefix, node_name, r))}
            for r in _rails(node_vars, position, node_name)]


def pod_attachment(node_vars, node_name, name_prefix='roce', resource_prefix='nvidia.com', ipam='host-local'):
    """A one-rail node's SriovNetwork and resource as the sriov_networks role names them by default (the renderer's
    naming functions): one per node with host-local, the cluster's one (``<prefix>``, nv-ipam's rendered pool included)
    with a cluster-wide IPAM. A node's own sriov_networks_resource_name wins."""
    own = node_vars.get('sriov_networks_resource_name') if node_vars else None
    per_node = ipam == 'host-local'
    return {'network': node_network_name(name_prefix, node_name) if per_node else name_prefix,
            'resource': '%s/%s' % (resource_prefix, own or node_resource_name(name_prefix, node_name, per_node))}


def rail_tos(node_vars, rail=None):
    """The rail's QoS ToS; the layers are the fabric plan's (validated there, so a problem here is only reported)."""
    cluster = plain(node_vars.get('roce_qos'))
    rail_qos = override = None
    if rail:
        rail_qos = next((r.get('qos') for r in plain(node_vars.get('roce_rails')) or [] if r.get('name') == rail), None)
        override = ((plain(node_vars.get('roce_rail_overrides')) or {}).get(rail) or {}).get('qos')
    qos, problems = effective_qos(cluster, rail_qos, override, rail)
    if problems:
        field, value, problem, fix = problems[0]
        raise AnsibleFilterError('%s=%r: %s. Fix: %s' % (field, value, problem, fix))
    return qos['tos'] if qos else None


class FilterModule(object):
    def filters(self):
        return {'_node_rails': node_rails, '_rail_attachments': rail_attachments, '_pod_attachment': pod_attachment,
                '_rail_tos': rail_tos}

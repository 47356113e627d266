# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over the rail model (module_utils/_fabric/rails.py, docs/inventory.md "Rails").

gpufabric.roce._node_rails(node_vars, position)
    The node's rails with per-node subnets and gateways derived ([] for a one-rail node).
gpufabric.roce._rail_tos(node_vars, rail=None)
    The ToS of the node's rail (or of a one-rail node) under its QoS (roce_qos, docs/qos.md), None when QoS is off: what
    the lab's checks (molecule) compare the kernel's ToS with. The roles read it from the fabric plan
    (gpufabric.roce._fabric_plan_verify).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import plain
from ansible_collections.gpufabric.roce.plugins.module_utils._common.qos import effective_qos
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import ROCE_DEFAULTS
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
        return {'_node_rails': node_rails, '_rail_tos': rail_tos}

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import gateway_args, gateway_args_list
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _plan_builder

# Given hostvars, these read the nodes through the plan builder (the one reader of the fabric's variables); given the
# table of _vlan_gateway_fabric, they read nothing again.


def vlan_gateway_fabric(hostvars, nodes=None):
    try:
        return _plan_builder.table(hostvars, nodes)
    except GpufabricError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def vlan_gateway_plan(hostvars, host, nodes=None):
    try:
        return gateway_args(_plan_builder.node_table(hostvars, host, nodes), host)
    except GpufabricError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def vlan_gateway_plans(hostvars, host, nodes=None):
    try:
        return gateway_args_list(_plan_builder.node_table(hostvars, host, nodes), host)
    except GpufabricError as exc:
        raise AnsibleFilterError(str(exc)) from exc


class FilterModule(object):
    def filters(self):
        return {'_vlan_gateway_fabric': vlan_gateway_fabric, 'vlan_gateway_plan': vlan_gateway_plan, 'vlan_gateway_plans': vlan_gateway_plans}

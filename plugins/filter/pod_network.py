# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table as _fabric
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import vlan_gateway_plan as _plan
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import vlan_gateway_plans as _plans
from ansible_collections.gpufabric.roce.plugins.plugin_utils._raw_vars import view as _view


def vlan_gateway_fabric(hostvars, nodes=None):
    try:
        return _fabric(_view(hostvars), nodes)
    except GpufabricError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def vlan_gateway_plan(hostvars, host, nodes=None):
    try:
        return _plan(_view(hostvars), host, nodes)
    except GpufabricError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def vlan_gateway_plans(hostvars, host, nodes=None):
    try:
        return _plans(_view(hostvars), host, nodes)
    except GpufabricError as exc:
        raise AnsibleFilterError(str(exc)) from exc


class FilterModule(object):
    def filters(self):
        return {'_vlan_gateway_fabric': vlan_gateway_fabric, 'vlan_gateway_plan': vlan_gateway_plan, 'vlan_gateway_plans': vlan_gateway_plans}

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.module_utils._common import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_common import _plain
from ansible_collections.gpufabric.roce.plugins.module_utils._pod_network import fabric_table as _fabric
from ansible_collections.gpufabric.roce.plugins.module_utils._pod_network import vlan_gateway_plan as _plan
from ansible_collections.gpufabric.roce.plugins.module_utils._pod_network import vlan_gateway_plans as _plans


def _is_template(value):
    return isinstance(value, str) and ('{{' in value or '{%' in value)


class _RawFirst(object):
    """One node's variables for the pod-network checks, read once from Ansible's raw host variables.

    ``hostvars[host]`` builds a template engine for the host and templates every value read; at
    1,000 nodes that is most of the plan's time, yet the roce_* values are nearly always plain
    inventory scalars. Plain values are used as they are; only a value that is itself a template
    goes through ``hostvars[host]`` to be rendered in the host's context, and comes back as plain data: a lazy
    container carries the host's whole variable context, which ArgumentSpecValidator's deepcopy (a rail's vfs)
    would then copy once per node and rail."""

    def __init__(self, hostvars, host, raw):
        self._hostvars, self._host, self._raw = hostvars, host, raw

    def __getitem__(self, key):
        value = self._raw[key]
        if _is_template(value) or isinstance(value, (dict, list)):
            return _plain(self._hostvars[self._host][key])
        return value


class _HostVarsView(object):
    def __init__(self, hostvars):
        self._hostvars = hostvars
        self._cache = {}

    def __getitem__(self, host):
        if host not in self._cache:
            raw = self._hostvars.raw_get(host)
            self._cache[host] = _RawFirst(self._hostvars, host, raw) if isinstance(raw, dict) else {}
        return self._cache[host]

    def keys(self):
        return self._hostvars.keys()


def _view(hostvars):
    # Ansible's HostVars has raw_get; plain mappings (tests, a fabric table) are used as they are.
    return _HostVarsView(hostvars) if hasattr(hostvars, 'raw_get') else hostvars


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
        return {'vlan_gateway_fabric': vlan_gateway_fabric, 'vlan_gateway_plan': vlan_gateway_plan, 'vlan_gateway_plans': vlan_gateway_plans}

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters nccl_env (one node's NCCL settings from its rdma_facts), nccl_rails (a node's rails for it, from its gateways),
nccl_collect (every node's settings, as host_network left them) and nccl_configmap (every node's settings as one v1
ConfigMap). The logic is in module_utils/_fabric/nccl.py and _k8s_nccl.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, plain
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import RenderValidationError
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nccl import DEFAULT_NAME
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nccl import nccl_configmap as _configmap
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.nccl import gateway_rails
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.nccl import nccl_env as _env
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _raw_vars


def nccl_env(facts, rails, socket_ifname=None, host='node', strict=False):
    try:
        result = _env(plain(facts), plain(rails), socket_ifname=socket_ifname, host=host)
    except GpufabricError as exc:
        raise AnsibleFilterError(str(exc)) from exc
    if strict and result['problems']:
        raise AnsibleFilterError('%s: NCCL settings incomplete: %s' % (host, ' '.join(result['problems'])))
    return result


def nccl_rails(gateways):
    try:
        return gateway_rails(plain(gateways))
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise AnsibleFilterError('nccl_rails: each gateway needs pf and addresses, as vlan_gateway takes them (%r)' % (exc,)) from exc


def nccl_collect(hostvars, node_names, var='host_network_nccl_env'):
    """``{node name: the host's var}`` for every host of ``node_names`` (inventory host to Kubernetes node name) that has
    ``var``. One raw read per host (_raw_vars): a value is templated only when a template is in it, where
    ``hostvars[host].var`` in a template built a template engine for each host to read a value most do not have."""
    rows, out = _raw_vars.view(hostvars), {}
    for host, node in plain(node_names).items():
        try:
            value = _raw_vars.inputs(rows, host, (var,))
        except ValueError as exc:
            raise AnsibleFilterError(str(exc)) from exc
        if var in value:
            out[node] = value[var]
    return out


def nccl_configmap(nodes, name=DEFAULT_NAME, namespace='default', labels=None):
    try:
        return _configmap(plain(nodes), name=name, namespace=namespace, labels=plain(labels))
    except RenderValidationError as exc:
        raise AnsibleFilterError(str(exc)) from exc


class FilterModule(object):
    def filters(self):
        return {'nccl_env': nccl_env, '_nccl_rails': nccl_rails, '_nccl_collect': nccl_collect, 'nccl_configmap': nccl_configmap}

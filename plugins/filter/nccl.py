# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters nccl_env (one node's NCCL settings from its rdma_facts) and nccl_configmap (every
node's settings as one v1 ConfigMap). The logic is in module_utils/_nccl.py and _k8s_nccl.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.module_utils._common import GpufabricError
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_common import RenderValidationError, _plain
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_nccl import DEFAULT_NAME
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_nccl import nccl_configmap as _configmap
from ansible_collections.gpufabric.roce.plugins.module_utils._nccl import nccl_env as _env


def nccl_env(facts, rails, socket_ifname=None, host='node', strict=False):
    try:
        result = _env(_plain(facts), _plain(rails), socket_ifname=socket_ifname, host=host)
    except GpufabricError as exc:
        raise AnsibleFilterError(str(exc)) from exc
    if strict and result['problems']:
        raise AnsibleFilterError('%s: NCCL settings incomplete: %s' % (host, ' '.join(result['problems'])))
    return result


def nccl_configmap(nodes, name=DEFAULT_NAME, namespace='default', labels=None):
    try:
        return _configmap(_plain(nodes), name=name, namespace=namespace, labels=_plain(labels))
    except RenderValidationError as exc:
        raise AnsibleFilterError(str(exc)) from exc


class FilterModule(object):
    def filters(self):
        return {'nccl_env': nccl_env, 'nccl_configmap': nccl_configmap}

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NCCL settings of every node as one v1 ConfigMap training jobs mount.

One ConfigMap (default ``gpufabric-nccl``), one key per node, ``<node>.env``, holding that node's
settings as ``KEY=value`` lines (shell-quoted where needed), plus ``nodes`` (the node names, one per
line). A pod does not know its node before it is scheduled, so it mounts the whole ConfigMap and
reads its own key, with the node name from the downward API (``spec.nodeName``)::

    env: [{name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
    command: [sh, -c, 'set -a; . /etc/gpufabric-nccl/$NODE_NAME.env; set +a; exec torchrun ...']

One object rather than one per node: a job template names one ConfigMap whatever node it lands
on, and an 8-rail node's entry is about 150 bytes, so 1,000 nodes stay far below the 1 MiB limit
(checked). The node names are the Kubernetes node names (the inventory names when they match).
"""

import re
import shlex

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import (
    DNS_LABEL_RE,
    DNS_SUBDOMAIN_RE,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    _Errors,
)

DEFAULT_NAME = 'gpufabric-nccl'
CONFIGMAP_KEY_RE = re.compile(r'^[-._a-zA-Z0-9]+\Z')
ENV_NAME_RE = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*\Z')
CONFIGMAP_MAX_BYTES = 1024 * 1024  # etcd's object limit; the ConfigMap's data must fit in it


def env_file(env):
    """``KEY=value`` lines, sorted, values shell-quoted when they need it."""
    return ''.join('%s=%s\n' % (k, shlex.quote(str(env[k]))) for k in sorted(env))


def _env_of(value):
    """A node's entry: an ``nccl_env`` result (its ``env``) or a plain ``{NAME: value}`` dict."""
    if isinstance(value, dict) and isinstance(value.get('env'), dict):
        return value['env']
    return value


def nccl_configmap(nodes, name=DEFAULT_NAME, namespace='default', labels=None):
    """v1 ConfigMap of every node's NCCL settings.

    ``nodes``: ``{node name: nccl_env result or {NCCL_*: value}}``. Raises RenderValidationError
    (every problem at once) on invalid names, keys, values or size."""
    errs = _Errors()
    if not isinstance(name, str) or len(name) > 253 or not DNS_SUBDOMAIN_RE.match(name):
        errs.add('nccl_configmap', 'name', name, 'is not a valid ConfigMap name (a DNS-1123 subdomain)',
                 'use lowercase letters, digits, "-" and "." (e.g. gpufabric-nccl)')
    if not isinstance(namespace, str) or len(namespace) > 63 or not DNS_LABEL_RE.match(namespace):
        errs.add('nccl_configmap', 'namespace', namespace, 'is not a valid namespace (a DNS-1123 label)',
                 'use lowercase letters, digits and "-" (e.g. default)')
    if not isinstance(nodes, dict) or not nodes:
        errs.add('nccl_configmap', 'nodes', nodes, 'must be a non-empty dict of node name to NCCL settings',
                 'pass {node: (facts | gpufabric.roce.nccl_env(rails))} for every node')
        errs.raise_if_any()
    data = {}
    for node in sorted(nodes):
        key = '%s.env' % node
        if not isinstance(node, str) or len(key) > 253 or not CONFIGMAP_KEY_RE.match(key):
            errs.add(node, 'node', node, 'cannot be part of a ConfigMap key (letters, digits, "-", "_", "." only)',
                     'use the Kubernetes node name')
            continue
        env = _env_of(nodes[node])
        if not isinstance(env, dict):
            errs.add(node, 'env', env, 'must be a dict of NCCL variables or an nccl_env result',
                     'pass the result of gpufabric.roce.nccl_env for this node')
            continue
        bad = False
        for var, value in env.items():
            if not isinstance(var, str) or not ENV_NAME_RE.match(var):
                errs.add(node, 'env', var, 'is not an environment variable name', 'use names such as NCCL_IB_HCA')
                bad = True
            elif value is None or isinstance(value, (dict, list, bool)):
                errs.add(node, 'env.%s' % var, value, 'must be a string or a number', 'give a scalar value')
                bad = True
        if not bad:
            data[key] = env_file(env)
    nodes_list = sorted(n for n in nodes if isinstance(n, str))
    data['nodes'] = ''.join('%s\n' % n for n in nodes_list)
    size = sum(len(k) + len(v.encode('utf-8')) for k, v in data.items())
    if size > CONFIGMAP_MAX_BYTES:
        errs.add('nccl_configmap', 'nodes', '%d nodes' % len(nodes), 'make a ConfigMap of %d bytes, above the 1 MiB limit' % size,
                 'split the nodes over several ConfigMaps (call the filter per group of nodes with its own name)')
    errs.raise_if_any()
    all_labels = {MANAGED_BY_LABEL: MANAGED_BY_VALUE, 'app.kubernetes.io/name': 'gpufabric-nccl'}
    all_labels.update(labels or {})
    return {
        'apiVersion': 'v1',
        'kind': 'ConfigMap',
        'metadata': {'name': name, 'namespace': namespace, 'labels': all_labels},
        'data': data,
    }

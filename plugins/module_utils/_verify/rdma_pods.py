# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The test pods of ``rdma_verify``'s pod mode: their manifests, where kube-scheduler placed them, and the
addresses Multus gave them. Pure Python, unit-tested; the filters in plugins/filter/rdma_report.py wrap it.

Two shapes, chosen by what the nodes' pods would request:

- **per node** (each node its own network or resource, as host-local IPAM renders them): one pod per node,
  selecting its node by ``kubernetes.io/hostname``;
- **one template** (every node the same networks and resources, as a cluster-wide IPAM such as nv-ipam's
  per-rail pools renders them): N pods of one identical spec, as a training job's workers are. kube-scheduler
  spreads them one per node (required pod anti-affinity on the hostname) among the rollout's nodes (node
  affinity), through the shared resources; which pod lands where is read back, never assumed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import json
import re

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import format_error

MAX_POD_NAME = 63
HOSTNAME = 'kubernetes.io/hostname'
TEMPLATE_LABEL = 'gpufabric.roce/rdma-verify-template'


class PodError(Exception):
    pass


def _err(host, field, value, problem, fix):
    return PodError(format_error(host, field, value, problem, fix))


def _slug(text):
    return re.sub(r'-+', '-', re.sub(r'[^a-z0-9-]', '-', str(text).lower())).strip('-')


def _attachment(node):
    """The node's pod attachment after the checks: ``(node, network annotation, [resources])``."""
    n = node
    if node.get('rails'):
        n = dict(node, network=','.join(r['network'] for r in node['rails']), resource=node['rails'][0]['resource'])
    for field in ('node_name', 'network', 'resource'):
        if not n.get(field):
            raise _err(n.get('host'), {'node_name': 'roce_node_name', 'network': 'rdma_verify_pod_network',
                                       'resource': 'rdma_verify_pod_resource'}[field], n.get(field), 'is empty',
                       'set it per node (see the role README)')
    if '/' not in n['resource']:
        raise _err(n['host'], 'rdma_verify_pod_resource', n['resource'], 'must be <prefix>/<resourceName>',
                   'e.g. nvidia.com/roce_node1')
    return n, n['network'], [r['resource'] for r in n['rails']] if n.get('rails') else [n['resource']]


def _pod_name(settings, suffix, blame):
    """``<prefix>-<suffix>``; ``blame`` is ``(host, field, value)`` of what makes it long: the node's name in a pinned
    pod's, the prefix alone in a one-template pod's (its suffix is an index)."""
    name = '%s-%s' % (settings.get('name_prefix') or 'rdma-verify', suffix)
    if len(name) > MAX_POD_NAME:
        host, field, value = blame
        raise _err(host, field, value, 'the pod name %s is longer than %d characters' % (name, MAX_POD_NAME), 'shorten rdma_verify_pod_name_prefix')
    return name


def _claim_names(network):
    """DRA mode: the ResourceClaimTemplates of a pod's networks, one per network (sriov_networks names each rail's
    template as its network, in the network's namespace, which is the pods')."""
    return [n.strip().rsplit('/', 1)[-1] for n in network.split(',') if n.strip()]


def _pod(name, settings, labels, attachment, placement):
    network, resources = attachment
    container = {
        'name': 'perftest',
        'image': settings['image'],
        'imagePullPolicy': settings.get('image_pull_policy') or 'IfNotPresent',
        'command': list(settings.get('command') or ['sleep', 'infinity']),
        'securityContext': {'capabilities': {'add': ['IPC_LOCK', 'NET_RAW']}},
        'resources': _requests(resources),
    }
    spec = dict(placement, restartPolicy='Never', terminationGracePeriodSeconds=1, containers=[container])
    if settings.get('claims'):
        claims = _claim_names(network)
        container['resources'] = {'claims': [{'name': c} for c in claims]}
        spec['resourceClaims'] = [{'name': c, 'resourceClaimTemplateName': c} for c in claims]
    if settings.get('image_pull_secrets'):
        spec['imagePullSecrets'] = [{'name': s} for s in settings['image_pull_secrets']]
    return {
        'apiVersion': 'v1',
        'kind': 'Pod',
        'metadata': {'name': name, 'namespace': settings.get('namespace') or 'default', 'labels': labels,
                     'annotations': {'k8s.v1.cni.cncf.io/networks': network}},
        'spec': spec,
    }


def pod_manifests(nodes, settings):
    """The test pods. ``nodes``: ``[{'host', 'node_name', 'network', 'resource', 'rails'}]``; ``settings``:
    ``{'namespace', 'image', 'image_pull_policy', 'image_pull_secrets', 'name_prefix', 'command', 'labels', 'claims'}``;
    with ``claims`` (sriov_networks_resource_api: dra) a pod claims its VFs through each network's ResourceClaimTemplate
    instead of requesting the resources.
    A node with ``rails`` (``[{'rail', 'network', 'resource'}]``, gpufabric.roce._fabric_plan_verify) gets one VF of
    every rail: every rail's network in the Multus annotation (net1 is the first rail) and one of every rail's
    resources. Per node, or one template when every node would request the same (the module's docstring)."""
    if not settings.get('image'):
        raise _err('(play)', 'rdma_verify_pod_image', settings.get('image'), 'no test image',
                   'set rdma_verify_pod_image to an image with perftest and ping (mirror it for air-gapped clusters)')
    checked = [_attachment(node) for node in nodes]
    base = {'app.kubernetes.io/name': 'rdma-verify', 'app.kubernetes.io/part-of': 'gpufabric.roce'}
    base.update(settings.get('labels') or {})
    if len(checked) > 1 and len({(network, tuple(resources)) for _n, network, resources in checked}) == 1:
        return _one_template(checked, settings, base)
    out = []
    for n, network, resources in checked:
        labels = dict(base, **{'gpufabric.roce/node': _slug(n['node_name'])})
        name = _pod_name(settings, _slug(n['node_name']), (n['host'], 'roce_node_name', n['node_name']))
        out.append(_pod(name, settings, labels, (network, resources),
                        {'nodeSelector': {HOSTNAME: n['node_name']}}))
    return out


def _one_template(checked, settings, base):
    labels = dict(base, **{TEMPLATE_LABEL: 'shared'})
    placement = {'affinity': {
        'nodeAffinity': {'requiredDuringSchedulingIgnoredDuringExecution': {'nodeSelectorTerms': [
            {'matchExpressions': [{'key': HOSTNAME, 'operator': 'In', 'values': [n['node_name'] for n, _net, _res in checked]}]}]}},
        'podAntiAffinity': {'requiredDuringSchedulingIgnoredDuringExecution': [
            {'labelSelector': {'matchLabels': {'app.kubernetes.io/name': 'rdma-verify', TEMPLATE_LABEL: 'shared'}}, 'topologyKey': HOSTNAME}]},
    }}
    _n, network, resources = checked[0]
    blame = ('(play)', 'rdma_verify_pod_name_prefix', settings.get('name_prefix'))
    return [_pod(_pod_name(settings, str(i), blame), settings, labels, (network, resources), placement) for i in range(len(checked))]


def _requests(resources):
    one_each = {r: '1' for r in resources}
    return {'requests': dict(one_each), 'limits': dict(one_each)}


def _wanted(manifest):
    """The nodes a test pod may land on: its own (per node), or any of the rollout's (one template)."""
    spec = manifest['spec']
    if 'nodeSelector' in spec:
        return [spec['nodeSelector'][HOSTNAME]]
    terms = spec['affinity']['nodeAffinity']['requiredDuringSchedulingIgnoredDuringExecution']['nodeSelectorTerms']
    return list(terms[0]['matchExpressions'][0]['values'])


def pod_placement(live, pods):
    """Where each test pod landed. ``live``: the test pods as read from the API server; ``pods``: the manifests.

    Per pod: ``pod``, ``node`` (its own node; with one template, the node it landed on), ``placed_on``
    (spec.nodeName the scheduler bound it to), ``ready``, ``resource`` (the SR-IOV resources it requested),
    ``ok`` and a one-line ``line``; a pod that was not scheduled carries the scheduler's reason (its
    PodScheduled condition), e.g. Insufficient nvidia.com/... With one template a pod is ``ok`` on any node of
    the rollout that no earlier pod took, so N pods Ready and ok cover the N nodes.
    """
    by_name = {(p.get('metadata') or {}).get('name'): p for p in live or []}
    out, taken = [], set()
    for manifest in pods or []:
        name = manifest['metadata']['name']
        wanted = _wanted(manifest)
        # A multi-rail pod asks for one VF of every rail: all of them are named (DRA mode: the claims' templates).
        asks = manifest['spec']['containers'][0]['resources']
        resource = ', '.join(asks['requests'] if 'requests' in asks else (c['name'] for c in asks['claims']))
        has = ('1 %s' if 'requests' in asks else 'the claims %s') % resource
        live_pod = by_name.get(name) or {}
        placed = (live_pod.get('spec') or {}).get('nodeName') or ''
        conditions = {c.get('type'): c for c in (live_pod.get('status') or {}).get('conditions') or []}
        ready = (conditions.get('Ready') or {}).get('status') == 'True'
        ok = ready and placed in wanted and placed not in taken
        if not live_pod:
            why = 'not found'
        elif not placed:
            sched = conditions.get('PodScheduled') or {}
            why = 'not scheduled: %s' % (sched.get('message') or sched.get('reason') or 'no reason given yet')
        elif placed not in wanted:
            why = 'scheduled on %s instead of %s' % (placed, ' or '.join(wanted))
        elif placed in taken:
            why = 'scheduled on %s, which another test pod already has' % placed
        elif not ready:
            why = 'on %s but not Ready (phase %s)' % (placed, (live_pod.get('status') or {}).get('phase') or 'unknown')
        else:
            why = 'Ready on %s with %s' % (placed, has)
        if placed:
            taken.add(placed)
        out.append({'pod': name, 'node': wanted[0] if len(wanted) == 1 else (placed or None), 'placed_on': placed or None,
                    'ready': ready, 'resource': resource, 'ok': ok, 'line': '%s: %s' % (name, why)})
    return out


def _network_status(pod):
    annotations = ((pod or {}).get('metadata') or {}).get('annotations') or {}
    raw = annotations.get('k8s.v1.cni.cncf.io/network-status') or annotations.get('k8s.v1.cni.cncf.io/networks-status')
    if not raw:
        return []
    try:
        status = json.loads(raw)
    except ValueError:
        return []
    return [net for net in status if isinstance(net, dict)] if isinstance(status, list) else []


def _ipv4(net):
    return next((ip for ip in net.get('ips') or [] if ':' not in ip), None)


def pod_net1_address(pod, interface='net1'):
    """The IPv4 address of ``interface`` from the pod's ``k8s.v1.cni.cncf.io/network-status`` annotation."""
    return next((_ipv4(net) for net in _network_status(pod) if net.get('interface') == interface), None)


def pod_rail_addresses(pod, rails):
    """Each rail's attachment in a test pod, for a ring per rail: ``[{'name', 'address', 'netdev'}]``.

    ``rails`` are the pod's attachments as gpufabric.roce._fabric_plan_verify gives them (``rail``, ``network``).
    Multus names the interfaces net1, net2, ... in request order, but the network-status annotation says
    which network each one is, so the match is by network name (``<namespace>/<network>`` or bare), never by
    position. A rail whose network is missing from the status gets ``address: None``, which the ring plan
    reports as a node without an address.
    """
    status = _network_status(pod)
    out = []
    for rail in rails or []:
        want = rail.get('network')
        net = next((n for n in status if n.get('name') == want or (n.get('name') or '').split('/')[-1] == want), {})
        out.append({'name': rail.get('rail'), 'address': _ipv4(net), 'netdev': net.get('interface')})
    return out

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Several kubernetes.core.k8s_info reads in one module run (gpufabric.roce.k8s_info_many).

A task that loops M(kubernetes.core.k8s_info) over kinds starts one module process per kind, and each start
imports the kubernetes client and builds its API client again: about a second of CPU before the first request.
The SR-IOV phase read nine kinds that way before it changed anything. Here the queries share one process, one
API client and its discovery cache, and each is answered exactly as k8s_info answers it (``K8sService.find``).

Nothing here imports Ansible or the kubernetes client: the module hands in the service, so unit tests can too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

QUERY_KEYS = ('id', 'api_version', 'kind', 'name', 'namespace', 'label_selectors', 'field_selectors')


def check_queries(queries):
    """The queries with their defaults filled in, or ValueError naming the query and the fix."""
    out, seen = [], set()
    for position, query in enumerate(queries or []):
        where = 'queries[%d]' % position
        if not isinstance(query, dict):
            raise ValueError('%s is %r, not a mapping. Fix: give each query as {id, kind, api_version, ...}' % (where, query))
        unknown = sorted(set(query) - set(QUERY_KEYS))
        if unknown:
            raise ValueError('%s has unknown key(s) %s. Fix: use only %s' % (where, ', '.join(unknown), ', '.join(QUERY_KEYS)))
        for key in ('id', 'kind'):
            if not query.get(key):
                raise ValueError('%s has no %s. Fix: give every query an id (its key in answers) and a kind' % (where, key))
        if query['id'] in seen:
            raise ValueError('%s: id %r is used twice. Fix: give each query an id of its own' % (where, query['id']))
        seen.add(query['id'])
        out.append({
            'id': str(query['id']),
            'api_version': query.get('api_version') or 'v1',
            'kind': query['kind'],
            'name': query.get('name') or None,
            'namespace': query.get('namespace') or None,
            'label_selectors': list(query.get('label_selectors') or []),
            'field_selectors': list(query.get('field_selectors') or []),
        })
    return out


def read_all(service, queries):
    """``{id: {api_found, resources}}``: each query answered by ``service.find`` as k8s_info answers it.

    A kind the cluster does not serve (its CRD is not installed) gives ``api_found: false`` and no resources, as in
    k8s_info; any other failure raises, and the module fails with it."""
    answers = {}
    for query in queries:
        facts = service.find(query['kind'], query['api_version'], name=query['name'], namespace=query['namespace'],
                             label_selectors=query['label_selectors'], field_selectors=query['field_selectors'])
        answers[query['id']] = {'api_found': bool(facts.get('api_found')), 'resources': facts.get('resources') or []}
    return answers

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


def check_ids(queries):
    """ValueError naming the query and the fix when two queries share an id; the module's argument spec checks the
    rest (id and kind required, known keys only, k8s_info's defaults), before this runs."""
    seen = set()
    for position, query in enumerate(queries):
        if query['id'] in seen:
            raise ValueError('queries[%d]: id %r is used twice. Fix: give each query an id of its own' % (position, query['id']))
        seen.add(query['id'])


def read_all(service, queries):
    """``{id: {api_found, resources}}``: each query (as the argument spec gives it) answered by ``service.find`` as k8s_info
    answers it.

    A kind the cluster does not serve (its CRD is not installed) gives ``api_found: false`` and no resources, as in
    k8s_info; any other failure raises, and the module fails with it."""
    answers = {}
    for query in queries:
        facts = service.find(query['kind'], query['api_version'], name=query['name'], namespace=query['namespace'],
                             label_selectors=query['label_selectors'], field_selectors=query['field_selectors'])
        answers[query['id']] = {'api_found': bool(facts.get('api_found')), 'resources': facts.get('resources') or []}
    return answers

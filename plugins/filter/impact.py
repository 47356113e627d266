# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the change-impact report (module_utils/_k8s/impact.py; docs/fleet-scale.md, "Change-impact report")."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import impact as im
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import plain

# What the phases leave, read through hostvars (the roles document them as their results): host_network's results on each node (no task of its own per node:
# at 10,000 nodes a set_fact per node would cost more than the report) and sriov_networks' fact on the controller.
HOST_VFS = 'host_network_vfs_result'
# Registered only where the node is drained around a VF reset (host VF mode, host_network_drain, reset allowed).
HOST_DRAIN_PREDICTION = 'host_network_vf_prediction'
HOST_GATEWAYS = 'host_network_gateways_result'
HOST_QOS = 'host_network_qos_result'
CONTROLLER_FACT = 'sriov_networks_impact'


def _host_part(hv):
    if not any(k in hv for k in (HOST_VFS, HOST_GATEWAYS, HOST_QOS)):
        return None

    def results(key):
        return [plain(hv.get(key))] if key in hv else []

    drained = im.reset_predicted(results(HOST_DRAIN_PREDICTION))
    return im.host_impact(results(HOST_VFS), results(HOST_GATEWAYS), drained, results(HOST_QOS))


def impact_operator(rendered, live_policies, node_states, removed=None):
    rendered = plain(rendered or {})
    return {'nodes': {n['host']: n['node_name'] for n in rendered.get('nodes') or []},
            'changes': im.operator_impact(rendered.get('policies') or [], plain(live_policies or []),
                                          plain(node_states or []), plain(removed or []))}


def _raw(hostvars, host):
    # Registered results and facts are data, not templates: read them raw (hostvars[host] would build a template
    # engine per node, most of the report's time at 10,000 nodes).
    if hasattr(hostvars, 'raw_get'):
        raw = hostvars.raw_get(host)
        return raw if isinstance(raw, dict) else {}
    return hostvars.get(host) or {}


def impact_report(hostvars, hosts, controllers=None, check_mode=True, host_results=True):
    # host_results false: the run did not select the host phase, so no node registered anything to read; reading
    # 10,000 nodes' variables to find that out took about 6 s.
    host_parts, operator_parts, node_names = {}, {}, {}
    for host in controllers or []:
        part = plain(_raw(hostvars, host).get(CONTROLLER_FACT))
        if part:
            node_names.update(part['nodes'])
            operator_parts.update(part['changes'])
    for host in (hosts or []) if host_results else []:
        part = _host_part(_raw(hostvars, host))
        if part:
            host_parts[host] = part
    return im.report(list(hosts or []), host_parts, operator_parts, node_names, check_mode)


class FilterModule(object):
    def filters(self):
        return {'_impact_operator': impact_operator, '_impact_report': impact_report}

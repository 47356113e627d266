# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the rdma_verify role: ring plan, ping/perftest output parsing, results matrix and
its table/JUnit/HTML reports, test pod manifests.  The logic lives in module_utils/_verify/rdma_report.py,
module_utils/_verify/rdma_report_html.py, module_utils/_verify/rdma_pods.py and module_utils/_verify/perftest.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible.errors import AnsibleFilterError
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import perftest as _perftest
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_isolation as _rdma_isolation
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_pods as _rdma_pods
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_report as _rdma_report
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_summary as _rdma_summary
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_rounds as _rdma_rounds
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_report_html as _rdma_report_html


def _wrap(fn):
    def inner(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (_rdma_report.ReportError, _rdma_pods.PodError, _perftest.PerftestError) as exc:
            raise AnsibleFilterError(str(exc)) from None
    inner.__name__ = fn.__name__
    inner.__doc__ = fn.__doc__
    return inner


def rdma_verify_plan(nodes, addresses, base_port=18515, rails=None, full_duplex=False):
    return _rdma_report.plan(list(nodes), dict(addresses), int(base_port), rails=dict(rails) if rails else None,
                             full_duplex=bool(full_duplex))


def rdma_verify_isolation_plan(plan, matrix, base_port=18515):
    return _rdma_isolation.isolation_plan(dict(plan), dict(matrix), int(base_port))


def rdma_verify_remeasure_plan(plan, matrix, base_port=18515):
    return _rdma_rounds.remeasure_plan(dict(plan), dict(matrix), int(base_port))


def rdma_verify_round_records(result, host, duty, tests, remeasure=False):
    return _rdma_report.round_records(str(host), dict(duty), list(tests), dict(result or {}), bool(remeasure))


def rdma_verify_verdicts(iso_matrix, iso_plan):
    return _rdma_isolation.verdicts(dict(iso_plan), dict(iso_matrix))


def rdma_verify_pcie_findings(hostvars, hosts):
    """``{node: [message]}``: the PCIe findings rdma_facts left on each node (ansible_facts.rdma.pcie), for the report."""
    out = {}
    for host in hosts:
        try:
            facts = hostvars[host].get('ansible_facts') or {}
        except KeyError:
            continue
        findings = ((facts.get('rdma') or {}).get('pcie') or {}).get('findings') or []
        if findings:
            out[host] = ['%s%s' % ('' if f.get('severity') == 'problem' else 'note: ', f.get('message')) for f in findings]
    return out


def rdma_ping_parse(stdout, rc=None):
    return _rdma_report.parse_ping(stdout, rc)


def perftest_parse(stdout, stderr=''):
    """perftest output (for example from kubernetes.core.k8s_exec in pod mode) -> the module's parsed form."""
    return _perftest.parse_output(stdout, stderr)


def perftest_thresholds(metrics, test, client, server, min_bw_gbps=None, max_lat_us=None):  # noqa: PLR0917 (Jinja passes positionals)
    """The perftest module's threshold checks on already parsed metrics (pod mode): ``{checks, failures}``."""
    params = {'test': test, 'role': 'client', 'server': server, 'min_bw_gbps': min_bw_gbps, 'max_lat_us': max_lat_us}
    checks, failures = _perftest.check_thresholds(client, params, metrics or {}, None, None)
    return {'checks': checks, 'failures': failures}


def rdma_verify_matrix(hostvars, hosts, rounds, tests, records_var='__rdma_verify_records'):
    """Collects every host's records (missing on failed/unreachable hosts) and builds the matrix."""
    records = []
    for host in hosts:
        try:
            hv = hostvars[host]
        except KeyError:
            continue
        recs = hv.get(records_var) if hasattr(hv, 'get') else None
        records.extend(recs or [])
    return _rdma_report.build_matrix(rounds, records, list(tests))


def rdma_report_table(matrix):
    return _rdma_report.render_table(matrix)


def rdma_report_summary(matrix, max_failures=_rdma_summary.MAX_FAILURES):
    return _rdma_summary.summary(matrix, int(max_failures))


def rdma_report_junit(matrix, suite_name='rdma_verify'):
    return _rdma_report.render_junit(matrix, suite_name)


def rdma_report_html(matrix, title='rdma_verify', pass_pct=90):
    return _rdma_report_html.render_html(matrix, title, pass_pct)


def rdma_verify_pod_manifests(nodes, settings):
    return _rdma_pods.pod_manifests(list(nodes), dict(settings))


def rdma_pod_placement(results, pods):
    return _rdma_pods.pod_placement(results, pods)


def rdma_pod_net1_address(pod, interface='net1'):
    return _rdma_pods.pod_net1_address(pod, interface)


def rdma_pod_rail_addresses(pod, rails):
    return _rdma_pods.pod_rail_addresses(pod, rails)


class FilterModule:
    def filters(self):
        return {
            '_rdma_verify_plan': _wrap(rdma_verify_plan),
            '_rdma_verify_isolation_plan': _wrap(rdma_verify_isolation_plan),
            '_rdma_verify_pcie_findings': _wrap(rdma_verify_pcie_findings),
            '_rdma_verify_remeasure_plan': _wrap(rdma_verify_remeasure_plan),
            '_rdma_verify_round_records': _wrap(rdma_verify_round_records),
            '_rdma_verify_verdicts': _wrap(rdma_verify_verdicts),
            '_rdma_ping_parse': _wrap(rdma_ping_parse),
            '_perftest_parse': _wrap(perftest_parse),
            '_perftest_thresholds': _wrap(perftest_thresholds),
            '_rdma_verify_matrix': _wrap(rdma_verify_matrix),
            '_rdma_report_table': _wrap(rdma_report_table),
            '_rdma_report_junit': _wrap(rdma_report_junit),
            'rdma_report_html': _wrap(rdma_report_html),
            '_rdma_report_summary': _wrap(rdma_report_summary),
            '_rdma_verify_pod_manifests': _wrap(rdma_verify_pod_manifests),
            '_rdma_pod_net1_address': _wrap(rdma_pod_net1_address),
            '_rdma_pod_rail_addresses': _wrap(rdma_pod_rail_addresses),
            '_rdma_pod_placement': _wrap(rdma_pod_placement),
        }

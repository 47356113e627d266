# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cross-field rules validate_role_arguments runs for every host before phase 1
(plugins/plugin_utils/_role_checks.py): per-VF roce_vfs entries, the drain's delegate and node name, network_operator_*
values (GitOps settings, the IPAM component), rdma_verify_* values, an empty roce_rails, and the warning about rails whose
ToS differ. Each problem names the field, the value and a fix; the action adds the host."""

import pathlib
from unittest import mock

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.action import ActionBase
from ansible.template import Templar, trust_as_template

from ansible_collections.gpufabric.roce.plugins.module_utils._verify.perftest import PerftestError
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.perftest import validate as perftest_validate
from ansible_collections.gpufabric.roce.plugins.action.validate_role_arguments import ActionModule
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_checks import (
    NOT_SHOWN,
    output_dir_problems,
    redact,
    role_problems,
    role_reads,
    role_warnings,
    secret_field,
)
from roce_default_standin import patched as roce_default_standin

HN = {'host_network_vf_mode': 'host', 'host_network_num_vfs': 8, 'host_network_sriov_pf': 'eni10np1', 'host_network_vfs': []}


def _vf_problems(vfs, **kw):
    return [(f, v, p) for f, v, p, _fix in role_problems('host_network', dict(HN, host_network_vfs=vfs, **kw), 'node1')]


@pytest.mark.parametrize('vfs,expected', [
    ([{'id': 8}], ('host_network_vfs[id=8].id', 8, 'PF eni10np1 will have 8 VFs (ids 0..7)')),
    ([{'id': -1}], ('host_network_vfs[id=-1].id', -1, 'PF eni10np1 will have 8 VFs (ids 0..7)')),
    ([{'id': 1, 'mac': '01:00:5e:00:00:01'}], ('host_network_vfs[id=1].mac', '01:00:5e:00:00:01', 'is a multicast address')),
    ([{'id': 1, 'mac': '02:00:00:00:00:zz'}], ('host_network_vfs[id=1].mac', '02:00:00:00:00:zz', 'is not a MAC address')),
    ([{'id': 2, 'min_tx_rate': 500, 'max_tx_rate': 100}], ('host_network_vfs[id=2].min_tx_rate', 500, 'is above max_tx_rate=100')),
    ([{'id': 3, 'qos': 3, 'vlan': 0}], ('host_network_vfs[id=3].qos', 3, 'a priority needs a VLAN but vlan is 0')),
    ([{'id': 3, 'vlan': 5000}], ('host_network_vfs[id=3].vlan', 5000, 'is outside 0..4094')),
    ([{'id': 4}, {'id': 4, 'trust': True}], ('host_network_vfs[id=4]', 4, 'VF id listed twice')),
])
def test_bad_vf_entries(vfs, expected):
    assert expected in _vf_problems(vfs)


def test_every_bad_vf_is_reported_and_good_ones_pass():
    vfs = [{'id': 0, 'mac': '02:00:00:00:00:01', 'vlan': 100, 'qos': 3, 'trust': True},
           {'id': 9}, {'id': 1, 'mac': '03:00:00:00:00:01'}, {'id': 7, 'min_tx_rate': 10, 'max_tx_rate': 0}]
    assert [f for f, _v, _p in _vf_problems(vfs)] == ['host_network_vfs[id=9].id', 'host_network_vfs[id=1].mac']


def test_vfs_are_not_checked_in_operator_mode_and_num_vfs_zero_is_named():
    assert _vf_problems([{'id': 9}], host_network_vf_mode='operator') == []
    assert _vf_problems([{'id': 0}], host_network_num_vfs=0) == [('host_network_vfs[id=0].id', 0, 'PF eni10np1 has no VFs')]
    assert _vf_problems([], host_network_num_vfs=-1) == [('host_network_num_vfs', -1, 'must not be negative')]


def test_an_invalid_pf_name_is_not_repeated_in_the_vf_messages():
    assert _vf_problems([{'id': 8}], host_network_sriov_pf='eth0;x') == [('host_network_vfs[id=8].id', 8, 'the PF will have 8 VFs (ids 0..7)')]


def _plan_reads(**vars_):
    """role_reads of host_network on a one-rail node with a pod network, ``vars_`` its roce_* variables."""
    values = dict({'roce_pf': 'eni10np1', 'roce_pod_subnet': '10.255.0.0/24'}, **vars_)
    return role_reads('host_network', values.get)


def test_the_vf_options_of_a_one_rail_node_with_a_pod_network_must_be_its_plans():
    # Their defaults are the plan's variables: nothing to say.
    assert role_problems('host_network', HN, 'node1', reads=_plan_reads()) == []
    assert role_problems('host_network', dict(HN, host_network_vfs=[{'id': 1, 'trust': True, 'mac': None}]), 'node1',
                         reads=_plan_reads(roce_vfs=[{'id': 1, 'trust': True}])) == []
    # Set apart from them: the plan would make other VFs, so each is refused with the variable to set instead.
    problems = role_problems('host_network', dict(HN, host_network_num_vfs=4, host_network_sriov_pf='eni11np1',
                                                  host_network_vfs=[{'id': 1, 'trust': True}]), 'node1', reads=_plan_reads())
    assert [(f, v, p) for f, v, p, _x in problems] == [
        ('host_network_sriov_pf', 'eni11np1', 'differs from roce_sriov_pf (else roce_pf) ("eni10np1"), which the node\'s fabric plan reads'),
        ('host_network_num_vfs', 4, 'differs from roce_num_vfs (8), which the node\'s fabric plan reads'),
        ('host_network_vfs', [{'id': 1, 'trust': True}], 'differs from roce_vfs ([]), which the node\'s fabric plan reads'),
    ]
    assert problems[1][3] == ('set roce_num_vfs instead (the plan\'s variable; host_network_num_vfs applies only to a node without a '
                              'pod network), or remove host_network_num_vfs')
    # A node without a pod network (no roce_pod_subnet) has no plan: the options are its VFs.
    assert role_problems('host_network', dict(HN, host_network_num_vfs=4), 'node1', reads=_plan_reads(roce_pod_subnet=None)) == []


def test_the_preflight_options_of_a_one_rail_node_with_a_pod_network_must_be_its_plans():
    pf = {'preflight_pf': 'eni10np1', 'preflight_sriov_pf': 'eni10np1', 'preflight_num_vfs': 8, 'preflight_min_mtu': 9000}
    reads = role_reads('preflight', {'roce_pf': 'eni10np1', 'roce_pod_subnet': '10.255.0.0/24'}.get)
    assert role_problems('preflight', pf, 'node1', reads=reads) == []
    problems = role_problems('preflight', dict(pf, preflight_min_mtu=9216), 'node1', reads=reads)
    assert [(f, v, p) for f, v, p, _x in problems] == [
        ('preflight_min_mtu', 9216, 'differs from roce_mtu (9000), which the node\'s fabric plan reads')]


NO = {
    'roce_k8s_mode': 'apply', 'network_operator_chart_repo_url': 'https://helm.ngc.nvidia.com/nvidia', 'network_operator_chart_name': 'network-operator',
    'network_operator_chart_version': '26.4.1', 'network_operator_namespace': 'nvidia-network-operator', 'network_operator_ipam': 'nv-ipam',
    'network_operator_airgap': {'registry': '', 'preserve_path': True, 'image_pull_secrets': []}, 'network_operator_images': {},
    'network_operator_kubeconfig': '', 'network_operator_helm_timeout': 600, 'network_operator_ready_timeout': 900,
    'network_operator_poll_interval': 10, 'network_operator_gitops': {'flux_interval': '10m'},
}


def _no_problems(**kw):
    return [(f, v, p) for f, v, p, _fix in role_problems('network_operator', dict(NO, **kw), 'localhost')]


def test_network_operator_defaults_pass(tmp_path):
    kubeconfig = tmp_path / 'kubeconfig'
    kubeconfig.write_text('apiVersion: v1\n')
    assert _no_problems() == []
    assert _no_problems(network_operator_kubeconfig=str(kubeconfig)) == []
    assert _no_problems(network_operator_kubeconfig={'apiVersion': 'v1', 'users': [{'user': {'token': 's3cret'}}]}) == []


@pytest.mark.parametrize('kw,field,problem', [
    ({'network_operator_kubeconfig': '/nonexistent/kubeconfig'}, 'network_operator_kubeconfig',
     "is a string but not the path of a file on the controller (the value is not shown: it may be a kubeconfig's content)"),
    ({'network_operator_helm_timeout': 0}, 'network_operator_helm_timeout', 'must be a positive number of seconds'),
    ({'network_operator_poll_interval': -1}, 'network_operator_poll_interval', 'must be a positive number of seconds'),
    ({'network_operator_gitops': {'flux_interval': 'ten minutes'}}, 'network_operator_gitops.flux_interval', 'is not a duration Flux reads'),
    ({'network_operator_chart_version': 'latest'}, 'network_operator_chart_version', 'not a chart version'),
    ({'network_operator_chart_repo_url': 'https://x/$(id) y'}, 'network_operator_chart_repo_url',
     'not a chart repository URL (http://, https:// or oci://, no spaces, quotes or control characters)'),
    ({'network_operator_airgap': {'registry': 'https://reg.local/', 'preserve_path': True, 'image_pull_secrets': []}},
     'network_operator_airgap.registry', 'not a registry/repository prefix'),
    ({'network_operator_airgap': {'registry': '', 'preserve_path': True, 'image_pull_secrets': ['Bad_Name']}},
     'network_operator_airgap.image_pull_secrets', 'must be a list of Secret names'),
    ({'network_operator_images': {'multus': {'version': ''}}}, 'network_operator_images.multus.version', 'version (image tag) is empty'),
    ({'network_operator_nic_cluster_policy_overrides': {'tolerations': 'gpu'}}, 'network_operator_nic_cluster_policy_overrides.tolerations',
     'must be a list, not str: the merged NicClusterPolicy fails the CRD schema of network-operator 26.4.1 and 26.7.0-rc.2 at spec.tolerations'),
])
def test_network_operator_values(kw, field, problem):
    assert (field, problem) in [(f, p) for f, _v, p in _no_problems(**kw)]


def test_a_missing_kubeconfig_file_is_fine_in_render_mode():
    assert _no_problems(roce_k8s_mode='render', network_operator_kubeconfig='/nonexistent/kubeconfig') == []


RV = {'rdma_verify_tests': ['ib_write_bw', 'ib_write_lat'], 'rdma_verify_hosts': ['node1', 'node2'], 'rdma_verify_tcp_port': 18515,
      'rdma_verify_gid_index': 'auto', 'rdma_verify_bw_duration': 5, 'rdma_verify_client_timeout': 60, 'rdma_verify_server_timeout': 90,
      'rdma_verify_lat_iterations': 1000, 'rdma_verify_min_bw_gbps': None}
INVENTORY = frozenset(('node1', 'node2', 'localhost'))


def _rv_problems(**kw):
    return [(f, p) for f, _v, p, _fix in role_problems('rdma_verify', dict(RV, **kw), 'node1', INVENTORY)]


def test_rdma_verify_defaults_pass():
    assert _rv_problems() == []
    assert _rv_problems(rdma_verify_min_bw_gbps=0.5, rdma_verify_max_lat_us=5.5, rdma_verify_min_bw_pct_of_link=80.0, rdma_verify_gid_index='3') == []


@pytest.mark.parametrize('kw,expected', [
    ({'rdma_verify_min_bw_gbps': -1.0}, ('rdma_verify_min_bw_gbps', 'must be greater than 0')),
    ({'rdma_verify_max_lat_us': -0.5}, ('rdma_verify_max_lat_us', 'must be greater than 0')),
    ({'rdma_verify_min_bw_pct_of_link': 120.0}, ('rdma_verify_min_bw_pct_of_link', 'must be above 0 and at most 100')),
    ({'rdma_verify_tcp_port': 70000}, ('rdma_verify_tcp_port', 'is not a TCP port (1..65535)')),
    ({'rdma_verify_tcp_port': 0}, ('rdma_verify_tcp_port', 'is not a TCP port (1..65535)')),
    ({'rdma_verify_tests': ['ib_write_bw', 'ib_foo']}, ('rdma_verify_tests', 'unknown test(s) ib_foo')),
    ({'rdma_verify_tests': []}, ('rdma_verify_tests', 'is empty')),
    ({'rdma_verify_hosts': ['node1', 'node3']}, ('rdma_verify_hosts', 'not in the inventory: node3')),
    ({'rdma_verify_gid_index': 'three'}, ('rdma_verify_gid_index', 'is neither auto nor a GID index')),
    ({'rdma_verify_qps': 0}, ('rdma_verify_qps', 'must be at least 1 (a queue-pair count)')),
    ({'rdma_verify_pod_poll_interval': 0}, ('rdma_verify_pod_poll_interval', 'must be at least 1 (an interval in seconds)')),
    ({'rdma_verify_lat_iterations': 2}, ('rdma_verify_lat_iterations', 'must be at least 5 (an iteration count (perftest needs at least 5))')),
    ({'rdma_verify_client_timeout': 6}, ('rdma_verify_client_timeout', 'is below rdma_verify_bw_duration + 5 (10)')),
    ({'rdma_verify_server_timeout': 60}, ('rdma_verify_server_timeout', 'must exceed rdma_verify_client_timeout (60)')),
])
def test_rdma_verify_values(kw, expected):
    assert expected in _rv_problems(**kw)


@pytest.mark.parametrize('name', ['min_bw_gbps', 'min_bw_pct_of_link', 'max_lat_us'])
def test_a_zero_threshold_is_refused_as_the_perftest_module_refuses_it(name):
    """Before: 0 passed here, and the perftest module refused it in phase 5. One rule (_verify.perftest.THRESHOLDS), two callers."""
    found = list(role_problems('rdma_verify', dict(RV, **{'rdma_verify_' + name: 0.0}), 'node1', INVENTORY))
    assert len(found) == 1
    field, value, problem, fix = found[0]
    assert (field, value) == ('rdma_verify_' + name, 0.0)
    test = 'ib_write_lat' if name == 'max_lat_us' else 'ib_write_bw'
    with pytest.raises(PerftestError) as err:
        perftest_validate('node1', {'test': test, 'role': 'server', 'timeout': 60, name: 0.0})
    assert err.value.field == name and problem in str(err.value)
    assert fix.endswith('or leave it unset for no threshold')
    # The fix's example value passes both.
    example = float(fix.split('(rdma_verify_%s: ' % name)[1].split(')')[0])
    assert role_problems('rdma_verify', dict(RV, **{'rdma_verify_' + name: example}), 'node1', INVENTORY) == []
    perftest_validate('node1', {'test': test, 'role': 'server', 'timeout': 60, name: example})


def test_pod_mode_without_a_test_image_is_refused():
    """Before: refused only by the role's own assert in phase 5."""
    assert _rv_problems(rdma_verify_mode='pod', rdma_verify_pod_image='') == [
        ('rdma_verify_pod_image', 'is empty, and rdma_verify_mode is pod: the test pods need an image')]
    assert _rv_problems(rdma_verify_mode='pod', rdma_verify_pod_image='registry.local/perftest:24.10') == []
    assert _rv_problems(rdma_verify_mode='host', rdma_verify_pod_image='') == []


def test_full_duplex_in_pod_mode_is_refused_before_any_change():
    assert _rv_problems(rdma_verify_mode='pod', rdma_verify_pod_image='perftest:1', rdma_verify_full_duplex=True) == [
        ('rdma_verify_full_duplex', 'is for host mode, and rdma_verify_mode is pod')]
    assert _rv_problems(rdma_verify_mode='host', rdma_verify_full_duplex=True) == []
    assert _rv_problems(rdma_verify_mode='pod', rdma_verify_pod_image='perftest:1', rdma_verify_full_duplex=False) == []


def test_refused_options_are_left_to_the_spec_message():
    assert role_problems('rdma_verify', dict(RV, rdma_verify_tcp_port='x'), 'node1', INVENTORY, refused={'rdma_verify_tcp_port'}) == []


# ---- through the action: the host is named, the spec's sub-options refuse unknown VF keys -----------------

def _run(hosts, roles):
    loader = DataLoader()
    task = mock.MagicMock()
    task.args = {'roles': roles}
    task.check_mode = False
    action = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=loader, templar=Templar(loader=loader), shared_loader_obj=None)
    hv = mock.MagicMock()
    hv.raw_get.side_effect = lambda h: hosts[h]
    task_vars = {'hostvars': hv, 'ansible_play_hosts_all': list(hosts), 'playbook_dir': '/srv/site', 'groups': {'all': list(hosts)}}
    with mock.patch.object(ActionBase, 'run', return_value={}), roce_default_standin():
        return action.run(task_vars=task_vars)


def _node(name, **kw):
    base = {'inventory_hostname': name, 'roce_pf': 'enp157s0np0', 'roce_num_vfs': 8}
    base.update({k: trust_as_template(v) if isinstance(v, str) else v for k, v in kw.items()})
    return base


def test_action_reports_vf_entries_with_host_field_value_and_fix():
    vfs = [{'id': 9}, {'id': 1, 'mac': '01:00:00:00:00:01'}, {'id': 2, 'macc': 'x'}]
    hosts = {'node1': _node('node1'), 'node2': _node('node2', roce_vf_mode='host', roce_vfs=vfs)}
    result = _run(hosts, ['gpufabric.roce.host_network'])
    assert result['failed']
    msg = result['msg']
    assert ('node2: host_network_vfs[id=9].id=9: PF enp157s0np0 will have 8 VFs (ids 0..7) (role gpufabric.roce.host_network). '
            'Fix: use a VF id below 8 or raise num_vfs (host_network_vfs defaults to roce_vfs, host_network_num_vfs to roce_num_vfs)') in msg
    assert 'node2: host_network_vfs[id=1].mac="01:00:00:00:00:01": is a multicast address' in msg
    assert 'host_network_vfs.macc. Supported parameters include: id, link_state, mac' in msg
    assert 'node1' not in msg


def test_action_refuses_bad_network_operator_values_of_the_controller():
    hosts = {'localhost': _node('localhost', network_operator_helm_timeout='10m', roce_k8s_mode='dry',
                                network_operator_kubeconfig='/nonexistent/kubeconfig')}
    result = _run(hosts, ['gpufabric.roce.network_operator'])
    msg = result['msg']
    assert 'localhost: network_operator_helm_timeout="10m": argument \'network_operator_helm_timeout\' is of type str' in msg
    assert 'localhost: roce_k8s_mode="dry": value of roce_k8s_mode must be one of: apply, render, got: dry' in msg
    assert 'localhost: network_operator_kubeconfig="<not shown: may hold a secret>": is a string but not the path of a file' in msg
    assert '/nonexistent/kubeconfig' not in msg


def test_action_rdma_verify_hosts_must_be_in_the_inventory():
    hosts = {'node1': _node('node1', rdma_verify_hosts=['node1', 'nodee2']), 'node2': _node('node2')}
    result = _run(hosts, ['gpufabric.roce.rdma_verify'])
    assert 'node1: rdma_verify_hosts=["node1", "nodee2"]: not in the inventory: nodee2' in result['msg']


def test_a_kubeconfig_list_is_shown_as_the_list_but_never_a_mapping_in_it():
    """Before: the value was shown as its type name (<_AnsibleTaggedList> from an inventory)."""
    found = [(f, v) for f, v, _p, _fix in role_problems(
        'network_operator', dict(NO, network_operator_kubeconfig=['/etc/kube/a', {'users': [{'user': {'token': 's3cret'}}]}]), 'localhost')]
    assert ('network_operator_kubeconfig', ['/etc/kube/a', '<a mapping, not shown>']) in found
    assert 's3cret' not in repr(found)


# A kubeconfig pasted as a string (its content, not a path): the check names the variable and the problem, and the
# content reaches neither the message nor the problems the task returns (they land in the job events).
KUBECONFIG_TEXT = ('apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: s3cret-token-0123456789abcdef\n'
                   'clusters:\n- name: c\n  cluster: {server: "https://10.0.0.1:6443"}\n')


def test_action_never_echoes_a_kubeconfig_given_as_a_string():
    hosts = {'localhost': _node('localhost', network_operator_kubeconfig=KUBECONFIG_TEXT, roce_k8s_mode='apply')}
    result = _run(hosts, ['gpufabric.roce.network_operator'])
    assert result['failed']
    assert 'localhost: network_operator_kubeconfig="<not shown: may hold a secret>": is a string but not the path' in result['msg']
    shown = repr(result)
    for needle in ('s3cret-token-0123456789abcdef', 'apiVersion', '10.0.0.1'):
        assert needle not in shown


def test_redact_names_the_field_and_hides_the_value():
    assert secret_field('network_operator_kubeconfig') and secret_field('registry_token') and not secret_field('network_operator_airgap')
    value, msg = redact('x_kubeconfig', {'users': [{'token': 'abcd1234'}]}, "value of x_kubeconfig was {'token': 'abcd1234'}")
    assert value == NOT_SHOWN and 'abcd1234' not in msg
    assert redact('network_operator_helm_timeout', '10m', 'bad 10m') == ('10m', 'bad 10m')


def test_output_dirs_inside_an_inventory_source_are_refused(tmp_path, monkeypatch):
    # Issue 17: reports and manifests written inside a directory given with -i were parsed as inventory by the next run.
    inv = tmp_path / 'inventories' / 'mycluster'
    inv.mkdir(parents=True)
    hosts_file = tmp_path / 'hosts.yml'
    hosts_file.write_text('all: {}\n')
    sources = [str(inv), str(hosts_file)]
    problems = output_dir_problems({'rdma_verify_report_dir': str(inv / 'rdma-verify-report')}, sources, {'rdma_verify_report_dir': None})
    assert len(problems) == 1
    field, value, problem, fix = problems[0]
    assert (field, value) == ('rdma_verify_report_dir', str(inv / 'rdma-verify-report'))
    assert problem.startswith('is inside the inventory source %s' % inv)
    assert 'set rdma_verify_report_dir to a directory outside every inventory source' in fix
    # Outside it, or beside an inventory *file*: fine.
    assert output_dir_problems({'rdma_verify_report_dir': str(tmp_path / 'out')}, sources, {'rdma_verify_report_dir': None}) == []
    assert output_dir_problems({'roce_render_dir': str(tmp_path / 'render-out')}, sources, {'roce_render_dir': 'render-out'}) == []
    # Unset (the argument spec's doc default): the role writes to render-out/ in the current directory, checked too.
    monkeypatch.setenv('PWD', str(inv))
    problems = output_dir_problems({'roce_render_dir': '<current directory>/render-out'}, sources, {'roce_render_dir': 'render-out'})
    assert [p[0] for p in problems] == ['roce_render_dir'] and '(the default: render-out in the current directory)' in problems[0][1]
    monkeypatch.setenv('PWD', str(tmp_path))
    assert output_dir_problems({'roce_render_dir': '<current directory>/render-out'}, sources, {'roce_render_dir': 'render-out'}) == []


def test_role_defaults_of_the_output_dirs_are_not_the_inventory_dir():
    roles = pathlib.Path(__file__).resolve().parents[4] / 'roles'
    for rel in ('rdma_verify/defaults/main.yml', 'network_operator/vars/main.yml', 'sriov_networks/vars/main.yml'):
        # Only the output directories' defaults: roce_fabric_name's default is the inventory directory's *name*.
        lines = [line for line in (roles / rel).read_text().splitlines() if 'render_dir' in line or 'report_dir' in line]
        assert lines, rel
        assert not [line for line in lines if 'inventory_dir' in line], rel


def test_output_dirs_are_checked_only_where_they_are_written(tmp_path):
    inv = tmp_path / 'inv'
    inv.mkdir()
    inside = str(inv / 'out')

    def fields(role, **kw):
        return [f for f, _v, _p, _fix in role_problems(role, kw, 'localhost', sources=[str(inv)])]

    assert fields('network_operator', roce_k8s_mode='render', roce_render_dir=inside) == ['roce_render_dir']
    assert fields('network_operator', roce_k8s_mode='apply', roce_render_dir=inside) == []
    assert fields('rdma_verify', rdma_verify_report_dir=inside) == ['rdma_verify_report_dir']
    assert fields('rdma_verify', rdma_verify_report_dir=str(tmp_path / 'r'), rdma_verify_mode='host', rdma_verify_pod_render_dir=inside) == []
    assert fields('rdma_verify', rdma_verify_report_dir=str(tmp_path / 'r'), rdma_verify_mode='pod', rdma_verify_pod_action='render',
                  rdma_verify_pod_image='registry.example/perftest:1', rdma_verify_pod_render_dir=inside) == ['rdma_verify_pod_render_dir']


# ---- issue 43 classes 9 and 10, issue 42 item 3: values each legal alone, refused (or warned about) before any change ----

def test_a_node_name_that_is_not_dns_1123_is_refused_in_either_vf_mode():
    """Before: accepted, and the drain failed on the node in phase 2 ('no such node')."""
    for mode in ('host', 'operator'):
        found = _vf_problems([], host_network_vf_mode=mode, host_network_node_name='GPU_Node1')
        assert found == [('host_network_node_name', 'GPU_Node1', "is not a Kubernetes node name (a DNS-1123 subdomain: at most 253 "
                          "lower-case letters, digits, '-' and '.', starting and ending with a letter or digit)")]
    assert _vf_problems([], host_network_node_name='gpu-node1.rack2') == []
    assert _vf_problems([], host_network_node_name='') == []


DRAIN = dict(host_network_drain=True, host_network_allow_vf_reset=True)


def _drain_problems(delegate, **kw):
    params = dict(HN, host_network_drain_delegate_to=delegate, **dict(DRAIN, **kw))
    return [(f, v, p) for f, v, p, _fix in role_problems('host_network', params, 'node1', INVENTORY)]


def test_a_drain_delegate_outside_the_inventory_is_refused():
    """Before: accepted; the drain's first task then failed in phase 2, after other nodes had changed."""
    (found,) = _drain_problems('contoller')
    assert found == ('host_network_drain_delegate_to', 'contoller',
                     'is not a host of the inventory: the drain before a VF reset runs its Kubernetes tasks there')
    fix = role_problems('host_network', dict(HN, host_network_drain_delegate_to='contoller', **DRAIN), 'node1', INVENTORY)[0][3]
    assert 'e.g. localhost' in fix and 'leave it unset' in fix
    # An inventory host, and Ansible's implicit localhost, are fine; so is any name where no drain happens.
    assert _drain_problems('node2') == [] and _drain_problems('localhost') == [] and _drain_problems('127.0.0.1') == []
    assert _drain_problems('contoller', host_network_allow_vf_reset=False) == []
    assert _drain_problems('contoller', host_network_vf_mode='operator') == []


def test_remeasure_attempts_must_be_between_0_and_10():
    assert _rv_problems(rdma_verify_remeasure_attempts=-1) == [
        ('rdma_verify_remeasure_attempts', 'must be at least 0 (a count of attempts)')]
    (found,) = _rv_problems(rdma_verify_remeasure_attempts=1000000)
    assert found[0] == 'rdma_verify_remeasure_attempts' and found[1].startswith('must be at most 10 (each attempt is one more round')
    assert _rv_problems(rdma_verify_remeasure_attempts=0) == [] and _rv_problems(rdma_verify_remeasure_attempts=10) == []


def _gitops(**kw):
    gitops = {'flux_interval': '10m', 'flux_namespace': 'flux-system', 'argocd_namespace': 'argocd',
              'flux_source': {'kind': 'GitRepository', 'name': 'flux-system'}}
    return dict(NO, network_operator_gitops=dict(gitops, **kw))


@pytest.mark.parametrize('kw,field,value,problem,fix', [
    ({'flux_source': {'kind': 'gitrepository', 'name': 'flux-system'}}, 'network_operator_gitops.flux_source.kind', 'gitrepository',
     'is not a kind of Flux source a Kustomization can name (GitRepository, OCIRepository, Bucket; Flux spells them exactly)',
     'set kind: GitRepository'),
    ({'flux_source': {'kind': 'GitRepo', 'name': 'flux-system'}}, 'network_operator_gitops.flux_source.kind', 'GitRepo',
     'is not a kind of Flux source a Kustomization can name (GitRepository, OCIRepository, Bucket; Flux spells them exactly)',
     'set kind: GitRepository'),
    ({'flux_source': {'kind': 'GitRepository', 'name': 'Flux_System'}}, 'network_operator_gitops.flux_source.name', 'Flux_System',
     'is not the name of a Kubernetes object', 'set name to the Flux source of the GitOps repository, e.g. flux-system (flux get sources all)'),
    ({'flux_source': {'kind': 'GitRepository', 'name': 'x', 'namespace': 'Flux System'}}, 'network_operator_gitops.flux_source.namespace',
     'Flux System', 'is not a namespace name (a DNS-1123 label)',
     'use the namespace of the Flux source, e.g. flux-system, or leave it unset for flux_namespace'),
    ({'flux_source': {'kind': 'GitRepository', 'name': 'x', 'ref': 'main'}}, 'network_operator_gitops.flux_source', ['ref'],
     'unknown key(s)', 'use only: kind, name, namespace'),
    ({'flux_namespace': 'Flux_System'}, 'network_operator_gitops.flux_namespace', 'Flux_System', 'is not a namespace name (a DNS-1123 label)',
     'use lower-case letters, digits and "-", at most 63, e.g. flux-system'),
    ({'argocd_namespace': 'argo.cd'}, 'network_operator_gitops.argocd_namespace', 'argo.cd', 'is not a namespace name (a DNS-1123 label)',
     'use lower-case letters, digits and "-", at most 63, e.g. argocd'),
    ({'repo_path': '/srv/gitops/render-out'}, 'network_operator_gitops.repo_path', '/srv/gitops/render-out', None, None),
    ({'repo_path': '../render-out'}, 'network_operator_gitops.repo_path', '../render-out', None, None),
    ({'repo_path': './a/../../render-out'}, 'network_operator_gitops.repo_path', './a/../../render-out', None, None),
])
def test_gitops_settings_flux_or_argo_cd_would_refuse_are_refused(kw, field, value, problem, fix):
    """Before: rendered into flux/ and argocd/, and refused (or pointed at nothing) only by the GitOps tool."""
    found = [p for p in role_problems('network_operator', _gitops(**kw), 'localhost') if p[0] == field]
    assert len(found) == 1 and found[0][1] == value, found
    if problem is None:  # repo_path
        assert found[0][2].startswith('is not a path inside the GitOps repository')
        assert found[0][3].startswith('write where roce_render_dir sits in the GitOps repository, relative to its root, e.g. ./render-out')
    else:
        assert found[0][2:] == (problem, fix)


def test_valid_gitops_settings_pass_and_a_local_chart_needs_a_chart_source():
    assert _no_problems(**{'network_operator_gitops': _gitops(repo_path='./clusters/a/render-out')['network_operator_gitops']}) == []
    assert _no_problems(**{'network_operator_gitops': _gitops(repo_path='render-out')['network_operator_gitops']}) == []
    oci = _gitops(flux_source={'kind': 'OCIRepository', 'name': 'gitops'})
    assert role_problems('network_operator', oci, 'localhost') == []
    # A local chart is read by the HelmRelease through the same source: a chart's sourceRef cannot be an OCIRepository.
    (found,) = role_problems('network_operator', dict(oci, network_operator_chart_path='/srv/charts/network-operator-26.4.1.tgz'), 'localhost')
    assert found[:2] == ('network_operator_gitops.flux_source.kind', 'OCIRepository')
    assert 'network_operator_chart_path is set' in found[2] and found[3] == 'set kind: GitRepository'


def _ipam(mode, sriov_ipam=None, **kw):
    reads = {} if sriov_ipam is None else {'sriov_networks_ipam': sriov_ipam}
    params = dict(NO, roce_k8s_mode=mode, network_operator_ipam='whereabouts', **kw)
    return [p for p in role_problems('network_operator', params, 'localhost', reads=reads) if p[0] == 'network_operator_ipam']


def test_whereabouts_is_refused_in_render_mode_with_the_alternatives():
    """Issue 42 item 3. Before: render mode wrote SriovNetworks whose pods could not start; apply mode refuses a cluster
    without the whereabouts CRD, which render mode cannot see."""
    (found,) = _ipam('render', 'whereabouts')
    assert found[1] == 'whereabouts' and 'render mode cannot check that the cluster has whereabouts' in found[2]
    assert found[3] == ('set network_operator_ipam: nv-ipam (the default; with sriov_networks_ipam: nv-ipam or host-local), or '
                        'network_operator_ipam: none when you install whereabouts in the cluster yourself (k8snetworkplumbingwg/whereabouts) '
                        'for sriov_networks_ipam: whereabouts')
    assert _ipam('apply', 'whereabouts') == []  # apply mode checks the CRD in the cluster before the first change
    # The alternatives the fix names pass.
    for ipam in ('nv-ipam', 'none'):
        assert [p for p in role_problems('network_operator', dict(NO, roce_k8s_mode='render', network_operator_ipam=ipam), 'localhost',
                                         reads={'sriov_networks_ipam': 'whereabouts'}) if p[0] == 'network_operator_ipam'] == []


def test_nv_ipam_pools_with_whereabouts_are_one_message_in_either_mode():
    """Issue 43 class 8: sriov_networks_ipam nv-ipam renders CIDRPools that whereabouts does not serve."""
    for mode in ('apply', 'render'):
        (found,) = _ipam(mode, 'nv-ipam')
        assert 'sriov_networks_ipam is nv-ipam: nothing would serve its pools' in found[2]
        assert found[3].startswith('set network_operator_ipam: nv-ipam (the default)')


def test_no_ipam_deployed_beside_nv_ipam_pools_is_a_warning():
    """Issue 42 item 7: the examples deploy no IPAM (host-local needs none); a copy moved to sriov_networks_ipam: nv-ipam
    alone would render pools nothing serves, unless nv-ipam is deployed some other way, which the inventory cannot tell."""
    params = dict(NO, network_operator_ipam='none')
    (warning,) = role_warnings('network_operator', params, 'localhost', reads={'sriov_networks_ipam': 'nv-ipam'})
    assert warning[:2] == ('network_operator_ipam', 'none') and "nothing serves the SriovNetworks' pools" in warning[2]
    assert warning[3].startswith('set network_operator_ipam: nv-ipam (the default) and run the operator phase')
    assert role_problems('network_operator', params, 'localhost', reads={'sriov_networks_ipam': 'nv-ipam'}) == []
    for ipam, sriov_ipam in (('none', 'host-local'), ('nv-ipam', 'nv-ipam')):
        assert role_warnings('network_operator', dict(NO, network_operator_ipam=ipam), 'localhost',
                             reads={'sriov_networks_ipam': sriov_ipam}) == []


def test_an_empty_rails_list_without_roce_pf_is_named_as_such():
    found = role_problems('preflight', {}, 'gpu-node02', reads={'roce_rails': []})
    assert [(f, v) for f, v, _p, _x in found] == [('roce_rails', [])]
    assert "remove roce_rails: [] from this node's host_vars" in found[0][3]
    # A one-rail node that spells its rails [] has roce_pf, hence preflight_pf: nothing to say.
    assert role_problems('preflight', {'preflight_pf': 'enp157s0np0'}, 'node1', reads={'roce_rails': []}) == []


def _qos_reads(rails, overrides=None, cluster=None):
    """What the action hands the host_network rules (role_reads), from the node's variables."""
    variables = {'roce_qos': {} if cluster is None else cluster,
                 'roce_rails': [dict({'name': name, 'pf': 'enp%ds0np0' % i}, **({'qos': qos} if qos else {}))
                                for i, (name, qos) in enumerate(rails)],
                 'roce_rail_overrides': {name: {'pf': 'ens1f0np0', 'qos': qos} for name, qos in (overrides or {}).items()}}
    return role_reads('host_network', variables.get)


def test_rails_with_different_tos_are_a_warning_not_a_refusal():
    reads = _qos_reads([('rail0', None), ('rail1', None), ('rail2', {'tos': 98})])
    assert role_problems('host_network', dict(HN, host_network_nccl=True), 'gpu1', reads=reads) == []
    (warning,) = role_warnings('host_network', dict(HN, host_network_nccl=True), 'gpu1', reads=reads)
    field, value, problem, fix = warning
    assert (field, value) == ('roce_rails[rail2].qos.tos', 98)
    assert problem.startswith("differs from the ToS of the node's other rails (rail0 106, rail1 106, rail2 98): NCCL_IB_TC is one "
                              'traffic class for all of a job\'s HCAs, so host_network will not set it')
    assert fix == ("give every rail the same tos: set it once in roce_qos and remove the rails' own (roce_rails[rail2].qos.tos); or keep "
                   'them and set NCCL_IB_TC in the jobs yourself')
    # A node's own override is named as such; the same ToS everywhere, or no NCCL settings, says nothing.
    reads = _qos_reads([('rail0', None), ('rail1', None)], overrides={'rail1': {'tos': 98}})
    assert role_warnings('host_network', dict(HN, host_network_nccl=True), 'gpu1', reads=reads)[0][0] == 'roce_rail_overrides.rail1.qos.tos'
    assert role_warnings('host_network', dict(HN, host_network_nccl=False), 'gpu1', reads=reads) == []
    same = _qos_reads([('rail0', {'tos': 98}), ('rail1', None)], cluster={'tos': 98})
    assert role_warnings('host_network', dict(HN, host_network_nccl=True), 'gpu1', reads=same) == []


# ---- through the action: what the rules read besides the options, one message per mistake, warnings once ----------------

def test_action_names_an_empty_rail_list_once_not_as_a_missing_preflight_pf():
    """Before: 'preflight_pf=null: missing required arguments: preflight_pf', which names neither the cause nor its fix."""
    rails = [{'name': 'rail0', 'pf': 'enp12s0np0', 'vlan': 101, 'subnet_pool': '10.101.0.0/16'}]
    hosts = {'gpu1': {'inventory_hostname': 'gpu1', 'roce_rails': rails}, 'gpu2': {'inventory_hostname': 'gpu2', 'roce_rails': []}}
    result = _run(hosts, ['gpufabric.roce.preflight'])
    assert result['failed'] and len(result['problems']) == 1, result['msg']
    assert result['msg'].startswith('1 problem in the role arguments of 1 host')
    assert 'gpu2: roce_rails=[]: is empty on this node, and roce_pf is not set' in result['msg']
    assert 'preflight_pf' not in result['msg']
    # Without roce_rails at all, the spec's own message stays (nothing else explains it).
    result = _run({'gpu3': {'inventory_hostname': 'gpu3'}}, ['gpufabric.roce.preflight'])
    assert 'preflight_pf=null: missing required arguments: preflight_pf' in result['msg']


def test_action_reads_sriov_networks_ipam_beside_the_network_operator_options():
    hosts = {'localhost': _node('localhost', network_operator_ipam='whereabouts', sriov_networks_ipam='nv-ipam')}
    result = _run(hosts, ['gpufabric.roce.network_operator'])
    assert 'localhost: network_operator_ipam="whereabouts": deploys no IPAM' in result['msg']
    assert 'sriov_networks_ipam is nv-ipam' in result['msg']
    # sriov_networks_ipam unset: its role default (host-local), and apply mode: nothing to refuse.
    assert not _run({'localhost': _node('localhost', network_operator_ipam='whereabouts')}, ['gpufabric.roce.network_operator']).get('failed')


def test_action_warns_once_for_every_node_with_the_same_rails_tos():
    rails = [{'name': 'rail0', 'pf': 'enp12s0np0'}, {'name': 'rail1', 'pf': 'enp18s0np0', 'qos': {'tos': 98}}]
    hosts = {h: {'inventory_hostname': h, 'roce_rails': rails, 'roce_qos': {}} for h in ('gpu1', 'gpu2', 'gpu3')}
    result = _run(hosts, ['gpufabric.roce.host_network'])
    assert not result.get('failed'), result['msg']
    (line,) = result['warnings']
    assert line.startswith('gpu1 (and 2 other hosts: gpu2, gpu3): roce_rails[rail1].qos.tos=98: differs from the ToS of the node\'s '
                           'other rails (rail0 106, rail1 98)')
    assert 'Fix: give every rail the same tos' in line

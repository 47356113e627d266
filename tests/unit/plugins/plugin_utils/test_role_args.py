"""gpufabric.roce.validate_role_arguments: the pure helpers, and the action over a real Templar and
DataLoader with the collection's own roles (hostvars faked: a dict of raw variables per host)."""

from unittest import mock

import os

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.action import ActionBase
from ansible.template import Templar, trust_as_template

from ansible_collections.gpufabric.roce.plugins.action.validate_role_arguments import ActionModule
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_args as ra
from roce_default_standin import patched as roce_default_standin
from roce_default_standin import without_roce_default


def test_refs_see_names_through_ansible_filters_and_tests():
    assert ra.refs("{{ ((rdma_verify_mode | default('host')) == 'host') | bool }}") == ({'rdma_verify_mode'}, False)
    assert ra.refs("{{ roce_sriov_pf | default(roce_pf | default(omit)) }}")[0] == {'roce_sriov_pf', 'roce_pf', 'omit'}
    assert ra.refs("{{ x is match('^a') }}-{{ y | to_json }}") == ({'x', 'y'}, False)
    assert ra.refs('plain') == (set(), False)
    assert ra.refs(['{{ a }}', {'k': '{{ b }}'}])[0] == {'a', 'b'}


def test_refs_flag_names_read_by_computed_name():
    assert ra.refs("{{ lookup('ansible.builtin.vars', name) }}")[1] is True
    assert ra.refs("{{ hostvars[inventory_hostname].x }}")[1] is True
    assert ra.refs("{{ vars['a' ~ b] }}")[1] is True
    assert ra.refs("{{ lookup('ansible.builtin.env', 'HOME') }}")[1] is False
    assert ra.refs('{{ unclosed')[1] is True  # unparsable: templated per host, the templar reports it


def test_memo_key_is_shared_by_hosts_with_the_same_inputs():
    defaults = {'preflight_pf': '{{ roce_pf | default(omit) }}', 'roce_x': '{{ roce_y }}'}

    def lookup_for(host_vars):
        return lambda name: host_vars.get(name, defaults.get(name, ra.UNDEFINED))

    a = ra.memo_key(defaults['preflight_pf'], lookup_for({'roce_pf': 'p0', 'inventory_hostname': 'a'}), 'a')
    b = ra.memo_key(defaults['preflight_pf'], lookup_for({'roce_pf': 'p0', 'inventory_hostname': 'b'}), 'b')
    c = ra.memo_key(defaults['preflight_pf'], lookup_for({'roce_pf': 'p1', 'inventory_hostname': 'c'}), 'c')
    assert a == b and a != c
    # Follows templates inside the variables it reads.
    k1 = ra.memo_key('{{ roce_x }}', lookup_for({'roce_y': 1}), 'a')
    k2 = ra.memo_key('{{ roce_x }}', lookup_for({'roce_y': 2}), 'b')
    assert k1 != k2
    # Dynamic reads make the host part of the key.
    d1 = ra.memo_key("{{ lookup('vars', 'roce_pf') }}", lookup_for({}), 'a')
    d2 = ra.memo_key("{{ lookup('vars', 'roce_pf') }}", lookup_for({}), 'b')
    assert d1 != d2


def test_key_cache_freezes_shared_objects_once():
    cache = ra.KeyCache()
    big = ['gpu-%04d' % i for i in range(1000)]
    first = cache.freeze(big)
    assert all(cache.freeze(big) is first for _i in range(50))  # the same frozen object: computed once
    copy = list(big)
    assert cache.freeze(copy) == first and cache.freeze(copy) is not first  # equal content, another object


def test_field_expected_and_fix_text():
    options = ['rdma_verify_pod_image', 'rdma_verify_pod_image_pull_policy']
    assert ra.field_of('value of rdma_verify_pod_image_pull_policy must be one of: Always', options) == 'rdma_verify_pod_image_pull_policy'
    assert ra.field_of("argument 'rdma_verify_pod_image' is of type int", options) == 'rdma_verify_pod_image'
    assert ra.expected_text({'type': 'list', 'elements': 'dict'}) == 'a list of mappings'
    assert ra.expected_text({'type': 'list', 'elements': 'str'}) == 'a list of strings'
    assert ra.expected_text({'type': 'int'}) == 'an integer'
    assert ra.expected_text({'type': 'str', 'choices': ['host', 'pod']}) == 'one of: host, pod'
    assert ra.fix_text('preflight_num_vfs', {'type': 'int'}, 'default', '{{ roce_num_vfs | default(8) }}') == (
        'the role default of preflight_num_vfs is {{ roce_num_vfs | default(8) }}: set roce_num_vfs to an integer, '
        'or set preflight_num_vfs itself')
    assert ra.fix_text('preflight_num_vfs', {'type': 'int'}, 'inventory', None) == (
        'set preflight_num_vfs to an integer in the inventory (group_vars/host_vars) or as an extra var')


def test_problem_lines_group_hosts_and_cap():
    p = {'role': 'r', 'field': 'f', 'value': 'v', 'problem': 'is bad', 'fix': 'set f'}
    lines = ra.problem_lines([dict(p, hosts=['h1']), dict(p, field='g', hosts=['h%d' % i for i in range(1, 7)])])
    assert lines[0] == 'h1: f="v": is bad (role r). Fix: set f'
    assert lines[1] == 'h1 (and 5 other hosts: h2, h3, h4, ...): g="v": is bad (role r). Fix: set f'
    many = ra.problem_lines([dict(p, hosts=['h']) for _i in range(25)])
    assert len(many) == 21 and many[-1] == '... and 5 more problems'


# ---- the action, with a real templar and the collection's roles ----------------------------------


def _lookup_defaults():
    # The other lookups (env) get plain values.
    roles = os.path.join(os.path.dirname(ra.__file__), os.pardir, os.pardir, 'roles')
    out = {}
    for role in ('preflight', 'host_network', 'rdma_verify'):
        with open(os.path.join(roles, role, 'defaults', 'main.yml')) as fh:
            out.update({k: '/srv/%s' % k for k, v in without_roce_default(yaml.safe_load(fh) or {}).items() if 'lookup(' in '%s' % v})
    return out


LOOKUP_DEFAULTS = _lookup_defaults()


class FakeHostVars:
    def __init__(self, hosts):
        self.hosts = hosts
        self.reads = 0

    def raw_get(self, host):
        self.reads += 1
        return self.hosts[host]


def run_action(hosts, roles, play_hosts=None):
    hv = FakeHostVars(hosts)
    loader = DataLoader()
    task = mock.MagicMock()
    task.args = {'roles': roles}
    task.check_mode = False
    action = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=loader, templar=Templar(loader=loader), shared_loader_obj=None)
    task_vars = {'hostvars': hv, 'ansible_play_hosts_all': play_hosts or list(hosts), 'playbook_dir': '/srv/site'}
    with mock.patch.object(ActionBase, 'run', return_value={}), \
            roce_default_standin():
        return action.run(task_vars=task_vars), hv


def node(name, **kw):
    base = {'inventory_hostname': name, 'roce_pf': 'enp157s0np0', 'roce_num_vfs': 8, 'roce_mtu': 9000, 'roce_vlan_id': 100}
    base.update(LOOKUP_DEFAULTS)
    # Inventory files are trusted template sources, as Ansible's loader marks them.
    base.update({k: trust_as_template(v) if isinstance(v, str) else v for k, v in kw.items()})
    return base


ROLES = ['gpufabric.roce.preflight', 'host_network', {'name': 'gpufabric.roce.rdma_verify', 'when': "(rdma_verify_mode | default('host')) == 'host'"}]


def test_action_valid_fleet_templates_and_validates_once_per_distinct_input():
    hosts = {'gpu-%04d' % i: node('gpu-%04d' % i) for i in range(1, 201)}
    result, hv = run_action(hosts, ROLES)
    assert not result.get('failed'), result['msg']
    assert result['hosts'] == 200 and result['checked'] == 600 and result['skipped_pairs'] == 0
    assert hv.reads == 200  # every host's variables read once
    assert result['validated'] == 3  # one set of values per role: the hosts share their group_vars
    assert result['templated'] < 20


def test_action_reports_host_field_value_fix_and_groups_shared_problems():
    hosts = {'gpu-%04d' % i: node('gpu-%04d' % i, roce_mtu='jumbo') for i in range(1, 6)}
    hosts['gpu-0003']['host_network_vf_mode'] = 'hostt'
    hosts['gpu-0004'].pop('roce_pf')
    result, _hv = run_action(hosts, ['preflight', 'host_network'])
    assert result['failed'] is True
    msg = result['msg']
    assert msg.startswith('3 problems in the role arguments of 5 hosts:\n'), msg
    assert ('gpu-0001 (and 4 other hosts: gpu-0002, gpu-0003, gpu-0004, ...): preflight_min_mtu="jumbo": '
            "argument 'preflight_min_mtu' is of type str and we were unable to convert to int") in msg
    assert 'Fix: the role default of preflight_min_mtu is {{ roce_mtu | default(9000) }}: set roce_mtu to an integer' in msg
    assert ('gpu-0003: host_network_vf_mode="hostt": value of host_network_vf_mode must be one of: host, operator, got: hostt '
            '(role gpufabric.roce.host_network). Fix: set host_network_vf_mode to one of: host, operator in the inventory') in msg
    # roce_pf and roce_rails unset: preflight_pf's default omits it, and the spec requires it.
    assert 'gpu-0004: preflight_pf=null: missing required arguments: preflight_pf (role gpufabric.roce.preflight). ' \
           'Fix: the role default of preflight_pf is {{ roce_pf | default(roce_rails[0].pf | default(omit)) }}: ' \
           'set roce_pf / roce_rails to a string' in msg
    by_field = {p['field']: p['hosts'] for p in result['problems']}
    assert by_field['preflight_min_mtu'] == sorted(hosts)


def test_action_when_skips_hosts_like_the_role_condition():
    hosts = {'a': node('a'), 'b': node('b', rdma_verify_mode='pod', rdma_verify_ping_count='x'),
             'c': node('c', rdma_verify_ping_count='x')}
    result, _hv = run_action(hosts, ROLES[2:])
    assert result['skipped_pairs'] == 1 and result['checked'] == 2
    assert [p['hosts'] for p in result['problems']] == [['c']]


def test_action_template_errors_are_problems_not_crashes():
    hosts = {'a': node('a', preflight_num_vfs='{{ no_such_variable }}')}
    result, _hv = run_action(hosts, ['preflight'])
    assert result['failed'] is True
    assert 'a: preflight_num_vfs=' in result['msg'] and 'could not be templated' in result['msg'] and 'no_such_variable' in result['msg']


def test_action_rejects_roles_of_other_collections():
    with pytest.raises(Exception, match='is not a role of gpufabric.roce'):
        run_action({'a': node('a')}, ['community.general.foo'])


def test_action_templates_may_read_other_hosts_through_hostvars():
    class Readable(FakeHostVars):
        def __getitem__(self, host):
            return self.hosts[host]

    hosts = {'a': node('a'), 'b': node('b', preflight_num_vfs=trust_as_template("{{ hostvars['a'].roce_num_vfs }}"))}
    hv = Readable(hosts)
    loader = DataLoader()
    task = mock.MagicMock()
    task.args = {'roles': ['preflight']}
    action = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=loader, templar=Templar(loader=loader), shared_loader_obj=None)
    with mock.patch.object(ActionBase, 'run', return_value={}), roce_default_standin():
        result = action.run(task_vars={'hostvars': hv, 'ansible_play_hosts_all': ['a', 'b']})
    assert not result.get('failed'), result['msg']

"""gpufabric.roce.unknown_variables: the pure helpers against the collection's own roles and docs, and
the action over a faked hostvars (a dict of raw variables per host)."""

import glob
import os
import re
from unittest import mock

import yaml
from ansible.plugins.action import ActionBase

from ansible_collections.gpufabric.roce.plugins.action.unknown_variables import ActionModule
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _unknown_vars as uv

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
ROLES_DIR = os.path.join(REPO, 'roles')
KNOWN = uv.known_names(ROLES_DIR)


def _read(*parts):
    with open(os.path.join(REPO, *parts)) as f:
        return f.read()


# site.yml and the task files it shares with render.yml (playbooks/tasks/).
PLAYBOOKS = [os.path.join(REPO, 'playbooks', 'site.yml')] + sorted(glob.glob(os.path.join(REPO, 'playbooks', 'tasks', '*.yml')))


def test_known_names_are_every_spec_option_and_default_of_every_role():
    for role in uv.ROLES:
        specs = yaml.safe_load(_read('roles', role, 'meta', 'argument_specs.yml'))['argument_specs']
        for spec in specs.values():
            assert set(spec.get('options') or {}) <= KNOWN, role
        assert set(yaml.safe_load(_read('roles', role, 'defaults', 'main.yml')) or {}) <= KNOWN, role


def test_shared_roce_vars_are_the_documented_ones():
    # docs/inventory.md documents the shared model; site.yml's knobs are documented in docs/fleet-scale.md.
    documented = set(re.findall(r'\broce_[a-z0-9_]*[a-z0-9]', _read('docs', 'inventory.md'))) - {'roce_nodes'}
    knobs = {'roce_serial', 'roce_max_fail_percentage', 'roce_strategy', 'roce_plan', 'roce_plan_out', 'roce_plan_artifact', 'roce_inventory_complete',
             'roce_impact_out', 'roce_impact'}
    assert knobs <= set(re.findall(r'\broce_[a-z0-9_]*[a-z0-9]', ''.join(_read(p) for p in PLAYBOOKS)))
    assert documented | knobs == uv.SHARED_ROCE_VARS


def test_no_warning_for_what_the_roles_and_playbook_read():
    # Every roce_* name the roles and site.yml (with its task files) read, and every variable of the shipped inventories, is known.
    read = set()
    for path in glob.glob(os.path.join(ROLES_DIR, '*', '*', '*.yml')) + PLAYBOOKS:
        with open(path) as f:
            # Plugin names (gpufabric.roce.roce_default) are not variables.
            read |= set(re.findall(r'\broce_[a-z0-9_]*[a-z0-9]', re.sub(r'gpufabric\.roce\.\w+', '', f.read())))
    read -= {'roce_nodes'}  # the group
    assert read <= KNOWN, sorted(read - KNOWN)
    for path in glob.glob(os.path.join(REPO, 'inventories', '*', '*_vars', '*.yml')):
        with open(path) as f:
            names = set(yaml.safe_load(f) or {})
        assert uv.find_unknown([('h', names)], KNOWN) == {}, path


def test_find_unknown_and_the_exact_warnings():
    hosts = [('node%d' % i, ['roce_vlan', 'roce_vlan_id', 'ansible_host', 'my_var']) for i in range(1, 6)]
    hosts.append(('localhost', ['network_operator_image_pull_secrets', 'sriov_networks_ipam', 'rdma_verify_tset']))
    unknown = uv.find_unknown(hosts, KNOWN)
    assert unknown == {'roce_vlan': ['node1', 'node2', 'node3', 'node4', 'node5'],
                       'network_operator_image_pull_secrets': ['localhost'], 'rdma_verify_tset': ['localhost']}
    assert uv.warning_lines(unknown, KNOWN) == [
        'localhost: network_operator_image_pull_secrets is set but no role of gpufabric.roce reads it, so it has no effect. '
        'Fix: did you mean network_operator_airgap.image_pull_secrets? Rename it, or remove it',
        'localhost: rdma_verify_tset is set but no role of gpufabric.roce reads it, so it has no effect. '
        'Fix: did you mean rdma_verify_tests? Rename it, or remove it',
        'node1, node2, node3 and 2 other hosts: roce_vlan is set but no role of gpufabric.roce reads it, so it has no effect. '
        'Fix: did you mean roce_vlan_id? Rename it, or remove it',
    ]


def test_near_misses_of_a_prefix_are_caught_with_the_meant_name():
    """Before: only names starting with a known prefix were looked at, so sriov_network_trust went unnoticed."""
    hosts = [('node1', ['sriov_network_trust', 'roc_mtu', 'rdmaverify_tests', 'hostnetwork_forwarding', 'ansible_host',
                        'rack_mtu', 'sriov_network_foo', 'my_roce_thing'])]
    unknown = uv.find_unknown(hosts, KNOWN)
    assert sorted(unknown) == ['hostnetwork_forwarding', 'rdmaverify_tests', 'roc_mtu', 'sriov_network_trust']
    lines = uv.warning_lines(unknown, KNOWN)
    assert ('node1: sriov_network_trust is set but no role of gpufabric.roce reads it, so it has no effect. '
            'Fix: did you mean sriov_networks_trust? Rename it, or remove it') in lines
    assert 'Fix: did you mean roce_mtu? Rename it' in lines[2]
    # The fix, applied: the meant names are known, nothing is left to warn about.
    assert uv.find_unknown([('node1', [uv.suggestion(n, KNOWN) for n in unknown])], KNOWN) == {}


def test_no_suggestion_when_nothing_is_close():
    assert uv.warning_lines({'preflight_zzzzzz_qqq': ['n1']}, KNOWN) == [
        "n1: preflight_zzzzzz_qqq is set but no role of gpufabric.roce reads it, so it has no effect. "
        "Fix: check its spelling against docs/inventory.md and the roles' argument specs, or remove it"]


class FakeHostvars(dict):
    def raw_get(self, host):
        return self[host]


def _action(args):
    task = mock.MagicMock()
    task.args = args
    action = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    return action


def test_action_warns_once_per_name_and_never_fails():
    hostvars = FakeHostvars({'node1': {'roce_vlan': 100, 'roce_pf': 'x'}, 'node2': {'roce_vlan': 100, 'roce_site': 'a'},
                             'localhost': {'network_operator_namespace': 'n'}})
    with mock.patch.object(ActionBase, 'run', return_value={}):
        result = _action({'ignore': ['roce_site']}).run(task_vars={'hostvars': hostvars, 'groups': {'all': list(hostvars)}})
    assert result['unknown'] == {'roce_vlan': ['node1', 'node2']}
    assert result['hosts'] == 3 and not result.get('failed') and result['changed'] is False
    assert result['warnings'] == ['node1, node2: roce_vlan is set but no role of gpufabric.roce reads it, so it has no effect. '
                                  'Fix: did you mean roce_vlan_id? Rename it, or remove it']
    with mock.patch.object(ActionBase, 'run', return_value={}):
        clean = _action({}).run(task_vars={'hostvars': FakeHostvars({'n': {'roce_pf': 'x'}}), 'groups': {'all': ['n']}})
    assert 'warnings' not in clean and clean['unknown'] == {}

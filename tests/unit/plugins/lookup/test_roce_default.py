"""The shared fabric variables' defaults are written once (module_utils/_fabric/rails.ROCE_DEFAULTS): the roles' YAML reads
them through the gpufabric.roce.roce_default lookup, the controller's renderers import the table, and the argument
specs that document a default show the same value. The same lookup answers for roce_render_dir (computed from the
directory of the run) and for a role's literal default read outside that role (rdma_verify_mode)."""

import glob
import os
import re

import pytest
import yaml
from ansible.errors import AnsibleLookupError

from ansible_collections.gpufabric.roce.plugins.lookup.roce_default import LookupModule
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nic_config import NIC_CONFIG_DEFAULT_KEYS
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov import SRIOV_DEFAULT_KEYS
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import ROCE_DEFAULTS
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir, os.pardir))
SHARED = sorted(ROCE_DEFAULTS)
# Read outside their own role, or computed: the lookup is their one source too.
OTHERS = ['rdma_verify_mode', 'roce_render_dir']
# `roce_mtu | default(<anything>)`: what the default of a shared variable is, wherever the roles or site.yml give one.
FALLBACK = re.compile(r"\b(%s)\s*\|\s*default\(" % "|".join(SHARED + OTHERS))
LOOKUP = "lookup('gpufabric.roce.roce_default', '%s')"


def _yaml_files():
    return sorted(glob.glob(os.path.join(REPO, 'roles', '**', '*.yml'), recursive=True) + glob.glob(os.path.join(REPO, 'playbooks', '*.yml')))


def test_the_lookup_returns_the_table_in_order():
    assert LookupModule().run(['roce_mtu', 'roce_num_vfs', 'roce_vf_mode']) == [9000, 8, 'operator']
    assert LookupModule().run(SHARED) == [ROCE_DEFAULTS[k] for k in SHARED]


def test_the_lookup_refuses_a_name_without_a_default_and_names_the_ones_it_has():
    with pytest.raises(AnsibleLookupError) as exc:
        LookupModule().run(['roce_pf'])
    assert "'roce_pf' has no collection default" in str(exc.value)
    assert 'Fix: name one of %s, roce_render_dir, or a variable of roles/<role>/defaults/main.yml' % ', '.join(SHARED) in str(exc.value)


def test_every_yaml_fallback_of_a_shared_variable_is_the_lookup():
    seen, wrong = set(), []
    for path in _yaml_files():
        with open(path) as fh:
            text = fh.read()
        for m in FALLBACK.finditer(text):
            seen.add(m.group(1))
            # roce_render_dir's default(..., true): an empty value means the default too.
            if not (text.startswith(LOOKUP % m.group(1) + ')', m.end()) or text.startswith(LOOKUP % m.group(1) + ', true)', m.end())):
                wrong.append('%s: %s' % (os.path.relpath(path, REPO), text[m.start():m.end() + 40]))
    assert not wrong, wrong
    # The scan found the roles' fallbacks (a scan that matches nothing would pass anything).
    assert seen == set(SHARED + OTHERS), seen


def test_the_lookup_computes_the_render_dir_from_the_runs_directory(monkeypatch):
    monkeypatch.setenv('PWD', '/srv/rollout')
    assert LookupModule().run(['roce_render_dir']) == ['/srv/rollout/render-out']
    # lookup('ansible.builtin.env', 'PWD') | default('.', true): an unset or empty PWD is the current directory.
    monkeypatch.setenv('PWD', '')
    assert LookupModule().run(['roce_render_dir']) == ['./render-out']


def test_the_lookup_reads_a_roles_literal_default_from_the_roles_file():
    with open(os.path.join(REPO, 'roles', 'rdma_verify', 'defaults', 'main.yml')) as fh:
        mode = yaml.safe_load(fh)['rdma_verify_mode']
    assert LookupModule().run(['rdma_verify_mode']) == [mode]


def test_the_lookup_refuses_a_templated_role_default_and_an_unknown_role():
    # rdma_verify_hosts is a template over the play: no value stands for it outside the role.
    for name in ('rdma_verify_hosts', 'gpu_operator_mode'):
        with pytest.raises(AnsibleLookupError) as exc:
            LookupModule().run([name])
        assert "%r has no collection default" % name in str(exc.value)


def test_the_renderers_fallbacks_of_shared_variables_are_the_table():
    for keys in (SRIOV_DEFAULT_KEYS, NIC_CONFIG_DEFAULT_KEYS):
        got = with_role_defaults('sriov_networks', keys)
        assert {k: got[k] for k in keys if k in ROCE_DEFAULTS} == {k: ROCE_DEFAULTS[k] for k in keys if k in ROCE_DEFAULTS}
    assert {'roce_num_vfs', 'roce_mtu', 'roce_vlan_id', 'roce_vf_mode'} <= set(SRIOV_DEFAULT_KEYS)


def test_documented_defaults_of_shared_variables_are_the_table():
    found = 0
    for path in glob.glob(os.path.join(REPO, 'roles', '*', 'meta', 'argument_specs.yml')):
        with open(path) as fh:
            specs = yaml.safe_load(fh)['argument_specs']
        for entry in specs.values():
            for name, spec in (entry.get('options') or {}).items():
                if name in ROCE_DEFAULTS and 'default' in spec:
                    found += 1
                    assert spec['default'] == ROCE_DEFAULTS[name], (path, name, spec['default'])
    assert found >= 4


def test_the_inventory_reference_shows_the_table():
    # docs/inventory.md's variable table: the default column of each shared variable.
    with open(os.path.join(REPO, 'docs', 'inventory.md')) as fh:
        rows = dict(re.findall(r"^\| `(roce_[a-z0-9_]+)` \| `([^`]*)` \|", fh.read(), re.M))
    documented = [k for k in SHARED if k in rows]
    assert {k: rows[k] for k in documented} == {k: str(ROCE_DEFAULTS[k]) for k in documented}
    # The rollout knobs (roce_serial, roce_strategy, roce_max_fail_percentage) are docs/fleet-scale.md's; the fabric's are all here.
    assert {'roce_num_vfs', 'roce_mtu', 'roce_vlan_id', 'roce_vf_mode', 'roce_qos_via', 'roce_k8s_mode'} <= set(documented)

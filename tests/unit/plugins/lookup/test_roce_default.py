"""The shared fabric variables' defaults are written once (module_utils/_rails.ROCE_DEFAULTS): the roles' YAML reads
them through the gpufabric.roce.roce_default lookup, the controller's renderers import the table, and the argument
specs that document a default show the same value."""

import glob
import os
import re

import pytest
import yaml
from ansible.errors import AnsibleLookupError

from ansible_collections.gpufabric.roce.plugins.lookup.roce_default import LookupModule
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_nic_config import NIC_CONFIG_DEFAULT_KEYS
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_sriov import SRIOV_DEFAULT_KEYS
from ansible_collections.gpufabric.roce.plugins.module_utils._rails import ROCE_DEFAULTS
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir, os.pardir))
SHARED = sorted(ROCE_DEFAULTS)
# `roce_mtu | default(<anything>)`: what the default of a shared variable is, wherever the roles or site.yml give one.
FALLBACK = re.compile(r"\b(%s)\s*\|\s*default\(" % "|".join(SHARED))
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
    assert 'Fix: name one of %s' % ', '.join(SHARED) in str(exc.value)


def test_every_yaml_fallback_of_a_shared_variable_is_the_lookup():
    seen, wrong = set(), []
    for path in _yaml_files():
        with open(path) as fh:
            text = fh.read()
        for m in FALLBACK.finditer(text):
            seen.add(m.group(1))
            if not text.startswith(LOOKUP % m.group(1) + ')', m.end()):
                wrong.append('%s: %s' % (os.path.relpath(path, REPO), text[m.start():m.end() + 40]))
    assert not wrong, wrong
    # The scan found the roles' fallbacks (a scan that matches nothing would pass anything).
    assert seen == set(SHARED), seen


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
    # The rollout knobs (roce_serial, roce_strategy, roce_max_fail_percentage) are README's; the fabric's are all here.
    assert {'roce_num_vfs', 'roce_mtu', 'roce_vlan_id', 'roce_vf_mode', 'roce_qos_via', 'roce_k8s_mode'} <= set(documented)

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SR-IOV, drain-pool and NicConfigurationTemplate renderers have no defaults of their own (issue 21: no default
written twice): what a caller does not give comes from roles/sriov_networks/defaults/main.yml and
_rails.ROCE_DEFAULTS (plugin_utils/_role_defaults.py)."""

import os

import pytest
import yaml

from ansible_collections.gpufabric.roce.plugins.filter.k8s_render import nic_config_templates, sriov_manifests, sriov_pool_configs
from ansible_collections.gpufabric.roce.plugins.module_utils import _k8s_nic_config, _k8s_sriov, _k8s_sriov_pool
from ansible_collections.gpufabric.roce.plugins.module_utils._rails import ROCE_DEFAULTS
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_defaults
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir, os.pardir))
KEYS = {
    "sriov": _k8s_sriov.SRIOV_DEFAULT_KEYS,
    "pool": _k8s_sriov_pool.POOL_DEFAULT_KEYS,
    "nic": _k8s_nic_config.NIC_CONFIG_DEFAULT_KEYS,
}
HOSTVARS = {"gpu0": {"roce_node_name": "gpu0", "roce_pf": "enp157s0np0", "roce_pod_subnet": "10.255.0.0/30", "roce_pod_gateway": "10.255.0.2"}}


def _role_file():
    with open(os.path.join(REPO, "roles", "sriov_networks", "defaults", "main.yml")) as fh:
        return yaml.safe_load(fh)


@pytest.mark.parametrize("kind", sorted(KEYS))
def test_every_fallback_is_the_role_file_or_the_shared_table(kind):
    role = _role_file()
    got = with_role_defaults("sriov_networks", KEYS[kind])
    assert set(got) == set(KEYS[kind])
    for key, value in got.items():
        if key in ROCE_DEFAULTS:
            assert value == ROCE_DEFAULTS[key], key
        elif isinstance(role[key], str) and "{{" in role[key]:
            # "{{ network_operator_namespace | default('nvidia-network-operator') }}": what Ansible gives without that variable
            assert "default('%s')" % value in role[key], (key, role[key])
        else:
            assert value == role[key], key


def test_the_two_templated_defaults_resolve_to_their_literals():
    got = with_role_defaults("sriov_networks", KEYS["sriov"])
    assert got["sriov_networks_namespace"] == "nvidia-network-operator"
    assert got["sriov_networks_resource_prefix"] == "nvidia.com"


def test_the_callers_values_win_and_none_means_not_given():
    got = with_role_defaults("sriov_networks", KEYS["sriov"], {"sriov_networks_priority": 10, "roce_mtu": None, "unrelated": 1})
    assert got["sriov_networks_priority"] == 10 and got["roce_mtu"] == ROCE_DEFAULTS["roce_mtu"] and got["unrelated"] == 1


def test_a_renderer_changing_what_it_got_does_not_change_the_next_callers_defaults():
    first = with_role_defaults("sriov_networks", KEYS["sriov"])
    first["sriov_networks_ipam_routes"].append({"dst": "192.0.2.0/24"})
    assert with_role_defaults("sriov_networks", KEYS["sriov"])["sriov_networks_ipam_routes"] == [{"dst": "0.0.0.0/0"}]


def test_a_template_the_renderers_cannot_resolve_is_refused_naming_file_key_and_value(monkeypatch):
    monkeypatch.setattr(_role_defaults, "role_defaults", lambda role: {"sriov_networks_name_prefix": "{{ inventory_hostname }}"})
    with pytest.raises(ValueError) as exc:
        _role_defaults._fallback("sriov_networks", "sriov_networks_name_prefix")
    assert "roles/sriov_networks/defaults/main.yml: sriov_networks_name_prefix: '{{ inventory_hostname }}'" in str(exc.value)


@pytest.mark.parametrize("call", [
    lambda: _k8s_sriov.render_sriov(["gpu0"], HOSTVARS, {"roce_mtu": 9000}),
    lambda: _k8s_sriov_pool.render_pool_configs([{"host": "gpu0", "node_name": "gpu0"}], HOSTVARS, {}),
    lambda: _k8s_nic_config.render_nic_config_templates({"nodes": {}}, HOSTVARS, [], {}),
], ids=["sriov", "pool", "nic"])
def test_the_renderers_refuse_incomplete_defaults_instead_of_guessing(call):
    with pytest.raises(ValueError, match="lacks? .*pass the role's defaults"):
        call()


def test_the_filters_fill_in_the_role_defaults():
    out = sriov_manifests(HOSTVARS, ["gpu0"], {})
    (policy,) = out["policies"]
    assert policy["metadata"]["namespace"] == "nvidia-network-operator"
    assert policy["spec"]["priority"] == _role_file()["sriov_networks_priority"]
    assert policy["spec"]["mtu"] == ROCE_DEFAULTS["roce_mtu"] and policy["spec"]["numVfs"] == ROCE_DEFAULTS["roce_num_vfs"]
    pools = sriov_pool_configs(HOSTVARS, out["nodes"], None)
    assert pools["pools"][0]["requested"] == _role_file()["sriov_networks_pool_max_unavailable"]
    assert nic_config_templates(HOSTVARS, ["gpu0"], {}) == {"templates": [], "devices": []}  # roce_qos_via: host by default

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's renderers have no defaults of their own (issue 21: no default written twice): what a caller does not
give comes from the role's defaults/main.yml (sriov_networks: the SR-IOV, drain-pool and NicConfigurationTemplate
renderers; network_operator: the Helm values, the chart reference and the NicClusterPolicy) and _fabric.rails.ROCE_DEFAULTS
(plugin_utils/_role_defaults.py)."""

import os

import pytest
import yaml

from ansible_collections.gpufabric.roce.plugins.filter.k8s_render import FilterModule, nic_config_templates, sriov_manifests, sriov_pool_configs
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import nic_config as _k8s_nic_config
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import operator as _k8s_operator
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import sriov as _k8s_sriov
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import sriov_pool as _k8s_sriov_pool
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import ROCE_DEFAULTS
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_defaults
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir, os.pardir))
KEYS = {
    "sriov": ("sriov_networks", _k8s_sriov.SRIOV_DEFAULT_KEYS),
    "pool": ("sriov_networks", _k8s_sriov_pool.POOL_DEFAULT_KEYS),
    "nic": ("sriov_networks", _k8s_nic_config.NIC_CONFIG_DEFAULT_KEYS),
    "helm": ("network_operator", _k8s_operator.HELM_DEFAULT_KEYS),
    "ncp": ("network_operator", _k8s_operator.NCP_DEFAULT_KEYS),
}
HOSTVARS = {"gpu0": {"roce_node_name": "gpu0", "roce_pf": "enp157s0np0", "roce_pod_subnet": "10.255.0.0/30", "roce_pod_gateway": "10.255.0.2"}}


def _role_file(role="sriov_networks"):
    with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as fh:
        return yaml.safe_load(fh)


@pytest.mark.parametrize("kind", sorted(KEYS))
def test_every_fallback_is_the_role_file_or_the_shared_table(kind):
    role_name, keys = KEYS[kind]
    role = _role_file(role_name)
    got = with_role_defaults(role_name, keys)
    assert set(got) == set(keys)
    for key, value in got.items():
        if key in ROCE_DEFAULTS:
            assert value == ROCE_DEFAULTS[key], key
        elif isinstance(role[key], str) and "{{" in role[key]:
            # "{{ network_operator_namespace | default('nvidia-network-operator') }}": what Ansible gives without that variable
            assert "default('%s')" % value in role[key], (key, role[key])
        else:
            assert value == role[key], key


def test_the_two_templated_defaults_resolve_to_their_literals():
    got = with_role_defaults(*KEYS["sriov"])
    assert got["sriov_networks_namespace"] == "nvidia-network-operator"
    assert got["sriov_networks_resource_prefix"] == "nvidia.com"


def test_a_default_that_follows_another_roles_variable_takes_the_callers_value():
    """sriov_networks_resource_prefix follows network_operator_resource_prefix, as Ansible templates it; a value the caller
    gives for the key itself still wins, and None for the other variable means not given."""
    keys = ("sriov_networks_resource_prefix", "sriov_networks_namespace", "sriov_networks_name_prefix")
    got = with_role_defaults("sriov_networks", keys, others={"network_operator_resource_prefix": "example.com"})
    assert got == {"sriov_networks_resource_prefix": "example.com", "sriov_networks_namespace": "nvidia-network-operator",
                   "sriov_networks_name_prefix": "roce"}
    given = with_role_defaults("sriov_networks", keys, {"sriov_networks_resource_prefix": "fab.io"},
                               others={"network_operator_resource_prefix": "example.com"})
    assert given["sriov_networks_resource_prefix"] == "fab.io"
    unset = with_role_defaults("sriov_networks", keys, others={"network_operator_resource_prefix": None})
    assert unset["sriov_networks_resource_prefix"] == "nvidia.com"


def test_the_callers_values_win_and_none_means_not_given():
    got = with_role_defaults(*KEYS["sriov"], {"sriov_networks_priority": 10, "roce_mtu": None, "unrelated": 1})
    assert got["sriov_networks_priority"] == 10 and got["roce_mtu"] == ROCE_DEFAULTS["roce_mtu"] and got["unrelated"] == 1


def test_a_renderer_changing_what_it_got_does_not_change_the_next_callers_defaults():
    first = with_role_defaults(*KEYS["sriov"])
    first["sriov_networks_ipam_routes"].append({"dst": "192.0.2.0/24"})
    assert with_role_defaults(*KEYS["sriov"])["sriov_networks_ipam_routes"] == [{"dst": "0.0.0.0/0"}]


def test_a_template_the_renderers_cannot_resolve_is_refused_naming_file_key_and_value(monkeypatch):
    monkeypatch.setattr(_role_defaults, "role_defaults", lambda role: {"sriov_networks_name_prefix": "{{ inventory_hostname }}"})
    with pytest.raises(ValueError) as exc:
        _role_defaults._fallback("sriov_networks", "sriov_networks_name_prefix")
    assert "roles/sriov_networks/defaults/main.yml: sriov_networks_name_prefix: '{{ inventory_hostname }}'" in str(exc.value)


@pytest.mark.parametrize("call", [
    lambda: _k8s_sriov.render_sriov(["gpu0"], HOSTVARS, {"roce_mtu": 9000}),
    lambda: _k8s_sriov_pool.render_pool_configs([{"host": "gpu0", "node_name": "gpu0"}], HOSTVARS, {}),
    lambda: _k8s_nic_config.render_nic_config_templates({"nodes": {}}, HOSTVARS, [], {}),
    lambda: _k8s_operator.render_helm_values({"network_operator_namespace": "x"}),
    lambda: _k8s_operator.render_chart_reference({}),
    lambda: _k8s_operator.render_nic_cluster_policy({"network_operator_ipam": "none"}),
], ids=["sriov", "pool", "nic", "helm", "chart", "ncp"])
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


def test_the_network_operator_filters_fill_in_the_role_defaults():
    f = FilterModule().filters()
    role = _role_file("network_operator")
    chart = f["_network_operator_chart_reference"]({})
    assert chart["namespace"] == role["network_operator_namespace"] and chart["version"] == role["network_operator_chart_version"]
    values = f["network_operator_helm_values"](None)
    assert values["sriovNetworkOperator"]["enabled"] is role["network_operator_sriov_enabled"]
    policy = f["_nic_cluster_policy"]({})
    # Its role default is derived from roce_qos_via (host by default): without it the operator is not deployed.
    assert "nicConfigurationOperator" not in policy["spec"]
    assert "nicConfigurationOperator" in f["_nic_cluster_policy"]({"network_operator_nic_configuration_operator": True})["spec"]

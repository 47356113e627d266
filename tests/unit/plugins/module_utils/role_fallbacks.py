# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The renderers' defaults as their filters hand them over: the test's values over the role's own defaults/main.yml
(sriov_networks, network_operator; plugin_utils/_role_defaults.py). The renderers have no defaults of their own."""

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nic_config import NIC_CONFIG_DEFAULT_KEYS
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.operator import HELM_DEFAULT_KEYS, NCP_DEFAULT_KEYS
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov import SRIOV_DEFAULT_KEYS
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov_pool import POOL_DEFAULT_KEYS
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults


def sriov_defaults(given=None):
    return with_role_defaults("sriov_networks", SRIOV_DEFAULT_KEYS, given)


def pool_defaults(given=None):
    return with_role_defaults("sriov_networks", POOL_DEFAULT_KEYS, given)


def nic_defaults(given=None):
    return with_role_defaults("sriov_networks", NIC_CONFIG_DEFAULT_KEYS, given)


def helm_defaults(given=None):
    return with_role_defaults("network_operator", HELM_DEFAULT_KEYS, given)


def ncp_defaults(given=None):
    return with_role_defaults("network_operator", NCP_DEFAULT_KEYS, given)

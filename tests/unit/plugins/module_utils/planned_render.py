# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``render_sriov`` as the SR-IOV render runs it: a node with roce_rails reads its rails from the fabric table the plan
builder makes of the nodes (plugin_utils/_plan_builder.py), never from a derivation of its own."""

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import is_multirail
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import sriov
from ansible_collections.gpufabric.roce.plugins.plugin_utils._plan_builder import Inventory


def render_sriov(hosts, host_vars, defaults=None):
    """The test's nodes (``host_vars``: host -> its variables) rendered from their plan. A node with rails whose table the
    builder refuses fails here, with the builder's message, as the validation play fails before the render."""
    table = None
    if any(is_multirail(host_vars.get(h)) for h in hosts):
        table = Inventory(host_vars, [h for h in hosts if h in host_vars]).table()
    return sriov.render_sriov(hosts, host_vars, defaults, table)

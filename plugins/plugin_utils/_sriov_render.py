# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every SR-IOV object of a run, from one read of the nodes' variables (the action gpufabric.roce.sriov_render).

The policies and networks (with nv-ipam's pools), the drain pools and the NicConfigurationTemplates were three
filters, each reading every node's variables, and each result went through Ansible's variables as nested data: at
10,000 nodes x 8 rails ansible-core 2.19 rebuilt the 160,000 objects once when the filter returned them and again for
every task that passed them on (benchmarks/README.md). Here they are rendered from one raw read, and leave as one JSON
text (``objects``): one value for Ansible to carry, parsed where the objects are written or applied.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import json

from ansible_collections.gpufabric.roce.plugins.module_utils import _fabric_plan as fp
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_common import _plain
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_nic_config import (
    NIC_CONFIG_DEFAULT_KEYS,
    NIC_CONFIG_PER_HOST_KEYS,
    render_nic_config_templates,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_sriov import SRIOV_DEFAULT_KEYS, SRIOV_PER_HOST_KEYS, render_sriov
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_sriov_pool import POOL_DEFAULT_KEYS, POOL_PER_HOST_KEYS, render_pool_configs
from ansible_collections.gpufabric.roce.plugins.module_utils._pod_network import fabric_table, is_fabric_table
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _raw_vars as raw_vars
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults

# The keys of ``objects`` and, in this order, the kinds a render mode directory and an apply run hold.
OBJECT_KEYS = ("policies", "networks", "ip_pools", "pool_configs", "nic_config_templates")


def str_hosts(hosts):
    return [str(h) for h in ([hosts] if isinstance(hosts, str) else hosts or [])]


def host_inputs(rows, hosts, keys):
    """The ``keys`` each host of ``hosts`` sets (rows: plugin_utils/_raw_vars.view); a host not in the inventory is left
    out, for the renderer to report as a host without variables."""
    return {h: raw_vars.inputs(rows, h, keys) for h in hosts if h in rows}


def sriov(rows, hosts, defaults):
    return render_sriov(hosts, host_inputs(rows, hosts, SRIOV_PER_HOST_KEYS), with_role_defaults("sriov_networks", SRIOV_DEFAULT_KEYS, _plain(defaults)))


def pools(rows, nodes, defaults):
    # The pools read each node's host and name only: converting the render's whole node entries (every rail, as
    # Ansible's lazy containers when the filter is given them) cost about 10 s at 10,000 nodes x 8 rails.
    nodes = [{"host": str(n["host"]), "node_name": str(n["node_name"])} for n in (nodes or [])]
    return render_pool_configs(nodes, host_inputs(rows, [n["host"] for n in nodes], POOL_PER_HOST_KEYS),
                               with_role_defaults("sriov_networks", POOL_DEFAULT_KEYS, _plain(defaults)))


def nic_config(rows, hosts, defaults, table=None):
    """``{templates, devices}``, both empty (and nothing read but each node's roce_qos_via) when no node has
    ``roce_qos_via: operator``. ``table``: the fabric table of this run's plan, used when it has every host."""
    cfg = with_role_defaults("sriov_networks", NIC_CONFIG_DEFAULT_KEYS, _plain(defaults))
    via = {h: raw_vars.inputs(rows, h, ("roce_qos_via",)).get("roce_qos_via") for h in hosts}
    if all((v if v not in (None, "") else cfg["roce_qos_via"]) == "host" for v in via.values()):
        return {"templates": [], "devices": []}  # the host_network phase applies every node's QoS (or none has any)
    table = _plain(table() if callable(table) else table)
    if not (is_fabric_table(table) and all(h in table["nodes"] for h in hosts)):
        table = fabric_table(rows, hosts)
    inputs = {h: raw_vars.inputs(rows, h, NIC_CONFIG_PER_HOST_KEYS) for h in hosts}
    return render_nic_config_templates(table, inputs, hosts, cfg)


def whole_fabric(rows, hosts, plan, declared=None):
    """Before objects meant to be applied or written are rendered: ``_fabric_plan.check_whole_fabric`` on this run's plan
    (or None). The plan is converted to plain data only as far as the check reads it: its table only when it was read
    back (roce_plan), to compare with this run's variables."""
    if not fp.is_plan(plan):
        return
    head = {k: _plain(plan.get(k)) for k in ("kind", "complete", fp.READ_FROM)}
    if head[fp.READ_FROM] is not None and head["complete"]:
        head.update(order=_plain(plan["order"]), fabric=_plain(plan["fabric"]))
    fp.check_whole_fabric(head, hosts, lambda nodes: fabric_table(rows, nodes), _plain(declared))


def render_all(rows, hosts, defaults, pool_defaults, nic_config_defaults, *, table=None):
    """Every SR-IOV object of the run. ``table``: the plan's fabric table, or a function returning it (read only when a
    node has roce_qos_via operator). Raises RenderValidationError, GpufabricError or ValueError (a value that could not
    be templated), each naming the host, the field and the value."""
    hosts = str_hosts(hosts)
    rendered = sriov(rows, hosts, defaults)
    drain = pools(rows, rendered["nodes"], pool_defaults)
    qos = nic_config(rows, hosts, nic_config_defaults, table)
    objects = {"policies": rendered["policies"], "networks": rendered["networks"], "ip_pools": rendered.get("ip_pools") or [],
               "pool_configs": drain["pool_configs"], "nic_config_templates": qos["templates"],
               "nodes": rendered["nodes"], "nic_config_devices": qos["devices"]}
    counts = {k: len(v) for k, v in objects.items()}
    return {
        "objects": json.dumps(objects, separators=(",", ":")),
        "counts": counts,
        "pools": drain["pools"],
        "node_names": {n["host"]: n["node_name"] for n in rendered["nodes"]},
        "nic_config_nodes": len({d["node_name"] for d in qos["devices"]}),
    }

# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every SR-IOV object of a run, from what the fabric plan carries of each node (the action gpufabric.roce.sriov_render).

The policies and networks (with nv-ipam's pools), the drain pools and the NicConfigurationTemplates were three
filters, each reading every node's variables, and each result went through Ansible's variables as nested data: at
10,000 nodes x 8 rails ansible-core 2.19 rebuilt the 160,000 objects once when the filter returned them and again for
every task that passed them on (benchmarks/README.md). Here they are rendered from the nodes' inputs (``inputs``: host ->
the variables it sets, as the inventory names them) and each node's rails from the fabric table (``table``), both the
plan builder's: ``_fabric.plan.node_inputs`` and the table of the run's plan, or ``_plan_builder.Inventory`` where there
is none. They leave as one JSON text (``objects``): one value for Ansible to carry, parsed where the objects are written
or applied.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import json

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import plain
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nic_config import (
    NIC_CONFIG_DEFAULT_KEYS,
    NIC_CONFIG_PER_HOST_KEYS,
    qos_via,
    render_nic_config_templates,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov import SRIOV_DEFAULT_KEYS, SRIOV_PER_HOST_KEYS, render_sriov
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov_pool import POOL_DEFAULT_KEYS, POOL_PER_HOST_KEYS, render_pool_configs
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.nccl import gateway_rails, inventory_env
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import gateway_args_list, is_fabric_table
from ansible_collections.gpufabric.roce.plugins.plugin_utils._plan_builder import NCCL_SOCKET_KEY, POD_NETWORK_KEYS
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults

# The keys of ``objects`` and, in this order, the kinds a render mode directory and an apply run hold.
OBJECT_KEYS = ("policies", "networks", "ip_pools", "pool_configs", "nic_config_templates")


def str_hosts(hosts):
    return [str(h) for h in ([hosts] if isinstance(hosts, str) else hosts or [])]


def _of(inputs, host, keys):
    row = inputs[host]
    return {k: row[k] for k in keys if k in row}


def host_inputs(inputs, hosts, keys):
    """The ``keys`` each host of ``hosts`` sets; a host without inputs is left out, for the renderer to report as a host
    without variables."""
    return {h: _of(inputs, h, keys) for h in hosts if h in inputs}


def sriov(inputs, hosts, defaults, table):
    """The policies and networks. ``table``: the fabric table of ``hosts``, or a function returning it (called only when a
    node has roce_rails: its rails are the table's)."""
    own = host_inputs(inputs, hosts, SRIOV_PER_HOST_KEYS)
    rails = [h for h in hosts if own.get(h, {}).get("roce_rails") not in (None, [])]
    return render_sriov(hosts, own, with_role_defaults("sriov_networks", SRIOV_DEFAULT_KEYS, plain(defaults)),
                        _table(rails, table) if rails else None)


def pools(inputs, nodes, defaults):
    # The pools read each node's host and name only: converting the render's whole node entries (every rail, as
    # Ansible's lazy containers when the filter is given them) cost about 10 s at 10,000 nodes x 8 rails.
    nodes = [{"host": str(n["host"]), "node_name": str(n["node_name"])} for n in (nodes or [])]
    return render_pool_configs(nodes, host_inputs(inputs, [n["host"] for n in nodes], POOL_PER_HOST_KEYS),
                               with_role_defaults("sriov_networks", POOL_DEFAULT_KEYS, plain(defaults)))


def _once(table):
    """``table``, or a function returning it, as a function that makes it at most once."""
    if not callable(table):
        return table
    made = []

    def once():
        if not made:
            made.append(table())
        return made[0]

    return once


def _table(hosts, table):
    """The fabric table of ``hosts`` (``table``: the table, or a function returning it as plain data)."""
    table = table() if callable(table) else plain(table)
    missing = [h for h in hosts if not is_fabric_table(table) or h not in table["nodes"]]
    if missing:
        raise ValueError("%s: not in the fabric table the render was given (%d of %d hosts are not)" % (missing[0], len(missing), len(hosts)))
    return table


def nic_config_settings(defaults):
    """The NicConfigurationTemplates' cluster settings (NIC_CONFIG_DEFAULT_KEYS): ``defaults`` (the role's
    __sriov_networks_nic_config_defaults) over the sriov_networks role's defaults. Computed once per render."""
    return with_role_defaults("sriov_networks", NIC_CONFIG_DEFAULT_KEYS, plain(defaults))


def qos_via_host(inputs, hosts, cfg):
    """Whether the host_network phase applies every node's QoS (or none has any): no NicConfigurationTemplate then.
    ``cfg``: ``nic_config_settings``."""
    return all(qos_via(inputs, h, cfg) == "host" for h in hosts)


def nic_config(inputs, hosts, cfg, table):
    """``{templates, devices}``, both empty (and nothing read but each node's roce_qos_via) when no node has
    ``roce_qos_via: operator``. ``cfg``: ``nic_config_settings``; ``table``: the fabric table of ``hosts``, or a function
    returning it (called only then)."""
    if qos_via_host(inputs, hosts, cfg):
        return {"templates": [], "devices": []}
    return render_nic_config_templates(_table(hosts, table), {h: _of(inputs, h, NIC_CONFIG_PER_HOST_KEYS) if h in inputs else {}
                                                              for h in hosts}, hosts, cfg)


def nccl_settings(inputs, nodes, cfg, table):
    """What the inventory determines of every node's NCCL settings (``_fabric.nccl.inventory_env``; HOST_FACT_SETTINGS need the
    node's facts), for a ConfigMap written without the host_network phase: ``{env: {node name: settings}, host_qos: [node
    names]}``, ``host_qos`` the nodes whose QoS the host_network phase applies (roce_qos_via host), which no rendered
    object carries. ``nodes``: the render's node entries; ``cfg`` and ``table`` as nic_config's."""
    hosts = [str(n["host"]) for n in nodes]
    names = {str(n["host"]): str(n["node_name"]) for n in nodes}
    # Without a pod network (whereabouts without node subnets: site.yml plans nothing) a node has no gateway, hence no
    # rail the host_network phase derives NCCL settings for.
    networked = all(_of(inputs, h, POD_NETWORK_KEYS) for h in hosts)
    table = _table(hosts, table) if networked else {"nodes": {}}
    socket_default = with_role_defaults("host_network", (NCCL_SOCKET_KEY,))[NCCL_SOCKET_KEY]
    env, host_qos = {}, []
    for h in hosts:
        gateways = gateway_args_list(table, h, with_routes=False) if h in table["nodes"] else []
        socket = inputs[h].get(NCCL_SOCKET_KEY, socket_default)
        env[names[h]] = inventory_env(gateway_rails(gateways), socket)["env"]
        if qos_via(inputs, h, cfg) == "host" and any(g.get("qos") for g in gateways):
            host_qos.append(names[h])
    return {"env": env, "host_qos": host_qos}


def whole_fabric(hosts, plan, declared=None):
    """Before objects meant to be applied or written are rendered: ``_fabric.plan.check_whole_fabric`` on this run's plan
    (or None). Only the plan's head is converted to plain data: the check reads no node."""
    if not fp.is_plan(plan):
        return
    head = {k: plain(plan.get(k)) for k in ("kind", "complete", fp.READ_FROM)}
    if head[fp.READ_FROM] is not None and head["complete"]:
        head.update(order=plain(plan["order"]))
    fp.check_whole_fabric(head, hosts, plain(declared))


def render_all(inputs, hosts, defaults, pool_defaults, nic_config_defaults, *, table, nccl=False):
    """Every SR-IOV object of the run. ``inputs``: host -> the variables it sets; ``table``: the fabric table of
    ``hosts``, or a function returning it (called only when a node has roce_rails or roce_qos_via operator, or with
    ``nccl``).
    ``nccl``: also what the inventory determines of the nodes' NCCL settings (``nccl_settings``). Raises
    RenderValidationError, GpufabricError or ValueError (a value that could not be templated), each naming the host,
    the field and the value."""
    hosts = str_hosts(hosts)
    table = _once(table)
    rendered = sriov(inputs, hosts, defaults, table)
    drain = pools(inputs, rendered["nodes"], pool_defaults)
    cfg = nic_config_settings(nic_config_defaults)
    qos = nic_config(inputs, hosts, cfg, table)
    objects = {"policies": rendered["policies"], "networks": rendered["networks"], "ip_pools": rendered.get("ip_pools") or [],
               "pool_configs": drain["pool_configs"], "nic_config_templates": qos["templates"],
               "nodes": rendered["nodes"], "nic_config_devices": qos["devices"], "claim_templates": rendered["claim_templates"]}
    counts = {k: len(v) for k, v in objects.items()}
    out = {
        "objects": json.dumps(objects, separators=(",", ":")),
        "counts": counts,
        "pools": drain["pools"],
        "node_names": {n["host"]: n["node_name"] for n in rendered["nodes"]},
        "nic_config_nodes": len({d["node_name"] for d in qos["devices"]}),
    }
    if nccl:
        out["nccl"] = nccl_settings(inputs, rendered["nodes"], cfg, table)
    if rendered["warnings"]:
        out["warnings"] = rendered["warnings"]  # legal but surprising values; Ansible shows them at default verbosity
    return out

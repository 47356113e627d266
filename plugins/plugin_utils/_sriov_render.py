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

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric import plan as fp
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import plain
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.nic_config import (
    NIC_CONFIG_DEFAULT_KEYS,
    NIC_CONFIG_PER_HOST_KEYS,
    render_nic_config_templates,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov import SRIOV_DEFAULT_KEYS, SRIOV_PER_HOST_KEYS, render_sriov
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov_pool import POOL_DEFAULT_KEYS, POOL_PER_HOST_KEYS, render_pool_configs
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.nccl import gateway_rails, inventory_env
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import fabric_table, gateway_args_list, is_fabric_table
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
    return render_sriov(hosts, host_inputs(rows, hosts, SRIOV_PER_HOST_KEYS), with_role_defaults("sriov_networks", SRIOV_DEFAULT_KEYS, plain(defaults)))


def pools(rows, nodes, defaults):
    # The pools read each node's host and name only: converting the render's whole node entries (every rail, as
    # Ansible's lazy containers when the filter is given them) cost about 10 s at 10,000 nodes x 8 rails.
    nodes = [{"host": str(n["host"]), "node_name": str(n["node_name"])} for n in (nodes or [])]
    return render_pool_configs(nodes, host_inputs(rows, [n["host"] for n in nodes], POOL_PER_HOST_KEYS),
                               with_role_defaults("sriov_networks", POOL_DEFAULT_KEYS, plain(defaults)))


def _table(rows, hosts, table):
    """The fabric table of this run's plan (``table``, or a function returning it) when it has every host, else the one
    the hosts' variables give."""
    table = plain(table() if callable(table) else table)
    if not (is_fabric_table(table) and all(h in table["nodes"] for h in hosts)):
        table = fabric_table(rows, hosts)
    return table


def _qos_via(rows, hosts, cfg):
    """Each host's roce_qos_via, the play host's (``cfg``) where the host sets none."""
    via = {h: raw_vars.inputs(rows, h, ("roce_qos_via",)).get("roce_qos_via") for h in hosts}
    return {h: v if v not in (None, "") else cfg["roce_qos_via"] for h, v in via.items()}


def nic_config(rows, hosts, defaults, table=None):
    """``{templates, devices}``, both empty (and nothing read but each node's roce_qos_via) when no node has
    ``roce_qos_via: operator``. ``table``: the fabric table of this run's plan, used when it has every host."""
    cfg = with_role_defaults("sriov_networks", NIC_CONFIG_DEFAULT_KEYS, plain(defaults))
    if all(v == "host" for v in _qos_via(rows, hosts, cfg).values()):
        return {"templates": [], "devices": []}  # the host_network phase applies every node's QoS (or none has any)
    table = _table(rows, hosts, table)
    inputs = {h: raw_vars.inputs(rows, h, NIC_CONFIG_PER_HOST_KEYS) for h in hosts}
    return render_nic_config_templates(table, inputs, hosts, cfg)


def nccl_settings(rows, nodes, defaults, table=None):
    """What the inventory determines of every node's NCCL settings (``_fabric.nccl.inventory_env``; HOST_FACT_SETTINGS need the
    node's facts), for a ConfigMap written without the host_network phase: ``{env: {node name: settings}, host_qos: [node
    names]}``, ``host_qos`` the nodes whose QoS the host_network phase applies (roce_qos_via host), which no rendered
    object carries. ``nodes``: the render's node entries; ``defaults`` and ``table`` as nic_config's."""
    hosts = [str(n["host"]) for n in nodes]
    names = {str(n["host"]): str(n["node_name"]) for n in nodes}
    # Without a pod network (whereabouts without node subnets: site.yml plans nothing) a node has no gateway, hence no
    # rail the host_network phase derives NCCL settings for.
    networked = all(raw_vars.inputs(rows, h, ("roce_pod_subnet", "roce_rails")) for h in hosts)
    table = _table(rows, hosts, table) if networked else {"nodes": {}}
    via = _qos_via(rows, hosts, with_role_defaults("sriov_networks", NIC_CONFIG_DEFAULT_KEYS, plain(defaults)))
    socket_key = "host_network_nccl_socket_ifname"
    socket_default = with_role_defaults("host_network", (socket_key,))[socket_key]
    env, host_qos = {}, []
    for h in hosts:
        gateways = gateway_args_list(table, h, with_routes=False) if h in table["nodes"] else []
        socket = raw_vars.inputs(rows, h, (socket_key,)).get(socket_key, socket_default)
        env[names[h]] = inventory_env(gateway_rails(gateways), socket)["env"]
        if via[h] == "host" and any(g.get("qos") for g in gateways):
            host_qos.append(names[h])
    return {"env": env, "host_qos": host_qos}


def whole_fabric(rows, hosts, plan, declared=None):
    """Before objects meant to be applied or written are rendered: ``_fabric.plan.check_whole_fabric`` on this run's plan
    (or None). The plan is converted to plain data only as far as the check reads it: its table only when it was read
    back (roce_plan), to compare with this run's variables."""
    if not fp.is_plan(plan):
        return
    head = {k: plain(plan.get(k)) for k in ("kind", "complete", fp.READ_FROM)}
    if head[fp.READ_FROM] is not None and head["complete"]:
        head.update(order=plain(plan["order"]), fabric=plain(plan["fabric"]))
    fp.check_whole_fabric(head, hosts, lambda nodes: fabric_table(rows, nodes), plain(declared))


def render_all(rows, hosts, defaults, pool_defaults, nic_config_defaults, *, table=None, nccl=False):
    """Every SR-IOV object of the run. ``table``: the plan's fabric table, or a function returning it (read only when a
    node has roce_qos_via operator, or with ``nccl``). ``nccl``: also what the inventory determines of the nodes' NCCL
    settings (``nccl_settings``). Raises RenderValidationError, GpufabricError or ValueError (a value that could not
    be templated), each naming the host, the field and the value."""
    hosts = str_hosts(hosts)
    rendered = sriov(rows, hosts, defaults)
    drain = pools(rows, rendered["nodes"], pool_defaults)
    qos = nic_config(rows, hosts, nic_config_defaults, table)
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
        out["nccl"] = nccl_settings(rows, rendered["nodes"], nic_config_defaults, table)
    if rendered["warnings"]:
        out["warnings"] = rendered["warnings"]  # legal but surprising values; Ansible shows them at default verbosity
    return out

# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters exposing the pure-Python Kubernetes renderer of gpufabric.roce.

gpufabric.roce.sriov_manifests(hostvars, hosts, defaults)
    Validate the whole inventory and render every node's SriovNetworkNodePolicy, the
    SriovNetworks and the per-node expected allocatable resources in ONE pass. Raises
    AnsibleFilterError listing every problem (host, field, value and fix) when any host fails.
gpufabric.roce._sriov_validate(hostvars, hosts, defaults)
    Same checks, returns the list of error messages instead of raising (empty when valid).
gpufabric.roce._sriov_pool_configs(hostvars, nodes, defaults)
    Validate every node's drain pool settings and render one SriovNetworkPoolConfig per pool (nodes: the
    ``nodes`` of sriov_manifests). Raises AnsibleFilterError naming host, variable, value and fix.
gpufabric.roce._nic_config_templates(hostvars, hosts, defaults, table)
    The NicConfigurationTemplates of the nodes with ``roce_qos_via: operator`` and QoS (module_utils/_k8s/nic_config.py),
    validated for the whole inventory: ``{templates, devices}``, both empty (and nothing read but each node's
    roce_qos_via) when no node has ``roce_qos_via: operator``. ``table``: the fabric table of this run's plan
    (``__site_plan.fabric``), used when it has every host; otherwise the table is made here. Raises AnsibleFilterError
    naming host, field, value and fix for every problem.
gpufabric.roce._sriov_pool_overlaps(live, rendered)
    The live SriovNetworkPoolConfigs that select a node of a rendered pool (the operator never drains such a node).
gpufabric.roce._nic_cluster_policy(config)
gpufabric.roce._nic_node_policies(config, hostvars, hosts)
    The NicClusterPolicy and, with network_operator_node_policies, one NicNodePolicy per node group of ``hosts``
    (their network_operator_node_group* variables, module_utils/_k8s/node_policy.py): ``{nic_cluster_policy, nic_node_policies}``.
gpufabric.roce.network_operator_helm_values(config)
gpufabric.roce._network_operator_chart_reference(config)
    Render the NicClusterPolicy / Helm values / chart coordinates from the role variables.
gpufabric.roce._dra_data_direct(findings, hosts)
    GPU alignment (sriov_networks_dra_align_gpu) checked against the nodes' Data Direct rail NICs (their
    preflight_data_direct, keyed by host): ``{message, refused, unchecked}`` (module_utils/_k8s/dra.py).
gpufabric.roce._k8s_yaml_documents(objects)
    Dump a list of objects as one multi-document YAML stream (fast C dumper when available).
gpufabric.roce._ncp_unready_components(policy), deployments_unavailable(deployments),
gpufabric.roce._sriov_node_states_pending(states, expected_nodes), sriov_node_states_failed(states, expected_nodes),
gpufabric.roce._allocatable_mismatches(nodes, expected)
    Status helpers for the wait phases: each returns a list of human-readable problems
    (empty when everything is ready).
gpufabric.roce._network_operator_flux(chart, values), network_operator_argocd(chart, values), k8s_kustomization(files)
    The release as a Flux HelmRepository + HelmRelease, as an Argo CD Application, and a kustomization.yaml.
gpufabric.roce._network_operator_gitops_roots(chart, values, namespace, dirs, settings)
    The Flux and Argo CD roots that deploy the whole rendered tree, the chart before the custom resources.
gpufabric.roce._k8s_managed_orphans(live, rendered)
    The objects labelled app.kubernetes.io/managed-by=gpufabric.roce that the inventory no longer renders (prune).
gpufabric.roce._k8s_fabric_ownership(live, rendered, fabric)
    The same, scoped to one rollout (label gpufabric.roce/fabric): what it prunes, what another fabric owns,
    and the unlabelled objects of earlier versions it adopts or leaves alone.
gpufabric.roce._k8s_fabric_teardown(live, fabric), sriov_drain_plan(states, policies)
    Teardown: what one rollout deletes (its own fabric's objects, networks first) and leaves; which node states must
    drop the VFs of its deleted policies (gpufabric.roce.rollout_wait check=sriov_drain waits for them).
"""

import yaml

from ansible.errors import AnsibleFilterError
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, parse_bool, plain
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import RenderValidationError
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.dra import data_direct_refusal
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.fabric import fabric_ownership, fabric_teardown
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.gitops import argocd_application, flux_helm_release, gitops_roots, kustomization
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.operator import (
    HELM_DEFAULT_KEYS,
    NCP_DEFAULT_KEYS,
    render_chart_reference,
    render_helm_values,
    render_nic_cluster_policy,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.node_policy import MEMBER_FIELDS, render_nic_policies
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.sriov_pool import pool_overlaps
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import is_fabric_table
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _plan_builder
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _raw_vars as raw_vars
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _sriov_render as sr
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.status import (
    allocatable_mismatches,
    deployments_unavailable,
    managed_orphans,
    ncp_unready_components,
    sriov_drain_plan,
    sriov_node_states_failed,
    sriov_node_states_pending,
)

try:
    _Dumper = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - libyaml missing
    _Dumper = yaml.SafeDumper


def _hosts(hosts):
    if hosts is None:
        return []
    if isinstance(hosts, str):
        return [hosts]
    return [str(h) for h in hosts]


def _filter_errors(func, *args):
    try:
        return func(*args)
    except (RenderValidationError, GpufabricError, ValueError) as exc:
        raise AnsibleFilterError(str(exc)) from exc


# These filters, given hostvars, read the nodes through the plan builder (plugin_utils/_plan_builder.py): they are the
# plan builder then, as no plan is given to them.
def _inputs(hostvars, hosts):
    return _plan_builder.node_inputs(raw_vars.view(hostvars), hosts)


def _sriov(hostvars, hosts, defaults):
    # The nodes' inputs now, their fabric table (each node's rails) only if a node has roce_rails.
    inventory = _plan_builder.Inventory(hostvars, hosts)
    return sr.sriov(inventory.inputs, hosts, defaults, inventory.table)


def sriov_manifests(hostvars, hosts, defaults=None):
    hosts = _hosts(hosts)
    return _filter_errors(lambda: _sriov(hostvars, hosts, defaults))


def sriov_validate(hostvars, hosts, defaults=None):
    hosts = _hosts(hosts)
    try:
        _sriov(hostvars, hosts, defaults)
    except (RenderValidationError, GpufabricError) as exc:
        return ["%s" % e for e in getattr(exc, "errors", [exc])]
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from exc
    return []


def sriov_pool_configs(hostvars, nodes, defaults=None):
    return _filter_errors(lambda: sr.pools(_inputs(hostvars, [str(n["host"]) for n in nodes or []]), nodes, defaults))


def nic_config_templates(hostvars, hosts, defaults=None, table=None):
    hosts = _hosts(hosts)

    def render():
        cfg = sr.nic_config_settings(defaults)
        # Each node's roce_qos_via first: the other variables are read only for a node the operator configures.
        if sr.qos_via_host(_plan_builder.node_inputs(raw_vars.view(hostvars), hosts, ("roce_qos_via",)), hosts, cfg):
            return {"templates": [], "devices": []}
        inventory = _plan_builder.Inventory(hostvars, hosts)
        given = plain(table)
        covers = is_fabric_table(given) and all(h in given["nodes"] for h in hosts)
        return sr.nic_config(inventory.inputs, hosts, cfg, given if covers else inventory.table)

    return _filter_errors(render)


def _wrap(func, keys):
    def run(config=None):
        try:
            return func(with_role_defaults("network_operator", keys, plain(config)))
        except RenderValidationError as exc:
            raise AnsibleFilterError(str(exc)) from exc

    run.__name__ = func.__name__
    return run


def nic_node_policies(config=None, hostvars=None, hosts=None, members=None):
    """``members``: each host's node group variables as the fabric plan's network_operator slice carries them (host ->
    the ones it sets); without them, ``hostvars`` is read through the plan builder."""
    cfg = with_role_defaults("network_operator", NCP_DEFAULT_KEYS + ("network_operator_node_policies",), plain(config))
    nodes = []
    # Off: the nodes' group variables are not read. A value that is not a boolean is read as on, so the render names it.
    if parse_bool(cfg.get("network_operator_node_policies")) is not False:
        hosts = _hosts(hosts)
        if members is not None:
            members = plain(members)
            nodes = [dict(members.get(h) or {}, host=h) for h in hosts]
        elif hostvars is not None:
            try:
                read = _plan_builder.node_inputs(raw_vars.view(hostvars), hosts, MEMBER_FIELDS)
            except ValueError as exc:
                raise AnsibleFilterError(str(exc)) from exc
            nodes = [dict(read.get(h, {}), host=h) for h in hosts]
    return _filter_errors(render_nic_policies, cfg, nodes)


def k8s_yaml_documents(objects):
    if isinstance(objects, dict):
        objects = [objects]
    return yaml.dump_all([plain(o) for o in objects or []], Dumper=_Dumper, explicit_start=True, default_flow_style=False, sort_keys=False, width=4096)


class FilterModule:
    def filters(self):
        return {
            "sriov_manifests": sriov_manifests,
            "_sriov_validate": sriov_validate,
            "_sriov_pool_configs": sriov_pool_configs,
            "_nic_config_templates": nic_config_templates,
            "_sriov_pool_overlaps": lambda live, rendered: pool_overlaps(plain(live), plain(rendered)),
            "_nic_cluster_policy": _wrap(render_nic_cluster_policy, NCP_DEFAULT_KEYS),
            "_nic_node_policies": nic_node_policies,
            "network_operator_helm_values": _wrap(render_helm_values, HELM_DEFAULT_KEYS),
            "_network_operator_chart_reference": _wrap(render_chart_reference, HELM_DEFAULT_KEYS),
            "_k8s_yaml_documents": k8s_yaml_documents,
            "_dra_data_direct": lambda findings, hosts: data_direct_refusal(plain(findings), plain(hosts)),
            "_ncp_unready_components": lambda policy: ncp_unready_components(plain(policy)),
            "_deployments_unavailable": lambda items: deployments_unavailable(plain(items)),
            "_sriov_node_states_pending": lambda items, expected: sriov_node_states_pending(plain(items), plain(expected)),
            "_sriov_node_states_failed": lambda items, expected: sriov_node_states_failed(plain(items), plain(expected)),
            "_k8s_managed_orphans": lambda live, rendered: managed_orphans(plain(live), plain(rendered)),
            "_k8s_fabric_ownership": lambda live, rendered, fabric: fabric_ownership(plain(live), plain(rendered), plain(fabric)),
            "_network_operator_flux": lambda chart, values, settings=None: flux_helm_release(plain(chart), plain(values), plain(settings)),
            "_network_operator_argocd": lambda chart, values, settings=None: argocd_application(plain(chart), plain(values), plain(settings)),
            "_k8s_kustomization": lambda resources: kustomization(plain(resources)),
            "_network_operator_gitops_roots": lambda chart, values, namespace, dirs, settings=None: gitops_roots(
                plain(chart), plain(values), plain(namespace) or None, plain(dirs), plain(settings)
            ),
            "_k8s_fabric_teardown": lambda live, fabric: fabric_teardown(plain(live), plain(fabric)),
            "_sriov_drain_plan": lambda states, policies: sriov_drain_plan(plain(states), plain(policies)),
            "_allocatable_mismatches": lambda items, expected: allocatable_mismatches(plain(items), plain(expected)),
        }

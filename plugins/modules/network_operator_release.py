#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: network_operator_release
short_description: Internal (network_operator role) - find every release of the network-operator chart, plan the install or upgrade keeping user values
version_added: "0.2.0"
description:
  - Lists every Helm release of the chart (any name, any namespace, any status) with C(helm list --all-namespaces --all).
  - Refuses, before anything changes, when a release of the chart exists under another name or namespace than
    O(release_name)/O(namespace), naming each release, its namespace and the fix (adopt it by configuring its
    name and namespace, or uninstall it); and when the configured release is pending (C(pending-install),
    C(pending-upgrade), C(pending-rollback) - an operation running or interrupted), naming the C(helm rollback) to run.
  - Adopts the configured release - also one installed by hand - keeping every value its owner set. The values to
    apply are the release's user-supplied values (C(helm get values)) deep-merged with O(values), the keys this
    collection owns, which win. They are written to O(values_file) (mode 0600) for M(kubernetes.core.helm)'s
    C(values_files) (its default C(reset_values=true) then applies exactly them); RV(values_to_apply) and RV(user_values) are
    for display only, with every key that can carry a secret (a password, token, private or TLS key) shown as
    a placeholder (C(<not shown ...>)).
  - In check mode it reports C(changed) when the install or upgrade would change the release, with the values diff
    (what C(helm diff) would show, without the plugin). Outside check mode it changes nothing but the CRDs below, and
    reports C(changed) only when it created one.
  - Before an upgrade, the CRDs the chart brings with the values to apply (C(helm template --include-crds), the chart's and
    its enabled sub-charts' C(crds/)) that the cluster lacks are created, as the chart's pre-upgrade hook would create them
    (an existing CRD is left to that hook). Helm installs C(crds/) on a first install only; adopting a release installed with
    the chart's defaults, whose SR-IOV sub-chart was off, would otherwise stop on C(no matches for kind "SriovOperatorConfig").
    RV(crds_first) names them; in check mode they are only listed.
  - With O(state=absent) (teardown) it uninstalls the configured release - only that one, the release this collection
    installed or adopted - with C(helm uninstall --wait), and predicts it in check mode; any other release of the chart is
    left alone and listed in RV(others). Helm never deletes the CRDs of the chart's C(crds/) directory; with O(crds=true) the
    module lists them (C(helm show crds) of the chart, before anything changes) in RV(crds), for the caller to delete.
  - With O(chart_path), the chart's own version (C(helm show chart)) must equal O(chart_version), so the
    NicClusterPolicy component versions, which follow O(chart_version), match the chart actually installed.
author:
  - gpufabric.roce maintainers (@gpufabric)
options:
  chart_name:
    description: Name of the chart, as C(helm list) shows it before the version (C(network-operator)).
    type: str
    default: network-operator
  chart_version:
    description: The chart version about to be installed (O(state=present), required), or whose CRDs O(crds) lists.
    type: str
  chart_repo_url:
    description: The chart repository, for O(crds) without O(chart_path).
    type: str
  state:
    description: V(present) plans the install or upgrade; V(absent) uninstalls the configured release (teardown).
    type: str
    choices: [present, absent]
    default: present
  crds:
    description:
      - With O(state=absent), list the CRDs of the chart's C(crds/) directory (subcharts included) in RV(crds), from
        O(chart_path), else O(chart_name) in O(chart_repo_url) at O(chart_version). Nothing is deleted here.
    type: bool
    default: false
  chart_path:
    description: A local chart archive or directory, when installing from one; its version is checked against O(chart_version).
    type: str
  release_name:
    description: The release this run manages.
    type: str
    required: true
  namespace:
    description: The namespace of that release.
    type: str
    required: true
  values:
    description: The Helm values this collection owns (the C(gpufabric.roce.network_operator_helm_values) filter's result).
    type: dict
    default: {}
  values_file:
    description:
      - Where to write the values to apply (JSON, mode 0600), outside check mode. Give a path in a private directory
        and remove it after the install or upgrade. Without it nothing is written.
    type: path
  binary_path:
    description: The helm binary; default helm on C(PATH).
    type: path
  kubeconfig:
    description: Path to a kubeconfig, or its content as a mapping (written to a private temporary file, never logged).
    type: raw
  context:
    description: The kubeconfig context to use.
    type: str
requirements:
  - helm 3
  - PyYAML
  - kubernetes (the Python client, as kubernetes.core needs it)
notes:
  - Runs on the controller, as M(kubernetes.core.helm) does. Supports check mode and diff mode.
"""

EXAMPLES = r"""
- name: Plan the network-operator release (refuses a release of the chart under another name)
  gpufabric.roce.network_operator_release:
    chart_version: "26.4.1"
    release_name: network-operator
    namespace: nvidia-network-operator
    values: "{{ computed_values }}"
    values_file: "{{ private_dir.path }}/values.json"
  register: plan

- name: Install or upgrade it with the user's values kept
  kubernetes.core.helm:
    chart_ref: /srv/charts/network-operator-26.4.1.tgz
    release_name: network-operator
    release_namespace: nvidia-network-operator
    values_files: ["{{ plan.values_file }}"]
    atomic: true
  # helm returns the release's values in its result; the planner showed the diff already
  no_log: true
  when: not ansible_check_mode

- name: Teardown - uninstall the release this collection manages, and list the chart's CRDs
  gpufabric.roce.network_operator_release:
    state: absent
    release_name: network-operator
    namespace: nvidia-network-operator
    chart_path: /srv/charts/network-operator-26.4.1.tgz
    chart_version: "26.4.1"
    crds: true
  register: removed
"""

RETURN = r"""
releases:
  description: Every release of the chart in the cluster (C(name), C(namespace), C(chart), C(chart_version), C(revision), C(status)).
  returned: always
  type: list
  elements: dict
release:
  description: The configured release as found, or null when the chart is not installed.
  returned: always
  type: dict
revision:
  description: The configured release's current revision (0 when not installed); what to roll back to if the upgrade fails.
  returned: always
  type: int
user_values:
  description: The values the release's owner set (C(helm get values)), for display (secret-bearing keys not shown); empty when not installed.
  returned: always
  type: dict
values_to_apply:
  description:
    - The values to apply, RV(user_values) deep-merged with O(values) (O(values) wins), for display (secret-bearing keys
      not shown).
    - Not named C(values), which Jinja's dot notation reads as the dict method.
  returned: always
  type: dict
values_file:
  description: The file holding the values to apply, when O(values_file) was given outside check mode.
  returned: when written
  type: str
would_change:
  description: Whether the install or upgrade would change the release (chart, status or values).
  returned: with O(state=present)
  type: bool
crds_first:
  description: The CRDs created before the upgrade (in check mode, that would be), those the chart brings that the cluster lacked.
  returned: with O(state=present)
  type: list
  elements: str
user_keys:
  description: The keys (dotted paths, without values) the release's owner set that the upgrade keeps as they are.
  returned: with O(state=present)
  type: list
  elements: str
others:
  description: The other releases of the chart, left alone by the teardown.
  returned: with O(state=absent)
  type: list
  elements: str
crds:
  description: The names of the CRDs the chart brings in C(crds/), with O(state=absent) and O(crds=true).
  returned: with O(state=absent)
  type: list
  elements: str
"""

import json
import os
import tempfile
import time
import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import redact_secrets
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.helm_release import (
    ReleaseRefused,
    crd_names,
    kept_user_keys,
    last_good_revision,
    missing_crds,
    pick_release,
    plan,
    refuse_pending,
    releases_of_chart,
    teardown_plan,
    write_values_file,
)

try:
    import yaml
except ImportError:
    HAS_YAML, YAML_IMPORT_ERROR = False, traceback.format_exc()
else:
    HAS_YAML, YAML_IMPORT_ERROR = True, None

try:
    import kubernetes
except ImportError:
    HAS_K8S, K8S_IMPORT_ERROR = False, traceback.format_exc()
else:
    HAS_K8S, K8S_IMPORT_ERROR = True, None


class Helm:
    def __init__(self, module, kubeconfig_path):
        self.module = module
        self.kubeconfig = kubeconfig_path
        self.binary = module.params["binary_path"] or module.get_bin_path("helm")
        if not self.binary:
            module.fail_json(msg="network_operator: helm is not on PATH of the controller. Fix: install helm 3, or set network_operator_helm_binary.")
        self.flags = (["--kubeconfig", kubeconfig_path] if kubeconfig_path else []) + (
            ["--kube-context", module.params["context"]] if module.params["context"] else [])

    def run(self, *argv, cluster=True):
        cmd = [self.binary, *argv, *(self.flags if cluster else [])]
        rc, out, err = self.module.run_command(cmd)
        if rc:
            self.module.fail_json(msg="network_operator: `helm %s` failed (exit %d): %s" % (" ".join(argv), rc, err.strip() or out.strip()))
        return out

    def json(self, *argv):
        return json.loads(self.run(*argv, "-o", "json") or "null")


def _chart_path_version(helm, path):
    return str((yaml.safe_load(helm.run("show", "chart", path, cluster=False)) or {}).get("version", ""))


def _chart_crds(module, helm):
    p = module.params
    if p["chart_path"]:
        argv = ["show", "crds", p["chart_path"]]
    else:
        if not (p["chart_repo_url"] and p["chart_version"]):
            module.fail_json(msg="network_operator: listing the chart's CRDs needs network_operator_chart_path, or the chart repository and "
                                 "version (network_operator_chart_repo_url, network_operator_chart_version). Nothing was changed.")
        argv = ["show", "crds", p["chart_name"], "--repo", p["chart_repo_url"], "--version", str(p["chart_version"])]
    return crd_names(list(yaml.safe_load_all(helm.run(*argv, cluster=False))))


def _crds_first(module, helm, rel, values):
    """The CRDs the chart brings with ``values`` that the cluster lacks; created outside check mode (see DOCUMENTATION)."""
    if not HAS_K8S:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=K8S_IMPORT_ERROR)
    p = module.params
    api = kubernetes.config.new_client_from_config(config_file=helm.kubeconfig, context=p["context"])
    crd_api = kubernetes.client.ApiextensionsV1Api(api)
    server = kubernetes.client.VersionApi(api).get_code().git_version
    fd, tmp = tempfile.mkstemp(prefix="gpufabric-values-", suffix=".json")  # mode 0600: the owner's values may hold a secret
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(values, f)
        source = [p["chart_path"]] if p["chart_path"] else [p["chart_name"], "--repo", p["chart_repo_url"], "--version", str(p["chart_version"])]
        rendered = helm.run("template", rel["name"], *source, "--namespace", rel["namespace"], "--include-crds", "--kube-version", server,
                            "-f", tmp, cluster=False)
    finally:
        os.unlink(tmp)
    missing = missing_crds(list(yaml.safe_load_all(rendered)), [c.metadata.name for c in crd_api.list_custom_resource_definition().items])
    if not module.check_mode:
        for crd in missing:
            try:
                crd_api.create_custom_resource_definition(body=crd)
            except kubernetes.client.exceptions.ApiException as exc:
                if exc.status != 409:  # created meanwhile: the hook's to update
                    module.fail_json(msg="network_operator: creating the CRD %s before the upgrade of release %s failed (HTTP %s): %s. The release "
                                         "was not changed. Fix: the cause above, or create the chart's CRDs yourself "
                                         "(helm template %s ... --include-crds | kubectl create -f -), then run again."
                                         % (crd["metadata"]["name"], rel["name"], exc.status, exc.reason, rel["name"]))
        # Helm maps the chart's kinds right after: wait until the API server serves them (Established).
        deadline = time.monotonic() + 60
        for crd in missing:
            while not any(c.type == "Established" and c.status == "True"
                          for c in (crd_api.read_custom_resource_definition(crd["metadata"]["name"]).status.conditions or [])):
                if time.monotonic() > deadline:
                    module.fail_json(msg="network_operator: the CRD %s created before the upgrade is not Established after 60 s. The release was "
                                         "not changed. Fix: check the API server (kubectl get crd %s -o yaml), then run again."
                                         % (crd["metadata"]["name"], crd["metadata"]["name"]))
                time.sleep(0.5)
    return [crd["metadata"]["name"] for crd in missing]


def _teardown(module, helm):
    p = module.params
    # Before anything changes: a chart that cannot be read stops the run with the release still in place.
    crds = _chart_crds(module, helm) if p["crds"] else []
    releases = releases_of_chart(helm.json("list", "--all-namespaces", "--all", "--max", "0"), p["chart_name"])
    found = teardown_plan(releases, p["release_name"], p["namespace"])
    rel = found["release"]
    if rel is not None and not module.check_mode:
        helm.run("uninstall", rel["name"], "-n", rel["namespace"], "--wait")
    out = {"changed": rel is not None, "releases": releases, "release": rel, "others": found["others"], "crds": crds}
    if module._diff:
        out["diff"] = {"before_header": "helm release %s/%s" % (p["namespace"], p["release_name"]),
                       "after_header": "helm release %s/%s" % (p["namespace"], p["release_name"]),
                       "before": "%s\n" % (("%s, revision %d, %s" % (rel["chart"], rel["revision"], rel["status"])) if rel else "not installed"),
                       "after": "not installed\n"}
    return out


def _run(module, helm):
    p = module.params
    if p["state"] == "absent":
        return _teardown(module, helm)
    if p["chart_path"]:
        found = _chart_path_version(helm, p["chart_path"])
        if found.lstrip("v") != str(p["chart_version"]).lstrip("v"):
            module.fail_json(msg="network_operator: network_operator_chart_path %s is chart version %s, but network_operator_chart_version is %s; "
                                 "the NicClusterPolicy component versions follow network_operator_chart_version. Nothing was changed. "
                                 "Fix: set network_operator_chart_version: '%s', or point network_operator_chart_path at the %s chart."
                                 % (p["chart_path"], found, p["chart_version"], found, p["chart_version"]))
    releases = releases_of_chart(helm.json("list", "--all-namespaces", "--all", "--max", "0"), p["chart_name"])
    try:
        rel = pick_release(releases, p["release_name"], p["namespace"], p["chart_name"])
        if rel is not None and rel["status"] not in ("deployed", "failed", "superseded"):
            refuse_pending(rel, last_good_revision(helm.json("history", rel["name"], "-n", rel["namespace"])))
    except ReleaseRefused as exc:
        module.fail_json(msg=str(exc), releases=releases)
    user_values = helm.json("get", "values", rel["name"], "-n", rel["namespace"]) if rel else {}
    result = plan(rel, user_values or {}, p["values"], p["chart_name"], p["chart_version"])
    crds_first = _crds_first(module, helm, rel, result["values"]) if rel is not None and result["changed"] else []
    out = {
        "releases": releases,
        "release": rel,
        "revision": result["revision"],
        "user_values": redact_secrets(user_values or {}),
        # Not "values": result.values in Jinja is the dict method (ansible-core 2.21's validate-modules refuses the key).
        "values_to_apply": redact_secrets(result["values"]),
        "would_change": result["changed"],
        "changed": bool(module.check_mode and result["changed"]) or bool(crds_first and not module.check_mode),
        "crds_first": crds_first,
        "user_keys": kept_user_keys(user_values, p["values"]) if rel else [],
    }
    if p["values_file"] and not module.check_mode:
        out["values_file"] = write_values_file(p["values_file"], result["values"])
    if module._diff and module.check_mode:
        out["diff"] = {
            "before_header": "helm release %s/%s (helm get values)" % (p["namespace"], p["release_name"]),
            "after_header": "helm release %s/%s (values to apply)" % (p["namespace"], p["release_name"]),
            "before": yaml.safe_dump(result["before"], sort_keys=True, default_flow_style=False),
            "after": yaml.safe_dump(result["after"], sort_keys=True, default_flow_style=False),
        }
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            chart_name=dict(type="str", default="network-operator"),
            chart_version=dict(type="str"),
            chart_repo_url=dict(type="str"),
            chart_path=dict(type="str"),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            crds=dict(type="bool", default=False),
            release_name=dict(type="str", required=True),
            namespace=dict(type="str", required=True),
            values=dict(type="dict", default={}),
            values_file=dict(type="path"),
            binary_path=dict(type="path"),
            kubeconfig=dict(type="raw", no_log=True),
            context=dict(type="str"),
        ),
        required_if=[("state", "present", ("chart_version",))],
        supports_check_mode=True,
    )
    if not HAS_YAML:
        module.fail_json(msg=missing_required_lib("PyYAML"), exception=YAML_IMPORT_ERROR)
    kubeconfig = module.params["kubeconfig"]
    tmp = None
    if isinstance(kubeconfig, dict):
        fd, tmp = tempfile.mkstemp(prefix="gpufabric-kubeconfig-", suffix=".json")  # mode 0600
        with os.fdopen(fd, "w") as f:
            json.dump(kubeconfig, f)
        kubeconfig = tmp
    try:
        result = _run(module, Helm(module, kubeconfig or None))
    finally:
        if tmp:
            os.unlink(tmp)
    module.exit_json(**result)


if __name__ == "__main__":
    main()

# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An existing network-operator Helm release (brownfield): find every release of the chart in the
cluster, adopt the configured one keeping the values the user set, refuse any other, and say what
an upgrade would change (the values diff helm-diff would show) before anything changes.

Values: the collection owns exactly the keys it renders (plugins/module_utils/_k8s/operator.py
render_helm_values, network_operator_helm_values_overrides included). The values applied are the
release's user-supplied values (``helm get values``) deep-merged with the owned ones, owned winning;
every other key the user set is kept. Helm runs with its default --reset-values on that merge, so
the result does not depend on what the previous revision happened to carry over."""

import json
import os
import re

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import plain, redact_secrets
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import deep_merge

# "network-operator-26.4.1" -> ("network-operator", "26.4.1"): helm list joins name and version with "-".
_CHART_RE = re.compile(r"^(?P<name>.+?)-(?P<version>v?[0-9]+\.[0-9]+\.[0-9]+[-+0-9A-Za-z.]*)\Z")
_PENDING = ("pending-install", "pending-upgrade", "pending-rollback", "uninstalling")


class ReleaseRefused(Exception):
    """The cluster holds a release this run must not touch or cannot upgrade; the message says why and the fix."""


def split_chart(chart):
    match = _CHART_RE.match(chart or "")
    return (match.group("name"), match.group("version")) if match else (chart or "", "")


def releases_of_chart(helm_list, chart_name):
    """The releases of ``helm list --all-namespaces --all -o json`` whose chart is ``chart_name``, sorted."""
    found = []
    for rel in helm_list or []:
        name, version = split_chart(rel.get("chart"))
        if name == chart_name:
            found.append({
                "name": rel.get("name"),
                "namespace": rel.get("namespace"),
                "chart": rel.get("chart"),
                "chart_version": version,
                "revision": int(rel.get("revision") or 0),
                "status": rel.get("status"),
            })
    return sorted(found, key=lambda r: (r["namespace"], r["name"]))


def _describe(rel):
    return "'%s' in namespace '%s' (chart %s, revision %d, %s)" % (rel["name"], rel["namespace"], rel["chart"], rel["revision"], rel["status"])


def pick_release(releases, release_name, namespace, chart_name):
    """The configured release (or None when the chart is not installed); refuses any other release of the chart."""
    mine = [r for r in releases if r["name"] == release_name and r["namespace"] == namespace]
    # An uninstalled release kept with --keep-history owns nothing any more.
    others = [r for r in releases if r not in mine and r["status"] != "uninstalled"]
    releases = [r for r in releases if r in mine or r in others]
    if others:
        listed = "; ".join(_describe(r) for r in releases)
        if mine or len(others) > 1:
            fix = "remove the release(s) this inventory does not manage (%s) first; the CRDs and the NicClusterPolicy stay" % (
                "; ".join("helm uninstall %s -n %s" % (r["name"], r["namespace"]) for r in others))
        else:
            other = others[0]
            fix = ("to adopt it (the values its owner set are kept), set network_operator_release_name: %s and network_operator_namespace: %s; "
                   "or remove it first with `helm uninstall %s -n %s` (the CRDs and the NicClusterPolicy stay)" % (
                       other["name"], other["namespace"], other["name"], other["namespace"]))
        raise ReleaseRefused(
            "network_operator: the cluster already has %d release(s) of the %s chart: %s. This run manages release '%s' in namespace '%s'; "
            "a second release of the chart would fight the first over its cluster-scoped objects (CRDs, ClusterRoles, webhooks) and Helm "
            "refuses to take over objects another release owns. Nothing was changed. Fix: %s." % (
                len(releases), chart_name, listed, release_name, namespace, fix))
    return mine[0] if mine else None


def refuse_pending(rel, last_good):
    """A release Helm cannot upgrade now (an operation is running or was interrupted)."""
    if rel is None or rel["status"] not in _PENDING:
        return
    rollback = ("helm rollback %s %d -n %s" % (rel["name"], last_good, rel["namespace"])) if last_good else (
        "helm uninstall %s -n %s" % (rel["name"], rel["namespace"]))
    raise ReleaseRefused(
        "network_operator: release %s is %s: another Helm operation is running or was interrupted, and Helm refuses to upgrade it. "
        "Nothing was changed. Fix: wait for that operation to finish; if it was interrupted, run `%s` (the last good revision), then run again." % (
            _describe(rel), rel["status"], rollback))


def last_good_revision(history):
    """The newest revision of ``helm history -o json`` that was deployed (or superseded), or 0."""
    good = [int(h.get("revision") or 0) for h in history or [] if h.get("status") in ("deployed", "superseded")]
    return max(good) if good else 0


def merge_values(user_values, owned_values):
    """The values to apply: what the release's owner set, with the keys this collection owns overriding."""
    return plain(deep_merge(user_values or {}, owned_values or {}))


def plan(rel, user_values, owned_values, chart_name, chart_version):
    """What applying would do: {values, changed, diff, revision}."""
    values = merge_values(user_values, owned_values)
    target_chart = "%s-%s" % (chart_name, chart_version)
    # The diff shows the values the release's owner set: a key that can carry a secret shows as NOT_SHOWN.
    before = {"release": None} if rel is None else {"chart": rel["chart"], "status": rel["status"], "values": redact_secrets(plain(user_values or {}))}
    after = {"chart": target_chart, "status": "deployed", "values": redact_secrets(values)}
    same_chart = rel is not None and split_chart(rel["chart"]) == (chart_name, str(chart_version))
    if rel is not None and not same_chart:
        same_chart = split_chart(rel["chart"])[1].lstrip("v") == str(chart_version).lstrip("v")
    changed = rel is None or not same_chart or rel["status"] != "deployed" or plain(user_values or {}) != values
    return {"values": values, "changed": changed, "revision": rel["revision"] if rel else 0, "before": before, "after": after}


def _leaf_paths(values, prefix=""):
    out = []
    for key in sorted(values, key=str):
        path = "%s.%s" % (prefix, key) if prefix else "%s" % key
        if isinstance(values[key], dict) and values[key]:
            out += _leaf_paths(values[key], path)
        else:
            out.append(path)
    return out


def kept_user_keys(user_values, owned_values):
    """The keys (dotted paths, no values: a value may be a secret) the release's owner set that apply keeps as they are,
    i.e. those no key this collection owns overrides."""
    owned = set(_leaf_paths(owned_values or {}))

    def overridden(path):
        parts = path.split(".")
        return any(".".join(parts[:i]) in owned for i in range(1, len(parts) + 1)) or any(o.startswith(path + ".") for o in owned)

    return [p for p in _leaf_paths(user_values or {}) if not overridden(p)]


def missing_crds(rendered, existing_names):
    """The CustomResourceDefinitions of ``rendered`` (documents of ``helm template --include-crds`` with the values to
    apply: the chart's and its enabled sub-charts' crds/) that the cluster lacks, in file order. Helm installs crds/
    on a first install only; on an upgrade, a sub-chart turned on would bring objects of kinds the cluster does not
    serve yet, and Helm stops before its pre-upgrade hook could apply them."""
    existing = set(existing_names or ())
    seen, out = set(), []
    for doc in rendered or []:
        name = (doc.get("metadata") or {}).get("name") if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition" else None
        if name and name not in existing and name not in seen:
            seen.add(name)
            out.append(doc)
    return out


def write_values_file(path, values):
    """Write ``values`` (JSON, which Helm reads as YAML) to ``path``, readable by this user only (0600 from the start,
    never wider): the release owner's values may carry secrets (a custom admission certificate's tlsKey), so they
    reach Helm through this file and never through a task's arguments or result."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(values, f, sort_keys=True)
    return path


def teardown_plan(releases, release_name, namespace):
    """What the teardown uninstalls: the configured release only (the one this collection installed or adopted), when it
    is installed; every other release of the chart is left alone and listed. Returns {release, others}."""
    mine = [r for r in releases if r["name"] == release_name and r["namespace"] == namespace and r["status"] != "uninstalled"]
    others = [_describe(r) for r in releases if r not in mine and r["status"] != "uninstalled"
              and not (r["name"] == release_name and r["namespace"] == namespace)]
    return {"release": mine[0] if mine else None, "others": others}


def crd_names(documents):
    """The CustomResourceDefinition names in ``helm show crds`` output (already parsed into YAML documents), sorted."""
    return sorted({(d.get("metadata") or {}).get("name") for d in documents or []
                   if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition" and (d.get("metadata") or {}).get("name")})

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 17, brownfield: every release of the chart is found, only the configured one is adopted,
its owner's values are kept (the collection's keys win), and the plan says what would change."""

import json

import pytest
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import helm_release as hr

LIST = [
    {"name": "network-operator", "namespace": "nvidia-network-operator", "revision": "2", "status": "deployed", "chart": "network-operator-26.1.2"},
    {"name": "grafana", "namespace": "monitoring", "revision": "1", "status": "deployed", "chart": "grafana-8.0.0"},
    {"name": "noo-old", "namespace": "legacy", "revision": "4", "status": "failed", "chart": "network-operator-26.1.2"},
]
OWNED = {"nfd": {"enabled": True, "deployNodeFeatureRules": True}, "sriovNetworkOperator": {"enabled": True},
         "sriov-network-operator": {"operator": {"resourcePrefix": "nvidia.com"}}}


def test_split_chart_takes_the_version_off_the_end():
    assert hr.split_chart("network-operator-26.4.1") == ("network-operator", "26.4.1")
    assert hr.split_chart("my-chart-v1.2.3-rc.1") == ("my-chart", "v1.2.3-rc.1")


def test_every_release_of_the_chart_in_any_namespace_is_found():
    found = hr.releases_of_chart(LIST, "network-operator")
    assert [(r["namespace"], r["name"], r["revision"]) for r in found] == [("legacy", "noo-old", 4), ("nvidia-network-operator", "network-operator", 2)]


def test_a_release_under_another_name_is_refused_naming_it_its_namespace_and_the_fix():
    found = hr.releases_of_chart(LIST[2:], "network-operator")
    with pytest.raises(hr.ReleaseRefused) as exc:
        hr.pick_release(found, "network-operator", "nvidia-network-operator", "network-operator")
    msg = str(exc.value)
    assert "'noo-old' in namespace 'legacy'" in msg and "Nothing was changed" in msg
    assert "network_operator_release_name: noo-old and network_operator_namespace: legacy" in msg
    assert "helm uninstall noo-old -n legacy" in msg


def test_the_configured_release_next_to_another_is_refused_listing_both():
    found = hr.releases_of_chart(LIST, "network-operator")
    with pytest.raises(hr.ReleaseRefused) as exc:
        hr.pick_release(found, "network-operator", "nvidia-network-operator", "network-operator")
    msg = str(exc.value)
    assert "2 release(s)" in msg and "'network-operator' in namespace 'nvidia-network-operator'" in msg
    assert "helm uninstall noo-old -n legacy" in msg and "helm uninstall network-operator" not in msg


def test_the_configured_release_alone_is_adopted():
    found = hr.releases_of_chart(LIST[:2], "network-operator")
    assert hr.pick_release(found, "network-operator", "nvidia-network-operator", "network-operator")["revision"] == 2
    assert hr.pick_release([], "network-operator", "nvidia-network-operator", "network-operator") is None


def test_user_values_are_kept_and_the_collections_keys_win():
    user = {"operator": {"nodeSelector": {"site-owner": "keep-me"}}, "nfd": {"enabled": False, "extra": 1}}
    values = hr.merge_values(user, OWNED)
    assert values["operator"] == {"nodeSelector": {"site-owner": "keep-me"}}
    assert values["nfd"] == {"enabled": True, "deployNodeFeatureRules": True, "extra": 1}


def test_plan_predicts_an_upgrade_and_nothing_on_the_second_run():
    rel = hr.releases_of_chart(LIST[:1], "network-operator")[0]
    user = {"operator": {"nodeSelector": {"site-owner": "keep-me"}}}
    first = hr.plan(rel, user, OWNED, "network-operator", "26.4.1")
    assert first["changed"] and first["revision"] == 2
    assert first["before"]["chart"] == "network-operator-26.1.2" and first["after"]["chart"] == "network-operator-26.4.1"
    assert first["after"]["values"]["operator"]["nodeSelector"] == {"site-owner": "keep-me"}
    upgraded = dict(rel, chart="network-operator-26.4.1", revision=3)
    again = hr.plan(upgraded, first["values"], OWNED, "network-operator", "26.4.1")
    assert not again["changed"]
    assert hr.plan(None, {}, OWNED, "network-operator", "26.4.1")["changed"]


def test_a_pending_release_is_refused_with_the_rollback_to_run():
    rel = dict(hr.releases_of_chart(LIST[:1], "network-operator")[0], status="pending-upgrade", revision=3)
    history = [{"revision": 1, "status": "superseded"}, {"revision": 2, "status": "deployed"}, {"revision": 3, "status": "pending-upgrade"}]
    with pytest.raises(hr.ReleaseRefused) as exc:
        hr.refuse_pending(rel, hr.last_good_revision(history))
    assert "`helm rollback network-operator 2 -n nvidia-network-operator`" in str(exc.value)
    hr.refuse_pending(dict(rel, status="deployed"), 2)


def test_an_uninstalled_release_kept_in_history_is_not_refused():
    found = hr.releases_of_chart([dict(LIST[2], status="uninstalled")] + LIST[:1], "network-operator")
    assert hr.pick_release(found, "network-operator", "nvidia-network-operator", "network-operator")["name"] == "network-operator"


def test_the_values_diff_never_shows_a_secret_the_user_put_in_the_release():
    """The diff shows the release owner's values; a key that can carry a secret shows as NOT_SHOWN, while the
    values applied keep it (helm must still get it)."""
    rel = hr.releases_of_chart(LIST[:1], "network-operator")[0]
    user = {"operator": {"nodeSelector": {"site-owner": "keep-me"}},
            "extra": {"registryPassword": "hunter2-s3cret", "proxy": {"authToken": "tok-0123456789"}}}
    planned = hr.plan(rel, user, OWNED, "network-operator", "26.4.1")
    shown = repr((planned["before"], planned["after"]))
    assert "hunter2-s3cret" not in shown and "tok-0123456789" not in shown
    assert planned["after"]["values"]["extra"]["registryPassword"] == "<not shown: may hold a secret>"
    assert planned["after"]["values"]["operator"]["nodeSelector"] == {"site-owner": "keep-me"}
    assert planned["values"]["extra"]["registryPassword"] == "hunter2-s3cret"


def test_a_private_key_in_the_charts_own_values_is_not_shown_and_secret_names_are():
    # The 26.4.1 chart documents ...admissionControllers.certificates.custom.operator.tlsKey (a private key).
    user = {"sriov-network-operator": {"operator": {"admissionControllers": {"certificates": {"custom": {
        "operator": {"tlsCrt": "CERT", "tlsKey": "-----BEGIN EC PRIVATE KEY-----abc"}}, "secretNames": {"operator": "op-cert"}}}}},
        "imagePullSecrets": ["regcred"], "extra": {"apiKey": "k-123456", "secret": "s-123456", "clientSecret": "c-123456"}}
    shown = repr(hr.plan(None, user, OWNED, "network-operator", "26.4.1")["after"])
    for hidden in ("PRIVATE KEY", "k-123456", "s-123456", "c-123456"):
        assert hidden not in shown
    for visible in ("op-cert", "regcred", "CERT"):
        assert visible in shown


def test_the_values_to_apply_are_written_for_this_user_only(tmp_path):
    path = tmp_path / "values.json"
    path.write_text("old, wider")
    path.chmod(0o644)
    values = {"operator": {"nodeSelector": {"site-owner": "keep-me"}}, "extra": {"tlsKey": "KEY"}}
    assert hr.write_values_file(str(path), values) == str(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert json.loads(path.read_text()) == values


def test_the_users_keys_kept_are_named_without_their_values():
    user = {"operator": {"nodeSelector": {"site-owner": "keep-me"}, "admissionController": {"certificate": {"tlsKey": "s3cret"}}},
            "sriovNetworkOperator": {"enabled": False}, "imagePullSecrets": ["mine"]}
    owned = {"sriovNetworkOperator": {"enabled": True}, "nfd": {"enabled": True}, "imagePullSecrets": ["pull"]}
    kept = hr.kept_user_keys(user, owned)
    assert kept == ["operator.admissionController.certificate.tlsKey", "operator.nodeSelector.site-owner"]
    assert "s3cret" not in repr(kept)
    assert hr.kept_user_keys({}, owned) == []


def test_the_crds_a_sub_chart_turned_on_brings_are_those_the_cluster_lacks():
    """helm template --include-crds with the values to apply gives the chart's and its enabled sub-charts' CRDs; the ones
    the cluster already has are left to the chart's hook (it updates them)."""
    def crd(name):
        return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": name}}
    rendered = [crd("nicclusterpolicies.mellanox.com"), {"kind": "Deployment", "metadata": {"name": "network-operator"}},
                crd("sriovoperatorconfigs.sriovnetwork.openshift.io"), crd("sriovnetworks.sriovnetwork.openshift.io"), None,
                crd("sriovnetworks.sriovnetwork.openshift.io")]
    missing = hr.missing_crds(rendered, ["nicclusterpolicies.mellanox.com"])
    assert [m["metadata"]["name"] for m in missing] == ["sriovoperatorconfigs.sriovnetwork.openshift.io", "sriovnetworks.sriovnetwork.openshift.io"]
    assert hr.missing_crds(rendered, [d["metadata"]["name"] for d in rendered if d and d["kind"] == "CustomResourceDefinition"]) == []

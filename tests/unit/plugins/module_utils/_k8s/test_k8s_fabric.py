# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared clusters (issue 17): a rollout prunes only its own fabric's objects, refuses another's names, adopts an earlier version's."""

import json

import pytest
from k8s_objects import NS, obj

from ansible_collections.gpufabric.roce.plugins.action.k8s_apply import object_diffs, pending_diffs, with_labels
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.fabric import FABRIC_LABEL, fabric_ownership
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.tools import (
    client_problem,
    collection_problem,
    helm_problem,
    kubeconfig_desc,
    kubeconfig_secrets,
)


def names(refs):
    return ["%s/%s" % (o["kind"], o["metadata"]["name"]) for o in refs]


def test_a_rollout_prunes_only_its_own_fabric():
    live = [obj("SriovNetwork", "a-node1", "pool-a"), obj("SriovNetwork", "a-node2", "pool-a"),
            obj("SriovNetwork", "b-node3", "pool-b"), obj("SriovNetwork", "user", managed=False)]
    got = fabric_ownership(live, [obj("SriovNetwork", "a-node1")], "pool-a")
    assert names(got["orphans"]) == ["SriovNetwork/a-node2"]
    assert got["conflicts"] == [] and got["foreign_fabric"] is False
    # pool-b's rollout, with the same live state, would prune only b-node3 once it no longer renders it.
    assert names(fabric_ownership(live, [obj("SriovNetwork", "b-node4")], "pool-b")["orphans"]) == ["SriovNetwork/b-node3"]


def test_another_fabrics_name_is_a_conflict_and_not_pruned():
    live = [obj("SriovNetworkNodePolicy", "roce-node1", "pool-a")]
    got = fabric_ownership(live, [obj("SriovNetworkNodePolicy", "roce-node1")], "pool-b")
    assert got["orphans"] == []
    assert got["conflicts"] == ["SriovNetworkNodePolicy/roce-node1 in namespace %s belongs to fabric 'pool-a' (label %s), "
                                "this inventory is fabric 'pool-b'" % (NS, FABRIC_LABEL)]
    assert got["conflict_fabrics"] == ["pool-a"]


def test_earlier_versions_objects_are_adopted_when_rendered_and_never_pruned():
    live = [obj("SriovNetwork", "roce-node1"), obj("SriovNetwork", "roce-node9")]
    got = fabric_ownership(live, [obj("SriovNetwork", "roce-node1")], "pool-a")
    assert got["adopted"] == ["SriovNetwork/roce-node1"]
    assert got["unclaimed"] == ["SriovNetwork/roce-node9"]
    assert got["orphans"] == [] and got["conflicts"] == []


def test_same_fabric_name_with_nothing_in_common_is_flagged():
    live = [obj("SriovNetwork", "roce-a1", "inventory"), obj("SriovNetwork", "roce-a2", "inventory")]
    got = fabric_ownership(live, [obj("SriovNetwork", "roce-b1")], "inventory")
    assert got["foreign_fabric"] is True and len(got["orphans"]) == 2
    # A node removed from an inventory whose other objects are still rendered is ordinary pruning.
    got = fabric_ownership(live, [obj("SriovNetwork", "roce-a1")], "inventory")
    assert got["foreign_fabric"] is False and names(got["orphans"]) == ["SriovNetwork/roce-a2"]


def test_apply_adds_the_labels_without_changing_the_rendered_objects():
    rendered = [obj("SriovNetwork", "roce-node1")]
    labelled = with_labels(rendered, {FABRIC_LABEL: "pool-a"})
    assert labelled[0]["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "gpufabric.roce", FABRIC_LABEL: "pool-a"}
    assert FABRIC_LABEL not in rendered[0]["metadata"]["labels"]
    assert with_labels(rendered, {}) is rendered


def test_check_mode_reports_objects_whose_crd_is_not_served_yet():
    ncp = {"apiVersion": "mellanox.com/v1alpha1", "kind": "NicClusterPolicy", "metadata": {"name": "nic-cluster-policy"}, "spec": {}}
    got_names, diffs = pending_diffs([ncp])
    assert got_names == ["NicClusterPolicy/nic-cluster-policy"]
    assert diffs[0]["before"] == {} and diffs[0]["after"] == ncp
    assert "created once the chart is installed" in diffs[0]["after_header"]


def test_a_diff_shows_what_the_run_changes_not_the_servers_bookkeeping():
    server = {"uid": "0b7c1d2e", "resourceVersion": "4711", "generation": 3, "creationTimestamp": "2026-01-01T00:00:00Z",
              "managedFields": [{"manager": "kubectl", "operation": "Apply"}]}
    last = {"kubectl.kubernetes.io/last-applied-configuration": '{"spec": {"numVfs": 8}}'}
    before = {"kind": "SriovNetworkNodePolicy", "metadata": dict(server, name="p1", namespace=NS, annotations=dict(last)),
              "spec": {"numVfs": 8}, "status": {"syncStatus": "Succeeded"}}
    after = {"kind": "SriovNetworkNodePolicy", "metadata": dict(server, name="p1", namespace=NS, resourceVersion="4712",
                                                                annotations=dict(last, owner="team-a")),
             "spec": {"numVfs": 16}, "status": {"syncStatus": "Succeeded"}}
    names, diffs = object_diffs([{"changed": True, "result": after, "diff": {"before": before, "after": after}}])
    assert names == ["SriovNetworkNodePolicy/p1"]
    assert diffs[0]["before"] == {"kind": "SriovNetworkNodePolicy", "metadata": {"name": "p1", "namespace": NS}, "spec": {"numVfs": 8}}
    assert diffs[0]["after"] == {"kind": "SriovNetworkNodePolicy", "metadata": {"name": "p1", "namespace": NS, "annotations": {"owner": "team-a"}},
                                 "spec": {"numVfs": 16}}
    # The server's metadata of a created object (no before) is left out too; the rendered objects are not touched.
    _names, created = object_diffs([{"changed": True, "result": after, "diff": {}}])
    assert created[0]["after"]["metadata"] == {"name": "p1", "namespace": NS, "annotations": {"owner": "team-a"}}
    assert after["metadata"]["uid"] == "0b7c1d2e" and "status" in after


def test_tool_problems_carry_their_fix():
    assert collection_problem(True) is None
    assert "ansible-galaxy collection install kubernetes.core" in collection_problem(False)
    missing = {"failed": True, "msg": "Failed to import the required Python library (kubernetes) on ctl's Python /usr/bin/python3."}
    assert "pip install -r meta/ee-requirements.txt" in client_problem("ctl", missing, kubeconfig_desc(""), "/usr/bin/python3")
    unreachable = client_problem("ctl", {"failed": True, "msg": "Invalid kube-config file. No configuration found."}, kubeconfig_desc("/nope"))
    assert unreachable.startswith("ctl: cannot reach the cluster with kubeconfig /nope: Invalid kube-config file")
    assert "network_operator_kubeconfig" in unreachable
    assert kubeconfig_desc({"users": [{"user": {"token": "s3cr3t"}}]}) == "(content given in network_operator_kubeconfig, not shown)"
    assert kubeconfig_desc("~/.kube/config") == "~/.kube/config"


@pytest.mark.parametrize("pasted", [
    "apiVersion: v1\nusers:\n- user:\n    token: s3cr3t-token\n",  # YAML
    '{"apiVersion": "v1", "users": [{"user": {"token": "s3cr3t-token"}}]}',  # JSON on one line
    "YXBpVmVyc2lvbjogdjEKdXNlcnM6Ci0gdXNlcjoKICAgIHRva2VuOiBzM2NyM3QtdG9rZW4K",  # base64
    "/etc/kube/config\nusers: [{user: {token: s3cr3t-token}}]",  # a path line and then content
    "admin.conf",  # a relative name: may be anything, shown nowhere
])
def test_a_kubeconfig_string_that_is_not_plainly_a_path_is_never_shown(pasted):
    # Issue 43: k8s_tools quoted a kubeconfig pasted as a string as its "path", token and all.
    desc = kubeconfig_desc(pasted, "network_operator_kubeconfig")
    assert pasted not in desc and "s3cr3t" not in desc and "network_operator_kubeconfig" in desc
    assert "not shown" in client_problem("ctl", {"failed": True, "msg": "Invalid kube-config file."}, desc)


def test_kubeconfig_secrets_are_its_credentials_only():
    content = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "prod", "cluster": {"server": "https://api:6443", "certificate-authority-data": "Q0E="}}],
        "users": [
            {"name": "admin", "user": {"token": "t0k", "client-certificate-data": "Y2VydA==", "client-key-data": "a2V5"}},
            {"name": "basic", "user": {"username": "bob", "password": "pw"}},
            {"name": "oidc", "user": {"auth-provider": {"name": "oidc", "config": {
                "client-id": "kube", "client-secret": "cs", "id-token": "it", "refresh-token": "rt"}}}},
            {"name": "eks", "user": {"exec": {"command": "aws", "args": ["eks", "get-token"],
                                              "env": [{"name": "AWS_PROFILE", "value": "ev"}]}}},
        ],
    }
    assert kubeconfig_secrets(content) == {"t0k", "a2V5", "pw", "cs", "it", "rt", "ev"}
    pasted = json.dumps(content)
    assert kubeconfig_secrets(pasted) == {pasted}  # content pasted as a string: all of it
    assert kubeconfig_secrets("/home/me/.kube/config") == set() and kubeconfig_secrets("~/.kube/config") == set()
    assert kubeconfig_secrets("") == set() and kubeconfig_secrets(None) == set() and kubeconfig_secrets({}) == set()


def test_a_missing_helm_is_named_as_missing():
    # ansible-core 2.19's command module: the OSError's errno as rc and only "Error executing command." as msg.
    started_not = {"failed": True, "rc": 2, "msg": "Error executing command.", "stdout": "", "stderr": "", "cmd": ["helm", "version", "--short"]}
    assert helm_problem("ctl", "helm", started_not) == (
        "ctl: helm not found on PATH. Fix: put helm (v3) on the PATH of ctl, or set network_operator_helm_binary to its full path")
    at_path = helm_problem("ctl", "/opt/bin/helm", dict(started_not, cmd=["/opt/bin/helm"]))
    assert at_path.startswith("ctl: helm not found at /opt/bin/helm (network_operator_helm_binary). Fix:")
    denied = helm_problem("ctl", "/opt/bin/helm", dict(started_not, rc=13))
    assert "is not executable" in denied and "Error executing command" not in denied
    # helm ran and failed: its own words, not "not found".
    ran = helm_problem("ctl", "helm", {"failed": True, "rc": 1, "msg": "non-zero return code", "stderr": "Error: unknown flag: --short"})
    assert ran.startswith("ctl: helm (helm) cannot run: Error: unknown flag: --short. Fix:")

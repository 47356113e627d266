# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-ins' pure functions and the harness's input checks; no cluster needed.

The expected values are worked out from the upstream functions each one follows (named in the
stand-ins' docstrings), not read back from the implementation.
"""

import json
import os
import tarfile

import pytest
import yaml
from k8s_helpers import REPO, chart_path, shared_chart
import controlplane
from standins import hardware, network_operator, nfd, sriov_cni, sriov_operator, sriov_policy, upgrade_crd_hook

PF = {"name": "enp157s0np0", "pciAddress": "0000:9d:00.0", "vendor": "15b3", "deviceID": "101d", "driver": "mlx5_core",
      "totalvfs": 16, "mtu": 9000, "linkType": "ETH", "numVfs": 0}
PF2 = dict(PF, name="enp160s0np0", pciAddress="0000:a0:00.0")


def pol(name, num_vfs, pf_names=("enp157s0np0",), priority=99, node="node1", **extra):
    spec = {"nodeSelector": {"kubernetes.io/hostname": node}, "nicSelector": {"pfNames": list(pf_names)}, "numVfs": num_vfs,
            "resourceName": name, "deviceType": "netdevice", "priority": priority}
    spec.update(extra)
    return {"metadata": {"name": name}, "spec": spec}


LABELS = {"kubernetes.io/hostname": "node1"}


# ---- hardware file ----------------------------------------------------------------------------
@pytest.mark.parametrize(("doc", "expected"), [
    ({"node1": {"interfaces": [{"name": "p0", "pciAddress": "9d:00.0"}]}}, "node 'node1', interfaces[0].pciAddress: '9d:00.0' is invalid; write domain:bus"),
    ({"node1": {"interfaces": [{"name": "p0", "pciAddress": "0000:9d:00.0", "numvfs": 2}]}}, "interfaces[0].numvfs: 2 is invalid; known keys are"),
    ({"node1": {"interfaces": [{"name": "p0", "pciAddress": "0000:9d:00.0", "numVfs": 20}]}}, "interfaces[0].numVfs: 20 is invalid; at most totalvfs (16)"),
    ({"node1": {"interfaces": [{"name": "p0", "pciAddress": "0000:9d:00.0", "vendor": 15}]}}, "interfaces[0].vendor: 15 is invalid; write 4 hex digits"),
    ({"Node_1": {}}, "node name: 'Node_1' is invalid; use a lowercase DNS-1123 name"),
    ({"node1": {"labels": {"gpu": True}}}, "node 'node1', labels.gpu: True is invalid"),
    ({"node1": {"interfaces": [{"name": "p0", "pciAddress": "0000:9d:00.0"}, {"name": "p0", "pciAddress": "0000:9d:00.1"}]}},
     "interfaces[].name: 'p0' is invalid; each PF needs its own name"),
])
def test_hardware_errors_name_node_field_value_and_fix(tmp_path, doc, expected):
    f = tmp_path / "hw.yml"
    f.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(hardware.HardwareError) as err:
        hardware.load(f)
    assert str(err.value).startswith(str(f) + ": ")
    assert expected in str(err.value)


def test_hardware_defaults_and_plain_nodes(tmp_path):
    f = tmp_path / "hw.json"
    f.write_text(json.dumps({"node1": {"interfaces": [{"name": "p0", "pciAddress": "0000:9D:00.0"}]}}), encoding="utf-8")
    nodes = hardware.load(f, ["node3"], {"example.com/pool": "a"})
    assert nodes["node1"]["interfaces"][0] == dict(PF, name="p0", mtu=1500)
    assert nodes["node3"] == {"labels": {"example.com/pool": "a"}, "capacity": hardware.DEFAULT_CAPACITY, "interfaces": []}
    assert hardware.vf_pci_address(PF, 0) == "0000:9d:00.2"
    assert hardware.vf_pci_address(PF, 6) == "0000:9d:01.0"
    assert hardware.vf_device_id(PF) == "101e"


# ---- policies -> node state spec ---------------------------------------------------------------
def test_render_spec_one_policy():
    spec = sriov_policy.render_spec([pol("roce_node1", 8, mtu=9000, isRdma=True)], LABELS, [PF, PF2])
    assert spec == {"interfaces": [{"pciAddress": "0000:9d:00.0", "numVfs": 8, "mtu": 9000, "name": "enp157s0np0", "vfGroups": [
        {"resourceName": "roce_node1", "deviceType": "netdevice", "vfRange": "0-7", "policyName": "roce_node1", "mtu": 9000, "isRdma": True}]}]}


def test_render_spec_partitions_merge_and_other_nodes_are_ignored():
    policies = [pol("rdma", 8, ["enp157s0np0#0-3"]), pol("dpdk", 8, ["enp157s0np0#4-7"], deviceType="vfio-pci"),
                pol("other_node", 8, node="node2"), pol("default", 8)]
    spec = sriov_policy.render_spec(policies, LABELS, [PF])
    (iface,) = spec["interfaces"]
    assert iface["numVfs"] == 8
    # ByPriority: same priority, so by name: "dpdk" first, then "rdma" merges dpdk's non-overlapping group.
    assert iface["vfGroups"] == [
        {"resourceName": "rdma", "deviceType": "netdevice", "vfRange": "0-3", "policyName": "rdma"},
        {"resourceName": "dpdk", "deviceType": "vfio-pci", "vfRange": "4-7", "policyName": "dpdk"}]


def test_render_spec_highest_priority_wins_an_overlap():
    policies = [pol("low", 4, priority=90, mtu=1500), pol("high", 8, priority=10, mtu=9000)]
    (iface,) = sriov_policy.render_spec(policies, LABELS, [PF])["interfaces"]
    assert (iface["numVfs"], iface["mtu"], [g["resourceName"] for g in iface["vfGroups"]]) == (8, 9000, ["high"])


def test_render_spec_needs_reported_interfaces_and_vfs():
    assert sriov_policy.render_spec([pol("a", 8)], LABELS, []) == {}
    assert sriov_policy.render_spec([pol("a", 0)], LABELS, [PF]) == {}
    assert sriov_policy.render_spec([pol("a", 8)], {"kubernetes.io/hostname": "node2"}, [PF]) == {}


def test_daemon_nodes_follow_the_config_selector():
    nodes = [{"metadata": {"name": "a", "labels": {"beta.kubernetes.io/os": "linux", "network.nvidia.com/operator.mofed.wait": "false"}}},
             {"metadata": {"name": "b", "labels": {"beta.kubernetes.io/os": "linux"}}},
             {"metadata": {"name": "c", "labels": {"node-role.kubernetes.io/worker": "", "kubernetes.io/os": "linux"}}}]
    chart = {"spec": {"configDaemonNodeSelector": {"beta.kubernetes.io/os": "linux", "network.nvidia.com/operator.mofed.wait": "false"}}}
    assert [n["metadata"]["name"] for n in sriov_policy.daemon_nodes(chart, nodes)] == ["a"]
    assert [n["metadata"]["name"] for n in sriov_policy.daemon_nodes({"spec": {}}, nodes)] == ["c"]


# ---- config daemon and device plugin -----------------------------------------------------------
def test_apply_spec_and_resources():
    spec = sriov_policy.render_spec([pol("rdma", 8, ["enp157s0np0#0-3"]), pol("dpdk", 8, ["enp157s0np0#4-7"])], LABELS, [PF])
    applied = sriov_policy.apply_spec([PF, PF2], spec)
    assert applied["0000:9d:00.0"]["numVfs"] == 8 and applied["0000:a0:00.0"]["numVfs"] == 0
    status = sriov_policy.status_interfaces([PF, PF2], applied)
    assert [len(i.get("Vfs", [])) for i in status] == [8, 0]
    assert "numVfs" not in status[1]  # Go's omitempty: zero is absent
    assert status[0]["Vfs"][0] == {"pciAddress": "0000:9d:00.2", "vfID": 0, "vendor": "15b3", "deviceID": "101e", "driver": "mlx5_core", "mtu": 9000}
    assert sriov_policy.device_plugin_resources(spec, {"interfaces": status}, "nvidia.com") == {"nvidia.com/rdma": 4, "nvidia.com/dpdk": 4}
    # Before the daemon applied it (status still at 0 VFs) nothing is advertised.
    assert sriov_policy.device_plugin_resources(spec, {"interfaces": sriov_policy.status_interfaces([PF])}, "nvidia.com") == {
        "nvidia.com/rdma": 0, "nvidia.com/dpdk": 0}


def test_apply_spec_failures_are_upstreams():
    too_many = {"interfaces": [{"pciAddress": PF["pciAddress"], "numVfs": 20}]}
    with pytest.raises(sriov_policy.SyncError, match=r"^cannot config SRIOV device: NumVfs \(20\) is larger than TotalVfs \(16\)$"):
        sriov_policy.apply_spec([PF], too_many)
    external = {"interfaces": [{"pciAddress": PF["pciAddress"], "numVfs": 4, "externallyManaged": True}]}
    with pytest.raises(sriov_policy.SyncError, match="number of request virtual functions 4 is not equal to configured virtual functions 0"):
        sriov_policy.apply_spec([PF], external)
    assert sriov_policy.apply_spec([dict(PF, numVfs=8)], external)[PF["pciAddress"]]["numVfs"] == 8  # host VFs are kept


# ---- NAD rendering ----------------------------------------------------------------------------
def test_nad_follows_the_upstream_template():
    net = {"metadata": {"name": "roce-node1", "namespace": "nvidia-network-operator"},
           "spec": {"resourceName": "roce_node1", "networkNamespace": "default", "vlan": 100, "trust": "on", "spoofChk": "off",
                    "linkState": "enable", "logLevel": "info", "maxTxRate": 0, "ipam": '{ "type": "host-local",\n "subnet": "10.255.0.0/30" }'}}
    nad = sriov_cni.render_nad(net, "nvidia.com")
    assert nad["metadata"] == {"name": "roce-node1", "namespace": "default", "annotations": {"k8s.v1.cni.cncf.io/resourceName": "nvidia.com/roce_node1"}}
    config = json.loads(nad["spec"]["config"])
    assert list(config) == ["cniVersion", "name", "type", "vlan", "spoofchk", "trust", "vlanQoS", "max_tx_rate", "link_state", "logLevel", "ipam"]
    assert config["ipam"] == {"type": "host-local", "subnet": "10.255.0.0/30"}
    meta = dict(net, spec=dict(net["spec"], metaPlugins='{"type": "tuning"}'))
    plugins = json.loads(sriov_cni.render_config(meta))["plugins"]
    assert [p["type"] for p in plugins] == ["sriov", "tuning"]
    assert sriov_cni.target_namespace({"metadata": {"namespace": "ops"}, "spec": {}}) == "ops"


# ---- NicClusterPolicy and NFD -----------------------------------------------------------------
def test_nicclusterpolicy_status():
    status = network_operator.policy_status({"metadata": {"name": "nic-cluster-policy"}, "spec": {"ofedDriver": {}, "secondaryNetwork": {"multus": {}}}})
    ready = [s["name"] for s in status["appliedStates"] if s["state"] == "ready"]
    assert status["state"] == "ready" and ready == ["state-OFED", "state-multus-cni"]
    assert len(status["appliedStates"]) == 12


def test_nicnodepolicy_status_any_name_three_states():
    """newNicNodePolicyStates (pkg/state/factory.go): OFED, RDMA and SR-IOV device plugins only, and every instance is
    reconciled (no supported name); the status is updatePolicyCRStatus's, conditions included on 26.7's CRD."""
    policy = {"metadata": {"name": "h100", "generation": 1}, "spec": {"nodeSelector": {"pool": "h100"}, "rdmaSharedDevicePlugin": {}}}
    status = network_operator.policy_status(policy, conditions=True, now="2026-12-01T10:00:00Z", node_policy=True)
    assert status["state"] == "ready"
    assert [(s["name"], s["state"]) for s in status["appliedStates"]] == [
        ("state-OFED", "ignore"), ("state-RDMA-device-plugin", "ready"), ("state-SRIOV-device-plugin", "ignore")]
    assert [(c["type"], c["status"]) for c in status["conditions"]] == [("RDMASharedDevicePluginReady", "True"), ("Ready", "True")]
    with tarfile.open(shared_chart("26.7.0-rc.2")) as tgz:
        assert network_operator.crd_has_conditions(yaml.safe_load(tgz.extractfile("network-operator/crds/mellanox.com_nicnodepolicies.yaml")))


def test_nicclusterpolicy_conditions_as_26_7_writes_them():
    """computePolicyConditions (controllers/conditions.go, v26.7.0-rc.2): one <Component>Ready per component the spec
    enables, the aggregate Ready last, observedGeneration the policy's; lastTransitionTime kept while the status holds."""
    policy = {"metadata": {"name": "nic-cluster-policy", "generation": 3}, "spec": {"secondaryNetwork": {"multus": {}, "cniPlugins": {}}, "nvIpam": {}}}
    status = network_operator.policy_status(policy, conditions=True, now="2026-12-01T10:00:00Z")
    assert [(c["type"], c["status"], c["reason"], c["message"], c["observedGeneration"]) for c in status["conditions"]] == [
        ("MultusCNIReady", "True", "ComponentReady", "", 3), ("CNIPluginsReady", "True", "ComponentReady", "", 3),
        ("NVIPAMReady", "True", "ComponentReady", "", 3), ("Ready", "True", "AllComponentsReady", "", 3)]
    # The next reconcile (generation 4, nvIpam removed): times kept, nvIpam's condition gone, observedGeneration moved.
    policy = dict(policy, metadata=dict(policy["metadata"], generation=4), spec={"secondaryNetwork": {"multus": {}, "cniPlugins": {}}}, status=status)
    again = network_operator.policy_status(policy, conditions=True, now="2026-12-01T11:00:00Z")
    assert [(c["type"], c["lastTransitionTime"], c["observedGeneration"]) for c in again["conditions"]] == [
        ("MultusCNIReady", "2026-12-01T10:00:00Z", 4), ("CNIPluginsReady", "2026-12-01T10:00:00Z", 4), ("Ready", "2026-12-01T10:00:00Z", 4)]
    # 26.4.1's operator (its CRD has no conditions) writes none.
    assert "conditions" not in network_operator.policy_status(policy)
    with tarfile.open(shared_chart("26.7.0-rc.2")) as tgz:
        crd = yaml.safe_load(tgz.extractfile("network-operator/crds/mellanox.com_nicclusterpolicies.yaml"))
    assert network_operator.crd_has_conditions(crd)
    with tarfile.open(shared_chart("26.4.1")) as tgz:
        crd = yaml.safe_load(tgz.extractfile("network-operator/crds/mellanox.com_nicclusterpolicies.yaml"))
    assert not network_operator.crd_has_conditions(crd)
    # The CRDs its components' manifests carry come from the same line.
    standin = network_operator.NetworkOperatorStandin(None, [], k8s_crd_schema_dir())
    for _section, _state, crds in network_operator.STATE_CRDS:
        for _name, file in crds:
            for conditions in (False, True):
                assert (standin.crds_dir / standin._crd_file(file, conditions)).is_file(), (file, conditions)


def test_the_switch_holds_a_policys_status_back_or_reports_a_component_not_ready_as_26_7_does(tmp_path):
    """The stand-in's switch (standins-network-operator.json): a component reported notReady or error the way
    updatePolicyCRStatus and computePolicyConditions write it, error first in the aggregate Ready; a held policy is left."""
    assert network_operator.read_switch(tmp_path) == {"hold": set(), "unready": {}}
    (tmp_path / network_operator.SWITCH_FILE).write_text(json.dumps({
        "hold": ["NicNodePolicy/held"],
        "unready": {"NicClusterPolicy/nic-cluster-policy": {"state-nv-ipam-cni": ["error", "failed to apply nv-ipam"],
                                                            "state-multus-cni": ["notReady", ""], "state-OFED": ["error", "not in the spec"]}}}))
    switch = network_operator.read_switch(tmp_path)
    assert switch["hold"] == {"NicNodePolicy/held"}
    policy = {"metadata": {"name": "nic-cluster-policy", "generation": 2}, "spec": {"secondaryNetwork": {"multus": {}}, "nvIpam": {}}}
    status = network_operator.policy_status(policy, conditions=True, now="2026-12-01T10:00:00Z",
                                            unready=switch["unready"]["NicClusterPolicy/nic-cluster-policy"])
    assert status["state"] == "notReady"
    applied = {s["name"]: s for s in status["appliedStates"]}
    assert applied["state-nv-ipam-cni"] == {"name": "state-nv-ipam-cni", "state": "error", "message": "failed to apply nv-ipam"}
    assert applied["state-multus-cni"] == {"name": "state-multus-cni", "state": "notReady"}
    assert applied["state-OFED"]["state"] == "ignore"  # a component absent from the spec stays ignored
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("MultusCNIReady", "False", "ComponentNotReady", ""), ("NVIPAMReady", "False", "ComponentError", "failed to apply nv-ipam"),
        ("Ready", "False", "ComponentError", "One or more components are in error state")]
    only_not_ready = network_operator.policy_status(policy, conditions=True, unready={"state-multus-cni": ["notReady", ""]})
    assert only_not_ready["conditions"][-1]["reason"] == "ComponentsNotReady"
    assert only_not_ready["conditions"][-1]["message"] == "One or more components are not yet ready"
    (tmp_path / network_operator.SWITCH_FILE).write_text("{half written")
    assert network_operator.read_switch(tmp_path) == {"hold": set(), "unready": {}}


def k8s_crd_schema_dir():
    return os.environ.get("GPUFABRIC_CRDS_DIR") or str(REPO.parent / "shared" / "crds")


def test_nfd_rule_of_the_chart_matches_nvidia_nics_only():
    with tarfile.open(chart_path()) as tgz:
        text = tgz.extractfile("network-operator/templates/nodefeaturerules.yaml").read().decode()
    (rule,) = yaml.safe_load("\n".join(line for line in text.splitlines() if not line.startswith("{{")))["spec"]["rules"]
    assert rule["labels"] == {"pci-15b3.present": "true"}
    assert nfd.rule_matches(rule, nfd.pci_devices({"interfaces": [PF]}))
    assert not nfd.rule_matches(rule, nfd.pci_devices({"interfaces": [dict(PF, vendor="8086")]}))
    assert not nfd.rule_matches(rule, [])
    with pytest.raises(ValueError, match="not evaluated"):
        nfd.rule_matches({"matchFeatures": [{"feature": "kernel.loadedmodule", "matchExpressions": {}}]}, [])


# ---- harness input checks ---------------------------------------------------------------------
def test_missing_binaries_say_what_to_provide(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBEBUILDER_ASSETS", raising=False)
    monkeypatch.setenv("GPUFABRIC_SHARED_DIR", str(tmp_path))
    with pytest.raises(controlplane.ControlPlaneError, match="KUBEBUILDER_ASSETS is not set and .*envtest-v1.36.2-linux-amd64.tar.xz"):
        controlplane.resolve_assets()
    (tmp_path / "bin").mkdir()
    for name in ("etcd", "kube-apiserver", "kubectl"):
        (tmp_path / "bin" / name).write_text("#!/bin/sh\n", encoding="utf-8")
        (tmp_path / "bin" / name).chmod(0o755)
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(tmp_path / "bin"))
    with pytest.raises(controlplane.ControlPlaneError, match="lacks kube-controller-manager, kube-scheduler, helm"):
        controlplane.resolve_assets()


def test_state_dir_with_foreign_files_is_never_removed(tmp_path):
    (tmp_path / "precious.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(controlplane.ControlPlaneError, match="did not write"):
        controlplane._remove_state(tmp_path)
    assert (tmp_path / "precious.txt").exists()


def test_upgrade_crd_hook_applies_the_crds_of_the_chart_it_belongs_to():
    """apply-crds --crds-dir=/crds/network-operator of 26.4.1 brings NicNodePolicy; 26.1.2's has none."""
    new = upgrade_crd_hook.chart_crds(shared_chart("26.4.1"), ["/crds/network-operator", "/crds/sriov-network-operator"])
    names = {c["metadata"]["name"] for c in new}
    assert "nicnodepolicies.mellanox.com" in names and "sriovnetworknodepolicies.sriovnetwork.openshift.io" in names
    old = upgrade_crd_hook.chart_crds(shared_chart("26.1.2"), ["/crds/network-operator"])
    assert "nicnodepolicies.mellanox.com" not in {c["metadata"]["name"] for c in old}
    with pytest.raises(upgrade_crd_hook.HookError, match="unknown --crds-dir /crds/other"):
        upgrade_crd_hook.chart_crds(chart_path(), ["/crds/other"])
    pod = {"metadata": {"name": "network-operator-upgrade-crd-x", "labels": {"helm.sh/chart": "network-operator-9.9.9"}},
           "spec": {"containers": [{"command": ["/apply-crds"], "args": ["--crds-dir=/crds/network-operator"]}]}}
    assert upgrade_crd_hook.is_hook_pod(pod)
    with pytest.raises(upgrade_crd_hook.HookError, match="network-operator-9.9.9.tgz not found"):
        upgrade_crd_hook.UpgradeCrdHook(None, chart_path().parent).archive(pod)


def test_a_test_widens_the_operator_delay_for_one_step_through_the_state_dir(tmp_path):
    op = sriov_operator.SriovStandin(None, {}, "ns", "nvidia.com", sync_delay=5.0, state_dir=str(tmp_path))
    assert op._current_sync_delay() == 5.0
    (tmp_path / "standins-sync-delay").write_text("40\n")
    assert op._current_sync_delay() == 40.0
    (tmp_path / "standins-sync-delay").write_text("not a number")
    assert op._current_sync_delay() == 5.0
    (tmp_path / "standins-sync-delay").unlink()
    assert op._current_sync_delay() == 5.0


def test_a_port_taken_before_etcd_bound_it_is_told_from_other_failures(tmp_path):
    # The control plane starts etcd and kube-apiserver again on new ports only when this attempt's log says the port was
    # taken (another process bound it between _free_port() and the bind); an earlier attempt's line does not count.
    (tmp_path / "etcd.log").write_bytes(b"listen tcp 127.0.0.1:35509: bind: address already in use\n")
    (tmp_path / "kube-apiserver.log").write_bytes(b"")
    assert controlplane.port_taken(tmp_path, {"etcd": 0, "kube-apiserver": 0})
    offsets = {"etcd": (tmp_path / "etcd.log").stat().st_size, "kube-apiserver": 0}
    with open(tmp_path / "etcd.log", "ab") as fh:
        fh.write(b"etcdmain: member has already been bootstrapped\n")
    assert not controlplane.port_taken(tmp_path, offsets)
    assert not controlplane.port_taken(tmp_path, {"missing": 0})

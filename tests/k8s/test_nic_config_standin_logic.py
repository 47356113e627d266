# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nic-configuration stand-in's pure functions (standins/nic_configuration.py); no cluster needed.

Expected values are worked out from the upstream functions named in the stand-in's docstring
(Mellanox/nic-configuration-operator at network-operator-v26.4.1), not read back from the implementation."""

import k8s_helpers  # noqa: F401 - importing it puts lab/k8s on sys.path  # pylint: disable=unused-import
from standins import nic_configuration as nc

IFACES = [
    {"name": "enp12s0f1np1", "pciAddress": "0000:0c:00.1", "vendor": "15b3", "deviceID": "1021"},
    {"name": "enp12s0f0np0", "pciAddress": "0000:0c:00.0", "vendor": "15b3", "deviceID": "1021"},
    {"name": "enp18s0np0", "pciAddress": "0000:12:00.0", "vendor": "15b3", "deviceID": "101d"},
    {"name": "eno1", "pciAddress": "0000:01:00.0", "vendor": "8086", "deviceID": "1572"},
]


def template(name, nic_type="1021", pci=None, node_selector=None, **tpl):
    spec = {"nodeSelector": node_selector or {}, "nicSelector": {"nicType": nic_type},
            "template": dict({"numVfs": 8, "linkType": "Ethernet", "roceOptimized": {"enabled": True}}, **tpl)}
    if pci:
        spec["nicSelector"]["pciAddresses"] = pci
    return {"metadata": {"name": name}, "spec": spec}


def devices(node="gpu-node01"):
    return [{"metadata": {"name": n}, "status": s} for n, s in nc.discovered(node, IFACES).items()]


def test_one_nicdevice_per_physical_nvidia_nic_named_as_get_cr_name():
    found = nc.discovered("GPU-node01", IFACES)
    # getCRName: lower-case node-type-domain-bus-device; both ports of 0000:0c:00 are one device; the Intel NIC is not NVIDIA's
    assert sorted(found) == ["gpu-node01-101d-0000-12-00", "gpu-node01-1021-0000-0c-00"]
    dev = found["gpu-node01-1021-0000-0c-00"]
    assert [p["pci"] for p in dev["ports"]] == ["0000:0c:00.0", "0000:0c:00.1"]
    assert dev["ports"][0]["networkInterface"] == "enp12s0f0np0" and dev["type"] == "1021" and dev["node"] == "GPU-node01"
    assert [p["rdmaInterface"] for p in dev["ports"]] == ["mlx5_0", "mlx5_1"]
    # every field the CRD's status requires is there
    assert set(dev) >= {"dpu", "firmwareVersion", "modelName", "node", "partNumber", "ports", "psid", "serialNumber", "superNIC", "type"}


def test_initial_conditions_are_upstreams():
    conds = {c["type"]: c for c in nc.initial_conditions("2026-01-01T00:00:00Z")}
    assert conds["ConfigUpdateInProgress"]["reason"] == "DeviceConfigSpecEmpty" and conds["ConfigUpdateInProgress"]["status"] == "False"
    assert conds["FirmwareUpdateInProgress"]["reason"] == "DeviceFirmwareSpecEmpty"
    assert conds["FirmwareConfigMatch"]["status"] == "Unknown"


def test_matching_follows_the_template_matcher():
    dev = next(d for d in devices() if d["status"]["type"] == "1021")
    labels = {"kubernetes.io/hostname": "gpu-node01", "pool": "a"}
    assert nc.matches(dev, labels, template("t"))  # empty nodeSelector: every node
    assert nc.matches(dev, labels, template("t", node_selector={"pool": "a"}))
    assert not nc.matches(dev, labels, template("t", node_selector={"pool": "b"}))
    assert not nc.matches(dev, labels, template("t", nic_type="101d"))
    assert nc.matches(dev, labels, template("t", pci=["0000:0c:00.1"]))  # any port's address selects the device
    assert not nc.matches(dev, labels, template("t", pci=["0000:12:00.0"]))


def test_one_template_is_copied_in_none_clears_two_clear_with_an_event():
    devs = devices()
    labels = {"gpu-node01": {"kubernetes.io/hostname": "gpu-node01"}}.get
    a = template("a", pci=["0000:0c:00.0"], numVfs=4)
    b = template("b", nic_type="101d")
    b["status"] = {"nicDevices": ["stale-device"]}
    configs, status, events = nc.match_templates([a, b], devs, labels)
    assert configs["gpu-node01-1021-0000-0c-00"] == {"template": a["spec"]["template"]}
    assert configs["gpu-node01-101d-0000-12-00"] == {"template": b["spec"]["template"]}
    assert status == {"a": ["gpu-node01-1021-0000-0c-00"], "b": ["stale-device", "gpu-node01-101d-0000-12-00"]}
    assert events == []
    c = template("c")  # a second 1021 template selecting the same device
    c["status"] = {"nicDevices": ["gpu-node01-1021-0000-0c-00"]}
    configs, status, events = nc.match_templates([a, c], devs, labels)
    assert configs == {"gpu-node01-1021-0000-0c-00": None, "gpu-node01-101d-0000-12-00": None}
    assert status == {"a": [], "c": []}
    assert events == [("gpu-node01-1021-0000-0c-00", "Several templates matching this device: a,c")]
    # a device whose node is gone is skipped
    assert nc.match_templates([a], devs, {}.get) == ({}, {"a": []}, [])


def test_nvconfig_of_a_template_as_construct_nv_param_map():
    tpl = {"numVfs": 8, "linkType": "Ethernet", "roceOptimized": {"enabled": True},
           "rawNvConfig": [{"name": "CNP_DSCP_P1", "value": "48"}, {"name": "CNP_DSCP_P2", "value": "48"}]}
    assert nc.nvconfig(tpl, 1) == {"SRIOV_EN": "1", "NUM_OF_VFS": "8", "LINK_TYPE_P1": "2", "ROCE_CC_PRIO_MASK_P1": "255",
                                   "CNP_DSCP_P1": "48", "CNP_802P_PRIO_P1": "6"}  # P2 dropped on a one-port NIC
    two = nc.nvconfig(tpl, 2)
    assert two["CNP_DSCP_P2"] == "48" and two["LINK_TYPE_P2"] == "2" and two["ROCE_CC_PRIO_MASK_P2"] == "255"
    assert nc.nvconfig({"numVfs": 0, "linkType": "Infiniband"}, 1) == {"SRIOV_EN": "0", "NUM_OF_VFS": "0", "LINK_TYPE_P1": "1"}


def test_incorrect_specs_get_upstreams_messages():
    assert nc.spec_problem({"linkType": "Infiniband", "roceOptimized": {"enabled": True}}) == \
        "RoceOptimized settings can only be used with link type Ethernet"
    assert nc.spec_problem({"linkType": "Ethernet", "gpuDirectOptimized": {"enabled": True, "env": "Baremetal"}}) == \
        "GpuDirectOptimized should only be enabled together with PciPerformanceOptimized"
    assert nc.spec_problem({"linkType": "Ethernet", "roceOptimized": {"enabled": True}}) is None


def test_set_condition_keeps_the_transition_time_while_the_status_holds():
    conds = nc.initial_conditions("t0")
    assert nc.set_condition(conds, nc._cond("ConfigUpdateInProgress", "False", "UpdateSuccessful", "", "t1"))
    cond = next(c for c in conds if c["type"] == "ConfigUpdateInProgress")
    assert cond["reason"] == "UpdateSuccessful" and cond["lastTransitionTime"] == "t0"
    assert not nc.set_condition(conds, nc._cond("ConfigUpdateInProgress", "False", "UpdateSuccessful", "", "t2"))
    assert nc.set_condition(conds, nc._cond("ConfigUpdateInProgress", "True", "UpdateStarted", "", "t3"))
    assert next(c for c in conds if c["type"] == "ConfigUpdateInProgress")["lastTransitionTime"] == "t3"


def test_a_test_widens_the_reboot_through_the_state_dir(tmp_path):
    # test_nic_config_role.py must see the reboot pending to show that the role's wait does not wait for it.
    standin = nc.NicConfigurationStandin(None, {}, "ns", apply_delay=2.0, state_dir=str(tmp_path))
    assert standin._reboot_delay() == 2.0
    (tmp_path / "standins-reboot-delay").write_text("600\n")
    assert standin._reboot_delay() == 600.0
    (tmp_path / "standins-reboot-delay").write_text("soon")
    assert standin._reboot_delay() == 2.0
    assert nc.NicConfigurationStandin(None, {}, "ns").reboot_delay_file is None

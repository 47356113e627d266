"""gpufabric.roce.sriov_render: every SR-IOV object from one read of the nodes' variables, as one JSON text."""

import json
from unittest import mock

from ansible._internal._datatag._tags import Origin
from ansible.plugins.action import ActionBase

from ansible_collections.gpufabric.roce.plugins.action.manifest_files import ActionModule as ManifestFiles
from ansible_collections.gpufabric.roce.plugins.action.sriov_render import ActionModule
from ansible_collections.gpufabric.roce.plugins.filter.fabric_plan import FilterModule as FabricPlanFilters
from ansible_collections.gpufabric.roce.plugins.filter.k8s_render import FilterModule
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.nccl import gateway_rails, nccl_env
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import gateway_args_list

FILTERS = FilterModule().filters()
PF = "enp157s0np0"


def hostvars():
    return {
        "node1": {"roce_pf": PF, "roce_pod_subnet": "10.255.0.0/30", "roce_pod_gateway": "10.255.0.2"},
        "node2": {"roce_pf": PF, "roce_pod_subnet": "10.255.0.4/30", "roce_pod_gateway": "10.255.0.6", "sriov_networks_pool_name": "b"},
    }


def _action(cls, args, check_mode=False):
    task = mock.MagicMock()
    task.args, task.check_mode, task.diff = args, check_mode, False
    return cls(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)


ARGUMENT_DEFAULTS = {"defaults": {}, "pool_defaults": {}, "nic_config_defaults": {}, "whole_fabric": False, "nccl": False}


def render(args, task_vars):
    action = _action(ActionModule, args)
    with mock.patch.object(ActionBase, "run", return_value={}), \
            mock.patch.object(ActionModule, "validate_argument_spec", return_value=(None, dict(ARGUMENT_DEFAULTS, **args))):
        return action.run(task_vars=task_vars)


def test_renders_what_the_three_filters_render_as_one_json_text():
    hv, hosts = hostvars(), ["node1", "node2"]
    out = render({"hosts": hosts, "defaults": {"roce_num_vfs": 8}}, {"hostvars": hv})
    assert not out.get("failed") and out["changed"] is False
    objects = json.loads(out["objects"])
    rendered = FILTERS["sriov_manifests"](hv, hosts, {"roce_num_vfs": 8})
    pools = FILTERS["_sriov_pool_configs"](hv, rendered["nodes"], {})
    assert objects["policies"] == rendered["policies"] and objects["networks"] == rendered["networks"]
    assert objects["nodes"] == rendered["nodes"] and objects["pool_configs"] == pools["pool_configs"]
    assert out["pools"] == pools["pools"] and len(out["pools"]) == 2
    assert out["counts"] == {"policies": 2, "networks": 2, "ip_pools": 0, "pool_configs": 2, "nic_config_templates": 0, "nodes": 2,
                             "nic_config_devices": 0, "claim_templates": 0}
    assert out["node_names"] == {"node1": "node1", "node2": "node2"}
    assert out["_ansible_verbose_override"] is True  # a result of about 100 MB at fleet scale is not for the screen


def test_an_invalid_node_fails_with_every_problem_and_renders_nothing():
    hv = hostvars()
    hv["node1"]["roce_vlan_id"] = 5000
    hv["node2"]["sriov_networks_pool_max_unavailable"] = "x%"
    out = render({"hosts": ["node1", "node2"]}, {"hostvars": hv})
    assert out["failed"] is True and "objects" not in out
    assert "node1: roce_vlan_id=5000: must be between 0 and 4094" in out["msg"]


def test_a_bad_value_every_node_reads_from_group_vars_is_one_line_naming_the_nodes_and_the_file():
    # Issue 42: one bad line in group_vars was one line per node (64 nodes: 64 lines of the same problem).
    hv = hostvars()
    for h in hv:
        hv[h]["sriov_networks_priority"] = Origin(path="/inv/group_vars/roce_nodes.yml", line_num=15).tag(100)
    out = render({"hosts": ["node1", "node2"]}, {"hostvars": hv})
    assert out["failed"] is True and "objects" not in out
    assert out["msg"].splitlines() == [
        "1 problem found; nothing was rendered or applied:",
        "  - node1 (and 1 other node: node2): sriov_networks_priority=100: must be between 0 and 99 (0 is the highest priority). "
        "Fix: set sriov_networks_priority to 0..99. Source: sriov_networks_priority in /inv/group_vars/roce_nodes.yml:15."]


def _computed_plan(hv):
    return FabricPlanFilters().filters()["fabric_plan"](hv, sorted(hv))


def test_the_render_reads_each_node_from_the_plan_and_its_table_only_when_needed():
    hv = hostvars()

    class Guarded(dict):
        def __getitem__(self, key):
            if key == "fabric":
                raise AssertionError("the plan's table is read only when a node has roce_qos_via: operator")
            return dict.__getitem__(self, key)

    plan = _computed_plan(hv)
    out = render({"hosts": ["node1", "node2"]}, {"hostvars": hv, "__site_plan": Guarded(plan)})
    assert not out.get("failed") and out["counts"]["policies"] == 2
    for h in ("node1", "node2"):
        hv[h].update(roce_qos={}, roce_qos_via="operator", roce_nic_type="1021")
    plan = _computed_plan(hv)
    plan["fabric"]["qos_profiles"][0]["tos"] = 98  # only the plan's table says so
    # The inventory changed after planning: the render reads the plan, not the inventory.
    for h in hv:
        hv[h].update(roce_qos_via="host", sriov_networks_priority=500)
    out = render({"hosts": ["node1", "node2"]}, {"hostvars": hv, "__site_plan": plan})
    assert not out.get("failed"), out.get("msg")
    templates = json.loads(out["objects"])["nic_config_templates"]
    assert {t["spec"]["template"]["roceOptimized"]["qos"]["tos"] for t in templates} == {98}
    assert out["counts"]["nic_config_devices"] == 2 and out["nic_config_nodes"] == 2


def test_without_a_plan_that_has_every_host_the_render_reads_the_inventory_through_the_plan_builder():
    hv = hostvars()
    plan = FabricPlanFilters().filters()["fabric_plan"](hv, ["node1"])  # node2 is not in it
    hv["node2"]["roce_node_name"] = "gpu-b"
    out = render({"hosts": ["node1", "node2"]}, {"hostvars": hv, "__site_plan": plan})
    assert out["node_names"] == {"node1": "node1", "node2": "gpu-b"}


def test_nccl_gives_what_the_inventory_determines_of_every_nodes_settings_from_the_plans_table():
    """Issue 42 item 4: gpufabric.roce.render wrote no NCCL ConfigMap at all (the settings came from the host phase only).
    The inventory determines NCCL_IB_TC (the QoS) and NCCL_SOCKET_IFNAME; the host facts' settings never come from here."""
    hv = hostvars()
    assert "nccl" not in render({"hosts": ["node1", "node2"]}, {"hostvars": hv})  # only when asked (render mode)
    out = render({"hosts": ["node1", "node2"], "nccl": True}, {"hostvars": hv})
    assert out["nccl"] == {"env": {"node1": {}, "node2": {}}, "host_qos": []}  # no QoS: nothing the inventory determines
    hv["node1"].update(roce_qos={}, roce_node_name="gpu-a1", host_network_nccl_socket_ifname="eth0")
    hv["node2"].update(roce_qos={}, roce_qos_via="operator", roce_nic_type="1021")
    plan = _computed_plan(hv)
    table = plan["fabric"]
    table["qos_profiles"][0]["tos"] = 98  # only the plan's table says so
    out = render({"hosts": ["node1", "node2"], "nccl": True}, {"hostvars": hv, "__site_plan": plan})
    assert out["nccl"] == {"env": {"gpu-a1": {"NCCL_IB_TC": "98", "NCCL_SOCKET_IFNAME": "eth0"}, "node2": {"NCCL_IB_TC": "98"}},
                           "host_qos": ["gpu-a1"]}  # node2's QoS is in its NicConfigurationTemplate
    # The same settings as the host phase derives from the same rails (one helper): only the facts' own are added there.
    gateways = gateway_args_list(table, "node1", with_routes=False)
    assert nccl_env({}, gateway_rails(gateways), socket_ifname="eth0")["env"] == out["nccl"]["env"]["gpu-a1"]
    # Nodes without a pod network (whereabouts, no node subnets): no gateway, no rail, nothing to derive; no failure.
    for h in hv:
        hv[h] = {"roce_pf": PF, "roce_qos": {}}
    out = render({"hosts": ["node1", "node2"], "nccl": True,
                  "defaults": {"sriov_networks_ipam": "whereabouts", "sriov_networks_whereabouts_range": "10.200.0.0/16"}}, {"hostvars": hv})
    assert not out.get("failed"), out.get("msg")
    assert out["nccl"] == {"env": {"node1": {}, "node2": {}}, "host_qos": []}


def test_manifest_files_writes_the_objects_by_file_and_refuses_what_it_cannot_place(tmp_path):
    out = render({"hosts": ["node1", "node2"]}, {"hostvars": hostvars()})

    def write(args):
        with mock.patch.object(ActionBase, "run", return_value={}):
            return _action(ManifestFiles, dict({"dest": str(tmp_path)}, **args)).run(task_vars={})

    done = write({"files": {"kustomization.yaml": {"kind": "Kustomization"}}, "objects": out["objects"],
                  "object_files": {"policies.yaml": "policies", "networks.yaml": "networks"}})
    assert done["changed"] is True and [f["documents"] for f in done["files"]] == [1, 2, 2]
    assert "name: roce-node2" in (tmp_path / "policies.yaml").read_text()
    assert write({"files": {}, "objects": out["objects"], "object_files": {"x.yaml": "nope"}})["msg"] == \
        "object_files names keys that objects does not have: nope"
    assert "not JSON text" in write({"files": {}, "objects": "{", "object_files": {"x.yaml": "policies"}})["msg"]
    assert "in both files and object_files: a.yaml" in write({"files": {"a.yaml": []}, "objects": out["objects"],
                                                              "object_files": {"a.yaml": "policies"}})["msg"]


# whole_fabric: site.yml's sriov phase writes or applies what is rendered, replacing and pruning the fabric's objects.
PLAN_FILTERS = FabricPlanFilters().filters()


def _plan(hv, complete=True, read_from=None):
    plan = PLAN_FILTERS["fabric_plan"](hv, sorted(hv), complete=complete)
    if read_from is not None:  # as site.yml reads roce_plan: the file's JSON, checked
        plan = PLAN_FILTERS["fabric_plan_read"](json.loads(PLAN_FILTERS["fabric_plan_json"](plan)), sorted(hv), read_from)
    return plan


def test_a_run_that_may_see_part_of_the_fabric_renders_nothing_to_apply():
    # An AWX job without roce_inventory_complete: true may be a job slice; its plan is incomplete.
    hv = hostvars()
    task_vars = {"hostvars": hv, "__site_plan": _plan(hv, complete=False)}
    out = render({"hosts": ["node1", "node2"], "whole_fabric": True}, task_vars)
    assert out["failed"] is True and "objects" not in out
    assert out["msg"].startswith("all roce_nodes: roce_inventory_complete=null: this run may see part of the fabric only")
    assert "Fix: run the sriov phase from a job that has every node" in out["msg"] and "--skip-tags sriov" in out["msg"]
    # The same run validates (the node play's render, which applies nothing) and a complete plan passes.
    assert not render({"hosts": ["node1", "node2"]}, task_vars).get("failed")
    task_vars["__site_plan"] = _plan(hv)
    assert not render({"hosts": ["node1", "node2"], "whole_fabric": True}, task_vars).get("failed")


def test_the_controller_finds_the_plan_on_the_node_that_holds_it():
    hv = hostvars()
    hv["node1"]["__site_plan"] = _plan(hv, complete=False)
    out = render({"hosts": ["node1", "node2"], "whole_fabric": True}, {"hostvars": hv, "__site_plan_host": "node1"})
    assert out["failed"] is True and "may see part of the fabric only" in out["msg"]


def test_a_plan_read_back_must_cover_every_rendered_node_and_is_what_is_rendered():
    hv = hostvars()
    plan = _plan(hv, read_from="/srv/plan.json")
    assert not render({"hosts": ["node1", "node2"], "whole_fabric": True}, {"hostvars": hv, "__site_plan": plan}).get("failed")
    # A rack's run: node2 of the plan would lose its objects to the prune.
    out = render({"hosts": ["node1"], "whole_fabric": True}, {"hostvars": hv, "__site_plan": plan})
    assert out["failed"] is True
    assert out["msg"].startswith('node2: roce_plan="/srv/plan.json": has 1 node(s) this run does not render: node2')
    # The inventory changed after the plan was written: the objects are rendered from the plan, as the host phases
    # configured the nodes from it (the same VLAN and MTU on the VFs as on the gateways).
    hv["node1"].update(roce_vlan_id=200)
    hv["node2"].update(roce_vlan_id=200, roce_mtu=4200)
    out = render({"hosts": ["node1", "node2"], "whole_fabric": True}, {"hostvars": hv, "__site_plan": plan})
    assert not out.get("failed"), out.get("msg")
    objects = json.loads(out["objects"])
    assert {n["spec"]["vlan"] for n in objects["networks"]} == {100}
    assert {p["spec"]["mtu"] for p in objects["policies"]} == {9000}
    # A host to render that the plan read back does not have: refused, not read from the inventory.
    hv["node3"] = dict(hv["node1"], roce_pod_subnet="10.255.0.8/30", roce_pod_gateway="10.255.0.10")
    out = render({"hosts": ["node1", "node2", "node3"], "whole_fabric": True}, {"hostvars": hv, "__site_plan": plan})
    assert out["failed"] is True and "objects" not in out
    assert out["msg"].startswith('node3: roce_plan="/srv/plan.json": has no entry for node3, which this run renders')


def test_the_refusal_names_the_declaration_the_plan_was_made_with():
    # roce_inventory_complete set for the nodes (group_vars/roce_nodes), not for the controller the render runs on.
    hv = hostvars()
    for h in hv:
        hv[h]["roce_inventory_complete"] = False
    hv["node1"]["__site_plan"] = _plan(hv, complete=False)
    out = render({"hosts": ["node1", "node2"], "whole_fabric": True}, {"hostvars": hv, "__site_plan_host": "node1"})
    assert out["msg"].startswith("all roce_nodes: roce_inventory_complete=false: this run may see part of the fabric only")

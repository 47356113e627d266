# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rail model through the real playbook (site.yml, render mode, on the controller only).

- A one-rail inventory renders byte for byte what it rendered before rails existed: the golden files
  under golden/one-rail/ were rendered by commit 6c96dbe (the last commit without rails) from
  inventories/example, inventories/lab and molecule/k8s/inventory. Since issue 21 the directory also holds
  the drain pool (sriov-network-pool-configs.yaml, pinned by its own golden file) and kustomization.yaml lists
  it: one line more than before rails, the policies and networks unchanged. The objects are rendered once per run,
  in the validation play; phase 4 writes that render (issue 21). Since issue 42 every object carries the fabric label
  apply mode adds, the NCCL ConfigMap is written without host facts too (what the inventory determines, pinned by its
  own golden file, listed in kustomization.yaml), and inventories/example has a /24 per node and routes to the fabric's
  range (changelogs/fragments/issue42-gitops-nccl-labels-safe-example.yml lists every difference).
- inventories/example-multirail (8 rails x 2 nodes) renders 16 SriovNetworkNodePolicies and 16
  SriovNetworks, every one valid against the upstream CRD schemas.
- A wrong rail is refused before anything is written, naming host, rail, field, value and fix.
"""

import importlib.util
import os

import pytest
import yaml
from _runner import REPO, append, copy_inventory, site

GOLDEN = os.path.join(os.path.dirname(__file__), "golden", "one-rail")
ONE_RAIL = {"example": "inventories/example", "lab": "inventories/lab", "k8s-scenario": "molecule/k8s/inventory"}
FILES = ("sriov-network-node-policies.yaml", "sriov-networks.yaml", "sriov-network-pool-configs.yaml", "nccl-configmap.yaml", "kustomization.yaml")


def _crd_schema():
    path = os.path.join(REPO, "tests", "unit", "plugins", "module_utils", "k8s_crd_schema.py")
    spec = importlib.util.spec_from_file_location("k8s_crd_schema", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def render(inventory, out_dir):
    return site(inventory, "--tags", "sriov", render_dir=out_dir, timeout=600)


def documents(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


@pytest.mark.parametrize("name", sorted(ONE_RAIL))
def test_one_rail_inventory_renders_exactly_as_before_rails(name, tmp_path):
    rc, out = render(os.path.join(REPO, ONE_RAIL[name]), tmp_path / "out")
    assert rc == 0, out
    # Rendered once per run: by the validation play; phase 4 writes that render.
    runs = [part.split("TASK")[0] for part in out.split("TASK [gpufabric.roce.sriov_networks : Validate the inventory and render every")[1:]]
    assert [("ok: [" in r) for r in runs] == [True], runs  # the controller's validation play
    phase4 = out.split("TASK [gpufabric.roce.sriov_networks : Validate the whole inventory and render every node in one pass]")[1].split("TASK")[0]
    assert "skipping: [" in phase4 and "included:" not in phase4, phase4  # phase 4 writes that render
    # The nodes' play includes its copy only without a controller in the run: skipped here, its tasks never listed.
    nodes_copy = out.split("TASK [Validate the SR-IOV policies and networks here, as the controller would")[1].split("TASK")[0]
    assert "skipping: [" in nodes_copy and "ok: [" not in nodes_copy, nodes_copy
    for f in FILES:
        # .golden, not .yaml: the files are byte-for-byte renders, not YAML for the linters to judge.
        with open(os.path.join(GOLDEN, name, f + ".golden")) as golden, open(tmp_path / "out" / "sriov-networks" / f) as now:
            assert now.read() == golden.read(), "%s/%s differs from its render before rails" % (name, f)


def test_eight_rails_two_nodes_render_sixteen_policies_and_networks_valid_against_the_crds_and_one_nccl_configmap(tmp_path):
    # The host phase (host_network) leaves host_network_nccl_env on every node it reached; here the inventory plays that
    # part, with what gpufabric.roce.nccl_env returns (tests/unit/.../test_nccl.py). It changes the ConfigMap only.
    inv = copy_inventory("example-multirail", tmp_path / "inv")
    for i, node in enumerate(("gpu-node01", "gpu-node02")):
        append(inv / "host_vars" / ("%s.yml" % node), yaml.safe_dump({"host_network_nccl_env": {
            "env": {"NCCL_IB_HCA": ",".join("=mlx5_%d:1" % r for r in range(8)), "NCCL_IB_GID_INDEX": str(3 + i)},
            "rails": [], "problems": []}}))
    rc, out = render(inv, tmp_path / "out")
    assert rc == 0, out
    base = tmp_path / "out" / "sriov-networks"
    policies = documents(base / "sriov-network-node-policies.yaml")
    networks = documents(base / "sriov-networks.yaml")
    assert len(policies) == 16 and {p["kind"] for p in policies} == {"SriovNetworkNodePolicy"}
    assert len(networks) == 16 and {n["kind"] for n in networks} == {"SriovNetwork"}

    by_name = {p["metadata"]["name"]: p["spec"] for p in policies}
    assert sorted(by_name) == sorted("roce-gpu-node%02d-rail%d" % (n, r) for n in (1, 2) for r in range(8))
    # Each rail has its own resource, pinned to its node; the override moved gpu-node02's rail7 PF.
    assert by_name["roce-gpu-node01-rail3"]["resourceName"] == "roce_gpu_node01_rail3"
    assert by_name["roce-gpu-node01-rail3"]["nodeSelector"] == {"kubernetes.io/hostname": "gpu-node01"}
    assert by_name["roce-gpu-node01-rail7"]["nicSelector"]["pfNames"] == ["enp204s0np0"]
    assert by_name["roce-gpu-node02-rail7"]["nicSelector"]["pfNames"] == ["enp205s0np0"]

    nets = {n["metadata"]["name"]: n["spec"] for n in networks}
    rail5 = nets["roce-gpu-node02-rail5"]
    assert rail5["vlan"] == 106 and rail5["resourceName"] == "roce_gpu_node02_rail5"
    ipam = yaml.safe_load(rail5["ipam"])
    assert ipam == {"type": "host-local", "subnet": "10.106.1.0/24", "gateway": "10.106.1.254", "routes": [{"dst": "10.106.0.0/16"}]}
    # Rail i carries the same VLAN on every node.
    for r in range(8):
        assert nets["roce-gpu-node01-rail%d" % r]["vlan"] == nets["roce-gpu-node02-rail%d" % r]["vlan"] == 101 + r

    schema = _crd_schema()
    crds = schema.load_crds()
    problems = [p for obj in policies + networks for p in schema.validate_object(obj, crds)]
    assert problems == []

    # The NCCL settings from the host phase, as one ConfigMap the training jobs mount.
    (cm,) = documents(base / "nccl-configmap.yaml")
    assert cm["kind"] == "ConfigMap" and cm["metadata"]["name"] == "gpufabric-nccl" and cm["metadata"]["namespace"] == "default"
    assert cm["data"]["nodes"].split() == ["gpu-node01", "gpu-node02"]
    assert "NCCL_IB_GID_INDEX=4" in cm["data"]["gpu-node02.env"] and "=mlx5_7:1" in cm["data"]["gpu-node02.env"]
    assert "nccl-configmap.yaml" in documents(base / "kustomization.yaml")[0]["resources"]


def test_a_rail_vlan_that_differs_on_one_node_is_refused_before_anything_is_written(tmp_path):
    inv = copy_inventory("example-multirail", tmp_path / "inv")
    append(inv / "host_vars" / "gpu-node02.yml", "  rail2: {vlan: 333}\n")
    rc, out = render(inv, tmp_path / "out")
    assert rc != 0, out
    assert "gpu-node02: roce_rails[rail2].vlan=333" in out, out
    assert "Fix: use one VLAN per rail on every node" in out
    assert not (tmp_path / "out" / "sriov-networks").exists()


def test_a_rails_bad_vf_settings_and_roce_vfs_beside_rails_are_refused_before_phase_1(tmp_path):
    inv = copy_inventory("example-multirail", tmp_path / "inv")
    append(inv / "host_vars" / "gpu-node02.yml", "  rail3: {vfs: [{id: 8, trust: true}]}\n")
    append(inv / "host_vars" / "gpu-node01.yml", "roce_vfs: [{id: 6, vlan: 100}]\n")
    rc, out = site(inv, render_dir=str(tmp_path / "out"))
    assert rc != 0, out
    assert "gpu-node02: roce_rails[rail3].vfs[id=8].id=8: PF enp84s0np0 will have 8 VFs (ids 0..7)" in out, out
    assert "gpu-node01: roce_vfs=" in out and "is a one-rail setting and sets no VF when roce_rails is set" in out, out
    assert "PLAY [Phase 1" not in out and not (tmp_path / "out").exists()


def test_two_infiniband_rails_beside_six_roce_rails_render_sriov_ib_networks_valid_against_the_crds(tmp_path):
    inv = copy_inventory("example-multirail", tmp_path / "inv")
    group = inv / "group_vars" / "roce_nodes.yml"
    text = group.read_text()
    for rail, pf, vlan, pool in (("rail6", "enp186s0np0", 107, "10.107"), ("rail7", "enp204s0np0", 108, "10.108")):
        old = "{name: %s, pf: %s, vlan: %d, subnet_pool: %s.0.0/16" % (rail, pf, vlan, pool)
        assert old in text
        text = text.replace(old, "{name: %s, pf: %s, link_type: ib, subnet_pool: %s.0.0/16" % (rail, pf, pool))
    group.write_text(text)
    rc, out = render(inv, tmp_path / "out")
    assert rc == 0, out
    base = tmp_path / "out" / "sriov-networks"
    policies = {p["metadata"]["name"]: p for p in documents(base / "sriov-network-node-policies.yaml")}
    networks = {n["metadata"]["name"]: n for n in documents(base / "sriov-networks.yaml")}
    assert len(policies) == 16 and len(networks) == 16
    for node in ("gpu-node01", "gpu-node02"):
        for r in range(8):
            ib = r >= 6
            assert policies["roce-%s-rail%d" % (node, r)]["spec"]["linkType"] == ("ib" if ib else "eth")
            assert networks["roce-%s-rail%d" % (node, r)]["kind"] == ("SriovIBNetwork" if ib else "SriovNetwork")
    # gpu-node02's override of rail7's PF still applies; its IPoIB subnet is the pool's 2nd /24, with no gateway.
    assert policies["roce-gpu-node02-rail7"]["spec"]["nicSelector"]["pfNames"] == ["enp205s0np0"]
    assert yaml.safe_load(networks["roce-gpu-node02-rail7"]["spec"]["ipam"]) == {
        "type": "host-local", "subnet": "10.108.1.0/24", "routes": [{"dst": "10.108.0.0/16"}]}
    assert "vlan" not in networks["roce-gpu-node02-rail7"]["spec"]
    schema = _crd_schema()
    crds = schema.load_crds()
    assert [p for obj in list(policies.values()) + list(networks.values()) for p in schema.validate_object(obj, crds)] == []


def test_a_vlan_on_an_infiniband_rail_is_refused_before_anything_is_written(tmp_path):
    inv = copy_inventory("example-multirail", tmp_path / "inv")
    group = inv / "group_vars" / "roce_nodes.yml"
    group.write_text(group.read_text().replace("{name: rail7, pf: enp204s0np0, vlan: 108,", "{name: rail7, pf: enp204s0np0, vlan: 108, link_type: ib,"))
    rc, out = render(inv, tmp_path / "out")
    assert rc != 0, out
    assert "roce_rails[rail7].vlan=108: is set on an InfiniBand rail (link_type: ib)" in out, out
    assert "Fix: remove vlan from rail rail7 in roce_rails" in out
    assert not (tmp_path / "out" / "sriov-networks").exists()

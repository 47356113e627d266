# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_verify in host mode reads the ring's addresses from the fabric plan it is given (rdma_verify_fabric, what
site.yml passes), not from the nodes' variables (issue 21): the tasks and templates of tasks/host_plan.yml, through
ansible-playbook. The derivation itself is unit-tested (tests/unit/plugins/module_utils/test_rdma_verify_fabric.py)."""

import json
import os
import re

import _runner

HERE = os.path.join(_runner.REPO, "tests", "integration")


def test_the_ring_is_planned_from_the_fabric_plan_not_the_variables(tmp_path):
    proc = _runner.ansible_playbook("-i", os.path.join(HERE, "rdma_verify_forks", "hosts.yml"),
                                    os.path.join(HERE, "rdma_verify_fabric_ring", "playbook.yml"), "-f", "4",
                                    ANSIBLE_NOCOLOR="1", OUT=str(tmp_path), PATH=_runner.venv_path())
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    found = re.search(r"RING (\S+) PEER ([0-9.]+)", out)
    assert found, out[-4000:]
    # the plan's addresses, one per node in inventory order; node n1's server in the first round is n2
    assert found.group(1).split(",") == ["10.9.0.2", "10.9.1.2", "10.9.2.2", "10.9.3.2"], out[-4000:]
    assert found.group(2) == "10.9.1.2"
    # Each node's tests send with its rail's ToS as the plan's table gives it, not as its variables would.
    assert sorted(re.findall(r"TCLASS (n\d) (\S+)", out)) == [("n1", "98"), ("n2", "98"), ("n3", "98"), ("n4", "98")], out[-4000:]


def _own_plan_run(tmp_path, n4_gateway):
    hosts = {"all": {"children": {"roce_nodes": {
        "vars": {"ansible_connection": "local", "roce_pf": "lo", "roce_vlan_id": 100, "rdma_verify_gid_index": 3},
        "hosts": {"n%d" % i: {"roce_pod_subnet": "10.8.%d.0/30" % i, "roce_pod_gateway": "10.8.%d.1" % i} for i in range(1, 5)},
    }}}}
    hosts["all"]["children"]["roce_nodes"]["hosts"]["n4"]["roce_pod_gateway"] = n4_gateway
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(json.dumps(hosts))
    proc = _runner.ansible_playbook("-i", str(inventory), os.path.join(HERE, "rdma_verify_fabric_ring", "playbook.yml"), "-f", "4",
                                    "-e", '{"rdma_verify_fabric": ""}', ANSIBLE_NOCOLOR="1", OUT=str(tmp_path), PATH=_runner.venv_path())
    return proc, proc.stdout + proc.stderr


def test_the_role_on_its_own_plans_the_fabric_from_the_inventory_once(tmp_path):
    # No plan given (rdma_verify_fabric empty) and nodes with a pod network: the ring comes from the plan the role makes of
    # the inventory (gpufabric.roce.fabric_plan, the one reader of the fabric's variables): the nodes' gateways ...
    proc, out = _own_plan_run(tmp_path, "10.8.4.1")
    assert proc.returncode == 0, out[-4000:]
    found = re.search(r"RING (\S+) PEER ([0-9.]+)", out)
    assert found, out[-4000:]
    assert found.group(1).split(",") == ["10.8.1.1", "10.8.2.1", "10.8.3.1", "10.8.4.1"], out[-4000:]
    # ... validated as the plan validates them: a gateway outside its node's subnet is refused, not tested.
    proc, out = _own_plan_run(tmp_path, "10.8.9.1")
    assert proc.returncode != 0
    assert 'n4: roce_pod_gateway="10.8.9.1": is outside roce_pod_subnet 10.8.4.0/30' in " ".join(out.split()), out[-4000:]

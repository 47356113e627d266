# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_verify in host mode reads the ring's addresses from the fabric plan it is given (rdma_verify_fabric, what
site.yml passes), not from the nodes' variables (issue 21): the tasks and templates of tasks/host_plan.yml, through
ansible-playbook. The derivation itself is unit-tested (tests/unit/plugins/module_utils/test_rdma_verify_fabric.py)."""

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

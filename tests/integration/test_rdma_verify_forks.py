# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_verify in host mode checks ansible_forks against the hosts of a round before the first round
(issue 17): with fewer forks Ansible runs a round in batches, servers of early batches time out and pairs
fail falsely. It fails when the servers' timeout cannot outlive the batches, warns when it can, and says
what to set (-f, ANSIBLE_FORKS, forks in ansible.cfg)."""

import os
import re

import _runner

HERE = os.path.join(_runner.REPO, "tests", "integration", "rdma_verify_forks")


def run(tmp_path, *args, **env):
    proc = _runner.ansible_playbook("-i", os.path.join(HERE, "hosts.yml"), os.path.join(HERE, "playbook.yml"), *args,
                                    ANSIBLE_NOCOLOR="1", OUT=str(tmp_path), PATH=_runner.venv_path(), **env)
    return proc.returncode, re.sub(r"\s+", " ", proc.stdout + proc.stderr)


def test_too_few_forks_fail_before_the_first_round(tmp_path):
    # 4 hosts per round, 1 fork: 4 batches of (bw 5 s + 5 s) = 40 s > a 20 s server timeout.
    rc, out = run(tmp_path, "-f", "1", "-e", "rdma_verify_server_timeout=20", "-e", "rdma_verify_client_timeout=10")
    assert rc != 0, out
    assert "forks=1 but a round of the RDMA matrix has 4 hosts" in out, out
    assert "Fix: run with forks >= 4 (ansible-playbook -f 4, ANSIBLE_FORKS=4, or forks = 4 under [defaults] in ansible.cfg)" in out, out
    assert "raise rdma_verify_server_timeout to at least 40" in out, out


def test_too_few_forks_through_ansible_forks_env(tmp_path):
    rc, out = run(tmp_path, "-e", "rdma_verify_server_timeout=15", "-e", "rdma_verify_client_timeout=10", ANSIBLE_FORKS="2")
    assert rc != 0 and "forks=2 but a round of the RDMA matrix has 4 hosts" in out, out


def test_fewer_forks_within_the_server_timeout_warn(tmp_path):
    # 2 batches of 10 s fit in the default 90 s server timeout: a warning, no failure.
    rc, out = run(tmp_path, "-f", "2")
    assert rc == 0, out
    assert "WARNING: forks=2 < 4 hosts per round: Ansible runs each round in 2 batches (about 20 s)" in out, out


def test_enough_forks_pass(tmp_path):
    rc, out = run(tmp_path, "-f", "4")
    assert rc == 0, out
    assert "forks=4 >= 4 hosts per round" in out, out

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_network reads the RDMA facts again after its changes unless this run's preflight read them and nothing changed.

The decision (roles/host_network/vars/main.yml) against registered results as Ansible makes them. The lab proves the
facts it keeps are right: molecule/lab/verify.yml checks the rendered NCCL settings after the idempotence run, which
skips the read.
"""

import re

from _runner import ansible_playbook, REPO

PLAYBOOK = REPO + "/tests/integration/host_network_facts_reread/playbook.yml"


def _cases(*args):
    proc = ansible_playbook("-i", "localhost,", PLAYBOOK, *args)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    return dict(re.findall(r"CASE (\w+)=(True|False)", out))


def test_facts_are_read_again_unless_this_runs_preflight_read_them_and_nothing_changed():
    assert _cases() == {
        "no_preflight": "False",  # a fact cache may hold them: read again
        "preflight_nothing_registered": "True",
        "preflight_all_skipped": "True",
        "preflight_unchanged": "True",
        "preflight_changed_gateways": "False",
        "preflight_changed_vfs": "False",
        "preflight_changed_qos": "False",
    }


def test_in_check_mode_this_runs_preflight_facts_stand_whatever_was_predicted():
    cases = _cases("--check")
    assert cases.pop("no_preflight") == "False"
    assert set(cases.values()) == {"True"}

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
""".ci/failure_digest.py on a molecule log shaped like the CI failure it was written for: ANSI colour,
molecule's gutter, a failure a rescue handled, one ignore_errors skipped, and the failure that stopped
the run printed last, in full."""

import importlib.util
import json
import os

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_spec = importlib.util.spec_from_file_location("failure_digest", os.path.join(REPO, ".ci", "failure_digest.py"))
digest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(digest)

LOG = """\
INFO     lab \u279c verify: Executing
  \u2502 PLAY [Sriov_vf four ways, and the VF-reset guard]
  \u2502 TASK [Request 4 VFs without the opt-in]
  \u2502 \x1b[0;31mfatal: [node2]: FAILED! => {"changed": false, "msg": "node2: num_vfs=4: PF eni12np1 has 8\x1b[0m
  \u2502   VFs; nothing was changed"}
  \u2502 TASK [Keep the refusal]
  \u2502 ok: [node2]
  \u2502 TASK [Probe that may fail]
  \u2502 fatal: [node1]: FAILED! => {"msg": "probe"}
  \u2502 ...ignoring
  \u2502 PLAY [Each rail's gateway and routes, on the real kernels]
  \u2502 TASK [Cross-node pod ping on both rails]
  \u2502 failed: [node1] (item=pod1 -> 10.255.1.5) => {"rc": 1, "msg": "non-zero return code",
  \u2502   "stdout": "3 packets transmitted, 0 received"}
  \u2502 PLAY RECAP
  \u2502 node1                      : ok=84   changed=8    unreachable=0    failed=1    skipped=24
  \u2502 node2                      : ok=67   changed=5    unreachable=0    failed=0    skipped=23
CRITICAL Ansible return code was 2
"""


def _lines():
    return [digest._clean(line) for line in LOG.splitlines()]


def test_failures_are_read_with_their_play_and_task_and_ignored_ones_are_left_out():
    found = digest.failures(_lines())
    assert [(play, task) for play, task, _message in found] == [
        ("PLAY [Sriov_vf four ways, and the VF-reset guard]", "TASK [Request 4 VFs without the opt-in]"),
        ("PLAY [Each rail's gateway and routes, on the real kernels]", "TASK [Cross-node pod ping on both rails]"),
    ]
    # colour and gutter gone, the wrapped message joined into one line
    assert found[0][2] == 'fatal: [node2]: FAILED! => {"changed": false, "msg": "node2: num_vfs=4: PF eni12np1 has 8 VFs; nothing was changed"}'
    assert found[1][2].endswith('"stdout": "3 packets transmitted, 0 received"}')


def test_the_last_failure_is_printed_last_in_full_then_the_failed_recap(tmp_path, capsys):
    log = tmp_path / "molecule-lab.log"
    log.write_text(LOG, encoding="utf-8")
    assert digest.main([str(log)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "==== 2 failed task result(s) in %s" % log
    assert out[1].startswith("  earlier (may be rescued on purpose): TASK [Request 4 VFs without the opt-in] fatal: [node2]")
    assert out[2] == ("==== last failure: PLAY [Each rail's gateway and routes, on the real kernels] / "
                      "TASK [Cross-node pod ping on both rails]")
    assert out[3].startswith("failed: [node1] (item=pod1 -> 10.255.1.5)") and "0 received" in out[3]
    assert out[-1] == "==== recap lines with failed tasks: node1 : ok=84 changed=8 unreachable=0 failed=1 skipped=24"


def test_a_log_without_a_failed_task_says_so(tmp_path, capsys):
    log = tmp_path / "molecule-x.log"
    log.write_text("CRITICAL 'molecule/x/molecule.yml' glob failed.\n", encoding="utf-8")
    assert digest.main([str(log)]) == 0
    assert "(no fatal/failed task result: the failure is outside a task; see the log)" in capsys.readouterr().out


def test_a_shell_task_result_is_cut_to_why_it_failed_not_its_script():
    stdout = '{"failed": true, "msg": "ip link set dev igb0 vf 6 mac 02:00:00:00:02:06: exit 2: RTNETLINK answers: Device busy"}'
    result = {"changed": True, "cmd": "set -e\npython3 pod_vf.py attach " + "x" * 400, "delta": "0:00:03", "rc": 1,
              "stderr": "", "stdout": stdout, "stdout_lines": [stdout]}
    message = "fatal: [node2]: FAILED! => " + json.dumps(result)
    assert digest.essence(message) == "fatal: [node2]: FAILED! => rc: 1; stdout: " + stdout
    # a long output keeps its tail, where the error is
    result["stdout"] = "y" * 1000 + stdout
    assert digest.essence("fatal: [n]: FAILED! => " + json.dumps(result)).endswith("[...]" + ("y" * 1000 + stdout)[-600:])
    # not JSON (a wrapped YAML result, a plain message): left as it is
    assert digest.essence("fatal: [n]: FAILED! => msg: x") == "fatal: [n]: FAILED! => msg: x"

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Task names of the roles and playbooks never read a task's own loop variable: Ansible templates a name before the
loop runs, so such a name printed "<< error 1 - '__host_network_gateway' is undefined >>" and "Encountered 1 template
error" on every run (the loop's label is where the item goes)."""

import glob
import os
import re

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = sorted(glob.glob(os.path.join(REPO, "roles", "*", "tasks", "*.yml")) + glob.glob(os.path.join(REPO, "playbooks", "*.yml")))
LOOPS = ("loop", "with_items", "with_list", "with_dict", "with_sequence", "with_subelements", "with_nested", "with_together")


def _tasks(data):
    if isinstance(data, list):
        for entry in data:
            if isinstance(entry, dict):
                yield entry
                for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
                    yield from _tasks(entry.get(key))


def test_the_files_are_found():
    assert os.path.join(REPO, "roles", "host_network", "tasks", "gateway.yml") in FILES


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, REPO))
def test_no_task_name_reads_its_own_loop_variable(path):
    with open(path) as f:
        data = yaml.safe_load(f)
    for task in _tasks(data):
        if not any(k in task for k in LOOPS):
            continue
        loop_var = (task.get("loop_control") or {}).get("loop_var", "item")
        name = "%s" % task.get("name", "")
        assert not re.search(r"\{\{[^}]*\b%s\b" % re.escape(loop_var), name), "%s: task %r templates its loop variable %s in its name" % (
            os.path.relpath(path, REPO), name, loop_var)

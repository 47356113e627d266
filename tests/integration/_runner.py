# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the integration tests run ansible-playbook: the venv's, against this checkout's built collection
(.build/collections) and ansible.cfg. Imported by the tests as ``_runner`` (tests/integration is on
sys.path while pytest collects it, as for ``from test_module_defaults import ...``)."""

import os
import shutil
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VENV_BIN = os.path.dirname(sys.executable)
SITE = os.path.join(REPO, "playbooks", "site.yml")

# Callback settings of the runs that read a task's result in the output: one JSON line per result.
JSON_RESULTS = {"ANSIBLE_CALLBACK_RESULT_FORMAT": "json", "ANSIBLE_CALLBACK_FORMAT_PRETTY": "false"}


def venv_path():
    """PATH with the venv's bin first (ansible-galaxy, the venv's python for the local connection)."""
    return VENV_BIN + os.pathsep + os.environ.get("PATH", "")


def collection_env():
    """The variables that make Ansible use this checkout's built collection and ansible.cfg (also an
    ansible-runner private data dir's env/envvars, with PATH)."""
    return {
        "ANSIBLE_COLLECTIONS_PATH": os.path.join(REPO, ".build", "collections"),
        "ANSIBLE_CONFIG": os.path.join(REPO, "ansible.cfg"),
    }


def ansible_playbook(*args, timeout=600, **env):
    """Run the venv's ansible-playbook with ``args``; ``env``: variables set over this process's
    environment and ``collection_env()``. Returns the CompletedProcess (text, stdout and stderr captured)."""
    env = dict(os.environ, **collection_env(), **env)
    cmd = [os.path.join(VENV_BIN, "ansible-playbook"), *args]
    return subprocess.run(cmd, check=False, env=env, capture_output=True, text=True, timeout=timeout)  # noqa: S603


def site(inventory, *args, mode="render", render_dir=None, timeout=300):
    """site.yml on ``inventory`` with roce_k8s_mode=``mode`` and roce_render_dir=``render_dir`` (default:
    render-out beside the inventory), uncoloured. Returns (returncode, stdout + stderr)."""
    if render_dir is None:
        render_dir = os.path.join(os.path.dirname(str(inventory)), "render-out")
    proc = ansible_playbook(
        "-i", str(inventory), SITE, "-e", "roce_k8s_mode=%s" % mode, "-e", "roce_render_dir=%s" % render_dir, *args,
        timeout=timeout, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PATH=venv_path(),
    )
    return proc.returncode, proc.stdout + proc.stderr


def fixture_playbook(name, fixture_root, python, *extravars):
    """tests/integration/<name>/playbook.yml on localhost over a sysfs fixture tree (fixture_root), its
    modules run by ``python``; each of ``extravars`` is one more ``-e``. Returns (returncode, stdout + stderr)."""
    args = ["-i", "localhost,", os.path.join(REPO, "tests", "integration", name, "playbook.yml"),
            "-e", "fixture_root=%s" % fixture_root, "-e", "ansible_python_interpreter=%s" % python]
    for e in extravars:
        args += ["-e", e]
    proc = ansible_playbook(*args, **JSON_RESULTS)
    return proc.returncode, proc.stdout + proc.stderr


def copy_inventory(name, dest):
    """A copy of inventories/<name> at ``dest`` (a path), for a test to change; returns ``dest``."""
    shutil.copytree(os.path.join(REPO, "inventories", name), dest)
    return dest


def append(path, text):
    with open(path, "a") as f:
        f.write(text)

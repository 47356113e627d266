# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""README.md's quick start, typed as it stands: its fenced shell blocks, read from the README, run in one shell.

Each fenced block of the "Quick start" section carries a marker on the line above it:
``<!-- quickstart-test: run -->`` (run here, as written) or ``<!-- quickstart-test: skip (why) -->`` (needs Galaxy,
a cluster or reachable nodes). The run blocks go, in order, into one bash script (one shell, as a user types them;
``set -e``: the first failing command fails the test), in a temporary directory with HOME there (so ``~`` and the
default collections path are new), no ANSIBLE_* variable, no venv active and the dev venv off PATH: the quick start
creates its own venv and installs ansible-core, the collection and the kubernetes client from PyPI (the machine's pip
cache and pip configuration are kept, so a second run downloads nothing).

What the test provides, as the README says the user brings it: the collection's tarball (the session's
``ansible-galaxy collection build``) and ``collections/kubernetes-core-*.tar.gz``. The latter stands in for
``ansible-galaxy collection download kubernetes.core`` (Galaxy is not reachable here): it is built with
``ansible-galaxy collection build`` from the kubernetes.core that the dev venv's ``ansible`` package bundles.
Nothing in the README's text is substituted.
"""

import collections
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from _runner import REPO, VENV_BIN
from test_render_only import TREE

MARKER = re.compile(r"^<!-- quickstart-test: (run|skip \((?P<why>[^)]+)\)) -->$")
FENCE = re.compile(r"^```(\w*)$")
Block = collections.namedtuple("Block", "action why language code")
WHERE = "quickstart-test: ansible-playbook is"  # the probe appended to the script prints this, then the path


def quickstart_blocks(readme):
    """[Block(action, why, language, code)] for each fenced block of the README's Quick start section, in order."""
    text = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        marker = MARKER.match(lines[i - 1]) if i else None
        assert marker, "README Quick start: the block at %r has no '<!-- quickstart-test: run|skip (why) -->' line above it" % lines[i + 1]
        end = lines.index("```", i + 1)
        blocks.append(Block(marker.group(1).split()[0], marker.group("why"), fence.group(1), "\n".join(lines[i + 1:end])))
        i = end + 1
    return blocks


def _readme():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        return f.read()


def test_quickstart_blocks_are_marked_and_cluster_steps_skipped():
    blocks = quickstart_blocks(_readme())
    assert [b for b in blocks if b.language not in ("console", "shell", "bash", "sh")] == [], "a Quick start block that is not shell"
    run = "\n".join(b.code for b in blocks if b.action == "run")
    assert "gpufabric.roce.render" in run and "cp -r" in run and "pip install" in run, run
    # site.yml (check mode too) needs the cluster and the nodes: those steps are marked, not run.
    for b in blocks:
        if "gpufabric.roce.site" in b.code:
            assert b.action == "skip" and "cluster" in b.why, b.code


def _bundled_kubernetes_core():
    for entry in sys.path:
        path = os.path.join(entry, "ansible_collections", "kubernetes", "core")
        if os.path.isfile(os.path.join(path, "MANIFEST.json")):
            return path
    pytest.fail("kubernetes.core is not in the dev venv (the ansible package of requirements.txt bundles it)")
    return None


def _kubernetes_core_tarball(dest, tmp):
    """What `ansible-galaxy collection download kubernetes.core` writes to collections/, from the bundled copy."""
    src = _bundled_kubernetes_core()
    copy = tmp / "kubernetes-core-src"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__", "MANIFEST.json", "FILES.json"))
    with open(os.path.join(src, "MANIFEST.json"), encoding="utf-8") as f:
        info = json.load(f)["collection_info"]
    (copy / "galaxy.yml").write_text(yaml.safe_dump({k: v for k, v in info.items() if v not in (None, "", [], {})}))
    dest.mkdir()
    env = dict(os.environ, ANSIBLE_GALAXY_SERVER_LIST="")
    env.pop("ANSIBLE_CONFIG", None)
    subprocess.run([os.path.join(VENV_BIN, "ansible-galaxy"), "collection", "build", str(copy), "--output-path", str(dest)],
                   cwd=str(tmp), env=env, check=True, capture_output=True, timeout=600)


def _user_env(home):
    """A new user's shell: HOME in the test's directory, no Ansible settings, no venv, the dev venv off PATH."""
    real_home = os.path.expanduser("~")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANSIBLE_", "GPUFABRIC_", "MOLECULE_", "PYTEST_")) and k not in ("VIRTUAL_ENV", "PYTHONPATH", "KUBECONFIG")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and os.path.abspath(p) != os.path.abspath(VENV_BIN))
    env["HOME"] = str(home)
    # The machine's pip cache and settings (a mirror, certificates) are not part of the quick start; keep them.
    env.setdefault("PIP_CACHE_DIR", os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.join(real_home, ".cache")), "pip"))
    user_pip_conf = os.path.join(real_home, ".config", "pip", "pip.conf")
    if "PIP_CONFIG_FILE" not in env and os.path.isfile(user_pip_conf):
        env["PIP_CONFIG_FILE"] = user_pip_conf
    env.update(ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")  # plain text to read; no effect on what runs
    return env


def test_quickstart_typed_literally(tmp_path, collection_tarball):
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    shutil.copy(collection_tarball, work / collection_tarball.name)
    _kubernetes_core_tarball(work / "collections", tmp_path)
    run = [b.code for b in quickstart_blocks(_readme()) if b.action == "run"]
    script = "set -eo pipefail\nPS4='+ [${SECONDS}s] '\nset -x\n" + "\n".join(run) + '\necho "%s $(command -v ansible-playbook)"\n' % WHERE
    (tmp_path / "quickstart.sh").write_text(script)
    env = _user_env(home)
    assert shutil.which("ansible-playbook", path=env["PATH"]) is None, "ansible-playbook is on PATH before the quick start"

    proc = subprocess.run(["bash", str(tmp_path / "quickstart.sh")], cwd=str(work), env=env, capture_output=True, text=True,
                          timeout=1800, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, "the quick start failed (set -x shows the last command):\n%s\n%s" % (proc.stdout[-6000:], proc.stderr[-6000:])

    # The quick start's own venv and collections were used, nothing of this machine's.
    used = re.search(r"^%s (\S+)$" % re.escape(WHERE), proc.stdout, re.M).group(1)
    assert used.startswith(str(home) + os.sep), used
    installed = home / ".ansible" / "collections" / "ansible_collections"
    assert (installed / "gpufabric" / "roce" / "MANIFEST.json").is_file()
    assert (installed / "kubernetes" / "core" / "MANIFEST.json").is_file()
    assert (work / "inventories" / "mycluster" / "hosts.yml").is_file()

    # The day-one render ran on the controller alone and wrote the whole tree into render-out/ where it ran.
    recap = text[text.rindex("PLAY RECAP"):]
    assert re.findall(r"^(\S+)\s+:", recap, re.M) == ["localhost"], recap
    assert "failed=0" in recap and "UNREACHABLE" not in text
    out = work / "render-out"
    for d, files in TREE.items():
        assert sorted(f for f in os.listdir(out / d) if os.path.isfile(out / d / f)) == files, d
    policies = list(yaml.safe_load_all((out / "sriov-networks" / "sriov-network-node-policies.yaml").read_text()))
    assert sorted(p["spec"]["nodeSelector"]["kubernetes.io/hostname"] for p in policies if p) == ["node1", "node2"]
    assert "[WARNING]" not in text and "[DEPRECATION WARNING]" not in text, text[-6000:]

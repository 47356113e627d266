# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures shared by the integration tests; the helpers that run ansible-playbook are in _runner.py."""

import os
import subprocess

import pytest
from _runner import REPO, VENV_BIN, copy_inventory


@pytest.fixture
def inv(tmp_path):
    """A copy of inventories/example for the test to change (tmp_path/inv)."""
    return copy_inventory("example", tmp_path / "inv")


@pytest.fixture(scope="session")
def collection_tarball(tmp_path_factory):
    """The collection as users get it: ``ansible-galaxy collection build`` of this checkout, once per session."""
    out = tmp_path_factory.mktemp("build")
    env = dict(os.environ, ANSIBLE_GALAXY_SERVER_LIST="", ANSIBLE_NOCOLOR="1")
    env.pop("ANSIBLE_CONFIG", None)
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-galaxy"), "collection", "build", REPO, "--output-path", str(out)],
                          cwd=str(out), env=env, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    tarballs = sorted(out.glob("gpufabric-roce-*.tar.gz"))
    assert len(tarballs) == 1, tarballs
    return tarballs[0]

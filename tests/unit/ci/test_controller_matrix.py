# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
""".ci/controller_matrix.py's inputs, without building anything: the Debian mirror read from apt's sources, the cells
and their requirements, what of the machine's pip configuration reaches pip inside the root filesystem, and the venv
cache key following the requirements."""

import importlib.util
import os

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_spec = importlib.util.spec_from_file_location("controller_matrix", os.path.join(REPO, ".ci", "controller_matrix.py"))
matrix = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(matrix)


def test_the_mirror_is_the_one_apt_uses_for_the_machines_own_suite(tmp_path, monkeypatch):
    monkeypatch.delenv("CONTROLLER_MIRROR", raising=False)
    monkeypatch.setattr(matrix, "APT_DIR", str(tmp_path))
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text("deb https://vendor.example/apt cloud-sdk-bookworm main\n")
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n\n"
        "Types: deb\n# a comment: with a colon\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n")
    assert matrix.apt_mirror("bookworm") == "http://mirror.example/debian"
    # One-line entries too, and CONTROLLER_MIRROR wins.
    (tmp_path / "sources.list.d" / "debian.sources").unlink()
    (tmp_path / "sources.list").write_text("deb [arch=amd64] http://old.example/debian bookworm main\n")
    assert matrix.apt_mirror("bookworm") == "http://old.example/debian"
    monkeypatch.setenv("CONTROLLER_MIRROR", "http://set.example/debian")
    assert matrix.apt_mirror("bookworm") == "http://set.example/debian"


def test_no_source_for_the_suite_stops_with_the_variable_to_set(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("CONTROLLER_MIRROR", raising=False)
    monkeypatch.setattr(matrix, "APT_DIR", str(tmp_path))
    with pytest.raises(SystemExit):
        matrix.apt_mirror("bookworm")
    assert "set CONTROLLER_MIRROR" in capsys.readouterr().out


def test_every_cell_pins_one_ansible_core_and_takes_the_common_test_tools():
    cells = matrix.cells()
    assert {"2.16", "2.21", "2.22"} <= set(cells) and cells.index("2.16") < cells.index("2.21") < cells.index("2.22"), cells
    # The floor runs on this machine's Python (2.16 does not run on 3.13), the others in the root filesystem.
    assert matrix.host_python("2.16") == "/usr/bin/python3" and matrix.host_python("2.22") is None
    for cell in cells:
        files = matrix.requirement_files(os.path.join(matrix.CELLS_DIR, "ansible-core-%s.txt" % cell))
        assert [os.path.basename(f) for f in files] == ["ansible-core-%s.txt" % cell, "requirements-common.txt"]
        with open(files[0]) as f:
            pins = [line.strip() for line in f if line.startswith("ansible-core")]
        assert len(pins) == 1 and pins[0].startswith("ansible-core==%s." % cell), pins


def test_pip_inside_gets_the_machines_config_files_and_what_they_name(tmp_path, monkeypatch):
    bundle = tmp_path / "ca.crt"
    bundle.write_text("")
    index = tmp_path / "pypi"
    (index / "simple").mkdir(parents=True)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\ncert = %s\nextra-index-url = file://%s/simple file:///nowhere/simple\n# find-links = /commented\n" % (bundle, index))
    monkeypatch.setattr(matrix, "PIP_CONFIGS", (str(conf), str(tmp_path / "absent.conf")))
    for name in [k for k in os.environ if k.startswith("PIP_") or k in matrix.PIP_ENV]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(bundle))
    paths, env = matrix.pip_binds()
    assert env == {"PIP_FIND_LINKS": str(wheels), "REQUESTS_CA_BUNDLE": str(bundle)}
    # The config file, the bundle it names, the local index (with its files/ beside simple/), the wheel directory; no
    # path that does not exist here.
    assert [p for p in paths if p.startswith(str(tmp_path))] == [str(conf), str(bundle), str(index), str(wheels)]
    assert not [p for p in paths if "nowhere" in p or "commented" in p]


def test_the_venv_is_made_again_when_its_requirements_change(tmp_path, monkeypatch):
    monkeypatch.setattr(matrix, "CELLS_DIR", str(tmp_path))
    monkeypatch.setattr(matrix, "COLLECTIONS", ())
    common = tmp_path / "requirements-common.txt"
    common.write_text("pytest==9.2.0\n")
    (tmp_path / "ansible-core-9.9.txt").write_text("-r requirements-common.txt\nansible-core==9.9.0\n")
    key = matrix.venv_key("/x/rootfs-abc", "9.9")
    assert matrix.venv_key("/x/rootfs-abc", "9.9") == key
    common.write_text("pytest==9.2.1\n")
    assert matrix.venv_key("/x/rootfs-abc", "9.9") != key
    # A new root filesystem means new venvs.
    assert matrix.venv_key("/x/rootfs-def", "9.9") != matrix.venv_key("/x/rootfs-abc", "9.9")

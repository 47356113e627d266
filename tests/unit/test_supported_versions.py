# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""README.md's supported-versions table says what is tested, and cannot drift from it: the floor is meta/runtime.yml's
requires_ansible, `make test`'s controller is requirements.txt's pin, `make matrix`'s are the pins of the cells
(.ci/controllers/ansible-core-<cell>.txt) at or above the floor, and the execution environment's is one of those."""

import glob
import os
import re

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VERSION = r"\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?"
CONTROLLER = re.compile(r"ansible-core (%s(?: and %s)*) on Python (\d+\.\d+)" % (VERSION, VERSION))


def _read(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read()


def _key(version):
    """A version as a sortable tuple: 2.22.0rc1 < 2.22.0."""
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)(?:(a|b|rc)(\d+))?$", version)
    assert m, version
    pre = {"a": 0, "b": 1, "rc": 2}.get(m.group(4), 3)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), pre, int(m.group(5) or 0))


def _pin(text, name="ansible-core"):
    pins = re.findall(r"^%s==(\S+)" % re.escape(name), text, re.MULTILINE)
    assert len(pins) == 1, (name, pins)
    return pins[0]


def _section():
    text = _read("README.md")
    m = re.search(r"^## Supported versions\n(.*?)(?=^## )", text, re.MULTILINE | re.DOTALL)
    assert m, "README.md has no section 'Supported versions'"
    return m.group(1)


def _rows():
    """{(where, the command that tests it): (versions, python, the row's text)} of the table's controller rows."""
    rows = {}
    for line in _section().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or set(cells[0]) <= set("-") or cells[0] == "where":
            continue
        m = CONTROLLER.search(cells[1])
        if m:
            rows[(cells[0], re.match(r"`([^`]+)`", cells[2]).group(1))] = (m.group(1).split(" and "), m.group(2), cells[1])
    return rows


def _floor():
    runtime = yaml.safe_load(_read("meta/runtime.yml"))
    m = re.match(r"^>=(%s)$" % VERSION, runtime["requires_ansible"])
    assert m, runtime["requires_ansible"]
    return m.group(1)


def _cells():
    """{cell: (its ansible-core pin, its requirements file's text)}."""
    found = {}
    for path in glob.glob(os.path.join(REPO, ".ci", "controllers", "ansible-core-*.txt")):
        text = _read(path)
        found[os.path.basename(path)[len("ansible-core-"):-len(".txt")]] = (_pin(text), text)
    return found


def test_the_floor_is_requires_ansible():
    assert "`meta/runtime.yml` requires ansible-core %s or later" % _floor() in _section()
    floor = _key(_floor())
    below = [v for versions, _py, _text in _rows().values() for v in versions if _key(v) < floor]
    assert below == [], "the table lists controllers below requires_ansible: %s" % below


def test_make_tests_controller_is_the_pinned_one():
    versions, _python, _text = _rows()[("controller", "make test")]
    assert versions == [_pin(_read("requirements.txt"))]


def test_make_matrixs_controllers_are_its_cells_at_or_above_the_floor():
    versions, python, _text = _rows()[("controller", "make matrix")]
    floor = _key(_floor())
    cells = {cell: (pin, text) for cell, (pin, text) in _cells().items() if _key(pin) >= floor}
    assert sorted(versions, key=_key) == sorted((pin for pin, _text in cells.values()), key=_key)
    for cell, (_version, text) in cells.items():
        # A cell's header says the Python it runs on (the matrix's Debian 13 root filesystem, or this machine's).
        assert "Python %s" % python in text.split("\n-r")[0], "cell %s: its header does not say Python %s" % (cell, python)


def test_the_execution_environment_runs_a_tested_controller():
    versions, python, text = _rows()[("execution environment", "ansible-builder create")]
    ee = yaml.safe_load(_read("execution-environment.yml"))
    deps = ee["dependencies"]
    assert [_pin(deps["ansible_core"]["package_pip"])] == versions
    assert deps["python_interpreter"]["package_system"] == "python%s" % python
    assert deps["python_interpreter"]["python_path"] == "/usr/bin/python%s" % python
    matrix_versions, matrix_python, _text = _rows()[("controller", "make matrix")]
    assert versions[0] in matrix_versions and python == matrix_python, "the EE's controller is not one make matrix tests"
    # The base image as the table names it: registry.fedoraproject.org/fedora:43 is "Fedora 43".
    distro, release = ee["images"]["base_image"]["name"].rsplit("/", 1)[-1].split(":")
    assert "(%s %s)" % (distro.capitalize(), release) in text
    # docs/awx.md's table of what the image holds says the same.
    assert "ansible-core %s, ansible-runner %s, Python %s on %s %s" % (
        versions[0], _pin(deps["ansible_runner"]["package_pip"], "ansible-runner"), python, distro.capitalize(), release) in _read("docs/awx.md")

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared roce_* model is in an argument spec (issue 42, item 10): the preflight role's entry point `inventory` lists
the variables of docs/inventory.md's "Fabric variables" table, so ansible-doc and the role README show them. It is
documentation: no task file runs it, so Ansible never validates the inventory against it."""

import pathlib
import re

import yaml

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import ROCE_DEFAULTS

REPO = pathlib.Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "preflight"


def _entry():
    return yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["inventory"]


def _documented():
    text = (REPO / "docs" / "inventory.md").read_text()
    table = text.split("## Fabric variables", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(roce_[a-z0-9_]+)` \|", table, re.M)


def test_the_inventory_entry_point_lists_the_fabric_variables_of_docs_inventory_md():
    documented = _documented()
    assert len(documented) > 20
    assert sorted(_entry()["options"]) == sorted(documented)


def test_it_is_never_run_and_says_so():
    assert not (ROLE / "tasks" / "inventory.yml").exists()
    assert "never run" in _entry()["short_description"]
    # The role's own entry points still validate only their own options.
    main = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert not [o for o in main if o.startswith("roce_")]


def test_the_defaults_it_shows_are_the_collections_defaults():
    options = _entry()["options"]
    for name, value in ROCE_DEFAULTS.items():
        if name in options:
            assert options[name].get("default") == value, name


def test_the_role_readme_shows_them():
    readme = (ROLE / "README.md").read_text()
    table = readme.split("### Entry point `inventory`", 1)[1]
    assert all("\n| `%s` |" % name in table for name in _documented())

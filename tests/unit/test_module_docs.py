# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ansible-doc says about the modules (issue 42, item 10): the controller-side helpers the roles and playbooks call are
marked internal in the one line `ansible-doc -l` shows, and the node modules name what they need on the node."""

import ast
import pathlib

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
MODULES = sorted(p.stem for p in (REPO / "plugins" / "modules").glob("*.py") if not p.stem.startswith("_"))
# The modules that run on the nodes: the collection's action group (meta/runtime.yml), for users' own plays too.
NODE_MODULES = set(yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())["action_groups"]["roce"])


def documentation(module):
    tree = ast.parse((REPO / "plugins" / "modules" / ("%s.py" % module)).read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["DOCUMENTATION"]:
            return yaml.safe_load(node.value.value)
    raise AssertionError("%s has no DOCUMENTATION" % module)


# The node modules README.md offers for users' own plays.
PUBLIC = ("rdma_facts", "sriov_vf", "vlan_gateway", "roce_qos", "perftest")


@pytest.mark.parametrize("module", MODULES)
def test_a_controller_side_helper_says_it_is_internal_and_a_public_node_module_does_not(module):
    short = documentation(module)["short_description"]
    if module in PUBLIC:
        assert module in NODE_MODULES and not short.startswith("Internal"), short
    elif module not in NODE_MODULES:
        assert short.startswith("Internal ("), "%s: %s" % (module, short)


@pytest.mark.parametrize("module", PUBLIC)
def test_the_node_modules_name_their_requirements(module):
    requirements = documentation(module).get("requirements") or []
    assert requirements and all(isinstance(r, str) and r.strip() for r in requirements), (module, requirements)


def test_perftest_names_perftest_and_timeout():
    text = " ".join(documentation("perftest")["requirements"])
    assert "perftest" in text and "timeout" in text and "pyroute2" in text

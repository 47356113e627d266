"""module_utils is grouped by concern, and imports flow one way: the code shipped to the nodes (_host, and the perftest
side of _verify) never pulls in the controller's fabric model or the Kubernetes renderers, so a module's payload holds
only what runs there (docs/development.md, "Layout")."""

import ast
import pathlib

import pytest

PLUGINS = pathlib.Path(__file__).resolve().parents[4] / "plugins"
MODULE_UTILS = PLUGINS / "module_utils"
PREFIX = "ansible_collections.gpufabric.roce.plugins."

# A package may import from these packages (itself included).
ALLOWED = {
    "_common": {"_common"},
    "_host": {"_common", "_host"},
    "_verify": {"_common", "_verify"},
    "_fabric": {"_common", "_fabric"},
    "_k8s": {"_common", "_fabric", "_k8s"},
}
# Modules that run on the nodes (the rest run on the controller: delegate_to localhost or an action plugin).
NODE_MODULES = ("sriov_vf", "vlan_gateway", "roce_qos", "rdma_facts", "perftest", "perftest_round")
NODE_PACKAGES = {"_common", "_host", "_verify"}


def _collection_imports(path):
    """The collection's modules ``path`` imports, as dotted names below ``plugins.``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
            found.append(node.module[len(PREFIX):])
        elif isinstance(node, ast.Import):
            found.extend(a.name[len(PREFIX):] for a in node.names if a.name.startswith(PREFIX))
    return found


def _package(dotted):
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "module_utils" else None


def test_the_top_of_module_utils_holds_only_the_five_packages():
    assert sorted(p.name for p in MODULE_UTILS.iterdir() if p.name != "__pycache__") == sorted(ALLOWED)


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_package_imports_only_the_layers_below_it(package):
    wrong = []
    for path in sorted((MODULE_UTILS / package).glob("*.py")):
        for dotted in _collection_imports(path):
            if not dotted.startswith("module_utils.") or _package(dotted) not in ALLOWED[package]:
                wrong.append("%s imports %s" % (path.relative_to(PLUGINS), dotted))
    assert wrong == []


@pytest.mark.parametrize("module", NODE_MODULES)
def test_a_node_module_ships_only_node_code(module):
    imports = _collection_imports(PLUGINS / "modules" / (module + ".py"))
    assert imports, "%s imports nothing of the collection: is it still a node module?" % module
    assert [d for d in imports if _package(d) not in NODE_PACKAGES] == []

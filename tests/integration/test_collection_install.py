# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The user's path: build the collection, install the tarball into a clean directory, use it from there.

Nothing here reads the checkout after the build: ANSIBLE_COLLECTIONS_PATH is only the install
directory (plus the collections the ansible package bundles in the venv, kubernetes.core among
them), the working directory is a temporary one (so the checkout's ansible.cfg is not read), and
Galaxy is not contacted (--no-deps; no network here).
"""

import json
import os
import pathlib
import posixpath
import re
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml

VENV_BIN = os.path.dirname(sys.executable)

# Dev-only paths that must not ship (galaxy.yml build_ignore), and what users need that must.
EXCLUDED = (
    "lab/", "benchmarks/", "Makefile", "requirements-dev.txt", "requirements.txt", ".ci/", "ansible.cfg",
    "inventories/lab/", "inventories/lab-multirail/", "molecule/lab/", "molecule/k8s/",
    "tests/integration/", "tests/sanity/", "tests/k8s/", "changelogs/fragments/", ".venv/", ".build/",
    # the reboot lab and the tests of the CI tooling (.ci/ is not shipped)
    "molecule/lab_reboot/", "inventories/lab_reboot/", "tests/unit/ci/",
)
REQUIRED = (
    "galaxy.yml", "README.md", "LICENSE", "meta/runtime.yml", "meta/execution-environment.yml", "meta/ee-requirements.txt",
    "meta/ee-bindep.txt", "playbooks/site.yml", "playbooks/teardown.yml", "inventories/example/hosts.yml", "molecule/k8s_render/molecule.yml",
    "docs/awx.md", "docs/awx-project/playbooks/site.yml", "docs/awx-project/collections/requirements.yml",
    "execution-environment.yml", "tests/unit/plugins/module_utils/k8s_crd_schema.py", "tests/crds/fetch_upstream_crds.py",
)


def _env(collections):
    env = dict(os.environ, PATH=VENV_BIN + os.pathsep + os.environ.get("PATH", ""), ANSIBLE_COLLECTIONS_PATH=str(collections),
               ANSIBLE_GALAXY_SERVER_LIST="", ANSIBLE_NOCOLOR="1")
    env.pop("ANSIBLE_CONFIG", None)
    return env


def _run(cmd, cwd, env, timeout=900):
    proc = subprocess.run(cmd, cwd=str(cwd), env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, "%s: rc %d\n%s\n%s" % (" ".join(cmd), proc.returncode, proc.stdout[-6000:], proc.stderr[-4000:])
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory, collection_tarball):
    tmp = tmp_path_factory.mktemp("install")
    collections = tmp / "collections"
    env = _env(collections)
    _run([os.path.join(VENV_BIN, "ansible-galaxy"), "collection", "install", "--no-deps", "-p", str(collections), str(collection_tarball)], tmp, env)
    root = collections / "ansible_collections" / "gpufabric" / "roce"
    assert (root / "MANIFEST.json").is_file()
    return {"tmp": tmp, "tarball": collection_tarball, "root": root, "env": env}


def test_tarball_ships_what_users_need_and_nothing_dev_only(installed):
    with tarfile.open(installed["tarball"]) as tar:
        names = [n[2:] if n.startswith("./") else n for n in tar.getnames()]
    shipped = set(names) | {n + "/" for n in names}
    leaked = sorted(n for n in shipped for ex in EXCLUDED if n == ex or n.startswith(ex))
    assert leaked == [], "dev-only paths in the tarball: %s" % leaked[:20]
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    missing = [r for r in REQUIRED if r not in shipped and r != "galaxy.yml"]
    assert missing == [], missing
    manifest = json.loads(tar_member(installed["tarball"], "MANIFEST.json"))
    assert manifest["collection_info"]["dependencies"] == {"kubernetes.core": ">=5.0.0"}


def _shipped(tarball):
    with tarfile.open(tarball) as tar:
        names = {n[2:] if n.startswith("./") else n for n in tar.getnames()}
    return names | {posixpath.dirname(n) for n in names}


def test_shipped_readmes_link_only_to_shipped_files(installed):
    # The README is the Galaxy page: a relative link to a file the tarball leaves out is a dead link there.
    names = _shipped(installed["tarball"])
    dead = []
    for doc in sorted(n for n in names if n.endswith(".md")):
        text = tar_member(installed["tarball"], doc)
        for link in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z][a-z0-9+.-]*:", link) or link.startswith("#"):
                continue
            target = posixpath.normpath(posixpath.join(posixpath.dirname(doc), link.split("#")[0]))
            if target not in names:
                dead.append("%s -> %s" % (doc, link))
    assert dead == [], dead
    assert "](docs/awx.md)" in tar_member(installed["tarball"], "README.md")  # relative links exist, and were checked


def test_changelog_is_generated_from_the_fragments(installed):
    text = tar_member(installed["tarball"], "CHANGELOG.rst")
    assert "Pending entries live in" not in text
    assert "Minor Changes" in text and "Bugfixes" in text
    assert "changelogs/changelog.yaml" in _shipped(installed["tarball"])


def tar_member(path, name):
    with tarfile.open(path) as tar:
        return tar.extractfile(name).read().decode()


def _ansible_doc_json(installed, plugin_type, names):
    proc = _run([os.path.join(VENV_BIN, "ansible-doc"), "-t", plugin_type, "--json", *names], installed["tmp"], installed["env"])
    assert "[ERROR]" not in proc.stderr and "[WARNING]" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


def test_ansible_doc_for_every_module(installed):
    modules = sorted(p.stem for p in (installed["root"] / "plugins" / "modules").glob("*.py") if not p.name.startswith("_"))
    assert {"rdma_facts", "sriov_vf", "vlan_gateway", "perftest"} <= set(modules)
    docs = _ansible_doc_json(installed, "module", ["gpufabric.roce." + m for m in modules])
    for m in modules:
        doc = docs["gpufabric.roce." + m]["doc"]
        assert doc["module"] == m and doc["short_description"] and doc.get("options") is not None, m
        assert docs["gpufabric.roce." + m]["examples"], "%s has no EXAMPLES" % m


def test_ansible_doc_for_every_filter(installed):
    listing = _run([os.path.join(VENV_BIN, "ansible-doc"), "-t", "filter", "-l", "gpufabric.roce", "--json"], installed["tmp"], installed["env"])
    filters = json.loads(listing.stdout)
    assert len(filters) >= 20, filters
    undocumented = sorted(name for name, desc in filters.items() if "UNDOCUMENTED" in str(desc))
    assert undocumented == [], undocumented
    docs = _ansible_doc_json(installed, "filter", sorted(filters))
    for name in filters:
        doc = docs[name]["doc"]
        assert doc["short_description"] and "_input" in doc["options"], name
        assert docs[name]["examples"] and docs[name]["return"], name


def test_ansible_doc_for_every_role(installed):
    roles = sorted(p.name for p in (installed["root"] / "roles").iterdir() if (p / "meta" / "argument_specs.yml").is_file())
    assert {"preflight", "host_network", "network_operator", "sriov_networks", "rdma_verify"} <= set(roles)
    docs = _ansible_doc_json(installed, "role", ["gpufabric.roce." + r for r in roles])
    for r in roles:
        assert docs["gpufabric.roce." + r]["entry_points"]["main"]["options"], r


# What antsibull-docs lint-collection-docs --plugin-docs reads: the plugins and their docs, the roles' argument specs, the
# collection's runtime metadata and changelog.
LINTED = re.compile(r"^(plugins/.*|roles/[^/]+/meta/argument_specs\.yml|meta/runtime\.yml|changelogs/changelog\.yaml)$")


def test_the_installed_copy_has_the_files_make_lint_checks_byte_for_byte(installed):
    """make lint runs antsibull-docs lint-collection-docs --plugin-docs on the checkout (a stage before this one); the
    installed copy carries every file it reads unchanged, so that lint holds for what users install too."""
    repo = pathlib.Path(__file__).resolve().parents[2]
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=str(repo), capture_output=True, check=True).stdout.decode().split("\0")  # noqa: S607
    linted = sorted(f for f in tracked if LINTED.match(f) and (repo / f).is_file())
    assert len([f for f in linted if f.startswith("plugins/modules/")]) >= 4 and "changelogs/changelog.yaml" in linted, linted
    differ = [f for f in linted if not (installed["root"] / f).is_file() or (installed["root"] / f).read_bytes() != (repo / f).read_bytes()]
    assert differ == [], differ


def test_site_playbook_renders_from_the_installed_copy(installed):
    render = installed["tmp"] / "render"
    inventory = installed["root"] / "inventories" / "example"
    before = set(installed["root"].rglob("*"))
    # The example inventory's nodes do not exist: run the phases that work without them, on the controller.
    _run([os.path.join(VENV_BIN, "ansible-playbook"), "gpufabric.roce.site", "-i", str(inventory), "--tags", "operator,sriov",
          "-e", "roce_k8s_mode=render", "-e", "roce_render_dir=%s" % render], installed["tmp"], installed["env"])
    docs = []
    for path in render.rglob("*.y*ml"):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
    kinds = {d.get("kind") for d in docs}
    assert {"NicClusterPolicy", "SriovNetworkNodePolicy", "SriovNetwork"} <= kinds, kinds
    nodes = sorted(d["spec"]["nodeSelector"]["kubernetes.io/hostname"] for d in docs if d.get("kind") == "SriovNetworkNodePolicy")
    assert nodes == ["node1", "node2"]
    assert any("values" in p.name for p in render.rglob("*")), "no Helm values written"
    # Nothing was written into the installed collection.
    assert set(installed["root"].rglob("*")) - before == set()


def test_teardown_playbook_runs_from_the_installed_copy(installed):
    """ansible-playbook gpufabric.roce.teardown resolves like gpufabric.roce.site; in render mode its cluster half says so."""
    inventory = installed["root"] / "inventories" / "example"
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "gpufabric.roce.teardown", "-i", str(inventory), "--tags", "k8s",
                           "-e", "roce_k8s_mode=render", "-e", "roce_render_dir=%s" % (installed["tmp"] / "render")],
                          cwd=str(installed["tmp"]), env=installed["env"], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "roce_k8s_mode=render: the teardown does not talk to the cluster" in " ".join(proc.stdout.split())


def test_awx_project_wrapper_runs_the_same_playbook(installed):
    """docs/awx-project as AWX would check it out: its playbooks/site.yml imports gpufabric.roce.site."""
    project = installed["tmp"] / "project"
    shutil.copytree(installed["root"] / "docs" / "awx-project", project)
    shutil.copytree(installed["root"] / "inventories" / "example", project / "inventories" / "example")
    reqs = yaml.safe_load((project / "collections" / "requirements.yml").read_text())
    assert [c["name"] for c in reqs["collections"]] == ["gpufabric.roce"]

    # The four playbooks' tasks in one ansible-playbook run: a "playbook: <name>" line heads each one's listing.
    playbooks = [str(project / "playbooks" / "site.yml"), "gpufabric.roce.site", str(project / "playbooks" / "render.yml"), "gpufabric.roce.render"]
    out = _run([os.path.join(VENV_BIN, "ansible-playbook"), *playbooks, "-i", str(project / "inventories" / "example"), "--list-tasks"],
               project, installed["env"]).stdout
    listed = re.split(r"^playbook: .*$", out, flags=re.M)[1:]
    assert len(listed) == len(playbooks), out[-3000:]
    # A play's own tags are listed from a set, in hash order (a play tagged [host_network, sriov] prints either order).
    wrapped, site, rendered, render = ([re.sub(r"TAGS: \[([^]]*)\]", lambda m: "TAGS: [%s]" % ",".join(sorted(t.strip() for t in m.group(1).split(","))),
                                               line) for line in text.strip("\n").splitlines()] for text in listed)
    assert any("Phase 4" in line for line in wrapped), wrapped
    assert wrapped == site
    assert any("no node is touched" in line for line in rendered), rendered
    assert rendered == render

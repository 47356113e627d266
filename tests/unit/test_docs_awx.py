"""docs/awx.md names only variables, tags and files that exist, so it cannot drift from the roles.

A variable is real when it is an option of a role's meta/argument_specs.yml (``a.b`` is sub-option ``b``
of ``a``) or one of playbooks/site.yml's rollout knobs (extra vars read by name there or in the task files it imports,
playbooks/tasks/).
"""

import glob
import os
import re

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(REPO, "docs", "awx.md")
PREFIXES = ("roce_", "network_operator_", "sriov_networks_", "host_network_", "rdma_verify_", "preflight_")
SHIPPED_PATHS = ("meta/", "docs/", "playbooks/", "inventories/example", "execution-environment.yml")


def _role_options():
    options = {}
    roles = os.path.join(REPO, "roles")
    for role in sorted(os.listdir(roles)):
        path = os.path.join(roles, role, "meta", "argument_specs.yml")
        if not os.path.isfile(path):
            continue
        with open(path) as f:
            spec = yaml.safe_load(f)
        for entry in (spec.get("argument_specs") or {}).values():
            for name, opt in (entry.get("options") or {}).items():
                options.setdefault(name, {}).update(opt.get("options") or {})
    return options


def _doc_tokens():
    with open(DOC) as f:
        text = f.read()
    return text, set(re.findall(r"`([^`\s]+)`", text))


@pytest.fixture(scope="module")
def doc():
    return _doc_tokens()


def test_every_variable_named_exists(doc):
    _text, tokens = doc
    options = _role_options()
    site = ""
    for path in [os.path.join(REPO, "playbooks", "site.yml")] + sorted(glob.glob(os.path.join(REPO, "playbooks", "tasks", "*.yml"))):
        with open(path) as f:
            site += f.read()
    names = sorted(t for t in tokens if t.startswith(PREFIXES) and re.match(r"^[a-z0-9_]+(\.[a-z0-9_]+)?$", t))
    assert len(names) >= 15, names
    missing = []
    for name in names:
        top, _sep, sub = name.partition(".")
        if sub:
            if sub not in options.get(top, {}):
                missing.append(name)
        elif top not in options and not re.search(r"\b%s\b" % re.escape(top), site):
            missing.append(name)
    assert missing == [], "docs/awx.md names variables no role or site.yml has: %s" % missing


def test_job_tags_exist_in_site_yml(doc):
    text, _tokens = doc
    row = next(line for line in text.splitlines() if line.startswith("| Job tags"))
    tags = re.findall(r"`([a-z_]+)`", row)
    with open(os.path.join(REPO, "playbooks", "site.yml")) as f:
        site_tags = {t for play in yaml.safe_load(f) for t in (play.get("tags") or [])}
    assert tags and set(tags) <= site_tags, (tags, site_tags)


def test_files_named_exist(doc):
    _text, tokens = doc
    paths = sorted(t.rstrip("/") for t in tokens if t.startswith(SHIPPED_PATHS) and "<" not in t)
    assert "docs/awx-project" in paths and "meta/ee-bindep.txt" in paths, paths
    assert [p for p in paths if not os.path.exists(os.path.join(REPO, p))] == []


def test_example_project_imports_the_collection_playbook():
    with open(os.path.join(REPO, "docs", "awx-project", "playbooks", "site.yml")) as f:
        plays = yaml.safe_load(f)
    assert [p.get("ansible.builtin.import_playbook") for p in plays] == ["gpufabric.roce.site"]
    assert os.path.isfile(os.path.join(REPO, "playbooks", "site.yml"))


def test_example_project_has_the_render_only_playbook(doc):
    text, _tokens = doc
    with open(os.path.join(REPO, "docs", "awx-project", "playbooks", "render.yml")) as f:
        plays = yaml.safe_load(f)
    assert [p.get("ansible.builtin.import_playbook") for p in plays] == ["gpufabric.roce.render"]
    assert os.path.isfile(os.path.join(REPO, "playbooks", "render.yml"))
    # The render job template uses it; the rollout survey no longer offers render mode (it ran the node phases).
    assert "| Playbook | `playbooks/render.yml` |" in text
    assert "`roce_k8s_mode` | multiple choice" not in text


def _sections():
    with open(DOC) as f:
        return re.findall(r"^## ([0-9]+)\. (.+)$", f.read(), re.M)


def _anchor(number, title):
    # GitHub's heading anchors: lower case, punctuation dropped, blanks to dashes.
    return re.sub(r"[^a-z0-9 -]", "", ("%s. %s" % (number, title)).lower()).replace(" ", "-")


def test_the_sections_are_numbered_once_each_in_order():
    assert [int(n) for n, _t in _sections()] == list(range(1, len(_sections()) + 1)), _sections()


def test_every_reference_to_a_section_of_awx_md_names_one_that_is_there():
    sections = dict(_sections())
    anchors = {_anchor(n, t) for n, t in sections.items()}
    found = []
    for path in glob.glob(os.path.join(REPO, "**", "*"), recursive=True):
        rel = os.path.relpath(path, REPO)
        if rel.startswith((".", "changelogs", "benchmarks")) or not rel.endswith((".md", ".yml", ".py", ".rst")) or not os.path.isfile(path):
            continue
        with open(path, errors="replace") as f:
            text = f.read()
        for anchor in re.findall(r"awx\.md#([\w-]+)", text):
            found.append(anchor)
            assert anchor in anchors, "%s: docs/awx.md#%s is no section of it (%s)" % (rel, anchor, sorted(anchors))
        refs = re.findall(r"awx\.md,? sections? ([0-9]+)", text)
        if rel == os.path.join("docs", "awx.md"):
            refs += re.findall(r"\bsections? ([0-9]+)\b", text)
        for number in refs:
            assert number in sections, "%s: section %s of docs/awx.md does not exist" % (rel, number)
    assert found  # the test reads the references it is about
    # The sliced workflow is the section about job slicing.
    with open(os.path.join(REPO, "docs", "awx.md")) as f:
        text = f.read()
    slicing = [n for n, t in sections.items() if "job slicing" in t]
    assert slicing and "use the workflow of section %s" % slicing[0] in text

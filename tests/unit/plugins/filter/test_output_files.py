# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files site.yml writes on the controller (roce_plan_out, roce_impact_out) are held to the rules of the output
directories, before the first change (issue 43): never inside an inventory source (a directory source, or the group_vars/
and host_vars/ beside a file source), never a directory nor in a missing one, never the same file as another of them or
as the plan the run reads. Each line names all roce_nodes, the variable, its value and a fix that works."""

import os

import pytest

from ansible_collections.gpufabric.roce.plugins.filter.output_files import FilterModule
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_checks import output_dir_problems, output_file_problems

F = FilterModule().filters()["_output_file_problems"]


@pytest.fixture
def tree(tmp_path):
    """An inventory directory, an inventory file with its group_vars beside it, and a directory for outputs."""
    inv = tmp_path / "inventories" / "prod"
    (inv / "group_vars").mkdir(parents=True)
    (inv / "group_vars" / "roce_nodes.yml").write_text("---\n")
    (inv / "hosts.yml").write_text("all: {}\n")
    rack = tmp_path / "rack"
    (rack / "host_vars").mkdir(parents=True)
    (rack / "hosts.yml").write_text("all: {}\n")
    (tmp_path / "out").mkdir()
    return tmp_path


def sources(tree):
    return [str(tree / "inventories" / "prod"), str(tree / "rack" / "hosts.yml"), "localhost,"]


def test_files_outside_the_inventory_in_an_existing_directory_pass(tree):
    out = tree / "out"
    assert F({"roce_plan_out": str(out / "plan.json"), "roce_impact_out": str(out / "impact.json")}, sources(tree),
             read={"roce_plan": str(out / "old-plan.json")}) == []
    assert F({"roce_plan_out": None, "roce_impact_out": str(out / "impact.json")}, sources(tree), read={"roce_plan": None}) == []


@pytest.mark.parametrize("rel,where", [
    ("inventories/prod/group_vars/roce_nodes.yml", "is inside the inventory source {tree}/inventories/prod"),
    ("rack/host_vars/node1.yml", "is inside {tree}/rack/host_vars, which Ansible reads with the inventory source {tree}/rack/hosts.yml"),
    ("rack/hosts.yml", "is the inventory source {tree}/rack/hosts.yml"),
], ids=["in-a-directory-source", "host-vars-beside-a-file-source", "the-file-source"])
@pytest.mark.parametrize("key", ["roce_plan_out", "roce_impact_out"])
def test_a_file_inside_an_inventory_source_is_refused(tree, key, rel, where):
    lines = F({key: str(tree / rel)}, sources(tree))
    assert len(lines) == 1, lines
    example = "%s.json" % key[len("roce_"):-len("_out")]
    assert lines[0].startswith('all roce_nodes: %s="%s": %s: the next run would read the files written there as inventory' % (
        key, tree / rel, where.format(tree=tree))), lines
    fix = lines[0].split(". Fix: ")[1]
    assert fix.startswith("set %s to a file outside every inventory source, e.g. " % key), fix
    # The example is a file no inventory source holds, in a directory that exists.
    suggested = fix.split("e.g. ")[1]
    assert os.path.basename(suggested) == example and os.path.isdir(os.path.dirname(suggested))
    assert F({key: suggested}, sources(tree)) == []


def test_a_directory_or_a_file_in_a_missing_directory_is_refused(tree):
    out = tree / "out"
    lines = F({"roce_plan_out": str(out), "roce_impact_out": str(tree / "nope" / "impact.json")}, sources(tree))
    assert lines == [
        'all roce_nodes: roce_plan_out="%s": is a directory, not a file. Fix: give roce_plan_out the path of a file, e.g. %s/plan.json' % (out, out),
        'all roce_nodes: roce_impact_out="%s/nope/impact.json": is in %s/nope, which does not exist. Fix: create the directory first '
        '(mkdir -p %s/nope), or give roce_impact_out a file in an existing directory' % (tree, tree, tree),
    ]


def test_two_outputs_at_one_file_or_an_output_at_the_plan_read_are_refused(tree):
    same = str(tree / "out" / "run.json")
    assert F({"roce_plan_out": same, "roce_impact_out": same}, sources(tree)) == [
        'all roce_nodes: roce_impact_out="%s": is the same file as what this run writes to roce_plan_out: one would replace the other. '
        'Fix: give roce_impact_out a file of its own, e.g. %s/impact.json' % (same, tree / "out")]
    # The report over the plan the run reads: the next run (or another AWX slice) would read a report as its plan.
    plan = str(tree / "out" / "plan.json")
    assert F({"roce_impact_out": plan}, sources(tree), read={"roce_plan": plan}) == [
        'all roce_nodes: roce_impact_out="%s": is the same file as the file of roce_plan, which this run reads: one would replace the '
        'other. Fix: give roce_impact_out a file of its own, e.g. %s/impact.json' % (plan, tree / "out")]
    # The suggested file is not the shared one, even when that one has the suggested name.
    impact = str(tree / "out" / "impact.json")
    assert F({"roce_plan_out": impact, "roce_impact_out": impact}, sources(tree))[0].endswith(
        "Fix: give roce_impact_out a file of its own, e.g. %s/impact-2.json" % (tree / "out"))
    # A symbolic link to the same file is the same file.
    os.symlink(plan, str(tree / "out" / "link.json"))
    assert len(F({"roce_plan_out": str(tree / "out" / "link.json")}, sources(tree), read={"roce_plan": plan})) == 1


def test_the_output_directories_keep_their_rule_and_now_see_the_vars_beside_a_file_source(tree, monkeypatch):
    problems = output_dir_problems({"roce_render_dir": str(tree / "rack" / "host_vars" / "out")}, sources(tree), {"roce_render_dir": "render-out"})
    assert [p[0] for p in problems] == ["roce_render_dir"]
    assert problems[0][2].startswith("is inside %s/rack/host_vars, which Ansible reads with the inventory source" % tree)
    assert output_dir_problems({"roce_render_dir": str(tree / "rack" / "render-out")}, sources(tree), {"roce_render_dir": "render-out"}) == []
    assert output_file_problems({"roce_plan_out": str(tree / "rack" / "plan.json")}, sources(tree)) == []

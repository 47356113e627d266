# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40's acceptance: ``grep -rn hostvars roles playbooks plugins`` shows one reader of the fabric's variables, the
plan builder, plus reads of what only the run has (its results, Ansible's facts). Every occurrence must lie inside a
match of an entry of ALLOWED, which says why it is there; anything else fails, naming file, line and text. A new reader
of the nodes' variables goes through the plan builder (plugins/plugin_utils/_plan_builder.py) instead of joining the list."""

import os
import re

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROOTS = ("roles", "playbooks", "plugins")
WORD = "hostvars"  # what grep matches: the text, case-sensitive, anywhere

# (path regex, text regex or None for the whole file, why). A text regex is matched against the whole file (so a call
# split over lines still matches); an occurrence is allowed when it lies inside one of its matches.
_BUILDER_FILTERS = r"(?:fabric_plan|_fabric_has_pod_network)"
ALLOWED = (
    # The plan builder, and the filters and action that hand it hostvars: the one reader of the fabric's variables.
    (r"plugins/plugin_utils/_(?:plan_builder|raw_vars)\.py", None,
     "the plan builder and its view of the inventory (raw first, templated only where needed)"),
    (r"plugins/filter/(?:fabric_plan|k8s_render|pod_network)\.py|plugins/action/sriov_render\.py", None,
     "given hostvars rather than a plan, they read the nodes through the plan builder"),
    (r"(?:roles|playbooks)/.*\.yml", r"hostvars\s*\|\s*gpufabric\.roce\.%s\(" % _BUILDER_FILTERS,
     "the plan builder's filters (the fabric plan, and whether the fabric has one)"),
    (r"(?:roles|playbooks)/.*\.yml", r"hostvars=(?:none if [\w.]+ else )?hostvars",
     "hostvars handed to a filter that reads it through the plan builder only (no plan given, or a plan read back "
     "checked against the inventory)"),
    (r"roles/network_operator/tasks/render\.yml", r"else hostvars, __network_operator_node_hosts",
     "_nic_node_policies without the plan's members (the role on its own) reads them through the plan builder"),
    # The origin of a value (which group_vars or host_vars file set it), for an error message; the run's findings.
    (r"plugins/plugin_utils/_findings\.py|plugins/filter/findings\.py", None,
     "the origin of a value for an error message, and the findings each host of the run left"),
    (r"(?:roles|playbooks)/.*\.yml", r"hostvars\s*\|\s*gpufabric\.roce\._grouped_findings\(", "the findings each host of the run left"),
    # What only the run has: its results and the nodes' facts.
    (r"plugins/filter/(?:impact|rdma_report|nccl)\.py", None, "the run's results and the nodes' facts (nothing else has them)"),
    (r"(?:roles|playbooks)/.*\.yml",
     r"hostvars\s*\|\s*gpufabric\.roce\.(?:_impact_report|_rdma_verify_matrix|_rdma_verify_pcie_findings|_nccl_collect)\(",
     "the run's results and the nodes' facts (nothing else has them)"),
    (r"playbooks/site\.yml", r"hostvars\[__site_plan_host\]\.__site_plan",
     "the run's plan, a fact this run's validation left on one node (a copy for the controller would be the whole plan again)"),
    (r"(?:roles|playbooks)/.*\.yml", r"hostvars\[.{0,80}?\]\.inventory_dir", "the inventory's directory, for the output directory's name"),
    # The checks of the inventory itself.
    (r"plugins/action/(?:validate_role_arguments|unknown_variables|role_view)\.py|plugins/plugin_utils/_role_(?:args|context)\.py", None,
     "they check the inventory itself (every host's variables against the roles' specs, unknown names), or give the "
     "controller's own settings as its role sees them"),
    # Words, not reads.
    (r".*\.(?:py|yml)", r"(?m)^[ \t]*#.*$", "a comment"),
    (r".*\.md|plugins/filter/.*\.yml|roles/[^/]+/meta/argument_specs\.yml", None,
     "documentation: what a filter takes, where a role's per-node values come from"),
    (r"plugins/modules/.*\.py", r'(?s)(?:EXAMPLES|DOCUMENTATION) = r?""".*?"""', "a module's documentation"),
    (r"plugins/module_utils/_k8s/sriov\.py", r'"hostvars", None, "host is in roce_nodes but has no variables"',
     "the field an error names for a node without variables (its message is asserted by tests)"),
    (r"plugins/module_utils/_fabric/plan\.py", r"a run reading ``hostvars`` sees every inventory host",
     "a docstring: why a plan computed under --limit is complete"),
)


def _files():
    for root in ROOTS:
        for base, dirs, names in os.walk(os.path.join(REPO, root)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                path = os.path.join(base, name)
                try:
                    with open(path, encoding="utf-8") as fh:
                        yield os.path.relpath(path, REPO).replace(os.sep, "/"), fh.read()
                except UnicodeDecodeError:
                    continue


def _unexplained(rel, text, allowed=ALLOWED):
    spans = []
    for path_re, text_re, _why in allowed:
        if re.fullmatch(path_re, rel):
            if text_re is None:
                return []
            spans.extend(m.span() for m in re.finditer(text_re, text))
    out = []
    for m in re.finditer(re.escape(WORD), text):
        if not any(a <= m.start() and m.end() <= b for a, b in spans):
            line = text.count("\n", 0, m.start()) + 1
            out.append("%s:%d: %s" % (rel, line, text.splitlines()[line - 1].strip()))
    return out


def test_only_the_plan_builder_reads_the_fabric_variables_through_hostvars():
    problems = [p for rel, text in _files() for p in _unexplained(rel, text)]
    assert not problems, ("hostvars outside the allowed places (read the nodes through the plan builder, "
                          "plugins/plugin_utils/_plan_builder.py, or the plan):\n" + "\n".join(problems))


def test_every_entry_allows_something():
    # An entry that no longer matches anything is a stale reason: remove it.
    files = list(_files())
    for entry in ALLOWED:
        path_re, text_re, why = entry
        assert why
        hits = [rel for rel, text in files if re.fullmatch(path_re, rel) and WORD in text
                and (text_re is None or any(WORD in m.group(0) for m in re.finditer(text_re, text)))]
        assert hits, "ALLOWED entry %r matches no occurrence of %s" % (entry[:2], WORD)


def test_a_read_of_a_node_variable_is_refused():
    # What validate_fabric.yml and rdma_verify's host_plan.yml read before issue 40 (the nodes' pod network, their addresses).
    text = ("  when: hostvars[__roce_run_nodes | first].roce_pod_subnet is defined\n"
            "  addresses: \"{{ dict(hosts | zip(hosts | map('extract', hostvars, rdma_verify_address_var))) }}\"\n"
            "  plan: \"{{ hostvars | gpufabric.roce.fabric_plan(groups['roce_nodes']) }}\"\n")
    assert [p.split(":")[1] for p in _unexplained("roles/x/tasks/main.yml", text)] == ["1", "2"]

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every option of every role's meta/argument_specs.yml is in the role's README, as the README's generated tables have
it (.ci/role_readme.py, checked by make lint): a new option without its row, or a row edited by hand, fails here."""

import importlib.util
import pathlib

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
ROLES = sorted(p.parents[1] for p in REPO.glob("roles/*/meta/argument_specs.yml"))
_spec = importlib.util.spec_from_file_location("role_readme", REPO / ".ci" / "role_readme.py")
role_readme = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(role_readme)


@pytest.mark.parametrize("role", ROLES, ids=[r.name for r in ROLES])
def test_every_option_has_its_row_in_the_readme(role):
    readme = (role / "README.md").read_text()
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    for entry, spec in specs.items():
        section = readme.split("### Entry point `%s`" % entry, 1)
        assert len(section) == 2, "%s: no table of entry point %s" % (role.name, entry)
        table = section[1].split("### Entry point", 1)[0]
        missing = [name for name in spec.get("options") or {} if "\n| `%s` |" % name not in table]
        assert not missing, "%s, entry point %s: options without a row: %s" % (role.name, entry, missing)
    assert role_readme.render(role) == readme, "%s/README.md: run python .ci/role_readme.py" % role.name


def test_markup_becomes_markdown():
    assert role_readme.markdown("C(a) O(b=1) V(c) M(d.e.f) P(g.h.i#filter) O(j.k.l#module:m) I(n) B(o) RV(p) L(q, https://r)") == (
        "`a` `b=1` `c` `d.e.f` `g.h.i` `j.k.l`'s `m` *n* **o** `p` [q](https://r)")

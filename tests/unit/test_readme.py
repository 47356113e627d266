# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""README.md is the Galaxy page, for users: at most 250 lines, with developer material in docs/development.md and every
relative link pointing at a file of the checkout (tests/integration/test_collection_install.py checks the tarball's)."""

import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_the_readme_stays_short_and_its_relative_links_resolve():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 250, "README.md has %d lines: move developer material to docs/" % len(text.splitlines())
    targets = [t.split("#", 1)[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t and not t.startswith("#")]
    assert targets and [t for t in targets if not (REPO / t).exists()] == []
    assert "(docs/development.md)" in text and "make test" in text and "make lab" in text


def test_the_quick_start_offers_the_ansible_package_for_offline_installs():
    # The ansible package bundles kubernetes.core: offline, only the collection's own tarball is then needed.
    quick_start = (REPO / "README.md").read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "pip install 'ansible>=12'" in quick_start and "kubernetes.core" in quick_start


def test_the_public_filters_are_a_dozen_at_most_and_named_in_the_readme():
    # The filters are the collection's API; the roles' own helpers are named with a leading underscore (documented as
    # internal). Each public one is named in the README, and each has its documentation beside it.
    names = set()
    for path in sorted((REPO / "plugins" / "filter").glob("*.py")):
        block = re.search(r"def filters\(self\):\s*return\s*(\{.*?\})", path.read_text(), re.S)
        names |= set(re.findall(r"['\"]([a-z_0-9]+)['\"]\s*:", block.group(1)))
    public = sorted(n for n in names if not n.startswith("_"))
    assert 0 < len(public) <= 12, public
    readme = (REPO / "README.md").read_text()
    assert [n for n in public if "`%s`" % n not in readme] == []
    assert [n for n in names if not (REPO / "plugins" / "filter" / ("%s.yml" % n)).exists()] == []

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

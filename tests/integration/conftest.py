# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures shared by the integration tests; the helpers that run ansible-playbook are in _runner.py."""

import pytest
from _runner import copy_inventory


@pytest.fixture
def inv(tmp_path):
    """A copy of inventories/example for the test to change (tmp_path/inv)."""
    return copy_inventory("example", tmp_path / "inv")

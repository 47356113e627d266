# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The failure message of a per-node check, with identical findings of all nodes grouped (plugin_utils/_findings.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible_collections.gpufabric.roce.plugins.plugin_utils import _findings


def grouped_findings(hostvars, batch, key, host, what='failed', *, grouping=True):
    return _findings.message(hostvars, batch, key, host, what, grouping=grouping)


class FilterModule(object):
    def filters(self):
        return {'_grouped_findings': grouped_findings}

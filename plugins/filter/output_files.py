# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files a run writes on the controller (roce_plan_out, roce_impact_out), checked by the rules of the output
directories before the first change (plugin_utils/_role_checks.py, ``output_file_problems``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import format_error, plain
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_checks import output_file_problems


def output_file_problems_filter(written, sources=None, read=None, host='all roce_nodes'):
    problems = output_file_problems(plain(written) or {}, [str(s) for s in plain(sources) or []], plain(read) or {})
    return [format_error(host, *p) for p in problems]


class FilterModule(object):
    def filters(self):
        return {'_output_file_problems': output_file_problems_filter}

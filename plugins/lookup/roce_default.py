# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
name: roce_default
version_added: "0.1.0"
short_description: The collection's default of a shared fabric variable (roce_num_vfs, roce_mtu, ...)
description:
  - The value every phase uses for a shared fabric variable that the inventory leaves out.
  - The roles' defaults read it from here (C(roce_num_vfs | default(lookup('gpufabric.roce.roce_default', 'roce_num_vfs')))),
    and the controller's planners and renderers from the same table in Python, so the value is written in one place.
options:
  _terms:
    description:
      - One variable name - C(roce_num_vfs), C(roce_mtu), C(roce_vlan_id), C(roce_vf_mode), C(roce_qos_via),
        C(roce_k8s_mode), C(roce_serial), C(roce_strategy) or C(roce_max_fail_percentage).
    type: list
    elements: str
    required: true
author:
  - gpufabric.roce maintainers (@gpufabric)
"""

EXAMPLES = r"""
- name: The MTU a node uses when its inventory sets none
  ansible.builtin.debug:
    msg: "{{ roce_mtu | default(lookup('gpufabric.roce.roce_default', 'roce_mtu')) }}"
"""

RETURN = r"""
_raw:
  description: The default of each variable named, in order (the value itself when one is named and wantlist is false).
  type: list
  elements: raw
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.gpufabric.roce.plugins.module_utils._rails import ROCE_DEFAULTS


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        out = []
        for term in terms:
            if term not in ROCE_DEFAULTS:
                raise AnsibleLookupError(
                    "gpufabric.roce.roce_default: %r has no collection default. Fix: name one of %s"
                    % (term, ", ".join(sorted(ROCE_DEFAULTS))))
            out.append(ROCE_DEFAULTS[term])
        return out

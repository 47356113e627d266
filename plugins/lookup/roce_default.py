# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
name: roce_default
version_added: "0.1.0"
short_description: The collection's default of a variable (roce_num_vfs, roce_render_dir, rdma_verify_mode, ...)
description:
  - The value every phase uses for a variable that the inventory leaves out, written in one place.
  - The shared fabric variables - the roles' defaults read them from here (C(roce_num_vfs | default(lookup('gpufabric.roce.roce_default', 'roce_num_vfs')))),
    and the controller's planners and renderers from the same table in Python.
  - C(roce_render_dir) - C(render-out) in the directory ansible-playbook runs from (C($PWD/render-out)).
  - A role's variable whose default in the role's C(defaults/main.yml) is a literal (C(rdma_verify_mode)), for the playbooks
    and other roles that read it outside that role, so the role's file stays the only copy.
options:
  _terms:
    description:
      - One variable name - C(roce_num_vfs), C(roce_mtu), C(roce_vlan_id), C(roce_vf_mode), C(roce_qos_via),
        C(roce_k8s_mode), C(roce_serial), C(roce_strategy), C(roce_max_fail_percentage), C(roce_render_dir), or a role variable
        with a literal default (C(rdma_verify_mode)).
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

from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import collection_default


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        out = []
        for term in terms:
            try:
                out.append(collection_default(term))
            except KeyError as exc:
                raise AnsibleLookupError("gpufabric.roce.roce_default: %s" % exc.args[0]) from None
        return out

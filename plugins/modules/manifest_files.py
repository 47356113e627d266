#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: manifest_files
short_description: Write rendered Kubernetes objects as YAML files on the controller (render mode)
version_added: "0.1.0"
description:
  - Writes each entry of O(files) as a multi-document YAML file under O(dest), in one step and without
    running a module on a target, so that render mode stays fast with thousands of objects.
  - Used by the P(gpufabric.roce.network_operator#role) and P(gpufabric.roce.sriov_networks#role) roles when
    C(roce_k8s_mode=render). Files are written on the Ansible controller, whatever host the task runs for.
  - A file is only rewritten when its content changes (atomic replace), so reruns report no change.
  - A write that fails (a full disk) removes its temporary file. Temporaries of the plugin's own naming
    (C(.<file>.XXXXXXXX) for a file of O(files)) that a killed run left in O(dest) are removed by the next run.
  - This is an action plugin; the module file only holds the documentation.
author:
  - gpufabric.roce maintainers (@gpufabric)
options:
  dest:
    description: Directory on the controller; created (with parents) when missing.
    type: path
    required: true
  files:
    description:
      - Mapping of file name (no directory part) to content. A list is written as one YAML document per
        item, a mapping as one document, a string verbatim.
    type: dict
    required: true
  objects:
    description:
      - Objects as one JSON text of a mapping of lists, as RV(gpufabric.roce.sriov_render#module:objects) returns them
        (one value for Ansible to carry, rather than every object as nested data). Read only with O(object_files).
    type: str
    version_added: "0.1.0"
  object_files:
    description:
      - Mapping of file name (no directory part, not also in O(files)) to a key of O(objects). The list under that key is
        written to that file, one YAML document per item.
    type: dict
    default: {}
    version_added: "0.1.0"
  absent:
    description:
      - File names (no directory part) that must not be in O(dest) - files an earlier version wrote there and that now
        live elsewhere. Each one present is removed (with a diff); one that is not a regular file is an error.
    type: list
    elements: str
    default: []
    version_added: "0.1.0"
  mode:
    description: Permissions of the files (the directory gets the execute bits added for each read bit).
    type: str
    default: "0644"
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details: Writes nothing; reports which files would change.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
    details: One diff per file that changes (or would change), headed with its path.
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
"""

EXAMPLES = r"""
- name: Write the rendered SR-IOV objects
  gpufabric.roce.manifest_files:
    dest: "{{ roce_render_dir }}/sriov-networks"
    files:
      sriov-network-node-policies.yaml: "{{ rendered.policies }}"
      sriov-networks.yaml: "{{ rendered.networks }}"
"""

RETURN = r"""
files:
  description: One entry per file written or checked.
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/srv/gitops/sriov-networks/sriov-networks.yaml", "documents": 2, "changed": true}]
removed:
  description: Files of O(absent) removed from O(dest) (in check mode, those that would be).
  returned: always
  type: list
  elements: str
  sample: ["/srv/gitops/network-operator/flux-helm-release.yaml"]
removed_temporaries:
  description: Stale temporary files of an earlier run removed from O(dest) (in check mode, those that would be).
  returned: always
  type: list
  elements: str
  sample: ["/srv/gitops/sriov-networks/.sriov-network-node-policies.yaml.k2j9x_7q"]
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(dest=dict(type="path", required=True), files=dict(type="dict", required=True),
                           absent=dict(type="list", elements="str", default=[]), mode=dict(type="str", default="0644"),
                           objects=dict(type="str"), object_files=dict(type="dict", default={})),
        supports_check_mode=True,
    )
    module.fail_json(msg="gpufabric.roce.manifest_files runs as an action plugin on the controller; this module file only holds its documentation")


if __name__ == "__main__":
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: manifest_files
short_description: Internal (the Kubernetes roles' render mode) - write rendered Kubernetes objects as YAML files on the controller
version_added: "0.1.0"
description:
  - Writes each entry of O(files) as a multi-document YAML file under O(dest), in one step and without
    running a module on a target, so that render mode stays fast with thousands of objects.
  - Used by the P(gpufabric.roce.network_operator#role) and P(gpufabric.roce.sriov_networks#role) roles when
    C(roce_k8s_mode=render). Files are written on the Ansible controller, whatever host the task runs for.
  - A file is only rewritten when its content or mode changes, so reruns report no change.
  - All or nothing. The files are first written into a staging area, C(.gpufabric-roce-stage) in the root of the
    rendered tree, then swapped in, each by one rename (a reader sees the old file or the new one); a failure on the
    way (a full disk, a path in the way) puts back what was swapped in and leaves the tree as it was. A task is a
    transaction of its own (its staging area in O(dest)), or, with O(stage), one step of a transaction that spans
    tasks and roles - a later task with O(commit) swaps in what they all staged, and O(discard) drops it.
  - Only the files a task writes, and those of O(absent), are replaced or removed; any other file of the tree (a
    user's, another tool's) is left as it is. Temporaries of the plugin's own naming (C(.<file>.XXXXXXXX) for a file
    of O(files)) that a killed run left in O(dest) are removed.
  - This is an action plugin; the module file only holds the documentation.
author:
  - gpufabric.roce maintainers (@gpufabric)
options:
  dest:
    description:
      - Directory on the controller; created (with parents) when missing.
      - Required, with O(files), unless O(commit) or O(discard) is given (then neither is).
    type: path
  files:
    description:
      - Mapping of file name (no directory part) to content. A list is written as one YAML document per
        item, a mapping as one document, a string verbatim.
    type: dict
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
  labels:
    description:
      - Labels added to C(metadata.labels) of every Kubernetes object written, from O(objects) and from O(files) given as
        data (a mapping with C(metadata); a Kustomization or a text is written as it is). The objects given stay as they are.
      - The same labels, added by the same code, as O(gpufabric.roce.k8s_apply#module:labels) of M(gpufabric.roce.k8s_apply). The
        roles put the rollout's identity here (C(gpufabric.roce/fabric)), so a tree a GitOps tool applied is that rollout's
        when apply mode takes over.
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
    description:
      - Permissions of the files (the directory gets the execute bits added for each read bit). The files of
        O(copy_from) keep their own.
    type: str
    default: "0644"
  copy_from:
    description:
      - A directory or a tar archive (any compression; a chart package, C(.tgz)) on the controller whose files are
        written under O(dest) too, at their paths in it (an archive's top directory is kept), with their modes. A link
        in a directory is followed; an archive member that is a link or a device, or that points outside O(dest), is
        refused before anything is written.
    type: path
    version_added: "0.1.0"
  stage:
    description:
      - The root of the rendered tree (C(roce_render_dir)), which holds O(dest). The task writes nothing into the tree;
        it stages its files (and the removals of O(absent)) in C(<stage>/.gpufabric-roce-stage), for a later task with
        O(commit) to swap in with those of the other tasks of the transaction.
    type: path
    version_added: "0.1.0"
  commit:
    description:
      - The root of a rendered tree whose staged files are swapped in, all or nothing (on a failure the files swapped in
        so far are put back); then its staging area is removed. Nothing staged, nothing changes. Alone, without
        O(dest) and O(files). In check mode nothing is staged, and nothing is done.
    type: path
    version_added: "0.1.0"
  discard:
    description:
      - The root of a rendered tree whose staging area is removed, with everything staged in it (nothing of it is
        written into the tree); the directories made to hold it go too when they are empty. Alone, without O(dest) and
        O(files). Run it before the first staging task of a transaction (a killed run's files) and after the last one
        (always).
    type: path
    version_added: "0.1.0"
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details: Writes and stages nothing; reports which files would change.
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
- name: Write the rendered SR-IOV objects (one transaction)
  gpufabric.roce.manifest_files:
    dest: "{{ roce_render_dir }}/sriov-networks"
    files:
      sriov-network-node-policies.yaml: "{{ rendered.policies }}"
      sriov-networks.yaml: "{{ rendered.networks }}"

- name: Write two directories and a chart, all or nothing
  block:
    - name: Discard what a killed run left staged
      gpufabric.roce.manifest_files:
        discard: "{{ roce_render_dir }}"

    - name: Stage the NicClusterPolicy
      gpufabric.roce.manifest_files:
        dest: "{{ roce_render_dir }}/network-operator"
        stage: "{{ roce_render_dir }}"
        files:
          nic-cluster-policy.yaml: "{{ ncp }}"

    - name: Stage the chart, unpacked
      gpufabric.roce.manifest_files:
        dest: "{{ roce_render_dir }}/charts"
        stage: "{{ roce_render_dir }}"
        files: {}
        copy_from: /srv/charts/network-operator-26.4.1.tgz

    - name: Swap them in
      gpufabric.roce.manifest_files:
        commit: "{{ roce_render_dir }}"
  always:
    - name: Remove the staging area
      gpufabric.roce.manifest_files:
        discard: "{{ roce_render_dir }}"
"""

RETURN = r"""
files:
  description:
    - One entry per file written or checked (with O(stage), staged or checked).
    - With O(commit), the paths of the files swapped in.
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/srv/gitops/sriov-networks/sriov-networks.yaml", "documents": 2, "changed": true}]
removed:
  description:
    - Files of O(absent) removed from O(dest) (in check mode or with O(stage), those that would be).
    - With O(commit), every file the swap removed.
  returned: always
  type: list
  elements: str
  sample: ["/srv/gitops/network-operator/flux-helm-release.yaml"]
copied:
  description: One entry per file of O(copy_from), its path under O(dest) and whether it changed (or would).
  returned: when O(copy_from) is given
  type: list
  elements: dict
  sample: [{"path": "/srv/gitops/charts/network-operator/Chart.yaml", "changed": true}]
removed_temporaries:
  description: Stale temporary files of an earlier run removed from O(dest) (in check mode or with O(stage), those that would be).
  returned: unless O(commit) or O(discard) is given
  type: list
  elements: str
  sample: ["/srv/gitops/sriov-networks/.sriov-network-node-policies.yaml.k2j9x_7q"]
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(dest=dict(type="path"), files=dict(type="dict"),
                           absent=dict(type="list", elements="str", default=[]), mode=dict(type="str", default="0644"),
                           objects=dict(type="str"), object_files=dict(type="dict", default={}), labels=dict(type="dict", default={}),
                           copy_from=dict(type="path"),
                           stage=dict(type="path"), commit=dict(type="path"), discard=dict(type="path")),
        supports_check_mode=True,
    )
    module.fail_json(msg="gpufabric.roce.manifest_files runs as an action plugin on the controller; this module file only holds its documentation")


if __name__ == "__main__":
    main()

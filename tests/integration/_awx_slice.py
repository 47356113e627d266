# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An ansible-runner private data dir built as AWX builds one for a job slice.

What AWX does (ansible/awx, devel as of commit e21dd0a, Oct 2024), and what this file reproduces:

- The inventory is imported into AWX's database with ``ansible-inventory --list --export``
  (awx/main/tasks/jobs.py, RunInventoryUpdate): groups keep their variables and their children, hosts
  their own variables. ``import_inventory`` below runs the same command on the project's inventory.
- A slice job gets ``job_slice_number`` (1-based) and ``job_slice_count``; ``build_inventory`` hands them
  to ``Inventory.get_script_data(hostvars=True, towervars=True, slice_number, slice_count)``
  (awx/main/models/inventory.py), whose ``get_sliced_hosts`` takes **every host of the inventory**
  (the controller too), enabled ones, ordered by name, and keeps ``hosts[slice_number - 1::slice_count]``.
  Group memberships of the other hosts are dropped; every group and its variables stay, all groups are
  children of ``all``, the inventory's variables are ``all``'s. ``script_data`` reproduces it.
- ``write_inventory_file`` writes ``inventory/hosts``, a Python script that prints that JSON (mode 0700).
- The extra vars are the job's plus ``awx_meta_vars()`` under both prefixes ``awx_`` and ``tower_``
  (awx/main/models/unified_jobs.py); a slice job runs inside a workflow job, so it has
  ``awx_workflow_job_id`` and ``awx_job_launch_type: workflow``, and NO variable naming the slice:
  ``job_slice`` is an ancestor artifact, passed as extra vars only to non-root workflow nodes.

Ordering: AWX sorts names in PostgreSQL's collation; the names used here (lowercase letters, digits,
``-``) sort the same under ``C`` and ``en_US.UTF-8``, and Python's ``sorted`` gives that order.
"""

import json
import os
import subprocess

from _runner import VENV_BIN, collection_env, venv_path

_META_PREFIXES = ("awx", "tower")


def import_inventory(inventory):
    """The inventory as AWX's inventory update reads it: ``ansible-inventory --list --export``."""
    env = dict(os.environ, **collection_env())
    out = subprocess.run(  # noqa: S603
        [os.path.join(VENV_BIN, "ansible-inventory"), "-i", str(inventory), "--list", "--export"],
        check=True, capture_output=True, text=True, env=env,
    ).stdout
    return json.loads(out)


def script_data(exported, slice_number=1, slice_count=1):
    """``Inventory.get_script_data(hostvars=True, towervars=True, slice_number, slice_count)`` of the
    inventory AWX imported from ``exported`` (``ansible-inventory --list --export`` output)."""
    hostvars = exported.get("_meta", {}).get("hostvars", {})
    groups = {name: g for name, g in exported.items() if name not in ("_meta", "all", "ungrouped")}
    members = {h for g in exported.values() if isinstance(g, dict) for h in g.get("hosts", [])}
    names = sorted(members | set(hostvars))
    ids = {name: i + 1 for i, name in enumerate(names)}
    if slice_count > 1 and slice_number > 0:
        names = names[slice_number - 1::slice_count]
    kept = set(names)
    data = {"all": {}}
    all_vars = exported.get("all", {}).get("vars")
    if all_vars:
        data["all"]["vars"] = all_vars
    grouped = set()
    for name, g in groups.items():
        info = {}
        hosts = [h for h in g.get("hosts", []) if h in kept]
        if hosts:
            info["hosts"] = hosts
            grouped.update(hosts)
        if g.get("children"):
            info["children"] = list(g["children"])
        if g.get("vars"):
            info["vars"] = g["vars"]
        if info:
            data[name] = info
    data["all"]["hosts"] = [h for h in names if h not in grouped]
    if groups:
        data["all"]["children"] = list(groups)
    data["_meta"] = {"hostvars": {}}
    for h in names:
        hv = dict(hostvars.get(h, {}))
        for prefix in ("host", "tower"):
            hv["remote_%s_enabled" % prefix] = "true"
            hv["remote_%s_id" % prefix] = ids[h]
        data["_meta"]["hostvars"][h] = hv
    return data


def meta_vars(job_id, workflow_job_id=None):
    """What ``awx_meta_vars()`` adds to a job's extra vars (the ones these tests can meet)."""
    out = {}
    for p in _META_PREFIXES:
        out["%s_job_id" % p] = job_id
        out["%s_job_launch_type" % p] = "workflow" if workflow_job_id else "manual"
        out["%s_inventory_id" % p] = 1
        out["%s_inventory_name" % p] = "fabric"
        if workflow_job_id:
            out["%s_workflow_job_id" % p] = workflow_job_id
            out["%s_workflow_job_name" % p] = "RoCE rollout"
    return out


def private_data_dir(path, exported, extravars, *, slice_number=1, slice_count=1, job_id=100, workflow_job_id=None):
    """An ansible-runner private data dir at ``path`` for slice ``slice_number`` of ``slice_count``
    (1 of 1: an unsliced job): inventory/hosts as AWX writes it, env/extravars, env/envvars."""
    os.makedirs(os.path.join(path, "inventory"))
    os.makedirs(os.path.join(path, "env"))
    hosts = os.path.join(path, "inventory", "hosts")
    data = script_data(exported, slice_number, slice_count)
    with open(hosts, "w") as fh:
        # AWX's own shebang is /usr/bin/env python3: the execution environment's. Here the venv's python
        # runs it (the machine's python3 may lack nothing, but the tests use one interpreter).
        fh.write("#! %s\n# -*- coding: utf-8 -*-\nprint(%r)\n" % (os.path.join(VENV_BIN, "python"), json.dumps(data)))
    os.chmod(hosts, 0o700)
    extra = dict(extravars)
    extra.update(meta_vars(job_id, workflow_job_id))
    with open(os.path.join(path, "env", "extravars"), "w") as fh:
        json.dump(extra, fh)
    with open(os.path.join(path, "env", "envvars"), "w") as fh:
        # The tests and benchmarks/awx_slices.py read the modules' arguments from their failed results' invocation,
        # which ansible-core 2.21 and later add only when asked (older ones ignore the variable).
        json.dump(dict(collection_env(), PATH=venv_path(), ANSIBLE_INJECT_INVOCATION="True"), fh)
    return path, data

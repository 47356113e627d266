# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One AWX job of site.yml against the lab, run as AWX runs it (molecule/lab/verify.yml, issue 21).

The inventory is cut by tests/integration/_awx_slice.py (the rules of AWX's get_script_data, which that file
documents), the job's extra vars carry AWX's meta variables, and ansible-runner runs the playbook from the private
data dir, as in AWX's execution environment. Run with the venv's python and PYTHONPATH=tests/integration:

    python molecule/lab/awx_job.py DIR --inventory inventories/lab --slice 2/2 --job-id 102 --workflow-job-id 7 \\
        --extra-vars '{"roce_plan": "/abs/plan.json"}' --tags host_network --cmdline '--check --diff'

The first line of the output is ``awx job: {json}`` (the job id, the slice and the hosts it got, so that the caller
checks the cut instead of assuming it), then the playbook's output, then ``awx job kept routes: {json}``: per host,
the routes that vlan_gateway kept because it was told not to purge (``kept_routes`` of its results, from the job's
events). That is the evidence a slice without the plan needed the guard: it did not list those routes. The exit code
is ansible-playbook's.
"""

import argparse
import json
import os
import shutil
import sys

import ansible_runner
from _awx_slice import import_inventory, private_data_dir
from _runner import SITE


def kept_routes(events):
    """{host: [kept route]} from the results of a job's events (each rail of a run that took every rail, a loop's
    items too)."""
    out = {}
    for event in events:
        if event.get("event") not in ("runner_on_ok", "runner_on_failed"):
            continue
        res = event["event_data"].get("res") or {}
        for key in ("results", "rails"):
            if isinstance(res.get(key), list):
                items = res[key]
                break
        else:
            items = [res]
        for item in items:
            if isinstance(item, dict) and item.get("kept_routes"):
                out.setdefault(event["event_data"]["host"], []).extend(item["kept_routes"])
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="the job's private data dir (replaced: AWX makes a fresh one per job)")
    parser.add_argument("--inventory", required=True, help="the inventory AWX imported (ansible-inventory --list --export)")
    parser.add_argument("--slice", default="1/1", help="K/N: slice K of N (1/1: an unsliced job)")
    parser.add_argument("--job-id", type=int, required=True)
    parser.add_argument("--workflow-job-id", type=int, help="the workflow the job runs in (a slice job always does)")
    parser.add_argument("--extra-vars", default="{}", help="the job's extra vars, a JSON object")
    parser.add_argument("--tags", default=None)
    parser.add_argument("--cmdline", default="", help="more ansible-playbook options, e.g. '--check --diff'")
    args = parser.parse_args(argv)

    try:
        number, count = (int(x) for x in args.slice.split("/"))
    except ValueError:
        parser.error("--slice %r: expected K/N, e.g. 2/2" % args.slice)
    if not 1 <= number <= count:
        parser.error("--slice %r: K must be between 1 and N" % args.slice)
    extravars = json.loads(args.extra_vars)
    if not isinstance(extravars, dict):
        parser.error("--extra-vars must be a JSON object, got %r" % args.extra_vars)

    if os.path.isdir(args.dir):
        shutil.rmtree(args.dir)
    path, data = private_data_dir(args.dir, import_inventory(args.inventory), extravars, slice_number=number,
                                  slice_count=count, job_id=args.job_id, workflow_job_id=args.workflow_job_id)
    job = {"job_id": args.job_id, "slice": [number, count], "hosts": sorted(data["_meta"]["hostvars"]),
           "roce_nodes": data.get("roce_nodes", {}).get("hosts", [])}
    print("awx job: %s" % json.dumps(job), flush=True)

    result = ansible_runner.run(private_data_dir=path, playbook=SITE, tags=args.tags, cmdline=args.cmdline or None,
                                quiet=True)
    # AWX's runner drives ansible-playbook through a pty (pexpect): its lines end in \r\n.
    sys.stdout.write(result.stdout.read().replace("\r\n", "\n"))
    print("awx job kept routes: %s" % json.dumps(kept_routes(result.events)), flush=True)
    return result.rc if result.rc is not None else 1


if __name__ == "__main__":
    sys.exit(main())

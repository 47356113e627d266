#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The full lab site.yml: a first run against a second run, side by side in one invocation.

Boots the lab (unless --no-lab-up), runs playbooks/site.yml twice against inventories/lab,
and reports each run's wall time, the recap per host, and the ratio. Goal (issue 6): the
second run reports changed=0 and takes <= 50% of the first run's time.

    .venv/bin/python benchmarks/site_rerun.py [--skip-tags verify] [--json out.json]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
RECAP = re.compile(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+skipped=(\d+)")


def run_site(extra):
    env = dict(os.environ)
    env.update(
        ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
        ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build", "collections"),
        GPUFABRIC_LAB_DIR=os.path.join(REPO, "lab"),
        ANSIBLE_NOCOLOR="1",
    )
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "inventories/lab", "playbooks/site.yml"] + extra
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - start
    recap = {}
    for line in proc.stdout.splitlines():
        m = RECAP.match(line)
        if m:
            recap[m.group(1)] = {k: int(v) for k, v in zip(("ok", "changed", "unreachable", "failed", "skipped"), m.groups()[1:])}
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-2000:])
    return {"cmd": " ".join(cmd[1:]), "rc": proc.returncode, "seconds": round(elapsed, 1), "recap": recap}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-tags", default="", help="e.g. verify, to time the rollout without the perftest matrix")
    parser.add_argument("--no-lab-up", action="store_true", help="use a lab that is already up (and leave it up)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    extra = ["--skip-tags", args.skip_tags] if args.skip_tags else []
    labctl = [sys.executable, os.path.join(REPO, "lab", "labctl.py")]
    if not args.no_lab_up:
        subprocess.run(labctl + ["up"], check=True)
    try:
        first = run_site(extra)
        second = run_site(extra)
        # The verification matrix alone, for the round-count projection in benchmarks/README.md.
        matrix = run_site(["--tags", "verify"])
    finally:
        if not args.no_lab_up:
            subprocess.run(labctl + ["down"], check=False)
    changed_second = sum(h["changed"] for h in second["recap"].values())
    ratio = second["seconds"] / first["seconds"] if first["seconds"] else None
    result = {
        "first": first,
        "second": second,
        "second_changed_total": changed_second,
        "second_over_first": round(ratio, 3) if ratio else None,
        "goal_changed_0": changed_second == 0,
        "goal_half_time": ratio is not None and ratio <= 0.5,
        "verify_only": matrix,
    }
    print("site.yml on the lab (%s)" % (("--skip-tags " + args.skip_tags) if args.skip_tags else "all phases"))
    print("  run 1: %6.1f s  rc=%d  %s" % (first["seconds"], first["rc"], {h: r["changed"] for h, r in first["recap"].items()}))
    print("  run 2: %6.1f s  rc=%d  %s" % (second["seconds"], second["rc"], {h: r["changed"] for h, r in second["recap"].items()}))
    print("  run 2 / run 1 = %s; changed on run 2 = %d" % (result["second_over_first"], changed_second))
    nodes = len([h for h in matrix["recap"] if h != "localhost"])
    print("  --tags verify alone (the RDMA matrix, %d nodes): %6.1f s  rc=%d" % (nodes, matrix["seconds"], matrix["rc"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0 if first["rc"] == 0 and second["rc"] == 0 and matrix["rc"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

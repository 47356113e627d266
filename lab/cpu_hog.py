#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A bounded CPU hog for testing the lab on a loaded machine.

    cpu_hog.py run  --procs N --seconds T --pidfile F [--load-log L] [--interval S]
    cpu_hog.py stop --pidfile F

``run`` starts N busy processes and samples the load average into L every S seconds until T
seconds have passed or it is told to stop (SIGTERM, SIGINT, SIGHUP), then stops every busy
process and prints what the load was. The hog cannot outlive its bound: each busy process
checks the deadline itself and exits when its parent is gone, so even a ``kill -9`` of ``run``
leaves nothing spinning for longer than T. ``stop`` ends a ``run`` and its busy processes by the
PIDs recorded in F (and nothing else), for callers that must be sure whatever happened.
"""

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time


def spin(deadline, parent):
    """One busy process: burn a core until the deadline or until its parent is gone."""
    n = 0
    while time.time() < deadline:
        n += 1
        if n % 200000 == 0 and os.getppid() != parent:
            return


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def sample(log):
    one, five, fifteen = loadavg()
    line = "%s load %.2f %.2f %.2f" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), one, five, fifteen)
    if log:
        with open(log, "a") as f:
            f.write(line + "\n")
    return one


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def cmd_run(args):
    started = time.time()
    deadline = started + args.seconds
    stop = {"why": None}

    def on_signal(signum, _frame):
        stop["why"] = signal.Signals(signum).name

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)

    children = []
    ones = []
    try:
        for _spin in range(args.procs):
            children.append(subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "_spin", repr(deadline), str(os.getpid())],
                stdin=subprocess.DEVNULL,
            ))
        with open(args.pidfile, "w") as f:
            json.dump({"run": os.getpid(), "busy": [c.pid for c in children], "deadline": deadline}, f)
        print("cpu_hog: %d busy processes for at most %ds (pids in %s)" % (args.procs, args.seconds, args.pidfile), flush=True)
        parent = os.getppid()
        while stop["why"] is None and time.time() < deadline:
            ones.append(sample(args.load_log))
            end = min(deadline, time.time() + args.interval)
            while stop["why"] is None and time.time() < end:
                time.sleep(0.5)
                if os.getppid() != parent:
                    stop["why"] = "caller gone"
    finally:
        for c in children:
            with contextlib.suppress(OSError):
                c.terminate()
        for c in children:
            try:
                c.wait(timeout=5)
            except subprocess.TimeoutExpired:
                c.kill()
                c.wait()
        with contextlib.suppress(OSError):
            os.unlink(args.pidfile)
        if ones:
            summary = "cpu_hog: stopped after %ds (%s); 1-min load over %d samples: min %.2f, mean %.2f, max %.2f" % (
                time.time() - started, stop["why"] or "time bound reached", len(ones), min(ones), sum(ones) / len(ones), max(ones))
        else:
            summary = "cpu_hog: stopped after %ds (%s), no sample taken" % (time.time() - started, stop["why"] or "time bound reached")
        if args.load_log:
            with open(args.load_log, "a") as f:
                f.write(summary + "\n")
        print(summary, flush=True)


def cmd_stop(args):
    try:
        with open(args.pidfile) as f:
            pids = json.load(f)
    except (OSError, ValueError):
        print("cpu_hog: no hog recorded in %s" % args.pidfile)
        return
    # run stops its own busy processes when told; the busy PIDs are ended directly only if run
    # could not (killed hard), and only while they are still the hog's (same command line).
    run = pids.get("run")
    if run and pid_alive(run):
        os.kill(run, signal.SIGTERM)
        for _attempt in range(100):
            if not pid_alive(run):
                break
            time.sleep(0.1)
    for pid in pids.get("busy", []):
        with contextlib.suppress(OSError):
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
            if any(a.endswith(b"cpu_hog.py") for a in argv) and b"_spin" in argv:
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.unlink(args.pidfile)
    print("cpu_hog: stopped (pids from %s)" % args.pidfile)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "_spin":
        spin(float(sys.argv[2]), int(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description="bounded CPU hog for the lab's loaded test")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run", help="run N busy processes for at most T seconds, sampling the load")
    p.add_argument("--procs", type=int, default=10)
    p.add_argument("--seconds", type=int, required=True)
    p.add_argument("--pidfile", required=True)
    p.add_argument("--load-log", default=None)
    p.add_argument("--interval", type=int, default=30)
    p = sub.add_parser("stop", help="stop a run by the PIDs it recorded")
    p.add_argument("--pidfile", required=True)
    args = parser.parse_args()
    if args.cmd == "run":
        if args.procs < 1 or args.seconds < 1:
            parser.error("--procs and --seconds must be at least 1")
        cmd_run(args)
    else:
        cmd_stop(args)


if __name__ == "__main__":
    main()

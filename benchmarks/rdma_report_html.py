#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTML report of rdma_verify at fleet scale: for N nodes x R rails (the generated matrix of the report tests, with
known-good isolation verdicts, tests/unit/fixtures/rdma_verify/report_culprits.py), the page's size, the time
render_html takes (best of --repeat, in-process) and, with --browser, what headless Chromium takes to open the page: in
the page, from navigation start to the page laid out after its script drew the heatmap (performance.now() read by a
script appended to a copy of the page), and the wall clock of the whole --dump-dom run (a browser start included), best and median of
--repeat.

    .venv/bin/python benchmarks/rdma_report_html.py --nodes 1000 --rails 8 --browser

--module renders with another copy of _rdma_report_html.py (e.g. an older one from git show), to compare two versions
side by side on the same matrix. Not a test: the machine is shared; the load average is printed.
"""

import argparse
import importlib.util
import os
import re
import sys
import tempfile
import time

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
sys.path.insert(0, os.path.join(REPO, ".build", "collections"))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _render(rh, matrix):
    t0 = time.process_time()
    text = rh.render_html(matrix, "rdma_verify", 90)
    return time.process_time() - t0, text


def _open(report_browser, browser, page):
    """One --dump-dom run: (wall clock, seconds the page took to be laid out after its script, nodes drawn)."""
    t0 = time.monotonic()
    dom = report_browser.chromium(browser, "--window-size=1400,1000", "--dump-dom", "file://" + page)
    wall = time.monotonic() - t0
    return wall, float(re.search(r'data-ms="([0-9.]+)"', dom).group(1)) / 1000.0, re.search(r'data-heatmap-nodes="([0-9]+)"', dom).group(1)


def _best_median(values):
    return "best %.2f s, median %.2f s" % (min(values), sorted(values)[len(values) // 2])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--rails", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--module", default=os.path.join(REPO, "plugins", "module_utils", "_verify", "rdma_report_html.py"))
    ap.add_argument("--browser", action="store_true", help="also time headless Chromium's load of the page")
    args = ap.parse_args()
    rh = _load("rdma_report_html_under_test", args.module)
    rc = _load("report_culprits", os.path.join(REPO, "tests", "unit", "fixtures", "rdma_verify", "report_culprits.py"))
    matrix = rc.isolated_fleet_matrix(args.nodes, args.rails)
    runs = [_render(rh, matrix) for dummy in range(args.repeat)]
    text = runs[-1][1]
    size = len(text.encode())
    print("load average %.2f; %s" % (os.getloadavg()[0], os.path.relpath(args.module, REPO)))
    print("%d nodes x %d rails: %d bytes (%.1f KB), render_html %.3f s of CPU (best of %d)"
          % (args.nodes, args.rails, size, size / 1000.0, min(r[0] for r in runs), args.repeat))
    if args.browser:
        import report_browser  # noqa: PLC0415 (only with --browser)

        browser = report_browser.find_browser()
        if not browser:
            sys.exit("chromium-headless-shell is not installed: run lab/install-system-deps.sh (make deps)")
        # offsetHeight makes the browser lay the page out first: the time includes the layout of the cells drawn
        probe = "<script>document.body.setAttribute('data-ms', String(document.body.offsetHeight && performance.now()));</script>"
        with tempfile.TemporaryDirectory() as tmp:
            page = os.path.join(tmp, "rdma_verify.html")
            with open(page, "w") as f:
                f.write(text.replace("</body></html>", probe + "</body></html>"))
            opened = [_open(report_browser, browser, page) for dummy in range(args.repeat)]
        print("Chromium: page laid out after its script %s (%s nodes drawn); whole run %s"
              % (_best_median([o[1] for o in opened]), opened[0][2], _best_median([o[0] for o in opened])))


if __name__ == "__main__":
    main()

# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_verify's HTML report in Debian's headless Chromium: the DOM after the page's script ran (--dump-dom) and a
screenshot. Used by tests/integration/test_rdma_report_browser.py (a saved lab report and a generated fleet) and, as a
command, by molecule/lab/verify.yml on the report the lab run has just written:

    python tests/integration/report_browser.py <report.html> <artifact dir>

prints one JSON object: the attributes the page's script set on <body>, the heatmap's rows (node, cell classes), the
section headings, and the paths of the DOM dump and screenshot kept in <artifact dir>. Exit 2 when no browser is found.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

BROWSERS = ("chromium-headless-shell", "/usr/lib/chromium/chromium-headless-shell")


def find_browser():
    """The headless Chromium's path, or None."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(browser, *args):
    """Run headless Chromium with ``args``; its stdout. As root in a container: no sandbox; a profile of its own."""
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               "--user-data-dir=%s" % profile, *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)  # noqa: S603
    if proc.returncode:
        raise RuntimeError("%s exited %d: %s" % (" ".join(cmd), proc.returncode, proc.stderr[-3000:]))
    return proc.stdout


def render(browser, page, artifacts, name):
    """Open ``page`` (a file) in the browser: ``(dom text, screenshot path)``, both kept in ``artifacts`` as
    ``<name>.dom.html`` and ``<name>.png``. The screenshot must be a real picture, not an empty page."""
    os.makedirs(artifacts, exist_ok=True)
    url = "file://" + os.path.abspath(page)
    dom = chromium(browser, "--dump-dom", url)
    with open(os.path.join(artifacts, name + ".dom.html"), "w") as f:
        f.write(dom)
    shot = os.path.join(artifacts, name + ".png")
    if os.path.exists(shot):
        os.unlink(shot)
    chromium(browser, "--window-size=1400,1000", "--screenshot=%s" % shot, url)
    with open(shot, "rb") as f:
        png = f.read()
    if png[:8] != b"\x89PNG\r\n\x1a\n" or len(png) <= 20000:
        raise RuntimeError("screenshot %s: %d bytes, not a rendered page" % (shot, len(png)))
    return dom, shot


def _load_html_tree():
    # The unit tests' parser (strict: every element closed, in order), loaded by path: it needs nothing but the
    # standard library, and this command runs without the collection on sys.path.
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit", "fixtures", "rdma_verify", "html_tree.py")
    spec = importlib.util.spec_from_file_location("html_tree", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


html_tree = _load_html_tree()


def summary(dom):
    """What the lab's check reads: <body>'s data attributes, the heatmap rows and the section headings."""
    doc = html_tree.parse_html(dom)
    text_of = html_tree.text_of
    body = next(doc.iter("body"))
    rows = []
    for box in (d for d in doc.iter("div") if d.get("id") == "heat"):
        for table in box.findall("table"):
            for tr in table.find("tbody").findall("tr"):
                rows.append({"node": text_of(tr[0]).strip(), "cells": [td.get("class") for td in tr[1:]]})
    return {
        "body": {k: v for k, v in body.attrib.items() if k.startswith("data-")},
        "heat_rows": rows,
        "sections": {h.get("id"): text_of(h).strip() for h in doc.iter("h2") if h.get("id")},
    }


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    browser = find_browser()
    if not browser:
        sys.stderr.write("chromium-headless-shell is not installed: run lab/install-system-deps.sh (make deps)\n")
        return 2
    page, artifacts = argv[1], argv[2]
    t0 = time.monotonic()
    dom, shot = render(browser, page, artifacts, os.path.splitext(os.path.basename(page))[0])
    out = summary(dom)
    out.update({"screenshot": shot, "seconds": round(time.monotonic() - t0, 1)})
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

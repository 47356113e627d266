# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_verify's HTML report in a real browser (issue 19): Debian's headless Chromium (chromium-headless-shell,
installed by lab/install-system-deps.sh) opens a saved report of a real two-node lab run and a generated 1,000-node x
8-rail one from file://, and the test reads the DOM *after the page's script ran* (--dump-dom): the heatmap's cells, their
classes and tooltips, the order the script sorts the nodes in, and the attributes it sets on <body>.

Kept as CI artifacts under .build/artifacts/rdma-report/: both pages (lab.html, fleet.html), their DOM after the
script (*.dom.html) and screenshots at 1400x1000 (lab.png, fleet.png).

The report a lab run has just written goes through the same browser in molecule/lab/verify.yml (report_browser.py as
a command). Skipped when the browser is absent, except in CI (CI=true), where a missing browser fails the test.
"""

import importlib.util
import os

import pytest
import report_browser
from _runner import REPO

ARTIFACTS = os.path.join(REPO, ".build", "artifacts", "rdma-report")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# tests/unit/conftest.py puts the collection (the .build/collections link to this checkout) on sys.path.
_load("unit_conftest", os.path.join(REPO, "tests", "unit", "conftest.py"))
fx = _load("report_fixtures", os.path.join(REPO, "tests", "unit", "fixtures", "rdma_verify", "report_fixtures.py"))
from ansible_collections.gpufabric.roce.plugins.module_utils import _rdma_report_html as rh  # noqa: E402


def _browser():
    path = report_browser.find_browser()
    if path:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail("chromium-headless-shell is not installed, and CI=true: run lab/install-system-deps.sh (make deps)")
    pytest.skip("chromium-headless-shell is not installed (Debian package; lab/install-system-deps.sh installs it, CI=true fails instead)")
    return None


def _render(browser, name, matrix):
    os.makedirs(ARTIFACTS, exist_ok=True)
    page = os.path.join(ARTIFACTS, name + ".html")
    with open(page, "w") as f:
        f.write(rh.render_html(matrix))
    dom, _shot = report_browser.render(browser, page, ARTIFACTS, name)
    return fx.parse_html(dom)


def _heat_rows(doc):
    (box,) = [d for d in doc.iter("div") if d.get("id") == "heat"]
    return [tr for table in box.findall("table") for tr in table.find("tbody").findall("tr")]


def test_lab_report_in_chromium():
    browser = _browser()
    doc = _render(browser, "lab", fx.lab_matrix())
    body = doc.find("html/body")
    assert body.get("data-heatmap-cells") == "2" and body.get("data-heatmap-nodes") == "2"
    rows = _heat_rows(doc)
    assert [fx.text_of(tr[0]) for tr in rows] == ["node1", "node2"]
    cells = [tr[1] for tr in rows]
    # link speed unknown (rxe): relative to the median (the dot); both pairs passed while rxe counted retransmissions
    assert [c.get("class") for c in cells] == ["c b2 rel flag", "c b0 rel flag"]
    assert cells[0].get("title").startswith("node1: % of link n/a (link speed unknown); 0.052 Gb/s = 81.7 % of the rail median 0.063 Gb/s")
    assert "as client to node2" in cells[0].get("title") and "flagged" in cells[0].get("title")
    status = [s for s in doc.iter("span") if s.get("id") == "heat-status"][0]
    assert fx.text_of(status) == "2 of 2 nodes shown, 2 cells"


def test_fleet_report_in_chromium():
    browser = _browser()
    matrix = fx.fleet_matrix()
    matrix["pcie"] = {"node0042": ["mlx5_3 0000:c1:00.0: link downtrained: x8 16.0 GT/s, capable of x16 32.0 GT/s"]}
    # Not timed here (timings belong in benchmarks/); the render has the browser's own timeout (report_browser.py).
    doc = _render(browser, "fleet", matrix)
    body = doc.find("html/body")
    assert body.get("data-heatmap-cells") == "8000" and body.get("data-heatmap-nodes") == "1000"
    rows = _heat_rows(doc)
    assert len(rows) == 1000 and all(len(tr) == 9 for tr in rows)
    tables = [t for d in doc.iter("div") if d.get("id") == "heat" for t in d.findall("table")]
    assert len(tables) == 20 and [fx.text_of(th) for th in tables[0].find("thead/tr")] == ["node"] + [str(i) for i in range(1, 9)]
    # worst first: the two nodes with every rail failed (the down node and its client), then the down node's server
    # and the slow node's peer (in a failing pair, their own cells fine), then the slow node, ...
    names = [fx.text_of(tr[0]) for tr in rows]
    assert names[:2] == ["node0006", "node0007"] and set(names[2:5]) == {"node0008", "node0123", "node0124"}
    assert all(rows[0][r].get("class") == "c cf" for r in range(1, 9))
    slow = rows[names.index("node0123")]
    assert slow[4].get("class") == "c cf" and slow[4].get("title").startswith("node0123 \u00b7 rail rail3: 35 % of link (140 Gb/s) as client to node0124")
    assert "FAILED: ib_write_bw: node0123: ib_write_bw: average bandwidth 140.00 Gb/s is 35.00% of the ens3f0 link" in slow[4].get("title")
    assert all("rel" in tr[8].get("class").split() for tr in rows if fx.text_of(tr[0]) not in ("node0006", "node0007"))
    assert sum(1 for tr in rows for td in tr[1:] if "flag" in td.get("class").split()) == 82
    assert sum(1 for tr in rows if "bad" in tr[0].get("class").split()) == 5
    assert fx.text_of([h for h in doc.iter("h2") if h.get("id") == "pcie"][0]) == "PCIe findings"

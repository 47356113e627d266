# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_verify's HTML report in a real browser (issues 19 and 42): Debian's headless Chromium (chromium-headless-shell,
installed by lab/install-system-deps.sh) opens a saved report of a real two-node lab run and a generated 1,000-node x
8-rail one from file://, and the test reads the DOM *after the page's script ran* (--dump-dom): the heatmap's cells, their
classes and tooltips, the order the script sorts the nodes in, and the attributes it sets on <body>.

At fleet size the page must lead with the answer: a generated 1,000 x 8 run with its isolation verdicts is opened once
at 1280x800, and a probe script appended to a copy of the page records where the culprits, their victims, the run's
header and the links to the other reports are laid out: all inside that first screen, uncovered, a culprit unlike a
victim.

Kept as CI artifacts under .build/artifacts/rdma-report/: the pages (lab.html, fleet.html, first-screen.html), their DOM
after the script (*.dom.html) and screenshots (lab.png, fleet.png at 1400x1000; first-screen.png at 1280x800).

The report a lab run has just written goes through the same browser in molecule/lab/verify.yml (report_browser.py as
a command). Skipped when the browser is absent, except in CI (CI=true), where a missing browser fails the test.
"""

import importlib.util
import json
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
rc = _load("report_culprits", os.path.join(REPO, "tests", "unit", "fixtures", "rdma_verify", "report_culprits.py"))
from ansible_collections.gpufabric.roce.plugins.module_utils._verify import rdma_report_html as rh  # noqa: E402


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


def test_fleet_report_in_chromium(monkeypatch):
    browser = _browser()
    matrix = fx.fleet_matrix()
    matrix["pcie"] = {"node0042": ["mlx5_3 0000:c1:00.0: link downtrained: x8 16.0 GT/s, capable of x16 32.0 GT/s"]}
    # Every node drawn, as a user who unticks "only failed, flagged or below the bar" sees it.
    monkeypatch.setattr(rh, "ONLY_FAILED_ABOVE", 10**6)
    # Not timed here (timings belong in benchmarks/); the render has the browser's own timeout (report_browser.py).
    doc = _render(browser, "fleet", matrix)
    body = doc.find("html/body")
    assert body.get("data-heatmap-cells") == "8000" and body.get("data-heatmap-nodes") == "1000"
    rows = _heat_rows(doc)
    assert len(rows) == 1000 and all(len(tr) == 9 for tr in rows)
    tables = [t for d in doc.iter("div") if d.get("id") == "heat" for t in d.findall("table")]
    assert len(tables) == 20 and [fx.text_of(th) for th in tables[0].find("thead/tr")] == ["node"] + ["rail%d" % i for i in range(8)]
    # worst first: the culprit (down: every pair failed), the suspects (the slow node and its peer: no isolation to tell
    # them apart), then the down node's victims (its client, every cell failed with it, and its server), ...
    names = [fx.text_of(tr[0]) for tr in rows]
    assert names[:5] == ["node0007", "node0123", "node0124", "node0006", "node0008"]
    assert [tr[0].get("class") for tr in rows[:6]] == ["n bad culprit", "n bad suspect", "n bad suspect", "n bad victim", "n bad victim", "n"]
    assert all(rows[0][r].get("class") == "c cf" for r in range(1, 9))
    assert all(rows[3][r].get("class") == "c cv" for r in range(1, 9))  # failed, as client to the culprit
    assert "FAILED with node0007, the likely culprit: ping: ping node0007: rc=1, 0 of 3 replies" in rows[3][1].get("title")
    slow = rows[names.index("node0123")]
    assert slow[4].get("class") == "c cf" and slow[4].get("title").startswith("node0123 \u00b7 rail rail3: 35 % of link (140 Gb/s) as client to node0124")
    assert "FAILED: ib_write_bw: node0123: ib_write_bw: average bandwidth 140.00 Gb/s is 35.00% of the ens3f0 link" in slow[4].get("title")
    assert all("rel" in tr[8].get("class").split() for tr in rows if fx.text_of(tr[0]) not in ("node0006", "node0007"))
    assert sum(1 for tr in rows for td in tr[1:] if "flag" in td.get("class").split()) == 82
    assert sum(1 for tr in rows if "bad" in tr[0].get("class").split()) == 5
    assert fx.text_of([h for h in doc.iter("h2") if h.get("id") == "pcie"][0]) == "PCIe findings"


# Runs after the page's own script (it is appended after it): where the things a reader needs first are laid out.
_PROBE = """<script>(function () {
  function box(el) {
    var r = el.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2, hit = document.elementFromPoint(x, y);
    return {text: el.textContent, top: r.top, bottom: r.bottom, left: r.left, right: r.right,
            covered: !(hit && (hit === el || el.contains(hit))), background: getComputedStyle(el).backgroundColor};
  }
  function all(sel) { return Array.prototype.map.call(document.querySelectorAll(sel), box); }
  document.body.setAttribute('data-probe', JSON.stringify({
    width: window.innerWidth, height: window.innerHeight, verdict: all('#verdict'),
    culprits: all('#culprits tr[data-role=culprit] td:first-child .nm'), victims: all('#culprits td.with .nm.victim'),
    run: all('#run dd'), reports: all('#run a[data-report]')}));
})();</script>"""


def test_fleet_culprits_in_the_first_screen():
    """1,000 nodes x 8 rails: the culprits, their victims, the run and the other reports in the first screen (issue 42)."""
    browser = _browser()
    matrix = rc.isolated_fleet_matrix()
    os.makedirs(ARTIFACTS, exist_ok=True)
    page = os.path.join(ARTIFACTS, "first-screen.html")
    text = rh.render_html(matrix, "rdma_verify", 90)
    with open(page, "w") as f:
        f.write(text)
    probed = os.path.join(ARTIFACTS, "first-screen.probe.html")
    with open(probed, "w") as f:
        f.write(text.replace("</body></html>", _PROBE + "</body></html>"))
    # One page load: the DOM after the scripts and the screenshot of the same first screen.
    dom = report_browser.chromium(browser, "--window-size=1280,800", "--screenshot=%s" % os.path.join(ARTIFACTS, "first-screen.png"),
                                  "--dump-dom", "file://" + probed)
    with open(os.path.join(ARTIFACTS, "first-screen.dom.html"), "w") as f:
        f.write(dom)
    doc = fx.parse_html(dom)
    probe = json.loads(doc.find("html/body").get("data-probe"))
    assert (probe["width"], probe["height"]) == (1280, 800)

    def on_screen(el):
        inside = el["top"] >= 0 and el["left"] >= 0 and el["bottom"] <= probe["height"] and el["right"] <= probe["width"]
        return inside and not el["covered"]

    assert [el["text"] for el in probe["verdict"]] == ["FAILED"] and on_screen(probe["verdict"][0])
    # the culprits, each with the victims that failed only with it, and nothing else named
    assert [el["text"] for el in probe["culprits"]] == ["node0007", "node0123"]
    assert sorted(el["text"] for el in probe["victims"]) == ["node0006", "node0008", "node0124"]
    assert all(on_screen(el) for el in probe["culprits"] + probe["victims"]), probe
    # told apart at a glance: the culprits red, the victims grey
    assert {el["background"] for el in probe["culprits"]} == {"rgb(178, 24, 43)"}
    assert {el["background"] for el in probe["victims"]} == {"rgb(242, 242, 242)"}
    # the run's header and the reports beside the page
    run = {dd.get("data-key"): fx.text_of(dd) for dd in doc.iter("dd")}
    assert run["fabric"] == "prod-a" and run["time"] == "2026-11-29T07:30:00Z"
    assert run["thresholds"].startswith("min_bw_pct_of_link 90 \u00b7 min_bw_gbps off \u00b7 max_lat_us off")
    assert "perftest 24.07.0" in run["versions"] and "gpufabric.roce " in run["versions"]
    assert all(on_screen(el) for el in probe["run"]), probe["run"]
    links = [a for a in doc.iter("a") if a.get("data-report")]
    assert [a.get("href") for a in links] == ["./rdma_verify.json", "./rdma_verify.xml", "./rdma_verify.txt"]
    assert [el["text"] for el in probe["reports"]] == ["rdma_verify.json", "rdma_verify.xml", "rdma_verify.txt"]
    assert all(on_screen(el) for el in probe["reports"])
    # above 100 nodes the heatmap opens on the nodes that failed, were flagged or fell below the bar: culprits first
    body = doc.find("html/body")
    (only,) = [i for i in doc.iter("input") if i.get("id") == "heat-only"]
    assert only.get("checked") is not None
    assert body.get("data-heatmap-nodes") == "87" and body.get("data-heatmap-cells") == "696"
    rows = _heat_rows(doc)
    assert [(fx.text_of(tr[0]), tr[0].get("class")) for tr in rows[:5]] == [
        ("node0007", "n bad culprit"), ("node0123", "n bad culprit"), ("node0006", "n bad victim"), ("node0008", "n bad victim"),
        ("node0124", "n bad victim")]

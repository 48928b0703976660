"""The history website in a real headless Chromium, served from 127.0.0.1 with no network.

Opens the landing page, then the ratio graph of the configured point (tests/test_site.py's
SITE) through the same link the PR comment uses (bot/tell/comment.py ``graph_url``), and checks that
flot drew the measured value in the series' colour at the right place on the canvas, and the
reference line at ratio 1 across the plot; that the landing view's colours are the change rule's
(bot/site/change.py) with perfbot.toml's thresholds; that commits link where bot/site/commits.py
says, from the landing view, the commits page and a click on a graph's point; that the console
stayed clean, that no request failed and that every request stayed on this machine.
Screenshots land in test-artifacts/ (git-ignored) for CI to keep.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from browser_helpers import ARGS, CHROMIUM, missing_browser
from data_helpers import SyntheticResults, synthetic
from site_builds import (
    HISTORY,
    KEYED,
    NIGHTLY,
    REPO,
    SITE,
    Built,
    history_site,
    pr_site,
    step_site,
    whole_history_site,
)
from test_site import measured
from test_site_landing import SETTINGS, expected_kind, threshold_of

from bot.results.types import BENCH_KERNEL, BENCH_RATIO, PointKey
from bot.site import SiteReport, start_server
from bot.site.links import graph_href
from bot.tell.rows import graph_url

# The shared fixtures: real asv output (tests/data_helpers.py), the sites built once a session
# (tests/site/site_builds.py).
__all__ = ["history_site", "pr_site", "step_site", "synthetic", "whole_history_site"]

MISSING = missing_browser()
if MISSING and os.environ.get("PERFBOT_REQUIRE_BROWSER") == "1":  # CI: a skip would hide it
    pytest.fail(f"PERFBOT_REQUIRE_BROWSER=1 but {MISSING}", pytrace=False)
ARTIFACTS = REPO / "test-artifacts"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
#: Chromium's advice when a canvas is read back more than once: the tests' own pixel reads.
OWN_READBACK = "Canvas2D: Multiple readback operations using getImageData"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(MISSING is not None, reason=MISSING or ""),
]


@dataclass
class Traffic:
    """Everything the page did, recorded from the browser's side."""

    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    def attach(self, page: Any) -> None:
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("requestfailed", self._failed)
        page.on(
            "response",
            lambda r: self.failed.append(f"{r.url}: HTTP {r.status}") if r.status >= 400 else None,
        )
        page.on(
            "console",
            lambda m: (
                self.console_errors.append(m.text)
                if m.type in ("error", "warning") and not m.text.startswith(OWN_READBACK)
                else None
            ),
        )
        page.on("pageerror", lambda e: self.console_errors.append(f"uncaught: {e}"))

    def _failed(self, request: Any) -> None:
        """A failed request, but the tab icon's load that Chromium itself cancelled: it fetches
        the icon on its own schedule and aborts it when the page settles first (seen once in
        CI: asv's swallow.ico, net::ERR_ABORTED). An icon the server refuses is a response
        >= 400, and still fails."""
        icon = request.url.split("?")[0].endswith(".ico")
        if icon and request.failure == "net::ERR_ABORTED":
            return
        self.failed.append(f"{request.url}: {request.failure}")


@pytest.fixture(scope="module")
def site(pr_site: Built) -> SiteReport:
    return pr_site.report


@pytest.fixture(scope="module")
def history(history_site: SiteReport) -> SiteReport:
    """The site's real history (data/h200, then the six Thunder nightlies), with the
    wheel-keyed pair of the package-under-test command (built once a session)."""
    return history_site


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[tuple[Any, Traffic]]:
    # No proxy and no service workers: nothing may answer for another host.
    context = browser.new_context(viewport={"width": 1280, "height": 800}, service_workers="block")
    context.set_default_timeout(30_000)
    tab = context.new_page()
    traffic = Traffic()
    traffic.attach(tab)
    yield tab, traffic
    context.close()


# What flot drew: the series, and the colour of the pixels around each of its points.
PLOT_PIXELS = """() => {
  const plot = $('#main-graph').data('plot');
  const canvas = $('#main-graph canvas.flot-base')[0];
  const w = canvas.width, h = canvas.height;
  const px = canvas.getContext('2d').getImageData(0, 0, w, h).data;  // one readback
  let painted = 0;
  for (let i = 3; i < px.length; i += 4) { if (px[i] > 0) painted++; }
  const scale = w / canvas.clientWidth;
  const off = plot.getPlotOffset();
  const series = plot.getData().map(s => {
    const rgb = s.color.match(/\\d+/g).map(Number);
    const points = s.data.map(([x, y]) => {
      const cx = Math.round((off.left + s.xaxis.p2c(x)) * scale);
      const cy = Math.round((off.top + s.yaxis.p2c(y)) * scale);
      const r = Math.ceil(6 * scale);
      let hits = 0;
      for (let j = Math.max(0, cy - r); j <= Math.min(h - 1, cy + r); j++) {
        for (let i = Math.max(0, cx - r); i <= Math.min(w - 1, cx + r); i++) {
          const k = 4 * (j * w + i);
          const d = Math.abs(px[k] - rgb[0]) + Math.abs(px[k + 1] - rgb[1])
                  + Math.abs(px[k + 2] - rgb[2]);
          if (px[k + 3] > 200 && d < 60) hits++;
        }
      }
      // cx, cy: where the point is on the page, relative to the canvas (CSS pixels).
      return {x: x, y: y, hits: hits, cx: cx / scale, cy: cy / scale};
    });
    return {label: s.label, color: s.color, points: points};
  });
  return {painted: painted, size: [w, h], series: series};
}"""


# Where the reference line is: the pixels of its colour along the row of y = value.
def _pixels_of(option: str) -> str:
    """The start of a page function that reads the main graph's pixels: the plot, its canvas
    read back once, and ``hit(k)``: whether pixel ``k`` is the colour of flot option
    ``option`` (perfbot-reference.js draws in it)."""
    return (
        """
  const plot = $('#main-graph').data('plot');
  const canvas = $('#main-graph canvas.flot-base')[0];
  const w = canvas.width, h = canvas.height;
  const px = canvas.getContext('2d').getImageData(0, 0, w, h).data;
  const scale = w / canvas.clientWidth;
  const off = plot.getPlotOffset();
  const rgb = plot.getOptions().OPTION.color.match(/[0-9a-f]{2}/gi)
    .map(x => parseInt(x, 16));
  const hit = (k) => px[k + 3] > 200 && Math.abs(px[k] - rgb[0]) + Math.abs(px[k + 1] - rgb[1])
    + Math.abs(px[k + 2] - rgb[2]) < 60;
"""
    ).replace("OPTION", option)


REFERENCE_PIXELS = (
    "(value) => {"
    + _pixels_of("perfbotReference")
    + """  const axis = plot.getAxes().yaxis;
  const cy = Math.round((off.top + axis.p2c(value)) * scale);
  const x0 = Math.ceil(off.left * scale) + 2;
  const x1 = Math.floor((off.left + plot.width()) * scale) - 2;
  const y0 = Math.ceil(off.top * scale) + 2;
  const y1 = Math.floor((off.top + plot.height()) * scale) - 2;
  let columns = 0, anywhere = 0;
  for (let i = x0; i < x1; i++) {
    let on = false;
    for (let j = Math.max(0, cy - 3); j <= Math.min(h - 1, cy + 3); j++) {
      if (hit(4 * (j * w + i))) { on = true; }
    }
    if (on) { columns++; }
    for (let j = y0; j < y1; j++) { if (hit(4 * (j * w + i))) { anywhere++; } }
  }
  return {min: axis.min, max: axis.max, fraction: columns / (x1 - x0), anywhere: anywhere};
}"""
)


def _assert_reference_line(tab: Any) -> None:
    line = tab.evaluate(REFERENCE_PIXELS, 1.0)
    assert line["min"] < 1.0 < line["max"], f"ratio 1 is off the y axis: {line}"
    # A dashed line (8 px on, 4 off): two thirds of the plot's columns, never much less.
    assert line["fraction"] > 0.55, f"no line at ratio 1 across the plot: {line}"


def _shot(tab: Any, name: str, *, full_page: bool = False) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    tab.screenshot(path=str(path), full_page=full_page)
    return path


def _assert_clean(traffic: Traffic) -> None:
    assert traffic.requests
    hosts = {str(urlsplit(u).hostname) for u in traffic.requests}
    assert hosts <= LOCAL_HOSTS, f"requests left the machine: {sorted(hosts - LOCAL_HOSTS)}"
    assert traffic.failed == []
    assert traffic.console_errors == []


def _plot(tab: Any) -> dict[str, Any]:
    tab.wait_for_function("() => { const p = $('#main-graph').data('plot');"
                          " return p && p.getData().length > 0; }")  # fmt: skip
    tab.wait_for_load_state("networkidle")
    assert BENCH_RATIO in tab.locator("#title").inner_text()
    assert tab.locator("#perfbot-landing").is_hidden()
    drawn: dict[str, Any] = tab.evaluate(PLOT_PIXELS)
    return drawn


def _assert_draws(drawn: dict[str, Any], value: float, n_commits: int) -> None:
    assert drawn["painted"] > 0, "the canvas is blank"
    (series,) = drawn["series"]  # one contender x dtype x shape: one line
    p = SITE.point
    assert series["label"] == f"dtype-{p.dtype}; shape-{p.shape}; variant-{p.variant}"
    assert len(series["points"]) == n_commits
    newest = max(series["points"], key=lambda p: p["x"])
    assert newest["y"] == value, "the graph does not draw the measured ratio"
    for point in series["points"]:
        assert point["hits"] > 0, f"no pixel of the series colour at {point}"


def test_the_ratio_graph_is_drawn_offline(site: SiteReport, page: tuple[Any, Traffic]) -> None:
    tab, traffic = page
    params = {"variant": SITE.point.variant, "dtype": SITE.point.dtype, "shape": SITE.point.shape}
    value = measured(SITE.results, SITE.machine, BENCH_RATIO, params)
    with start_server(site.out_dir) as server:
        # The site root shows the landing view, the ratio first.
        tab.goto(server.url + "/")
        tab.wait_for_selector("#perfbot-landing table.points", state="visible")
        tab.wait_for_load_state("networkidle")
        assert urlsplit(tab.url).fragment == "overview"
        assert tab.locator("#title").inner_text() == "Thunder vs hand-written nvFuser"
        assert tab.locator("#summarygrid-display").is_hidden()
        row = tab.locator(f'#perfbot-landing details tr.gating[data-point="{SITE.point.label}"]')
        assert row.count() == 1
        assert tab.locator("#perfbot-landing details[open]").count() > 0
        assert f"{value:.3f}" == row.locator("a.ratio").inner_text()

        # Its ratio links to the ratio's graph, which draws the line at 1.
        row.locator("a.ratio").click()
        _assert_draws(_plot(tab), value, len(site.commits))
        _assert_reference_line(tab)

        # So does the link the PR comment carries (bot/tell/comment.py), from a fresh load.
        tab.goto("about:blank")
        tab.goto(graph_url(server.url, SITE.point, SITE.machine))
        drawn = _plot(tab)
        _assert_reference_line(tab)
        _shot(tab, "site-ratio-graph.png")
    _assert_draws(drawn, value, len(site.commits))
    _assert_clean(traffic)


def test_the_line_at_1_is_drawn_where_the_data_stays_above_it(
    site: SiteReport, page: tuple[Any, Traffic]
) -> None:
    """A point whose ratio is above 1 at every commit: asv fits the axis to the data, the
    plugin widens it to hold 1. A kernel-time graph gets no line."""
    tab, traffic = page
    point = next(
        PointKey("thunder-prims", "float32", shape)
        for shape in ("2048x8192", "16384x8192")
        if all(
            measured(
                SITE.results,
                SITE.machine,
                BENCH_RATIO,
                _params("thunder-prims", "float32", shape),
                c,
            )
            > 1.0
            for c in site.commits
        )
    )
    with start_server(site.out_dir) as server:
        tab.goto(graph_url(server.url, point, SITE.machine))
        _plot(tab)
        _assert_reference_line(tab)
        tab.goto("about:blank")
        kernel = graph_href(
            BENCH_KERNEL, _params(point.variant, point.dtype, point.shape), SITE.machine
        )
        tab.goto(f"{server.url}/{kernel}")
        tab.wait_for_function("() => { const p = $('#main-graph').data('plot');"
                              " return p && p.getData().length > 0; }")  # fmt: skip
        tab.wait_for_load_state("networkidle")
        assert tab.evaluate(REFERENCE_PIXELS, 1.0)["anywhere"] == 0
    _assert_clean(traffic)


def _params(variant: str, dtype: str, shape: str) -> dict[str, str]:
    return {"variant": variant, "dtype": dtype, "shape": shape}


# Every change cell of the landing view: its row's point, its column, class, data and colour.
CHANGE_CELLS = """() => Array.from(document.querySelectorAll('#perfbot-landing tr[data-point]'))
  .filter(tr => !tr.closest('table.beyond'))
  .flatMap(tr => Array.from(tr.querySelectorAll('td.chg')).map((td, i) => ({
    point: tr.dataset.point, column: ['ratio', 'contender', 'nvfuser'][i],
    kind: td.className.replace('chg', '').trim(), change: td.dataset.change,
    threshold: Number(td.dataset.threshold),
    background: getComputedStyle(td).backgroundColor, text: td.innerText})))"""


def test_the_landing_colours_are_the_change_rule(
    site: SiteReport, page: tuple[Any, Traffic]
) -> None:
    tab, traffic = page
    with start_server(site.out_dir) as server:
        tab.goto(server.url + "/")
        tab.wait_for_selector("#perfbot-landing table.points", state="visible")
        tab.wait_for_load_state("networkidle")
        found = tab.evaluate(CHANGE_CELLS)
        tab.locator("#perfbot-landing table.counts").scroll_into_view_if_needed()
        _shot(tab, "site-landing.png")
    assert found
    colours: dict[str, set[str]] = {}
    for cell in found:
        change = float(cell["change"]) if cell["change"] is not None else None
        assert cell["threshold"] == threshold_of(SETTINGS, cell["point"], cell["column"])
        assert cell["kind"] == expected_kind(change, cell["threshold"]), cell
        colours.setdefault(cell["kind"], set()).add(cell["background"])
        if change is not None:
            assert cell["text"] == f"{change:+.2%}"
    assert {"worse", "better", "same"} <= set(colours)
    assert all(len(c) == 1 for c in colours.values()), colours  # one colour a kind
    rgb = {
        k: tuple(int(x) for x in re.findall(r"\d+", next(iter(c)))[:3]) for k, c in colours.items()
    }
    assert len({rgb[k] for k in ("worse", "better", "same")}) == 3
    assert rgb["worse"][0] > rgb["worse"][1] and rgb["better"][1] > rgb["better"][0]  # red, green
    _assert_clean(traffic)


COMMIT_ROWS = """() => Array.from(document.querySelectorAll('#perfbot-commits tbody tr'))
  .map(tr => ({commit: tr.dataset.commit, text: tr.innerText,
               links: Array.from(tr.querySelectorAll('a')).map(a => a.href)}))"""


def _expected_links(results: Any, commit: str) -> list[str]:
    """Rule 3, restated from the provenance record alone."""
    record = json.loads(
        (results / SITE.machine / f"{commit}.provenance.jsonl").read_text().splitlines()[-1]
    )
    version = (record.get("under_test") or {}).get("version") or record["versions"]["thunder"]
    thunder = "https://github.com/Lightning-AI/lightning-thunder"
    day = re.search(r"dev(\d{4})(\d{2})(\d{2})", version)
    if day:
        return [f"{thunder}/commits/main?until={day[1]}-{day[2]}-{day[3]}"]
    return [f"{thunder}/releases/tag/{version}"]


def test_commit_links_go_to_the_packages_repository(
    history: SiteReport, page: tuple[Any, Traffic]
) -> None:
    tab, traffic = page
    folders = {c: d for d in (*HISTORY, KEYED) for c in _shas(d)}
    with start_server(history.out_dir) as server:
        # The landing view: the latest commit is the newest nightly, linked to Thunder's day.
        tab.goto(server.url + "/")
        tab.wait_for_selector("#perfbot-landing table.points", state="visible")
        tab.wait_for_load_state("networkidle")
        _shot(tab, "site-history-landing.png", full_page=True)
        latest = history.commits[-1]
        line = tab.locator("#perfbot-landing p.commit-line").first
        assert "nightly" in line.inner_text()
        hrefs = line.locator("a").evaluate_all("as => as.map(a => a.getAttribute('href'))")
        assert hrefs == [f"#commits?commit={latest[:8]}", *_expected_links(folders[latest], latest)]

        # The commits page: every commit, each with the links rule 3 allows and no other.
        tab.goto(f"{server.url}/index.html#commits")
        tab.wait_for_selector("#perfbot-commits table.commits", state="visible")
        rows = tab.evaluate(COMMIT_ROWS)
        assert {r["commit"] for r in rows} == set(history.commits)
        for r in rows:
            assert r["links"] == _expected_links(folders[r["commit"]], r["commit"]), r
            assert ("nightly" in r["text"]) == ("until=" in r["links"][0]), r

        # A click on the newest point of a ratio graph opens the commits page at that commit.
        tab.goto(graph_url(server.url, SITE.point, SITE.machine))
        drawn = _plot(tab)
        _assert_reference_line(tab)
        _shot(tab, "site-history-ratio-graph.png")
        newest = max(drawn["series"][0]["points"], key=lambda p: p["x"])
        box = tab.locator("#main-graph canvas.flot-overlay").bounding_box()
        with tab.context.expect_page() as opened:
            tab.mouse.click(box["x"] + newest["cx"], box["y"] + newest["cy"])
        commit_tab = opened.value
        commit_tab.wait_for_selector("#perfbot-commits tr.target", state="visible")
        assert urlsplit(commit_tab.url).fragment == f"commits?commit={latest[:8]}"
        target = commit_tab.locator("#perfbot-commits tr.target")
        assert target.get_attribute("data-commit") == latest
        _shot(commit_tab, "site-commits.png")
        commit_tab.close()
    _assert_clean(traffic)


def _shas(results: Any) -> list[str]:
    return [p.name[:40] for p in (results / SITE.machine).glob("*.provenance.jsonl")]


@pytest.mark.parametrize(
    ("route", "ready"),
    [
        ("#/", "#summarygrid-display .benchmark-container"),
        ("#/summarylist", "#summarylist-body table thead th.asc"),
        ("#regressions", "#regressions-body"),
    ],
)
def test_asv_views_work_offline(
    site: SiteReport, page: tuple[Any, Traffic], route: str, ready: str
) -> None:
    tab, traffic = page
    with start_server(site.out_dir) as server:
        tab.goto(f"{server.url}/index.html{route}")
        tab.wait_for_selector(ready, state="attached")
        tab.wait_for_load_state("networkidle")
        assert urlsplit(tab.url).path == "/index.html", "an asv route was sent elsewhere"
        assert urlsplit(tab.url).fragment.lstrip("/").startswith(route.strip("#/"))
        if route == "#/summarylist":  # the vendored stupidtable sorts on load and on click
            header = tab.locator("#summarylist-body table thead th").first
            header.click()
            tab.wait_for_selector("#summarylist-body table thead th.desc", state="attached")
            assert "dir=desc" in urlsplit(tab.url).fragment
        _shot(tab, f"site-view-{route.strip('#/') or 'grid'}.png")
    _assert_clean(traffic)


def test_the_regressions_page_lists_nothing_asvs_detection_is_off(
    synthetic: SyntheticResults, step_site: SiteReport, page: tuple[Any, Traffic]
) -> None:
    """SYNTHETIC TEST INPUT (tests/data_helpers.py): a 10% step of Thunder's kernel time. asv's
    own step detection is off (asv.conf.json, issue 21): its page shows no second list beside
    the watch's, though the step is there in the ratio graph."""
    report = step_site
    tab, traffic = page
    with start_server(report.out_dir) as server:
        tab.goto(f"{server.url}/#regressions")
        tab.wait_for_selector("#regressions-body", state="attached")
        tab.wait_for_load_state("networkidle")
        assert tab.locator("#regressions-body table.table tbody tr").count() == 0
        _shot(tab, "site-regressions-synthetic.png")
    _assert_clean(traffic)


#: The nightly sweep's most striking point (data/README.md): thunder-prims 2.6x the fusion.
NIGHTLY_POINT = PointKey("thunder-prims", "bfloat16", "16x49152")


@pytest.fixture(scope="module")
def whole_history(whole_history_site: SiteReport) -> SiteReport:
    """Everything real: data/h200, the six Thunder nightlies, then the whole nightly sweep
    (built once a session)."""
    return whole_history_site


def test_the_nightly_sweep_on_the_site(
    whole_history: SiteReport, page: tuple[Any, Traffic]
) -> None:
    """The newest commit is the 180-point sweep: the landing view compares the 9 points the
    commit before measured, calls the other 171 new, colours by the rule, and the sweep's
    slowest point draws its ratio above the line at 1."""
    tab, traffic = page
    nightly_commit = _shas(NIGHTLY)[0]
    assert whole_history.commits[-1] == nightly_commit
    p = NIGHTLY_POINT
    value = measured(NIGHTLY, SITE.machine, BENCH_RATIO, _params(p.variant, p.dtype, p.shape))
    with start_server(whole_history.out_dir) as server:
        tab.goto(server.url + "/")
        tab.wait_for_selector("#perfbot-landing table.points", state="attached")
        tab.wait_for_load_state("networkidle")
        found = tab.evaluate(CHANGE_CELLS)
        _shot(tab, "site-nightly-landing.png")
        tab.goto(graph_url(server.url, NIGHTLY_POINT, SITE.machine))
        drawn = _plot(tab)
        _assert_reference_line(tab)
        _shot(tab, "site-nightly-ratio-graph.png")
    ratio_cells = [c for c in found if c["column"] == "ratio"]
    points = {c["point"] for c in ratio_cells}
    assert len(points) == 2 * 180  # both Thunder variants at every point of the set
    # Like with like (issue 21): the sweep's run has no earlier run of its size set, so
    # nothing is compared (it was its 9 pr-set points against a pr-set nightly).
    assert {c["point"] for c in ratio_cells if c["kind"] != "new"} == set()
    for cell in found:
        change = float(cell["change"]) if cell["change"] is not None else None
        assert cell["kind"] == expected_kind(change, cell["threshold"]), cell
    (series,) = drawn["series"]
    assert [p["y"] for p in series["points"] if p["y"] is not None] == [value] and value > 2.5
    _assert_clean(traffic)


# Where the watch's change marks are: the pixels of their colour down each mark's column.
MARK_PIXELS = (
    "() => {"
    + _pixels_of("perfbotChanges")
    + """  const y0 = Math.ceil(off.top * scale) + 20;
  const y1 = Math.floor((off.top + plot.height()) * scale) - 2;
  return (plot.perfbotMarks || []).map(m => {
    const cx = Math.round(m.x * scale);
    let rows = 0;
    for (let j = y0; j < y1; j++) {
      let on = false;
      for (let i = Math.max(0, cx - 2); i <= Math.min(w - 1, cx + 2); i++) {
        if (hit(4 * (j * w + i))) { on = true; }
      }
      if (on) { rows++; }
    }
    return {label: m.label, confirmed: m.confirmed, fraction: rows / (y1 - y0)};
  });
}"""
)


def test_the_watchs_change_is_marked_on_the_ratio_graph(
    page: tuple[Any, Traffic], tmp_path: Path
) -> None:
    """Issue 21: the site built with the watch's history --json (a real +2% Thunder step on the
    recorded runs) marks the confirmed ratio change on the ratio graphs, between its last good
    and first bad commit, as the landing view lists it."""
    from test_site_watch import history_json

    from bot.site import build_site
    from tests.history.history_data import STOCK, THUNDER_2

    path = history_json(tmp_path, [*STOCK[:6], *THUNDER_2])
    data = REPO / "data"
    build_site(
        [data / "h200" / "results", data / "h200-states" / "results"],
        tmp_path / "site",
        history_json=path,
    )
    point = PointKey("thunder-prims", "bfloat16", "2048x8192")
    tab, traffic = page
    with start_server(tmp_path / "site") as server:
        tab.goto(graph_url(server.url, point, "nvidia-h200"))
        _plot(tab)
        marks = tab.evaluate(MARK_PIXELS)
        _shot(tab, "site-ratio-graph-watch-change.png")
    assert [(m["label"], m["confirmed"]) for m in marks] == [
        ("confirmed: Thunder/nvFuser kernel-time ratio, slower", True)
    ]
    assert marks[0]["fraction"] > 0.8, f"no solid line down the mark's column: {marks}"
    _assert_clean(traffic)


#: The catalog along four real Thunder builds on an H100 (data/README.md, h100-thunder-history).
CATALOG_BUILDS = REPO / "data/h100-thunder-history/call1/group-01"
#: A fusion whose thunder-func level stayed within 0.2% of 1 there: asv's axis spanned that.
FLAT = PointKey("thunder-func", "bfloat16", "16384x4096", "softmax_bwd")

Y_TICKS = """() => {
  const plot = $('#main-graph').data('plot');
  const axis = plot.getAxes().yaxis;
  return {min: axis.min, max: axis.max, labels: axis.ticks.map(t => t.label)};
}"""


def test_a_flat_ratio_reads_flat_with_ticks_that_differ(
    tmp_path: Path, page: tuple[Any, Traffic]
) -> None:
    """On the first real catalog history of nightlies the ratio graphs of flat fusions had an
    axis 0.2% tall whose ticks all read 1.00 (issue 41): a wiggle drawn as a cliff. The axis
    holds the bot's own ±2% band around 1 and every tick says a different number."""
    from bot.site import build_site

    report = build_site(CATALOG_BUILDS, tmp_path / "site")
    tab, traffic = page
    with start_server(report.out_dir) as server:
        tab.goto(graph_url(server.url, FLAT, "nvidia-h100-80gb-hbm3"))
        tab.wait_for_function("() => { const p = $('#main-graph').data('plot');"
                              " return p && p.getData().length > 0; }")  # fmt: skip
        tab.wait_for_load_state("networkidle")
        axis = tab.evaluate(Y_TICKS)
        _shot(tab, "site-catalog-builds-flat-ratio.png")
    assert axis["min"] <= 0.98 + 1e-9 and axis["max"] >= 1.02 - 1e-9, axis
    labels = [str(x) for x in axis["labels"]]
    assert len(labels) >= 3 and len(set(labels)) == len(labels), labels
    _assert_clean(traffic)

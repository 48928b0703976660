"""The history website in a real headless Chromium, served from 127.0.0.1 with no network.

Opens the landing page, then the ratio graph of the configured point (tests/test_site.py's
SITE) through the same link the PR comment uses (bot/tell/comment.py ``graph_url``), and checks that
flot drew the measured value in the series' colour at the right place on the canvas, that the
console stayed clean, that no request failed and that every request stayed on this machine.
Screenshots land in test-artifacts/ (git-ignored) for CI to keep.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from data_helpers import SyntheticResults, synthetic
from test_site import REPO, SITE, STEP, _conf, _subset, measured

from bot.results.types import BENCH_RATIO
from bot.site import SiteReport, build_site, start_server
from bot.tell.comment import graph_url

__all__ = ["synthetic"]  # the shared fixture of real asv output (tests/data_helpers.py)

CHROMIUM = Path(os.environ.get("PERFBOT_CHROMIUM", "/usr/bin/chromium"))
GET_CHROMIUM = (
    "sudo apt-get install -y chromium fonts-liberation (Debian's browser; Playwright's own "
    "download is not used), or set PERFBOT_CHROMIUM to a Chromium binary"
)


def _missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not CHROMIUM.is_file():
        return f"headless Chromium not found at {CHROMIUM}: {GET_CHROMIUM}"
    if importlib.util.find_spec("playwright") is None:
        return "Python playwright is not installed: pip install -e '.[test]'"
    return None


MISSING = _missing()
if MISSING and os.environ.get("PERFBOT_REQUIRE_BROWSER") == "1":  # CI: a skip would hide it
    pytest.fail(f"PERFBOT_REQUIRE_BROWSER=1 but {MISSING}", pytrace=False)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
ARTIFACTS = REPO / "test-artifacts"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}

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
        page.on("requestfailed", lambda r: self.failed.append(f"{r.url}: {r.failure}"))
        page.on(
            "response",
            lambda r: self.failed.append(f"{r.url}: HTTP {r.status}") if r.status >= 400 else None,
        )
        page.on(
            "console",
            lambda m: (
                self.console_errors.append(m.text) if m.type in ("error", "warning") else None
            ),
        )
        page.on("pageerror", lambda e: self.console_errors.append(f"uncaught: {e}"))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> SiteReport:
    return build_site(SITE.results, tmp_path_factory.mktemp("browser") / "site")


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
      return {x: x, y: y, hits: hits};
    });
    return {label: s.label, color: s.color, points: points};
  });
  return {painted: painted, size: [w, h], series: series};
}"""


def _shot(tab: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    tab.screenshot(path=str(path), full_page=False)
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
        row = tab.locator("#perfbot-landing tr.gating").filter(has_text=SITE.point.variant)
        row = row.filter(has_text=SITE.point.dtype).filter(has_text=SITE.point.shape)
        assert row.count() == 1
        assert f"{value:.3f}" in row.locator("span.ratio").inner_text()
        _shot(tab, "site-landing.png")

        # Its "history" link opens the ratio's graph.
        row.locator("td").nth(3).locator("a").click()
        _assert_draws(_plot(tab), value, len(site.commits))

        # So does the link the PR comment carries (bot/tell/comment.py), from a fresh load.
        tab.goto("about:blank")
        tab.goto(graph_url(server.url, SITE.point, SITE.machine))
        drawn = _plot(tab)
        _shot(tab, "site-ratio-graph.png")
    _assert_draws(drawn, value, len(site.commits))
    _assert_clean(traffic)


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


def test_the_regressions_page_lists_a_ratio_step(
    synthetic: SyntheticResults, tmp_path: Path, page: tuple[Any, Traffic]
) -> None:
    """SYNTHETIC TEST INPUT (tests/data_helpers.py): a 10% step of Thunder's kernel time."""
    results = _subset(synthetic, tmp_path, STEP)
    conf = _conf(tmp_path, synthetic.results_dir.parent / "project")
    report = build_site(results, tmp_path / "site", conf_path=conf)
    tab, traffic = page
    with start_server(report.out_dir) as server:
        tab.goto(f"{server.url}/#regressions")
        tab.wait_for_selector("#regressions-body table.table tbody tr", state="attached")
        tab.wait_for_load_state("networkidle")
        names = tab.locator("#regressions-body table.table tbody tr td a").all_inner_texts()
        _shot(tab, "site-regressions-synthetic.png")
        ratio = [n for n in names if n.startswith(BENCH_RATIO)]
        assert any("thunder-prims" in n for n in ratio), names
        # Its link opens the ratio graph at that point.
        tab.locator("#regressions-body a", has_text="thunder-prims").first.click()
        tab.wait_for_function("() => { const p = $('#main-graph').data('plot');"
                              " return p && p.getData().length > 0; }")  # fmt: skip
        assert BENCH_RATIO in tab.locator("#title").inner_text()
    _assert_clean(traffic)

"""The landing view: each point's change since the previous commit, coloured by the rule of
bot/site/change.py with perfbot.toml's thresholds, read from asv's graph files; readable at the
nightly sweep's size (tiled test input from tests/perf/tile.py).

Expected values are read from the results with asv's own reader, never typed in.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest
from site_builds import REPO, SITE, Built, pr_site
from test_site import measured

from bot.config import Config, VerdictSettings
from bot.results.types import BENCH_KERNEL, BENCH_RATIO, PointKey
from bot.site import SiteReport, build_site
from bot.site.change import Delta
from bot.site.landing import LISTED, OPEN_ROWS, machine_block
from bot.site.overview import summarize
from tests.perf.tiled_runs import SOURCE as TILED_SOURCE
from tests.perf.tiled_runs import tiled_copy

SETTINGS = Config.from_env({}, REPO / "perfbot.toml").verdict
#: The landing table's change columns, in order, and the series each one is of.
COLUMNS = ("ratio", "contender", "nvfuser")


__all__ = ["pr_site"]  # the site of SITE.results, built once a session (site_builds.py)


@pytest.fixture(scope="module")
def built(pr_site: Built) -> SiteReport:
    return pr_site.report


def cells(page: str, *, beyond: bool = False) -> list[dict[str, Any]]:
    """Every change cell of the landing's tables of all points (or of its list of the points
    beyond the threshold): its point, column, class and data."""
    landing = page[page.index('<div id="perfbot-landing"') : page.index('id="perfbot-commits"')]
    lists = re.findall(r'<table class="points beyond">.*?</table>', landing, re.S)
    landing = (
        "".join(lists)
        if beyond
        else re.sub(r'<table class="points beyond">.*?</table>', "", landing, flags=re.S)
    )
    out = []
    for point, body in re.findall(r'<tr class="\w+" data-point="([^"]+)">(.*?)</tr>', landing):
        found = re.findall(
            r'<td class="chg (\w+)"(?: data-change="([^"]+)")? data-threshold="([^"]+)"', body
        )
        assert len(found) == len(COLUMNS), body
        for column, (kind, change, threshold) in zip(COLUMNS, found, strict=True):
            out.append(
                {
                    "point": html.unescape(point),
                    "column": column,
                    "kind": kind,
                    "change": float(change) if change else None,
                    "threshold": float(threshold),
                }
            )
    return out


def expected_kind(change: float | None, threshold: float) -> str:
    """The rule, restated: at least +threshold worse, at most -threshold better."""
    if change is None:
        return "new"
    return "worse" if change >= threshold else "better" if change <= -threshold else "same"


def threshold_of(settings: VerdictSettings, point: str, column: str) -> float:
    variant, dtype, shape = point.split("/")
    if column == "ratio":
        return settings.threshold_for(point)
    label = PointKey("nvfuser" if column == "nvfuser" else variant, dtype, shape).label
    return settings.kernel_threshold_for(label)


# --- the rule ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "kind"),
    [
        (1.0, 1.0, "same"),
        (1.0, 1.0 + SETTINGS.effect, "worse"),
        (1.0, 1.0 + SETTINGS.effect * 0.99, "same"),
        (1.0, 1.0 - SETTINGS.effect, "better"),
        (1.0, 1.0 - SETTINGS.effect * 0.99, "same"),
        (None, 1.0, "new"),
        (1.0, None, "nodata"),
    ],
)
def test_the_change_rule(before: float | None, after: float | None, kind: str) -> None:
    assert Delta(before, after, SETTINGS.effect).kind == kind


def test_the_landing_colours_every_change_by_the_rule_and_perfbot_toml(built: SiteReport) -> None:
    page = (built.out_dir / "index.html").read_text()
    found = cells(page)
    assert found and cells(page, beyond=True)
    for cell in found + cells(page, beyond=True):
        assert cell["threshold"] == threshold_of(SETTINGS, cell["point"], cell["column"]), cell
        assert cell["kind"] == expected_kind(cell["change"], cell["threshold"]), cell
    kinds = {c["kind"] for c in found}
    assert {"worse", "same", "better"} <= kinds  # the regressed state against the A/A run

    # The list beyond the threshold holds exactly the rows with a worse or better change.
    def moved(cs: list[dict[str, Any]]) -> set[str]:
        return {c["point"] for c in cs if c["kind"] in ("worse", "better")}

    listed = {c["point"] for c in cells(page, beyond=True)}
    assert listed == moved(found) == moved(cells(page, beyond=True))


def test_a_change_is_the_graphs_newest_value_against_the_one_before(built: SiteReport) -> None:
    latest, previous = built.commits[-1], built.commits[-2]
    p = SITE.point
    for benchmark, column, variant in (
        (BENCH_RATIO, "ratio", p.variant),
        (BENCH_KERNEL, "contender", p.variant),
        (BENCH_KERNEL, "nvfuser", "nvfuser"),
    ):
        params = {"variant": variant, "dtype": p.dtype, "shape": p.shape}
        new = measured(SITE.results, SITE.machine, benchmark, params, latest)
        old = measured(SITE.results, SITE.machine, benchmark, params, previous)
        (cell,) = [
            c
            for c in cells((built.out_dir / "index.html").read_text())
            if c["point"] == p.label and c["column"] == column
        ]
        assert cell["change"] == pytest.approx(new / old - 1, rel=1e-12)


def test_the_counts_add_up_to_the_cells(built: SiteReport) -> None:
    page = (built.out_dir / "index.html").read_text()
    found = cells(page)
    row = re.search(r'<tr data-series="ratio thunder-prims">(.*?)</tr>', page)
    assert row is not None
    counts = dict(re.findall(r'data-kind="(\w+)">(\d+)</td>', row.group(1)))
    mine = [c for c in found if c["column"] == "ratio" and c["point"].startswith("thunder-prims/")]
    for kind in ("worse", "better", "same", "new", "nodata"):
        assert int(counts[kind]) == sum(1 for c in mine if c["kind"] == kind), kind


def test_a_tighter_per_point_threshold_is_used(tmp_path: Path) -> None:
    config = tmp_path / "perfbot.toml"
    label = SITE.point.label
    config.write_text(f'[[verdict.thresholds]]\npattern = "{label}"\neffect = 0.5\n')
    report = build_site(SITE.results, tmp_path / "site", config_path=config)
    (cell,) = [
        c
        for c in cells((report.out_dir / "index.html").read_text())
        if c["point"] == label and c["column"] == "ratio"
    ]
    assert cell["threshold"] == 0.5 and report.colours_from == str(config)


# --- the summary (pure) --------------------------------------------------------------------------


def _index(machine: str) -> dict[str, Any]:
    """A minimal index.json in asv's shape (parameter values as reprs); no measured values."""
    return {
        "benchmarks": {
            BENCH_RATIO: {
                "name": BENCH_RATIO,
                "params": [["'thunder-prims'", "'eager'"], ["'bfloat16'"], ["'16x1024'"]],
            },
            BENCH_KERNEL: {
                "name": BENCH_KERNEL,
                "params": [
                    ["'nvfuser'", "'thunder-prims'", "'eager'"],
                    ["'bfloat16'"],
                    ["'16x1024'"],
                ],
            },
        },
        "revision_to_hash": {"0": "a" * 40, "3": "b" * 40},
        "revision_to_date": {"0": 0, "3": 86_400_000},
        "graph_param_list": [{"machine": machine, "branch": "main"}],
    }


def test_summary_compares_like_with_like() -> None:
    """Issue 21: the newest commit is compared with the newest earlier one of the same kind and
    size set, passing over a nearer one of another (a nightly sweep of 180 points is not
    compared with a lab run of the pr set); with none like it, with none."""
    index = {**_index("m"), "revision_to_hash": {"0": "a" * 40, "2": "c" * 40, "3": "b" * 40}}
    ratio = [[0, [2.0, 3.0]], [2, [2.5, 3.5]], [3, [2.0, 4.0]]]
    kernel = [[r, [1e-5, 2e-5, 3e-5]] for r in (0, 2, 3)]
    nightly, lab = ("package-nightly", True, "pr"), ("lab", False, "nightly")
    kinds = {"a" * 40: nightly, "c" * 40: lab, "b" * 40: nightly}
    summary = summarize(index, "m", ratio, kernel, SETTINGS, kinds)
    assert summary is not None and summary.previous == "a" * 40
    alone = summarize(
        index, "m", ratio, kernel, SETTINGS, {**kinds, "b" * 40: ("tiled", False, None)}
    )
    assert alone is not None and alone.previous is None
    assert all(r.ratio.kind == "new" for r in alone.rows)


def test_summary_compares_the_newest_commit_with_the_one_before() -> None:
    ratio = [[0, [2.0, 3.0]], [3, [None, 4.0]]]  # thunder-prims failed at the newest commit
    kernel = [[0, [1e-5, 2e-5, 3e-5]], [3, [1e-5, None, 4e-5]]]
    summary = summarize(_index("m"), "m", ratio, kernel, SETTINGS)
    assert summary is not None
    assert (summary.commit, summary.previous, summary.n_commits) == ("b" * 40, "a" * 40, 2)
    (row,) = summary.rows  # thunder-prims has no value at all: not a row, named as absent
    assert summary.absent == ("thunder-prims",)
    assert (row.variant, row.ratio.after, row.ratio.before) == ("eager", 4.0, 3.0)
    assert row.ratio.kind == "worse" and row.nvfuser.kind == "same"
    block = machine_block(summary, {}, "")
    assert "no data at this commit for thunder-prims".lower() in block.lower()
    assert summarize(_index("m"), "m", [], kernel, SETTINGS) is None


def test_summary_escapes_what_came_from_the_results() -> None:
    evil = "<script>alert(1)</script>"
    summary = summarize(_index(evil), evil, [[0, [1.0, 1.0]]], [], SETTINGS)
    assert summary is not None
    block = machine_block(summary, {}, "")
    assert "<script>" not in block and "&lt;script&gt;" in block


def test_a_graph_that_does_not_fit_its_parameters_is_refused() -> None:
    with pytest.raises(ValueError, match="3 values for 2"):
        summarize(_index("m"), "m", [[0, [1.0, 1.0, 1.0]]], [], SETTINGS)


# --- at the nightly sweep's size -----------------------------------------------------------------


@pytest.mark.slow  # seconds of real pip, asv or bash end to end (docs/BOT.md: pytest -m slow)
def test_the_landing_view_stays_short_at_the_nightly_size(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """TILED TEST INPUT (tests/perf/tile.py): the A/A run and the regressed state of data/h200,
    each stretched over the nightly set's 180 points with real samples (each tiled once a
    session: tests/perf/tiled_runs.py)."""
    assert SITE.results == TILED_SOURCE
    results = tmp_path / "tiled"
    for commit in (built_commit("da17d548"), built_commit("9dc51696")):
        tiled_copy(tmp_path_factory, results, commit)  # tile(SITE.results, commit, results)
    report = build_site(results, tmp_path / "site")
    page = (report.out_dir / "index.html").read_text()
    rows = len(cells(page)) // len(COLUMNS)
    beyond = page[page.index('<table class="points beyond">') :]
    beyond = beyond[: beyond.index("</table>")]
    assert beyond.count("<tr class=") == LISTED  # the list of moved points stops
    assert re.search(r"and \d+ more in the tables below", page)
    details = re.findall(r"<details class=\"dtype( folded)?\"( open)?>", page)
    assert rows - LISTED > OPEN_ROWS and details and all(d == (" folded", "") for d in details)
    assert "tiled test input, not measured" in page  # never taken for a measurement


def built_commit(prefix: str) -> str:
    (full,) = [p.name[:40] for p in SITE.results.glob(f"*/{prefix}*.provenance.jsonl")]
    return full


def test_every_fusion_of_the_catalog_has_its_section(tmp_path: Path) -> None:
    """The catalog's A/A runs (data/h200-catalog/aa2): RMSNorm backward's section as before,
    and one section a fusion with its own anchor, heading and rows, its values linking to its
    own benchmark's graphs."""
    import re

    build_site([REPO / "data" / "h200-catalog" / "aa2"], tmp_path / "site")
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    fusions = re.findall(r'<section class="machine" id="fusion-(\w+)-nvidia-h200"', page)
    assert len(fusions) == 13 and "softmax_bwd" in fusions and "rmsnorm_bwd" not in fusions
    assert "<h2>nvidia-h200</h2>" in page  # RMSNorm backward's, as before the catalog
    assert "<h2>Softmax backward · nvidia-h200</h2>" in page
    section = page.split('id="fusion-softmax_bwd-nvidia-h200"')[1].split("</section>")[0]
    assert "bench_fusions.softmax_bwd.track_ratio" in section
    assert "16384x4096" in section

"""The landing view: the latest thunder/nvFuser ratio of every point, kernel times beside it.

Every number in it is read from the graph files ``asv publish`` wrote (the values the graphs
draw: asv's stored median of each benchmark's samples), never recomputed, so the summary and
the graphs cannot disagree. The template is site_assets/landing.html; everything that came from
the results (machine names, parameter values, hashes) is HTML-escaped here.
"""

from __future__ import annotations

import ast
import html
import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from string import Template
from typing import Any

from bot.results.types import BENCH_KERNEL, BENCH_RATIO, REFERENCE
from bot.site.links import graph_href

GATING = re.compile(r"thunder")


@dataclass(frozen=True)
class Row:
    variant: str
    dtype: str
    shape: str
    ratio: float | None
    contender_s: float | None
    nvfuser_s: float | None
    ratio_href: str
    contender_href: str
    nvfuser_href: str


@dataclass(frozen=True)
class MachineSummary:
    machine: str
    commit: str
    date_ms: int
    n_commits: int
    thunder_variant: str | None
    rows: tuple[Row, ...]


def plain_params(benchmark: Mapping[str, Any]) -> list[list[str]]:
    """asv stores parameter values as Python reprs: ``"'bfloat16'"`` -> ``bfloat16``."""
    out = []
    for values in benchmark.get("params", []):
        plain = []
        for v in values:
            try:
                lit = ast.literal_eval(v)
            except (ValueError, SyntaxError):
                lit = v
            plain.append(str(lit))
        out.append(plain)
    return out


def _at(series: Sequence[Sequence[Any]], revision: int) -> list[float | None] | None:
    for rev, values in series:
        if rev == revision:
            return values if isinstance(values, list) else [values]
    return None


def _table(
    benchmark: Mapping[str, Any], values: list[float | None] | None
) -> dict[tuple[str, ...], float | None]:
    combos = list(itertools.product(*plain_params(benchmark)))
    if values is None:
        return {}
    if len(values) != len(combos):
        raise ValueError(
            f"{benchmark.get('name')}: graph has {len(values)} values for {len(combos)} "
            "parameter combinations"
        )
    return {
        c: (v if isinstance(v, (int, float)) else None) for c, v in zip(combos, values, strict=True)
    }


def _shape_key(shape: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in shape.split("x"))
    except ValueError:
        return (0,)


def summarize(
    index: Mapping[str, Any],
    machine: str,
    ratio_series: Sequence[Sequence[Any]],
    kernel_series: Sequence[Sequence[Any]],
    thunder_variants: Mapping[str, str | None],
) -> MachineSummary | None:
    """The latest revision that has a ratio, as rows; None if the machine has no ratio data."""
    revisions = [rev for rev, _ in ratio_series]
    if not revisions:
        return None
    latest = max(revisions)
    benches = index["benchmarks"]
    ratios = _table(benches[BENCH_RATIO], _at(ratio_series, latest))
    kernels = _table(benches[BENCH_KERNEL], _at(kernel_series, latest))
    rows = []
    for variant, dtype, shape in ratios:
        point = {"dtype": dtype, "shape": shape}
        rows.append(
            Row(
                variant,
                dtype,
                shape,
                ratios[(variant, dtype, shape)],
                kernels.get((variant, dtype, shape)),
                kernels.get((REFERENCE, dtype, shape)),
                graph_href(BENCH_RATIO, {"variant": variant, **point}, machine),
                graph_href(BENCH_KERNEL, {"variant": variant, **point}, machine),
                graph_href(BENCH_KERNEL, {"variant": REFERENCE, **point}, machine),
            )
        )
    order = {v: i for i, v in enumerate(plain_params(benches[BENCH_RATIO])[0])}
    rows.sort(
        key=lambda r: (r.dtype, _shape_key(r.shape), not GATING.search(r.variant), order[r.variant])
    )
    commit = str(index["revision_to_hash"][str(latest)])
    return MachineSummary(
        machine,
        commit,
        int(index["revision_to_date"][str(latest)]),
        len(revisions),
        thunder_variants.get(commit),
        tuple(rows),
    )


def _num(value: float | None, scale: float, unit: str) -> str:
    if value is None:
        return '<span class="nodata">no data</span>'
    x = value * scale
    return f"{x:.1f}{unit}" if abs(x) >= 100 else f"{x:.2f}{unit}"


def _ratio(value: float | None) -> str:
    if value is None:
        return '<span class="nodata">no data</span>'
    return f'<span class="ratio">{value:.3f}</span>'


def _link(href: str, text: str) -> str:
    return f'<a href="{html.escape(href)}">{html.escape(text)}</a>'


def machine_block(summary: MachineSummary, commit_url: str) -> str:
    e = html.escape
    commit = f"<code>{e(summary.commit[:8])}</code>"
    if commit_url.startswith("https://"):
        commit = f'<a href="{e(commit_url + summary.commit)}">{commit}</a>'
    day = datetime.fromtimestamp(summary.date_ms / 1000, timezone.utc).strftime("%Y-%m-%d")
    build = f", Thunder build: {e(summary.thunder_variant)}" if summary.thunder_variant else ""
    head = (
        f"<h2>{e(summary.machine)}</h2>\n<p>Latest commit {commit} ({day}{build}); "
        f"{summary.n_commits} commit(s) in the history.</p>\n"
    )
    lines = [
        '<table class="points">',
        "<thead><tr><th>dtype</th><th>shape (M x N)</th><th>contender</th>"
        "<th>ratio to nvFuser</th><th>contender kernel time</th>"
        "<th>nvFuser kernel time</th></tr></thead>",
        "<tbody>",
    ]
    for r in summary.rows:
        cls = "gating" if GATING.search(r.variant) else "context"
        lines.append(
            f'<tr class="{cls}"><td>{e(r.dtype)}</td><td>{e(r.shape)}</td>'
            f"<td>{e(r.variant)}</td>"
            f"<td>{_ratio(r.ratio)} {_link(r.ratio_href, 'history')}</td>"
            f"<td>{_num(r.contender_s, 1e6, ' µs')} {_link(r.contender_href, 'history')}</td>"
            f"<td>{_num(r.nvfuser_s, 1e6, ' µs')} {_link(r.nvfuser_href, 'history')}</td></tr>"
        )
    lines += ["</tbody>", "</table>"]
    return head + "\n".join(lines)


def render(template: str, project: str, blocks: Sequence[str]) -> str:
    body = "\n".join(blocks) or '<p class="nodata">No ratio results have been published yet.</p>'
    return Template(template).substitute(project=html.escape(project), machines=body)


def load_series(html_dir: Path, graph_params: Mapping[str, Any], benchmark: str) -> list[Any]:
    """One graph file asv wrote (its path is asv's own ``Graph.get_file_path``)."""
    from asv.graph import Graph

    path = html_dir / (Graph.get_file_path(dict(graph_params), benchmark) + ".json")
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, list) else []


def build_overview(
    html_dir: Path, template: str, thunder_variants: Mapping[str, str | None]
) -> tuple[str, list[MachineSummary]]:
    """The landing view's HTML from asv's output in ``html_dir``."""
    index = json.loads((html_dir / "index.json").read_text(encoding="utf-8"))
    summaries = []
    for params in index.get("graph_param_list", []):
        machine = str(params.get("machine", ""))
        ratio = load_series(html_dir, params, BENCH_RATIO)
        kernel = load_series(html_dir, params, BENCH_KERNEL)
        summary = summarize(index, machine, ratio, kernel, thunder_variants)
        if summary is not None:
            summaries.append(summary)
    commit_url = str(index.get("show_commit_url") or "")
    blocks = [machine_block(s, commit_url) for s in summaries]
    return render(template, str(index.get("project", "")), blocks), summaries

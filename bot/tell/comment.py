"""The sticky PR comment, as markdown (pure): headline, main table, folded details.

Untrusted text goes through :func:`bot.tell.markdown.escape_md`; graph links are built from
validated parts by the site's own route builder (bot/site/links.py), so that a comment's link
and the site's pages always agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bot.decide.stats import Comparison
from bot.decide.types import PointVerdict, Verdict
from bot.results.types import BENCH_RATIO, PointKey, Provenance
from bot.site.links import graph_url as site_graph_url
from bot.tell.markdown import (
    Section,
    change_text,
    escape_md,
    fit,
    link,
    pct,
    ratio_text,
)

MARKER = "<!-- fusion-perfbot:rmsnorm-bwd -->"
MAX_MAIN_ROWS = 30
ICON = {"regressed": "🔴", "improved": "🟢", "no change": "⚪", "no data": "⚫"}
HEADLINE = {
    "regressed": "🔴 **Regressed**: Thunder lost ground to hand-written nvFuser",
    "improved": "🟢 **Improved**: Thunder gained ground on hand-written nvFuser",
    "no change": "⚪ **No change** in Thunder's standing against hand-written nvFuser",
    "inconclusive (no data)": "⚫ **Inconclusive (no data)**",
}


@dataclass(frozen=True)
class Context:
    """Where the comment goes and what it links to; any of it may be absent (local runs)."""

    repo: str | None = None
    pr: int | None = None
    pr_title: str | None = None
    head_ref: str | None = None
    run_url: str | None = None
    site_url: str | None = None
    issue_links: tuple[tuple[str, str], ...] = ()  # (label, url)


def graph_url(site_url: str, key: PointKey, machine: str | None = None) -> str:
    """The asv site's graph of one point's ratio (bot/site/links.py builds the route)."""
    params = {"variant": key.variant, "dtype": key.dtype, "shape": key.shape}
    return site_graph_url(site_url, BENCH_RATIO, params, machine)


def _us(c: Comparison | None) -> str:
    if c is None:
        return "n/a"
    return f"{c.base.estimate * 1e6:.1f} → {c.head.estimate * 1e6:.1f} ({pct(c.change.estimate)})"


def _bw(p: PointVerdict) -> str:
    b, h = p.bandwidth_pct
    return " → ".join("n/a" if v is None else f"{v:.0f}%" for v in (b, h))


def point_name(k: PointKey) -> str:
    return escape_md(f"{k.variant} {k.dtype} {k.shape}")


def _moved(p: PointVerdict) -> str:
    return (
        escape_md(p.key.variant)
        if p.moved == "thunder" and not p.key.variant.startswith("thunder")
        else p.moved
    )


def worst_first(points: Iterable[PointVerdict]) -> list[PointVerdict]:
    return sorted(points, key=lambda p: -p.ratio.change.estimate if p.ratio else 0.0)


def main_row(p: PointVerdict) -> str:
    if p.ratio is None:
        why = escape_md(p.no_data or "no data")
        return f"| {point_name(p.key)} | | | | {ICON['no data']} {why} | | |"
    c = p.ratio
    note = "" if p.corroborated or p.state == "no change" else " (uncorroborated)"
    return (
        f"| {point_name(p.key)} | {ratio_text(c.base)} | {ratio_text(c.head)} | "
        f"{change_text(c.change)} | {ICON[p.state]} {p.state}{note} | {_bw(p)} | {_moved(p)} |"
    )


MAIN_HEADER = (
    "| point | ratio base [95% CI] | ratio head [95% CI] | change [95% CI] | verdict "
    "| % of peak bandwidth, base → head | side that moved |\n|---|---|---|---|---|---|---|"
)


def detail_row(p: PointVerdict, site: str | None, machine: str) -> str:
    graph = link("graph", graph_url(site, p.key, machine)) if site else ""
    if p.ratio is None:
        return f"| {point_name(p.key)} | {escape_md(p.no_data or 'no data')} | | | | {graph} |"
    pu = f"{p.p_up_adj:.2g}" if p.p_up_adj is not None else "n/a"
    pd = f"{p.p_down_adj:.2g}" if p.p_down_adj is not None else "n/a"
    return (
        f"| {point_name(p.key)} | {ICON[p.state]} {pct(p.ratio.change.estimate)} | {pu} / {pd} "
        f"| {_us(p.contender_kernel)} | {_us(p.nvfuser_kernel)} | {graph} |"
    )


DETAIL_HEADER = (
    "| point | change | p slower / faster (Holm) | contender kernel µs base → head "
    "| nvFuser kernel µs base → head | history |\n|---|---|---|---|---|---|"
)


def _shape_order(shape: str) -> tuple[int, int]:
    m, _, n = shape.partition("x")
    return (int(m) * int(n), int(m)) if m.isdigit() and n.isdigit() else (0, 0)


def mermaid_charts(v: Verdict) -> list[str]:
    """One xychart per gating variant and dtype: base as bars, head as a line, by size."""
    charts = []
    groups = sorted({(p.key.variant, p.key.dtype) for p in v.points if p.gating and p.ratio})
    for variant, dtype in groups:
        pts = [p for p in v.points if (p.key.variant, p.key.dtype) == (variant, dtype)]
        pts = sorted((p for p in pts if p.ratio), key=lambda p: _shape_order(p.key.shape))
        base = [p.ratio.base.estimate for p in pts if p.ratio]
        head = [p.ratio.head.estimate for p in pts if p.ratio]
        top = max([*base, *head, 1.0]) * 1.15

        def clean(s: str) -> str:
            return re.sub(r"[^A-Za-z0-9x._-]", "", s)

        xs = ", ".join(f'"{clean(p.key.shape)}"' for p in pts)
        charts.append(
            "```mermaid\nxychart-beta\n"
            f'    title "{clean(variant)} {clean(dtype)}: ratio to nvFuser (bar base, line head)"\n'
            f"    x-axis [{xs}]\n"
            f'    y-axis "kernel-time ratio" 0 --> {top:.2f}\n'
            f"    bar [{', '.join(f'{x:.4f}' for x in base)}]\n"
            f"    line [{', '.join(f'{x:.4f}' for x in head)}]\n```"
        )
    return charts


def provenance_table(base: Provenance | None, head: Provenance | None, v: Verdict) -> str:
    rows = [("commit", v.base[:12], v.head[:12]), ("machine", v.machine, v.machine)]
    fields = [
        ("GPU", ("gpu", "name")),
        ("peak bandwidth GB/s", ("gpu", "peak_bandwidth_gbps")),
        ("driver", ("gpu", "driver")),
        ("CUDA", ("gpu", "cuda")),
        ("torch", ("versions", "torch")),
        ("nvFuser", ("versions", "nvfuser")),
        ("Thunder", ("versions", "thunder")),
        ("Python", ("versions", "python")),
        ("asv", ("versions", "asv")),
        ("Thunder variant", ("thunder_variant",)),
        ("size set", ("size_set",)),
        ("rounds", ("rounds",)),
        ("calls per sample", ("calls_per_sample",)),
        ("started", ("started_at",)),
    ]
    for label, keys in fields:
        b = base.text(*keys) if base else None
        h = head.text(*keys) if head else None
        rows.append((label, b or "n/a", h or "n/a"))
    lines = ["| | base | head |", "|---|---|---|"]
    lines += [f"| {label} | {escape_md(b)} | {escape_md(h)} |" for label, b, h in rows]
    if base is None or head is None:
        lines.append("\nNo provenance record for " + ("base" if base is None else "head") + ".")
    return "\n".join(lines)


METHOD = (
    "Per round, every variant of a point runs back to back; the ratio of a round is Thunder's "
    "kernel time over nvFuser's, so drift both share cancels. A side's ratio is the median over "
    "rounds; the change is head/base with a 95% bootstrap CI (rounds resampled within each "
    "side). A point regressed when the change is at least its threshold, its one-sided "
    "Mann-Whitney p (Holm-adjusted over the gating points) is below alpha and its CI is above "
    "1. The verdict needs a corroborated point (its CI above the threshold, or the variant's "
    "other sizes significantly up as a group) or a geometric-mean change above the threshold "
    "over at least 3 points of a variant. Side that moved: which kernel time (Thunder's or "
    "nvFuser's) changed, base to head, with a CI excluding 1, by at least half the ratio's "
    "change and half the threshold."
)


def header(v: Verdict, ctx: Context) -> list[str]:
    s = v.settings
    lines = [MARKER, "### RMSNorm backward: Thunder vs hand-written nvFuser", ""]
    lines.append(f"{HEADLINE[v.overall]}: {escape_md(v.reason, 400)}")
    lines.append("")
    where = []
    if ctx.repo and ctx.pr is not None:
        title = f" ({escape_md(ctx.pr_title, 120)})" if ctx.pr_title else ""
        where.append(f"PR {escape_md(f'{ctx.repo}#{ctx.pr}')}{title}")
    if ctx.head_ref:
        where.append(f"branch {escape_md(ctx.head_ref, 100)}")
    where.append(f"base {v.base[:12]} → head {v.head[:12]} on {escape_md(v.machine)}")
    lines.append(" · ".join(where))
    info = [
        f"effect threshold {s.effect:.1%} ({len(s.thresholds)} per-point override(s))",
        f"alpha {s.alpha:g}, Holm-adjusted",
    ]
    info += [link("CI run", ctx.run_url)] if ctx.run_url else []
    info += [link("history", ctx.site_url)] if ctx.site_url else []
    lines.append(" · ".join(info))
    lines.append("")
    for summ in v.summaries:
        lines.append(
            f"- Geometric-mean change, {escape_md(summ.variant)} over {summ.points} point(s): "
            f"**{change_text(summ.geomean)}**"
        )
    if v.worst is not None and v.worst.ratio is not None:
        lines.append(
            f"- Worst point: {point_name(v.worst.key)} {change_text(v.worst.ratio.change)}"
        )
    lines += [f"- Note: {escape_md(n, 300)}" for n in v.notes]
    if ctx.issue_links:
        issues = ", ".join(link(label, url) for label, url in ctx.issue_links)  # validated names
        lines.append(f"- Tracked in: {issues}")
    return lines


def render_comment(
    v: Verdict, ctx: Context, base: Provenance | None, head: Provenance | None
) -> str:
    """The whole sticky comment, marker first, under :data:`MAX_CHARS`."""
    lines = header(v, ctx)
    gating = worst_first(p for p in v.points if p.gating)
    lines += ["", MAIN_HEADER, *(main_row(p) for p in gating[:MAX_MAIN_ROWS])]
    if len(gating) > MAX_MAIN_ROWS:
        lines.append(f"\n{len(gating) - MAX_MAIN_ROWS} more gating point(s) in the details below.")
    if not gating:
        lines.append("| no gating points in these results | | | | | | |")
    charts = mermaid_charts(v)
    sections = [
        Section("Provenance", provenance_table(base, head, v), (), 0),
        Section("How this is decided", METHOD, (), 1),
        Section("Ratio by size (charts)", "", charts, 2),
        Section(
            f"All {len(v.points)} points: p-values, kernel times, history",
            DETAIL_HEADER + "\n",
            [detail_row(p, ctx.site_url, v.machine) for p in worst_first(v.points)],
            3,
        ),
    ]
    return fit("\n".join(lines), sections)

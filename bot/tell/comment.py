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
from bot.decide.types import Guard, PointVerdict, Verdict
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
ICON = {
    "broken": "💥",
    "still failing": "⚫",
    "regressed": "🔴",
    "unsure": "🟡",
    "improved": "🟢",
    "no change": "⚪",
    "no data": "⚫",
}
HEADLINE = {
    "broken": "💥 **Broken**: a point that ran at base fails at head",
    "regressed": "🔴 **Regressed**",
    "unsure": "🟡 **Unsure**: a change near the threshold, not established",
    "improved": "🟢 **Improved**",
    "no change": "⚪ **No change**",
    "inconclusive (no data)": "⚫ **Inconclusive (no data)**",
}
#: Context rows (not gating) say what moved in plain words, with no mark: they decide nothing.
CONTEXT_WORDS = {
    "regressed": "slower vs nvFuser",
    "unsure": "near threshold",
    "improved": "faster vs nvFuser",
    "no change": "no change",
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
    return sorted(points, key=lambda p: -p.cmp.change.estimate if p.cmp else 0.0)


def _nvfuser_slower(v: Verdict | None) -> bool:
    g = v.guard("nvfuser") if v else None
    return g is not None and g.state in ("regressed", "unsure")


def state_cell(p: PointVerdict, v: Verdict | None = None) -> str:
    """A row's verdict: a mark only on gating rows, never green when nvFuser got slower."""
    if not p.gating:
        return CONTEXT_WORDS.get(p.state, p.state)
    if (
        p.state == "improved"
        and p.kind == "ratio"
        and (p.moved in ("nvfuser", "both") or _nvfuser_slower(v))
    ):
        return "⚪ lower: nvFuser slower, not a gain"
    note = (
        " (uncorroborated)" if p.state in ("regressed", "improved") and not p.corroborated else ""
    )
    settle = (
        f" ({p.settle} runs a side would settle it)" if p.state == "unsure" and p.settle else ""
    )
    return f"{ICON[p.state]} {p.state}{note}{settle}"


def main_row(p: PointVerdict, v: Verdict | None = None) -> str:
    if p.cmp is None:
        why = escape_md(p.no_data or "no data")
        return f"| {point_name(p.key)} | | | | {p.threshold:.1%} | {ICON[p.state]} {why} | | |"
    c = p.cmp
    return (
        f"| {point_name(p.key)} | {ratio_text(c.base)} | {ratio_text(c.head)} | "
        f"{change_text(c.change)} | {p.threshold:.1%} | {state_cell(p, v)} | {_bw(p)} "
        f"| {_moved(p)} |"
    )


MAIN_HEADER = (
    "| point | ratio base [95% CI] | ratio head [95% CI] | change [95% CI] | threshold | verdict "
    "| % of peak bandwidth, base → head | side that moved |\n|---|---|---|---|---|---|---|---|"
)


def kernel_row(p: PointVerdict, v: Verdict | None = None) -> str:
    if p.cmp is None:
        why = escape_md(p.no_data or "no data")
        return f"| {point_name(p.key)} | | | {p.threshold:.1%} | {ICON[p.state]} {why} | |"
    return (
        f"| {point_name(p.key)} | {_us(p.cmp)} | {change_text(p.cmp.change)} | {p.threshold:.1%} "
        f"| {state_cell(p, v)} | {_bw(p)} |"
    )


KERNEL_HEADER = (
    "| point | kernel µs base → head | change [95% CI] | threshold | verdict "
    "| % of peak bandwidth, base → head |\n|---|---|---|---|---|---|"
)


def broken_row(p: PointVerdict) -> str:
    error = escape_md(p.error or p.no_data or "no error text recorded", 300)
    return f"| {point_name(p.key)} | {ICON[p.state]} {p.state} | {error} |"


BROKEN_HEADER = "| point | state | error at head |\n|---|---|---|"


def guard_row(g: Guard, v: Verdict) -> str:
    state = f"{ICON[g.state]} {g.state}"
    if g.kind == "ratio" and g.state == "improved" and _nvfuser_slower(v):
        state = "⚪ lower: nvFuser slower, not a gain"
    return f"| {escape_md(g.title)} | {state} | {escape_md(g.summary, 600)} |"


GUARD_HEADER = "| what is guarded | verdict | in words |\n|---|---|---|"


def detail_row(p: PointVerdict, site: str | None, machine: str) -> str:
    graph = link("graph", graph_url(site, p.key, machine)) if site else ""
    if p.cmp is None:
        return f"| {point_name(p.key)} | {escape_md(p.no_data or 'no data')} | | | | {graph} |"
    pu = f"{p.p_up_adj:.2g}" if p.p_up_adj is not None else "n/a"
    pd = f"{p.p_down_adj:.2g}" if p.p_down_adj is not None else "n/a"
    return (
        f"| {point_name(p.key)} | {pct(p.cmp.change.estimate)} | {pu} / {pd} "
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
    "kernel time over nvFuser's, so drift both share cancels. Four guards decide apart: every "
    "point still runs (a point with data at base that fails at head is broken, the worst "
    "verdict), the ratio, nvFuser's hand-written fusion's kernel time, and Thunder's kernel "
    "time. A run's value is the median over its rounds; runs of one commit (a job's repeats) "
    "are replicates. The change is head/base with a 95% Student-t interval whose variance adds "
    "the within-run noise (from the rounds) and the between-run noise of this machine (measured "
    "on recorded A/A runs, pooled with this job's repeats), so separate runs of the same code "
    "do not read as a change. A point regressed when its change is at least its threshold, its "
    "one-sided p (Holm-adjusted within its guard) is below alpha and its interval is above 1; a "
    "guard regressed when such a point is corroborated (its interval above the threshold, or "
    "its variant's other sizes up as a group) or a variant's geometric mean over at least 3 "
    "points passes the same test. A geometric mean at the threshold but not established is "
    "unsure, with the runs a side that would settle it. An nvFuser slowdown lowers the ratio: "
    "that is an nvFuser regression, never shown as a gain. eager and torch.compile rows are "
    "context: no marks. Side that moved: which kernel time changed by at least half the "
    "ratio's change and half the threshold, with an interval excluding 1. Full method: "
    "docs/CALIBRATION.md."
)


def header(v: Verdict, ctx: Context) -> list[str]:
    s = v.settings
    lines = [MARKER, "### RMSNorm backward: Thunder vs hand-written nvFuser", ""]
    lines.append(f"{HEADLINE[v.overall]}: {escape_md(headline_words(v), 400)}")
    lines.append("")
    lines += [GUARD_HEADER, *(guard_row(g, v) for g in v.guards)]
    lines.append("")
    where = []
    if ctx.repo and ctx.pr is not None:
        title = f" ({escape_md(ctx.pr_title, 120)})" if ctx.pr_title else ""
        where.append(f"PR {escape_md(f'{ctx.repo}#{ctx.pr}')}{title}")
    if ctx.head_ref:
        where.append(f"branch {escape_md(ctx.head_ref, 100)}")
    where.append(f"base {v.base[:12]} → head {v.head[:12]} on {escape_md(v.machine)}")
    where.append(f"{v.runs[0]} run(s) of base, {v.runs[1]} of head")
    lines.append(" · ".join(where))
    info = [
        f"effect {s.effect:.1%} (ratio), {s.kernel_effect:.1%} (kernel time)"
        + (f", {len(s.thresholds)} per-point override(s)" if s.thresholds else ""),
        f"alpha {s.alpha:g}, Holm-adjusted within each guard",
    ]
    if v.model:
        info.append(escape_md(v.model, 200))
    info += [link("CI run", ctx.run_url)] if ctx.run_url else []
    info += [link("history", ctx.site_url)] if ctx.site_url else []
    lines.append(" · ".join(info))
    lines.append("")
    if v.worst is not None and v.worst.cmp is not None:
        lines.append(
            f"- Worst ratio point: {point_name(v.worst.key)} {change_text(v.worst.cmp.change)}"
        )
    lines += [f"- Note: {escape_md(n, 300)}" for n in v.notes if n != v.model]
    if ctx.issue_links:
        issues = ", ".join(link(label, url) for label, url in ctx.issue_links)  # validated names
        lines.append(f"- Tracked in: {issues}")
    return lines


def headline_words(v: Verdict) -> str:
    """Which guards give the headline its state, in words; the table below has the figures."""
    if v.overall == "broken":
        broken = v.guard("broken")
        return broken.summary if broken else v.reason
    if v.overall not in ("regressed", "unsure", "improved"):
        return v.reason
    words = "; ".join(g.title for g in v.guards if g.state == v.overall)
    ratio = v.guard("ratio")
    if _nvfuser_slower(v) and ratio is not None and ratio.state == "improved":
        words += " (the Thunder/nvFuser ratio fell because of it: not a gain)"
    return words


def broken_table(v: Verdict) -> list[str]:
    g = v.guard("broken")
    if g is None or not g.points:
        return []
    return [
        "",
        "**Points that fail**",
        "",
        BROKEN_HEADER,
        *(broken_row(p) for p in g.points[:MAX_MAIN_ROWS]),
    ]


def render_comment(
    v: Verdict, ctx: Context, base: Provenance | None, head: Provenance | None
) -> str:
    """The whole sticky comment, marker first, under :data:`MAX_CHARS`."""
    lines = header(v, ctx)
    lines += broken_table(v)
    gating = worst_first(p for p in v.points if p.gating)
    lines += ["", "**Thunder/nvFuser ratio, gating points**", "", MAIN_HEADER]
    lines += [main_row(p, v) for p in gating[:MAX_MAIN_ROWS]]
    if len(gating) > MAX_MAIN_ROWS:
        lines.append(f"\n{len(gating) - MAX_MAIN_ROWS} more gating point(s) in the details below.")
    if not gating:
        lines.append("| no gating points in these results | | | | | | | |")
    context = worst_first(p for p in v.points if not p.gating)
    kernels = worst_first(p for p in v.kernels if p.gating)
    sections = [
        Section(
            f"Kernel times: nvFuser's fusion and Thunder's ({len(kernels)} gating rows)",
            KERNEL_HEADER + "\n",
            [kernel_row(p, v) for p in kernels],
            0,
        ),
        Section(
            f"Context: eager and torch.compile against nvFuser ({len(context)} rows, no marks)",
            MAIN_HEADER + "\n",
            [main_row(p, v) for p in context],
            1,
        ),
        Section("Provenance", provenance_table(base, head, v), (), 2),
        Section("How this is decided", METHOD, (), 3),
        Section("Ratio by size (charts)", "", mermaid_charts(v), 4),
        Section(
            f"All {len(v.points)} ratio points: p-values, kernel times, history",
            DETAIL_HEADER + "\n",
            [detail_row(p, ctx.site_url, v.machine) for p in worst_first(v.points)],
            5,
        ),
    ]
    return fit("\n".join(lines), sections)

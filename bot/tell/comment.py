"""The sticky PR comment, as markdown (pure): headline, main table, folded details.

Untrusted text goes through :func:`bot.tell.markdown.escape_md`; graph links are built from
validated parts by the site's own route builder (bot/site/links.py), so that a comment's link
and the site's pages always agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.decide.types import Verdict
from bot.fusion.hints import Hints
from bot.results.types import Provenance
from bot.tell.hints import hints_section
from bot.tell.markdown import MAX_CHARS, Section, change_text, escape_md, fit, link
from bot.tell.rows import (
    BROKEN_HEADER,
    DETAIL_HEADER,
    GUARD_HEADER,
    KERNEL_HEADER,
    MAIN_HEADER,
    MAX_MAIN_ROWS,
    broken_row,
    detail_row,
    graph_url,
    guard_row,
    kernel_row,
    main_row,
    nvfuser_slower,
    point_name,
    worst_first,
)
from bot.tell.sections import mermaid_charts, provenance_table
from bot.tell.summary import SUMMARY_CHARS, WORST, is_summarised
from bot.tell.sweep import sweep_parts
from bot.tell.under_test import side_label

__all__ = [
    "MARKER",
    "METHOD",
    "Context",
    "comment_parts",
    "graph_url",
    "header",
    "render_comment",
]

MARKER = "<!-- fusion-perfbot:rmsnorm-bwd -->"
HEADLINE = {
    "broken": "💥 **Broken**: a point that ran at base fails at head",
    "regressed": "🔴 **Regressed**",
    "unsure": "🟡 **Unsure**: a change near the threshold, not established",
    "improved": "🟢 **Improved**",
    "no change": "⚪ **No change**",
    "inconclusive (no data)": "⚫ **Inconclusive (no data)**",
    "uncalibrated": "⚪ **Uncalibrated: not judged**",
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


METHOD_SECTION = "How this is decided"
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


TITLE = "### RMSNorm backward: Thunder vs hand-written nvFuser"


def header(
    v: Verdict,
    ctx: Context,
    base: Provenance | None = None,
    head: Provenance | None = None,
    *,
    warning: Sequence[str] = (),
    notes: Sequence[str] = (),
) -> list[str]:
    """Marker, title, headline, guard table and where; ``warning`` (markdown lines, escaped
    already) goes right under the headline, ``notes`` (the same) after the verdict's notes."""
    s = v.settings
    lines = [MARKER, TITLE, ""]
    lines.append(f"{HEADLINE[v.overall]}: {escape_md(headline_words(v), 400)}")
    lines.append("")
    if warning:
        lines += [*warning, ""]
    lines += [GUARD_HEADER, *(guard_row(g, v) for g in v.guards)]
    lines.append("")
    where = []
    if ctx.repo and ctx.pr is not None:
        title = f" ({escape_md(ctx.pr_title, 120)})" if ctx.pr_title else ""
        where.append(f"PR {escape_md(f'{ctx.repo}#{ctx.pr}')}{title}")
    if ctx.head_ref:
        where.append(f"branch {escape_md(ctx.head_ref, 100)}")
    sides = side_label(base, v.base), side_label(head, v.head)
    where.append(f"base {sides[0]} → head {sides[1]} on {escape_md(v.machine)}")
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
    lines += notes
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
    if nvfuser_slower(v) and ratio is not None and ratio.state == "improved":
        words += " (the Thunder/nvFuser ratio fell because of it: not a gain)"
    return words


def broken_table(v: Verdict, limit: int | None = MAX_MAIN_ROWS) -> list[str]:
    g = v.guard("broken")
    if g is None or not g.points:
        return []
    return [
        "",
        "**Points that fail**",
        "",
        BROKEN_HEADER,
        *(broken_row(p) for p in g.points[:limit]),
    ]


def render_comment(
    v: Verdict,
    ctx: Context,
    base: Provenance | None,
    head: Provenance | None,
    *,
    warning: Sequence[str] = (),
    notes: Sequence[str] = (),
) -> str:
    """The whole sticky comment of one machine, marker first, under :data:`MAX_CHARS` (a
    summarised sweep: under :data:`~bot.tell.summary.SUMMARY_CHARS`)."""
    lines, sections = comment_parts(v, ctx, base, head, warning=warning, notes=notes)
    return fit("\n".join(lines), sections, SUMMARY_CHARS if is_summarised(v) else MAX_CHARS)


def comment_parts(
    v: Verdict,
    ctx: Context,
    base: Provenance | None,
    head: Provenance | None,
    *,
    warning: Sequence[str] = (),
    notes: Sequence[str] = (),
    hints: Hints | None = None,
    full: bool = False,
    worst: int = WORST,
    script: bool = True,
) -> tuple[list[str], list[Section]]:
    """One machine's comment as its open lines and its folded sections (for :func:`fit`);
    bot/tell/machines.py puts several machines' under one headline. A sweep of more than
    :data:`~bot.tell.summary.FULL_POINTS` points is summarised (its ``worst`` rows of each
    variant and dtype) unless ``full``; ``script=False``: the hints name their reproducer
    without posting it."""
    lines = header(v, ctx, base, head, warning=warning, notes=notes)
    tail = [
        *([hints_section(hints, 1, script=script)] if hints is not None else []),
        Section("Provenance", provenance_table(base, head, v), (), 2),
        Section(METHOD_SECTION, METHOD, (), 3),
    ]
    if is_summarised(v) and not full:
        return sweep_parts(v, ctx.site_url, lines, tail, worst)
    lines += broken_table(v, None if full else MAX_MAIN_ROWS)
    gating = worst_first(p for p in v.points if p.gating)
    lines += ["", "**Thunder/nvFuser ratio, gating points**", "", MAIN_HEADER]
    shown = len(gating) if full else MAX_MAIN_ROWS
    lines += [main_row(p, v) for p in gating[:shown]]
    if len(gating) > shown:
        lines.append(f"\n{len(gating) - shown} more gating point(s) in the details below.")
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
        *tail,
        Section("Ratio by size (charts)", "", mermaid_charts(v), 4),
        Section(
            f"All {len(v.points)} ratio points: p-values, kernel times, history",
            DETAIL_HEADER + "\n",
            [detail_row(p, ctx.site_url, v.machine) for p in worst_first(v.points)],
            5,
        ),
    ]
    return lines, sections

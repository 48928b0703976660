"""The PR comment and the regression issue, as markdown (pure).

Everything that came from outside the bot (parameter names, provenance strings, PR titles,
branch names) goes through :func:`escape_md`; URLs are built here from validated parts only.
GitHub caps a body at 65,536 characters: the detail sections are cut first, and the comment
says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from bot.decide.stats import Comparison, Interval
from bot.decide.verdict import PointVerdict, Verdict
from bot.results.types import BENCH_RATIO, PointKey, Provenance

MARKER = "<!-- fusion-perfbot:rmsnorm-bwd -->"
#: Under GitHub's 65,536 with room for what bot/github/sticky.py and bot/github/issues.py add.
MAX_CHARS = 60_000
MAX_MAIN_ROWS = 30
ICON = {"regressed": "🔴", "improved": "🟢", "no change": "⚪", "no data": "⚫"}
HEADLINE = {
    "regressed": "🔴 **Regressed**: Thunder lost ground to hand-written nvFuser",
    "improved": "🟢 **Improved**: Thunder gained ground on hand-written nvFuser",
    "no change": "⚪ **No change** in Thunder's standing against hand-written nvFuser",
    "inconclusive (no data)": "⚫ **Inconclusive (no data)**",
}
_ESCAPE = {c: "\\" + c for c in "\\`*_[](){}|!~+="}
_ESCAPE.update({"&": "&amp;", "<": "&lt;", ">": "&gt;", "@": "@\u200d", "#": "#\u200d"})
_URL_SAFE = re.compile(r"https?://[A-Za-z0-9.:/_~%+-]+(?:#[A-Za-z0-9._~%'&=?+-]*)?")


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


def escape_md(text: object, limit: int = 200) -> str:
    """Untrusted text as inert markdown: no markup, HTML, mentions, references or autolinks.

    GitHub resolves @mentions, #references and bare URLs on the rendered text, after markdown
    escapes are gone, so those get a zero-width joiner that breaks the pattern instead.
    """
    raw = "".join(c if c.isprintable() else " " for c in str(text))
    if len(raw) > limit:
        raw = raw[: limit - 1] + "…"
    out = "".join(_ESCAPE.get(c, c) for c in raw)
    return out.replace("://", ":\u200d//").replace("www.", "www\u200d.")


def link(label: str, url: str | None) -> str:
    """A markdown link if the URL is plainly safe, else the (escaped) label alone."""
    if url is None or not _URL_SAFE.fullmatch(url):
        return label
    return f"[{label}]({url})"


def graph_url(site_url: str, key: PointKey, machine: str | None = None) -> str:
    """The asv site's graph of one point (its hash-route format, values as Python reprs)."""

    def enc(s: str) -> str:
        return quote(s, safe="-_.!~*'")  # JavaScript's encodeURIComponent, minus ( and )

    params = [("p-variant", key.variant), ("p-dtype", key.dtype), ("p-shape", key.shape)]
    query = "&".join(f"{enc(k)}={enc(repr(v))}" for k, v in params)
    if machine:
        query += f"&machine={enc(machine)}"
    return f"{site_url.rstrip('/')}/#{enc(BENCH_RATIO)}?{query}"


def _pct(x: float) -> str:
    return f"{(x - 1) * 100:+.1f}%"


def change_text(iv: Interval) -> str:
    return f"{_pct(iv.estimate)} [{_pct(iv.low)}, {_pct(iv.high)}]"


def ratio_text(iv: Interval) -> str:
    return f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"


def _us(c: Comparison | None) -> str:
    if c is None:
        return "n/a"
    return f"{c.base.estimate * 1e6:.1f} → {c.head.estimate * 1e6:.1f} ({_pct(c.change.estimate)})"


def _bw(p: PointVerdict) -> str:
    b, h = p.bandwidth_pct
    return " → ".join("n/a" if v is None else f"{v:.0f}%" for v in (b, h))


def _name(k: PointKey) -> str:
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
        return f"| {_name(p.key)} | | | | {ICON['no data']} {why} | | |"
    c = p.ratio
    note = "" if p.corroborated or p.state == "no change" else " (uncorroborated)"
    return (
        f"| {_name(p.key)} | {ratio_text(c.base)} | {ratio_text(c.head)} | "
        f"{change_text(c.change)} | {ICON[p.state]} {p.state}{note} | {_bw(p)} | {_moved(p)} |"
    )


MAIN_HEADER = (
    "| point | ratio base [95% CI] | ratio head [95% CI] | change [95% CI] | verdict "
    "| % of peak bandwidth, base → head | side that moved |\n|---|---|---|---|---|---|---|"
)


def detail_row(p: PointVerdict, site: str | None, machine: str) -> str:
    graph = link("graph", graph_url(site, p.key, machine)) if site else ""
    if p.ratio is None:
        return f"| {_name(p.key)} | {escape_md(p.no_data or 'no data')} | | | | {graph} |"
    pu = f"{p.p_up_adj:.2g}" if p.p_up_adj is not None else "n/a"
    pd = f"{p.p_down_adj:.2g}" if p.p_down_adj is not None else "n/a"
    return (
        f"| {_name(p.key)} | {ICON[p.state]} {_pct(p.ratio.change.estimate)} | {pu} / {pd} "
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


def details(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


@dataclass(frozen=True)
class Section:
    """A collapsible section; ``rows`` may be cut, lowest ``priority`` number kept first."""

    summary: str
    preamble: str
    rows: Sequence[str]
    priority: int


def fit(head: str, sections: Sequence[Section], limit: int = MAX_CHARS) -> str:
    """``head`` plus the sections in order, cutting rows (then sections) to stay under limit."""
    notice = (
        "_Truncated: {} detail row(s) left out to stay under GitHub's 65,536-character limit; "
        "`fusion-perfbot report --json FILE` writes everything._"
    )
    budget = limit - len(head) - len(notice) - 20
    kept: dict[int, list[str] | None] = {}
    for i in sorted(range(len(sections)), key=lambda i: sections[i].priority):
        sec = sections[i]
        cost = len(details(sec.summary, sec.preamble)) + 2
        if cost > budget:
            kept[i] = None
            continue
        rows: list[str] = []
        for row in sec.rows:
            if cost + len(row) + 1 > budget:
                break
            rows.append(row)
            cost += len(row) + 1
        kept[i], budget = rows, budget - cost
    parts, dropped = [head], 0
    for i, sec in enumerate(sections):
        rows_kept = kept[i]
        if rows_kept is None:
            dropped += len(sec.rows) + 1
            continue
        dropped += len(sec.rows) - len(rows_kept)
        parts.append(details(sec.summary, sec.preamble + "\n".join(rows_kept)))
    if dropped:
        parts.append(notice.format(dropped))
    return "\n\n".join(parts)


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


def _header(v: Verdict, ctx: Context) -> list[str]:
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
        lines.append(f"- Worst point: {_name(v.worst.key)} {change_text(v.worst.ratio.change)}")
    lines += [f"- Note: {escape_md(n, 300)}" for n in v.notes]
    if ctx.issue_links:
        issues = ", ".join(link(label, url) for label, url in ctx.issue_links)  # validated names
        lines.append(f"- Tracked in: {issues}")
    return lines


def render_comment(
    v: Verdict, ctx: Context, base: Provenance | None, head: Provenance | None
) -> str:
    """The whole sticky comment, marker first, under :data:`MAX_CHARS`."""
    lines = _header(v, ctx)
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


def issue_title(v: Verdict, ctx: Context) -> str:
    """Plain text (titles are not markdown), one line, within GitHub's 256 characters."""
    worst = v.worst.ratio.change.estimate if v.worst and v.worst.ratio else None
    amount = f" (worst {_pct(worst)})" if worst is not None else ""
    where = f" in {ctx.repo}#{ctx.pr}" if ctx.repo and ctx.pr is not None else ""
    title = f"RMSNorm backward: Thunder slower relative to nvFuser on {v.machine}{amount}{where}"
    return "".join(c if c.isprintable() else " " for c in title)[:256]


def issue_body(v: Verdict, ctx: Context) -> str:
    """The evidence: the regressed points, the summary, links; the key marker is added later."""
    lines = _header(v, ctx)[1:]  # no comment marker: this is not the sticky comment
    bad = worst_first(p for p in v.points if p.gating and p.state == "regressed")
    lines += ["", MAIN_HEADER, *(main_row(p) for p in bad[:MAX_MAIN_ROWS])]
    if ctx.site_url:
        graphs = [link(_name(p.key), graph_url(ctx.site_url, p.key, v.machine)) for p in bad[:10]]
        lines += ["", "History: " + ", ".join(graphs)]
    sections = [Section("How this is decided", METHOD, (), 0)]
    return fit("\n".join(lines), sections, limit=40_000)


def update_note(v: Verdict, ctx: Context) -> str:
    """One comment on a linked issue: what the latest run of this PR found."""
    worst = (
        f"; worst {_name(v.worst.key)} {change_text(v.worst.ratio.change)}"
        if (v.worst and v.worst.ratio)
        else ""
    )
    run = f" ({link('CI run', ctx.run_url)})" if ctx.run_url else ""
    state = "still regressed" if v.regressed else f"now {v.overall}"
    return f"Head {v.head[:12]} against base {v.base[:12]}: {state}{worst}{run}."

"""The landing view's HTML (#overview): per machine, what the latest commit ran, how many points
moved since the previous one and which, then every point, grouped by dtype.

Readable at the nightly sweep's size (180 dtype x shape points, four contenders): the counts
and the list of points beyond the threshold come first and stay short; the full tables fold
away (``<details>``) once a machine has more than :data:`OPEN_ROWS` rows. Everything that came
from the results (machine names, parameter values, versions) is HTML-escaped here.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from string import Template

from bot.fusion.names import fusion_title
from bot.results.types import DEFAULT_FUSION
from bot.site.change import WORDS, Delta, Kind
from bot.site.commits import CommitNote
from bot.site.overview import MachineSummary, Row

#: Up to this many rows per machine, every dtype's table is open; above it, folded.
OPEN_ROWS = 60
#: The list of points beyond the threshold stops after this many (the tables have the rest).
LISTED = 25
_KINDS: tuple[Kind, ...] = ("worse", "better", "same", "new", "nodata")
e = html.escape


def _num(value: float | None, scale: float, unit: str) -> str:
    if value is None:
        return '<span class="nodata">no data</span>'
    x = value * scale
    return f"{x:.1f}{unit}" if abs(x) >= 100 else f"{x:.2f}{unit}"


def _value(href: str, text: str, cls: str) -> str:
    return f'<a class="{cls}" href="{e(href)}">{text}</a>'


def change_cell(delta: Delta) -> str:
    """A change as a table cell; its class is the rule's verdict, its data the inputs."""
    kind, rel = delta.kind, delta.relative
    shown = {"new": "new", "nodata": "&ndash;"}.get(kind) or f"{rel:+.2%}"
    data = f' data-change="{rel!r}"' if rel is not None else ""
    title = f"{WORDS[kind]} (threshold ±{delta.threshold:.1%})"
    return (
        f'<td class="chg {kind}"{data} data-threshold="{delta.threshold!r}" '
        f'title="{e(title)}">{shown}</td>'
    )


def row_html(r: Row) -> str:
    ratio = (
        _value(r.ratio_href, f"{r.ratio.after:.3f}", "ratio")
        if r.ratio.after is not None
        else '<span class="nodata">no data</span>'
    )
    cls = "gating" if r.gating else "context"
    return (
        f'<tr class="{cls}" data-point="{e(r.variant)}/{e(r.dtype)}/{e(r.shape)}">'
        f"<td>{e(r.dtype)}</td><td>{e(r.shape)}</td><td>{e(r.variant)}</td>"
        f"<td>{ratio}</td>{change_cell(r.ratio)}"
        f"<td>{_value(r.contender_href, _num(r.contender.after, 1e6, ' µs'), 'kernel')}</td>"
        f"{change_cell(r.contender)}"
        f"<td>{_value(r.nvfuser_href, _num(r.nvfuser.after, 1e6, ' µs'), 'kernel')}</td>"
        f"{change_cell(r.nvfuser)}</tr>"
    )


HEAD = (
    "<thead><tr><th>dtype</th><th>shape (M x N)</th><th>contender</th>"
    "<th>ratio to nvFuser</th><th>change</th><th>contender kernel time</th><th>change</th>"
    "<th>nvFuser kernel time</th><th>change</th></tr></thead>"
)


def table(rows: Iterable[Row], cls: str = "points") -> str:
    body = "\n".join(row_html(r) for r in rows)
    return f'<table class="{cls}">{HEAD}\n<tbody>\n{body}\n</tbody></table>'


def commit_line(word: str, commit: str, note: CommitNote | None) -> str:
    """``Latest commit <hash> (day): what ran, its links; what the commit is.``"""
    route = f"#commits?commit={commit[:8]}"
    code = f'<a class="commit" href="{e(route)}"><code>{e(commit[:8])}</code></a>'
    if note is None:
        return f"<p>{word} {code}.</p>"
    links = "".join(f' &mdash; <a href="{e(link.url)}">{e(link.text)}</a>' for link in note.links)
    nightly = ' <span class="tag">nightly</span>' if note.nightly else ""
    return (
        f'<p class="commit-line" data-kind="{e(note.kind)}">{word} {code} ({note.day}): '
        f"<strong>{e(note.label)}</strong>{nightly}{links}; {e(note.detail)}.</p>"
    )


def _series(rows: Sequence[Row]) -> list[tuple[str, list[Delta]]]:
    """The changes to count: each contender's ratio and kernel time, nvFuser's once a point."""
    out: dict[str, list[Delta]] = {}
    nvfuser: dict[tuple[str, str], Delta] = {}
    for r in rows:
        out.setdefault(f"ratio {r.variant}", []).append(r.ratio)
        out.setdefault(f"kernel time {r.variant}", []).append(r.contender)
        nvfuser.setdefault((r.dtype, r.shape), r.nvfuser)
    ordered = [(k, v) for k, v in out.items() if k.startswith("ratio ")]
    ordered.append(("kernel time nvfuser", list(nvfuser.values())))
    ordered += [(k, v) for k, v in out.items() if k.startswith("kernel time ")]
    return ordered


def counts(rows: Sequence[Row]) -> str:
    head = "".join(f'<th class="chg {k}">{WORDS[k]}</th>' for k in _KINDS)
    lines = [f'<table class="counts"><thead><tr><th>series</th>{head}</tr></thead><tbody>']
    for name, deltas in _series(rows):
        n = {k: sum(1 for d in deltas if d.kind == k) for k in _KINDS}
        cells = "".join(
            f'<td class="{"chg " + k if n[k] else "zero"}" data-kind="{k}">{n[k]}</td>'
            for k in _KINDS
        )
        lines.append(f'<tr data-series="{e(name)}"><td>{e(name)}</td>{cells}</tr>')
    return "\n".join([*lines, "</tbody></table>"])


def _moved(r: Row) -> tuple[int, float]:
    """Sort key: rows with a worse change first, then by the size of their largest move."""
    deltas = (r.ratio, r.contender, r.nvfuser)
    worse = [d.relative or 0.0 for d in deltas if d.kind == "worse"]
    if worse:
        return (1, max(worse))
    return (0, max(-(d.relative or 0.0) for d in deltas if d.kind == "better"))


def beyond(rows: Sequence[Row]) -> str:
    moved = [
        r for r in rows if {"worse", "better"} & {r.ratio.kind, r.contender.kind, r.nvfuser.kind}
    ]
    if not moved:
        return '<p class="beyond none">No point moved beyond its threshold.</p>'
    moved.sort(key=_moved, reverse=True)
    more = len(moved) - LISTED
    tail = f'<p class="small">and {more} more in the tables below.</p>' if more > 0 else ""
    return (
        f"<h3>Beyond the threshold ({len(moved)} row(s), worse first)</h3>\n"
        + table(moved[:LISTED], "points beyond")
        + tail
    )


def legend(effect: float, kernel_effect: float) -> str:
    return (
        '<p class="legend">Change since the commit it is compared with (the newest earlier one '
        "of the same kind and size set), of the value each graph draws: "
        f'<span class="chg worse">worse</span>: up by at least the threshold, '
        f'<span class="chg better">better</span>: down by at least the threshold, '
        f'<span class="chg same">within noise</span>: less than the threshold either way '
        "(higher is worse in every column). The threshold is the bot's smallest effect from "
        f"perfbot.toml: <code>[verdict] effect</code> = {effect:.1%} for a ratio, "
        f"<code>kernel_effect</code> = {kernel_effect:.1%} for a kernel time, or a matching "
        "per-point threshold. One commit against the one before is a pointer, not the bot's "
        "verdict (which also needs its interval to exclude no change).</p>"
    )


def machine_block(
    summary: MachineSummary, notes: Mapping[str, CommitNote], legend_html: str
) -> str:
    s = summary
    if s.fusion == DEFAULT_FUSION:
        opening = f'<section class="machine" data-machine="{e(s.machine)}">'
        heading = f"<h2>{e(s.machine)}</h2>"
    else:  # a fusion of the catalog: its own section, with an anchor a link can name
        anchor = e(f"fusion-{s.fusion}-{s.machine}")
        opening = (
            f'<section class="machine" id="{anchor}" data-machine="{e(s.machine)}" '
            f'data-fusion="{e(s.fusion)}">'
        )
        heading = f"<h2>{e(fusion_title(s.fusion))} · {e(s.machine)}</h2>"
    parts = [
        opening,
        heading,
        commit_line("Latest commit", s.commit, notes.get(s.commit)),
    ]
    if s.previous is not None:
        parts.append(commit_line("Compared with", s.previous, notes.get(s.previous)))
    else:
        parts.append(
            '<p class="commit-line">No earlier commit of the same kind with data at the same '
            "points: nothing to compare with (the graphs have the whole history).</p>"
        )
    parts.append(
        f'<p>{s.n_commits} commit(s) in this machine\'s history; <a href="#commits">all '
        "commits</a>. Each value links to its graph.</p>"
    )
    parts += [legend_html, counts(s.rows), beyond(s.rows)]
    fold = "" if len(s.rows) <= OPEN_ROWS else " folded"
    for dtype in sorted({r.dtype for r in s.rows}):
        rows = [r for r in s.rows if r.dtype == dtype]
        n = len({r.shape for r in rows})
        is_open = "" if fold else " open"
        parts.append(
            f'<details class="dtype{fold}"{is_open}><summary>{e(dtype)}: {n} shape(s), '
            f"{len(rows)} row(s)</summary>\n{table(rows)}\n</details>"
        )
    if s.absent:
        parts.append(
            f'<p class="absent">No data at this commit for {e(", ".join(s.absent))} (not '
            "measured in this run, or failed at every point); their history is in the graphs.</p>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def render(template: str, project: str, blocks: Sequence[str], changes: str = "") -> str:
    """The landing view; ``changes``: the watch's changes (bot/site/watch.py), first."""
    body = "\n".join(blocks) or '<p class="nodata">No ratio results have been published yet.</p>'
    return Template(template).substitute(project=e(project), machines=body, changes=changes)

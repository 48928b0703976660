"""The comment and issue layouts of a summarised sweep (pure), from bot/tell/summary.py's parts.

The comment keeps its shape (header, what fails, the ratio open, the kernel times and the
context folded, then the hints, provenance and method), but each table becomes its counts by
variant and dtype plus the worst rows of each, and the per-point details and charts give way
to a line that says where every other point is: the history website, ``report --full``,
``--json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bot.decide.types import Guard, PointVerdict, Verdict
from bot.tell.hints import SUMMARY as HINTS
from bot.tell.markdown import Section
from bot.tell.rows import (
    BROKEN_HEADER,
    KERNEL_HEADER,
    MAIN_HEADER,
    broken_row,
    kernel_row,
    main_row,
)
from bot.tell.summary import (
    WORST_BROKEN,
    WORST_CONTEXT,
    WORST_KERNELS,
    counts_table,
    everything_else,
    worst_rows,
)


def _broken(p: PointVerdict, v: Verdict) -> str:
    return broken_row(p)


def _table(
    title: str, rows: Sequence[PointVerdict], v: Verdict, k: int, header: str, kind: str
) -> list[str]:
    """A title, the counts by variant and dtype, and the ``k`` worst rows of each."""
    row = {"ratio": main_row, "kernel": kernel_row, "broken": _broken}[kind]
    shown = f"; the {k} worst of each below" if k else ""
    out = [
        "",
        f"{title} ({len(rows)} rows, by variant and dtype{shown})",
        "",
        counts_table(rows, v),
    ]
    if k:
        out += ["", header, *worst_rows(rows, v, k, row)]
    return out


def sweep_parts(
    v: Verdict, site_url: str | None, lines: list[str], tail: Sequence[Section], k: int
) -> tuple[list[str], list[Section]]:
    """A summarised comment: ``lines`` (the header) and ``tail`` (hints, provenance, method)
    around the summaries, ``k`` worst rows a variant and dtype in the ratio's table, fewer in
    the folded ones."""
    broken = v.guard("broken")
    if broken is not None and broken.points:
        lines += _table(
            "**Points that fail**", broken.points, v, min(k, WORST_BROKEN), BROKEN_HEADER, "broken"
        )
    gating = [p for p in v.points if p.gating]
    title = "**Thunder/nvFuser ratio, gating points**"
    if gating:
        lines += _table(title, gating, v, k, MAIN_HEADER, "ratio")
    else:
        lines += ["", title, "", "No gating points in these results."]
    lines += ["", everything_else(gating, site_url, v.machine, links=2 * k)]
    kernels = [p for p in v.kernels if p.gating]
    context = [p for p in v.points if not p.gating]
    # What is cut first when room runs out: the context, then the kernel rows; the hints
    # (the first clue to the cause) are kept before either.
    first = [replace(s, priority=0) if s.summary.startswith(HINTS) else s for s in tail]
    sections = [
        _folded(
            f"Kernel times: nvFuser's fusion and Thunder's ({len(kernels)} gating rows)",
            kernels,
            v,
            min(k, WORST_KERNELS),
            KERNEL_HEADER,
            "kernel",
            1,
        ),
        _folded(
            f"Context: eager and torch.compile against nvFuser ({len(context)} rows, no marks)",
            context,
            v,
            min(k, WORST_CONTEXT),
            MAIN_HEADER,
            "ratio",
            2,
        ),
        *first,
    ]
    return lines, [s for s in sections if s is not None]


def _folded(
    summary: str,
    rows: Sequence[PointVerdict],
    v: Verdict,
    k: int,
    header: str,
    kind: str,
    priority: int,
) -> Section | None:
    if not rows:
        return None
    row = main_row if kind == "ratio" else kernel_row
    preamble = counts_table(rows, v) + "\n\n" + (header + "\n" if k else "")
    return Section(summary, preamble, worst_rows(rows, v, k, row) if k else [], priority)


def guard_evidence(v: Verdict, g: Guard, k: int) -> list[str]:
    """An issue's evidence for a summarised sweep: this guard's points by variant and dtype,
    and the ``k`` worst of each."""
    if not g.points:
        return ["", "No point is tracked here."]
    if g.kind == "broken":
        return _table("Points", g.points, v, k, BROKEN_HEADER, "broken")[1:]
    header, kind = (MAIN_HEADER, "ratio") if g.kind == "ratio" else (KERNEL_HEADER, "kernel")
    return _table("Points", g.points, v, k, header, kind)[1:]

"""The tables of the comment and the issues, as data (pure): the rows that changed, worst first
in their guard's own direction; the errors of a break, each once with the points it hit; the
stack of both sides. The templates (bot/tell/templates/) lay them out.

Why rows and not markdown: a template decides where a table goes and which columns a reader
sees first; here is only what each cell says, escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.decide.stats import Comparison
from bot.decide.types import Guard, PointVerdict, Verdict
from bot.results.types import Provenance
from bot.tell.markdown import escape_md
from bot.tell.under_test import under_test_cells
from bot.tell.words import (
    ICON,
    NOT_A_GAIN,
    factor,
    factor_ci,
    more_runs,
    nvfuser_slower,
    point_name,
)

#: Rows of the first screen's table, of a folded guard table in the comment and in an issue
#: (``full``: every row; the JSON and the website have every point anyway).
LEAD_ROWS = 5
COMMENT_ROWS = 6
FOLD_ROWS = 12

#: A context row's words: eager and torch.compile are shown against nvFuser, never marked.
CONTEXT_WORDS = {
    "regressed": "slower vs nvFuser",
    "unsure": "near threshold",
    "improved": "faster vs nvFuser",
    "no change": "no change",
}
#: A lower ratio where nvFuser's fusion got slower: shown grey, never green.
LOWER = f"⚪ {NOT_A_GAIN}"


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    more: int = 0  # rows that moved but are left out ("and N more")
    note: str = ""  # a line under the table


def moved(g: Guard) -> list[PointVerdict]:
    """The guard's points that are not "no change", worst first in the guard's direction: the
    largest slowdown first for a regression, the largest gain first for an improvement."""
    points = [p for p in g.points if p.state != "no change"]
    down = g.state == "improved"

    def key(p: PointVerdict) -> tuple[int, float]:
        change = p.cmp.change.estimate if p.cmp else 1.0
        first = 0 if p.state == g.state else 1
        return first, (change if down else -change)

    return sorted(points, key=key)


def _us(c: Comparison | None) -> tuple[str, str]:
    if c is None:
        return "n/a", "n/a"
    return f"{c.base.estimate * 1e6:.1f}", f"{c.head.estimate * 1e6:.1f}"


def bandwidth(p: PointVerdict) -> str:
    """The share of the GPU's peak bandwidth, base → head."""
    return " → ".join("n/a" if x is None else f"{x:.0f}%" for x in p.bandwidth_pct)


def state_cell(p: PointVerdict, v: Verdict | None = None) -> str:
    """A row's verdict: a mark only on gating rows, never green when nvFuser got slower."""
    if not p.gating:
        return CONTEXT_WORDS.get(p.state, p.state)
    if (
        p.state == "improved"
        and p.kind == "ratio"
        and (p.moved in ("nvfuser", "both") or nvfuser_slower(v))
    ):
        return LOWER
    note = (
        " (uncorroborated)" if p.state in ("regressed", "improved") and not p.corroborated else ""
    )
    more = more_runs(p)
    settle = f" (about {more} more run(s) a side would settle it)" if more else ""
    return f"{ICON[p.state]} {p.state}{note}{settle}"


def lead_table(g: Guard, v: Verdict, limit: int | None = LEAD_ROWS) -> Table | None:
    """The first screen's rows: the points this guard saw move, its own measure."""
    if g.kind == "broken":
        return errors_table(g, limit)
    points = moved(g)
    if not points:
        return None
    shown = points if limit is None else points[:limit]
    rows = []
    for p in shown:
        if p.cmp is None:
            rows.append((point_name(p.key), "", "", escape_md(p.no_data or "no data", 120)))
            continue
        if p.kind == "ratio":
            base, head = f"{p.cmp.base.estimate:.3f}", f"{p.cmp.head.estimate:.3f}"
        else:
            base, head = _us(p.cmp)
        rows.append((point_name(p.key), base, head, factor(p.cmp.change.estimate)))
    measure = ("ratio base", "ratio head") if g.kind == "ratio" else ("µs base", "µs head")
    return Table(("point", *measure, "change"), tuple(rows), len(points) - len(shown))


def errors_table(g: Guard, limit: int | None = LEAD_ROWS) -> Table | None:
    """A break's errors, each text once with the points it hit (a variant over its sizes)."""
    groups: dict[str, list[PointVerdict]] = {}
    for p in g.points:
        if p.state in ("broken", "still failing"):
            text = p.error or p.no_data or "no error text recorded"
            groups.setdefault(text, []).append(p)
    if not groups:
        return None
    rows = []
    for text, points in list(groups.items())[:limit]:
        state = "broken" if any(p.state == "broken" for p in points) else "still failing"
        rows.append((f"{ICON[state]} {escape_md(text, 300)}", where(points)))
    return Table(("error at head", "points"), tuple(rows), max(0, len(groups) - len(rows)))


def where(points: Sequence[PointVerdict]) -> str:
    """Points in few words: "thunder-func, thunder-prims at 9 sizes" or the names of a few."""
    variants = sorted({p.key.variant for p in points})
    sizes = {(p.key.dtype, p.key.shape) for p in points}
    if len(points) <= 3:
        return ", ".join(point_name(p.key) for p in points)
    return f"{len(points)}: {escape_md(', '.join(variants), 200)} at {len(sizes)} sizes"


def guard_table(g: Guard, v: Verdict, limit: int | None = FOLD_ROWS) -> Table | None:
    """A folded table of a guard: every moved point with its interval, verdict and bandwidth
    (``limit`` None: every point of the guard, unchanged ones too)."""
    if g.kind == "broken":
        return errors_table(g, limit)
    points = (
        moved(g)
        if limit is not None
        else moved(g) + [p for p in g.points if p.state == "no change"]
    )
    shown = points if limit is None else points[:limit]
    rows = []
    for p in shown:
        bw = bandwidth(p)
        if p.cmp is None:
            rows.append((point_name(p.key), "", "", state_cell(p, v), bw))
            continue
        if p.kind == "ratio":
            values = f"{p.cmp.base.estimate:.3f} → {p.cmp.head.estimate:.3f}"
        else:
            values = " → ".join(_us(p.cmp))
        rows.append((point_name(p.key), values, factor_ci(p.cmp.change), state_cell(p, v), bw))
    measure = "ratio base → head" if g.kind == "ratio" else "kernel µs base → head"
    columns: tuple[str, ...] = (
        "point",
        measure,
        "change [95% CI]",
        "verdict",
        "% of peak bandwidth",
    )
    cells: list[tuple[str, ...]] = list(rows)
    if {r[3] for r in rows} == {f"{ICON[g.state]} {g.state}"}:  # the heading says it for all
        columns = (*columns[:3], columns[4])
        cells = [(*r[:3], r[4]) for r in rows]
    return Table(columns, tuple(cells), len(points) - len(shown))


_STACK = (
    ("GPU", ("gpu", "name")),
    ("driver", ("gpu", "driver")),
    ("CUDA", ("gpu", "cuda")),
    ("torch", ("versions", "torch")),
    ("nvFuser", ("versions", "nvfuser")),
    ("Thunder", ("versions", "thunder")),
    ("Thunder variant", ("thunder_variant",)),
    ("Python", ("versions", "python")),
    ("asv", ("versions", "asv")),
    ("size set", ("size_set",)),
    ("rounds x calls", ("rounds",)),
    ("started", ("started_at",)),
)


def provenance(base: Provenance | None, head: Provenance | None, v: Verdict) -> Table:
    """Both sides' stack: the rows that differ, then one row for everything both share (what a
    reader checks when a number moved is what else changed)."""
    rows: list[tuple[str, str, str]] = [("commit", v.base[:12], v.head[:12])]
    same: list[tuple[str, str, str]] = []
    for label, keys in _STACK:
        b = base.text(*keys) if base else None
        h = head.text(*keys) if head else None
        if label == "rounds x calls":
            b = _rounds(base)
            h = _rounds(head)
        row = (label, escape_md(b or "n/a"), escape_md(h or "n/a"))
        (rows if b != h or label == "started" else same).append(row)
    shared = ", ".join(f"{label} {b}" for label, b, _ in same)
    note = f"The same at both sides: {shared}." if shared else ""
    return Table(("", "base", "head"), (*rows, *under_test_cells(base, head)), note=note)


def _rounds(p: Provenance | None) -> str | None:
    if p is None:
        return None
    r, c = p.text("rounds"), p.text("calls_per_sample")
    return f"{r} x {c}" if r and c else r


def context_table(v: Verdict) -> Table | None:
    """eager and torch.compile against nvFuser (``report --full``): words, no marks."""
    rows = []
    for p in sorted((p for p in v.points if not p.gating), key=lambda p: str(p.key)):
        if p.cmp is None:
            rows.append((point_name(p.key), "", "", escape_md(p.no_data or "no data", 120)))
            continue
        values = f"{p.cmp.base.estimate:.3f} → {p.cmp.head.estimate:.3f}"
        words = CONTEXT_WORDS.get(p.state, p.state)
        rows.append((point_name(p.key), values, factor_ci(p.cmp.change), words))
    if not rows:
        return None
    return Table(
        ("point", "ratio base → head", "change [95% CI]", "compared with nvFuser"), tuple(rows)
    )

"""A sweep's tables, summarised (pure): per variant and dtype, how many points had each verdict
and the few worst points; the website has every other point.

Why: the comment's tables grow with the points (the nightly sweep's 180 points x 5 variants
filled 60,000 characters and were cut), and nobody reads 900 rows in a PR comment. Above
:data:`FULL_POINTS` dtype x shape points, the comment and the issue bodies show these
summaries instead and stay under :data:`SUMMARY_CHARS` whatever the number of points; at or
below it (the ``pr`` set has 9) they are exactly what they were. ``report --full`` prints the
full tables and ``--json`` has every point.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from bot.decide.types import PointVerdict, Verdict
from bot.tell.markdown import change_text, escape_md, link
from bot.tell.rows import CONTEXT_WORDS, ICON, NOT_A_GAIN, graph_url, point_name, state_cell

#: A sweep of more dtype x shape points than this is summarised (the ``pr`` set has 9).
FULL_POINTS = 12
#: A summarised comment or issue body stays under this many characters (GitHub: 65,536).
SUMMARY_CHARS = 20_000
#: Worst rows shown per variant and dtype: the ratio's, the kernel times', the context's. A
#: renderer that runs out of room asks for fewer (down to none: the counts alone).
WORST = 3
WORST_KERNELS = 2
WORST_CONTEXT = 1
WORST_BROKEN = 1  # each failing row carries its error text
#: A summarised sweep that does not fit shows fewer worst rows a variant and dtype, then its
#: hints without the reproducer's script: (worst rows, script), in the order tried.
LADDER = (*((k, True) for k in range(WORST, -1, -1)), (0, False))
#: Worst first: a state's place when the worst rows of a group are chosen.
SEVERITY = (
    "broken",
    "regressed",
    "unsure",
    "still failing",
    "not judged",
    "no data",
    "improved",
    "no change",
)

Row = Callable[[PointVerdict, Verdict], str]


def sweep_points(v: Verdict) -> int:
    """The dtype x shape points the verdict covers."""
    return len({(p.key.dtype, p.key.shape) for p in (*v.points, *v.kernels)})


def is_summarised(v: Verdict) -> bool:
    return sweep_points(v) > FULL_POINTS


def _groups(rows: Iterable[PointVerdict]) -> dict[tuple[str, str], list[PointVerdict]]:
    out: dict[tuple[str, str], list[PointVerdict]] = {}
    for p in sorted(rows, key=lambda p: (p.key.variant, p.key.dtype)):
        out.setdefault((p.key.variant, p.key.dtype), []).append(p)
    return out


def worst(rows: Iterable[PointVerdict], k: int) -> list[PointVerdict]:
    """The ``k`` worst rows: the most severe state first, then the largest change."""
    return sorted(
        rows,
        key=lambda p: (SEVERITY.index(p.state), -(p.cmp.change.estimate if p.cmp else 0.0)),
    )[:k]


def _label(p: PointVerdict, v: Verdict) -> str:
    """The verdict a row's state cell shows, without the row's own figures."""
    if not p.gating:
        return CONTEXT_WORDS.get(p.state, p.state)
    if state_cell(p, v) == NOT_A_GAIN:
        return NOT_A_GAIN
    alone = p.state in ("regressed", "improved") and not p.corroborated
    return f"{ICON[p.state]} {p.state}" + (" (uncorroborated)" if alone else "")


def _counts(group: Sequence[PointVerdict], v: Verdict) -> str:
    tally: dict[str, int] = {}
    for p in sorted(group, key=lambda p: SEVERITY.index(p.state)):
        label = _label(p, v)
        tally[label] = tally.get(label, 0) + 1
    return " · ".join(f"{n} {label}" for label, n in tally.items())


COUNTS_HEADER = "| variant | dtype | points | verdicts | worst point |\n|---|---|---|---|---|"


def counts_table(rows: Iterable[PointVerdict], v: Verdict) -> str:
    """One line per variant and dtype: its points, how many had each verdict, the worst."""
    lines = [COUNTS_HEADER]
    for (variant, dtype), group in _groups(rows).items():
        (top,) = worst(group, 1)
        change = change_text(top.cmp.change) if top.cmp else escape_md(top.no_data or "no data")
        lines.append(
            f"| {escape_md(variant)} | {escape_md(dtype)} | {len(group)} | {_counts(group, v)} "
            f"| {escape_md(top.key.shape)} {change} |"
        )
    return "\n".join(lines)


def worst_rows(rows: Iterable[PointVerdict], v: Verdict, k: int, row: Row) -> list[str]:
    """The ``k`` worst rows of each variant and dtype, group by group."""
    return [row(p, v) for group in _groups(rows).values() for p in worst(group, k)]


def everything_else(
    rows: Iterable[PointVerdict], site_url: str | None, machine: str, links: int = 6
) -> str:
    """Where the rows left out are: the website (with the worst points' graphs), and the
    report command."""
    ways = "`fusion-perfbot report --full` prints every row, `--json FILE` writes them"
    if not site_url:
        return f"Every other point: {ways}."
    tops = [worst(group, 1)[0] for group in _groups(rows).values()][:links]
    graphs = ", ".join(link(point_name(p.key), graph_url(site_url, p.key, machine)) for p in tops)
    where = f" (the worst of each variant and dtype: {graphs})" if graphs else ""
    return f"Every other point: {link('the history website', site_url)}{where}; {ways}."

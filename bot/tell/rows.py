"""The main-branch watch's table rows (pure, bot/history/sections.py): one function per kind of
row, with the header it belongs under; every untrusted text goes through escape_md. The PR
comment's and issues' tables are bot/tell/tables.py's, laid out by the templates.

Why a mark only on gating rows: eager and torch.compile are context, shown with the threshold
that would apply, so that a reader can see them move without reading them as a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.decide.stats import Comparison
from bot.decide.types import PointVerdict, Verdict
from bot.results.types import PointKey, bench_names
from bot.site.links import graph_url as site_graph_url
from bot.tell.markdown import change_text, escape_md, pct, ratio_text
from bot.tell.tables import bandwidth, state_cell
from bot.tell.words import ICON, point_name

MAX_MAIN_ROWS = 30


def graph_url(site_url: str, key: PointKey, machine: str | None = None) -> str:
    """The asv site's graph of one point's ratio (bot/site/links.py builds the route)."""
    params = {"variant": key.variant, "dtype": key.dtype, "shape": key.shape}
    return site_graph_url(site_url, bench_names(key.fusion).ratio, params, machine)


def _us(c: Comparison | None) -> str:
    if c is None:
        return "n/a"
    return f"{c.base.estimate * 1e6:.1f} → {c.head.estimate * 1e6:.1f} ({pct(c.change.estimate)})"


def _moved(p: PointVerdict) -> str:
    return (
        escape_md(p.key.variant)
        if p.moved == "thunder" and not p.key.variant.startswith("thunder")
        else p.moved
    )


def worst_first(points: Iterable[PointVerdict]) -> list[PointVerdict]:
    return sorted(points, key=lambda p: -p.cmp.change.estimate if p.cmp else 0.0)


def main_row(p: PointVerdict, v: Verdict | None = None) -> str:
    if p.cmp is None:
        why = escape_md(p.no_data or "no data")
        mark = f"{ICON[p.state]} " if p.gating else ""  # context rows: words, no mark
        return f"| {point_name(p.key)} | | | | {p.threshold:.1%} | {mark}{why} | | |"
    c = p.cmp
    return (
        f"| {point_name(p.key)} | {ratio_text(c.base)} | {ratio_text(c.head)} | "
        f"{change_text(c.change)} | {p.threshold:.1%} | {state_cell(p, v)} | {bandwidth(p)} "
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
        f"| {state_cell(p, v)} | {bandwidth(p)} |"
    )


KERNEL_HEADER = (
    "| point | kernel µs base → head | change [95% CI] | threshold | verdict "
    "| % of peak bandwidth, base → head |\n|---|---|---|---|---|---|"
)


def broken_row(p: PointVerdict) -> str:
    error = escape_md(p.error or p.no_data or "no error text recorded", 300)
    return f"| {point_name(p.key)} | {ICON[p.state]} {p.state} | {error} |"


BROKEN_HEADER = "| point | state | error at head |\n|---|---|---|"

"""What changed inside a fusion between two commits of a history (pure): the captures of the
last good and the first bad commit compared point by point, in the PR comment's words.

Why the watch tells it: a maintainer handed "the ratio rose 4% between two nightlies" first asks
what Thunder does differently now, and the captures (the fusion definitions, segments and
kernels each variant ran: benchmarks/engine/capture.py) answer it without a GPU. The same
comparer as a PR's (bot/fusion/compare.py) and the same bullets (bot/tell/hints.py), so a
difference reads alike in a PR comment and a main-branch issue. The captures come from the
machine the measured code ran on: every text is escaped as the PR's are.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.fusion.compare import compare_points
from bot.fusion.types import PointCapture
from bot.tell.hints import SUMMARY, bullets

__all__ = ["INSIDE_WHY", "SUMMARY", "changed_inside"]

INSIDE_WHY = (
    "Between the captures of the last good and the first bad commit, point by point "
    "(material differences first; _(context)_ ones cannot explain a time change alone):"
)


def changed_inside(
    good: Mapping[str, PointCapture], bad: Mapping[str, PointCapture]
) -> tuple[str, ...]:
    """The differences at every point both commits captured, as bullet texts (a variant that
    ran the same compiled program at both is said so: a clue too, the change is outside it)."""
    both = sorted(set(good) & set(bad))
    return tuple(bullets(tuple(f for k in both for f in compare_points(good[k], bad[k]))))

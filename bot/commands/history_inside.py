"""The captures a history's commits left beside their results, read for the watch's alerts
(the I/O edge of bot/history/inside.py).

A run's captures sit beside its results file, ``<results>/<machine>/<commit>.captures/``
(benchmarks/engine/capture.py; benchmarks.under_test.builds writes them so for every build of
a history), found as a PR side's are (bot/commands/captures.py ``captures_beside``). A
capture that cannot be read is a warning and no hints, never a lost alert: the captures are a
diagnostic, not the measurement (bot/commands/captures.py says the same of a PR's).
"""

from __future__ import annotations

import sys

from bot.commands.captures import captures_beside
from bot.fusion.read import has_fusion, read_side
from bot.fusion.types import PointCapture
from bot.history.inside import changed_inside
from bot.history.series import History
from bot.results.types import BadInput


def _captured(h: History, sha: str) -> dict[str, PointCapture] | None:
    """The commit's captures of the history's fusion, found as a PR side's are."""
    commit = h.commit(sha)
    folder = captures_beside(commit.runs) if commit is not None else None
    if folder is None or not has_fusion(folder, h.fusion):
        return None
    return read_side(folder, h.fusion)


def inside_from_captures(h: History, last_good: str, first_bad: str) -> tuple[str, ...]:
    """What changed inside ``h``'s fusion between the two commits' captures; () where either
    has none, or one cannot be read (said on stderr)."""
    try:
        good, bad = _captured(h, last_good), _captured(h, first_bad)
    except BadInput as exc:
        print(f"fusion-perfbot: warning: fusion captures not read: {exc}", file=sys.stderr)
        return ()
    if good is None or bad is None:
        return ()
    return changed_inside(good, bad)

"""One machine's history, analysed (pure): the change points, the breaks, what each linked
issue should do, and the exit code the whole says."""

from __future__ import annotations

from dataclasses import dataclass

from bot.config import VerdictSettings
from bot.decide.noise_model import NoiseModel
from bot.decide.verdict import model_fits
from bot.exitcodes import ExitCode
from bot.history.broken import Break, find_breaks
from bot.history.changepoint import Scan, find_changes
from bot.history.follow import FollowUp, follow_ups
from bot.history.method import Method
from bot.history.series import History
from bot.history.table import Table, build


@dataclass(frozen=True)
class Watch:
    history: History
    method: Method
    scan: Scan
    follow: tuple[FollowUp, ...]  # one per confirmed regression, in commit order
    breaks: tuple[Break, ...]
    notes: tuple[str, ...]
    model: str  # which between-run noise was used, in words
    table: Table  # what the changes were found in (stranded issues are judged on it)

    @property
    def standing(self) -> tuple[FollowUp, ...]:
        """Confirmed regressions still regressed at the newest commits."""
        return tuple(f for f in self.follow if f.state == "regressed")

    @property
    def broken(self) -> tuple[Break, ...]:
        """Confirmed breaks whose points still fail at the newest commit."""
        return tuple(b for b in self.breaks if b.confirmed and b.follow == "regressed")

    @property
    def code(self) -> ExitCode:
        if self.broken:
            return ExitCode.BROKEN
        return ExitCode.REGRESSION if self.standing else ExitCode.OK_NO_REGRESSION


def analyse(
    history: History,
    s: VerdictSettings,
    model: NoiseModel | None,
    m: Method | None = None,
    *,
    follow: bool = True,
) -> Watch:
    """``follow=False``: the changes and breaks only, no follow-ups (the calibration counts
    changes; what their issues would do is not part of it)."""
    m = m or Method()
    used, note = model_fits(model, history.runs) if history.runs else (None, "no runs")
    table = build(history, s, used)
    scan = find_changes(table, m, note)
    ups = follow_ups(table, scan, m, note) if follow else ()
    keys = [*table.families["ratio"].keys, *table.families["nvfuser"].keys]
    breaks, said = find_breaks(history, s, m.min_after, keys)
    # Without a model, why is the report's "Noise:" line (and --json's "noise"): not a note too.
    notes = (*history.notes, *said)
    return Watch(history, m, scan, ups, breaks, notes, note, table)

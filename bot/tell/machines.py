"""A machine's part of the comment, before it is words (pure): its verdict and runs, whether it
gates, and what its runner checks say. A PR benchmarked on several GPU runners gets one
comment (bot/tell/comment.py), each machine decided on its own runs and noise model
(bot/decide/verdict.py uses the configured model only on the machine it was measured on).

A machine whose runner check failed (bot/results/hygiene.py) measured a GPU in a state the
noise model never saw: its part says so first, which side and repeat, with the problems, and
it does not gate (bot/commands/inputs.py gives it exit 0, its issues are held).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from bot.alert.builds import Builds, compare_builds
from bot.alert.control import Drift, drifted
from bot.decide.types import Verdict
from bot.decide.unjudged import unjudged
from bot.fusion.hints import Hints
from bot.fusion.names import fusion_title, unit_key, unit_words
from bot.results.types import DEFAULT_FUSION, CommitResults, Provenance, RunCheck
from bot.tell.markdown import escape_md

__all__ = [
    "MachineReport",
    "check_notes",
    "check_warning",
    "drift_warning",
    "shown",
    "worst_state",
]

#: Worst first: the overall headline is the first of these any machine has.
ORDER = (
    "broken",
    "regressed",
    "unsure",
    "uncalibrated",
    "inconclusive (no data)",
    "no change",
    "improved",
)
#: Failed checks listed in a machine's warning before "and N more".
MAX_LISTED = 10


@dataclass(frozen=True)
class MachineReport:
    """One machine's verdict and runs; no verdict when it has one side only (``missing``)."""

    machine: str
    verdict: Verdict | None
    base_runs: tuple[CommitResults, ...] = ()
    head_runs: tuple[CommitResults, ...] = ()
    missing: str | None = None
    hints: Hints | None = None  # what changed inside the fusion, when both sides were captured
    #: Why no noise model covers this machine (it is shown, not judged), or None.
    uncalibrated: str | None = None
    #: The fusion of the catalog this verdict is of: each fusion is judged on its own.
    fusion: str = DEFAULT_FUSION

    @property
    def unit(self) -> str:
        """The key of this fusion on this machine (alert sections, the comment's memory)."""
        return unit_key(self.machine, self.fusion)

    @property
    def title(self) -> str:
        """The fusion as a person reads it: "Softmax backward"."""
        return fusion_title(self.fusion)

    @property
    def where(self) -> str:
        """The machine, and the fusion when it is not RMSNorm backward: for plain words."""
        return unit_words(self.unit)

    @property
    def base(self) -> Provenance | None:
        return self.base_runs[0].provenance if self.base_runs else None

    @property
    def head(self) -> Provenance | None:
        return self.head_runs[0].provenance if self.head_runs else None

    def runs(self) -> list[tuple[str, CommitResults]]:
        return [*(("base", r) for r in self.base_runs), *(("head", r) for r in self.head_runs)]

    @property
    def failed_checks(self) -> list[tuple[str, str, RunCheck]]:
        """(side, results folder, failed check) of every run whose runner check failed."""
        return [(side, r.folder, c) for side, r in self.runs() if r.checks for c in r.checks.failed]

    @property
    def held(self) -> str | None:
        """Why this machine does not gate, or None when it does."""
        if not self.failed_checks:
            return None
        sides = sorted({side for side, _, _ in self.failed_checks})
        return f"a runner check failed on {self.machine} ({' and '.join(sides)})"

    @cached_property
    def builds(self) -> Builds:
        """What differs between this machine's base and head for this fusion
        (bot/alert/builds.py)."""
        return compare_builds(self.base, self.head, self.fusion)

    @cached_property
    def drift(self) -> Drift | None:
        """Why the in-run control says this run is not evidence (bot/alert/control.py), or
        None; a failed runner check or a missing noise model already says it does not gate."""
        if self.verdict is None or self.held is not None or self.uncalibrated is not None:
            return None
        return drifted(self.verdict, self.builds)

    @property
    def not_gating(self) -> str | None:
        """Why this machine's verdict does not count, in plain words, or None when it does."""
        if self.uncalibrated is not None:
            return f"no noise model covers {self.machine}"
        if self.held is not None:
            return f"{self.held}: re-run on a fit runner"
        if self.drift is not None:
            return f"{self.drift.short}; re-run the benchmark job"
        return None

    @property
    def gates(self) -> bool:
        """Its verdict counts: compared, its runner check passed, a noise model covers it, and
        its unchanged side held still."""
        return self.verdict is not None and self.not_gating is None


def check_warning(m: MachineReport) -> list[str]:
    """The lines under a machine's headline when a runner check failed (quoted by the
    template): that it does not gate, and each failed check."""
    failed = m.failed_checks
    if not failed:
        return []
    lines = [
        "⚠️ **A runner check failed: this machine's verdict does not gate** (no failing exit "
        "code; its alert issues are neither opened nor closed). The GPU was found unfit:"
    ]
    for side, folder, c in failed[:MAX_LISTED]:
        problems = "; ".join(escape_md(p, 200) for p in c.problems[:5])
        more = f" (and {len(c.problems) - 5} more)" if len(c.problems) > 5 else ""
        lines.append(
            f"- **{side}**, {escape_md(folder, 60)}, {escape_md(c.when, 10)} the measurement "
            f"({escape_md(c.checked_at, 40)}): {problems}{more}"
        )
    if len(failed) > MAX_LISTED:
        lines.append(f"- and {len(failed) - MAX_LISTED} more failed check(s)")
    return lines


def drift_warning(m: MachineReport) -> list[str]:
    """The line under a drifted machine's headline (quoted by the template): what moved with
    nothing changed, what that means, and what to do."""
    if m.drift is None:
        return []
    return [
        f"⚠️ **The in-run control moved: this run is not evidence.** {escape_md(m.drift.text)}. "
        "Nothing is filed and the status is neutral; re-run the benchmark job (the control "
        "is the side whose build and definition are the same at base and head: docs/METHOD.md)."
    ]


def check_notes(m: MachineReport) -> list[str]:
    """A note line when the runner checked this machine's runs and every check passed; none
    for results without checks (old data reads as before)."""
    runs = m.runs()
    checked = [r for _, r in runs if r.checks is not None]
    if not checked or m.failed_checks:
        return []
    unchecked = len(runs) - len(checked)
    rest = f"; {unchecked} run(s) not checked" if unchecked else ""
    return [f"runner checks passed ({len(checked)} of {len(runs)} run(s) checked{rest})"]


def worst_state(reports: Sequence[MachineReport]) -> str:
    states = {shown(m).overall for m in reports if m.verdict is not None}
    return next((s for s in ORDER if s in states), "inconclusive (no data)")


def shown(m: MachineReport) -> Verdict:
    """The verdict as the comment shows it: a machine that does not gate (no noise model, a
    failed runner check, a drifted runner) is not judged, never red, and says why."""
    assert m.verdict is not None
    why = m.not_gating
    return m.verdict if why is None else unjudged(m.verdict, why)

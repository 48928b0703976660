"""What was measured of one fusion on one machine (pure data): its verdict and runs, its hints,
and the facts that bear on whether it can be judged (a missing side, no noise model, a failed
runner check). Nothing here decides: bot/alert/decision.py turns these into the run's one
decision, which every output renders.

A PR benchmarked on several GPU runners has one of these a fusion a machine, each decided on
its own runs and noise model (bot/decide/verdict.py uses the configured model only on the
machine it was measured on).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.decide.stack import Stack
from bot.decide.types import Verdict
from bot.fusion.hints import Hints
from bot.fusion.names import fusion_title, unit_key, unit_words
from bot.results.types import DEFAULT_FUSION, CommitResults, Provenance, RunCheck


@dataclass(frozen=True)
class Measured:
    """One fusion on one machine: its verdict and runs; no verdict when it has one side only
    (``missing``)."""

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
    #: The stack the noise model used here was fitted on (bot/decide/stack.py); None: no
    #: model used, or one that does not record it. A run of another stack is told so.
    model_stack: Stack | None = None
    #: Why this fusion's own calibration on this machine falls short (the noise model's
    #: ``provisional``, issue 39): a move of it is shown, not gated on. Empty: calibrated.
    provisional: tuple[str, ...] = ()

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
        """Why the runner checks say this machine's runs are no evidence, or None."""
        if not self.failed_checks:
            return None
        sides = sorted({side for side, _, _ in self.failed_checks})
        return f"a runner check failed on {self.machine} ({' and '.join(sides)})"

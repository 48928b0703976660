"""How often the verdict is wrong, measured out of sample on real A/A runs (runs of one code).

Why leave runs out: the verdict's intervals use a noise model fitted on A/A runs
(bot/decide/noise_model.py). Grading it on the runs it was fitted on would let it expect exactly
the spread it has seen. So for every choice of base runs and head runs (disjoint), the model is
fitted on the OTHER runs only, as production meets a new PR: neither side seen by the model.

Each choice is judged on the recorded runs and on ``copies`` bootstrap copies, in which each
run's rounds are drawn with replacement (the same round indices for every variant of a (dtype,
shape), so that a ratio stays paired with the kernel times of its round). The copies vary the
within-run noise only; the between-run noise comes from the recorded choices alone, so the trials
of one choice are correlated: a bound over all trials is optimistic, and the count over the
recorded trials is kept beside it.

Head is left as it is (A/A: every alarm is false) or given a known change on top of its real
noise: +2% on Thunder's kernels at every point, +2% on nvFuser's hand-written fusion at every
point, or one point's Thunder kernel alone. Only nvFuser and the gating variants are kept: the
context variants decide nothing, and dropping them halves the cost of a verdict.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from bot.config import VerdictSettings
from bot.decide.noise_model import NoiseModel, fit
from bot.decide.types import Verdict
from bot.decide.verdict import decide
from bot.results.types import REFERENCE, BadInput, CommitResults, PointKey

#: The lone-point changes tried, smallest first; the search stops at the first detected reliably.
GRID = (0.02, 0.03, 0.05, 0.075, 0.10, 0.15, 0.20, 0.30)
RELIABLE = 0.95
BROAD = 0.02  # the change of every point
LONE = 0.05  # the lone change at each large point
LARGE_SHAPE = "16384x8192"
#: Choices of base and head runs per runs-a-side, at most (a seeded sample beyond that).
MAX_CHOICES = 30
#: The noise model needs this many runs that are neither base nor head.
MIN_MODEL_RUNS = 2

Kind = Literal["a/a", "thunder", "nvfuser", "lone"]


def binomial_upper(hits: int, trials: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound of a rate (bisection on the binomial CDF)."""
    if hits >= trials:
        return 1.0

    def cdf(p: float) -> float:
        return sum(math.comb(trials, k) * p**k * (1 - p) ** (trials - k) for k in range(hits + 1))

    lo, hi = hits / trials, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) > 1 - confidence else (lo, mid)
    return hi


@dataclass(frozen=True)
class Proportion:
    """Hits over trials with their exact 95% bounds: every calibration (PR mode and history)
    states its rates this way."""

    hits: int
    trials: int

    @property
    def upper95(self) -> float:
        return binomial_upper(self.hits, self.trials)

    @property
    def lower95(self) -> float:
        return 1.0 - binomial_upper(self.trials - self.hits, self.trials)


@dataclass(frozen=True)
class Rate(Proportion):
    """Hits over trials, and over the recorded (not resampled) trials among them. A count that
    stopped early, once RELIABLE was out of reach, has fewer ``trials`` than ``planned``."""

    real_hits: int
    real_trials: int
    planned: int

    @property
    def rate(self) -> float:
        return self.hits / self.trials if self.trials else 0.0

    @property
    def stopped(self) -> bool:
        return self.trials < self.planned


@dataclass(frozen=True)
class Trial:
    """One verdict to take: both sides, and the model fitted without either."""

    model: NoiseModel
    base: tuple[CommitResults, ...]
    head: tuple[CommitResults, ...]
    real: bool


@dataclass(frozen=True)
class Scenario:
    """What is done to head's samples (``factor``; ``key``: that point only) and what counts
    as a hit (:func:`hit`)."""

    kind: Kind
    factor: float = 1.0
    key: PointKey | None = None


def only_fusion(run: CommitResults, fusion: str) -> CommitResults:
    """One fusion's points alone: what its own verdict reads (a fusion is judged on its own
    points and noise: issue 38), so its trials are calibrated on nothing else."""
    return replace(run, points={k: p for k, p in run.points.items() if k.fusion == fusion})


def gating_only(run: CommitResults, s: VerdictSettings) -> CommitResults:
    """nvFuser and the gating variants: all that the overall verdict and its guards read."""
    keep = {k: p for k, p in run.points.items() if k.variant == REFERENCE or s.is_gating(k.variant)}
    return replace(run, points=keep)


def _times(xs: tuple[float, ...] | None, f: float) -> tuple[float, ...] | None:
    return None if xs is None else tuple(x * f for x in xs)


def scale_thunder(
    run: CommitResults, factor: float, s: VerdictSettings, only: PointKey | None = None
) -> CommitResults:
    """Thunder slower: every gating point's kernel times and ratios (or ``only`` that one's)."""
    points = {
        k: replace(p, ratio=_times(p.ratio, factor), kernel_s=_times(p.kernel_s, factor))
        if s.is_gating(k.variant) and only in (None, k)
        else p
        for k, p in run.points.items()
    }
    return replace(run, points=points)


def scale_nvfuser(run: CommitResults, factor: float) -> CommitResults:
    """nvFuser's fusion slower: its kernel times up, and so every contender's ratio down."""
    points = {
        k: replace(p, kernel_s=_times(p.kernel_s, factor))
        if k.variant == REFERENCE
        else replace(p, ratio=_times(p.ratio, 1 / factor))
        for k, p in run.points.items()
    }
    return replace(run, points=points)


def resample(run: CommitResults, rng: np.random.Generator) -> CommitResults:
    """A bootstrap copy: rounds drawn with replacement, one draw for all the variants of a
    (dtype, shape), so that the ratio and kernel samples of a round stay together."""
    draws: dict[tuple[str, str], list[int]] = {}
    points = {}
    for key in sorted(run.points):
        p = run.points[key]
        n = len(p.kernel_s or p.ratio or ())
        if n == 0:  # no data: nothing to draw
            points[key] = p
            continue
        idx = draws.setdefault((key.dtype, key.shape), [int(i) for i in rng.integers(0, n, n)])
        if len(idx) != n or len(p.ratio or idx) != n:
            raise BadInput(f"{run.commit[:8]} {key.label}: rounds are not index-aligned")
        points[key] = replace(p, ratio=_pick(p.ratio, idx), kernel_s=_pick(p.kernel_s, idx))
    return replace(run, points=points)


def _pick(xs: tuple[float, ...] | None, idx: Sequence[int]) -> tuple[float, ...] | None:
    return None if xs is None else tuple(xs[i] for i in idx)


def choices(n_runs: int, a_side: int, seed: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Ordered choices of disjoint base and head runs (indices) that leave MIN_MODEL_RUNS for
    the model: all of them up to MAX_CHOICES, else a seeded sample of that many."""
    if n_runs - 2 * a_side < MIN_MODEL_RUNS:
        return []
    every = [
        (b, h)
        for b in itertools.combinations(range(n_runs), a_side)
        for h in itertools.combinations(sorted(set(range(n_runs)) - set(b)), a_side)
    ]
    if len(every) <= MAX_CHOICES:
        return every
    picked = np.random.default_rng([seed, a_side]).choice(len(every), MAX_CHOICES, replace=False)
    return [every[int(i)] for i in sorted(picked)]


def trials(
    runs: Sequence[CommitResults], a_side: int, copies: int, s: VerdictSettings
) -> tuple[Trial, ...]:
    """Each choice's recorded trial, then its ``copies`` bootstrap copies (seeded per choice)."""
    runs = [gating_only(r, s) for r in runs]
    out = []
    for n, (b, h) in enumerate(choices(len(runs), a_side, s.seed)):
        model = fit([r for i, r in enumerate(runs) if i not in (*b, *h)])
        base, head = tuple(runs[i] for i in b), tuple(runs[i] for i in h)
        out.append(Trial(model, base, head, True))
        rng = np.random.default_rng([s.seed, a_side, n])
        for _ in range(copies):
            copy = [resample(r, rng) for r in (*base, *head)]
            out.append(Trial(model, tuple(copy[:a_side]), tuple(copy[a_side:]), False))
    return tuple(out)


def shifted(run: CommitResults, sc: Scenario, s: VerdictSettings) -> CommitResults:
    if sc.kind == "nvfuser":
        return scale_nvfuser(run, sc.factor)
    return run if sc.kind == "a/a" else scale_thunder(run, sc.factor, s, sc.key)


def hit(v: Verdict, sc: Scenario) -> bool:
    """A/A: a false alarm (regressed or broken). +2% Thunder: regressed, by Thunder's kernels or
    the ratio. +2% nvFuser: the nvFuser guard regressed, and the ratio's fall not called an
    improvement. A lone point: regressed."""
    state = {g.kind: g.state for g in v.guards}
    if sc.kind == "a/a":
        return v.overall in ("regressed", "broken")
    if sc.kind == "thunder":
        return v.regressed and "regressed" in (state.get("thunder"), state.get("ratio"))
    if sc.kind == "nvfuser":
        return state.get("nvfuser") == "regressed" and v.overall != "improved"
    return v.regressed


def _tally(ts: Sequence[Trial], oks: Sequence[bool]) -> Rate:
    real = [ok for t, ok in zip(ts, oks, strict=False) if t.real]
    return Rate(sum(oks), len(oks), sum(real), len(real), len(ts))


def count(
    ts: Sequence[Trial], sc: Scenario, s: VerdictSettings, stop_below: float | None = None
) -> Rate:
    """Hits over the trials; with ``stop_below``, stop as soon as that rate is out of reach."""
    allowed = len(ts) - math.ceil(stop_below * len(ts)) if stop_below is not None else len(ts)
    oks: list[bool] = []
    for t in ts:
        v = decide(t.base, tuple(shifted(r, sc, s) for r in t.head), s, t.model)
        oks.append(hit(v, sc))
        if len(oks) - sum(oks) > allowed:
            break
    return _tally(ts, oks)


@dataclass(frozen=True)
class Task:
    """One scenario over one side's trials: a unit of work for a process pool. ``search``: the
    GRID's changes of the scenario's point; ``full``: its own change counted in full too."""

    trials: tuple[Trial, ...]
    scenario: Scenario
    s: VerdictSettings
    search: bool = False
    full: bool = True


@dataclass(frozen=True)
class Outcome:
    rates: tuple[Rate, ...]  # A/A: false alarms, unsure, anything but "no change"; nvFuser:
    # detected, read as "improved"
    tried: tuple[tuple[float, Rate], ...] = ()  # a search, smallest first; the last reliable

    @property
    def smallest(self) -> float | None:
        shift, rate = self.tried[-1] if self.tried else (None, None)
        return shift if rate and rate.rate >= RELIABLE and not rate.stopped else None


def work(task: Task) -> Outcome:
    """What a task asks; a search stops at the first GRID change detected RELIABLE of the time
    (and counts a smaller one only until it cannot be)."""
    ts, sc, s = task.trials, task.scenario, task.s
    if sc.kind == "a/a":
        vs = [decide(t.base, t.head, s, t.model) for t in ts]
        alarms = _tally(ts, [hit(v, sc) for v in vs])
        unsure = _tally(ts, [v.overall == "unsure" for v in vs])
        return Outcome((alarms, unsure, _tally(ts, [v.overall != "no change" for v in vs])))
    if sc.kind == "nvfuser":  # detected, and (never acceptable) read as an improvement
        vs = [decide(t.base, tuple(shifted(r, sc, s) for r in t.head), s, t.model) for t in ts]
        return Outcome(
            (
                _tally(ts, [hit(v, sc) for v in vs]),
                _tally(ts, [v.overall == "improved" for v in vs]),
            )
        )
    tried: list[tuple[float, Rate]] = []
    for shift in GRID if task.search else ():
        tried.append((shift, count(ts, replace(sc, factor=1 + shift), s, stop_below=RELIABLE)))
        if tried[-1][1].rate >= RELIABLE and not tried[-1][1].stopped:
            break
    mine = next((r for x, r in tried if 1 + x == sc.factor and not r.stopped), None)
    rates = (mine or count(ts, sc, s),) if task.full else ()
    return Outcome(rates, tuple(tried))

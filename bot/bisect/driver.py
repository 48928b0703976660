"""The bisect loop: decide every measured build, ask the search for the next step, measure it,
record it, until there is an answer or this call's budget is spent.

Everything is decided again from the recorded runs on every turn (bot/decide/verdict.py is
pure and fast), so a resumed bisect and one that never stopped agree; the state file is
written after every measurement, so a call killed at its time limit loses at most the build it
was measuring.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from bot.bisect.classify import REFERENCE_CLASS, Class, Judged, judge
from bot.bisect.measure import MeasureError, Measurer
from bot.bisect.points import one_fusion, restrict, without_data
from bot.bisect.search import Found, Measure, Step, Stuck, next_step
from bot.bisect.state import Run, State, write_state
from bot.bisect.timeline import Timeline
from bot.bisect.upstream import UpstreamCommit
from bot.config import VerdictSettings
from bot.decide.noise_model import NoiseModel
from bot.decide.verdict import decide
from bot.results.locate import load_commit
from bot.results.types import BadInput, CommitResults

Status = Literal["found", "stuck", "unfinished"]


@dataclass(frozen=True)
class Plan:
    timeline: Timeline
    points: tuple[str, ...]
    variants: tuple[str, ...]
    settings: VerdictSettings
    model: NoiseModel | None = None
    max_runs: int = 3  # runs of an unsure build before the bisect gives up on it
    max_measurements: int | None = None  # in this call
    budget_s: float | None = None  # in this call: no measurement starts that may not fit
    total_budget_s: float | None = None  # over every call: then the bisect stops, unanswered
    upstream: tuple[UpstreamCommit, ...] = ()  # the commits the git builds are (bisect-plan)

    @property
    def fusion(self) -> str:
        """The one fusion the points are of (bot/bisect/points.py): what is bisected."""
        return one_fusion(self.points)

    def commit_of(self, build: str) -> UpstreamCommit | None:
        spec = self.timeline.build(build).spec
        return next((c for c in self.upstream if spec.commit and c.sha == spec.commit), None)


@dataclass(frozen=True)
class Row:
    """One build of the timeline, with its runs and, once decided, its class."""

    index: int
    name: str
    runs: tuple[Run, ...]
    judged: Judged | None  # None: the reference, or not measured

    @property
    def is_reference(self) -> bool:
        """The known-good build, once measured: what every other build is compared with."""
        return self.index == 0 and bool(self.runs)

    @property
    def cls(self) -> Class | None:
        if self.is_reference:
            return REFERENCE_CLASS
        return self.judged.cls if self.judged else None

    @property
    def label(self) -> str | None:
        """The class as the answer shows it: the reference is named so, not "good"; a bad
        build whose points fail (as the known-bad build's do) says it is broken, and a build
        broken where the known-bad one is not says that."""
        if self.is_reference:
            return "reference"
        if self.cls == "bad" and self.judged is not None and self.judged.broken_points:
            return f"bad: broken ({self.judged.broken_points} points fail)"
        if self.cls == "broken":
            return "broken (the known-bad build is not)"
        return self.cls


@dataclass(frozen=True)
class Outcome:
    status: Status
    step: Step  # Found, Stuck, or the Measure this call stopped before
    rows: tuple[Row, ...]
    measured_now: int
    stopped: str | None = None  # why an unfinished call stopped

    @property
    def measurements(self) -> int:
        return sum(len(r.runs) for r in self.rows)

    @property
    def machine(self) -> str | None:
        return next((r.runs[0].machine for r in self.rows if r.runs), None)


def _load(run: Run, base: Path, plan: Plan) -> CommitResults:
    results = load_commit(base / run.results, run.commit, run.machine, plan.settings.min_samples)
    return restrict(results, plan.points, plan.variants)


def evaluate(plan: Plan, state: State, base: Path) -> tuple[Row, ...]:
    """Every build of the timeline, each measured one decided against the reference."""
    names = plan.timeline.names
    good_runs = state.runs_of(names[0])
    if not good_runs:
        return tuple(Row(i, n, state.runs_of(n), None) for i, n in enumerate(names))
    reference = [_load(r, base, plan) for r in good_runs]
    gaps = without_data(reference[0], plan.points, plan.variants)
    if gaps:
        raise BadInput(
            f"the known-good build {names[0]} has no data for {', '.join(gaps[:6])}"
            f"{' and more' if len(gaps) > 6 else ''}: it cannot be the reference there"
        )
    for r in state.runs:
        if r.build in names:
            _same_setting(r, good_runs[0])
    judged: dict[str, Judged] = {}
    order = [names[-1], *names[1:-1]]  # the known-bad build first: it says what "bad" is
    for name in order:
        runs = state.runs_of(name)
        if not runs:
            continue
        verdict = decide(reference, [_load(r, base, plan) for r in runs], plan.settings, plan.model)
        bad = judged.get(names[-1])
        guards = None if name == names[-1] else (bad.alarming if bad and bad.cls == "bad" else ())
        judged[name] = judge(verdict, guards)
    return tuple(Row(i, n, state.runs_of(n), judged.get(n)) for i, n in enumerate(names))


def _same_setting(run: Run, reference: Run) -> None:
    if run.machine != reference.machine:
        raise BadInput(
            f"{run.build} run {run.attempt} was measured on {run.machine}, the known-good "
            f"build on {reference.machine}: builds are compared on one machine only"
        )
    if run.stack is not None and reference.stack is not None and run.stack != reference.stack:
        differ = sorted(set(run.stack.items()) ^ set(reference.stack.items()))
        raise BadInput(
            f"{run.build} run {run.attempt} saw another stack than the known-good build "
            f"besides the package: {differ[:6]}"
        )


def _classes(rows: tuple[Row, ...]) -> Mapping[str, Class]:
    return {r.name: r.judged.cls for r in rows if r.judged is not None}


def _slug(text: str) -> str:
    keep = "".join(c if c.isalnum() or c in "._-" else "-" for c in text)
    return keep.strip("-")[:80] or "build"


def measured_bracket(rows: tuple[Row, ...]) -> tuple[str | None, str | None]:
    """The latest build measured good (the reference counts) and the first bad one after it:
    where the measurements stand before there is an answer."""
    goods = [r for r in rows if r.cls == REFERENCE_CLASS]
    last = goods[-1] if goods else None
    bads = [r for r in rows if r.cls == "bad" and (last is None or r.index > last.index)]
    return (last.name if last else None, bads[0].name if bads else None)


def _spent(plan: Plan, rows: tuple[Row, ...], total: float) -> Stuck:
    """The plan's budget over every call is spent: where the measurements stand, unanswered."""
    return Stuck(
        f"its budget of {plan.total_budget_s:.0f} s of measuring is spent ({total:.0f} s "
        "measured): give it more, or bisect the bracket by hand",
        None,
        *measured_bracket(rows),
    )


def run_bisect(
    plan: Plan,
    state: State,
    state_path: Path,
    measurer: Measurer,
    *,
    work: Path,
    log: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
) -> tuple[Outcome, State]:
    """Measure until an answer, the call's budget, or a failure (which leaves the state as
    it was after the last finished measurement, on disk).

    The budget counts each measurement's time as the measurer reports it (a recorded run:
    how long it took on the GPU) or as it took here, whichever is longer."""
    base = state_path.parent
    spent, measured_now = 0.0, 0  # seconds of measuring in this call, by the measurer's account
    longest = max((r.wall_s or 0.0 for r in state.runs), default=0.0)
    while True:
        rows = evaluate(plan, state, base)
        counts = state.counts()
        step = next_step(plan.timeline.names, _classes(rows), counts, plan.max_runs)
        if not isinstance(step, Measure):
            status: Status = "found" if isinstance(step, Found) else "stuck"
            return Outcome(status, step, rows, measured_now), state
        stopped = None
        total = sum(r.wall_s or 0.0 for r in state.runs)
        if plan.total_budget_s is not None and total + longest > plan.total_budget_s:
            return Outcome("stuck", _spent(plan, rows, total), rows, measured_now), state
        if plan.max_measurements == 0:
            stopped = "this call measures nothing (--post-only)"
        elif plan.max_measurements is not None and measured_now >= plan.max_measurements:
            stopped = f"--max-measurements {plan.max_measurements} reached"
        elif plan.budget_s is not None and spent + longest > plan.budget_s:
            stopped = (
                f"the next measurement (up to {longest:.0f} s, the longest so far) would end "
                f"past --budget-s {plan.budget_s:.0f}"
            )
        if stopped:
            return Outcome("unfinished", step, rows, measured_now, stopped), state
        index = plan.timeline.names.index(step.build)
        attempt = counts.get(step.build, 0) + 1
        dest = work / f"{index:03d}-{_slug(step.build)}" / f"run-{attempt}"
        shutil.rmtree(dest, ignore_errors=True)  # a measurement that failed left it half-done
        dest.parent.mkdir(parents=True, exist_ok=True)
        log(f"== measure {step.build} (run {attempt}): {step.why}")
        began = clock()
        got = measurer.measure(plan.timeline.build(step.build), attempt, dest)
        took = max(clock() - began, got.wall_s or 0.0)
        spent, longest = spent + took, max(longest, took)
        run = Run(
            step.build,
            attempt,
            got.results.resolve().relative_to(base.resolve()).as_posix(),
            got.commit,
            got.machine,
            got.wall_s,
            datetime.now(timezone.utc).isoformat(timespec="seconds"),
            got.stack,
        )
        try:  # a run that cannot be read would stop every later call: never record it
            _load(run, base, plan)
        except BadInput as exc:
            raise MeasureError(f"{step.build}: its results cannot be used: {exc}") from exc
        state = replace(state, runs=(*state.runs, run))
        write_state(state_path, state)
        measured_now += 1


__all__ = [
    "Found",
    "Measure",
    "Outcome",
    "Plan",
    "Row",
    "Stuck",
    "evaluate",
    "measured_bracket",
    "run_bisect",
]

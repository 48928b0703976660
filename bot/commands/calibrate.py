"""The ``calibrate`` command: the verdict's false alarms and power, measured out of sample on
the recorded A/A runs (what a trial is and what counts: bot/decide/calibrate.py), as text or JSON.

The runs are those ``noise`` pools (bot/commands/noise.py: one Thunder variant, one machine, one
stack), so the calibration grades the noise model production fits. Each task (one scenario over
one side's trials) is deterministic, so they are spread over a process pool: the output is the
same for any ``--jobs``, only sooner.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import IO

from bot.commands.noise import same_code_runs
from bot.commands.noise_file import read_noise_model
from bot.commands.steps import emit_json, step, write_json_atomically
from bot.config import Config, VerdictSettings
from bot.decide.calibrate import (
    BROAD,
    LARGE_SHAPE,
    LONE,
    MIN_MODEL_RUNS,
    Outcome,
    Scenario,
    Task,
    Trial,
    only_fusion,
    trials,
    work,
)
from bot.decide.calibration import Calibration, FusionSide, Side, provisional
from bot.decide.config_check import check_gating
from bot.decide.noise_model import NoiseModel
from bot.decide.noise_model import to_json as noise_json
from bot.exitcodes import ExitCode
from bot.results.types import BadInput, CommitResults
from bot.tell.calibration import report_text, to_json

Mapper = Callable[[Callable[[Task], Outcome], Sequence[Task]], Iterable[Outcome]]
#: The scenarios every calibration (and each fusion's own) begins with, in this order.
BROAD_SCENARIOS = (Scenario("a/a"), Scenario("thunder", 1 + BROAD), Scenario("nvfuser", 1 + BROAD))


def _plan(
    a_side: int, ts: tuple[Trial, ...], runs: Sequence[CommitResults], s: VerdictSettings
) -> list[Task]:
    """A/A, +BROAD Thunder, +BROAD nvFuser; then per gating point with data everywhere, at 1
    run a side (a PR job's usual) the smallest reliable lone change (and LONE in full at a large
    point), at more runs a side only LONE at the large points: the search is the costly part."""
    tasks = [Task(ts, sc, s) for sc in BROAD_SCENARIOS]
    for key in runs[0].contenders():
        if not s.is_gating(key.variant) or not all(
            (p := r.points.get(key)) and p.ratio for r in runs
        ):
            continue
        large = key.shape == LARGE_SHAPE
        if a_side == 1 or large:
            tasks.append(Task(ts, Scenario("lone", 1 + LONE, key), s, a_side == 1, large))
    return tasks


def _side(k: int, n_runs: int, copies: int, tasks: Sequence[Task], done: Sequence[Outcome]) -> Side:
    (alarms, unsure, quiet), (thunder,), (nvfuser, nv_improved) = (o.rates for o in done[:3])
    points = [(t.scenario.key, o) for t, o in zip(tasks[3:], done[3:], strict=True)]
    return Side(
        k,
        len(tasks[0].trials) // (1 + copies),
        copies,
        n_runs - 2 * k,
        alarms,
        unsure,
        quiet,
        thunder,
        nvfuser,
        nv_improved,
        tuple((key, o.rates[0]) for key, o in points if key and o.rates),
        tuple(
            (key, tasks[0].s.threshold_for(key.label), o) for key, o in points if key and o.tried
        ),
    )


def _fusion_plan(
    runs: Sequence[CommitResults], a_side: int, copies: int, s: VerdictSettings
) -> list[tuple[str, list[Task]]]:
    """Each fusion on its own (issue 39), where the runs hold several: A/A, +BROAD Thunder and
    +BROAD nvFuser over trials of that fusion's points alone, its model fitted on them."""
    fusions = sorted({k.fusion for r in runs for k in r.points})
    if len(fusions) < 2:
        return []  # the whole calibration is that fusion's
    plans = []
    for fusion in fusions:
        ts = trials([only_fusion(r, fusion) for r in runs], a_side, copies, s)
        plans.append((fusion, [Task(ts, sc, s) for sc in BROAD_SCENARIOS]))
    return plans


def calibrate(
    runs: Sequence[CommitResults],
    s: VerdictSettings,
    *,
    copies: int,
    most_a_side: int = 2,
    map_: Mapper = map,
) -> Calibration:
    """Every number of runs a side up to ``most_a_side`` that the runs allow (``2k + 2`` runs
    for k a side). ``map_`` runs the tasks, the larger sides' first, as they take longest."""
    if len(runs) < 2 + MIN_MODEL_RUNS:
        raise BadInput(
            f"calibration needs at least {2 + MIN_MODEL_RUNS} A/A runs (one a side and "
            f"{MIN_MODEL_RUNS} more to fit the noise model on), got {len(runs)}"
        )
    sizes = range(1, most_a_side + 1)
    fits = [k for k in sizes if len(runs) - 2 * k >= MIN_MODEL_RUNS][::-1]
    plans = {k: _plan(k, trials(runs, k, copies, s), runs, s) for k in fits}
    # Each fusion at the most runs a side the runs allow (a PR's 2 where they do).
    per_fusion = _fusion_plan(runs, fits[0], copies, s)
    work_list = [t for k in fits for t in plans[k]] + [t for _, ts in per_fusion for t in ts]
    done = iter(map_(work, work_list))
    results = {k: [next(done) for _ in plans[k]] for k in fits}
    fusions = []
    for fusion, _ in per_fusion:
        (alarms, _, _), (thunder,), (nvfuser, _) = (next(done).rates for _ in range(3))
        fusions.append(FusionSide(fusion, fits[0], alarms, thunder, nvfuser))
    prov = runs[0].provenance
    return Calibration(
        runs[0].machine,
        prov.text("calls_per_sample") if prov else None,
        tuple(r.commit[:8] for r in runs),
        tuple(_side(k, len(runs), copies, plans[k], results[k]) for k in sorted(fits)),
        tuple(k for k in sizes if k not in fits),
        fusions=tuple(fusions),
    )


def marked(model: NoiseModel, c: Calibration) -> NoiseModel:
    """``model`` with the fusions this calibration found short (every other fusion's mark
    cleared: the latest calibration says); refused for a model of another machine. Runs of one
    fusion leave the model as it is: that fusion's calibration is the model's own (what
    ``missed`` lists, which fails the onboarding instead), and they say nothing of another's."""
    if model.machine != c.machine:
        raise ValueError(
            f"the noise model is for machine {model.machine}, the calibration's runs are "
            f"{c.machine}'s: not marked"
        )
    if not c.fusions:
        return model
    return replace(model, provisional=provisional(c))


def default_jobs() -> int:
    """The CPUs this process may run on (a CI runner's 2, not its host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run_calibrate(
    dirs: Sequence[Path],
    env: Mapping[str, str],
    out: IO[str],
    *,
    thunder_variant: str,
    machine: str | None,
    config_path: Path | None,
    runs_a_side: int,
    trials: int,
    jobs: int | None,
    json_path: Path | None,
    mark_model: Path | None = None,
) -> int:
    with step("check arguments", ExitCode.USAGE):
        jobs = default_jobs() if jobs is None else jobs
        for name, value, least in (("--runs-a-side", runs_a_side, 1), ("--trials", trials, 0)):
            if value < least:
                raise ValueError(f"{name} must be at least {least}, got {value}")
        if jobs < 1:
            raise ValueError(f"--jobs must be at least 1, got {jobs}")
    with step("load configuration", ExitCode.USAGE):
        s = (config := Config.from_env(env, config_path)).verdict
    with step("read results", ExitCode.BAD_INPUT):
        runs, others = same_code_runs(
            dirs, thunder_variant, machine or config.machine, s.min_samples
        )
    with step("check configuration against the results", ExitCode.USAGE):
        check_gating(s, runs)
    with step("calibrate", ExitCode.BAD_INPUT):
        measure = partial(calibrate, runs, s, copies=trials, most_a_side=runs_a_side)
        if jobs == 1:
            result = measure()
        else:
            with ProcessPoolExecutor(jobs) as pool:
                result = measure(map_=partial(pool.map, chunksize=1))
        result = replace(result, left_out=tuple(r.commit[:8] for r in others))
    if mark_model is not None:
        with step(f"read noise model {mark_model}", ExitCode.BAD_INPUT):
            model = read_noise_model(mark_model)
        with step(f"write {mark_model}", ExitCode.USAGE):
            write_json_atomically(mark_model, noise_json(marked(model, result)))
    if json_path is not None:
        with step(f"write {json_path}", ExitCode.USAGE):
            if emit_json(json_path, to_json(result), out):
                return ExitCode.OK_NO_REGRESSION  # stdout holds the JSON alone
    out.write(report_text(result) + "\n")
    return ExitCode.OK_NO_REGRESSION

"""The ``history-calibrate`` command: how often ``history`` reports a change where none is
(orderings of real A/A runs, real builds that agree) and how soon it finds a real one (real
slower states spliced in), printed from the committed data (bot/history/calibrate.py).

Which run is what is read from its provenance record, never from a list here: the A/A runs
are those ``noise`` pools (bot/commands/noise.py); a run with a ``slowdown`` record is the
state ``slow-<side>-<percent>``; Thunder's ``unfused-backward`` variant is the unfused one;
a run in which every gating Thunder point failed is ``broken``. Only runs of the A/A runs'
sampling and set of variants are used (repeat 2 of a pair is left out, as ``history`` does).
``--states DIR`` adds folders whose slower or broken runs are used but whose stock runs are
not A/A runs here (the package-under-test pair, for a second broken commit).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import IO

from bot.commands.calibrate import default_jobs
from bot.commands.noise import same_code_runs
from bot.commands.noise_file import read_noise_model
from bot.commands.steps import emit_json, step
from bot.config import Config, VerdictSettings
from bot.exitcodes import ExitCode
from bot.history.calibrate import Pool, calibrate
from bot.history.calibrate_text import report_text, to_json
from bot.history.load import read_runs
from bot.history.method import Method
from bot.history.series import signature
from bot.results.types import BadInput, CommitResults


def state_of(run: CommitResults, s: VerdictSettings) -> str | None:
    """What a recorded run is, from its provenance record (None: a stock run)."""
    contenders = [p for k, p in run.points.items() if s.is_gating(k.variant)]
    if contenders and all(
        p.ratio is None and (p.no_data or "failed") == "failed" for p in contenders
    ):
        return "broken"
    prov = run.provenance
    if prov is None:
        return None
    side, fraction = prov.text("slowdown", "side"), prov.text("slowdown", "fraction")
    if side and fraction:
        return f"slow-{side}-{round(100 * float(fraction))}"
    return "unfused" if prov.text("thunder_variant") == "unfused-backward" else None


def pool_of(
    dirs: Sequence[Path],
    states: Sequence[Path],
    nightlies: Path | None,
    machine: str | None,
    s: VerdictSettings,
) -> Pool:
    stock, _ = same_code_runs(dirs, "stock", machine, s.min_samples)
    if not stock:
        raise BadInput("no A/A (stock) runs in the results folders")
    where = stock[0].machine
    every = read_runs([*dirs, *states], where, s.min_samples)[where]
    kept = signature(stock[0])
    grouped: dict[str, list[CommitResults]] = {}
    for run in every:
        name = state_of(run, s) if signature(run) == kept else None
        if name is not None and all(r.commit != run.commit for r in grouped.get(name, [])):
            grouped.setdefault(name, []).append(run)
    for side in ("thunder", "nvfuser"):  # every slower run of a side, as one state too
        mine = [
            r for name, runs in grouped.items() if name.startswith(f"slow-{side}-") for r in runs
        ]
        if len({n for n in grouped if n.startswith(f"slow-{side}-")}) > 1:
            grouped[f"slow-{side}-any"] = mine
    unfused = tuple(grouped.pop("unfused", ()))
    night: tuple[CommitResults, ...] = ()
    if nightlies is not None:
        found = read_runs([nightlies], where, s.min_samples)[where]
        night = tuple(sorted(found, key=lambda r: (r.date or 0, r.commit)))
    return Pool(tuple(stock), {k: tuple(v) for k, v in grouped.items()}, unfused, night)


def cmd_history_calibrate(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    return run_history_calibrate(
        args.results,
        env,
        out,
        states=args.states or [],
        nightlies=args.nightlies,
        machine=args.machine,
        config_path=args.config,
        json_path=args.json,
        method=Method(window=args.window, min_after=args.min_after),
        jobs=args.jobs,
    )


def run_history_calibrate(
    dirs: Sequence[Path],
    env: Mapping[str, str],
    out: IO[str],
    *,
    states: Sequence[Path],
    nightlies: Path | None,
    machine: str | None,
    config_path: Path | None,
    json_path: Path | None,
    method: Method,
    jobs: int | None = None,
) -> int:
    with step("check arguments", ExitCode.USAGE):
        jobs = default_jobs() if jobs is None else jobs
        if jobs < 1:
            raise ValueError(f"--jobs must be at least 1, got {jobs}")
    with step("load configuration", ExitCode.USAGE):
        cfg = Config.from_env(env, config_path)
        s = cfg.verdict
        if s.noise_model is None:
            raise ValueError("the configuration names no noise model ([verdict] noise_model)")
    with step(f"read noise model {s.noise_model}", ExitCode.BAD_INPUT):
        shipped = read_noise_model(s.noise_model)
    with step("read results", ExitCode.BAD_INPUT):
        pool = pool_of(dirs, states, nightlies, machine or cfg.machine, s)
    with step("calibrate", ExitCode.BAD_INPUT):
        if jobs == 1:
            result = calibrate(pool, s, shipped, method)
        else:
            with ProcessPoolExecutor(jobs) as workers:
                result = calibrate(pool, s, shipped, method, partial(workers.map, chunksize=1))
    if json_path is not None:
        with step(f"write {json_path}", ExitCode.USAGE):
            if emit_json(json_path, to_json(result), out):
                return ExitCode.OK_NO_REGRESSION
    out.write(report_text(result) + "\n")
    return ExitCode.OK_NO_REGRESSION

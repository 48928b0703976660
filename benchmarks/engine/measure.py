"""One paired measurement of the whole sweep: every point of the size set (benchmarks/engine/
point.py), written as one provenance record, then the captures.

asv runs this once per run (``setup_cache``); every asv benchmark of the suite then reports one
slice of it. One of a PR job's turns (benchmarks/engine/turns.py) builds every point first and
times them all in its turn.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from .. import runner_check as hygiene
from ..fusions.catalog import DEFAULT
from . import capture, provenance, turns
from .config import Shape, SuiteConfig, point_key
from .kept import Kept, capture_kept, note_step
from .point import BuiltPoint, build_point, measure_built, measure_point, out_of_memory
from .session import SCHEMA, Run, open_run, progress, run_header
from .session import missing_stack as missing_stack  # re-exported: the GPU tests ask here


def _failed(fusion: str, dtype: str, shape: Shape, exc: Exception) -> dict[str, Any]:
    """A point's error in place of its record: one broken point must not sink the sweep."""
    import torch

    progress(traceback.format_exc())
    torch.cuda.empty_cache()
    where = {} if fusion == DEFAULT else {"fusion": fusion}
    error = f"{exc.__class__.__name__}: {exc}"
    return {**where, "dtype": dtype, "shape": shape.label, "error": error}


def measure_key(
    run: Run,
    cfg: SuiteConfig,
    dtype: str,
    shape: Shape,
    fusion: str = DEFAULT,
    keep: list[Kept] | None = None,
) -> dict[str, Any]:
    """One point, or its error."""
    try:
        return measure_point(shape, dtype, cfg, run.flush, run.sleep_fit, fusion, keep)
    except Exception as exc:
        return _failed(fusion, dtype, shape, exc)


def progress_line(done: int, total: int, key: str, point: dict[str, Any]) -> str:
    phases = point.get("phases_s", {})
    timing_txt = ", ".join(f"{k} {v:.1f}" for k, v in phases.items())
    return f"[{done}/{total}] {key} {_point_line(point)} ({timing_txt})"


def _build_one(
    cfg: SuiteConfig, fusion: str, dtype: str, shape: Shape, keep: bool
) -> tuple[BuiltPoint | dict[str, Any], str | None]:
    """A point built (or its error), and the out-of-memory error that puts it off to the turn
    (then nothing of it is held)."""
    try:
        point = build_point(shape, dtype, cfg, fusion, keep)
    except Exception as exc:
        failed = _failed(fusion, dtype, shape, exc)
        return failed, failed["error"] if out_of_memory(failed["error"]) else None
    oom = point.out_of_memory()
    if oom is not None:
        point.release()
    return point, oom


def _build_all(
    cfg: SuiteConfig, keys: list[tuple[str, str, Shape]], wanted: set[str]
) -> tuple[dict[str, BuiltPoint | dict[str, Any]], set[str]]:
    """Every point built and checked, none timed: a process's work before its turn. Also the
    points put off to the turn: those that ran out of GPU memory while the job's other
    processes built theirs (the catalog's four on an 80 GB H100, data/h100-issue39 call 11).
    In its turn the process builds them again with the others' builds over, before it times."""
    started = time.time()
    pending: dict[str, BuiltPoint | dict[str, Any]] = {}
    deferred: set[str] = set()
    for done, (fusion, dtype, shape) in enumerate(keys, 1):
        key = point_key(dtype, shape, fusion)
        progress(f"[{done}/{len(keys)}] {key}: building ...")
        built, oom = _build_one(cfg, fusion, dtype, shape, fusion in wanted)
        if oom is not None:
            deferred.add(key)
            progress(f"[{done}/{len(keys)}] {key}: built again in the turn ({oom.splitlines()[0]})")
        else:
            pending[key] = built
    note_step("build", started, time.time())
    return pending, deferred


def _take_turn(turn: turns.Turn) -> float:
    """Wait for this process's turn, then check the GPU where run_gpu.sh would have; the
    seconds waited."""
    turn.built()
    started = time.time()
    waited = turn.wait()
    note_step("wait_turn", started, time.time())
    progress(f"turn {turn.index}/{turn.count}: waited {waited:.1f} s")
    hygiene.check_in_turn("before", turn.job_pids())
    return waited


def measure_suite(cfg: SuiteConfig, capture_to: Path | None = None) -> dict[str, Any]:
    """The whole sweep as one JSON-able record (docs/DATA.md); ``skip`` set when it cannot run.

    With ``capture_to``, the fusions :func:`capture.fusions_to_capture` names are captured
    there after every point's timed rounds, from the variants the rounds timed (issue 39: a
    second process rebuilt them, 23-53 s a side on the H200). Run as one of a job's turns
    (benchmarks/engine/turns.py), it builds every point first and times them in its turn."""
    turn = turns.Turn.from_env(os.environ)
    if turn is not None:
        turn.announce()
    try:
        return _measure_suite(cfg, capture_to, turn)
    finally:
        if turn is not None:
            turn.built()  # a process that failed before its turn must not hold the others
            turn.over()


def _measure_suite(
    cfg: SuiteConfig, capture_to: Path | None, turn: turns.Turn | None
) -> dict[str, Any]:
    keys = cfg.fusion_points()
    wanted = set(capture.fusions_to_capture()) if capture_to is not None else set()
    pending: dict[str, BuiltPoint | dict[str, Any]] = {}
    deferred: set[str] = set()
    startup_s, began = None, None
    if turn is not None:
        reason = missing_stack()
        if reason is not None:
            return {"schema": SCHEMA, "skip": reason}
        startup_s, building = provenance.process_age_s(), provenance.utc_now()
        pending, deferred = _build_all(cfg, keys, wanted)
        began = (building, _take_turn(turn))
    # Opened in the turn: the copy-bandwidth probe and a slowdown's sleep fit time the GPU.
    run = open_run(cfg, startup_s, began)
    if isinstance(run, str):
        return {"schema": SCHEMA, "skip": run}
    points: dict[str, Any] = {}
    kept: list[Kept] = []
    for fusion, dtype, shape in keys:
        key = point_key(dtype, shape, fusion)
        progress(f"[{len(points) + 1}/{len(keys)}] {key} ...")
        keep = kept if fusion in wanted else None
        built = pending.pop(key, None)
        if built is None:
            points[key] = measure_key(run, cfg, dtype, shape, fusion, keep)
            if key in deferred:
                points[key]["built_in_turn"] = True
        elif isinstance(built, BuiltPoint):
            try:
                points[key] = measure_built(built, cfg, run.flush, run.sleep_fit, keep)
            except Exception as exc:
                points[key] = _failed(fusion, dtype, shape, exc)
        else:
            points[key] = built  # its build failed
        progress(progress_line(len(points), len(keys), key, points[key]))
    record = {**run_header(cfg, run), "points": points}
    target = os.environ.get("RMSNORM_BENCH_RECORD")
    if target:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, sort_keys=True) + "\n")
    if capture_to is not None:
        # After the record is safe: a capture is a diagnostic, and nvFuser may end the process.
        started = time.time()
        capture_kept(kept, capture_to)
        note_step("capture", started, time.time())
    if turn is not None:
        hygiene.check_in_turn("after", turn.job_pids())
    return record


def replay_record(path: str, commit: str | None) -> dict[str, Any]:
    """The recorded measurement of ``commit`` (or the last one) from a provenance file."""
    with open(path, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    chosen = [r for r in records if commit is None or r.get("commit") in (commit, None)]
    if not chosen or chosen[-1].get("schema") != SCHEMA:
        raise ValueError(f"{path}: no {SCHEMA} record for commit {commit}")
    return dict(chosen[-1])


def _point_line(point: dict[str, Any]) -> str:
    if "error" in point:
        return f"FAILED: {point['error']}"
    parts = []
    for name, entry in point["variants"].items():
        if entry["status"] != "ok":
            parts.append(f"{name} {entry['status'].upper()}")
        elif entry["kernel_us"]:
            parts.append(f"{name} {statistics.median(entry['kernel_us']):.1f}us")
    return ", ".join(parts)


def main() -> int:
    """Measure the configured size set and append the record (``RMSNORM_BENCH_RECORD``).

    run_gpu.sh measures here, before asv: asv then only stores the record (replay), so a slow
    asv reporting phase can never cost a finished measurement.
    """
    capture_dir = os.environ.get("RMSNORM_BENCH_CAPTURE_DIR")
    record = measure_suite(SuiteConfig.from_env(), Path(capture_dir) if capture_dir else None)
    if "skip" in record:
        print(f"measure: {record['skip']}", file=sys.stderr)
        return 3
    if not os.environ.get("RMSNORM_BENCH_RECORD"):
        json.dump(record, sys.stdout, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

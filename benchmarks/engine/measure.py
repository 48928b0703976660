"""One paired measurement of the whole sweep: every variant, interleaved round by round.

asv runs this once per run (``setup_cache``); every asv benchmark of the suite then reports one
slice of it. Interleaving the variants inside each round, in a rotating order, makes clock and
thermal drift hit all of them alike, so the per-round ratio thunder/nvFuser is a paired sample.
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

from ..fusions.catalog import DEFAULT, FUSIONS
from . import capture, timing, variants
from . import slowdown as slow
from .config import BASELINE, Shape, SuiteConfig, point_key
from .correctness import Reference, check
from .kept import Kept, capture_kept, note_step
from .session import SCHEMA, Run, open_run, progress, run_header
from .session import missing_stack as missing_stack  # re-exported: the GPU tests ask here

HOST_ROUNDS = 10


def _definition(variant: variants.Variant, key: str) -> dict[str, Any]:
    """``definition_sha256`` (the printed text) and ``definition_canonical_sha256`` (its
    canonical form, digest.py) for a variant that has a fingerprint (the hand-written fusion):
    hex digests, or None where printing the definition failed (said in the log)."""
    if variant.fingerprint is None:
        return {}
    if variant.fingerprint.error is not None:
        progress(f"{key} {variant.name}: definition not printed: {variant.fingerprint.error}")
    return {
        "definition_sha256": variant.fingerprint.sha256,
        "definition_canonical_sha256": variant.fingerprint.canonical,
    }


def _rotated(order: list[str], round_idx: int) -> list[str]:
    """The variants in this round's order: each takes every position in turn, so none is
    always first after the flush or always last before the next round."""
    shift = round_idx % len(order) if order else 0
    return order[shift:] + order[:shift]


def _probe_us(variant: variants.Variant, flush: timing.L2Flusher) -> float:
    """Median kernel time of a few flushed calls, before the rounds (to size a slowdown)."""
    times = []
    for _ in range(slow.FIT_REPEATS):
        variant.clear()
        flush()
        times.append(timing.profile_call(variant.call).kernel_us)
    return statistics.median(times)


def _inject(
    variant: variants.Variant,
    slowdown: slow.Slowdown,
    fit: slow.SleepFit,
    flush: timing.L2Flusher,
) -> dict[str, Any]:
    """Make `variant` slower by the asked fraction of its own kernel time; what was added."""
    base_us = _probe_us(variant, flush)
    target_us = slowdown.fraction * base_us
    cycles = fit.cycles_for(target_us)
    added_us = slow.sleep_us(cycles)
    variant.call = slow.slowed(variant.call, cycles)
    return {
        "fraction": slowdown.fraction,
        "base_kernel_us": base_us,
        "target_us": target_us,
        "cycles": cycles,
        "sleep_us": added_us,
        "added_fraction": added_us / base_us,
    }


def measure_point(
    shape: Shape,
    dtype: str,
    cfg: SuiteConfig,
    flush: timing.L2Flusher,
    sleep_fit: slow.SleepFit | None = None,
    fusion: str = DEFAULT,
    keep: list[Kept] | None = None,
) -> dict[str, Any]:
    """One point measured; with ``keep``, its variants that a capture reads are appended
    there (built, correct or not) instead of freed."""
    import torch

    f = FUSIONS[fusion]
    phases: dict[str, float] = {}
    phase_start = time.perf_counter()
    inputs = f.make_inputs(shape.m, shape.n, dtype, 0)
    ref = Reference(f, inputs)
    built: dict[str, variants.Variant] = {}
    kept = Kept(fusion, dtype, shape) if keep is not None else None
    report: dict[str, dict[str, Any]] = {}
    for name in cfg.variants:
        variant: variants.Variant | None = None
        if not cfg.measures(name, fusion) or (name == "thunder-func" and f.functional is None):
            continue  # left out by the size set, or no torch.nn.functional form
        try:
            variant = variants.build(name, inputs, dtype, cfg.thunder_variant, f)
            entry = {"compile_s": variant.compile_s, **check(variant, ref, dtype)}
            if entry["status"] == "ok":
                built[name] = variant
            elif entry.get("sanity"):
                entry["error"] = f"incorrect result: {entry['sanity']}"
            else:
                entry["error"] = (
                    f"incorrect result: max |error| {entry['max_abs_error']:.3g}, "
                    f"{entry['rel_error']:.3g} of the largest reference value "
                    f"(tolerance {entry['tolerance']:.0e})"
                )
        except Exception as exc:
            entry = {"status": "error", "error": f"{exc.__class__.__name__}: {exc}"}
            progress(traceback.format_exc())
        if kept is not None and name in capture.CAPTURED:
            if variant is not None:
                variant.clear()  # its outputs: only the built state is kept
                kept.variants[name] = variant
            else:
                kept.errors[name] = entry["error"]
        if variant is not None:
            entry.update(_definition(variant, point_key(dtype, shape, fusion)))
        entry.update(kernel_us=[], host_us=[], kernel_names=[], kernel_count=None)
        report[name] = entry
    del ref
    phases["build_and_check_s"] = time.perf_counter() - phase_start

    order = list(built)
    for _ in range(cfg.warmup):
        for name in order:
            built[name].clear()
            built[name].call()
    if cfg.slowdown is not None and sleep_fit is not None:
        for name in order:
            if cfg.slowdown.applies_to(name, fusion):
                report[name]["slowdown"] = _inject(built[name], cfg.slowdown, sleep_fit, flush)
    phase_start = time.perf_counter()
    fallbacks = 0
    reps = {n: cfg.calls_for(n) for n in order}
    for round_idx in range(cfg.rounds):
        rotated = _rotated(order, round_idx)
        # The calls of all variants alternate inside the round, so the paired sample of each
        # variant spans the same stretch of time.
        calls = [
            (f"{n}#{rep}", built[n].call, built[n].clear)
            for rep in range(max(reps.values()))
            for n in rotated
            if rep < reps[n]
        ]
        samples = timing.profile_round(calls, flush)
        fallbacks += samples.pop("__fallback__", None) is not None
        for name in rotated:
            per_call = [samples[f"{name}#{rep}"] for rep in range(reps[name])]
            call_us = [s.kernel_us for s in per_call]
            report[name]["kernel_us"].append(statistics.fmean(call_us))
            report[name].setdefault("kernel_us_calls", []).append(call_us)
            if not report[name]["kernel_names"]:
                report[name]["kernel_names"] = list(per_call[0].names)
            report[name].setdefault("_counts", []).extend(len(s.names) for s in per_call)
    phases["rounds_s"] = time.perf_counter() - phase_start
    phases["fallback_rounds"] = fallbacks
    phase_start = time.perf_counter()
    for round_idx in range(HOST_ROUNDS):
        for name in _rotated(order, round_idx):
            built[name].clear()
            flush()
            report[name]["host_us"].append(timing.host_wall_us(built[name].call))
    for name in order:
        counts = report[name].pop("_counts")
        report[name]["kernel_count"] = int(statistics.median(counts))

    phases["host_s"] = time.perf_counter() - phase_start
    base = report[BASELINE]["kernel_us"]
    for name in order:
        if name != BASELINE and base:
            report[name]["ratio"] = [
                t / b for t, b in zip(report[name]["kernel_us"], base, strict=True)
            ]
    if kept is not None:
        assert keep is not None  # kept is made only for a caller that keeps
        keep.append(kept)
    del built, inputs, kept
    torch.cuda.empty_cache()
    itemsize = torch.empty((), dtype=getattr(torch, dtype)).element_size()
    return {
        **({} if fusion == DEFAULT else {"fusion": fusion}),
        "dtype": dtype,
        "shape": shape.label,
        "bytes_moved": f.bytes_moved(shape.m, shape.n, itemsize),
        "variants": report,
        "phases_s": phases,
    }


def measure_key(
    run: Run,
    cfg: SuiteConfig,
    dtype: str,
    shape: Shape,
    fusion: str = DEFAULT,
    keep: list[Kept] | None = None,
) -> dict[str, Any]:
    """One point, or its error: one broken point must not sink the sweep."""
    import torch

    try:
        return measure_point(shape, dtype, cfg, run.flush, run.sleep_fit, fusion, keep)
    except Exception as exc:
        progress(traceback.format_exc())
        torch.cuda.empty_cache()
        where = {} if fusion == DEFAULT else {"fusion": fusion}
        return {
            **where,
            "dtype": dtype,
            "shape": shape.label,
            "error": f"{exc.__class__.__name__}: {exc}",
        }


def progress_line(done: int, total: int, key: str, point: dict[str, Any]) -> str:
    phases = point.get("phases_s", {})
    timing_txt = ", ".join(f"{k} {v:.1f}" for k, v in phases.items())
    return f"[{done}/{total}] {key} {_point_line(point)} ({timing_txt})"


def measure_suite(cfg: SuiteConfig, capture_to: Path | None = None) -> dict[str, Any]:
    """The whole sweep as one JSON-able record (docs/DATA.md); ``skip`` set when it cannot run.

    With ``capture_to``, the fusions :func:`capture.fusions_to_capture` names are captured
    there after every point's timed rounds, from the variants the rounds timed (issue 39: a
    second process rebuilt them, 23-53 s a side on the H200)."""
    run = open_run(cfg)
    if isinstance(run, str):
        return {"schema": SCHEMA, "skip": run}
    points: dict[str, Any] = {}
    keys = cfg.fusion_points()
    wanted = set(capture.fusions_to_capture()) if capture_to is not None else set()
    kept: list[Kept] = []
    for fusion, dtype, shape in keys:
        key = point_key(dtype, shape, fusion)
        progress(f"[{len(points) + 1}/{len(keys)}] {key} ...")
        keep = kept if fusion in wanted else None
        points[key] = measure_key(run, cfg, dtype, shape, fusion, keep)
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

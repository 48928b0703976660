"""One point of the sweep: its variants built and checked, then timed round by round.

Building and timing are apart because one of a PR job's processes builds every point before
its turn on the GPU (benchmarks/engine/turns.py); a process on its own does both at once
(:func:`measure_point`). Interleaving the variants inside each round, in a rotating order,
makes clock and thermal drift hit all of them alike, so the per-round ratio thunder/nvFuser is
a paired sample.
"""

from __future__ import annotations

import statistics
import time
import traceback
from dataclasses import dataclass
from typing import Any

from ..fusions.catalog import DEFAULT, FUSIONS
from . import capture, timing, variants
from . import slowdown as slow
from .config import BASELINE, Shape, SuiteConfig, point_key
from .correctness import Reference, check
from .kept import Kept
from .session import progress

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


@dataclass
class BuiltPoint:
    """A point whose variants are built and checked, not yet timed: what a process holds
    between its builds and its turn on the GPU (benchmarks/engine/turns.py)."""

    fusion: str
    dtype: str
    shape: Shape
    inputs: Any
    built: dict[str, variants.Variant]
    report: dict[str, dict[str, Any]]
    phases: dict[str, float]
    kept: Kept | None

    def out_of_memory(self) -> str | None:
        """The first variant error that says the GPU ran out of memory, if any: built beside a
        job's other processes, a point may find taken the memory it would have had alone."""
        for entry in self.report.values():
            if out_of_memory(entry.get("error")):
                return str(entry["error"])
        return None

    def release(self) -> None:
        """Free what the point holds on the GPU: its variants, inputs and kept state."""
        import torch

        self.built.clear()
        self.inputs = None
        self.kept = None
        torch.cuda.empty_cache()


def out_of_memory(error: str | None) -> bool:
    """Whether an error text is torch's or nvFuser's CUDA out-of-memory error."""
    return error is not None and "out of memory" in error.lower()


def build_point(
    shape: Shape, dtype: str, cfg: SuiteConfig, fusion: str = DEFAULT, keep: bool = False
) -> BuiltPoint:
    """Every variant of one point built and checked against the reference; with ``keep``,
    those a capture reads are also held (built, correct or not) for it."""
    f = FUSIONS[fusion]
    phase_start = time.perf_counter()
    inputs = f.make_inputs(shape.m, shape.n, dtype, 0)
    ref = Reference(f, inputs)
    built: dict[str, variants.Variant] = {}
    kept = Kept(fusion, dtype, shape) if keep else None
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
            if name in built:
                variant.clear()  # a point waiting for its turn holds no outputs
            entry.update(_definition(variant, point_key(dtype, shape, fusion)))
        entry.update(kernel_us=[], host_us=[], kernel_names=[], kernel_count=None)
        report[name] = entry
    del ref
    # What the checks and the reference left in torch's cache goes back: one of a job's turns
    # holds every built point while the job's other processes hold theirs (four processes of
    # RMSNorm backward's `pr` set held 13,350-14,894 MiB each at the barrier: data/h100-issue39,
    # call 10).
    import torch

    torch.cuda.empty_cache()
    phases = {"build_and_check_s": time.perf_counter() - phase_start}
    return BuiltPoint(fusion, dtype, shape, inputs, built, report, phases, kept)


def measure_built(
    point: BuiltPoint,
    cfg: SuiteConfig,
    flush: timing.L2Flusher,
    sleep_fit: slow.SleepFit | None = None,
    keep: list[Kept] | None = None,
) -> dict[str, Any]:
    """The built point's timed rounds (and host timings), then its record; its variants are
    freed, but those held for a capture go to ``keep``."""
    import torch

    f, fusion, built, report = FUSIONS[point.fusion], point.fusion, point.built, point.report
    phases = dict(point.phases)
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
    # A point none of whose variants built has nothing to time: its record keeps each error.
    for round_idx in range(cfg.rounds if order else 0):
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
        built[name].clear()

    phases["host_s"] = time.perf_counter() - phase_start
    base = report[BASELINE]["kernel_us"]
    for name in order:
        if name != BASELINE and base:
            report[name]["ratio"] = [
                t / b for t, b in zip(report[name]["kernel_us"], base, strict=True)
            ]
    if point.kept is not None and keep is not None:
        keep.append(point.kept)
    point.release()
    itemsize = torch.empty((), dtype=getattr(torch, point.dtype)).element_size()
    return {
        **({} if fusion == DEFAULT else {"fusion": fusion}),
        "dtype": point.dtype,
        "shape": point.shape.label,
        "bytes_moved": f.bytes_moved(point.shape.m, point.shape.n, itemsize),
        "variants": report,
        "phases_s": phases,
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
    """One point built, checked and timed at once; with ``keep``, its variants that a capture
    reads are appended there (built, correct or not) instead of freed."""
    point = build_point(shape, dtype, cfg, fusion, keep is not None)
    return measure_built(point, cfg, flush, sleep_fit, keep)

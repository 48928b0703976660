"""One measuring process's shared state and the header of its record.

Apart from the point loop (measure.py) because two loops use it: the whole sweep
(``measure_suite``) and a shard of the nightly sweep (benchmarks/shards), which writes every
point as it finishes and the header last.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from ..fusions.catalog import FUSIONS
from . import digest, provenance, timing
from . import slowdown as slow
from .config import SuiteConfig

SCHEMA = "rmsnorm-bwd-provenance/1"


def progress(message: str) -> None:
    """Progress for a person watching a long GPU run (run_gpu.sh measures in the foreground)."""
    print(message, file=sys.stderr, flush=True)


def missing_stack() -> str | None:
    """Why this machine cannot run the suite, or None when it can."""
    try:
        import torch
    except ImportError as exc:
        return f"torch is not installed ({exc})"
    if not torch.cuda.is_available():
        return "no CUDA device is visible (torch.cuda.is_available() is False)"
    for module in ("nvfuser_direct", "thunder"):
        try:
            __import__(module)
        except Exception as exc:
            return f"{module} does not import ({exc.__class__.__name__}: {exc})"
    return None


@dataclass
class Run:
    """What every point of one process's measurement shares: the device facts, the L2
    flusher and the fitted sleep kernel. Opened once: the bandwidth probe and the sleep fit
    cost seconds, and a shard of the nightly sweep measures many points under one of these."""

    gpu: dict[str, Any]
    flush: timing.L2Flusher
    sleep_fit: slow.SleepFit | None
    injected: dict[str, Any] | None
    started_at: str
    #: Seconds from the process's start to the run's opening (the interpreter, the imports of
    #: torch, nvFuser and Thunder), and of the opening itself (the GPU probe, the copy
    #: bandwidth, a slowdown's sleep fit): what no point's ``phases_s`` holds.
    phases_s: dict[str, float | None] = field(default_factory=dict)


def open_run(
    cfg: SuiteConfig, startup_s: float | None = None, turn: tuple[str, float] | None = None
) -> Run | str:
    """A run ready to measure points, or the reason this machine cannot run the suite.
    ``startup_s``: the process's start-up as its caller measured it; ``turn``: when one of a
    job's turns began building (UTC, the record's start) and how long it waited for its turn,
    since it opens its run only then."""
    reason = missing_stack()
    if reason is not None:
        return reason
    if startup_s is None:
        startup_s = provenance.process_age_s()
    opening = time.perf_counter()
    started = provenance.utc_now()
    gpu = provenance.gpu()
    gpu["clocks_start"] = provenance.clocks()
    flush = timing.L2Flusher(int(gpu.get("l2_bytes") or 0))
    injected: dict[str, Any] | None = None
    sleep_fit = None
    if cfg.slowdown is not None:
        sleep_fit, fit_points = slow.fit_on_device()
        injected = {
            "side": cfg.slowdown.side,
            **({"fusion": cfg.slowdown.fusion} if cfg.slowdown.fusion else {}),
            "fraction": cfg.slowdown.fraction,
            "sleep_floor_us": sleep_fit.floor_us,
            "sleep_us_per_cycle": sleep_fit.us_per_cycle,
            "sleep_fit_points": fit_points,
        }
        progress(f"slowdown {cfg.slowdown.label}: sleep kernel {sleep_fit}")
    opened = {"startup_s": startup_s, "open_s": round(time.perf_counter() - opening, 2)}
    if turn is not None:
        started, waited = turn
        opened["wait_turn_s"] = round(waited, 2)
    return Run(gpu, flush, sleep_fit, injected, started, opened)


def run_header(cfg: SuiteConfig, run: Run) -> dict[str, Any]:
    """Everything of a record but its points: what was measured, where, with what."""
    gpu = dict(run.gpu, clocks_end=provenance.clocks())
    return {
        "schema": SCHEMA,
        # asv does not pass ASV_COMMIT to setup_cache in an existing environment; the run
        # script passes the commit it gave asv.
        "commit": os.environ.get("RMSNORM_BENCH_COMMIT") or os.environ.get("ASV_COMMIT"),
        "machine": os.environ.get("RMSNORM_BENCH_MACHINE"),
        "size_set": cfg.size_set,
        "rounds": cfg.rounds,
        "calls_per_sample": cfg.calls_per_sample,
        "context_calls_per_sample": cfg.context_calls_per_sample,
        # How a kernel time was taken: the noise model records it, a comment compares it.
        "timer": timing.TIMER,
        "thunder_variant": cfg.thunder_variant,
        "slowdown": run.injected,
        "variants": list(cfg.variants),
        "fusions": list(cfg.fusions),
        # What decides the measurement (digest.py): the bot tells by these which side of which
        # fusion a change of this suite touched.
        "suite_digest": digest.suite_digest(),
        "engine_digest": digest.engine_digest(),
        "fusion_digests": digest.fusion_digests(FUSIONS[name] for name in cfg.fusions),
        "started_at": run.started_at,
        "phases_s": run.phases_s,
        "finished_at": provenance.utc_now(),
        "gpu": gpu,
        "versions": provenance.versions(),
        # Which build of the package under test this side ran (benchmarks/under_test).
        "under_test": provenance.under_test(os.environ.get("RMSNORM_BENCH_UNDER_TEST")),
    }

"""Fit the planner's cost model (plan.Costs) on recorded provenance records.

Why fitted and not guessed: a shard must fit an 8-minute job, and what a point costs (JIT
builds, the profiler's per-call overhead, kernels that grow with the bytes moved) is a property
of the machine and the suite that the records already hold (``phases_s`` of every point, the
run's start and end). Re-fitting after a real nightly sweep makes the next plan honest.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmarks.shards.plan import HOST_CALLS, Costs


def _records(paths: Iterable[Path]) -> list[dict[str, Any]]:
    found = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                if "points" in record:
                    found.append(record)
    if not found:
        raise ValueError("no provenance records with points in the given files")
    return found


def _least_squares(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Intercept and slope of y = a + b x (ordinary least squares)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else 0.0
    return my - b * mx, b


def _seconds(a: str, b: str) -> float:
    return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()


def fit(paths: Iterable[Path], root: Path | None = None) -> Costs:
    paths = list(paths)
    records = _records(paths)
    builds, moved, kernel, overheads, process = [], [], [], [], []
    for record in records:
        calls_ctx = record.get("context_calls_per_sample", record["calls_per_sample"])
        spent = 0.0
        for point in record["points"].values():
            if "error" in point:
                continue
            ok = {v: e for v, e in point["variants"].items() if e.get("kernel_us")}
            phases = point["phases_s"]
            spent += sum(v for k, v in phases.items() if k.endswith("_s"))
            builds.append(phases["build_and_check_s"] / len(point["variants"]))
            calls = 0
            kernel_total_us = 0.0
            for name, entry in ok.items():
                per_sample = len(entry["kernel_us_calls"][0]) if entry.get("kernel_us_calls") else (
                    calls_ctx if name in ("eager", "torch-compile") else record["calls_per_sample"]
                )
                n = len(entry["kernel_us"]) * per_sample
                calls += n
                kernel_total_us += n * statistics.median(entry["kernel_us"])
                moved.append(float(point["bytes_moved"]))
                kernel.append(statistics.median(entry["kernel_us"]))
            timed_s = phases["rounds_s"] + phases.get("host_s", 0.0)
            calls += HOST_CALLS * len(ok)
            if calls:
                overheads.append((timed_s * 1e6 - kernel_total_us) / calls)
        process.append(_seconds(record["started_at"], record["finished_at"]) - spent)
    floor, us_per_byte = _least_squares(moved, kernel)
    names = [str(p.relative_to(root)) if root else str(p) for p in paths]
    return Costs(
        # The worst process start seen, not the typical one: a shard that overruns is lost time.
        process_s=round(max(0.0, *process) + 15.0, 1),
        build_s_per_variant=round(max(builds), 2),
        call_overhead_us=round(statistics.quantiles(overheads, n=10)[-1], 1),
        kernel_floor_us=round(max(floor, min(kernel)), 2),
        kernel_gbps=round(1e-3 / us_per_byte, 1) if us_per_byte > 0 else 1000.0,
        sources=tuple(names),
    )

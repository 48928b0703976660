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
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmarks.engine.config import CONTEXT, Shape, SuiteConfig
from benchmarks.engine.point import HOST_ROUNDS
from benchmarks.shards.plan import Costs, point_seconds


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


#: Imports (torch, nvFuser, Thunder), the device probe and the two runner checks, which a
#: plain record does not time; a merged shard record times them (``process_wall_s``).
UNTIMED_START_S = 15.0


def _inside_s(point: dict[str, Any]) -> float:
    """Seconds a point's own phases took (building, rounds, host timing)."""
    return float(sum(v for name, v in point["phases_s"].items() if name.endswith("_s")))


def _process_overheads(record: dict[str, Any], spent: float) -> list[float]:
    """Seconds a process spends outside its points, per process the record knows of."""
    shards = [s for s in record.get("shards", []) if s.get("process_wall_s") is not None]
    if not shards:
        return [_seconds(record["started_at"], record["finished_at"]) - spent + UNTIMED_START_S]
    found = []
    for shard in shards:
        inside = sum(_inside_s(record["points"][k]) for k in shard["points"])
        found.append(shard["process_wall_s"] - inside)
    return found


def fit(paths: Iterable[Path], root: Path | None = None) -> Costs:
    paths = list(paths)
    records = _records(paths)
    builds: list[tuple[float, float]] = []  # (GB moved, build seconds a variant)
    moved, kernel, overheads, process = [], [], [], []
    for record in records:
        calls_ctx = record.get("context_calls_per_sample", record["calls_per_sample"])
        spent = 0.0
        for point in record["points"].values():
            if "error" in point:
                continue
            ok = {v: e for v, e in point["variants"].items() if e.get("kernel_us")}
            phases = point["phases_s"]
            spent += _inside_s(point)
            builds.append(
                (point["bytes_moved"] / 1e9, phases["build_and_check_s"] / len(point["variants"]))
            )
            calls = 0
            kernel_total_us = 0.0
            for name, entry in ok.items():
                per_sample = (
                    len(entry["kernel_us_calls"][0])
                    if entry.get("kernel_us_calls")
                    else (calls_ctx if name in CONTEXT else record["calls_per_sample"])
                )
                n = len(entry["kernel_us"]) * per_sample
                calls += n
                kernel_total_us += n * statistics.median(entry["kernel_us"])
                moved.append(float(point["bytes_moved"]))
                kernel.append(statistics.median(entry["kernel_us"]))
            timed_s = phases["rounds_s"] + phases.get("host_s", 0.0)
            calls += HOST_ROUNDS * len(ok)  # host-timed calls after the rounds, one each
            if calls:
                overheads.append((timed_s * 1e6 - kernel_total_us) / calls)
        process += _process_overheads(record, spent)
    floor, us_per_byte = _least_squares(moved, kernel)
    build_a, build_b = _least_squares([gb for gb, _ in builds], [b for _, b in builds])
    names = [str(p.relative_to(root)) if root else str(p) for p in paths]
    typical = Costs(
        process_s=round(statistics.median(process), 1),
        build_s_per_variant=round(build_a, 3),
        build_s_per_gb=round(max(0.0, build_b), 4),
        call_overhead_us=round(statistics.median(overheads), 1),
        kernel_floor_us=round(max(floor, min(kernel)), 2),
        kernel_gbps=round(1e-3 / us_per_byte, 1) if us_per_byte > 0 else 1000.0,
    )
    ratios = [wall / _estimate(typical, record, shard) for record, shard, wall in _walls(records)]
    return replace(
        typical, safety=round(max(1.0, *ratios), 3) if ratios else 1.0, sources=tuple(names)
    )


def _walls(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any], float]]:
    return [
        (r, s, float(s["process_wall_s"]))
        for r in records
        for s in r.get("shards", [])
        if s.get("process_wall_s") is not None
    ]


def _estimate(costs: Costs, record: dict[str, Any], shard: dict[str, Any]) -> float:
    """What the plan would have estimated for a measured shard, under the record's settings."""
    env = {
        "RMSNORM_BENCH_SIZES": record["size_set"],
        "RMSNORM_BENCH_ROUNDS": str(record["rounds"]),
        "RMSNORM_BENCH_CALLS_PER_SAMPLE": str(record["calls_per_sample"]),
        "RMSNORM_BENCH_CONTEXT_CALLS_PER_SAMPLE": str(record["context_calls_per_sample"]),
        "RMSNORM_BENCH_VARIANTS": ",".join(record["variants"]),
    }
    cfg = SuiteConfig.from_env(env)
    total = costs.process_s
    for key in shard["points"]:
        dtype, _, shape = key.partition("/")
        total += point_seconds(costs, cfg, dtype, Shape.parse(shape))
    return total

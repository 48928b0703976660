"""asv suite: RMSNorm backward, hand-written nvFuser fusion against thunder.jit and baselines.

One paired measurement (``setup_cache``, run once per ``asv run``) feeds every benchmark here;
each benchmark reports one slice of it. The ``track_*`` benchmarks return
``{"samples": [...], "number": 1}``, which asv stores exactly like a timing benchmark's samples
(``--record-samples``), so the per-round kernel times and ratios land in asv's results JSON.
The data contract is docs/DATA.md.
"""

from __future__ import annotations

import os
import statistics
import sys
from typing import Any, ClassVar

from .engine.config import (
    BASELINE,
    CONTENDERS,
    VARIANTS,
    SuiteConfig,
    bandwidth_pct,
    load_size_set,
)

_CONFIG = SuiteConfig.from_env()
# A run of some points only (RMSNORM_BENCH_POINTS: a bisect step) declares only their dtypes
# and shapes, in the set's order: asv visits every combination it is given, and storing 2
# points of the nightly set's 5220 combinations took 85 s on the H200 (data/README.md,
# h200-bisect).
# A run without RMSNorm backward (RMSNORM_BENCH_FUSIONS) declares the pr set's points, all
# skipped: asv needs parameter values to run a class at all.
if _CONFIG.points_to_measure():
    _MEASURED_DTYPES, _MEASURED_SHAPES = map(set, zip(*_CONFIG.points_to_measure(), strict=True))
    _DTYPES = [d for d in _CONFIG.dtypes if d in _MEASURED_DTYPES]
    _SHAPES = [s.label for s in _CONFIG.shapes if s in _MEASURED_SHAPES]
else:
    _PR_SHAPES, _PR_DTYPES = load_size_set("pr")
    _DTYPES, _SHAPES = list(_PR_DTYPES), [s.label for s in _PR_SHAPES]
#: Long enough for the nightly grid on one GPU; the pr set takes a few minutes.
_SWEEP_TIMEOUT_S = 4 * 3600


def setup_cache() -> dict[str, Any]:
    """Measure the whole sweep once; every benchmark below reads its slice.

    With ``RMSNORM_BENCH_REPLAY`` set to a provenance file, asv reports that recorded
    measurement instead of measuring (recovery when asv died after the measurement, and the
    CPU tests of the asv path on real H200 data).
    """
    import json

    from .engine.measure import measure_suite, replay_record

    replay = os.environ.get("RMSNORM_BENCH_REPLAY")
    if replay:
        return replay_record(replay, os.environ.get("RMSNORM_BENCH_COMMIT"))
    # Plain JSON types only: asv unpickles this in every one of its ~260 benchmark processes,
    # and a value of a GPU library's type would make each of them import that library.
    record: dict[str, Any] = json.loads(json.dumps(measure_suite(SuiteConfig.from_env())))
    return record


setup_cache.timeout = _SWEEP_TIMEOUT_S  # type: ignore[attr-defined]


def _variant_entry(cache: dict[str, Any], variant: str, dtype: str, shape: str) -> dict[str, Any]:
    """The measured entry, or the asv way of saying why there is none.

    NotImplementedError makes asv mark the benchmark skipped (no GPU stack here);
    any other exception marks this point failed, with the reason in asv's log.
    """
    if "skip" in cache:
        reason = f"RMSNorm backward suite skipped: {cache['skip']}"
        print(reason, file=sys.stderr)  # asv shows only "n/a"; --show-stderr shows why
        raise NotImplementedError(reason)
    point = cache["points"].get(f"{dtype}/{shape}")
    if point is None:
        raise NotImplementedError(
            f"{dtype}/{shape} was not measured in this run of size set {cache.get('size_set')!r}"
            " (RMSNORM_BENCH_POINTS)"
        )
    if "error" in point:
        raise RuntimeError(f"{dtype}/{shape} failed: {point['error']}")
    if variant not in point["variants"]:
        raise NotImplementedError(
            f"{variant} was not measured in this run (RMSNORM_BENCH_VARIANTS)"
        )
    entry: dict[str, Any] = point["variants"][variant]
    if entry["status"] != "ok":
        raise RuntimeError(f"{variant} {dtype}/{shape} {entry['status']}: {entry.get('error')}")
    return entry


def _samples(values: list[float]) -> dict[str, Any]:
    return {"samples": values, "number": 1}


class RMSNormBackward:
    """Per-variant figures: kernel time, host time, bandwidth, kernel count, compile time."""

    params: ClassVar[list[list[str]]] = [list(VARIANTS), _DTYPES, _SHAPES]
    param_names: ClassVar[list[str]] = ["variant", "dtype", "shape"]
    timeout = _SWEEP_TIMEOUT_S

    def setup(self, cache: dict[str, Any], variant: str, dtype: str, shape: str) -> None:
        self.entry = _variant_entry(cache, variant, dtype, shape)
        point = cache["points"][f"{dtype}/{shape}"]
        self.bytes_moved = point["bytes_moved"]
        self.peak_gbps = cache["gpu"]["peak_bandwidth_gbps"]

    def track_kernel_time(
        self, cache: dict[str, Any], variant: str, dtype: str, shape: str
    ) -> dict[str, Any]:
        return _samples([us * 1e-6 for us in self.entry["kernel_us"]])

    track_kernel_time.unit = "seconds"  # type: ignore[attr-defined]

    def track_host_time(
        self, cache: dict[str, Any], variant: str, dtype: str, shape: str
    ) -> dict[str, Any]:
        return _samples([us * 1e-6 for us in self.entry["host_us"]])

    track_host_time.unit = "seconds"  # type: ignore[attr-defined]

    def track_bandwidth_pct(
        self, cache: dict[str, Any], variant: str, dtype: str, shape: str
    ) -> float:
        kernel_us = statistics.median(self.entry["kernel_us"])
        return bandwidth_pct(self.bytes_moved, kernel_us, self.peak_gbps)

    track_bandwidth_pct.unit = "% of peak bandwidth"  # type: ignore[attr-defined]

    def track_kernel_count(
        self, cache: dict[str, Any], variant: str, dtype: str, shape: str
    ) -> int:
        return int(self.entry["kernel_count"])

    track_kernel_count.unit = "kernels"  # type: ignore[attr-defined]

    def track_compile_time(
        self, cache: dict[str, Any], variant: str, dtype: str, shape: str
    ) -> float:
        return float(self.entry["compile_s"])

    track_compile_time.unit = "seconds"  # type: ignore[attr-defined]


class RatioToNvfuser:
    """The headline: kernel time of a contender over the hand-written fusion, per paired round.

    Above 1: the contender is slower than hand-written nvFuser.
    """

    params: ClassVar[list[list[str]]] = [list(CONTENDERS), _DTYPES, _SHAPES]
    param_names: ClassVar[list[str]] = ["variant", "dtype", "shape"]
    timeout = _SWEEP_TIMEOUT_S

    def setup(self, cache: dict[str, Any], variant: str, dtype: str, shape: str) -> None:
        _variant_entry(cache, BASELINE, dtype, shape)
        self.entry = _variant_entry(cache, variant, dtype, shape)

    def track_ratio(
        self, cache: dict[str, Any], variant: str, dtype: str, shape: str
    ) -> dict[str, Any]:
        return _samples(list(self.entry["ratio"]))

    track_ratio.unit = "ratio (contender / nvFuser kernel time)"  # type: ignore[attr-defined]

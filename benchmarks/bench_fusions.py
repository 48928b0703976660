"""asv suite: every fusion of the catalog but RMSNorm backward (bench_rmsnorm_bwd.py keeps its
keys), hand-written nvFuser against thunder.jit, one asv class a fusion.

The classes are made from the catalog (benchmarks/fusions/catalog.py) when asv imports this
module: adding a fusion adds its class, named as the fusion (``bench_fusions.softmax_bwd``), with
the same benchmarks as RMSNorm backward's two classes together: kernel time, host time,
bandwidth, kernel count, compile time, and the thunder/nvFuser ratio (the baseline's is
"skipped"). Like bench_rmsnorm_bwd.py, one paired measurement (``setup_cache``, or a replayed
record) feeds them all; the data contract is docs/DATA.md.
"""

from __future__ import annotations

import os
import statistics
from typing import Any, ClassVar

from .engine.config import BASELINE, VARIANTS, SuiteConfig, bandwidth_pct, point_key
from .fusions.catalog import DEFAULT, FUSIONS

_CONFIG = SuiteConfig.from_env()
_SWEEP_TIMEOUT_S = 4 * 3600


def setup_cache() -> dict[str, Any]:
    """The run's record: replayed (``RMSNORM_BENCH_REPLAY``, what run_gpu.sh does) or measured."""
    import json

    from .engine.measure import measure_suite, replay_record

    replay = os.environ.get("RMSNORM_BENCH_REPLAY")
    if replay:
        return replay_record(replay, os.environ.get("RMSNORM_BENCH_COMMIT"))
    record: dict[str, Any] = json.loads(json.dumps(measure_suite(SuiteConfig.from_env())))
    return record


setup_cache.timeout = _SWEEP_TIMEOUT_S  # type: ignore[attr-defined]


def _entry(
    cache: dict[str, Any], fusion: str, variant: str, dtype: str, shape: str
) -> dict[str, Any]:
    """The measured entry, or the asv way of saying why there is none (see bench_rmsnorm_bwd)."""
    if "skip" in cache:
        raise NotImplementedError(f"fusion suite skipped: {cache['skip']}")
    from .engine.config import Shape

    key = point_key(dtype, Shape.parse(shape), fusion)
    point = cache["points"].get(key)
    if point is None:
        raise NotImplementedError(f"{key} was not measured in this run")
    if "error" in point:
        raise RuntimeError(f"{key} failed: {point['error']}")
    if variant not in point["variants"]:
        raise NotImplementedError(f"{variant} was not measured for {key}")
    entry: dict[str, Any] = point["variants"][variant]
    if entry["status"] != "ok":
        raise RuntimeError(f"{variant} {key} {entry['status']}: {entry.get('error')}")
    return {**entry, "_bytes": point["bytes_moved"], "_peak": cache["gpu"]["peak_bandwidth_gbps"]}


def _samples(values: list[float]) -> dict[str, Any]:
    return {"samples": values, "number": 1}


class _FusionBenchmarks:
    """The benchmarks of one fusion; :func:`_fusion_class` names and parameterises a copy."""

    fusion: ClassVar[str] = ""
    params: ClassVar[list[list[str]]] = []
    param_names: ClassVar[list[str]] = ["variant", "dtype", "shape"]
    timeout = _SWEEP_TIMEOUT_S

    def setup(self, cache: dict[str, Any], variant: str, dtype: str, shape: str) -> None:
        self.entry = _entry(cache, self.fusion, variant, dtype, shape)

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
        return bandwidth_pct(self.entry["_bytes"], kernel_us, self.entry["_peak"])

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

    def track_ratio(
        self, cache: dict[str, Any], variant: str, dtype: str, shape: str
    ) -> dict[str, Any]:
        return _samples(list(self.entry["ratio"]))

    track_ratio.unit = "ratio (contender / nvFuser kernel time)"  # type: ignore[attr-defined]


def _ratio_setup(fusion: str) -> Any:
    """The baseline's ratio is "skipped", not "failed": asv skips only from a setup, and calls
    a benchmark's own ``setup`` attribute with the parameters alone (no ``self``)."""

    def setup(cache: dict[str, Any], variant: str, dtype: str, shape: str) -> None:
        if variant == BASELINE:
            raise NotImplementedError("the baseline has no ratio to itself")
        _entry(cache, fusion, BASELINE, dtype, shape)  # no ratio without the baseline

    return setup


def _fusion_class(name: str) -> type:
    """The asv class of one fusion: its dtypes and shapes are those this run measures."""
    points = [(d, s.label) for f, d, s in _CONFIG.fusion_points() if f == name]
    dtypes = list(dict.fromkeys(d for d, _ in points))
    shapes = list(dict.fromkeys(s for _, s in points))

    def track_ratio(
        self: Any, cache: dict[str, Any], variant: str, dtype: str, shape: str
    ) -> dict[str, Any]:
        return _FusionBenchmarks.track_ratio(self, cache, variant, dtype, shape)

    track_ratio.unit = _FusionBenchmarks.track_ratio.unit  # type: ignore[attr-defined]
    track_ratio.setup = _ratio_setup(name)  # type: ignore[attr-defined]
    return type(
        name,
        (_FusionBenchmarks,),
        {
            "track_ratio": track_ratio,
            "__doc__": f"{FUSIONS[name].title}: every figure of RMSNorm backward's two classes.",
            "__module__": __name__,
            "fusion": name,
            "params": [list(VARIANTS), dtypes, shapes],
        },
    )


for _name in _CONFIG.fusions:
    if _name != DEFAULT:
        globals()[_name] = _fusion_class(_name)

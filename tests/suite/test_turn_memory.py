"""A job's turns on a GPU too small for everything its processes build at once, on the CPU:
a point that ran out of memory while the others built is built again in the process's turn
(marked ``built_in_turn``), and a point none of whose variants built keeps each variant's error
instead of failing on an empty round. The catalog's four processes on an 80 GB H100 did both
(data/h100-issue39, calls 11 and 13). ``torch`` is a stand-in: only what the paths call."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from benchmarks.engine import measure, point
from benchmarks.engine.config import SuiteConfig, point_key

OOM = "OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB."
NVFUSER_OOM = "RuntimeError: Error from segmentation group 0: CUDA out of memory."


@pytest.fixture
def fake_torch(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A ``torch`` whose cache emptying is counted, and whose dtypes have sizes."""
    emptied: list[str] = []
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
        empty_cache=lambda: emptied.append("empty_cache")
    )
    sizes = {"bfloat16": 2, "float16": 2, "float32": 4}
    torch.empty = lambda shape, dtype: types.SimpleNamespace(  # type: ignore[attr-defined]
        element_size=lambda: sizes[dtype]
    )
    for name in sizes:
        setattr(torch, name, name)
    monkeypatch.setitem(sys.modules, "torch", torch)
    return emptied


def _cfg() -> SuiteConfig:
    return SuiteConfig.from_env(
        {"RMSNORM_BENCH_SIZES": "pr", "RMSNORM_BENCH_FUSIONS": "rmsnorm_bwd,gelu_bwd"}
    )


def _key(fusion_point: tuple[str, str, Any]) -> str:
    fusion, dtype, shape = fusion_point
    return point_key(dtype, shape, fusion)


def _built(fusion: str, dtype: str, shape: Any, errors: dict[str, str]) -> point.BuiltPoint:
    """A point as build_point leaves it: the variants with an error are not built."""
    report: dict[str, dict[str, Any]] = {}
    built: dict[str, Any] = {}
    for name in ("nvfuser", "thunder-prims", "thunder-func"):
        entry: dict[str, Any] = {"kernel_us": [], "host_us": [], "kernel_names": []}
        if name in errors:
            entry.update(status="error", error=errors[name])
        else:
            entry["status"] = "ok"
            built[name] = object()
        report[name] = entry
    return point.BuiltPoint(fusion, dtype, shape, "inputs", built, report, {}, None)


def test_a_point_that_ran_out_of_memory_beside_the_others_is_put_off_to_the_turn(
    fake_torch: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = _cfg()
    keys = cfg.fusion_points()
    gelu = next(k for k in keys if k[0] == "gelu_bwd")
    rmsnorm = [k for k in keys if k[0] == "rmsnorm_bwd"]
    made: dict[str, point.BuiltPoint] = {}

    def build(shape: Any, dtype: str, cfg: SuiteConfig, fusion: str, keep: bool) -> Any:
        key = point_key(dtype, shape, fusion)
        if (fusion, dtype, shape) == rmsnorm[1]:
            raise RuntimeError(NVFUSER_OOM.split(": ", 1)[1])  # the whole build ran out
        errors = {"thunder-prims": OOM} if fusion == "gelu_bwd" else {}
        if (fusion, dtype, shape) == rmsnorm[2]:
            errors = {"thunder-func": "ValueError: not the memory"}
        made[key] = _built(fusion, dtype, shape, errors)
        return made[key]

    monkeypatch.setattr(measure, "build_point", build)
    pending, deferred = measure._build_all(cfg, keys, set())

    assert deferred == {_key(gelu), _key(rmsnorm[1])}
    assert set(pending) == {_key(k) for k in keys} - deferred
    # Nothing of a put-off point is held while the others build: its variants are freed.
    assert made[_key(gelu)].built == {} and made[_key(gelu)].inputs is None
    # An error that is not the memory's stays the point's own: no second build for it.
    other = pending[_key(rmsnorm[2])]
    assert isinstance(other, point.BuiltPoint) and "thunder-func" not in other.built


def test_the_turn_builds_again_what_was_put_off_and_says_so(
    fake_torch: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = _cfg()
    keys = cfg.fusion_points()
    put_off = _key(keys[0])
    events: list[str] = []

    class Turn:
        index, count = 1, 1

        def announce(self) -> None: ...

        def built(self) -> None:
            events.append("built")

        def wait(self) -> float:
            events.append("wait")
            return 0.0

        def over(self) -> None: ...

        def job_pids(self) -> list[int]:
            return []

    def build(shape: Any, dtype: str, cfg: SuiteConfig, fusion: str, keep: bool) -> Any:
        key = point_key(dtype, shape, fusion)
        events.append(f"build {key}")
        return _built(fusion, dtype, shape, {"nvfuser": OOM} if key == put_off else {})

    def measure_point(shape: Any, dtype: str, *args: Any) -> dict[str, Any]:
        events.append(f"build and time {point_key(dtype, shape, args[-2])}")
        return {"variants": {}}

    monkeypatch.setattr(measure, "build_point", build)
    monkeypatch.setattr(measure, "measure_point", measure_point)
    monkeypatch.setattr(measure, "measure_built", lambda *a, **k: {"variants": {}})
    monkeypatch.setattr(measure, "missing_stack", lambda: None)
    monkeypatch.setattr(
        measure, "open_run", lambda *a: types.SimpleNamespace(flush=None, sleep_fit=None)
    )
    monkeypatch.setattr(measure, "run_header", lambda cfg, run: {"schema": "x"})
    monkeypatch.delenv("RMSNORM_BENCH_RECORD", raising=False)
    record = measure._measure_suite(cfg, None, Turn())  # type: ignore[arg-type]

    assert events.index(f"build and time {put_off}") > events.index("wait")
    assert record["points"][put_off]["built_in_turn"] is True
    others = [k for k in record["points"] if k != put_off]
    assert others and not any("built_in_turn" in record["points"][k] for k in others)


def test_a_point_none_of_whose_variants_built_keeps_their_errors(fake_torch: list[str]) -> None:
    cfg = _cfg()
    fusion, dtype, shape = cfg.fusion_points()[0]
    errors = {"nvfuser": OOM, "thunder-prims": OOM, "thunder-func": "ValueError: no executor"}
    built = _built(fusion, dtype, shape, errors)

    def flush() -> None:
        raise AssertionError("nothing built: nothing to flush for")

    got = point.measure_built(built, cfg, flush)  # type: ignore[arg-type]
    assert {n: e["error"] for n, e in got["variants"].items()} == errors
    assert all(e["kernel_us"] == [] for e in got["variants"].values())
    assert got["phases_s"]["fallback_rounds"] == 0 and "empty_cache" in fake_torch


@pytest.mark.parametrize(
    ("error", "oom"),
    [(OOM, True), (NVFUSER_OOM, True), ("ValueError: out of range", False), (None, False)],
)
def test_out_of_memory_is_torchs_or_nvfusers_cuda_error(error: str | None, oom: bool) -> None:
    assert point.out_of_memory(error) is oom

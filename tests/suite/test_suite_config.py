"""The suite's configuration: named size sets, the bytes-moved formula, env selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.engine.config import (
    VARIANTS,
    Shape,
    SuiteConfig,
    bandwidth_pct,
    load_size_set,
)
from benchmarks.fusions.rmsnorm import backward_bytes


def test_pr_set_holds_the_report_points() -> None:
    shapes, dtypes = load_size_set("pr")
    # Since the catalog: the report's point and the large, bandwidth-bound one, bf16 and fp32
    # (float16 and (512, 4096) moved to the nightly, size_sets.toml).
    assert shapes == (Shape(2048, 8192), Shape(16384, 8192))
    assert dtypes == ("bfloat16", "float32")


def test_nightly_grid_spans_nvfusers_range() -> None:
    shapes, _ = load_size_set("nightly")
    assert {s.m for s in shapes} == {16, 512, 2048, 8192, 16384}
    assert min(s.n for s in shapes) == 768
    assert max(s.n for s in shapes) == 73728


def test_unknown_set_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known: nightly, pr, smoke"):
        load_size_set("huge")


def test_unsupported_dtype_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sets.toml"
    path.write_text('[sets.x]\nshapes = [[1, 2]]\ndtypes = ["int8"]\n')
    with pytest.raises(ValueError, match="unsupported dtypes"):
        load_size_set("x", path)


def test_bytes_moved_matches_nvfusers_harness() -> None:
    # NOTES.md: 100.7 MB for bf16 at (2048, 8192): itemsize*(3*M*N + 2*N) + 4*M.
    moved = backward_bytes(2048, 8192, 2)
    assert moved == 2 * (3 * 2048 * 8192 + 2 * 8192) + 4 * 2048
    assert round(moved / 1e6, 1) == 100.7


def test_env_selects_set_rounds_and_thunder_variant() -> None:
    cfg = SuiteConfig.from_env(
        {
            "RMSNORM_BENCH_SIZES": "smoke",
            "RMSNORM_BENCH_ROUNDS": "12",
            "RMSNORM_BENCH_THUNDER_VARIANT": "unfused-backward",
        }
    )
    assert cfg.shapes == (Shape(256, 1024),)
    assert cfg.dtypes == ("bfloat16",)
    assert cfg.rounds == 12
    assert cfg.thunder_variant == "unfused-backward"


def test_fewer_than_ten_rounds_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 10"):
        SuiteConfig.from_env({"RMSNORM_BENCH_ROUNDS": "5"})


def test_shape_label_round_trips() -> None:
    assert Shape.parse(Shape(2048, 8192).label) == Shape(2048, 8192)


def test_variants_subset_always_keeps_the_baseline() -> None:
    cfg = SuiteConfig.from_env({"RMSNORM_BENCH_VARIANTS": "thunder-prims, thunder-func"})
    assert cfg.variants == ("nvfuser", "thunder-prims", "thunder-func")
    assert SuiteConfig.from_env({}).variants == VARIANTS


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown"):
        SuiteConfig.from_env({"RMSNORM_BENCH_VARIANTS": "triton"})


def test_bandwidth_pct_of_the_report_point() -> None:
    # 100.7 MB in 40 us is 2.52 TB/s: 52% of a 4814 GB/s peak.
    moved = backward_bytes(2048, 8192, 2)
    assert round(bandwidth_pct(moved, 40.0, 4814.0), 1) == 52.3


def test_context_baselines_get_fewer_calls_a_sample() -> None:
    cfg = SuiteConfig.from_env({})
    assert [cfg.calls_for(v) for v in ("nvfuser", "thunder-prims", "eager", "torch-compile")] == [
        8,
        8,
        2,
        2,
    ]
    one = SuiteConfig.from_env({"RMSNORM_BENCH_CALLS_PER_SAMPLE": "1"})
    assert one.calls_for("eager") == 1  # never more than what decides
    with pytest.raises(ValueError, match="CONTEXT_CALLS_PER_SAMPLE=0"):
        SuiteConfig.from_env({"RMSNORM_BENCH_CONTEXT_CALLS_PER_SAMPLE": "0"})

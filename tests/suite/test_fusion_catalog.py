"""The fusion catalog on the CPU: its names, size sets, points, context budget, scoped slowdowns,
bytes moved, and what asv discovers from it (benchmarks/fusions/, bench_fusions.py).

No torch here: every fusion module imports torch and nvFuser inside the functions it supplies.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import asv
import pytest
from paths import REPO_ROOT

from benchmarks.engine.config import (
    CONTEXT,
    SIZE_SETS_FILE,
    VARIANTS,
    Shape,
    SuiteConfig,
    context_of,
    load_size_set,
    point_key,
    sizes_of,
)
from benchmarks.engine.slowdown import Slowdown
from benchmarks.fusions.catalog import DEFAULT, FUSIONS, parse_fusions

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

OTHERS = [name for name in FUSIONS if name != DEFAULT]
KINDS = ("kernel_time", "host_time", "bandwidth_pct", "kernel_count", "compile_time", "ratio")


def _size_doc() -> dict:  # type: ignore[type-arg]
    with SIZE_SETS_FILE.open("rb") as fh:
        doc: dict = tomllib.load(fh)  # type: ignore[type-arg]
    return doc


# -- the catalog ---------------------------------------------------------------------------------


def test_the_catalog_leads_with_rmsnorm_backward_and_names_each_fusion_once() -> None:
    names = list(FUSIONS)
    assert DEFAULT == "rmsnorm_bwd" and names[0] == DEFAULT
    assert len(names) == len(set(names)) == 14
    assert all(fusion.name == key for key, fusion in FUSIONS.items())
    # Forward and backward of each: the suffix says the direction the record holds.
    assert all(
        fusion.name.endswith("_fwd" if fusion.direction == "forward" else "_bwd")
        for fusion in FUSIONS.values()
    )


def test_every_fusion_has_pr_nightly_and_smoke_sets() -> None:
    doc = _size_doc()
    assert {"pr", "nightly", "smoke"} <= set(doc["sets"])  # RMSNorm backward's, at the top
    for name in OTHERS:
        group = FUSIONS[name].size_group
        assert group in doc.get("groups", {}), name
        assert {"pr", "nightly", "smoke"} <= set(doc["groups"][group]["sets"]), name
        for size_set in ("pr", "nightly", "smoke"):
            shapes, dtypes = sizes_of(name, size_set)
            assert shapes and dtypes, (name, size_set)


def test_the_catalog_sets_are_the_ones_chosen() -> None:
    assert load_size_set("pr", group="catalog") == ((Shape(16384, 4096),), ("bfloat16",))
    assert load_size_set("fp32", group="catalog") == ((Shape(16384, 4096),), ("float32",))
    shapes, dtypes = load_size_set("nightly", group="catalog")
    assert dtypes == ("bfloat16", "float32")  # the group's own dtypes, not the top level's
    assert len(shapes) == 3 * 4 and {s.m for s in shapes} == {16, 2048, 16384}
    with pytest.raises(ValueError, match="known: fp32, nightly, pr, smoke"):
        load_size_set("huge", group="catalog")
    # fp32 is the catalog's alone: RMSNorm backward has no such set.
    with pytest.raises(ValueError, match="unknown size set 'fp32'"):
        sizes_of(DEFAULT, "fp32")


def test_context_is_left_out_of_the_catalogs_pr_set_only() -> None:
    assert context_of("softmax_bwd", "pr") is False
    assert context_of("softmax_bwd", "nightly") is True
    assert context_of(DEFAULT, "pr") is True


# -- choosing fusions ----------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "  ", "all", " all "])
def test_no_choice_or_all_is_the_whole_catalog(text: str) -> None:
    assert parse_fusions(text) == tuple(FUSIONS)


def test_a_choice_comes_back_in_catalog_order_without_repeats() -> None:
    assert parse_fusions("softmax_bwd, rmsnorm_bwd,softmax_bwd") == ("rmsnorm_bwd", "softmax_bwd")
    assert parse_fusions("gelu_fwd,layernorm_fwd") == ("layernorm_fwd", "gelu_fwd")


def test_an_unknown_fusion_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown bogus, nope \(known: rmsnorm_bwd, rmsnorm_fwd"):
        parse_fusions("softmax_bwd,nope,bogus")
    with pytest.raises(ValueError, match="RMSNORM_BENCH_FUSIONS"):
        SuiteConfig.from_env({"RMSNORM_BENCH_FUSIONS": "rmsnorm"})


# -- points --------------------------------------------------------------------------------------


def test_rmsnorm_backward_keeps_its_point_names_and_the_others_lead_with_theirs() -> None:
    shape = Shape(16384, 4096)
    assert point_key("bfloat16", shape) == "bfloat16/16384x4096"
    assert point_key("bfloat16", shape, DEFAULT) == "bfloat16/16384x4096"
    assert point_key("float32", shape, "softmax_bwd") == "softmax_bwd/float32/16384x4096"


def test_the_pr_run_measures_rmsnorm_backward_then_each_fusion_in_catalog_order() -> None:
    cfg = SuiteConfig.from_env({"RMSNORM_BENCH_SIZES": "pr"})
    points = cfg.fusion_points()
    assert len(points) == 2 * 2 + 13  # RMSNorm backward's 2 dtypes x 2 shapes, 1 point each else
    assert points[:4] == [
        (DEFAULT, "bfloat16", Shape(2048, 8192)),
        (DEFAULT, "bfloat16", Shape(16384, 8192)),
        (DEFAULT, "float32", Shape(2048, 8192)),
        (DEFAULT, "float32", Shape(16384, 8192)),
    ]
    assert points[4:] == [(name, "bfloat16", Shape(16384, 4096)) for name in OTHERS]
    assert cfg.points_to_measure() == [(d, s) for _, d, s in points[:4]]
    assert cfg.no_context == tuple(OTHERS)


def test_a_run_of_some_fusions_measures_theirs_alone() -> None:
    cfg = SuiteConfig.from_env({"RMSNORM_BENCH_FUSIONS": "gelu_bwd,softmax_fwd"})
    assert cfg.fusions == ("softmax_fwd", "gelu_bwd")
    assert [f for f, _, _ in cfg.fusion_points()] == ["softmax_fwd", "gelu_bwd"]
    assert cfg.points_to_measure() == []


def test_a_catalog_only_set_needs_rmsnorm_backward_left_out() -> None:
    cfg = SuiteConfig.from_env(
        {"RMSNORM_BENCH_SIZES": "fp32", "RMSNORM_BENCH_FUSIONS": "softmax_bwd"}
    )
    assert cfg.fusion_points() == [("softmax_bwd", "float32", Shape(16384, 4096))]
    with pytest.raises(ValueError, match="unknown size set 'fp32'"):
        SuiteConfig.from_env({"RMSNORM_BENCH_SIZES": "fp32"})


def test_points_of_another_fusion_are_chosen_by_their_full_key() -> None:
    cfg = SuiteConfig.from_env(
        {"RMSNORM_BENCH_POINTS": "softmax_bwd/bfloat16/16384x4096,float32/2048x8192"}
    )
    assert cfg.fusion_points() == [
        (DEFAULT, "float32", Shape(2048, 8192)),
        ("softmax_bwd", "bfloat16", Shape(16384, 4096)),
    ]
    # Without the fusion's name it is an RMSNorm backward key, which that set lacks.
    with pytest.raises(ValueError, match="bfloat16/16384x4096"):
        SuiteConfig.from_env({"RMSNORM_BENCH_POINTS": "bfloat16/16384x4096"})


# -- the context baselines -----------------------------------------------------------------------


def test_the_pr_set_leaves_the_context_out_of_the_catalogs_fusions_only() -> None:
    pr = SuiteConfig.from_env({"RMSNORM_BENCH_SIZES": "pr"})
    nightly = SuiteConfig.from_env({"RMSNORM_BENCH_SIZES": "nightly"})
    for variant in VARIANTS:
        assert pr.measures(variant, DEFAULT)
        assert nightly.measures(variant, "softmax_bwd")
        assert pr.measures(variant, "softmax_bwd") == (variant not in CONTEXT)
    assert CONTEXT == ("eager", "torch-compile")
    assert nightly.no_context == ()


def test_a_variant_left_out_of_the_run_is_measured_nowhere() -> None:
    cfg = SuiteConfig.from_env(
        {"RMSNORM_BENCH_SIZES": "nightly", "RMSNORM_BENCH_VARIANTS": "eager"}
    )
    assert cfg.measures("eager", "softmax_bwd") and cfg.measures("nvfuser", DEFAULT)
    assert not cfg.measures("thunder-prims", DEFAULT)


# -- a slowdown in one fusion --------------------------------------------------------------------


def test_a_slowdown_without_a_scope_slows_every_fusion() -> None:
    everywhere = Slowdown.parse("thunder:0.05")
    assert everywhere == Slowdown("thunder", 0.05, None) and everywhere.label == "thunder:0.05"
    assert everywhere.applies_to("thunder-prims", DEFAULT)
    assert everywhere.applies_to("thunder-func", "softmax_bwd")
    assert not everywhere.applies_to("nvfuser", "softmax_bwd")


def test_a_scoped_slowdown_slows_its_fusion_alone() -> None:
    scoped = Slowdown.parse(" softmax_bwd/thunder:0.1 ")
    assert scoped == Slowdown("thunder", 0.1, "softmax_bwd")
    assert scoped.label == "softmax_bwd/thunder:0.1"
    assert scoped.applies_to("thunder-prims", "softmax_bwd")
    assert not scoped.applies_to("thunder-prims", "softmax_fwd")
    assert not scoped.applies_to("thunder-prims")  # RMSNorm backward, by default
    assert not scoped.applies_to("nvfuser", "softmax_bwd")
    nvfuser = Slowdown.parse("rmsnorm_bwd/nvfuser:0.02")
    assert nvfuser is not None and nvfuser.applies_to("nvfuser")
    assert not nvfuser.applies_to("nvfuser", "gelu_fwd")


def test_a_slowdown_in_an_unknown_fusion_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown fusion 'softmax' \(known: rmsnorm_bwd, "):
        Slowdown.parse("softmax/thunder:0.1")
    with pytest.raises(ValueError, match=r"expected \[FUSION/\]SIDE:FRACTION"):
        Slowdown.parse("softmax_bwd/eager:0.1")
    cfg = SuiteConfig.from_env({"RMSNORM_BENCH_SLOWDOWN": "gelu_bwd/nvfuser:0.02"})
    assert cfg.slowdown == Slowdown("nvfuser", 0.02, "gelu_bwd")


# -- bytes moved ---------------------------------------------------------------------------------

M, N = 16384, 4096


@pytest.mark.parametrize(
    ("name", "itemsize", "want"),
    [
        ("softmax_fwd", 2, 2 * 2 * M * N),  # reads x, writes y
        ("softmax_bwd", 2, 2 * 3 * M * N),  # reads y and grad, writes grad_x
        ("softmax_fwd", 4, 4 * 2 * M * N),
        ("rmsnorm_fwd", 2, 2 * (2 * M * N + N)),  # reads x and weight, writes y
        ("layernorm_bwd", 2, 2 * (3 * M * N + 3 * N) + 8 * M),  # and fp32 mean, invstd a row
        ("silu_mul_bwd", 2, 2 * 5 * M * N),  # reads x, z, grad; writes grad_x, grad_z
        ("gelu_fwd", 4, 4 * (2 * M * N + N)),  # reads x and bias, writes y
    ],
)
def test_bytes_moved_by_hand(name: str, itemsize: int, want: int) -> None:
    assert FUSIONS[name].bytes_moved(M, N, itemsize) == want


@pytest.mark.parametrize(("m", "n", "itemsize"), [(2048, 8192, 2), (16384, 8192, 4), (16, 768, 2)])
def test_rmsnorm_backward_moves_what_it_did_before_the_catalog(
    m: int, n: int, itemsize: int
) -> None:
    want = itemsize * (3 * m * n + 2 * n) + 4 * m
    assert FUSIONS[DEFAULT].bytes_moved(m, n, itemsize) == want


# -- what asv discovers --------------------------------------------------------------------------


def _discover(tmp_path: Path, **env: str) -> dict[str, list[list[str]]]:
    """asv's own discovery step, as `asv run` calls it: each benchmark's parameter values."""
    out = tmp_path / "discovered.json"
    runner = Path(asv.__file__).parent / "benchmark.py"
    done = subprocess.run(
        [sys.executable, str(runner), "discover", str(REPO_ROOT / "benchmarks"), str(out)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return {b["name"]: b["params"] for b in json.loads(out.read_text())}


def _quoted(values: list[str]) -> list[str]:
    return [repr(v) for v in values]  # asv lists each parameter value as its repr


def test_asv_finds_one_class_per_fusion_of_the_catalog(tmp_path: Path) -> None:
    found = _discover(tmp_path, RMSNORM_BENCH_SIZES="pr")
    catalog = {k: v for k, v in found.items() if k.startswith("bench_fusions.")}
    assert set(catalog) == {
        f"bench_fusions.{name}.track_{kind}" for name in OTHERS for kind in KINDS
    }
    params = [_quoted(list(VARIANTS)), _quoted(["bfloat16"]), _quoted(["16384x4096"])]
    assert all(value == params for value in catalog.values())
    # RMSNorm backward stays in its own module, with its keys.
    assert not any(k.startswith(f"bench_fusions.{DEFAULT}.") for k in catalog)
    rmsnorm = found["bench_rmsnorm_bwd.RMSNormBackward.track_kernel_time"]
    assert rmsnorm[1:] == [_quoted(["bfloat16", "float32"]), _quoted(["2048x8192", "16384x8192"])]


def test_asv_finds_the_chosen_fusions_alone(tmp_path: Path) -> None:
    found = _discover(tmp_path, RMSNORM_BENCH_SIZES="nightly", RMSNORM_BENCH_FUSIONS="softmax_bwd")
    catalog = {k for k in found if k.startswith("bench_fusions.")}
    assert catalog == {f"bench_fusions.softmax_bwd.track_{kind}" for kind in KINDS}
    _, dtypes, shapes = found["bench_fusions.softmax_bwd.track_ratio"]
    assert dtypes == _quoted(["bfloat16", "float32"]) and len(shapes) == 12


def test_bench_rmsnorm_bwd_still_declares_the_pr_points_when_left_out(tmp_path: Path) -> None:
    """asv runs no class without parameter values: a run without RMSNorm backward declares the
    pr set's points (each skipped, as not measured)."""
    found = _discover(tmp_path, RMSNORM_BENCH_SIZES="fp32", RMSNORM_BENCH_FUSIONS="softmax_bwd")
    pr_shapes, pr_dtypes = load_size_set("pr")
    rmsnorm = {k: v for k, v in found.items() if k.startswith("bench_rmsnorm_bwd.")}
    assert len(rmsnorm) == 6
    for variants, dtypes, shapes in rmsnorm.values():
        assert shapes == _quoted([s.label for s in pr_shapes])
        assert set(_quoted(list(pr_dtypes))) <= set(dtypes)
        assert variants
    assert found["bench_fusions.softmax_bwd.track_ratio"][1:] == [
        _quoted(["float32"]),
        _quoted(["16384x4096"]),
    ]


def test_bench_rmsnorm_bwd_fallback_declares_exactly_the_pr_dtypes(tmp_path: Path) -> None:
    found = _discover(tmp_path, RMSNORM_BENCH_FUSIONS="softmax_bwd")
    _, pr_dtypes = load_size_set("pr")
    declared = found["bench_rmsnorm_bwd.RMSNormBackward.track_kernel_time"][1]
    assert declared == _quoted(list(pr_dtypes))


def test_bench_fusions_imports_in_process_with_the_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The module reads its env when imported: a reload with another choice makes those
    fusions' classes, each with its fusion's name and ratio setup (a reload keeps the names
    the first import bound, so what is absent is checked by discovery, above)."""
    import importlib

    import benchmarks.bench_fusions as bench

    monkeypatch.setenv("RMSNORM_BENCH_SIZES", "pr")
    monkeypatch.setenv("RMSNORM_BENCH_FUSIONS", "gelu_fwd,layernorm_bwd")
    try:
        bench = importlib.reload(bench)
        gelu, layernorm = getattr(bench, "gelu_fwd"), getattr(bench, "layernorm_bwd")  # noqa: B009
        assert gelu.fusion == "gelu_fwd" and gelu.__name__ == "gelu_fwd"
        assert layernorm.params == [list(VARIANTS), ["bfloat16"], ["16384x4096"]]
        assert callable(gelu.track_ratio.setup)
    finally:
        monkeypatch.undo()
        importlib.reload(bench)


def test_the_ratio_setup_skips_the_baseline_as_asv_calls_it() -> None:
    import benchmarks.bench_fusions as bench

    instance = getattr(bench, "softmax_bwd")()  # noqa: B009 (made when imported)
    cache = {"points": {}, "gpu": {"peak_bandwidth_gbps": 4800.0}}
    # asv reads ``setup`` off the bound benchmark method and calls it with the params alone.
    with pytest.raises(NotImplementedError, match="baseline has no ratio"):
        instance.track_ratio.setup(cache, "nvfuser", "bfloat16", "16384x4096")
    with pytest.raises(NotImplementedError, match="was not measured"):
        instance.track_ratio.setup(cache, "thunder-prims", "bfloat16", "16384x4096")


@pytest.mark.parametrize(
    ("measured", "wanted", "captured"),
    [
        ("", "", tuple(FUSIONS)),  # a person's run_gpu.sh --capture: everything it measured
        ("", "rmsnorm_bwd", ("rmsnorm_bwd",)),  # a PR job by default (bench-pr.yml)
        ("gelu_bwd", "", ("gelu_bwd",)),  # a reproduce step's --fusions gelu_bwd
        ("gelu_bwd", "rmsnorm_bwd", ()),  # never a fusion the run did not measure
        ("softmax_bwd,rmsnorm_bwd", "all", ("rmsnorm_bwd", "softmax_bwd")),
    ],
)
def test_a_run_captures_what_it_measured_and_was_asked_to(
    measured: str, wanted: str, captured: tuple[str, ...]
) -> None:
    from benchmarks.engine.capture import fusions_to_capture

    env = {"RMSNORM_BENCH_FUSIONS": measured, "RMSNORM_BENCH_CAPTURE_FUSIONS": wanted}
    assert fusions_to_capture(env) == captured

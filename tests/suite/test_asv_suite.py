"""The asv suite on a machine without a GPU: it imports, `asv check` passes, runs are skipped.

These run the real asv (0.6.6) on the real suite; CI has no GPU, torch, nvFuser or Thunder.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import asv
import pytest
from paths import REPO_ROOT

REPO = REPO_ROOT
SMOKE = REPO / "data" / "h200-smoke" / "results" / "nvidia-h200"
#: The pr set's shapes before the catalog (size_sets.toml), which the committed records hold.
OLD_PR_SHAPES = ("512x4096", "2048x8192", "16384x8192")


def _asv(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "asv", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )


@pytest.fixture(scope="module")
def lab_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the suite in a throwaway git repo, as the GPU lab runs it."""
    root = tmp_path_factory.mktemp("lab")
    shutil.copytree(
        REPO / "benchmarks", root / "benchmarks", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "asv.conf.json", root / "asv.conf.json")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "lab"], cwd=root, check=True)
    return root


def test_suite_imports_without_the_gpu_stack() -> None:
    code = (
        "import sys, benchmarks.bench_rmsnorm_bwd as b, benchmarks.bench_fusions as f;"
        "bad = [m for m in ('torch', 'nvfuser_direct', 'thunder') if m in sys.modules];"
        "assert not bad, bad; print(len(b._SHAPES), f.softmax_bwd.params[2])"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2 ['16384x4096']"


@pytest.mark.parametrize(
    "size_set",
    ["pr", pytest.param("nightly", marks=pytest.mark.slow)],  # seconds of real asv
)
def test_asv_check_passes(lab_repo: Path, size_set: str) -> None:
    done = _asv(
        ["check", "-E", f"existing:{sys.executable}"], lab_repo, RMSNORM_BENCH_SIZES=size_set
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No problems found" in done.stdout


@pytest.mark.parametrize(
    ("size_set", "dtypes", "shapes"), [("pr", 2, 2), ("nightly", 3, 60), ("smoke", 1, 1)]
)
def test_asv_discovers_every_point_of_the_size_set(
    tmp_path: Path, size_set: str, dtypes: int, shapes: int
) -> None:
    """The six benchmarks the bot reads, over the set's dtypes x shapes (size_sets.toml), and no
    other benchmark, in a run of RMSNorm backward alone (the catalog's classes:
    test_fusion_catalog.py)."""
    found = _discover(tmp_path, RMSNORM_BENCH_SIZES=size_set, RMSNORM_BENCH_FUSIONS="rmsnorm_bwd")
    ratio = "bench_rmsnorm_bwd.RatioToNvfuser.track_ratio"
    assert found.pop(ratio) == [4, dtypes, shapes]  # nvFuser is the reference, not a contender
    kinds = ("kernel_time", "host_time", "bandwidth_pct", "kernel_count", "compile_time")
    expected = [5, dtypes, shapes]
    assert found == {f"bench_rmsnorm_bwd.RMSNormBackward.track_{k}": expected for k in kinds}


def _discover(tmp_path: Path, **env: str) -> dict[str, list[int]]:
    """What asv itself sees (its own discovery step, as `asv run` calls it): each benchmark's
    parameter counts."""
    out = tmp_path / "discovered.json"
    runner = Path(asv.__file__).parent / "benchmark.py"
    done = subprocess.run(
        [sys.executable, str(runner), "discover", str(REPO / "benchmarks"), str(out)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return {b["name"]: [len(values) for values in b["params"]] for b in json.loads(out.read_text())}


def test_a_run_of_some_points_declares_only_their_dtypes_and_shapes(tmp_path: Path) -> None:
    """A bisect step measures a few points; asv then visits only their combinations instead of
    the whole set's (5220 in the nightly set, 85 s of asv for 2 points on the H200)."""
    found = _discover(
        tmp_path,
        RMSNORM_BENCH_SIZES="nightly",
        RMSNORM_BENCH_POINTS="bfloat16/16x49152,float16/16x49152,bfloat16/512x768",
        RMSNORM_BENCH_FUSIONS="rmsnorm_bwd",
    )
    assert found.pop("bench_rmsnorm_bwd.RatioToNvfuser.track_ratio") == [4, 2, 2]
    assert set(map(tuple, found.values())) == {(5, 2, 2)} and len(found) == 5


@pytest.mark.slow  # seconds of real asv end to end (docs/BOT.md: pytest -m slow)
def test_run_without_gpu_skips_with_the_reason(lab_repo: Path) -> None:
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=lab_repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert _asv(["machine", "--yes", "--machine", "cpu-ci"], lab_repo).returncode == 0
    done = _asv(
        [
            "run",
            "-E",
            f"existing:{sys.executable}",
            "--set-commit-hash",
            sha,
            "--record-samples",
            "--launch-method",
            "forkserver",
            "--machine",
            "cpu-ci",
            "--show-stderr",
            "--bench",
            "RatioToNvfuser",
        ],
        lab_repo,
        RMSNORM_BENCH_SIZES="smoke",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "n/a" in done.stdout  # asv's mark for a skipped benchmark
    assert "RMSNorm backward suite skipped:" in done.stdout
    saved = json.loads(
        next((lab_repo / "results" / "cpu-ci").glob(f"{sha[:8]}-*.json")).read_text()
    )
    row = saved["results"]["bench_rmsnorm_bwd.RatioToNvfuser.track_ratio"]
    # Skipped: asv stores NaN ("n/a") for every point, no value invented.
    assert all(value != value for value in row[0])


def test_committed_smoke_record_renders_its_summary() -> None:
    from benchmarks.engine.summary import main

    record = next(SMOKE.glob("*.provenance.jsonl"))
    assert main([str(record)]) == 0


def test_summary_refuses_an_empty_record(tmp_path: Path) -> None:
    from benchmarks.engine.summary import main

    empty = tmp_path / "x.provenance.jsonl"
    empty.write_text("")
    assert main([str(empty)]) == 3


def test_summary_says_how_it_is_called_and_refuses_what_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmarks.engine.summary import main

    assert main(["--help"]) == 0 and "provenance.jsonl" in capsys.readouterr().out
    assert main([]) == 2 and main(["--bogus"]) == 2
    assert main([str(tmp_path / "absent.jsonl")]) == 3
    torn = tmp_path / "torn.provenance.jsonl"
    torn.write_text('{"points": {', encoding="utf-8")
    assert main([str(torn)]) == 3
    assert "the last record is not JSON" in capsys.readouterr().err


def test_committed_smoke_results_hold_samples_for_every_variant() -> None:
    saved = json.loads(next(SMOKE.glob("*-existing-*.json")).read_text())
    columns = saved["result_columns"]
    values = saved["results"]["bench_rmsnorm_bwd.RMSNormBackward.track_kernel_time"]
    row = dict(zip(columns, values, strict=False))  # asv drops trailing empty columns
    assert len(row["samples"]) == 5  # nvfuser, thunder-prims, thunder-func, eager, torch-compile
    assert all(len(s) == 10 for s in row["samples"])


def test_gpu_run_command_refuses_a_machine_without_gpu() -> None:
    done = subprocess.run(
        ["bash", "benchmarks/run_gpu.sh", "--size-set", "smoke"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "no usable GPU here" in done.stderr


def test_gpu_run_command_refuses_unknown_arguments() -> None:
    done = subprocess.run(
        ["bash", "benchmarks/run_gpu.sh", "--sizes", "pr"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "unknown argument --sizes" in done.stderr


def _replay(
    lab_repo: Path, machine: str, recorded: Path, sha: str, **env: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What run_gpu.sh's store phase does: asv run replaying the record of ``sha`` (in the
    recorded folder), as asv machine ``machine``. Returns (what asv stored here, what it had
    stored on the H200)."""
    here = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=lab_repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert _asv(["machine", "--yes", "--machine", machine], lab_repo).returncode == 0
    args = ["run", "-E", f"existing:{sys.executable}", "--set-commit-hash", here]
    args += ["--record-samples", "--launch-method", "forkserver", "--machine", machine]
    replay = str(recorded / f"{sha}.provenance.jsonl")
    done = _asv(args, lab_repo, RMSNORM_BENCH_REPLAY=replay, **env)
    assert done.returncode == 0, done.stdout + done.stderr
    mine = json.loads(next((lab_repo / "results" / machine).glob(f"{here[:8]}-*.json")).read_text())
    theirs = json.loads(next(recorded.glob(f"{sha[:8]}-*.json")).read_text())
    return mine, theirs


@pytest.mark.slow  # seconds of real pip, asv or bash end to end (docs/BOT.md: pytest -m slow)
def test_replaying_a_recorded_measurement_stores_the_same_asv_results(lab_repo: Path) -> None:
    """What run_gpu.sh does after measuring, here on the committed H200 baseline: asv's results
    from the replayed record equal (value for value, sample for sample) those asv stored on the
    H200. Also a way to recover asv results when asv died after a measurement."""
    recorded = REPO / "data" / "h200" / "results" / "nvidia-h200"
    sha = "06f650c87bcca99fe961d28d3bec88c38e1bfdbe"
    # Recorded before the catalog, when the pr set was 3 dtypes x (512, 4096), (2048, 8192),
    # (16384, 8192): those points of the nightly set, in the same order, and RMSNorm backward
    # alone.
    old_pr = [f"{d}/{s}" for d in ("bfloat16", "float16", "float32") for s in OLD_PR_SHAPES]
    mine, theirs = _replay(
        lab_repo,
        "replay",
        recorded,
        sha,
        RMSNORM_BENCH_SIZES="nightly",
        RMSNORM_BENCH_POINTS=",".join(old_pr),
        RMSNORM_BENCH_FUSIONS="rmsnorm_bwd",
    )
    assert set(mine["results"]) == set(theirs["results"])

    def columns(data: dict, bench: str) -> dict:  # type: ignore[type-arg]
        row = dict(zip(data["result_columns"], data["results"][bench], strict=False))
        return {c: row.get(c) for c in ("result", "params", "samples")}

    for bench in theirs["results"]:
        assert columns(mine, bench) == columns(theirs, bench), bench
    assert columns(theirs, "bench_rmsnorm_bwd.RatioToNvfuser.track_ratio")["samples"]


def _same(a: object, b: object) -> bool:
    """Equal, NaN (asv's skipped) equal to NaN."""
    return json.dumps(a) == json.dumps(b)


@pytest.mark.slow  # seconds of real asv end to end (docs/BOT.md: pytest -m slow)
def test_replaying_the_h200_bisect_step_stores_its_points_alone(lab_repo: Path) -> None:
    """The bisect's known-good step (data/h200-bisect): replayed with its RMSNORM_BENCH_POINTS,
    asv stores the two points' combinations alone, each value and sample equal to the one asv
    stored on the H200 among the nightly set's 5220."""
    runs = REPO / "data" / "h200-bisect" / "state.runs"
    run = runs / "000-lightning_thunder-0.2.6-py3-none-any.whl"
    recorded = run / "run-1" / "nvidia-h200"
    sha = "977510d71561a48ab060ea5a7fbcf9cf017dbd71"
    mine, theirs = _replay(
        lab_repo,
        "bisect",
        recorded,
        sha,
        RMSNORM_BENCH_SIZES="nightly",
        RMSNORM_BENCH_POINTS="bfloat16/16x49152,float16/16x49152",
        RMSNORM_BENCH_FUSIONS="rmsnorm_bwd",
    )

    def by_combination(data: dict, bench: str) -> dict:  # type: ignore[type-arg]
        row = dict(zip(data["result_columns"], data["results"][bench], strict=False))
        combos = list(itertools.product(*row["params"]))
        samples = row.get("samples") or [None] * len(combos)  # asv drops a trailing empty column
        return {c: (r, s) for c, r, s in zip(combos, row["result"], samples, strict=True)}

    stored = 0
    for bench in theirs["results"]:
        ours = by_combination(mine, bench)
        assert len(ours) == (8 if "track_ratio" in bench else 10)  # 2 points x 4 or 5 variants
        whole = by_combination(theirs, bench)
        for combo, value in ours.items():
            assert _same(value, whole[combo]), (bench, combo)
            stored += not math.isnan(value[0])  # asv stores a skipped combination as NaN
    assert stored == 2 * 3 * 5 + 2 * 2  # the measured 34; eager and torch.compile were not


def test_replay_refuses_a_record_of_another_commit(tmp_path: Path) -> None:
    from benchmarks.engine.measure import replay_record

    record = REPO / "data" / "h200" / "results" / "nvidia-h200"
    path = record / "06f650c87bcca99fe961d28d3bec88c38e1bfdbe.provenance.jsonl"
    assert replay_record(str(path), None)["thunder_variant"] == "stock"
    with pytest.raises(ValueError, match="no rmsnorm-bwd-provenance/1 record for commit"):
        replay_record(str(path), "f" * 40)

"""The nightly sweep in shards, on the real shard files of the H200 sweep (data/h200-nightly).

What must hold: every point of the set is in exactly one shard and every shard fits its
budget; a point already measured for the commit is never measured again; merge gives back the
very record committed beside the shards, and refuses a partial or inconsistent set.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks.engine.config import Shape, SuiteConfig, parse_points, point_key
from benchmarks.engine.digest import suite_digest
from benchmarks.shards import store
from benchmarks.shards.__main__ import main
from benchmarks.shards.common import Exit
from benchmarks.shards.fit import fit
from benchmarks.shards.plan import COSTS_FILE, Costs, parse_shard, plan, point_seconds
from tests.paths import DATA, REPO_ROOT

RESULTS = DATA / "h200-nightly" / "results"
MACHINE = "nvidia-h200"
COMMIT = "4e57021e32936a96ba33e0293901790ffae9e73d"
VARIANTS = "thunder-prims,thunder-func"


@pytest.fixture(autouse=True)
def _rmsnorm_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests hold the shard mechanics on RMSNorm backward's nightly grid (its costs and
    point counts); the catalog's points travel through the same code with their own keys."""
    monkeypatch.setenv("RMSNORM_BENCH_FUSIONS", "rmsnorm_bwd")


def nightly(**extra: str) -> SuiteConfig:
    return SuiteConfig.from_env(
        {
            "RMSNORM_BENCH_SIZES": "nightly",
            "RMSNORM_BENCH_VARIANTS": VARIANTS,
            "RMSNORM_BENCH_FUSIONS": "rmsnorm_bwd",
            **extra,
        }
    )


def committed_record() -> dict[str, object]:
    path = RESULTS / MACHINE / f"{COMMIT}.provenance.jsonl"
    record: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return record


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the committed shards folder to break (the committed files stay as measured)."""
    target = store.shards_dir(tmp_path, MACHINE, COMMIT)
    shutil.copytree(store.shards_dir(RESULTS, MACHINE, COMMIT), target)
    return tmp_path


def test_the_plan_covers_every_point_once_within_the_budget() -> None:
    cfg = nightly()
    for budget in (300.0, 480.0, 900.0):
        shards = plan(cfg, Costs.load(), budget)
        keys = [k for s in shards for k in s.points]
        assert sorted(keys) == sorted(point_key(d, s) for d, s in cfg.points_to_measure())
        assert len(keys) == len(set(keys)) == 180
        assert all(s.estimate_s <= budget for s in shards)
        n = len(shards)
        assert [s.label for s in shards] == [f"{i}/{n}" for i in range(1, n + 1)]
        assert plan(cfg, Costs.load(), budget) == shards  # every runner computes the same
    assert len(plan(cfg, Costs.load(), 300.0)) > len(plan(cfg, Costs.load(), 900.0))


def test_a_point_over_the_budget_on_its_own_is_refused() -> None:
    with pytest.raises(ValueError, match="over the 20 s budget"):
        plan(nightly(), Costs.load(), 20.0)


def test_the_committed_cost_model_is_the_fit_of_its_sources() -> None:
    costs = Costs.load()
    assert costs.sources, "costs.json names the records it was fitted on"
    refit = fit([REPO_ROOT / s for s in costs.sources], root=REPO_ROOT)
    assert refit.to_json() == COSTS_FILE.read_text(encoding="utf-8")


def test_the_fit_would_have_planned_every_measured_shard_for_what_it_took() -> None:
    """The safety factor: no measured shard took longer than the fitted model estimates."""
    record = committed_record()
    cfg = nightly()
    costs = Costs.load()
    for shard in record["shards"]:  # type: ignore[attr-defined]
        estimate = costs.safety * costs.process_s + sum(
            point_seconds(costs, cfg, k.split("/")[0], Shape.parse(k.split("/")[1]))
            for k in shard["points"]
        )
        assert shard["process_wall_s"] <= estimate + 0.5


def test_merge_gives_back_the_committed_record(copy: Path) -> None:
    assert main(["merge", "--results", str(copy), "--commit", COMMIT, "--machine", MACHINE]) == 0
    merged = (copy / MACHINE / f"{COMMIT}.provenance.jsonl").read_text(encoding="utf-8")
    assert json.loads(merged) == committed_record()
    # again: the same record is already there, nothing changes
    assert main(["merge", "--results", str(copy), "--commit", COMMIT, "--machine", MACHINE]) == 0


def test_merge_names_the_missing_points(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = store.shards_dir(copy, MACHINE, COMMIT)
    store.point_file(folder, "float32/16x768").unlink()
    code = main(["merge", "--results", str(copy), "--commit", COMMIT, "--machine", MACHINE])
    assert code == Exit.INCOMPLETE
    assert "1 of 180 points missing: float32/16x768" in capsys.readouterr().err
    assert not (copy / MACHINE / f"{COMMIT}.provenance.jsonl").exists()


def test_merge_refuses_shards_that_measured_differently(copy: Path) -> None:
    folder = store.shards_dir(copy, MACHINE, COMMIT)
    run_file = sorted(folder.glob("run-*.json"))[-1]
    doc = json.loads(run_file.read_text(encoding="utf-8"))
    doc["header"]["versions"]["thunder"] = "0.2.7.dev20260201"
    run_file.write_text(json.dumps(doc), encoding="utf-8")
    code = main(["merge", "--results", str(copy), "--commit", COMMIT, "--machine", MACHINE])
    assert code == Exit.DISAGREE


def test_merge_refuses_points_of_a_run_that_never_finished(copy: Path) -> None:
    folder = store.shards_dir(copy, MACHINE, COMMIT)
    sorted(folder.glob("run-*.json"))[0].unlink()
    code = main(["merge", "--results", str(copy), "--commit", COMMIT, "--machine", MACHINE])
    assert code == Exit.DISAGREE


def test_merge_never_overwrites_another_record(copy: Path) -> None:
    target = copy / MACHINE / f"{COMMIT}.provenance.jsonl"
    target.write_text('{"other": 1}\n', encoding="utf-8")
    args = ["merge", "--results", str(copy), "--commit", COMMIT, "--machine", MACHINE]
    assert main(args) == Exit.DISAGREE
    assert target.read_text(encoding="utf-8") == '{"other": 1}\n'
    assert main([*args, "--replace"]) == 0


def _current_digest(folder: Path) -> None:
    """This test is about skipping measured points, not about the code that measured them:
    let the copy's run headers name the code of this checkout."""
    for path in folder.glob("run-*.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["header"]["suite_digest"] = suite_digest()
        path.write_text(json.dumps(doc), encoding="utf-8")


def _run_shard(
    results: Path, shard: str, capfd: pytest.CaptureFixture[str]
) -> subprocess.CompletedProcess[str]:
    """``python3 -m benchmarks.shards run`` in this process, as a finished process would read:
    its exit code, and what it and its children (the runner checks, the worker) printed."""
    capfd.readouterr()
    argv = ["run", "--variants", VARIANTS, "--shard", shard, "--commit", COMMIT,
            "--results", str(results), "--machine", MACHINE]  # fmt: skip
    code = main(argv)
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(argv, code, out, err)


def test_a_shard_measures_only_what_the_commit_lacks(
    copy: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """No GPU here: a shard with nothing left must finish without one, and a shard with one
    point gone must try to measure exactly that point (and stop at the missing GPU)."""
    folder = store.shards_dir(copy, MACHINE, COMMIT)
    _current_digest(folder)
    count = len(plan(nightly(), Costs.load(), 480.0))
    done = _run_shard(copy, f"1/{count}", capfd)
    assert done.returncode == 0, done.stderr
    assert "0 of" in done.stderr and "points to measure" in done.stderr
    before = set(folder.iterdir())
    assert _run_shard(copy, f"1/{count}", capfd).returncode == 0
    assert set(folder.iterdir()) == before  # nothing measured: not even a runner check
    gone = plan(nightly(), Costs.load(), 480.0)[1].points[0]
    store.point_file(folder, gone).unlink()
    again = _run_shard(copy, f"2/{count}", capfd)
    assert "1 of" in again.stderr, again.stderr
    assert again.returncode in (Exit.NO_GPU, Exit.FAILED), again.stderr  # no CUDA here


def test_a_point_that_raised_is_measured_again() -> None:
    points = {
        "a": {"point": {"variants": {}}},
        "b": {"point": {"error": "RuntimeError: CUDA out of memory"}},
    }
    assert store.measured(points) == {"a"}


def test_shards_of_another_plan_are_refused(copy: Path) -> None:
    code = main(
        [
            "run",
            "--variants",
            VARIANTS,
            "--shard",
            "1/99",
            "--commit",
            COMMIT,
            "--results",
            str(copy),
            "--machine",
            MACHINE,
        ]
    )
    assert code == Exit.USAGE


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0"])
def test_bad_shard_labels(text: str) -> None:
    with pytest.raises(ValueError):
        parse_shard(text)


def test_points_outside_the_set_are_a_typo() -> None:
    cfg = nightly()
    with pytest.raises(ValueError, match="bfloat16/3x3 not in size set 'nightly'"):
        parse_points("bfloat16/3x3", cfg.shapes, cfg.dtypes, "nightly")
    only = nightly(RMSNORM_BENCH_POINTS="float32/16x768, bfloat16/512x4096")
    assert [point_key(d, s) for d, s in only.points_to_measure()] == [
        "bfloat16/512x4096",
        "float32/16x768",
    ]


def test_plan_json_is_a_workflow_matrix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--variants", VARIANTS, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["size_set"] == "nightly" and doc["count"] == len(doc["shards"])
    assert {"shard", "points", "estimate_s"} <= set(doc["shards"][0])


def test_points_of_a_killed_shard_process_are_measured_again(
    copy: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A shard process killed part-way (the job's time limit, a lost runner) leaves point files
    but no run header, which merge refuses; the re-run must measure those points again, or
    the commit could never be merged."""
    folder = store.shards_dir(copy, MACHINE, COMMIT)
    _current_digest(folder)
    killed = sorted(folder.glob("run-*.json"))[0]
    orphans = set(json.loads(killed.read_text(encoding="utf-8"))["points"])
    killed.unlink()
    shards = plan(nightly(), Costs.load(), 480.0)
    lost = [p for p in shards[0].points if p in orphans]
    assert lost  # the current plan's first shard holds points of the killed process
    again = _run_shard(copy, f"1/{len(shards)}", capfd)
    assert f"{len(lost)} of {len(shards[0].points)} points to measure" in again.stderr, again.stderr
    assert again.returncode in (Exit.NO_GPU, Exit.FAILED), again.stderr  # no CUDA here
    status = main(
        [
            "status",
            "--variants",
            VARIANTS,
            "--results",
            str(copy),
            "--commit",
            COMMIT,
            "--machine",
            MACHINE,
        ]
    )
    assert status == Exit.INCOMPLETE


def test_a_shard_process_killed_after_its_header_keeps_its_points(
    copy: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The worker writes its header (finished: false) before its first point: killed half-way,
    its points keep their settings, a re-run measures only the rest, and merge takes them,
    saying the run did not finish."""
    folder = store.shards_dir(copy, MACHINE, COMMIT)
    _current_digest(folder)
    killed = sorted(folder.glob("run-*.json"))[0]
    doc = json.loads(killed.read_text(encoding="utf-8"))
    doc.update(finished=False, process_wall_s=None)  # as the worker leaves it when killed
    killed.write_text(json.dumps(doc), encoding="utf-8")
    shards = plan(nightly(), Costs.load(), 480.0)
    again = _run_shard(copy, f"1/{len(shards)}", capfd)
    assert again.returncode == 0 and "0 of" in again.stderr, again.stderr
    assert main(["merge", "--results", str(copy), "--commit", COMMIT, "--machine", MACHINE]) == 0
    merged = json.loads((copy / MACHINE / f"{COMMIT}.provenance.jsonl").read_text())
    runs = {r["id"]: r for r in merged["shards"]}
    assert runs[doc["id"]]["finished"] is False and runs[doc["id"]]["process_wall_s"] is None
    assert all("finished" not in r for i, r in runs.items() if i != doc["id"])

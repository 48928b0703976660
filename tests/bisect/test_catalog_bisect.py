"""A bisect of a catalog fusion decides on recorded real catalog runs (tests/bisect/recorded/
catalog.json, data/h200-catalog): every run holds all 14 fusions' points, and a build is judged
on the bisected fusion's points alone, with that fusion's noise series, as the PR mode judges
each fusion. The known-bad build is Thunder's Bias+GELU backward 5% slower (the suite's
slowdown hook); every other fusion is stock there, so RMSNorm backward's points find no step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bisect_helpers import RECORDED, bisect, classes, measured
from paths import REPO_ROOT

from bot.commands import cli
from bot.exitcodes import ExitCode

CATALOG = RECORDED / "catalog.json"
GELU = "gelu_bwd/bfloat16/16384x4096"
STOCK = "lightning-thunder==0.2.6"
SLOW, SLOW_2 = f"{STOCK}+slowgelubwd5", f"{STOCK}+slowgelubwd5.2"
TIMELINE = [STOCK, f"{STOCK}+stock2", f"{STOCK}+stock4", f"{STOCK}+stock5", SLOW, SLOW_2]


def _catalog(tmp: Path, points: str, *extra: str) -> tuple[int, dict[str, object]]:
    return bisect(tmp, TIMELINE, *extra, recorded=CATALOG, points=points)


def test_a_catalog_fusion_is_decided_on_its_own_points_and_noise(tmp_path: Path) -> None:
    code, data = _catalog(tmp_path, GELU)
    assert code == ExitCode.OK_NO_REGRESSION, data
    assert (data["fusion"], data["points"]) == ("gelu_bwd", [GELU])
    assert (data["last_good"], data["first_bad"]) == (f"{STOCK}+stock5", SLOW)
    assert measured(data) == [STOCK, f"{STOCK}+stock4", f"{STOCK}+stock5", SLOW, SLOW_2]
    assert classes(data)[SLOW] == "bad" and classes(data)[f"{STOCK}+stock5"] == "good"
    (slow,) = [r for r in data["timeline"] if r["build"] == SLOW]  # type: ignore[attr-defined]
    # Each figure is one point: the run's 13 other fusions are not in the decision.
    assert {f["points"] for f in slow["figures"]} == {1}
    ratio = {
        f["variant"]: f["geomean"]["estimate"] for f in slow["figures"] if f["guard"] == "ratio"
    }
    assert 1.04 < ratio["thunder-prims"] < 1.06 and 1.04 < ratio["thunder-func"] < 1.06
    state = json.loads((tmp_path / "state.json").read_text())
    assert (state["fusion"], state["points"]) == ("gelu_bwd", [GELU])


def test_the_text_names_the_fusion_and_its_noise_series(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The noise: Bias+GELU backward's series, fitted on its 4 A/A runs (RMSNorm backward's on
    12): the fusion's own series, not RMSNorm backward's."""
    code, _ = _catalog(tmp_path, GELU, "--json", "-")
    text = capsys.readouterr().out
    assert code == ExitCode.OK_NO_REGRESSION
    assert json.loads(text)["timeline"][-1]["class"] == "bad"
    builds = tmp_path / "builds-6.txt"
    argv = ["bisect", "--package", "thunder", "--good", STOCK, "--bad", SLOW_2,
            "--builds", str(builds), "--points", GELU, "--state", str(tmp_path / "state.json"),
            "--recorded", str(CATALOG), "--config", str(REPO_ROOT / "perfbot.toml"),
            "--repo", "Lightning-AI/lightning-thunder", "--issue", "7", "--dry-run"]  # fmt: skip
    assert cli.main(argv, env={}) == ExitCode.OK_NO_REGRESSION
    out = capsys.readouterr().out
    assert out.startswith("bisect thunder on Bias+GELU backward: first bad build found\n")
    assert "noise: between-run noise from 4 A/A runs on nvidia-h200\n" in out
    assert "<!-- fusion-perfbot-bisect:thunder:gelu_bwd -->\n" in out
    assert "### Bisect of Thunder builds on Bias+GELU backward: first bad build found" in out


def test_rmsnorm_backward_s_points_of_the_same_runs_find_no_step(tmp_path: Path) -> None:
    """The same recorded runs at RMSNorm backward's points: the known-bad build is good there,
    and the answer and state file are as before the catalog (no fusion named)."""
    code, data = _catalog(tmp_path, "bfloat16/2048x8192,bfloat16/16384x8192")
    assert code == ExitCode.INCONCLUSIVE
    assert "the known-bad build is good against the known-good one" in str(data["reason"])
    assert "fusion" not in data and "fusion" not in json.loads(
        (tmp_path / "state.json").read_text()
    )


def test_a_state_file_of_one_fusion_is_not_resumed_for_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _catalog(tmp_path, GELU, "--max-measurements", "1")[0] == ExitCode.UNFINISHED
    code, _ = _catalog(tmp_path, "softmax_bwd/bfloat16/16384x4096")
    assert code == ExitCode.USAGE
    assert "its fusion is gelu_bwd, not softmax_bwd" in capsys.readouterr().err


def test_a_plan_carries_the_fusion_and_the_bisect_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bisect-plan by hand at a catalog fusion's points (nvFuser nightlies from a saved index
    answer): the plan names the fusion; the bisect reads it (its builds swapped here for the
    recorded Thunder ones); a plan whose fusion and points disagree is refused."""
    plan, answer = tmp_path / "plan.json", tmp_path / "index.txt"
    answer.write_text("nvfuser (0.2.36.dev20260103)\nAvailable versions: 0.2.36.dev20260103, "
                      "0.2.36.dev20260102, 0.2.36.dev20260101\n")  # fmt: skip
    config = str(REPO_ROOT / "perfbot.toml")
    argv = ["bisect-plan", "--package", "nvfuser", "--good", "nvfuser==0.2.36.dev20260101",
            "--bad", "nvfuser==0.2.36.dev20260103", "--points", GELU,
            "--index-answer", str(answer), "--out", str(plan), "--config", config]  # fmt: skip
    assert cli.main(argv, env={}) == 0
    assert capsys.readouterr().out.startswith(
        "bisect nvfuser on Bias+GELU backward for by hand: nvfuser==0.2.36.dev20260101 .. "
    )
    written = json.loads(plan.read_text())
    assert (written["fusion"], written["points"]) == ("gelu_bwd", [GELU])
    assert written["builds"] == ["nvfuser==0.2.36.dev20260102"]
    written.update(alert="k", package="thunder", good=STOCK, bad=SLOW_2, builds=TIMELINE[1:-1])
    plan.write_text(json.dumps(written))
    run = ["bisect", "--plan", str(plan), "--state", str(tmp_path / "s" / "state.json"),
           "--recorded", str(CATALOG), "--config", str(REPO_ROOT / "perfbot.toml"),
           "--json", str(tmp_path / "answer.json")]  # fmt: skip
    assert cli.main(run, env={}) == ExitCode.OK_NO_REGRESSION
    assert json.loads((tmp_path / "answer.json").read_text())["first_bad"] == SLOW
    plan.write_text(json.dumps({**written, "fusion": "softmax_bwd"}))
    assert cli.main(run, env={}) == ExitCode.BAD_INPUT
    assert "the plan names the fusion 'softmax_bwd' and points of gelu_bwd" in (
        capsys.readouterr().err
    )


def test_a_real_one_build_measurement_holds_the_fusions_points(tmp_path: Path) -> None:
    """What the real measurer brought back from the H200 (data/h200-catalog, call 10:
    benchmarks.under_test.one with --fusions gelu_bwd at Bias+GELU backward's smoke point):
    its manifest reads, and the run restricted to the bisected point has every variant's
    kernel time, so a build measured this way can be decided."""
    from bot.bisect.measure import read_manifest
    from bot.bisect.points import DEFAULT_VARIANTS, restrict, without_data
    from bot.history.load import read_runs

    folder = REPO_ROOT / "data" / "h200-catalog" / "bisect-one"
    measured = read_manifest(folder / "results.build.json", folder / "results", None)
    assert measured.machine == "nvidia-h200" and measured.commit.startswith("977510d7")
    (run,) = read_runs([folder / "results"])["nvidia-h200"]
    point = ["gelu_bwd/bfloat16/256x1024"]
    chosen = restrict(run, point, DEFAULT_VARIANTS)
    assert sorted(k.variant for k in chosen.points) == sorted(DEFAULT_VARIANTS)
    assert {k.fusion for k in chosen.points} == {"gelu_bwd"}
    assert without_data(run, point, DEFAULT_VARIANTS) == []

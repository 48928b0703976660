"""A bisect of one fusion of the catalog: its points (``fusion/dtype/MxN``, the suite's keys),
one fusion a bisect, and the command line its measurement runs: what
``benchmarks.under_test.one`` and then benchmarks/run_gpu.sh get, checked against what the
suite's own configuration accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bisect_helpers import bisect
from paths import DATA, REPO_ROOT
from test_one_build import _offline, make_wheel  # noqa: F401 (an autouse fixture: pip offline)

import benchmarks.under_test.one as one
from benchmarks.engine.config import SuiteConfig
from bot.bisect.measure import SuiteMeasurer
from bot.bisect.points import PointsError, parse_points, points_in_report
from bot.bisect.timeline import make_timeline
from bot.commands import cli
from bot.exitcodes import ExitCode

GELU = "gelu_bwd/bfloat16/16384x4096"
VARIANTS = ("nvfuser", "thunder-prims", "thunder-func")


def test_fusion_qualified_points_are_parsed_as_the_suite_names_them() -> None:
    assert parse_points(f" {GELU},gelu_bwd/float32/16384x4096,{GELU}") == (
        GELU,
        "gelu_bwd/float32/16384x4096",
    )
    # RMSNorm backward's points keep their names from before the catalog, its fusion or not.
    assert parse_points("rmsnorm_bwd/float32/2048x8192,bfloat16/512x4096") == (
        "bfloat16/512x4096",
        "float32/2048x8192",
    )
    for bad in (
        "gelu/bfloat16/16384x4096",  # not a fusion of the catalog
        "nope_bwd/bfloat16/16384x4096",
        "Gelu_bwd/bfloat16/16384x4096",
        "gelu_bwd/bf16/16384x4096",
        "gelu_bwd/bfloat16/16384",
        "gelu_bwd:thunder-prims/bfloat16/16384x4096",  # a series' label, not a point
        "gelu_bwd/gelu_bwd/bfloat16/16384x4096",
    ):
        with pytest.raises(PointsError, match="is not a point"):
            parse_points(bad)


def test_a_bisect_measures_one_fusion() -> None:
    for two in (f"{GELU},softmax_bwd/bfloat16/16384x4096", f"{GELU},bfloat16/2048x8192"):
        with pytest.raises(PointsError, match=r"points of 2 fusions .*a bisect measures one"):
            parse_points(two)


def test_points_of_two_fusions_are_refused_before_anything_is_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    points = f"{GELU},softmax_bwd/bfloat16/16384x4096"
    code, data = bisect(
        tmp_path, ["lightning-thunder==0.2.6", "lightning-thunder==0.2.7"], points=points
    )
    assert code == ExitCode.USAGE and data == {} and not (tmp_path / "state.json").exists()
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "points of 2 fusions (gelu_bwd, softmax_bwd): a bisect measures one fusion; bisect "
        "each on its own, with that fusion's points"
    )


def test_the_points_of_a_catalog_report_are_its_fusion_s(tmp_path: Path) -> None:
    """The catalog pair (Thunder's Bias+GELU backward 5% slower at head): `report --json`'s
    rows name no fusion, its machine entries do; the history labels name it too."""
    pair = DATA / "h200-catalog" / "pair"
    out = tmp_path / "report.json"
    argv = ["report", "--results", str(pair / "rep-1"), "--results", str(pair / "rep-2"),
            "--base", "6a438ce9", "--head", "e0cdef8e",
            "--config", str(REPO_ROOT / "perfbot.toml"), "--json", str(out)]  # fmt: skip
    assert cli.main(argv, env={}) == ExitCode.REGRESSION
    assert points_in_report(json.loads(out.read_text()), "r") == (GELU,)
    label = "gelu_bwd:thunder-func/bfloat16/16384x4096"
    history = {"schema": "perfbot-history/1", "machines": [{"breaks": [
        {"status": "confirmed", "points": [{"point": label}]}]}]}  # fmt: skip
    assert points_in_report(history, "h") == (GELU,)
    history["machines"][0]["breaks"][0]["points"].append(  # type: ignore[index]
        {"point": "thunder-func/float32/2048x8192"}
    )
    with pytest.raises(PointsError, match="points of 2 fusions"):
        points_in_report(history, "h")


def _measurer(points: tuple[str, ...], tmp: Path) -> SuiteMeasurer:
    return SuiteMeasurer(
        "thunder", points, VARIANTS, tmp / "work", REPO_ROOT, machine="nvidia-h200"
    )


def test_the_measurement_passes_the_fusion_to_the_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bisect's command for a build, run through benchmarks.under_test.one (a real
    install of a test wheel) up to run_gpu.sh, which a stand-in records: ``--fusions`` and
    the points as the suite's configuration reads them, measuring that fusion's point only."""
    wheel = make_wheel(tmp_path / "w", "0.2.7.dev20260118")
    build = make_timeline("thunder", str(wheel), "lightning-thunder==0.2.8", []).good
    dest = tmp_path / "runs" / "000" / "run-1"
    cmd = _measurer((GELU,), tmp_path).command(build, dest, tmp_path / "m.json")
    assert cmd[1:3] == ["-m", "benchmarks.under_test.one"]
    at = cmd.index("--points")
    assert cmd[at : at + 6] == ["--points", GELU, "--variants", ",".join(VARIANTS),
                                "--fusions", "gelu_bwd"]  # fmt: skip
    fake = tmp_path / "root"
    (fake / "benchmarks").mkdir(parents=True)
    (fake / "benchmarks" / "run_gpu.sh").write_text(
        f'printf "%s\\n" "$@" > {tmp_path}/args\nprintf "%s" "$RMSNORM_BENCH_POINTS" > '
        f"{tmp_path}/points\n"
    )
    monkeypatch.setattr(one, "ROOT", fake)
    assert one.main(cmd[3:]) == 0
    args = (tmp_path / "args").read_text().splitlines()
    points = (tmp_path / "points").read_text()
    assert args[-4:] == ["--variants", ",".join(VARIANTS), "--fusions", "gelu_bwd"]
    assert points == GELU and json.loads((tmp_path / "m.json").read_text())["fusions"] == [
        "gelu_bwd"
    ]
    # run_gpu.sh exports --fusions as RMSNORM_BENCH_FUSIONS: the suite measures that point only.
    suite = SuiteConfig.from_env(
        {"RMSNORM_BENCH_FUSIONS": "gelu_bwd", "RMSNORM_BENCH_POINTS": points}
    )
    assert [(f, d, s.label) for f, d, s in suite.fusion_points()] == [
        ("gelu_bwd", "bfloat16", "16384x4096")
    ]


def test_rmsnorm_backward_s_measurement_is_the_one_from_before_the_catalog(tmp_path: Path) -> None:
    build = make_timeline(
        "thunder", "lightning-thunder==0.2.6", "lightning-thunder==0.2.7", []
    ).good
    points = ("bfloat16/2048x8192", "float32/2048x8192")
    cmd = _measurer(points, tmp_path).command(build, tmp_path / "d", tmp_path / "m.json")
    assert "--fusions" not in cmd and cmd[cmd.index("--points") + 1] == ",".join(points)
    assert one.selection(",".join(points), "thunder-func", "") == (
        ["--variants", "thunder-func"],
        {"RMSNORM_BENCH_POINTS": ",".join(points)},
    )


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"fusion": "softmax_bwd"}, "names the fusion 'softmax_bwd', its points gelu_bwd"),
        ({"points": ["gelu_bwd/bfloat16/16x16x16"]}, "is not a point"),
        ({"points": [GELU, "bfloat16/2048x8192"]}, "points of 2 fusions"),
    ],
)
def test_a_state_file_names_the_fusion_of_its_points(
    tmp_path: Path, change: dict[str, object], said: str
) -> None:
    """The fusion a state file names is its points' (derived, written for the reader): a file
    whose fusion and points disagree, or whose points are none or of two fusions, is bad."""
    from bot.bisect.state import State, read_state, to_json, write_state
    from bot.results.types import BadInput

    path = tmp_path / "state.json"
    state = State("thunder", "lightning-thunder==0.2.6", (GELU,), ("nvfuser", "thunder-prims"))
    write_state(path, state)
    assert read_state(path) == state and to_json(state)["fusion"] == "gelu_bwd"
    path.write_text(json.dumps({**to_json(state), **change}), encoding="utf-8")
    with pytest.raises(BadInput, match=said):
        read_state(path)

"""The state file: a bisect resumes only its own, and bad input stops it with one line and its
own exit code, losing no run already recorded."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from bisect_helpers import BROKEN, LARGE_POINTS, NIGHTLIES, SLOW5, THUNDER, UNFUSED, bisect

from bot.exitcodes import ExitCode

TIMELINE = [*NIGHTLIES[:3], SLOW5, UNFUSED]


@pytest.fixture
def halfway(tmp_path: Path) -> Path:
    """A bisect stopped after its two ends."""
    code, _ = bisect(tmp_path, TIMELINE, "--max-measurements", "2")
    assert code == ExitCode.UNFINISHED
    return tmp_path / "state.json"


def test_another_reference_or_other_points_is_another_bisect(
    halfway: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp = halfway.parent
    code, _ = bisect(tmp, [NIGHTLIES[1], NIGHTLIES[2], SLOW5, UNFUSED])
    assert code == ExitCode.USAGE
    assert "the state file is for another bisect: its good is lightning-thunder" in (
        capsys.readouterr().err
    )
    code, _ = bisect(tmp, TIMELINE, points="float32/2048x8192")
    assert code == ExitCode.USAGE and "its points is" in capsys.readouterr().err
    code, _ = bisect(tmp, TIMELINE, "--variants", "thunder-prims")
    assert code == ExitCode.USAGE and "its variants is" in capsys.readouterr().err
    # Another known-bad build is the same bisect: its runs are used, none measured again.
    code, data = bisect(tmp, [*NIGHTLIES[:3], SLOW5])
    assert code == 0 and data["first_bad"] == SLOW5
    runs = json.loads(halfway.read_text())["runs"]
    assert [r["build"] for r in runs][:2] == [NIGHTLIES[0], UNFUSED]


def _last(text: str, old: str, new: str) -> str:
    """``text`` with the last ``old`` replaced: the runs (read back) come after the report
    (never read back) in the file."""
    head, found, tail = text.rpartition(old)
    assert found
    return head + new + tail


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (lambda text: text[: len(text) // 2], "truncated JSON"),
        (lambda text: text.replace('"schema": "perfbot-bisect-state/1"', '"schema": "x"'),
         "not a bisect state file"),
        (lambda text: _last(text, '"attempt": 1', '"attempt": "1"'), "attempt must be"),
        (lambda text: _last(text, '"results": "state.runs/', '"results": "../'),
         "must be a folder under the state's"),
        (lambda text: _last(text, '"commit": "9dc51696', '"commit": "zz'),
         "not a full 40-hex commit hash"),
    ],
)  # fmt: skip
def test_a_damaged_state_file_is_bad_input(
    halfway: Path, capsys: pytest.CaptureFixture[str], damage: Callable[[str], str], words: str
) -> None:
    halfway.write_text(damage(halfway.read_text()))
    before = halfway.read_text()
    code, _ = bisect(halfway.parent, TIMELINE)
    assert code == ExitCode.BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0] and "step 'read the state file" in err[0]
    assert halfway.read_text() == before  # nothing written over it


def test_a_run_whose_results_are_gone_is_bad_input(
    halfway: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (run,) = [r for r in json.loads(halfway.read_text())["runs"] if r["build"] == UNFUSED]
    shutil.rmtree(halfway.parent / run["results"])
    code, _ = bisect(halfway.parent, TIMELINE)
    assert code == ExitCode.BAD_INPUT
    assert "results directory does not exist" in capsys.readouterr().err


def test_a_run_on_another_stack_or_machine_is_not_compared(
    halfway: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the real measurer records (the rest of the stack) must match the reference's."""
    state = json.loads(halfway.read_text())
    state["runs"][0]["stack"] = {"torch": "2.11.0+cu130"}
    state["runs"][1]["stack"] = {"torch": "2.10.0+cu130"}
    halfway.write_text(json.dumps(state))
    code, _ = bisect(halfway.parent, TIMELINE)
    assert code == ExitCode.BAD_INPUT
    assert "saw another stack than the known-good build" in capsys.readouterr().err
    state["runs"][1]["stack"], state["runs"][1]["machine"] = None, "nvidia-a100"
    halfway.write_text(json.dumps(state))
    code, _ = bisect(halfway.parent, TIMELINE)
    assert code == ExitCode.BAD_INPUT  # its results are not on that machine
    assert "nvidia-a100" in capsys.readouterr().err


def test_a_build_with_no_recorded_run_left_is_a_failed_measurement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = bisect(tmp_path, [NIGHTLIES[0], "lightning-thunder==0.2.6+nosuchrun", UNFUSED])
    assert code == ExitCode.MEASURE_FAILED
    err = capsys.readouterr().err
    assert "lightning-thunder==0.2.6+nosuchrun: no recorded run 1" in err
    runs = json.loads((tmp_path / "state.json").read_text())["runs"]
    assert [r["build"] for r in runs] == [NIGHTLIES[0], UNFUSED]  # kept for the next call


def test_the_work_folder_must_sit_under_the_state_s(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a").mkdir()
    code, _ = bisect(tmp_path / "a", TIMELINE, "--work", str(tmp_path / "elsewhere"))
    assert code == ExitCode.USAGE and "must be inside the state file's folder" in (
        capsys.readouterr().err
    )
    assert LARGE_POINTS  # the default points of these timelines


def test_a_known_good_build_without_data_cannot_be_the_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = bisect(tmp_path, [BROKEN, NIGHTLIES[0]])
    assert code == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert f"the known-good build {BROKEN} has no data for thunder-prims/bfloat16/16384x8192" in err


def test_a_measurement_whose_results_cannot_be_read_is_not_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A damaged copy of a real run (cut in half, as a killed store would leave it) stands for
    a build: the measurement fails, and the state keeps only the runs that can be used."""
    recorded = json.loads(THUNDER.read_text())
    nightlies = (THUNDER.parent / recorded["builds"][NIGHTLIES[5]][0]["results"]).resolve()
    copy = tmp_path / "damaged"
    shutil.copytree(nightlies, copy)
    (results,) = (copy / "nvidia-h200").glob("cee6d116-*.json")
    results.write_text(results.read_text()[:5000])
    recorded["builds"][NIGHTLIES[5]][0]["results"] = str(copy)
    for runs in recorded["builds"].values():
        for run in runs:
            run["results"] = str((THUNDER.parent / run["results"]).resolve())
    mine = tmp_path / "recorded.json"
    mine.write_text(json.dumps(recorded))
    code, _ = bisect(tmp_path, [NIGHTLIES[0], NIGHTLIES[5], UNFUSED], recorded=mine)
    assert code == ExitCode.MEASURE_FAILED
    err = capsys.readouterr().err
    assert f"{NIGHTLIES[5]}: its results cannot be used:" in err and "truncated JSON" in err
    runs = json.loads((tmp_path / "state.json").read_text())["runs"]
    assert [r["build"] for r in runs] == [NIGHTLIES[0], UNFUSED]


def test_a_repo_without_an_issue_is_refused_before_measuring(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--repo alone names no issue: refused at once, not after the GPU time (where a token
    made it fail as a GitHub failure, exit 4, and no token printed a section for 'key None')."""
    code, _ = bisect(tmp_path, TIMELINE, "--repo", "Lightning-AI/lightning-thunder")
    assert code == ExitCode.USAGE and "--repo needs --issue or --issue-key" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "state.json").exists()  # nothing measured

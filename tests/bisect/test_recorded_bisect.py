"""The issue's "done when": bisect names the first bad build over recorded builds (one of them
really slower) with about log2(n) measurements, and resumes from its state file.

Which recorded run stands for which build: bisect_helpers.py's docstring and
tests/bisect/recorded/*.json.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from bisect_helpers import (
    BROKEN,
    NIGHTLIES,
    NV_POINTS,
    NV_SLOW2,
    NV_SLOW5,
    NV_STOCK,
    NVFUSER,
    SLOW2,
    SLOW5,
    UNFUSED,
    bisect,
    classes,
    measured,
)

from bot.exitcodes import ExitCode


@pytest.mark.parametrize("good_nightlies", range(1, 7))
def test_the_first_slower_build_is_named_with_log2_measurements(
    tmp_path: Path, good_nightlies: int
) -> None:
    timeline = [*NIGHTLIES[:good_nightlies], SLOW5, SLOW2, UNFUSED]
    code, data = bisect(tmp_path, timeline)
    assert code == ExitCode.OK_NO_REGRESSION, data
    assert (data["status"], data["first_bad"], data["last_good"]) == (
        "found",
        SLOW5,
        NIGHTLIES[good_nightlies - 1],
    )
    n = len(timeline)
    assert data["builds"] == n
    assert data["measurements"] <= 2 + math.ceil(math.log2(n - 1)) == data["most_measurements"]
    assert data["measurements"] < n or n <= 4  # fewer than measuring every build
    cls = classes(data)
    assert cls[timeline[0]] == "reference" and cls[UNFUSED] == cls[SLOW5] == "bad"
    assert all(cls[b] == "good" for b in NIGHTLIES[1:good_nightlies] if b in cls)
    # The known-good and known-bad builds are measured first, in that order.
    runs = [(r["build"], r["runs"][0]["measured_at"]) for r in data["timeline"] if r["runs"]]
    assert {timeline[0], UNFUSED} <= {b for b, _ in runs}


def test_every_build_measured_is_shown_with_its_figures(tmp_path: Path) -> None:
    timeline = [*NIGHTLIES, SLOW5, SLOW2, UNFUSED]
    code, data = bisect(tmp_path, timeline)
    assert code == 0
    assert measured(data) == [NIGHTLIES[0], NIGHTLIES[4], NIGHTLIES[5], SLOW5, UNFUSED]
    assert data["measurements"] == 5 and data["builds"] == 9 and data["measured_now"] == 5
    slow = next(r for r in data["timeline"] if r["build"] == SLOW5)
    assert slow["alarming"] == ["thunder", "ratio"] and slow["overall"] == "regressed"
    ratio = {f["variant"]: f for f in slow["figures"] if f["guard"] == "ratio"}
    # +5% on Thunder's kernels: the ratio's geometric mean over the six points moves by ~5%.
    assert 1.03 < ratio["thunder-prims"]["geomean"]["estimate"] < 1.07
    assert ratio["thunder-prims"]["points"] == 6
    nightly = next(r for r in data["timeline"] if r["build"] == NIGHTLIES[5])
    assert all(abs(f["geomean"]["estimate"] - 1) < 0.01 for f in nightly["figures"])
    assert data["changes"]["url"] is None  # a stand-in has no date or commit
    for row in data["timeline"]:
        for run in row["runs"]:
            assert run["machine"] == "nvidia-h200" and len(run["commit"]) == 40


def test_when_every_nightly_is_good_the_known_bad_build_is_the_first_bad(
    tmp_path: Path,
) -> None:
    code, data = bisect(tmp_path, [*NIGHTLIES, UNFUSED])
    assert code == 0 and data["first_bad"] == UNFUSED and data["last_good"] == NIGHTLIES[-1]
    assert data["measurements"] == 2 + math.ceil(math.log2(len(NIGHTLIES)))


def test_a_known_bad_build_that_is_not_bad_there_is_nothing_to_find(tmp_path: Path) -> None:
    code, data = bisect(tmp_path, NIGHTLIES[:3])
    assert code == ExitCode.INCONCLUSIVE
    assert "the known-bad build is good against the known-good one" in data["reason"]
    assert measured(data) == [NIGHTLIES[0], NIGHTLIES[2]]  # the two ends, nothing between


def test_a_bisect_spans_calls_and_never_measures_a_build_twice(tmp_path: Path) -> None:
    timeline = [*NIGHTLIES, SLOW5, SLOW2, UNFUSED]
    _, whole = bisect(tmp_path, timeline, state="whole.json")
    done: list[str] = []
    calls = 0
    while calls < 10:
        calls += 1
        code, data = bisect(tmp_path, timeline, "--max-measurements", "2")
        state = json.loads((tmp_path / "state.json").read_text())
        done = [f"{r['build']}#{r['attempt']}" for r in state["runs"]]
        assert len(done) == len(set(done))  # no run of a build twice
        if code != ExitCode.UNFINISHED:
            break
        assert data["status"] == "unfinished" and data["next"]["build"]
        assert "--max-measurements 2 reached" in data["reason"]
        assert data["measured_now"] == 2
    assert code == 0 and calls == 3  # 5 measurements, 2 a call
    assert (data["first_bad"], data["last_good"]) == (whole["first_bad"], whole["last_good"])
    assert data["measurements"] == whole["measurements"] == len(done)
    # Once found, another call measures nothing and says the same.
    code, again = bisect(tmp_path, timeline)
    assert code == 0 and again["measured_now"] == 0 and again["first_bad"] == SLOW5


def test_a_budget_stops_before_a_measurement_that_would_not_fit(tmp_path: Path) -> None:
    """The recorded runs took 36-53 s of measuring each: a 60 s budget fits one, not two."""
    timeline = [*NIGHTLIES, SLOW5, SLOW2, UNFUSED]
    code, data = bisect(tmp_path, timeline, "--budget-s", "60")
    assert code == ExitCode.UNFINISHED and int(code) == 8
    assert data["measured_now"] == 1 and "--budget-s 60" in data["reason"]


def test_a_broken_step_is_found_when_the_known_bad_build_is_broken(tmp_path: Path) -> None:
    code, data = bisect(tmp_path, [*NIGHTLIES, BROKEN])
    assert code == 0, data
    assert (data["first_bad"], data["last_good"]) == (BROKEN, NIGHTLIES[-1])
    bad = next(r for r in data["timeline"] if r["build"] == BROKEN)
    assert bad["overall"] == "broken" and bad["broken_points"] == 12  # 2 variants x 6 points


def test_a_build_that_breaks_where_the_bad_one_only_slows_down_stops_the_bisect(
    tmp_path: Path,
) -> None:
    code, data = bisect(tmp_path, [NIGHTLIES[0], NIGHTLIES[1], BROKEN, SLOW5, UNFUSED])
    assert code == ExitCode.INCONCLUSIVE and int(code) == 9
    assert data["status"] == "stuck" and classes(data)[BROKEN] == "broken"
    assert "another change" in data["reason"]
    # A stopped bisect names no first bad build (issue 21: it set first_bad to its bracket);
    # where the measurements stand is the bracket.
    assert (data["last_good"], data["first_bad"]) == (None, None)
    assert data["bracket"] == {"last_good": NIGHTLIES[0], "first_bad": UNFUSED}


def test_an_unsure_build_is_measured_again_until_it_is_decided(tmp_path: Path) -> None:
    """slow-nvfuser-2 is unsure against stock on one run and on two; its third run decides it:
    the hand-written fusion is slower, as in the known-bad build."""
    timeline = [NV_STOCK, NV_SLOW2, NV_SLOW5]
    code, data = bisect(tmp_path, timeline, package="nvfuser", recorded=NVFUSER, points=NV_POINTS)
    assert code == 0, data
    assert (data["first_bad"], data["last_good"]) == (NV_SLOW2, NV_STOCK)
    row = next(r for r in data["timeline"] if r["build"] == NV_SLOW2)
    assert len(row["runs"]) == 3 and row["alarming"] == ["nvfuser"]
    assert data["measurements"] == 5  # both ends, and the unsure build three times


def test_an_unsure_build_past_its_runs_stops_and_says_so(tmp_path: Path) -> None:
    timeline = [NV_STOCK, NV_SLOW2, NV_SLOW5]
    code, data = bisect(
        tmp_path, timeline, "--remeasure", "1", package="nvfuser", recorded=NVFUSER,
        points=NV_POINTS,
    )  # fmt: skip
    assert code == ExitCode.INCONCLUSIVE
    assert data["reason"].startswith(f"{NV_SLOW2} is still unsure after 2 runs")
    row = next(r for r in data["timeline"] if r["build"] == NV_SLOW2)
    assert row["class"] == "unsure" and row["runs_a_side_to_settle"] is not None


def test_a_contradiction_across_calls_is_said_not_guessed(tmp_path: Path) -> None:
    """One state file, three lists of the same builds: first the nightlies alone (the second
    is measured good), then with the slower build (measured bad), then the slower build put
    before the second nightly: a good build after a bad one is not one step."""
    a, b = NIGHTLIES[0], NIGHTLIES[2]
    assert bisect(tmp_path, [a, NIGHTLIES[1], b, UNFUSED])[0] == 0
    code, data = bisect(tmp_path, [a, SLOW5, UNFUSED])
    assert code == 0 and data["first_bad"] == SLOW5
    code, data = bisect(tmp_path, [a, SLOW5, NIGHTLIES[1], b, UNFUSED])
    assert code == ExitCode.INCONCLUSIVE and data["measured_now"] == 0
    assert f"{b} is good but comes after {SLOW5}, which is bad" in data["reason"]
    assert data["first_bad"] is None and data["last_good"] is None

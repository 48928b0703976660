"""A job's turns (benchmarks/engine/turns.py), run for real: separate processes, the launcher,
the file markers. What must hold: no process times beside another's turn or build, the turns
come in the job's order, and a process that dies never holds the others."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.engine import turns
from tests.paths import REPO_ROOT as REPO

#: A stand-in measuring process: "builds" for BUILD seconds (or dies with exit 5 there), then
#: waits for its turn and writes when its build and its turn began and ended.
FAKE = """
import json, os, sys, time
from benchmarks.engine import turns
turn = turns.Turn.from_env(os.environ)
turn.announce()
t0 = time.time()
time.sleep(float(sys.argv[1]))
if sys.argv[2] == "die":
    sys.exit(5)
built = time.time()
turn.built()
turn.wait()
start = time.time()
time.sleep(0.15)
print(json.dumps({"turn": turn.index, "build": [t0, built], "gpu": [start, time.time()]}))
turn.over()
"""


def _job(tmp_path: Path, plans: list[tuple[float, str]]) -> tuple[list[int], list[dict]]:
    script = tmp_path / "fake.py"
    script.write_text(FAKE)
    env = {**os.environ, "PYTHONPATH": str(REPO), turns.WAIT_VAR: "20"}
    commands = [
        turns.Command([sys.executable, str(script), str(build), fate], env, tmp_path / f"{k}.log")
        for k, (build, fate) in enumerate(plans, start=1)
    ]
    statuses = turns.run_in_turns(commands, tmp_path / "markers")
    rows = [
        json.loads(line)
        for k in range(1, len(plans) + 1)
        for line in (tmp_path / f"{k}.log").read_text().splitlines()
        if line.startswith("{")
    ]
    return statuses, rows


def test_turns_come_in_order_and_after_every_build(tmp_path: Path) -> None:
    # The last process builds longest: no turn may start before its build ends.
    statuses, rows = _job(tmp_path, [(0.1, "ok"), (0.2, "ok"), (0.6, "ok")])
    assert statuses == [0, 0, 0]
    assert [r["turn"] for r in sorted(rows, key=lambda r: r["gpu"][0])] == [1, 2, 3]
    last_build = max(r["build"][1] for r in rows)
    assert all(r["gpu"][0] >= last_build for r in rows)
    spans = sorted(r["gpu"] for r in rows)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_a_process_that_dies_holds_no_one_and_no_turn_overlaps(tmp_path: Path) -> None:
    # The second dies while building; the third must still wait for the first's turn to end.
    statuses, rows = _job(tmp_path, [(0.4, "ok"), (0.05, "die"), (0.1, "ok")])
    assert statuses == [0, 5, 0]
    first, third = sorted(rows, key=lambda r: r["turn"])
    assert third["gpu"][0] >= first["gpu"][1]


def test_the_launcher_wants_a_folder_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "markers").mkdir()
    (tmp_path / "markers" / "over-1").write_text("")
    with pytest.raises(turns.TurnError, match="not empty"):
        turns.run_in_turns(
            [turns.Command(["true"], dict(os.environ), tmp_path / "l")], tmp_path / "markers"
        )


def test_a_wait_past_its_limit_names_what_never_came(tmp_path: Path) -> None:
    turn = turns.Turn(tmp_path, 2, 2, wait_s=1.0)
    (tmp_path / "built-1").write_text("")
    now = iter([0.0, 0.5, 2.0])
    with pytest.raises(turns.TurnError, match="built-2, over-1"):
        turn.wait(clock=lambda: next(now), sleep=lambda _: None)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"RMSNORM_BENCH_TURNS": "/x"}, "want a folder and K/N"),
        ({"RMSNORM_BENCH_TURNS": "/x", "RMSNORM_BENCH_TURN": "3/2"}, "K must be from 1 to N"),
        ({"RMSNORM_BENCH_TURN": "1/2"}, "want a folder"),
    ],
)
def test_a_malformed_turn_is_refused(env: dict[str, str], message: str) -> None:
    with pytest.raises(turns.TurnError, match=message):
        turns.Turn.from_env(env)


def test_no_turn_in_the_environment_is_a_process_on_its_own() -> None:
    assert turns.Turn.from_env({}) is None


def test_the_command_line_runs_the_groups_and_exits_with_the_first_failure(tmp_path: Path) -> None:
    script = tmp_path / "fake.py"
    script.write_text(FAKE)
    args = [sys.executable, "-m", "benchmarks.engine.turns", str(tmp_path / "m")]
    args += [str(tmp_path / "1.log"), sys.executable, str(script), "0.05", "ok", ":::"]
    args += [str(tmp_path / "2.log"), sys.executable, str(script), "0.05", "die"]
    done = subprocess.run(
        args,
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), turns.WAIT_VAR: "20"},
    )
    assert done.returncode == 5, done.stderr
    assert "exit 0:" in done.stderr and "exit 5:" in done.stderr
    bad = subprocess.run([*args[:6], ":::", "only-a-log"], cwd=REPO, capture_output=True, text=True)
    assert bad.returncode == 2 and "LOG and its arguments" in bad.stderr

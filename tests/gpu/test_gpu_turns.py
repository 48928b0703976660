"""On a GPU machine: a job of turns for real (benchmarks/engine/turns.py). Three measuring
processes of RMSNorm backward's smoke point start at once, build side by side, then time one
at a time in order; each writes its record, its steps and its GPU checks in its turn.

Run there with: python -m pytest -m gpu tests/gpu --noconftest.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path

import pytest

from benchmarks.engine import turns
from benchmarks.engine.measure import missing_stack

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
COMMIT = "c" * 40


def test_three_turns_build_together_and_time_one_at_a_time(tmp_path: Path) -> None:
    reason = missing_stack()
    if reason:
        pytest.skip(reason)
    commands = []
    for k in (1, 2, 3):
        env = {
            **os.environ,
            # The suite first, then what the GPU stack put on the path (.gpu/setup.sh).
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
            "RMSNORM_BENCH_SIZES": "smoke",
            "RMSNORM_BENCH_ROUNDS": "10",
            "RMSNORM_BENCH_FUSIONS": "rmsnorm_bwd",
            "RMSNORM_BENCH_COMMIT": COMMIT,
            "RMSNORM_BENCH_RECORD": str(tmp_path / f"{k}.provenance.jsonl"),
            "RMSNORM_BENCH_STEPS": str(tmp_path / f"{k}.steps.jsonl"),
            "RMSNORM_BENCH_HYGIENE": str(tmp_path / f"{k}.hygiene.jsonl"),
        }
        args = [sys.executable, "-m", "benchmarks.engine.measure"]
        commands.append(turns.Command(args, env, tmp_path / f"{k}.log"))
    statuses = turns.run_in_turns(commands, tmp_path / "markers")
    logs = {k: (tmp_path / f"{k}.log").read_text() for k in (1, 2, 3)}
    assert statuses == [0, 0, 0], logs
    steps = {
        k: {
            row["step"]: row
            for row in map(json.loads, (tmp_path / f"{k}.steps.jsonl").read_text().splitlines())
        }
        for k in (1, 2, 3)
    }
    last_build = max(s["build"]["end"] for s in steps.values())
    turn_starts = [steps[k]["wait_turn"]["end"] for k in (1, 2, 3)]
    # Every turn starts after every build, and in order, one after the other.
    assert all(start >= last_build for start in turn_starts)
    assert turn_starts == sorted(turn_starts)
    for k in (1, 2, 3):
        record = json.loads((tmp_path / f"{k}.provenance.jsonl").read_text().splitlines()[-1])
        (point,) = record["points"].values()
        assert point["variants"]["nvfuser"]["status"] == "ok", logs[k]
        assert len(point["variants"]["nvfuser"]["kernel_us"]) == 10
        hygiene = (tmp_path / f"{k}.hygiene.jsonl").read_text().splitlines()
        checks = [json.loads(line) for line in hygiene]
        assert [c["when"] for c in checks] == ["before", "after"]
        assert all(len(c["job_pids"]) >= 1 for c in checks)
        # The record spans the process's building (its start, to the second) and says how
        # long the process waited for its turn before opening its run.
        began = dt.datetime.fromisoformat(record["started_at"]).timestamp()
        build = steps[k]["build"]
        assert build["start"] - 1.0 <= began <= build["start"], (began, build)
        waited = steps[k]["wait_turn"]["end"] - steps[k]["wait_turn"]["start"]
        phases = record["phases_s"]
        assert phases["wait_turn_s"] == pytest.approx(waited, abs=0.05), phases

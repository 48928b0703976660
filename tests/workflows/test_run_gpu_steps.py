"""run_gpu.sh's measuring phase (issue 39): each step timed into ``<commit>.steps.jsonl``, and a
measuring process that fails after writing its record (the capture comes after the record:
nvFuser's profiler can end the process) costs a warning, never the measurement. Run for real
with bash; python3 is a stand-in that does what each step would."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from workflow_rules import REPO, shim

COMMIT = "a" * 40
#: The stand-in: the runner checks pass; the measurement writes a record line when asked
#: (WRITE_RECORD=1), then exits with MEASURE_STATUS.
FAKE_PYTHON = """case "$*" in
  *engine.measure*)
    [ "${WRITE_RECORD:-0}" = 1 ] && echo '{"schema": "x"}' >> "$RMSNORM_BENCH_RECORD"
    exit "${MEASURE_STATUS:-0}" ;;
  *) exit 0 ;;
esac"""


def _measure(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    path = shim(tmp_path, "python3", FAKE_PYTHON)
    results = tmp_path / "results"
    proc = subprocess.run(
        [
            "bash",
            str(REPO / "benchmarks" / "run_gpu.sh"),
            "--phase",
            "measure",
            "--machine",
            "gpu-x",
            "--commit",
            COMMIT,
            "--results",
            str(results),
        ],
        env={"PATH": path, "HOME": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return proc, results / "gpu-x"


def test_every_step_is_timed_in_the_steps_file(tmp_path: Path) -> None:
    proc, folder = _measure(tmp_path, WRITE_RECORD="1")
    assert proc.returncode == 0, proc.stderr
    steps = [
        json.loads(line) for line in (folder / f"{COMMIT}.steps.jsonl").read_text().splitlines()
    ]
    assert [s["step"] for s in steps] == ["check_before", "measure", "check_after"]
    assert all(s["end"] >= s["start"] > 1.7e9 and s["status"] == 0 for s in steps)


def test_a_failure_after_the_record_is_a_warning_and_the_run_goes_on(tmp_path: Path) -> None:
    proc, folder = _measure(tmp_path, WRITE_RECORD="1", MEASURE_STATUS="1")
    assert proc.returncode == 0, proc.stderr
    assert "failed after writing its record (exit 1" in proc.stderr
    steps = [
        json.loads(line)["step"]
        for line in (folder / f"{COMMIT}.steps.jsonl").read_text().splitlines()
    ]
    assert steps[-1] == "check_after"


@pytest.mark.parametrize("status", ["1", "3"])
def test_a_failure_before_the_record_fails_the_run_with_its_status(
    tmp_path: Path, status: str
) -> None:
    proc, folder = _measure(tmp_path, MEASURE_STATUS=status)
    assert proc.returncode == int(status)
    assert not (folder / f"{COMMIT}.provenance.jsonl").exists()

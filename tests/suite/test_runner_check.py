"""benchmarks/runner_check.py on CPU: the GPU facts recorded on the H200 (the committed
``*.hygiene.jsonl`` of data/h200-under-test), read back through the parser as nvidia-smi prints
them, judged as the H200 judged them, and varied one fact at a time. The command itself runs
against a stand-in ``nvidia-smi`` on PATH that prints those recorded rows (and without one),
and what it appends must pass the bot's strict reader."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from paths import DATA, REPO_ROOT

from benchmarks import runner_check as rc
from bot.results.hygiene import load_checks
from bot.results.types import BadInput

COMMIT = "1361276927b1c1296a328e8150f633768722cadf"
HYGIENE = sorted((DATA / "h200-under-test").glob("*/results/rep-*/nvidia-h200/*.hygiene.jsonl"))
SOURCES = [(path, json.loads(line)) for path in HYGIENE for line in path.read_text().splitlines()]
RECORDED = [record for _, record in SOURCES]
HEADER = [*rc.FIELDS, *(f"clocks_event_reasons.{r}" for r in rc.REASONS)]


def test_the_committed_checks_are_there() -> None:
    assert len(HYGIENE) >= 12 and len(RECORDED) >= 24
    assert {r["gpu"]["name"] for r in RECORDED} == {"NVIDIA H200"}


def smi_value(value: object) -> str:
    """A fact as ``nvidia-smi --format=csv,noheader,nounits`` prints it."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else str(value)
    return str(value)


def smi_row(gpu: dict[str, Any], header: list[str] = HEADER) -> str:
    return ", ".join(
        smi_value(gpu[key.rsplit(".", 1)[1] if "reasons." in key else key]) for key in header
    )


def recorded_gpu(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record["gpu"].items() if k != "processes"}


@pytest.mark.parametrize("record", RECORDED, ids=lambda r: f"{r['commit'][:8]}-{r['when']}")
def test_a_recorded_row_parses_back_to_its_facts_and_its_verdict(record: dict[str, Any]) -> None:
    """Today's rule gives the recorded verdict, but for thunder-pair-call1's "after" checks,
    judged by the rule since dropped (utilization after our own kernels: data/README.md)."""
    gpu = recorded_gpu(record)
    parsed = rc.parse_gpu_row(HEADER, smi_row(gpu))
    assert parsed == gpu
    dropped = [p for p in record["problems"] if record["when"] == "after" and "% busy" in p]
    want = [p for p in record["problems"] if p not in dropped]
    assert rc.assess(parsed, record["gpu"]["processes"], record["when"]) == want
    assert record["ok"] is (not record["problems"])


def test_only_the_first_call_s_after_checks_failed_and_only_for_utilization() -> None:
    failed = [r for r in RECORDED if not r["ok"]]
    assert len(failed) == 4
    assert {r["when"] for r in failed} == {"after"}
    assert all(
        len(r["problems"]) == 1 and r["problems"][0].endswith("% busy with nothing of ours running")
        for r in failed
    )
    assert {path.parts[-5] for path, r in SOURCES if not r["ok"]} == {"thunder-pair-call1"}
    busy = sorted(r["gpu"]["utilization.gpu"] for r in failed)
    assert busy == [11.0, 15.0, 15.0, 24.0]


# The H200 before a measurement (thunder-pair, rep-1, head): every fact as nvidia-smi gave it.
H200 = recorded_gpu(
    next(r for r in RECORDED if r["when"] == "before" and r["gpu"]["clocks.sm"] == 1980.0)
)


def test_the_h200_before_a_measurement_is_fit() -> None:
    assert rc.assess(H200, [], "before") == []


@pytest.mark.parametrize(
    ("change", "when", "problem"),
    [
        ({"hw_slowdown": "Active"}, "before", "GPU clocks held down: HW slowdown"),
        ({"hw_thermal_slowdown": "Active"}, "after", "GPU clocks held down: HW thermal slowdown"),
        ({"hw_power_brake_slowdown": "Active"}, "before", "GPU clocks held down: HW power brake"),
        ({"sw_thermal_slowdown": "Active"}, "after", "GPU clocks held down: SW thermal slowdown"),
        ({"memory.used": 30720.0}, "after", "30720 MiB of GPU memory in use by others"),
        ({"utilization.gpu": 24.0}, "before", "GPU 24% busy with nothing of ours running"),
        ({"temperature.gpu": 91.0}, "before", "GPU at 91 C (at most 85)"),
        (
            {"clocks.applications.graphics": 1410.0},
            "before",
            "application clocks set to 1410 of 1980 MHz",
        ),
    ],
)
def test_one_unfit_fact_fails_the_check(change: dict[str, Any], when: str, problem: str) -> None:
    problems = rc.assess({**H200, **change}, [], when)
    assert len(problems) == 1 and problems[0].startswith(problem), problems


@pytest.mark.parametrize(
    "change",
    [
        {"utilization.gpu": 29.0},  # after: our own kernels in nvidia-smi's one-second average
        {"sw_power_cap": "Active"},  # the power cap under load is the GPU working, not held down
        {"clocks.sm": 345.0},  # idle clocks before a run: the GPU ramps up
        {"memory.used": 1024.0, "temperature.gpu": 85.0},  # at the limits, not over
        {"clocks.applications.graphics": None},  # "[N/A]": nothing to judge
    ],
)
def test_what_a_fit_gpu_shows_does_not_fail_the_check(change: dict[str, Any]) -> None:
    assert rc.assess({**H200, **change}, [], "after") == []


def test_busy_before_fails_busy_after_does_not() -> None:
    busy = {**H200, "utilization.gpu": 15.0}
    assert rc.assess(busy, [], "before") == ["GPU 15% busy with nothing of ours running"]
    assert rc.assess(busy, [], "after") == []


def test_another_process_on_the_gpu_fails_the_check() -> None:
    apps = rc.parse_apps(
        "4242, /usr/bin/python3, 2048\n"
        "No running processes found\n"
        "77, /opt/job,with,commas, [N/A]\n"
    )
    assert apps == [
        {"pid": 4242, "name": "/usr/bin/python3", "used_mib": 2048.0},
        {"pid": 77, "name": "/opt/job, with, commas", "used_mib": None},
    ]
    (problem,) = rc.assess(H200, apps, "before")
    assert problem == "2 other process(es) on the GPU: pid 4242 (2048.0 MiB), pid 77 (None MiB)"
    assert rc.parse_apps("") == [] and rc.parse_apps("No running processes found\n") == []


def test_not_supported_values_are_no_numbers() -> None:
    row = smi_row(
        {**H200, "clocks.applications.graphics": "[N/A]", "memory.used": "[Not Supported]"}
    )
    parsed = rc.parse_gpu_row(HEADER, row)
    assert parsed["clocks.applications.graphics"] is None and parsed["memory.used"] is None
    assert parsed["name"] == "NVIDIA H200" and parsed["hw_slowdown"] == "Not Active"
    old = [*rc.FIELDS, *(f"clocks_throttle_reasons.{r}" for r in rc.REASONS)]
    assert rc.parse_gpu_row(old, smi_row(H200, old)) == H200  # drivers before 535


def test_a_row_of_another_shape_is_refused() -> None:
    with pytest.raises(ValueError, match=f"gave 1 values for {len(HEADER)} fields"):
        rc.parse_gpu_row(HEADER, "WARNING: infoROM is corrupted at gpu 0000:00:1E.0")


def test_a_check_in_a_turn_sets_the_jobs_own_processes_aside() -> None:
    """One of a job's turns: the job's processes waiting at the barrier are not "others", and
    their memory is not memory used by others; a process of another job still fails it."""
    held = {**H200, "memory.used": 30720.0}
    ours = [
        {"pid": 11, "name": "python3", "used_mib": 20480.0},
        {"pid": 12, "name": "python3", "used_mib": 9728.0},
    ]
    gpu, others, note = rc.set_aside(held, ours, {11, 12})
    assert others == [] and note is None and gpu["memory.used"] == 512.0
    assert rc.assess(gpu, others, "before") == []
    stranger = {"pid": 99, "name": "other-job", "used_mib": 512.0}
    gpu, others, _ = rc.set_aside(held, [*ours, stranger], {11, 12})
    assert rc.assess(gpu, others, "before") == [
        "1 other process(es) on the GPU: pid 99 (512.0 MiB)"
    ]
    # Outside a turn nothing is set aside.
    assert rc.set_aside(held, ours, ()) == (held, ours, None)


def test_a_turn_that_sees_memory_but_no_process_does_not_judge_memory() -> None:
    """A container's pid namespace hides every process from nvidia-smi: whose the memory is
    cannot be told, so it is not judged, and the check says so."""
    gpu, others, note = rc.set_aside({**H200, "memory.used": 30720.0}, [], {11})
    assert others == [] and gpu["memory.used"] is None
    assert note is not None and note.startswith("memory not judged")
    assert rc.assess(gpu, others, "after") == []


# --- the command, against a stand-in nvidia-smi ------------------------------------------------


def fake_smi(folder: Path, gpu_row: str, apps: str = "", *, old_driver: bool = False) -> Path:
    """An ``nvidia-smi`` that prints a recorded row (shell builtins only: PATH holds it alone);
    an old driver refuses the new field names."""
    folder.mkdir(parents=True, exist_ok=True)
    refuse = (
        'case "$*" in *clocks_event_reasons*) echo "Field is not a valid field" >&2; exit 2;; esac'
        if old_driver
        else ""
    )
    script = folder / "nvidia-smi"
    script.write_text(
        "#!/bin/sh\n"
        f"{refuse}\n"
        f"case \"$*\" in *--query-gpu=*) printf '%s\\n' '{gpu_row}';; "
        f"*--query-compute-apps=*) printf '%s' '{apps}';; *) exit 9;; esac\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


def run_check(path_dir: Path, out: Path, when: str = "before") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": str(path_dir), "CUDA_VISIBLE_DEVICES": "0"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.runner_check",
            "--when",
            when,
            "--commit",
            COMMIT,
            "--out",
            str(out),
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_command_appends_checks_the_bot_reads(tmp_path: Path) -> None:
    out = tmp_path / f"{COMMIT}.hygiene.jsonl"
    bin_dir = fake_smi(tmp_path / "bin", smi_row(H200))
    assert run_check(bin_dir, out, "before").returncode == 0
    busy = fake_smi(tmp_path / "busy", smi_row({**H200, "utilization.gpu": 29.0}), "4242, x, 512\n")
    done = run_check(busy, out, "after")
    assert done.returncode == 0  # a failed check is data for the bot, not a failed job
    assert "runner check after: FAILED: 1 other process(es) on the GPU" in done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["when"], r["ok"]) for r in lines] == [("before", True), ("after", False)]
    assert lines[0]["gpu"] == {**H200, "processes": []}
    assert lines[1]["problems"] == ["1 other process(es) on the GPU: pid 4242 (512.0 MiB)"]
    checks = load_checks(out, COMMIT)
    assert checks is not None
    assert [(c.when, c.ok, c.problems) for c in checks.checks] == [
        ("before", True, ()),
        ("after", False, ("1 other process(es) on the GPU: pid 4242 (512.0 MiB)",)),
    ]
    # The bot holds the line to its commit.
    with pytest.raises(BadInput, match="expected"):
        load_checks(out, "f" * 40)


def test_an_old_driver_s_field_names_are_tried_next(tmp_path: Path) -> None:
    out = tmp_path / "check.jsonl"
    assert (
        run_check(fake_smi(tmp_path / "bin", smi_row(H200), old_driver=True), out).returncode == 0
    )
    (line,) = (json.loads(x) for x in out.read_text().splitlines())
    assert line["ok"] is True and line["gpu"]["hw_slowdown"] == "Not Active"


@pytest.mark.parametrize(
    ("setup", "problem"),
    [
        ("missing", "GPU not checked: [Errno 2] No such file or directory: 'nvidia-smi'"),
        ("failing", "GPU not checked: nvidia-smi --query-gpu failed: No devices were found"),
        ("warning", "GPU not checked: nvidia-smi gave 1 values for"),
    ],
)
def test_a_gpu_that_could_not_be_checked_is_a_failed_check_never_a_pass(
    tmp_path: Path, setup: str, problem: str
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if setup == "failing":
        script = bin_dir / "nvidia-smi"
        script.write_text("#!/bin/sh\necho 'No devices were found'\nexit 6\n")
        script.chmod(0o755)
    elif setup == "warning":
        fake_smi(bin_dir, "WARNING: infoROM is corrupted at gpu 0000:00:1E.0")
    out = tmp_path / f"{COMMIT}.hygiene.jsonl"
    done = run_check(bin_dir, out)
    assert done.returncode == 0, done.stderr
    assert "runner check before: FAILED: GPU not checked" in done.stderr
    (record,) = (json.loads(x) for x in out.read_text().splitlines())
    assert record["ok"] is False and record["gpu"] == {}
    (found,) = record["problems"]
    assert found.startswith(problem), found
    checks = load_checks(out, COMMIT)
    assert checks is not None
    (check,) = checks.checks
    assert check.ok is False and check.problems == (found,)


def test_a_busy_gpu_before_is_looked_at_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Busy then idle (the previous side's kernels leaving nvidia-smi's average): fit. Busy on
    every look (another job): unfit, after BUSY_RETRIES more looks a second apart."""
    idle = {"utilization.gpu": 0.0, "memory.used": 0.0}
    busy = {**idle, "utilization.gpu": 40.0}
    for readings, ok in (([busy, idle], True), ([busy] * (rc.BUSY_RETRIES + 1), False)):
        left = list(readings)
        naps: list[float] = []
        monkeypatch.setattr(rc, "query", lambda index, left=left: (left.pop(0), []))
        record = rc.check("before", "a" * 40, "0", sleep=naps.append)
        assert record["ok"] is ok and not left
        assert naps == [1.0] * (len(readings) - 1)
    after = [busy]
    monkeypatch.setattr(rc, "query", lambda index: (after.pop(0), []))
    assert rc.check("after", "a" * 40, "0", sleep=naps.append)["ok"] and not after

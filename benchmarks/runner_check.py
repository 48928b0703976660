"""Is the GPU fit to measure on? Checked before and after each side's measurement.

A number taken on a throttled GPU, or beside another job's kernels, is not evidence about the
code. This reads what ``nvidia-smi`` reports (clocks, clock-event reasons, other processes, free
memory, temperature) and appends one ``perfbot-runner-check/1`` line to
``results/<machine>/<commit>.hygiene.jsonl``; the bot marks a side whose check failed and does
not let it gate (docs/DATA.md). A machine without ``nvidia-smi`` gets a failed check that says so,
never a silent pass.

    python3 -m benchmarks.runner_check --when before|after --commit SHA --out FILE
    python3 -m benchmarks.runner_check --explain

``--explain`` answers another question: what a GPU runner host needs (driver, CUDA, torch,
nvFuser, Thunder and its nvFuser executor, asv, nvidia-ml-py, the GPU lock folder, git, flock,
Python) and whether this host has it, one line an item with the command that fixes what is not
there; its exit code says which (benchmarks/doctor.py and doctor_probe.py, docs/RUNNER.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Sequence
from datetime import datetime, timezone
from typing import Any

SCHEMA = "perfbot-runner-check/1"
#: nvidia-smi renamed "clocks_throttle_reasons" to "clocks_event_reasons" (driver 535): try both.
REASONS = (
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sw_thermal_slowdown",
    "sw_power_cap",
)
#: Reasons that mean the hardware or driver held the clocks down: a failed check.
FAILING_REASONS = {
    "hw_slowdown": "HW slowdown",
    "hw_thermal_slowdown": "HW thermal slowdown",
    "hw_power_brake_slowdown": "HW power brake",
    "sw_thermal_slowdown": "SW thermal slowdown",
}
FIELDS = (
    "name",
    "temperature.gpu",
    "utilization.gpu",
    "memory.used",
    "memory.free",
    "memory.total",
    "clocks.sm",
    "clocks.max.sm",
    "clocks.mem",
    "clocks.max.mem",
    "clocks.applications.graphics",
)
#: Thresholds of a failed check (the suite's own process is gone when these are read).
MAX_USED_MIB = 1024
MAX_IDLE_UTILIZATION_PCT = 10
MAX_TEMPERATURE_C = 85
MIN_APPLICATION_CLOCK_SHARE = 0.9


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"


def parse_gpu_row(header: Sequence[str], row: str) -> dict[str, Any]:
    """One CSV row of ``--query-gpu``; clock-event reasons keyed by their short name."""
    values = [v.strip() for v in row.split(",")]
    if len(values) != len(header):
        # e.g. a warning line ahead of the values: not a row of this query, never a pass.
        raise ValueError(f"nvidia-smi gave {len(values)} values for {len(header)} fields: {row!r}")
    facts: dict[str, Any] = {}
    for key, value in zip(header, values, strict=True):
        reason = key.rsplit(".", 1)[1] if "reasons." in key else None
        if reason in REASONS:
            facts[reason] = value  # "Active" / "Not Active"
        else:
            facts[key] = value if key == "name" else _number(value)
    return facts


def parse_apps(text: str) -> list[dict[str, Any]]:
    apps = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        # A process name may hold commas: the pid is first, the memory last.
        if len(parts) >= 3 and parts[0].isdigit():
            name = ", ".join(parts[1:-1])
            apps.append({"pid": int(parts[0]), "name": name, "used_mib": _number(parts[-1])})
    return apps


def assess(gpu: dict[str, Any], apps: list[dict[str, Any]], when: str) -> list[str]:
    """The reasons this GPU is unfit to measure on now; none means fit.

    Utilization is judged before a measurement only: nvidia-smi averages it over the last
    sample period (up to a second), so just after our own process it still shows our kernels
    (seen on the H200: 11-24% right after each measurement, 0% before)."""
    problems = []
    for key, label in FAILING_REASONS.items():
        if str(gpu.get(key, "")).lower() == "active":
            problems.append(f"GPU clocks held down: {label}")
    if apps:
        shown = ", ".join(f"pid {a['pid']} ({a['used_mib']} MiB)" for a in apps[:5])
        problems.append(f"{len(apps)} other process(es) on the GPU: {shown}")
    used = gpu.get("memory.used")
    if isinstance(used, float) and used > MAX_USED_MIB:
        problems.append(f"{used:.0f} MiB of GPU memory in use by others (at most {MAX_USED_MIB})")
    if when == "before" and _busy(gpu):
        problems.append(f"GPU {gpu['utilization.gpu']:.0f}% busy with nothing of ours running")
    temp = gpu.get("temperature.gpu")
    if isinstance(temp, float) and temp > MAX_TEMPERATURE_C:
        problems.append(f"GPU at {temp:.0f} C (at most {MAX_TEMPERATURE_C})")
    app_clock, max_clock = gpu.get("clocks.applications.graphics"), gpu.get("clocks.max.sm")
    if (
        isinstance(app_clock, float)
        and isinstance(max_clock, float)
        and app_clock < MIN_APPLICATION_CLOCK_SHARE * max_clock
    ):
        problems.append(f"application clocks set to {app_clock:.0f} of {max_clock:.0f} MHz")
    return problems


def _busy(gpu: dict[str, Any]) -> bool:
    busy = gpu.get("utilization.gpu")
    return isinstance(busy, float) and busy > MAX_IDLE_UTILIZATION_PCT


def _smi(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["nvidia-smi", *args], capture_output=True, text=True, timeout=30, check=False
    )


def query(index: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    last = ""
    for prefix in ("clocks_event_reasons", "clocks_throttle_reasons"):
        header = [*FIELDS, *(f"{prefix}.{r}" for r in REASONS)]
        done = _smi(
            [f"--id={index}", f"--query-gpu={','.join(header)}", "--format=csv,noheader,nounits"]
        )
        if done.returncode == 0 and done.stdout.strip():
            gpu = parse_gpu_row(header, done.stdout.strip().splitlines()[0])
            break
        last = (done.stderr or done.stdout).strip()
    else:
        raise RuntimeError(f"nvidia-smi --query-gpu failed: {last[-300:]}")
    apps = _smi(
        [
            f"--id={index}",
            "--query-compute-apps=pid,process_name,used_memory",
            "--format=csv,noheader,nounits",
        ]
    )
    if apps.returncode != 0:
        raise RuntimeError(f"nvidia-smi --query-compute-apps failed: {apps.stderr.strip()[-300:]}")
    return gpu, parse_apps(apps.stdout)


#: A "before" check that finds the GPU busy looks again, a second apart, this many times: the
#: previous side's kernels can still be in nvidia-smi's average (a second after one H200
#: measurement ended, its "after" check read 17%), while another job's load stays.
BUSY_RETRIES = 3


def set_aside(
    gpu: dict[str, Any], apps: list[dict[str, Any]], ours: Collection[int]
) -> tuple[dict[str, Any], list[dict[str, Any]], str | None]:
    """The GPU as a check in a job's turn judges it: the job's own processes (waiting at the
    barrier, or this one) are not "others", and their memory is not memory used by others.
    Where nvidia-smi lists no process at all (a container's pid namespace hides them) while
    memory is in use, whose it is cannot be told: memory is then not judged, and the note says
    so. Returns the GPU and processes to assess, and that note."""
    if not ours:
        return gpu, apps, None
    own = [a for a in apps if a["pid"] in ours]
    others = [a for a in apps if a["pid"] not in ours]
    used = gpu.get("memory.used")
    if not isinstance(used, float):
        return gpu, others, None
    if own:
        own_mib = sum(a["used_mib"] or 0.0 for a in own)
        return {**gpu, "memory.used": max(used - own_mib, 0.0)}, others, None
    if not apps and used > MAX_USED_MIB:
        note = "memory not judged: the job's processes hold it, and nvidia-smi lists none here"
        return {**gpu, "memory.used": None}, others, note
    return gpu, others, None


def check(
    when: str,
    commit: str,
    index: str,
    sleep: Callable[[float], None] = time.sleep,
    ours: Collection[int] = (),
) -> dict[str, Any]:
    """One check of the GPU; ``ours``: the pids of the job's own processes, set aside."""
    record: dict[str, Any] = {
        "schema": SCHEMA,
        "commit": commit,
        "when": when,
        "checked_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    try:
        gpu, apps = query(index)
        for _ in range(BUSY_RETRIES if when == "before" else 0):
            if not _busy(gpu):
                break
            sleep(1.0)
            gpu, apps = query(index)
    except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
        return {**record, "ok": False, "problems": [f"GPU not checked: {exc}"], "gpu": {}}
    judged, others, note = set_aside(gpu, apps, ours)
    problems = assess(judged, others, when)
    extra: dict[str, Any] = {"job_pids": sorted(ours)} if ours else {}
    if note:
        extra["note"] = note
    return {
        **record,
        "ok": not problems,
        "problems": problems,
        "gpu": {**gpu, "processes": apps},
        **extra,
    }


def check_in_turn(when: str, ours: Collection[int]) -> None:
    """A check from inside one of a job's turns (benchmarks/engine/turns.py), appended where
    run_gpu.sh would have appended its own (``RMSNORM_BENCH_HYGIENE``): in a job of turns the
    GPU is this process's only from its turn's start to its end, so that is when to look."""
    out, commit = os.environ.get("RMSNORM_BENCH_HYGIENE"), os.environ.get("RMSNORM_BENCH_COMMIT")
    if not out or not commit:
        return
    record = check(when, commit, _device_index(), ours=ours)
    with open(out, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")
    verdict = "ok" if record["ok"] else "FAILED: " + "; ".join(record["problems"])
    print(f"== runner check {when} (in turn): {verdict}", file=sys.stderr, flush=True)


def _device_index() -> str:
    return os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python3 -m benchmarks.runner_check",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--when", choices=["before", "after"])
    p.add_argument("--commit")
    p.add_argument("--out")
    p.add_argument(
        "--explain",
        action="store_true",
        help="list what a GPU runner needs and what this host lacks (exit codes below)",
    )
    from benchmarks import doctor

    p.epilog = "--explain's " + doctor.exit_codes_help()
    args = p.parse_args(argv)
    if args.explain:
        if args.when or args.commit or args.out:
            p.error("--explain takes no other argument")
        from benchmarks import doctor_probe

        return int(doctor_probe.main())
    if not (args.when and args.commit and args.out):
        p.error("--when, --commit and --out are required (or --explain alone)")
    record = check(args.when, args.commit, _device_index())
    with open(args.out, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")
    verdict = "ok" if record["ok"] else "FAILED: " + "; ".join(record["problems"])
    print(f"== runner check {args.when}: {verdict}", file=sys.stderr)
    return 0  # a failed check is data for the bot, not a failed job


if __name__ == "__main__":
    sys.exit(main())

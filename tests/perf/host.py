"""What the speed scripts share: the machine's description and one measured bot process.

Why a wrapper around the bot and not the kernel's rusage of the child: at exec, Linux keeps
the high-water mark of the memory the child was forked (or vforked) from, so every child of a
script that has just tiled hundreds of MB of results would report at least the script's own
peak, whatever the bot used. The wrapper reports the bot process's own peak (VmHWM) at exit.
"""

from __future__ import annotations

import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

PEAK = """
import atexit, resource, runpy, sys
def _peak():
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        with open("/proc/self/status") as status:
            kb = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
    except OSError:
        pass
    sys.__stderr__.write(f"peak-kb {kb}\\n")
atexit.register(_peak)
sys.argv = ["bot", *sys.argv[1:]]
runpy.run_module("bot", run_name="__main__", alter_sys=True)
"""


@dataclass(frozen=True)
class Timing:
    wall_s: float
    cpu_s: float  # the bot process and every process it waited for (its workers)
    peak_mb: float  # the bot's main process
    code: int
    chars: int  # of its stdout


#: The columns every speed script prints after its own: exit code, wall, CPU, peak memory.
TIMING_HEADER = f"{'exit':>5}{'wall s (min, median)':>22}{'cpu s':>7}{'peak MB':>9}"


def timing_cells(runs: Sequence[Timing]) -> str:
    """Several runs of one case as :data:`TIMING_HEADER`'s columns: the fastest run's exit
    code, wall and CPU time (the least disturbed by whatever else the machine runs), the
    median wall time, and the largest peak."""
    best = min(runs, key=lambda t: t.wall_s)
    median = statistics.median(t.wall_s for t in runs)
    peak = max(t.peak_mb for t in runs)
    return f"{best.code:>5}{f'{best.wall_s:.2f}, {median:.2f}':>22}{best.cpu_s:>7.2f}{peak:>9.1f}"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_lines() -> list[str]:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [
        f"machine: {cpus} CPU(s) (nproc), {cpu_model()}; Python {platform.python_version()}",
        f"load average at start: {', '.join(f'{x:.2f}' for x in os.getloadavg())}",
    ]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_bot_measured(args: Sequence[str], env: Mapping[str, str] | None = None) -> Timing:
    """One ``python -m bot ARGS`` process: its wall time, CPU time and peak memory."""
    before = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=None if env is None else dict(env),
    )
    wall = time.perf_counter() - start
    peaks = [
        int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("peak-kb")
    ]
    peak_mb = peaks[-1] / 1024 if peaks else float("nan")
    return Timing(wall, _children_cpu() - before, peak_mb, done.returncode, len(done.stdout))

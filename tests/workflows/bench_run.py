"""bench-pr.yml's bench step run for real with git shimmed, and the one stand-in for
benchmarks/run_gpu.sh that it and benchmarks.under_test's loop run (test_workflows.py: what is
measured and stored, in which order; test_gpu_scripts.py: what holds the GPU lock meanwhile).

The stand-in logs each call (its folder's name and its arguments) to $CALLS (and the compile
cache folder it was given, with what that holds, to $CALLS.cache), makes the machine
folder as a measurement does, and exits $HEAD_STORE_STATUS from a store run in perfbot-head.
With $LOCK_PROBE (the lock file) each call also writes to $LOCK_PROBE.seen whether another
process could take the GPU lock while it ran (`flock -n`), and whether it holds the lock's
descriptor 9. The last store (rep-$REPEATS of --commit $LAST_COMMIT) waits up to 10 s for the
lock instead: its step lets go just after starting it, and holding on would keep the lock for
ever (the step waits for the store), so "held" there is 10 s late.
"""

from __future__ import annotations

from pathlib import Path

from paths import REPO_ROOT
from workflow_rules import BENCH, GPU_LOCK_SH, WORKFLOWS, load_workflow, run_step, shim, step_by_id

BASE, HEAD = "a" * 40, "b" * 40

FAKE_RUN_GPU = """\
args="$*" results="" commit="" phase=all
while [ $# -gt 0 ]; do
  case "$1" in
    --results) results=$2; shift 2 ;;
    --commit) commit=$2; shift 2 ;;
    --phase) phase=$2; shift 2 ;;
    *) shift ;;
  esac
done
printf '%s %s\\n' "$(basename "$PWD")" "$args" >> "$CALLS"
# The job's compile cache as each run sees it (a run of an old base reads no such variable).
cache=${RMSNORM_BENCH_CACHE_ROOT:-unset}
printf '%s %s\\n' "$cache" "$(ls -A "$cache" 2>/dev/null | tr '\\n' ' ')" >> "$CALLS.cache"
if [ -n "${LOCK_PROBE:-}" ]; then
  probe=(-n)
  if [ "$phase ${results##*/} $commit" = "store rep-${REPEATS:-} ${LAST_COMMIT:-}" ]; then
    probe=(-w 10)
  fi
  if flock "${probe[@]}" "$LOCK_PROBE" true; then lock=free; else lock=held; fi
  if { true >&9; } 2>/dev/null; then fd=fd9; else fd=no-fd9; fi
  printf '%s %s %s %s %s\\n' "$phase" "${results##*/}" "$commit" "$lock" "$fd" >> "$LOCK_PROBE.seen"
fi
# One of a job's turns (benchmarks/engine/turns.py) says which it was.
tree=$(basename "$PWD")
[ -z "${RMSNORM_BENCH_TURN:-}" ] \
  || printf '%s %s %s %s\\n' "$RMSNORM_BENCH_TURN" "$tree" "${results##*/}" "$phase" \\
    >> "$CALLS.turns"
if [ "$phase $tree" = "measure perfbot-head" ] && [ -n "${HEAD_MEASURE_STATUS:-}" ]; then
  exit "$HEAD_MEASURE_STATUS"
fi
if [ "$phase" = measure ]; then mkdir -p "$results/nvidia-h200"; fi
if [ "$phase" = store ] && [ "$(basename "$PWD")" = perfbot-head ]; then
  exit "${HEAD_STORE_STATUS:-0}"
fi
"""


def write_fake_run_gpu(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FAKE_RUN_GPU, encoding="utf-8")
    return path


def bench(
    tmp_path: Path,
    head_store_status: int = 0,
    capture: bool = False,
    env: dict[str, str] | None = None,
    turns: bool = False,
) -> tuple[int, list[str], str]:
    """Run bench-pr's bench step with git shimmed: `git worktree add DIR SHA` makes DIR with a
    run_gpu.sh that logs which tree ran it and with what arguments. The lock is
    tmp_path/gpu.lock; `env` adds to the step's environment (LOCK_PROBE, LAST_COMMIT,
    HEAD_MEASURE_STATUS, GPU_MEMORY_MIB: what nvidia-smi's stand-in says the GPU holds). With
    `turns`, both sides' stand-ins know a job's turns and the base's launcher is this
    checkout's (as .perfbot-base holds the base's)."""
    calls = tmp_path / "run_gpu.calls"
    fake = write_fake_run_gpu(tmp_path / "fake_run_gpu.sh")
    known = ("# --capture) is known here\n" if capture else "") + (
        "# RMSNORM_BENCH_TURNS is known here\n" if turns else ""
    )
    fake.write_text(FAKE_RUN_GPU + known, encoding="utf-8")
    body = f"""if [ "$1" = worktree ] && [ "$2" = add ]; then
  dir=$5; mkdir -p "$dir/benchmarks"
  cp '{fake}' "$dir/benchmarks/run_gpu.sh"
fi"""
    path = shim(tmp_path, "git", body)
    # The GPU's memory as nvidia-smi gives it (an H100's 80 GB, or $GPU_MEMORY_MIB).
    shim(tmp_path, "nvidia-smi", 'echo "${GPU_MEMORY_MIB:-81559}"')
    step_env = {
        "PATH": path,
        "BASE_SHA": BASE,
        "PR_HEAD_SHA": HEAD,
        "REPEATS": "2",
        "RUNNER_TEMP": str(tmp_path),
        "CALLS": str(calls),
        "HEAD_STORE_STATUS": str(head_store_status),
        "PERFBOT_GPU_LOCK": str(tmp_path / "gpu.lock"),
        "PERFBOT_GPU_LOCK_SH": str(GPU_LOCK_SH),
        "PERFBOT_TURNS_ROOT": str(REPO_ROOT),
        "PERFBOT_TURNS": "on" if turns else "off",
        **(env or {}),
    }
    proc = run_step(step_by_id(load_workflow(WORKFLOWS / BENCH), "bench"), tmp_path, step_env)
    runs = calls.read_text().splitlines() if calls.exists() else []
    return proc.returncode, runs, proc.stdout + proc.stderr

"""Whether a job's processes have room to build side by side on this GPU (benchmarks/engine/
turns.py), or must run one at a time.

In turns every process holds all its built points until its turn: the catalog's four held
13,312-19,842 MiB each at the barrier on an 80 GB H100 (data/h100-issue39, call 13), and a
point that runs out of memory while the others build is built again in its turn. On a card
with less room than that, a process's turn could still run out, beside the others' held points,
and a point that fails at head alone would read as a head that no longer runs it. So turns are
taken only where the GPU's memory holds every process's share; elsewhere the job runs one
process at a time, as before turns. Standard library only: bench-pr.yml runs this from the
base's sparse checkout of benchmarks/engine.

    python3 -m benchmarks.engine.room PROCESSES     exit 0: room for turns; 1: one at a time
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence

#: A process's share: the most one of the catalog's processes held at the barrier (19,842 MiB
#: on the H100, call 13's in-turn checks), rounded up.
PROCESS_MIB = 20_000

Run = Callable[[list[str]], "subprocess.CompletedProcess[str]"]


def _smi(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=30, check=False)


def gpu_memory_mib(environ: dict[str, str], run: Run = _smi) -> int | None:
    """The total memory of the job's GPU (the first of CUDA_VISIBLE_DEVICES), or None where
    nvidia-smi cannot tell."""
    index = environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"
    query = ["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"]
    try:
        done = run([*query, "-i", index])
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.split() if done.returncode == 0 else []
    return (
        int(float(lines[0])) if len(lines) == 1 and lines[0].replace(".", "", 1).isdigit() else None
    )


def verdict(processes: int, total_mib: int | None) -> tuple[bool, str]:
    """Room for ``processes`` side by side on a GPU of ``total_mib``, and the line that says so."""
    want = processes * PROCESS_MIB
    if total_mib is None:
        return False, "room: nvidia-smi cannot tell the GPU's memory: one process at a time"
    fits = total_mib >= want
    how = "turns" if fits else "one process at a time"
    return fits, (
        f"room: {processes} processes side by side want about {want:,} MiB "
        f"({PROCESS_MIB:,} each), the GPU has {total_mib:,} MiB: {how}"
    )


def here(processes: int, environ: Mapping[str, str] = os.environ) -> tuple[bool, str]:
    """:func:`verdict` for this machine's GPU (the first of CUDA_VISIBLE_DEVICES)."""
    return verdict(processes, gpu_memory_mib(dict(environ)))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or not args[0].isdigit() or int(args[0]) < 1:
        print(__doc__, file=sys.stderr)
        return 2
    fits, line = here(int(args[0]))
    print(line, file=sys.stderr)
    return 0 if fits else 1


if __name__ == "__main__":
    sys.exit(main())

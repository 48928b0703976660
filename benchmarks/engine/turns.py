"""A PR job's measuring processes build together and take turns on the GPU (issue 39).

Compiling is most of a PR job (245.7 of the 295.0 s its processes recorded on an H100,
docs/PERFORMANCE.md), and each process must compile for itself: the verdict's between-run noise
comes from separate processes (docs/CALIBRATION.md). So every process of the job starts at once
and builds and checks all its points side by side with the others; then, once every one has
built (a barrier: no timed round ever runs beside another process's build or check), they take
the GPU one at a time in the job's order (base, head, base, head), each timing all its points
and capturing before the next starts. A process waiting at the barrier or for its turn runs
nothing on the GPU.

The protocol is files in one folder per job, so that it needs no server and survives any
process's death: ``pid-K`` (process K's pid, so a GPU check in a turn knows the job's own
processes), ``built-K`` (K has built, or is gone) and ``over-K`` (K's turn is over, or it is
gone). Process K of N (``RMSNORM_BENCH_TURNS`` the folder, ``RMSNORM_BENCH_TURN`` "K/N") waits
for every ``built-*`` and for every earlier ``over-*``. The launcher (:func:`run_in_turns`)
writes both markers for a process that exits, whatever its status, so that no process waits
on a dead one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

FOLDER_VAR, TURN_VAR = "RMSNORM_BENCH_TURNS", "RMSNORM_BENCH_TURN"
WAIT_VAR = "RMSNORM_BENCH_TURN_WAIT_S"
#: How long a process waits at the barrier and for its turn before it gives up: the launcher
#: marks a process that exits, so only a launcher that is gone leaves a wait unanswered.
DEFAULT_WAIT_S = 1800.0
POLL_S = 0.05


class TurnError(RuntimeError):
    """The protocol cannot go on: a malformed setting, or a wait that outlived its limit."""


@dataclass(frozen=True)
class Turn:
    """This process's place in its job: the ``index``-th (from 1) of ``count``."""

    folder: Path
    index: int
    count: int
    wait_s: float = DEFAULT_WAIT_S

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Turn | None:
        """The turn the environment names, or None for a process measuring on its own."""
        folder, turn = env.get(FOLDER_VAR, ""), env.get(TURN_VAR, "")
        if not folder and not turn:
            return None
        index, sep, count = turn.partition("/")
        if not (folder and sep and index.isdigit() and count.isdigit()):
            raise TurnError(f"{FOLDER_VAR}={folder!r} {TURN_VAR}={turn!r}: want a folder and K/N")
        if not 1 <= int(index) <= int(count):
            raise TurnError(f"{TURN_VAR}={turn!r}: K must be from 1 to N")
        raw = env.get(WAIT_VAR, "")
        try:
            wait_s = float(raw) if raw else DEFAULT_WAIT_S
        except ValueError:
            raise TurnError(f"{WAIT_VAR}={raw!r}: want seconds") from None
        return cls(Path(folder), int(index), int(count), wait_s)

    def _mark(self, name: str, text: str = "") -> None:
        mark(self.folder, name, self.index, text)

    def announce(self) -> None:
        self._mark("pid", str(os.getpid()))

    def built(self) -> None:
        self._mark("built")

    def over(self) -> None:
        self._mark("over")

    def job_pids(self) -> set[int]:
        """The pids of this job's measuring processes (this one's included)."""
        pids = {os.getpid()}
        for path in self.folder.glob("pid-*"):
            text = path.read_text(encoding="utf-8").strip()
            if text.isdigit():
                pids.add(int(text))
        return pids

    def pending(self) -> list[str]:
        """What this process still waits for (empty: its turn has come)."""
        missing = [
            f"built-{k}"
            for k in range(1, self.count + 1)
            if not (self.folder / f"built-{k}").exists()
        ]
        # Every earlier turn, not only the one before: a process that died early is marked
        # over at once, and must not let the next one start beside a live turn.
        missing += [
            f"over-{k}" for k in range(1, self.index) if not (self.folder / f"over-{k}").exists()
        ]
        return missing

    def wait(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> float:
        """Block until every process has built and every earlier one has had its turn; the
        seconds waited. Raises TurnError past ``wait_s``, naming what never came."""
        start = clock()
        while missing := self.pending():
            if clock() - start > self.wait_s:
                raise TurnError(
                    f"turn {self.index}/{self.count}: waited {self.wait_s:.0f} s for "
                    f"{', '.join(missing)} in {self.folder}"
                )
            sleep(POLL_S)
        return clock() - start


def mark(folder: Path, name: str, index: int, text: str = "") -> None:
    """Write a marker whole (rename), so a reader never sees half of a pid."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}-{index}.{os.getpid()}"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, folder / f"{name}-{index}")


@dataclass(frozen=True)
class Command:
    """One measuring process of a job: its arguments, environment and log file."""

    args: Sequence[str]
    env: Mapping[str, str]
    log: Path


def run_in_turns(commands: Sequence[Command], folder: Path) -> list[int]:
    """Start every command at once, each told its turn, and wait for all; their exit statuses
    in order. A command that exits is marked built and over, so that none waits on it."""
    folder.mkdir(parents=True, exist_ok=True)
    stale = [p.name for p in folder.iterdir()]
    if stale:
        raise TurnError(f"{folder} is not empty ({', '.join(sorted(stale)[:4])}): one folder a job")
    count = len(commands)
    running: dict[int, subprocess.Popen[bytes]] = {}
    for index, command in enumerate(commands, start=1):
        env = {**command.env, FOLDER_VAR: str(folder), TURN_VAR: f"{index}/{count}"}
        command.log.parent.mkdir(parents=True, exist_ok=True)
        with open(command.log, "ab") as log:
            running[index] = subprocess.Popen(
                list(command.args), env=env, stdout=log, stderr=subprocess.STDOUT
            )
    statuses: dict[int, int] = {}
    while running:
        for index, proc in list(running.items()):
            code = proc.poll()
            if code is None:
                continue
            statuses[index] = code if code >= 0 else 128 - code  # killed by a signal
            mark(folder, "built", index)
            mark(folder, "over", index)
            del running[index]
        if running:
            time.sleep(POLL_S)
    return [statuses[k] for k in range(1, count + 1)]


USAGE = """usage: python3 -m benchmarks.engine.turns FOLDER LOG COMMAND... [::: LOG COMMAND...]...

Runs the commands (each a measuring process, e.g. `bash benchmarks/run_gpu.sh ... --phase
measure`) at once as one job's turns, in the order given, each writing to its LOG; FOLDER (new
or empty) holds the protocol's markers. Prints each command's exit status; exits with the
first non-zero one (0 when all succeeded), or 2 for a malformed call.
"""


def parse_commands(argv: Sequence[str], env: Mapping[str, str]) -> tuple[Path, list[Command]]:
    if len(argv) < 3:
        raise TurnError("want FOLDER LOG COMMAND...")
    folder = Path(argv[0])
    groups: list[list[str]] = []
    current: list[str] = []
    for arg in argv[1:]:
        if arg == ":::":
            groups.append(current)
            current = []
        else:
            current.append(arg)
    groups.append(current)
    commands = []
    for group in groups:
        if len(group) < 2:
            raise TurnError(f"each command wants a LOG and its arguments, not {group!r}")
        commands.append(Command(group[1:], dict(env), Path(group[0])))
    return folder, commands


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0 if args else 2
    try:
        folder, commands = parse_commands(args, os.environ)
        statuses = run_in_turns(commands, folder)
    except (TurnError, OSError) as exc:
        print(f"turns: {exc}", file=sys.stderr)
        return 2
    for command, status in zip(commands, statuses, strict=True):
        print(f"turns: exit {status}: {' '.join(command.args)}", file=sys.stderr)
    return next((s for s in statuses if s != 0), 0)


if __name__ == "__main__":
    sys.exit(main())

"""What every verdict flow starts from (configuration, both commits' results, the verdict) and
the exit code it ends with.

The flows receive these already loaded instead of reading them, so the reading stays in one
place (the composition root, bot/commands/cli.py) and a flow is only its own steps. The demo has to
load after its fake GitHub is up, so it is handed a :data:`Loader` rather than a result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.config import Config
from bot.decide.types import Verdict
from bot.exitcodes import ExitCode
from bot.results.types import CommitResults
from bot.tell.machines import MachineReport


@dataclass(frozen=True)
class Selection:
    """Which results to compare, as given on the command line (hashes may be abbreviated)."""

    results: tuple[Path, ...]  # one folder per repeat
    base: str
    head: str
    machine: str | None
    config: Path | None
    #: Fusion captures of base and head (bot/fusion); None: look beside the results.
    captures: tuple[Path | None, Path | None] = (None, None)
    #: A calling repository's perfbot.toml (``pr --caller-config``), merged over ``config``
    #: under the trust rules of bot/config.py, and that repository (``pr --repo``).
    caller_config: Path | None = None
    caller_repo: str | None = None


@dataclass(frozen=True)
class Loaded:
    """What the flows get. ``machines`` is every machine found (each its own verdict, or
    not compared); ``base``, ``head``, ``verdict`` and the runs are those of the first machine
    compared, for a flow that only ever looks at one."""

    config: Config
    base: CommitResults  # the first run of each side: its provenance heads the comment
    head: CommitResults
    verdict: Verdict
    base_runs: tuple[CommitResults, ...] = ()
    head_runs: tuple[CommitResults, ...] = ()
    machines: tuple[MachineReport, ...] = ()

    def reports(self) -> tuple[MachineReport, ...]:
        """Every machine; a Loaded built with one verdict only is that one machine."""
        if self.machines:
            return self.machines
        runs = self.base_runs or (self.base,), self.head_runs or (self.head,)
        return (MachineReport(self.verdict.machine, self.verdict, *runs),)


#: Reads the configuration (from this environment) and the results, and decides the verdict.
Loader = Callable[[Selection, Mapping[str, str]], Loaded]


def verdict_code(v: Verdict) -> ExitCode:
    if v.broken:
        return ExitCode.BROKEN
    return ExitCode.REGRESSION if v.regressed else ExitCode.OK_NO_REGRESSION


def machine_code(m: MachineReport) -> ExitCode:
    """A machine's exit code: 0 when it does not gate (not compared, or a runner check failed)."""
    if m.verdict is None or not m.gates:
        return ExitCode.OK_NO_REGRESSION
    return verdict_code(m.verdict)


def report_code(got: Loaded) -> ExitCode:
    """The worst over the machines: BROKEN (5) over REGRESSION (1) over OK (0)."""
    order = (ExitCode.BROKEN, ExitCode.REGRESSION, ExitCode.OK_NO_REGRESSION)
    codes = {machine_code(m) for m in got.reports()}
    return next(c for c in order if c in codes)

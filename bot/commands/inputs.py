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


@dataclass(frozen=True)
class Selection:
    """Which results to compare, as given on the command line (hashes may be abbreviated)."""

    results: tuple[Path, ...]  # one folder per repeat
    base: str
    head: str
    machine: str | None
    config: Path | None


@dataclass(frozen=True)
class Loaded:
    config: Config
    base: CommitResults  # the first run of each side: its provenance heads the comment
    head: CommitResults
    verdict: Verdict
    base_runs: tuple[CommitResults, ...] = ()
    head_runs: tuple[CommitResults, ...] = ()


#: Reads the configuration (from this environment) and the results, and decides the verdict.
Loader = Callable[[Selection, Mapping[str, str]], Loaded]


def verdict_code(v: Verdict) -> ExitCode:
    if v.broken:
        return ExitCode.BROKEN
    return ExitCode.REGRESSION if v.regressed else ExitCode.OK_NO_REGRESSION

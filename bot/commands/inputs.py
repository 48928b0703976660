"""What every verdict flow starts from: the configuration and the run's one decision.

The flows receive these already loaded instead of reading them, so the reading stays in one
place (the composition root, bot/commands/cli.py) and a flow is only its own steps. The demo has to
load after its fake GitHub is up, so it is handed a :data:`Loader` rather than a result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.alert.decision import Decision
from bot.config import Config
from bot.decide.types import Verdict


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
    """What the flows get: the configuration and the run's one decision (bot/alert/decision.py:
    every fusion on every machine found, judged or why not), which every output renders."""

    config: Config
    decision: Decision

    @property
    def verdict(self) -> Verdict:
        """The first verdict measured (RMSNorm backward on the first machine, where measured),
        as decide() made it: its commits are the run's."""
        return next(v for u in self.decision.units if (v := u.measured.verdict) is not None)

    @property
    def head(self) -> str:
        """The head commit in full (the commit status is set on it)."""
        return self.verdict.head


#: Reads the configuration (from this environment) and the results, and decides the verdict.
Loader = Callable[[Selection, Mapping[str, str]], Loaded]

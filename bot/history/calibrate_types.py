"""The calibration's records (pure data): rates with their bounds, what was reported where
nothing changed, what was found where a real state changed (bot/history/calibrate.py)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.decide.calibrate import Proportion
from bot.history.method import Method
from bot.results.types import CommitResults

#: The stock runs a history holds in the out-of-sample A/A trials; the rest fit the model.
AA_SIZE = 8
#: Random histories per scenario.
HISTORIES = 200
#: Stock commits before a step: each tried HISTORIES // len(STEP_AT) times.
STEP_AT = (2, 4, 6, 8)


#: A history calibration's rate: hits over trials with their exact 95% bounds.
Rate = Proportion


@dataclass(frozen=True)
class Quiet:
    """A scenario where nothing changed: what was reported anyway."""

    name: str
    model: str
    commits: int
    confirmed: Rate  # histories with a confirmed change or break
    pending: Rate  # histories with a pending change
    series: Rate  # (history, series) pairs that are evidence of a confirmed change


@dataclass(frozen=True)
class Step:
    """A real slower state spliced in after ``k`` stock commits, for one guard."""

    name: str
    guard: str
    runs: int  # recorded runs of the slower state
    found: Rate  # confirmed at the right split and guard, min_after commits after it
    elsewhere: Rate  # histories with a confirmed change at another split (a false one)
    pending: Rate  # with the first slower commit only: pending at the right split
    sizes: tuple[float, float]  # the headline size's estimate, smallest and largest found


@dataclass(frozen=True)
class Pool:
    """The recorded runs the calibration draws from (bot/commands/history_calibrate.py)."""

    stock: tuple[CommitResults, ...]
    states: dict[str, tuple[CommitResults, ...]]  # name -> runs of one slower state
    unfused: tuple[CommitResults, ...] = ()
    nightlies: tuple[CommitResults, ...] = ()


@dataclass(frozen=True)
class Calibration:
    machine: str
    method: Method
    seed: int
    quiet: tuple[Quiet, ...]
    steps: tuple[Step, ...]
    stock: tuple[str, ...]  # commit prefixes
    states: dict[str, tuple[str, ...]]

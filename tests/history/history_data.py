"""Real histories for the tests: commits picked from the recorded H200 runs (data/README.md),
in a chosen order. Nothing here makes a number: every run is a recorded process, as measured.

The stock (A/A) runs are the twelve the noise model pools; the slower states are real runs of
really slower code (data/h200-states slow-thunder-2/-5 and slow-nvfuser-2/-5, their repeats in
data/h200-repeats, Thunder 0.2.5 whose executor is gone, the unfused backward of data/h200).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from paths import DATA, REPO_ROOT

from bot.commands.noise_file import read_noise_model
from bot.config import Config, VerdictSettings
from bot.decide.noise_model import NoiseModel
from bot.history.load import read_runs
from bot.history.series import History, history
from bot.results.types import CommitResults

FOLDERS = (
    DATA / "h200" / "results",
    DATA / "h200-states" / "results",
    *(DATA / "h200-repeats" / f"call-{n}" / "results" for n in (1, 2, 3, 4)),
    DATA / "h200-under-test" / "thunder-broken-pair" / "results",
)
#: The twelve A/A runs the shipped noise model pools, in their recorded (date) order.
STOCK = (
    "06f650c8", "da17d548", "6c840f30", "022fefdd", "324c493b", "016e16b1",
    "223f991a", "ae560ef0", "983be29d", "240f289b", "6033818a", "70e55a95",
)  # fmt: skip
THUNDER_2 = ("63e9dde7", "8b5a6516")  # slow-thunder-2: h200-states and h200-repeats call 3
NVFUSER_2 = ("3f0f630d", "c57e54a6")  # slow-nvfuser-2: h200-states and h200-repeats call 2
THUNDER_5, NVFUSER_5 = "8681cae2", "93486aaf"
UNFUSED = "9dc51696"  # data/h200: Thunder's backward unfused
BROKEN = ("f888795e", "0e8c6c35")  # Thunder 0.2.5: h200-states, and the under-test pair's head
MACHINE = "nvidia-h200"
#: Every fusion of the catalog (data/h200-catalog/README.md): two A/A calls and the PR pair
#: whose head (e0cdef8e) made Thunder's Bias+GELU backward 5% slower than its base (6a438ce9).
CATALOG = tuple(
    DATA / "h200-catalog" / folder for folder in ("aa", "aa2", "pair/rep-1", "pair/rep-2")
)


@functools.cache
def pool() -> tuple[CommitResults, ...]:
    """Every run of the folders above (repeat 2 of a pair included: history() leaves it out,
    it did not interleave the context baselines)."""
    return tuple(read_runs(list(FOLDERS))[MACHINE])


@functools.cache
def catalog_pool() -> tuple[CommitResults, ...]:
    """Every run of the catalog's folders (all 14 fusions' points in each)."""
    return tuple(read_runs(list(CATALOG))[MACHINE])


def real(order: Sequence[str]) -> History:
    """The history of these commits, in this order."""
    return history(MACHINE, pool(), list(order))


@functools.cache
def shipped() -> tuple[VerdictSettings, NoiseModel]:
    s = Config.from_env({}, REPO_ROOT / "perfbot.toml").verdict
    assert s.noise_model is not None
    return s, read_noise_model(s.noise_model)


def order_file(tmp: Path, commits: Sequence[str]) -> Path:
    path = tmp / "order.txt"
    path.write_text("# oldest first\n" + "\n".join(commits) + "\n", encoding="utf-8")
    return path


def folder_args() -> list[str]:
    return [f"--results={f}" for f in FOLDERS]

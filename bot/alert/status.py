"""The commit status of a PR's head (pure): what the check next to the PR says, in 140 characters.

GitHub's commit statuses know success, failure, error and pending; check runs know "neutral",
but one made by a workflow's token lands in whichever workflow suite GitHub picks for the
commit (bencherdev/bencher#536), so the bot keeps one commit status, ``perfbot`` (the bot's,
whatever fusion moved: the description names it), and says which of its four kinds it is in the
description's first word:

| kind | GitHub state | when | exit code |
| --- | --- | --- | --- |
| success | success | nothing moved, every machine judged | 0 |
| failure | failure | a guard regressed (1) or a point broke (5), not acknowledged | 1 or 5 |
| neutral | success | not judged or not settled (no noise model, runner check failed, unsure) | 0 |
| acknowledged | success | a regression a maintainer acknowledged, and it still holds | 0 |

A neutral status never blocks a merge: it says the bot cannot tell, and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.alert.ack import AckDecision
from bot.alert.model import Alert, moved_words, what_else
from bot.alert.owners import SUITE_CHANGED
from bot.fusion.names import unit_named
from bot.tell.markdown import plain_text, printable

StatusKind = Literal["success", "failure", "neutral", "acknowledged"]
CONTEXT = "perfbot"
MAX_DESCRIPTION = 140  # GitHub's limit for a status description


@dataclass(frozen=True)
class Status:
    kind: StatusKind
    description: str

    @property
    def state(self) -> Literal["success", "failure"]:
        return "failure" if self.kind == "failure" else "success"


def _fit(text: str) -> str:
    """One line of printable characters within GitHub's limit (bot/tell/markdown.py's plain
    rule: a NUL or a control character from anywhere never reaches GitHub)."""
    return printable(" ".join(text.split()), MAX_DESCRIPTION)


def _worst_words(alert: Alert) -> str:
    """ "Bias+GELU backward on nvidia-h200: Thunder's kernels 5.3% slower, ratio 1.02x →
    1.08x": the fusion and machine first, then what moved, then what else did."""
    pick = alert.worst
    assert pick is not None  # a regressed alert has a section
    extra = what_else(alert.sections, unit_named)
    moved = moved_words(pick.guard, pick.size)
    suite = f" ({SUITE_CHANGED})" if alert.upstream_none.startswith(SUITE_CHANGED) else ""
    return plain_text(f"{unit_named(pick.machine)}: {moved}{extra}{suite}", MAX_DESCRIPTION)


def commit_status(alert: Alert, ack: AckDecision, neutral: Sequence[str]) -> Status:
    """``neutral``: why this run cannot say "fine" (each a few words), empty when it can."""
    if alert.state == "regressed":
        if ack.holds:
            return Status("acknowledged", _fit(f"Acknowledged: {ack.words}; {_worst_words(alert)}"))
        word = "Broken" if alert.broken else "Regressed"
        return Status("failure", _fit(f"{word}: {_worst_words(alert)}"))
    if neutral:
        return Status("neutral", _fit(f"Neutral: {'; '.join(neutral)}"))
    return Status("success", "Success: no performance change against the merge-base")

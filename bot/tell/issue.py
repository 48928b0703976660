"""What the linked issues are made of (pure): the spec the filer keeps in line, an issue
title as plain text, and when a guard's section may close.

The PR flow files one alert per PR (bot/alert/, rendered by bot/tell/alert_issue.py); the
main-branch watch one alert per break (bot/history/issues.py). Both reach GitHub through
bot/github/issues.py with an :class:`IssueSpec`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.alert.model import is_back
from bot.decide.types import Guard, GuardKind, Verdict
from bot.tell.markdown import ZWJ

SyncState = Literal["regressed", "recovered", "hold"]
TITLE_WHAT: dict[GuardKind, str] = {
    "ratio": "Thunder slower relative to nvFuser",
    "nvfuser": "nvFuser's hand-written fusion slower",
    "thunder": "Thunder's kernels slower",
    "broken": "points that ran at base fail at head",
}


@dataclass(frozen=True)
class IssueSpec:
    """What the filer (bot/github/issues.py) keeps in line: one issue per repository for `key`.

    The primary repository (first) gets `title` and `body`; every other one the linked issue,
    `linked_title` and `linked_body` (the same as the primary's when not given). `sizes` is
    what the issue shows (bot/alert/model.py), kept in a hidden marker so that a later run can
    tell whether the alert got clearly worse than the issue said.
    """

    key: str  # stable dedupe key, e.g. "rmsnorm-bwd|pr|Lightning-AI/lightning-thunder#7"
    title: str
    body: str  # evidence markdown; the key marker and the cross-links are added by the filer
    repos: tuple[str, ...]  # primary first
    label: str = "perf-regression-bot"
    linked_title: str | None = None
    linked_body: str | None = None
    sizes: tuple[tuple[str, float], ...] = ()

    def title_for(self, repo: str) -> str:
        primary = repo == self.repos[0] or self.linked_title is None
        return self.title if primary else str(self.linked_title)

    def body_for(self, repo: str) -> str:
        primary = repo == self.repos[0] or self.linked_body is None
        return self.body if primary else str(self.linked_body)


def title_text(title: str) -> str:
    """Plain text (titles are not markdown), one line, within GitHub's 256 characters; the
    zero-width joiners that break references (bot/tell/markdown.py ``plain_text``, the rule
    every name in a title passes) are kept."""
    return "".join(c if c.isprintable() or c == ZWJ else " " for c in title)[:256]


def sync_state(g: Guard, v: Verdict) -> SyncState:
    """Open on alarm; close only on evidence that what the guard tracks is fine again
    (bot/alert/model.py ``is_back``); anything between holds."""
    if g.alarming:
        return "regressed"
    return "recovered" if is_back(g, v) else "hold"

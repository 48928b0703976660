"""What the linked issues are made of (pure): the spec the filer keeps in line, the guard issue
the main-branch watch files (bot/history/issues.py), which repository a guard's move points at,
when a guard's issue may close, and a guard's evidence table.

The PR flow files one alert per PR (bot/alert/, rendered by bot/tell/alert_issue.py); the
main-branch watch files one issue per confirmed change and guard. Both reach GitHub through
bot/github/issues.py with an :class:`IssueSpec`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot.decide.types import Guard, GuardKind, PointVerdict, Verdict
from bot.tell.rows import (
    BROKEN_HEADER,
    KERNEL_HEADER,
    MAIN_HEADER,
    MAX_MAIN_ROWS,
    broken_row,
    kernel_row,
    main_row,
    worst_first,
)

FAMILY = "rmsnorm-bwd"
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
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


@dataclass(frozen=True)
class GuardIssue:
    guard: GuardKind
    spec: IssueSpec
    state: SyncState
    note: str
    machine: str = ""


def _owns(repo: str, word: str) -> bool:
    return word in repo.lower()


def repos_for(
    g: Guard, repos: tuple[str, ...], v: Verdict | None = None, owner: str | None = None
) -> tuple[str, ...]:
    """Primary first: nvFuser's repository for its fusion's slowdown (or a broken nvFuser
    point), Thunder's for Thunder's kernels or broken Thunder points; for the ratio, which
    either side can move, the owner the fusion hints name (bot/fusion/attribute.py), else the
    side whose own kernel time moved, else the configured order."""
    word = None
    if g.kind == "ratio" and owner in ("thunder", "fuser"):
        return tuple(sorted(repos, key=lambda r: not _owns(r, owner)))
    thunder = v.guard("thunder") if v else None
    nvfuser = v.guard("nvfuser") if v else None
    if g.kind == "nvfuser" or (
        g.kind == "broken" and any(p.key.variant == "nvfuser" for p in g.points)
    ):
        word = "fuser"
    elif g.kind in ("thunder", "broken"):
        word = "thunder"
    elif g.kind == "ratio" and thunder and nvfuser and thunder.alarming != nvfuser.alarming:
        word = "thunder" if thunder.alarming else "fuser"
    if word is None:
        return repos
    return tuple(sorted(repos, key=lambda r: not _owns(r, word)))


def sync_state(g: Guard, v: Verdict) -> SyncState:
    """Open on alarm; close only on evidence that what the guard tracks is fine again: every
    one of its points measured at both sides, none regressed or unsure (even set aside as
    uncorroborated). A point that stopped running, or was not measured, is no such evidence."""
    if g.alarming:
        return "regressed"
    if g.state not in ("no change", "improved"):
        return "hold"
    if g.kind != "broken" and any(
        p.cmp is None or p.state in ("regressed", "unsure") for p in g.points
    ):
        return "hold"
    nv = v.guard("nvfuser")
    if g.kind == "ratio" and nv is not None and nv.state not in ("no change", "improved"):
        return "hold"  # the ratio may be back only because nvFuser's fusion got slower
    return "recovered"


def evidence(v: Verdict, g: Guard) -> list[str]:
    bad: list[PointVerdict] = worst_first(p for p in g.points if p.state in ("regressed", "broken"))
    if g.kind == "broken":
        return ["", BROKEN_HEADER, *(broken_row(p) for p in g.points[:MAX_MAIN_ROWS])]
    if g.kind == "ratio":
        return ["", MAIN_HEADER, *(main_row(p, v) for p in (bad or list(g.points))[:MAX_MAIN_ROWS])]
    return ["", KERNEL_HEADER, *(kernel_row(p, v) for p in (bad or list(g.points))[:MAX_MAIN_ROWS])]

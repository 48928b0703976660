"""What the linked issues of an alert do on this run (pure), given the PR's state and the policy.

The rules, as docs/ALERTS.md and the comment's footer state them:

- A PR closed without merging closes its alert's open issues as not planned, saying why.
- An acknowledgement that holds closes them as not planned, saying who acknowledged and why.
- A regression opens the alert when the policy says so: at merge (the default: while a PR is
  open its author has the comment and the status, and nobody in another organisation needs a
  notification about code that may still change), or at the first push that shows it
  (``[alerts] open_on = "push"``). Until then an issue that exists anyway is kept up to date.
- A recovery (every guard of every machine back) closes them as completed.
- Anything else (unsure, no data, a machine not judged) holds: nothing opens or closes.
- A regression that no side's build explains (the suite's own definition, or the stack, changed:
  bot/alert/owners.py) files nothing upstream: the comment and the status are the report.
- A closed issue stays closed, however it was closed: the bot never reopens one. When the same
  alert gets clearly worse than the issue last said, it gets one comment saying so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.alert.ack import AckDecision
from bot.alert.model import Alert, change_words

PrState = Literal["open", "merged", "closed"]
OpenOn = Literal["merge", "push"]
#: file: open when missing, update when open; update: update an open one, open none;
#: recover: close as completed; acknowledge, abandon: close as not planned; hold: nothing.
IssueAction = Literal["file", "update", "recover", "acknowledge", "abandon", "hold"]


@dataclass(frozen=True)
class IssuePlan:
    action: IssueAction
    note: str  # the comment a close posts ("" for file, update and hold)
    why: str  # one line for the PR comment and the dry run


def plan_issues(
    alert: Alert, pr_state: PrState, open_on: OpenOn, ack: AckDecision, pr_ref: str, head: str
) -> IssuePlan:
    if pr_state == "closed":
        return IssuePlan(
            "abandon",
            f"{pr_ref} was closed without merging: this slowdown never reached main. Closed as "
            "not planned by the bot.",
            "the PR was closed without merging: its open alert issues close as not planned",
        )
    if ack.holds:
        return IssuePlan(
            "acknowledge",
            f"{ack.words[0].upper()}{ack.words[1:]} on {pr_ref}. Closed as not planned by the "
            "bot; if this alert gets clearly worse, the bot says so here (it never reopens).",
            f"{ack.words}: no alert issue is opened, an open one closes",
        )
    if alert.state == "regressed" and not alert.repos:
        return IssuePlan(
            "hold", "", f"nothing is filed in either repository: {alert.upstream_none}"
        )
    if alert.state == "regressed":
        if pr_state == "merged" or open_on == "push":
            when = "at merge" if pr_state == "merged" else "at the first push that shows it"
            return IssuePlan("file", "", f"the alert is filed {when} (perfbot.toml [alerts])")
        return IssuePlan(
            "update",
            "",
            'the alert is filed when the PR merges (perfbot.toml [alerts] open_on = "merge"); '
            "acknowledge it first if the slowdown is intended",
        )
    if alert.state == "recovered":
        return IssuePlan(
            "recover",
            f"Back at {head[:12]} on {pr_ref}: every guard of every machine is within its "
            "threshold again. Closed as completed by the bot.",
            "every guard is back: open alert issues close as completed",
        )
    return IssuePlan("hold", "", "the evidence is not enough either way: nothing opens or closes")


def worse_note(
    worse: list[tuple[str, float | None, float]], factor: float, pr_ref: str, closed: bool
) -> str:
    """The one comment an alert issue gets when the alert gets clearly worse than it showed;
    a closed one says that it stays closed."""
    parts = [
        f"{name}: {'new' if old is None else change_words(name, old)} → {change_words(name, now)}"
        for name, old, now in worse
    ]
    stays = " The bot leaves this issue closed; reopen it if it matters." if closed else ""
    return (
        f"Clearly worse on {pr_ref} (more than {factor:g}x the excess this issue last showed): "
        f"{'; '.join(parts)}.{stays}"
    )


def same_repository(head_repo: str | None, repo: str) -> bool:
    """The PR's head is a branch of its own repository ("" where unknown: a dry run)."""
    return head_repo == "" or (head_repo is not None and head_repo.lower() == repo.lower())


def from_another_repository(head_repo: str | None) -> IssuePlan:
    """Issues in other organisations' trackers come only from heads this repository's own
    writers pushed: a fork's PR (even one a maintainer labelled to run) gets its comment and
    its status, and no alert issue is opened, updated or closed for it."""
    where = f"its head is in {head_repo}" if head_repo else "its head repository was deleted"
    return IssuePlan(
        "hold",
        "",
        f"no alert issue is filed for a PR from another repository ({where}); the comment and "
        "the status are the report",
    )

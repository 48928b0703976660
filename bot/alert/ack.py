"""A maintainer's acknowledgement of a regression (pure): who may give one, and whether it holds.

Some slowdowns are intended (pandas' issue says "if it was a necessary behaviour change, this may
have been expected"; CodSpeed lets a maintainer acknowledge one). A maintainer says so on the PR
with a comment whose first line is ``/perfbot ack <why>`` (``/perfbot unack`` takes it back), or
with the acknowledge label. It counts when its author is the repository's OWNER, a MEMBER of
its organisation or a COLLABORATOR (GitHub's author association; for a label, write access or
more), and not the PR's author alone unless the configuration allows it. The newest accepted
one decides.

An acknowledgement covers the numbers the bot showed when it was given (the sizes of the alert's
sections, bot/alert/model.py). It holds until the alert gets clearly worse: a section it did not
cover, or one whose excess grew by more than the configured factor. Then it lapses for good;
a new acknowledgement covers the new numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from bot.alert.model import Alert, change_words, clearly_worse

ALLOWED = ("OWNER", "MEMBER", "COLLABORATOR")
_COMMAND = re.compile(r"\A\s*/perfbot\s+(ack|acknowledge|unack)\b[ \t]*([^\n]*)", re.IGNORECASE)


@dataclass(frozen=True)
class AckCommand:
    """One acknowledgement (or its withdrawal) as GitHub shows it, oldest first."""

    source: str  # "comment 123" or "label event 456": what it is, uniquely
    by: str  # the login
    association: str  # OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, ...
    reason: str = ""
    withdraw: bool = False
    url: str | None = None


@dataclass(frozen=True)
class AckRecord:
    """What the bot remembers of the acknowledgement that decides (in its PR comment)."""

    source: str
    by: str
    reason: str
    sizes: Mapping[str, float] = field(default_factory=dict)
    lapsed: bool = False
    url: str | None = None


@dataclass(frozen=True)
class AckDecision:
    record: AckRecord | None  # to remember (None: there is no acknowledgement)
    holds: bool
    words: str  # one sentence for the comment, the issue and the status; "" without any
    refused: tuple[str, ...] = ()  # commands that did not count, each with why


#: No acknowledgement: what `report` (no PR) decides with.
NO_ACK = AckDecision(None, False, "")


def parse_command(body: str) -> tuple[bool, str] | None:
    """(withdraw, reason) when the comment's first line is a /perfbot ack command."""
    found = _COMMAND.match(body or "")
    if found is None:
        return None
    return found.group(1).lower() == "unack", found.group(2).strip()[:300]


def _refusal(c: AckCommand, pr_author: str, allow_author: bool) -> str | None:
    if c.association.upper() not in ALLOWED:
        return (
            f"@{c.by} ({c.association.lower() or 'no association'}): only an owner, member or "
            "collaborator can acknowledge"
        )
    if c.by.lower() == pr_author.lower() and not allow_author:
        return (
            f"@{c.by} is the PR's author: another maintainer acknowledges "
            "(perfbot.toml [acknowledge] allow_author)"
        )
    return None


def decide_ack(
    commands: Sequence[AckCommand],
    remembered: AckRecord | None,
    alert: Alert,
    *,
    shown: Mapping[str, float] | None,
    pr_author: str,
    allow_author: bool,
    factor: float,
) -> AckDecision:
    """``shown``: the sizes the bot's comment showed before this run (what an acknowledgement
    given since then covers); None when there was no comment."""
    accepted, refused = [], []
    for c in commands:
        why = _refusal(c, pr_author, allow_author)
        (refused.append(why) if why else accepted.append(c))
    latest = accepted[-1] if accepted else None
    if latest is None or latest.withdraw:
        return AckDecision(None, False, "", tuple(refused))
    if remembered is not None and remembered.source == latest.source:
        record = remembered
    else:
        sizes = dict(shown) if shown is not None else alert.sizes
        record = AckRecord(latest.source, latest.by, latest.reason, sizes, url=latest.url)
    who = f"@{record.by}"
    if record.lapsed:
        return AckDecision(
            record, False, f"the acknowledgement by {who} has lapsed", tuple(refused)
        )
    if alert.state != "regressed":
        return AckDecision(record, False, "", tuple(refused))
    worse = clearly_worse(record.sizes, alert.sizes, factor)
    if worse:
        parts = [
            f"{name} {'is new' if old is None else change_words(name, old) + ' then'}, "
            f"{change_words(name, now)} now"
            for name, old, now in worse
        ]
        words = (
            f"the acknowledgement by {who} no longer holds: {'; '.join(parts)} (clearly worse: "
            f"more than {factor:g}x the acknowledged excess)"
        )
        return AckDecision(replace(record, lapsed=True), False, words, tuple(refused))
    reason = f': "{record.reason}"' if record.reason else ""
    return AckDecision(record, True, f"acknowledged by {who}{reason}", tuple(refused))

"""What GitHub says about the PR itself: open, merged or closed; its author; the
acknowledgements on it (``/perfbot ack`` comments and the acknowledge label); and what the bot's
own sticky comment remembered (bot/tell/comment_state.py).

Everything comes from the API, never from an artifact or an event payload: whether the PR was
merged, who wrote a comment and their author association, who put a label on and their role.
A label counts as its author's association would: write, maintain or admin is a COLLABORATOR.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import github

from bot.alert.ack import AckCommand, parse_command
from bot.alert.plan import PrState
from bot.github.client import github_step
from bot.github.sticky import newest_own
from bot.github.trust_api import fetch_role
from bot.tell.comment_state import CommentState, read_state

WRITE_ROLES = ("admin", "maintain", "write")


@dataclass(frozen=True)
class PrFacts:
    state: PrState
    author: str
    acks: tuple[AckCommand, ...] = ()  # oldest first
    remembered: CommentState | None = None
    #: The repository the PR's head lives in, as GitHub says (None: a deleted fork); the
    #: PR's own repository when unknown (a dry run reads nothing).
    head_repo: str | None = ""


def _when(moment: datetime | None) -> datetime:
    if moment is None:
        return datetime.min.replace(tzinfo=timezone.utc)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def read_pr_facts(
    gh: github.Github, repo: str, pr: int, *, marker: str, bot_login: str, ack_label: str
) -> PrFacts:
    where = f"{repo}#{pr}"
    with github_step(f"read {where} (GET pulls/{pr})"):
        repository = gh.get_repo(repo)
        pull = repository.get_pull(pr)
        state: PrState = "merged" if pull.merged else ("open" if pull.state == "open" else "closed")
        author = pull.user.login if pull.user is not None else ""
        head_repo = pull.head.repo.full_name if pull.head.repo is not None else None
        issue = repository.get_issue(pr)
    found: list[tuple[datetime, int, AckCommand]] = []
    with github_step(f"list comments on {where}"):
        comments = list(issue.get_comments())
    for c in comments:
        command = parse_command(c.body or "")
        login = c.user.login if c.user is not None else ""
        if command is None or not login or login.lower() == bot_login.lower():
            continue
        withdraw, reason = command
        ack = AckCommand(
            f"comment {c.id}", login, c.author_association or "NONE", reason, withdraw, c.html_url
        )
        found.append((_when(c.created_at), c.id, ack))
    with github_step(f"read the events of {where} (GET issues/{pr}/events)"):
        events = [
            e
            for e in issue.get_events()
            if e.event in ("labeled", "unlabeled")
            and e.label is not None
            and e.label.name.lower() == ack_label.lower()
            and e.actor is not None
        ]
    roles: dict[str, str] = {}
    for e in events:
        login = e.actor.login
        if login not in roles:
            roles[login] = fetch_role(gh, repo, login)
        association = "COLLABORATOR" if roles[login] in WRITE_ROLES else roles[login].upper()
        reason = f"the {ack_label} label"
        ack = AckCommand(f"label event {e.id}", login, association, reason, e.event == "unlabeled")
        found.append((_when(e.created_at), e.id, ack))
    mine = newest_own(comments, marker, bot_login)
    remembered = read_state(mine.body or "") if mine is not None else None
    acks = tuple(a for _, _, a in sorted(found, key=lambda f: f[:2]))
    return PrFacts(state, author, acks, remembered, head_repo)

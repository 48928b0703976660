"""The I/O half of bot/github/trust.py: fetch the facts through PyGithub, nothing more.

Every answer is turned into the plain records trust.py checks, so the checks never see a
PyGithub object and the adapter decides nothing. Each call is a named `github_step`, so a
failure says which request broke (exit 4), which is a different thing from a run that failed a
check (exit 6).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

import github

from bot.github.client import github_step
from bot.github.trust import PullFacts, Review, RunFacts, role_of


class MalformedAnswer(Exception):
    """GitHub's answer lacks a field the checks need (or has it in another shape)."""


def _text(data: Mapping[str, Any], *keys: str) -> str | None:
    node: Any = data
    for key in keys:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, str) else None


def _required(data: Mapping[str, Any], *keys: str) -> str:
    value = _text(data, *keys)
    if value is None:
        raise MalformedAnswer(f"no {'.'.join(keys)} in GitHub's answer")
    return value


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise MalformedAnswer("a timestamp in GitHub's answer is not ISO 8601") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def run_facts(data: Mapping[str, Any]) -> RunFacts:
    run_id = data.get("id")
    if type(run_id) is not int:
        raise MalformedAnswer("no id in GitHub's answer")
    return RunFacts(
        id=run_id,
        repo=_required(data, "repository", "full_name"),
        path=_required(data, "path"),
        event=_required(data, "event"),
        status=_required(data, "status"),
        conclusion=_text(data, "conclusion"),
        head_sha=_required(data, "head_sha"),
        head_repo=_text(data, "head_repository", "full_name"),
        created_at=_moment(_required(data, "created_at")),
        triggering_actor=_text(data, "triggering_actor", "login"),
        run_attempt=_attempt(data),
        head_branch=_text(data, "head_branch"),
    )


def _attempt(data: Mapping[str, Any]) -> int:
    attempt = data.get("run_attempt", 1)
    if type(attempt) is not int or attempt < 1:
        raise MalformedAnswer("run_attempt in GitHub's answer is not a positive integer")
    return attempt


def pull_facts(data: Mapping[str, Any]) -> PullFacts:
    number = data.get("number")
    if type(number) is not int:
        raise MalformedAnswer("no number in GitHub's answer")
    return PullFacts(
        number,
        _required(data, "head", "sha"),
        _text(data, "head", "repo", "full_name"),
        _text(data, "head", "ref"),
    )


def fetch_run(gh: github.Github, repo: str, run_id: int) -> RunFacts:
    with github_step(f"read workflow run {run_id} (GET actions/runs/{run_id})"):
        return run_facts(gh.get_repo(repo).get_workflow_run(run_id).raw_data)


def fetch_pull(gh: github.Github, repo: str, number: int) -> PullFacts:
    with github_step(f"read pull request #{number} (GET pulls/{number})"):
        return pull_facts(gh.get_repo(repo).get_pull(number).raw_data)


def fetch_reviews(gh: github.Github, repo: str, number: int) -> list[Review]:
    """Every page: the approval that counts may be anywhere in a long review history."""
    with github_step(f"read the reviews of #{number} (GET pulls/{number}/reviews)"):
        found: list[Review] = []
        # Attributes, not raw_data: raw_data makes PyGithub fetch every listed review again.
        for r in gh.get_repo(repo).get_pull(number).get_reviews():
            moment = r.submitted_at
            if moment is not None and moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
            login = r.user.login if r.user is not None else ""
            found.append(Review(login or "", r.state or "", r.commit_id or "", moment))
        return found


def fetch_role(gh: github.Github, repo: str, login: str) -> str:
    """The login's role in `repo`; 404 (not a collaborator, or no such user) is no role."""
    path = f"/repos/{repo}/collaborators/{quote(login, safe='')}/permission"
    with github_step(f"read a collaborator's permission (GET {path})"):
        try:
            _, data = gh.requester.requestJsonAndCheck("GET", path)
        except github.UnknownObjectException:
            return "none"
    return role_of(data if isinstance(data, Mapping) else {})

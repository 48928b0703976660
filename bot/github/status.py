"""The commit status of a PR's head, as bot/alert/status.py decided it, posted with the comment's
token (``statuses: write`` in post-results.yml). A status the head already carries (the same
state and description, ours by context) is not posted again: a re-run writes nothing."""

from __future__ import annotations

import github

from bot.alert.status import CONTEXT, Status
from bot.github.client import github_step


def post_status(
    gh: github.Github, repo: str, sha: str, status: Status, target_url: str | None
) -> bool:
    """True when a status was posted, False when the head carries it already."""
    commit = gh.get_repo(repo).get_commit(sha)
    with github_step(f"read the statuses of {sha[:12]}"):
        latest = next((s for s in commit.get_statuses() if s.context == CONTEXT), None)
    if latest is not None and (latest.state, latest.description) == (
        status.state,
        status.description,
    ):
        return False
    with github_step(f"set the {CONTEXT} status on {sha[:12]}"):
        if target_url:
            commit.create_status(
                status.state, target_url, description=status.description, context=CONTEXT
            )
        else:
            commit.create_status(status.state, description=status.description, context=CONTEXT)
    return True

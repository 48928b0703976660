"""The fake's pull-request side: merging and closing, labels put on a PR, reviews (the fork
gate's approval of an exact commit), who an author is to a repository (GitHub's author
association), and the commit statuses a PR's head carries (their endpoints:
fake/pulls_routes.py). Kept beside `State`, as fake/actions.py is.

A comment's and an issue's ``author_association`` come from here: an explicit one when a test
set it, else OWNER for the repository's owner, COLLABORATOR for a role of write or more
(fake/actions.py), else NONE.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.github.fake.state import State

STATES = ("error", "failure", "pending", "success")
REVIEW_STATES = ("APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING")
ASSOCIATIONS = ("OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "NONE")


@dataclass
class CommitStatus:
    id: int
    repo: str
    sha: str
    state: str
    description: str | None
    context: str
    target_url: str | None
    creator: str
    created_at: datetime


@dataclass
class Review:
    id: int
    repo: str
    number: int
    reviewer: str
    state: str
    commit_id: str
    submitted_at: datetime


@dataclass
class Pulls:
    """Statuses and associations; every method takes the state's lock."""

    state: State
    statuses: list[CommitStatus] = field(default_factory=list)
    associations: dict[tuple[str, str], str] = field(default_factory=dict)  # lower case keys
    reviews: list[Review] = field(default_factory=list)
    #: (repo, ancestor, descendant), lower-case repo: what compare's merge base says (the
    #: fake keeps no git, so a test states which base a head descends from).
    ancestry: set[tuple[str, str, str]] = field(default_factory=set)

    def set_association(self, repo: str, login: str, association: str) -> None:
        if association not in ASSOCIATIONS:
            raise ValueError(f"unknown author association {association!r}")
        with self.state.lock:
            self.state.add_user(login)
            self.associations[repo.lower(), login.lower()] = association

    def association_of(self, repo: str, login: str) -> str:
        with self.state.lock:
            explicit = self.associations.get((repo.lower(), login.lower()))
            if explicit:
                return explicit
            if login.lower() == repo.split("/", 1)[0].lower():
                return "OWNER"
            role = self.state.actions.roles.get((repo.lower(), login.lower()))
            return "COLLABORATOR" if role in ("admin", "maintain", "write") else "NONE"

    def finish(self, repo: str, number: int, *, merged: bool, by: str) -> None:
        """Merge or close (without merging) PR `number`, as `by` did."""
        with self.state.lock:
            issue = self.state.repo(repo).issues[number]
            if issue.pull is None:
                raise ValueError(f"{repo}#{number} is not a pull request")
            issue.state, issue.state_reason = "closed", None
            issue.closed_at = issue.updated_at = self.state.now()
            issue.pull.merged = merged
            self.state.actions.add_event(repo, number, "merged" if merged else "closed", actor=by)

    def label(self, repo: str, number: int, label: str, *, by: str, remove: bool = False) -> None:
        """Put `label` on issue or PR `number` (or take it off), with its issue event."""
        with self.state.lock:
            issue = self.state.repo(repo).issues[number]
            names = [n for n in issue.labels if n.lower() != label.lower()]
            issue.labels = names if remove else [*names, self.state.add_label(repo, label).name]
            self.state.actions.add_event(
                repo, number, "unlabeled" if remove else "labeled", actor=by, label=label
            )

    def review(
        self,
        repo: str,
        number: int,
        *,
        by: str,
        state: str = "APPROVED",
        commit_id: str | None = None,
        submitted_at: datetime | None = None,
    ) -> Review:
        """A review of PR `number` by `by` on `commit_id` (default: the PR's head now)."""
        if state not in REVIEW_STATES:
            raise ValueError(f"unknown review state {state!r}")
        with self.state.lock:
            issue = self.state.repo(repo).issues[number]
            if issue.pull is None:
                raise ValueError(f"{repo}#{number} is not a pull request")
            self.state.add_user(by)
            item = Review(
                self.state.new_id(),
                issue.repo,
                number,
                by,
                state,
                commit_id or issue.pull.head_sha,
                submitted_at or self.state.now(),
            )
            self.reviews.append(item)
            return item

    def descend(self, repo: str, base: str, head: str) -> None:
        """`head` descends from `base`: compare base...head names `base` as the merge base."""
        with self.state.lock:
            self.ancestry.add((repo.lower(), base, head))

    def merge_base(self, repo: str, base: str, head: str) -> str:
        """`base` when the test said `head` descends from it (or they are equal), else a
        commit of neither (unrelated histories)."""
        with self.state.lock:
            known = base == head or (repo.lower(), base, head) in self.ancestry
            return base if known else "0" * 40

    def dismiss(self, review: Review) -> None:
        """A maintainer dismissed `review`: GitHub then lists it as DISMISSED."""
        with self.state.lock:
            review.state = "DISMISSED"

    def reviews_of(self, repo: str, number: int) -> list[Review]:
        """In the order GitHub lists them: oldest first."""
        with self.state.lock:
            found = [
                r for r in self.reviews if r.repo.lower() == repo.lower() and r.number == number
            ]
            return sorted(found, key=lambda r: (r.submitted_at, r.id))

    def of(self, repo: str, sha: str) -> list[CommitStatus]:
        with self.state.lock:
            found = [s for s in self.statuses if s.repo.lower() == repo.lower() and s.sha == sha]
            return sorted(found, key=lambda s: s.id, reverse=True)

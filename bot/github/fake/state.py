"""In-memory state of the fake GitHub.

One `State` is the single source of truth that every request of the fake reads and mutates,
and that tests inspect directly. All access goes through `State.lock` because the HTTP server
answers each connection on its own thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from bot.github.fake.actions import Actions
from bot.github.fake.commits import Commits
from bot.github.fake.pulls import Pulls

#: Issue/comment timestamps come from a logical clock so that test runs are reproducible.
EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
RATE_LIMIT = 5000


@dataclass
class User:
    login: str
    id: int
    type: str = "User"  # "User", "Bot" or "Organization"


@dataclass
class Token:
    """An access token: who it authenticates as and what it may touch.

    `repos` (lower-case full names) models a repository-scoped token such as Actions'
    GITHUB_TOKEN or an App installation token; None means every repository. `read_only`
    models the token of a fork pull request. `can_read_user` False models App and
    GITHUB_TOKEN tokens, for which GitHub answers GET /user with 403.
    """

    login: str
    repos: frozenset[str] | None = None
    read_only: bool = False
    can_read_user: bool = True


@dataclass
class RateLimit:
    remaining: int = RATE_LIMIT
    reset: int = field(default_factory=lambda: int(time.time()) + 3600)


@dataclass
class Label:
    id: int
    name: str
    color: str = "ededed"
    description: str | None = None


@dataclass
class Comment:
    id: int
    repo: str
    issue_number: int
    body: str
    author: str
    created_at: datetime
    updated_at: datetime


@dataclass
class PullInfo:
    head_ref: str
    head_sha: str
    base_ref: str
    head_repo: str
    merged: bool = False


@dataclass
class Issue:
    id: int
    number: int
    repo: str
    title: str
    body: str | None
    author: str
    labels: list[str]
    created_at: datetime
    updated_at: datetime
    state: str = "open"
    state_reason: str | None = None
    closed_at: datetime | None = None
    pull: PullInfo | None = None
    #: Search sees an issue only after `State.index_search()`: GitHub's index lags.
    indexed: bool = False
    #: Every title it had before its present one (GitHub's timeline keeps renames too).
    renamed_from: list[str] = field(default_factory=list)


@dataclass
class Repo:
    id: int
    full_name: str
    issues: dict[int, Issue] = field(default_factory=dict)
    labels: dict[str, Label] = field(default_factory=dict)  # keyed by lower-case name
    #: Files of a branch, keyed (branch, path): what GET contents/{path}?ref= answers.
    files: dict[tuple[str, str], bytes] = field(default_factory=dict)

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/", 1)[1]


@dataclass
class RequestRecord:
    method: str
    path: str
    query: dict[str, list[str]]
    login: str | None = None
    status: int | None = None


class State:
    """Repositories, issues, comments, labels, users, tokens and the request log."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.arrived = threading.Condition(self.lock)
        self.users: dict[str, User] = {}  # keyed by lower-case login
        self.tokens: dict[str, Token] = {}
        self.rate: dict[str, RateLimit] = {}  # keyed by lower-case login
        self.repos: dict[str, Repo] = {}  # keyed by lower-case full name
        self.comments: dict[int, Comment] = {}
        self.requests: list[RequestRecord] = []
        #: Workflow runs, artifacts, issue events and collaborator roles (fake/actions.py).
        self.actions = Actions(self)
        #: Merges, PR labels, author associations and commit statuses (fake/pulls.py).
        self.pulls = Pulls(self)
        #: Each repository's main line of commits, as a test said (fake/commits.py).
        self.commits = Commits(self)
        self._next_id = 1000
        self._ticks = 0

    # -- identifiers and time -------------------------------------------------------------
    def new_id(self) -> int:
        with self.lock:
            self._next_id += 1
            return self._next_id

    def now(self) -> datetime:
        """Advance the logical clock by one second per event (deterministic ordering)."""
        with self.lock:
            self._ticks += 1
            return EPOCH + timedelta(seconds=self._ticks)

    # -- seeding --------------------------------------------------------------------------
    def add_user(
        self,
        login: str,
        *,
        token: str | None = None,
        type: str = "User",
        repos: Iterable[str] | None = None,
        read_only: bool = False,
        can_read_user: bool = True,
    ) -> User:
        """Create a user (or bot) and, when `token` is given, a token that authenticates as it."""
        with self.lock:
            user = self.users.get(login.lower()) or User(login, self.new_id(), type)
            self.users[login.lower()] = user
            self.rate.setdefault(login.lower(), RateLimit())
            if token is not None:
                self.add_token(
                    token, login, repos=repos, read_only=read_only, can_read_user=can_read_user
                )
            return user

    def add_token(
        self,
        token: str,
        login: str,
        *,
        repos: Iterable[str] | None = None,
        read_only: bool = False,
        can_read_user: bool = True,
    ) -> Token:
        with self.lock:
            if login.lower() not in self.users:
                raise KeyError(f"unknown user {login!r}: add_user first")
            scope = None if repos is None else frozenset(r.lower() for r in repos)
            tok = Token(login, scope, read_only, can_read_user)
            self.tokens[token] = tok
            return tok

    def add_repo(self, full_name: str) -> Repo:
        with self.lock:
            owner = full_name.split("/", 1)[0]
            if owner.lower() not in self.users:
                self.add_user(owner, type="Organization")
            repo = self.repos.get(full_name.lower()) or Repo(self.new_id(), full_name)
            self.repos[full_name.lower()] = repo
            return repo

    def repo(self, full_name: str) -> Repo:
        with self.lock:
            return self.repos[full_name.lower()]

    def put_file(self, repo: str, path: str, data: bytes, *, branch: str = "main") -> None:
        """A file of `repo`'s `branch` (the default branch is "main")."""
        with self.lock:
            self.repo(repo).files[(branch, path)] = data

    def add_label(
        self, repo: str, name: str, color: str = "ededed", description: str = ""
    ) -> Label:
        with self.lock:
            labels = self.repo(repo).labels
            label = labels.get(name.lower()) or Label(self.new_id(), name, color, description)
            labels[name.lower()] = label
            return label

    def add_issue(
        self,
        repo: str,
        title: str,
        *,
        author: str,
        body: str | None = None,
        labels: Iterable[str] = (),
        pull: PullInfo | None = None,
    ) -> Issue:
        with self.lock:
            r = self.repo(repo)
            names = [self.add_label(repo, name).name for name in labels]
            now = self.now()
            number = len(r.issues) + 1
            issue = Issue(
                self.new_id(), number, r.full_name, title, body, author, names, now, now, pull=pull
            )
            r.issues[number] = issue
            return issue

    def add_pull_request(
        self,
        repo: str,
        title: str,
        *,
        author: str,
        head_ref: str,
        head_sha: str = "0" * 40,
        base_ref: str = "main",
        head_repo: str | None = None,
        body: str | None = None,
    ) -> Issue:
        """A pull request is an issue with pull request details, as on GitHub."""
        pull = PullInfo(head_ref, head_sha, base_ref, head_repo or repo)
        return self.add_issue(repo, title, author=author, body=body, pull=pull)

    def add_comment(self, repo: str, number: int, body: str, *, author: str) -> Comment:
        with self.lock:
            issue = self.repo(repo).issues[number]
            now = self.now()
            comment = Comment(self.new_id(), issue.repo, number, body, author, now, now)
            self.comments[comment.id] = comment
            issue.updated_at = now
            return comment

    # -- queries used by tests and handlers -----------------------------------------------
    def issues(self, repo: str) -> list[Issue]:
        with self.lock:
            return list(self.repo(repo).issues.values())

    def comments_on(self, repo: str, number: int) -> list[Comment]:
        with self.lock:
            return sorted(
                (
                    c
                    for c in self.comments.values()
                    if c.repo.lower() == repo.lower() and c.issue_number == number
                ),
                key=lambda c: c.id,
            )

    def index_search(self) -> None:
        """Let search see every issue that exists now (GitHub's index catches up later)."""
        with self.lock:
            for repo in self.repos.values():
                for issue in repo.issues.values():
                    issue.indexed = True

    def set_rate_limit(self, login: str, *, remaining: int, reset_in: float = 3600.0) -> None:
        with self.lock:
            self.rate[login.lower()] = RateLimit(remaining, int(time.time() + reset_in))

    def log(self, record: RequestRecord) -> None:
        with self.lock:
            self.requests.append(record)
            self.arrived.notify_all()

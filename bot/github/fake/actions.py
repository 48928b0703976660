"""The fake's Actions side: workflow runs, their artifacts, issue events, collaborator roles.

Enough of GitHub to let the poster's trust checks (bot/github/trust.py) be tested against
forged runs over real HTTP: a run records the fields GitHub reports (`path`, `event`, the head
repository and commit, `created_at`, the triggering actor), an artifact holds a real zip, and
label events and roles say who vouched for a fork's code and when. Kept beside `State` (which
holds one `Actions` as `state.actions`) so that state.py stays about issues.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.github.fake.state import State

ROLES = ("admin", "maintain", "write", "triage", "read")


@dataclass
class WorkflowRun:
    id: int
    repo: str
    name: str
    path: str
    event: str
    head_sha: str
    head_repo: str | None
    head_branch: str
    created_at: datetime
    triggering_actor: str
    status: str = "completed"
    conclusion: str | None = "success"
    run_attempt: int = 1


@dataclass
class Artifact:
    id: int
    run_id: int
    repo: str
    name: str
    payload: bytes
    #: What the listing says; None: the payload's real size. A forged run cannot lie here on
    #: GitHub, but the poster must not depend on it being right either.
    size_in_bytes: int | None = None
    expired: bool = False
    #: A secret part of the blob URL, as GitHub's signed download URLs carry one.
    blob_key: str = ""


@dataclass
class IssueEvent:
    id: int
    repo: str
    issue_number: int
    event: str
    actor: str
    created_at: datetime
    label: str | None = None


@dataclass
class Actions:
    """Runs, artifacts, events and roles; every method takes the state's lock."""

    state: State
    runs: dict[int, WorkflowRun] = field(default_factory=dict)
    artifacts: dict[int, Artifact] = field(default_factory=dict)
    events: list[IssueEvent] = field(default_factory=list)
    roles: dict[tuple[str, str], str] = field(default_factory=dict)  # (repo, login), lower case

    def add_run(
        self,
        repo: str,
        *,
        head_sha: str,
        path: str = ".github/workflows/bench-pr.yml",
        name: str = "bench-pr",
        event: str = "pull_request",
        head_repo: str | None = "",
        head_branch: str = "feature",
        created_at: datetime | None = None,
        triggering_actor: str = "alice",
        conclusion: str | None = "success",
        status: str = "completed",
    ) -> WorkflowRun:
        """A finished run of `repo`; `head_repo` "" means `repo` itself, None a deleted fork."""
        with self.state.lock:
            self.state.repo(repo)
            run = WorkflowRun(
                self.state.new_id(),
                self.state.repo(repo).full_name,
                name,
                path,
                event,
                head_sha,
                repo if head_repo == "" else head_repo,
                head_branch,
                created_at or self.state.now(),
                triggering_actor,
                status,
                conclusion,
            )
            self.runs[run.id] = run
            return run

    def add_artifact(
        self,
        run: WorkflowRun,
        name: str,
        payload: bytes,
        *,
        size_in_bytes: int | None = None,
        expired: bool = False,
    ) -> Artifact:
        """An artifact of `run` whose download is `payload` (a zip, normally: see `zip_of`)."""
        with self.state.lock:
            aid = self.state.new_id()
            artifact = Artifact(
                aid, run.id, run.repo, name, payload, size_in_bytes, expired, f"k{aid * 7919}"
            )
            self.artifacts[aid] = artifact
            return artifact

    def add_event(
        self,
        repo: str,
        number: int,
        event: str,
        *,
        actor: str,
        label: str | None = None,
        created_at: datetime | None = None,
    ) -> IssueEvent:
        """An issue event (`labeled`, `unlabeled`, `closed`, ...) on issue or PR `number`."""
        with self.state.lock:
            issue = self.state.repo(repo).issues[number]
            self.state.add_user(actor)
            moment = created_at or self.state.now()
            item = IssueEvent(self.state.new_id(), issue.repo, number, event, actor, moment, label)
            self.events.append(item)
            if label is not None:
                self.state.add_label(repo, label)
            return item

    def set_role(self, repo: str, login: str, role: str | None) -> None:
        """`login`'s role in `repo` (admin, maintain, write, triage, read); None removes it."""
        if role is not None and role not in ROLES:
            raise ValueError(f"unknown role {role!r}")
        with self.state.lock:
            self.state.add_user(login)
            key = (repo.lower(), login.lower())
            if role is None:
                self.roles.pop(key, None)
            else:
                self.roles[key] = role

    def events_on(self, repo: str, number: int) -> list[IssueEvent]:
        with self.state.lock:
            return sorted(
                (
                    e
                    for e in self.events
                    if e.repo.lower() == repo.lower() and e.issue_number == number
                ),
                key=lambda e: (e.created_at, e.id),
            )


def zip_of(files: Mapping[str, bytes], *, symlinks: Mapping[str, str] | None = None) -> bytes:
    """A zip as actions/upload-artifact makes one; `symlinks` adds entries whose external
    attributes mark them as symbolic links (name -> target), which an extractor must refuse."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.create_system = 3  # Unix, so external_attr carries the mode
            info.external_attr = 0o120777 << 16  # S_IFLNK | 0777
            archive.writestr(info, target)
    return buffer.getvalue()

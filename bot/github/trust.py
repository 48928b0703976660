"""May the privileged poster believe a bench run? Pure checks over what the API returned.

The poster runs on `workflow_run`, which fires for every completed run *named* bench-pr: a fork
PR can add its own workflow of that name (on a hosted runner, no label needed) and upload a
forged artifact. So nothing the event or the artifact says is taken on trust. Each check here
compares the poster's claims with GitHub's own answers (the run, the PR, the PR's reviews, the
reviewers' permissions), and each says in one line what it found. No I/O: the adapter
(bot/github/trust_api.py) fetches the facts, so every case is testable on plain data.

Two stages. Before anything of the run is downloaded, the run alone (no PR yet: a fork run's
`pull_requests` is empty, so its PR number comes from the artifact): the checks of `check_run`
and its head. After the artifact's metadata named a PR, everything again with that PR.

Why each check:
- the run's `path` (the workflow file), not its `name`: anyone can pick a name;
- the run's repository: a run of another repository has nothing to say about ours;
- event `pull_request` and conclusion `success`: only a finished bench has results to post;
- the attempt the event named: a re-run since then may have uploaded other artifacts;
- the run's head commit and head repository against the PR's: the PR number must be confirmed;
- the run's head branch against the PR's: a run speaks for its own PR only. GitHub's record of
  the run names its head repository and head branch, GitHub's record of the PR its head
  repository and head ref: the artifact's number is a claim, and it holds only when those
  agree. A head commit alone does not tell PRs apart: a branch of this repository pushed to
  another PR's exact head commit would otherwise speak for that PR (its comment, its status,
  its alert issues). The PR keeps its head ref when the branch is deleted on merge;
- the fork gate: a fork's head is trusted only when a user with write access approved that
  exact commit (a review whose `commit_id` is the run's head, still standing: not dismissed,
  not followed by a request for changes from the same reviewer). An approval vouches for the
  code a maintainer read; a label vouches only for a moment, and a fork's push after it,
  followed by any maintainer action that fires a `pull_request` event, would run the pushed
  code's own workflow with a maintainer as its trigger.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from bot.tell.log import quoted

#: Repository roles that may vouch for a fork's code (GitHub's `permission` says "write" for
#: maintain and "read" for triage; `role_name` tells them apart: both are read here).
WRITERS = frozenset({"admin", "maintain", "write"})


@dataclass(frozen=True)
class Claim:
    """What the poster was told: by its own inputs (repo, workflow path) and the event or the
    artifact (pr, head_sha, attempt), which the PR's code may have written. `pr` None: the run
    alone is checked, before its artifact is downloaded; `attempt` None: any attempt."""

    repo: str
    run_id: int
    workflow_path: str
    pr: int | None
    head_sha: str
    attempt: int | None = None


@dataclass(frozen=True)
class RunFacts:
    """GET /repos/{repo}/actions/runs/{id}, the fields the checks read."""

    id: int
    repo: str
    path: str
    event: str
    status: str
    conclusion: str | None
    head_sha: str
    head_repo: str | None  # None: the fork was deleted
    created_at: datetime
    triggering_actor: str | None
    run_attempt: int = 1
    head_branch: str | None = None


@dataclass(frozen=True)
class PullFacts:
    """GET /repos/{repo}/pulls/{n}: the PR's head right now."""

    number: int
    head_sha: str
    head_repo: str | None
    head_ref: str | None = None


@dataclass(frozen=True)
class Review:
    """One review of GET /repos/{repo}/pulls/{n}/reviews: who, what they said (APPROVED,
    CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING) and on which commit."""

    reviewer: str
    state: str
    commit_id: str
    submitted_at: datetime | None


@dataclass(frozen=True)
class Check:
    """One line of the verdict: `what` was checked and `found` (text the bot wrote, never a raw
    value from the API or the artifact: values are passed through `shown` first)."""

    name: str
    ok: bool
    found: str


def shown(value: object) -> str:
    """A value read from outside, as an ASCII literal (bot/tell/log.py): no control character,
    no workflow command, never mistaken for text the bot wrote."""
    return "null" if value is None else quoted(value)


def check_run(claim: Claim, run: RunFacts) -> list[Check]:
    """The run itself: our repository, the expected workflow file, a successful PR run."""
    return [
        Check("run id", run.id == claim.run_id, f"run {run.id}, expected {claim.run_id}"),
        Check(
            "run repository",
            run.repo.lower() == claim.repo.lower(),
            f"run of {shown(run.repo)}, expected {shown(claim.repo)}",
        ),
        Check(
            "workflow file",
            run.path == claim.workflow_path,
            f"run of {shown(run.path)}, expected {shown(claim.workflow_path)}",
        ),
        Check("event", run.event == "pull_request", f"event {shown(run.event)}"),
        Check(
            "conclusion",
            run.status == "completed" and run.conclusion == "success",
            f"status {shown(run.status)}, conclusion {shown(run.conclusion)}",
        ),
        Check(
            "attempt",
            claim.attempt is None or run.run_attempt == claim.attempt,
            f"attempt {run.run_attempt}"
            + ("" if claim.attempt is None else f", the event named attempt {claim.attempt}"),
        ),
    ]


def check_run_head(claim: Claim, run: RunFacts) -> list[Check]:
    """Before the PR is known: the run measured the head the event named, in a repository
    that still exists."""
    return [
        Check(
            "head commit",
            run.head_sha == claim.head_sha,
            f"run {shown(run.head_sha)}, expected {shown(claim.head_sha)}",
        ),
        Check(
            "head repository",
            run.head_repo is not None,
            f"run {shown(run.head_repo)}"
            + (" (deleted: nobody can vouch for it)" if run.head_repo is None else ""),
        ),
    ]


def check_pull(claim: Claim, run: RunFacts, pull: PullFacts) -> list[Check]:
    """The PR the artifact names has the run's head (commit, repository and branch) as its
    head."""
    same_repo = (
        run.head_repo is not None
        and pull.head_repo is not None
        and run.head_repo.lower() == pull.head_repo.lower()
    )
    return [
        Check(
            "head commit",
            run.head_sha == pull.head_sha == claim.head_sha,
            f"run {shown(run.head_sha)}, PR #{pull.number} {shown(pull.head_sha)}, "
            f"artifact {shown(claim.head_sha)}",
        ),
        Check(
            "head repository",
            same_repo,
            f"run {shown(run.head_repo)}, PR #{pull.number} {shown(pull.head_repo)}",
        ),
        Check(
            "head branch",
            run.head_branch is not None and run.head_branch == pull.head_ref,
            f"run of {shown(run.head_branch)}, PR #{pull.number}'s head {shown(pull.head_ref)}"
            + ("" if run.head_branch == pull.head_ref else ": a run speaks for its own PR only"),
        ),
    ]


def standing_reviews(reviews: Sequence[Review]) -> dict[str, Review]:
    """Each reviewer's review that stands, as GitHub counts it: the latest that approved,
    requested changes or was dismissed (a plain comment or a pending draft changes nothing)."""
    standing: dict[str, Review] = {}
    for review in sorted(
        reviews, key=lambda r: r.submitted_at or datetime.min.replace(tzinfo=timezone.utc)
    ):
        if review.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED") and review.reviewer:
            standing[review.reviewer.lower()] = review
    return standing


def check_gate(
    claim: Claim, run: RunFacts, reviews: Sequence[Review], permissions: Mapping[str, str]
) -> Check:
    """A fork's head is trusted only when someone with write access approved that exact commit
    and the approval still stands. `permissions` maps a login (lower case) to its role in
    claim.repo; a login missing from it has none."""
    if run.head_repo is not None and run.head_repo.lower() == claim.repo.lower():
        return Check("fork gate", True, "head is a branch of this repository: no approval needed")
    if run.head_repo is None:
        return Check("fork gate", False, "the head repository was deleted: nobody can vouch for it")
    standing = standing_reviews(reviews).values()
    approvals = [r for r in standing if r.state == "APPROVED" and r.commit_id == run.head_sha]
    writers = [r for r in approvals if permissions.get(r.reviewer.lower(), "none") in WRITERS]
    if writers:
        names = ", ".join(
            f"{shown(r.reviewer)} ({permissions[r.reviewer.lower()]})" for r in writers
        )
        return Check("fork gate", True, f"head {run.head_sha[:12]} approved by {names}")
    if approvals:
        who = approvals[0].reviewer
        role = permissions.get(who.lower(), "none")
        return Check(
            "fork gate",
            False,
            f"head {run.head_sha[:12]} approved only by {shown(who)}, whose role is {shown(role)}",
        )
    older = [r for r in standing if r.state == "APPROVED"]
    if older:
        return Check(
            "fork gate",
            False,
            f"approved at {shown(older[0].commit_id)}, not at the run's head "
            f"{run.head_sha[:12]}: a push after an approval is not approved",
        )
    return Check(
        "fork gate",
        False,
        f"fork head {run.head_sha[:12]} and no standing approval of it by a maintainer",
    )


def gate_logins(claim: Claim, run: RunFacts, reviews: Sequence[Review]) -> list[str]:
    """Whose permission check_gate may need: the adapter asks GitHub for these alone."""
    if run.head_repo is None or run.head_repo.lower() == claim.repo.lower():
        return []
    logins = {
        r.reviewer
        for r in standing_reviews(reviews).values()
        if r.state == "APPROVED" and r.commit_id == run.head_sha
    }
    return sorted(logins, key=str.lower)


def verify(
    claim: Claim,
    run: RunFacts,
    pull: PullFacts | None,
    reviews: Sequence[Review],
    permissions: Mapping[str, str],
) -> list[Check]:
    """Every check, in the order a reader wants them; the run is trusted iff all are ok.
    Without a PR (`pull` None, the first stage) the run and its head alone."""
    if pull is None:
        return [*check_run(claim, run), *check_run_head(claim, run)]
    return [
        *check_run(claim, run),
        *check_pull(claim, run, pull),
        check_gate(claim, run, reviews, permissions),
    ]


def role_of(answer: Mapping[str, object]) -> str:
    """The role in a collaborators/{user}/permission answer: `role_name` when it names one of
    GitHub's roles (it tells maintain from write, triage from read), else `permission`."""
    role = answer.get("role_name")
    if role in ("admin", "maintain", "write", "triage", "read"):
        return str(role)
    permission = answer.get("permission")
    return str(permission) if permission in ("admin", "write", "read", "none") else "none"

"""May the privileged poster believe a bench run? Pure checks over what the API returned.

The poster runs on `workflow_run`, which fires for every completed run *named* bench-pr: a fork
PR can add its own workflow of that name (on a hosted runner, no label needed) and upload a
forged artifact. So nothing the event or the artifact says is taken on trust. Each check here
compares the artifact's claims with GitHub's own answers (the run, the PR, the PR's label
events, the labeller's permission), and each says in one line what it found. No I/O: the
adapter (bot/github/trust_api.py) fetches the facts, so every case is testable on plain data.

Why each check:
- the run's `path` (the workflow file), not its `name`: anyone can pick a name;
- the run's repository: a run of another repository has nothing to say about ours;
- event `pull_request` and conclusion `success`: only a finished bench has results to post;
- the run's head commit and head repository against the PR's: `pull_requests` of a run is
  empty for fork PRs, so the PR number comes from the artifact and must be confirmed here;
- the fork gate: for a fork head, the run must be the one the label started. The most recent
  change of the gate label at or before the run's creation is a `labeled` event by someone with
  write access; the run is its first attempt, triggered by that same person, created at most
  GATE_WINDOW after the label and with no other issue event in between. A label vouches for the
  head it was put on: a fork's push after it, followed by any maintainer action that fires a
  `pull_request` event (another label, a re-run), would otherwise run the pushed code's own
  workflow with a maintainer as its trigger.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.tell.log import quoted

#: Repository roles that may vouch for a fork's code (GitHub's `permission` says "write" for
#: maintain and "read" for triage; `role_name` tells them apart: both are read here).
WRITERS = frozenset({"admin", "maintain", "write"})
#: How long after the label its run may be created: GitHub starts it within seconds.
GATE_WINDOW = timedelta(minutes=2)


@dataclass(frozen=True)
class Claim:
    """What the poster was told: by its own inputs (repo, workflow path, label) and the artifact
    (pr, head_sha), which the PR's code may have written."""

    repo: str
    run_id: int
    workflow_path: str
    pr: int
    head_sha: str
    label: str


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


@dataclass(frozen=True)
class PullFacts:
    """GET /repos/{repo}/pulls/{n}: the PR's head right now."""

    number: int
    head_sha: str
    head_repo: str | None


@dataclass(frozen=True)
class LabelEvent:
    """One event of GET /repos/{repo}/issues/{n}/events: a `labeled` or `unlabeled` with its
    label, or any other event (label "") that may lie between a label and its run."""

    event: str
    label: str
    actor: str | None
    created_at: datetime


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
    ]


def check_pull(claim: Claim, run: RunFacts, pull: PullFacts) -> list[Check]:
    """The PR the artifact names has the run's head (commit and repository) as its head."""
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
    ]


def check_gate(
    claim: Claim,
    run: RunFacts,
    events: Sequence[LabelEvent],
    permissions: Mapping[str, str],
) -> Check:
    """The fork gate held when the run was created. `permissions` maps a login (lower case) to
    its role in claim.repo; a login missing from it has none."""
    if run.head_repo is not None and run.head_repo.lower() == claim.repo.lower():
        return Check("fork gate", True, "head is a branch of this repository: no label needed")
    gate = [
        e
        for e in events
        if e.label == claim.label
        and e.event in ("labeled", "unlabeled")
        and e.created_at <= run.created_at
    ]
    if not gate:
        return Check(
            "fork gate", False, f"fork head and no {shown(claim.label)} label before the run"
        )
    last = max(gate, key=lambda e: e.created_at)
    if last.event != "labeled":
        return Check("fork gate", False, "the label was removed before the run was created")

    def role(login: str | None) -> str:
        return permissions.get((login or "").lower(), "none")

    labeller = role(last.actor)
    if labeller not in WRITERS:
        return Check(
            "fork gate", False, f"labelled by {shown(last.actor)}, whose role is {shown(labeller)}"
        )
    if (run.triggering_actor or "").lower() != (last.actor or "").lower():
        return Check(
            "fork gate",
            False,
            f"run triggered by {shown(run.triggering_actor)}, not by the labeller "
            f"{shown(last.actor)}: not the run the label started",
        )
    if run.run_attempt != 1:
        return Check(
            "fork gate", False, f"attempt {run.run_attempt}: a re-run is not the labelled run"
        )
    if run.created_at - last.created_at > GATE_WINDOW:
        return Check(
            "fork gate",
            False,
            f"run created {int((run.created_at - last.created_at).total_seconds())} s after the "
            f"label (at most {int(GATE_WINDOW.total_seconds())} s): not the run the label started",
        )
    between = [e for e in events if last.created_at < e.created_at <= run.created_at]
    if between:
        return Check(
            "fork gate",
            False,
            f"{len(between)} other event(s) between the label and the run (first: "
            f"{shown(between[0].event)}): not the run the label started",
        )
    return Check(
        "fork gate",
        True,
        f"labelled by {shown(last.actor)} ({labeller}) at {last.created_at.isoformat()}, "
        f"this run (attempt 1, by the labeller) at {run.created_at.isoformat()}",
    )


def gate_logins(claim: Claim, run: RunFacts, events: Sequence[LabelEvent]) -> list[str]:
    """Whose permission check_gate may need: the adapter asks GitHub for these alone."""
    if run.head_repo is not None and run.head_repo.lower() == claim.repo.lower():
        return []
    logins = {e.actor for e in events if e.label == claim.label and e.actor}
    if run.triggering_actor:
        logins.add(run.triggering_actor)
    return sorted(logins, key=str.lower)


def verify(
    claim: Claim,
    run: RunFacts,
    pull: PullFacts,
    events: Sequence[LabelEvent],
    permissions: Mapping[str, str],
) -> list[Check]:
    """Every check, in the order a reader wants them; the run is trusted iff all are ok."""
    return [
        *check_run(claim, run),
        *check_pull(claim, run, pull),
        check_gate(claim, run, events, permissions),
    ]


def role_of(answer: Mapping[str, object]) -> str:
    """The role in a collaborators/{user}/permission answer: `role_name` when it names one of
    GitHub's roles (it tells maintain from write, triage from read), else `permission`."""
    role = answer.get("role_name")
    if role in ("admin", "maintain", "write", "triage", "read"):
        return str(role)
    permission = answer.get("permission")
    return str(permission) if permission in ("admin", "write", "read", "none") else "none"

"""verify-run against forged bench runs, through the fake GitHub over real HTTP.

Each forgery is one a fork PR can make on its own: a workflow of its own named bench-pr, an
artifact that names another PR, an approval by someone without write access, a push after a
maintainer approved an earlier commit. The genuine runs (same repository, a fork whose head a
maintainer approved) must pass, so that the checks cannot pass by refusing everything.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from bot.commands.cli import main
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_TOKEN, LocalGitHub
from bot.github.fake.actions import WorkflowRun
from bot.github.fake.state import EPOCH
from bot.github.trust import (
    Claim,
    PullFacts,
    Review,
    RunFacts,
    check_gate,
    check_pull,
    role_of,
    verify,
)

REPO = "NVIDIA/Fuser"  # seeded by the fake_github fixture
FORK = "mallory/Fuser"
HEAD = "b" * 40
PATH = ".github/workflows/bench-pr.yml"


def at(minutes: float) -> datetime:
    return EPOCH + timedelta(days=1, minutes=minutes)


def seed(
    fake: LocalGitHub,
    *,
    head_repo: str = FORK,
    run_head: str = HEAD,
    run_head_repo: str | None = None,
    path: str = PATH,
    approver: str | None = "maintainer",
    role: str = "write",
    approved: str = HEAD,
    trigger: str = "mallory",
) -> tuple[int, WorkflowRun]:
    """A PR with head HEAD in `head_repo`, optionally approved at `approved`, and one finished
    run (triggered by the fork's author unless said otherwise: who triggered it is no proof)."""
    state = fake.state
    pr = state.add_pull_request(
        REPO, "faster", author="mallory", head_ref="fast", head_sha=HEAD, head_repo=head_repo
    )
    state.actions.set_role(REPO, "maintainer", "maintain")
    state.actions.set_role(REPO, "mallory", None)
    if approver is not None:
        if approver != "maintainer":
            state.actions.set_role(REPO, approver, role)
        state.pulls.review(REPO, pr.number, by=approver, commit_id=approved, submitted_at=at(0))
    run = state.actions.add_run(
        REPO,
        head_sha=run_head,
        head_repo=run_head_repo or head_repo,
        head_branch="fast",  # the PR's head branch: GitHub's record of whose run it is
        path=path,
        created_at=at(1),
        triggering_actor=trigger,
    )
    return pr.number, run


def verify_run(
    fake: LocalGitHub,
    capsys: pytest.CaptureFixture[str],
    run: WorkflowRun,
    pr: int | None,
    **kw: str,
) -> tuple[int, str]:
    argv = ["verify-run", "--repo", REPO, "--run-id", str(run.id)]
    argv += [] if pr is None else ["--pr", str(pr)]
    argv += ["--head-sha", kw.get("head", HEAD), "--workflow-path", PATH]
    argv += ["--attempt", kw["attempt"]] if "attempt" in kw else []
    env = {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake.base_url}
    rc = main(argv, env)
    captured = capsys.readouterr()
    return rc, captured.out + captured.err


def failed(output: str) -> list[str]:
    return [line.split(":")[0][5:] for line in output.splitlines() if line.startswith("FAIL")]


def test_a_genuine_same_repository_run_passes(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github, head_repo=REPO, approver=None, trigger="alice")
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.OK_NO_REGRESSION, out
    assert "ok   fork gate: head is a branch of this repository" in out
    assert len([line for line in out.splitlines() if line.startswith("ok")]) == 10
    assert "ok   head branch: run of 'fast', PR #1's head 'fast'" in out


def test_a_fork_run_whose_head_a_maintainer_approved_passes(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github)
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.OK_NO_REGRESSION, out
    assert f"ok   fork gate: head {HEAD[:12]} approved by 'maintainer' (maintain)" in out
    assert fake_github.requests("GET", r"/collaborators/maintainer/permission$")
    assert fake_github.requests("GET", rf"/pulls/{pr}/reviews$")


def test_the_run_alone_is_checked_before_its_pr_is_known(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first stage (no --pr): the run and its head, nothing of a PR; the poster runs it
    before it downloads the artifact."""
    _, run = seed(fake_github, approver=None)  # a fork run nobody approved: the PR stage's job
    rc, out = verify_run(fake_github, capsys, run, None, attempt="1")
    assert rc == ExitCode.OK_NO_REGRESSION, out
    assert "passed every check of the run itself" in out and "fork gate" not in out
    assert not fake_github.requests("GET", r"/pulls/")
    for change, expect in (
        ({"path": ".github/workflows/evil.yml"}, ["workflow file"]),
        ({"event": "workflow_dispatch"}, ["event"]),
        ({"conclusion": "failure"}, ["conclusion"]),
        ({"run_attempt": 2}, ["attempt"]),
        ({"head_sha": "c" * 40}, ["head commit"]),
        ({"head_repo": None}, ["head repository"]),
    ):
        forged = replace(run, **change)  # type: ignore[arg-type]
        fake_github.state.actions.runs[run.id] = forged
        rc, out = verify_run(fake_github, capsys, forged, None, attempt="1")
        assert rc == ExitCode.UNTRUSTED and failed(out) == expect, (change, out)


def test_a_fork_workflow_with_our_name_but_another_path_is_rejected(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github, path=".github/workflows/evil.yml")
    assert run.name == "bench-pr"  # the name is the fork's to choose
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED
    assert failed(out) == ["workflow file"]
    assert "'.github/workflows/evil.yml'" in out


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        # The run benchmarked another commit, which nobody approved either.
        ({"run_head": "c" * 40}, ["head commit", "fork gate"]),
        ({"run_head_repo": "other/Fuser"}, ["head repository"]),
    ],
    ids=["head sha", "head repository"],
)
def test_a_run_for_another_pr_is_rejected(
    fake_github: LocalGitHub,
    capsys: pytest.CaptureFixture[str],
    change: dict[str, str],
    expect: list[str],
) -> None:
    pr, run = seed(fake_github, **change)  # type: ignore[arg-type]
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED
    assert failed(out) == expect, out


def test_a_run_speaks_for_its_own_pr_only(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 37: a branch of this repository pushed to PR B's exact head commit opens PR A; A's
    run names B in its artifact. Head commit, repository and gate all agree with B's: only
    GitHub's records of the run (its head branch) and of B (its head ref) tell them apart."""
    victim, _ = seed(fake_github, head_repo=REPO, approver=None)
    state = fake_github.state
    own = state.add_pull_request(REPO, "mine", author="maintainer", head_ref="a", head_sha=HEAD)
    run = state.actions.add_run(REPO, head_sha=HEAD, head_repo=REPO, head_branch="a", path=PATH)
    rc, out = verify_run(fake_github, capsys, run, victim)
    assert rc == ExitCode.UNTRUSTED and failed(out) == ["head branch"], out
    assert (
        f"FAIL head branch: run of 'a', PR #{victim}'s head 'fast': a run speaks for its own "
        "PR only" in out
    )
    assert verify_run(fake_github, capsys, run, own.number)[0] == ExitCode.OK_NO_REGRESSION


def test_two_prs_of_one_branch_run_the_same_code_and_either_may_be_named(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github)
    twin = fake_github.state.add_pull_request(
        REPO, "backport", author="mallory", head_ref="fast", head_sha=HEAD, head_repo=FORK
    )
    fake_github.state.pulls.review(REPO, twin.number, by="maintainer", submitted_at=at(0))
    for number in (pr, twin.number):
        rc, out = verify_run(fake_github, capsys, run, number)
        assert rc == ExitCode.OK_NO_REGRESSION, out


def test_the_artifact_cannot_claim_another_head(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github)
    rc, out = verify_run(fake_github, capsys, run, pr, head="d" * 40)
    assert rc == ExitCode.UNTRUSTED and failed(out) == ["head commit"]


@pytest.mark.parametrize("role", ["triage", "read"])
def test_an_approval_by_a_user_without_write_is_rejected(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str], role: str
) -> None:
    pr, run = seed(fake_github, approver="helper", role=role)
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED
    assert failed(out) == ["fork gate"]
    assert f"approved only by 'helper', whose role is '{role}'" in out


def test_a_fork_push_after_an_approval_is_rejected_whoever_triggers_its_run(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """The attack of the label window: a maintainer vouched for head A, the fork pushed B, and
    a maintainer's later action fired a pull_request event whose run (the fork's own workflow
    at the same path) a maintainer triggered. Only an approval of B itself lets it through."""
    pr, run = seed(fake_github, approved="a" * 40, trigger="maintainer")
    fake_github.state.pulls.label(REPO, pr, "run-gpu-bench", by="maintainer")
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED and failed(out) == ["fork gate"]
    assert "a push after an approval is not approved" in out
    fake_github.state.pulls.review(REPO, pr, by="maintainer", submitted_at=at(2))
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.OK_NO_REGRESSION, out


def test_a_dismissed_or_overruled_approval_does_not_count(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github, approver=None)
    state = fake_github.state
    approval = state.pulls.review(REPO, pr, by="maintainer", submitted_at=at(0))
    state.pulls.review(REPO, pr, by="maintainer", state="CHANGES_REQUESTED", submitted_at=at(2))
    assert verify_run(fake_github, capsys, run, pr)[0] == ExitCode.UNTRUSTED
    # A plain comment after the approval changes nothing; a dismissal does.
    state.pulls.reviews.clear()
    approval = state.pulls.review(REPO, pr, by="maintainer", submitted_at=at(0))
    state.pulls.review(REPO, pr, by="maintainer", state="COMMENTED", submitted_at=at(2))
    assert verify_run(fake_github, capsys, run, pr)[0] == ExitCode.OK_NO_REGRESSION
    state.pulls.dismiss(approval)
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED and "no standing approval" in out


def test_no_approval_and_a_label_alone_are_rejected(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github, approver=None, trigger="maintainer")
    fake_github.state.pulls.label(REPO, pr, "run-gpu-bench", by="maintainer")
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED and failed(out) == ["fork gate"]


def test_a_re_run_of_an_approved_head_passes_unless_the_event_named_another_attempt(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github)
    run.run_attempt = 2  # the same approved commit measured again
    assert verify_run(fake_github, capsys, run, pr)[0] == ExitCode.OK_NO_REGRESSION
    rc, out = verify_run(fake_github, capsys, run, pr, attempt="1")
    assert rc == ExitCode.UNTRUSTED and failed(out) == ["attempt"]


def test_a_failed_or_non_pr_run_is_rejected(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github)
    run.conclusion, run.event = "failure", "push"
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED and failed(out) == ["event", "conclusion"]


def test_api_values_are_shown_escaped(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github, path="\n::error::pwned")
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED
    assert not any(line.lstrip().startswith("::") for line in out.splitlines())
    assert "'\\n::error::pwned'" in out


def test_api_failures_and_bad_arguments_have_their_own_codes(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github)
    fake_github.inject("GET", r"/actions/runs/\d+$", 404, times=None)
    assert verify_run(fake_github, capsys, run, pr)[0] == ExitCode.GITHUB_FAILURE
    assert verify_run(fake_github, capsys, run, pr, head="B" * 40)[0] == ExitCode.USAGE
    assert (
        main(["verify-run", "--repo", REPO, "--run-id", "1", "--pr", "1", "--head-sha", HEAD], {})
        == ExitCode.USAGE
    )  # no token


# ----- the pure checks, on plain records -----

CLAIM = Claim(REPO, 7, PATH, 3, HEAD)
RUN = RunFacts(7, REPO, PATH, "pull_request", "completed", "success", HEAD, FORK, at(1), "m")


def review(who: str, minute: float, state: str = "APPROVED", sha: str = HEAD) -> Review:
    return Review(who, state, sha, at(minute))


def test_gate_takes_each_reviewers_standing_review_of_the_exact_head() -> None:
    roles = {"m": "write", "t": "triage"}
    assert check_gate(CLAIM, RUN, [review("m", 0)], roles).ok
    assert not check_gate(CLAIM, RUN, [review("t", 0)], roles).ok
    assert check_gate(CLAIM, RUN, [review("t", 0), review("m", 0.5)], roles).ok
    assert not check_gate(CLAIM, RUN, [review("m", 0, sha="a" * 40)], roles).ok
    overruled = [review("m", 0), review("m", 0.5, "CHANGES_REQUESTED")]
    assert not check_gate(CLAIM, RUN, overruled, roles).ok
    commented = [review("m", 0), review("m", 0.5, "COMMENTED"), review("m", 0.6, "PENDING")]
    assert check_gate(CLAIM, RUN, commented, roles).ok
    assert not check_gate(CLAIM, RUN, [review("m", 0, "DISMISSED")], roles).ok
    # Listed out of order: the latest by time stands.
    assert check_gate(CLAIM, RUN, [review("m", 1), review("m", 0, "CHANGES_REQUESTED")], roles).ok
    assert not check_gate(CLAIM, replace(RUN, head_repo=None), [review("m", 0)], roles).ok
    # An approval vouches for a commit, not for whoever triggers or re-runs its run.
    assert check_gate(
        CLAIM, replace(RUN, triggering_actor="x", run_attempt=3), [review("m", 0)], roles
    ).ok


def test_the_first_stage_checks_the_run_alone() -> None:
    first = Claim(REPO, 7, PATH, None, HEAD, attempt=1)
    names = [c.name for c in verify(first, RUN, None, [], {})]
    assert names == [
        "run id",
        "run repository",
        "workflow file",
        "event",
        "conclusion",
        "attempt",
        "head commit",
        "head repository",
    ]
    assert all(c.ok for c in verify(first, RUN, None, [], {}))
    assert not all(c.ok for c in verify(first, replace(RUN, head_sha="c" * 40), None, [], {}))


def test_role_of_tells_maintain_from_write_and_triage_from_read() -> None:
    assert role_of({"permission": "write", "role_name": "maintain"}) == "maintain"
    assert role_of({"permission": "read", "role_name": "triage"}) == "triage"
    assert role_of({"permission": "write", "role_name": "custom-role"}) == "write"
    assert role_of({"permission": "owner"}) == "none"
    assert PullFacts(1, HEAD, None).head_repo is None


def test_the_runs_head_branch_is_the_prs_head_ref() -> None:
    run = replace(RUN, head_branch="fast")
    names = ["head commit", "head repository", "head branch"]
    pull = PullFacts(3, HEAD, FORK, "fast")
    assert [(c.name, c.ok) for c in check_pull(CLAIM, run, pull)] == [(n, True) for n in names]
    for changed in (replace(pull, head_ref="faster"), replace(pull, head_ref=None)):
        assert [c.name for c in check_pull(CLAIM, run, changed) if not c.ok] == ["head branch"]
    unnamed = replace(run, head_branch=None)
    assert [c.name for c in check_pull(CLAIM, unnamed, pull) if not c.ok] == ["head branch"]

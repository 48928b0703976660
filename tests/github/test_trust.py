"""verify-run against forged bench runs, through the fake GitHub over real HTTP.

Each forgery is one a fork PR can make on its own: a workflow of its own named bench-pr, an
artifact that names another PR, a label added by someone without write access, a label added
after the run started. The genuine runs (same repository, maintainer-labelled fork) must pass,
so that the checks cannot pass by refusing everything.
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
from bot.github.trust import Claim, LabelEvent, PullFacts, RunFacts, check_gate, role_of

REPO = "NVIDIA/Fuser"  # seeded by the fake_github fixture
FORK = "mallory/Fuser"
HEAD = "b" * 40
LABEL = "run-gpu-bench"
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
    labeller: str | None = "maintainer",
    role: str = "write",
    label_minute: float = 0,
    run_minute: float = 1,
    trigger: str | None = None,
) -> tuple[int, WorkflowRun]:
    """A PR with head HEAD in `head_repo`, optionally labelled, and one finished run."""
    state = fake.state
    pr = state.add_pull_request(
        REPO, "faster", author="mallory", head_ref="fast", head_sha=HEAD, head_repo=head_repo
    )
    state.actions.set_role(REPO, "maintainer", "maintain")
    state.actions.set_role(REPO, "mallory", None)
    if labeller is not None:
        if labeller != "maintainer":
            state.actions.set_role(REPO, labeller, role)
        state.actions.add_event(
            REPO, pr.number, "labeled", actor=labeller, label=LABEL, created_at=at(label_minute)
        )
    run = state.actions.add_run(
        REPO,
        head_sha=run_head,
        head_repo=run_head_repo or head_repo,
        path=path,
        created_at=at(run_minute),
        triggering_actor=trigger or labeller or "mallory",
    )
    return pr.number, run


def verify_run(
    fake: LocalGitHub, capsys: pytest.CaptureFixture[str], run: WorkflowRun, pr: int, **kw: str
) -> tuple[int, str]:
    argv = ["verify-run", "--repo", REPO, "--run-id", str(run.id), "--pr", str(pr)]
    argv += ["--head-sha", kw.get("head", HEAD), "--workflow-path", PATH, "--label", LABEL]
    env = {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake.base_url}
    rc = main(argv, env)
    captured = capsys.readouterr()
    return rc, captured.out + captured.err


def failed(output: str) -> list[str]:
    return [line.split(":")[0][5:] for line in output.splitlines() if line.startswith("FAIL")]


def test_a_genuine_same_repository_run_passes(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github, head_repo=REPO, labeller=None, trigger="alice")
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.OK_NO_REGRESSION, out
    assert "ok   fork gate: head is a branch of this repository" in out
    assert len([line for line in out.splitlines() if line.startswith("ok")]) == 8


def test_a_maintainer_labelled_fork_run_passes(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github)
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.OK_NO_REGRESSION, out
    assert "ok   fork gate: labelled by 'maintainer' (maintain)" in out
    assert fake_github.requests("GET", r"/collaborators/maintainer/permission$")


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
        ({"run_head": "c" * 40}, ["head commit"]),  # the run benchmarked another commit
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


def test_the_artifact_cannot_claim_another_head(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github)
    rc, out = verify_run(fake_github, capsys, run, pr, head="d" * 40)
    assert rc == ExitCode.UNTRUSTED and failed(out) == ["head commit"]


@pytest.mark.parametrize("role", ["triage", "read"])
def test_a_label_by_a_user_without_write_is_rejected(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str], role: str
) -> None:
    pr, run = seed(fake_github, labeller="helper", role=role, trigger="helper")
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED
    assert failed(out) == ["fork gate"]
    assert f"labelled by 'helper', whose role is '{role}'" in out


def test_a_label_added_after_the_run_started_is_rejected(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    # Triggered by the labeller, so only the label's time can reject it.
    pr, run = seed(fake_github, label_minute=5, run_minute=1, trigger="maintainer")
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED and failed(out) == ["fork gate"]


def test_a_fork_push_after_an_old_label_is_rejected(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """The label vouched for an earlier head; the fork's own push triggered this run."""
    pr, run = seed(fake_github, trigger="mallory")
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED and "run triggered by 'mallory'" in out


def test_a_fork_push_then_a_maintainers_other_action_is_rejected(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """The maintainer labelled an earlier head; the fork pushed code whose own workflow has no
    gate, and a later maintainer action (another label) fired a pull_request event for it: the
    run's trigger is a maintainer, but it is not the run the label started."""
    pr, run = seed(fake_github, label_minute=0, run_minute=60, trigger="maintainer")
    fake_github.state.actions.add_event(
        REPO, pr, "labeled", actor="maintainer", label="bug", created_at=at(59.9)
    )
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED and failed(out) == ["fork gate"]
    assert "not the run the label started" in out


def test_a_re_run_of_a_labelled_run_is_rejected(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github)
    assert verify_run(fake_github, capsys, run, pr)[0] == ExitCode.OK_NO_REGRESSION
    run.run_attempt = 2
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED and "attempt 2" in out


def test_a_label_removed_before_the_run_is_rejected(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    pr, run = seed(fake_github, run_minute=3)
    fake_github.state.actions.add_event(
        REPO, pr, "unlabeled", actor="maintainer", label=LABEL, created_at=at(2)
    )
    rc, out = verify_run(fake_github, capsys, run, pr)
    assert rc == ExitCode.UNTRUSTED and "removed before the run" in out


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

CLAIM = Claim(REPO, 7, PATH, 3, HEAD, LABEL)
RUN = RunFacts(7, REPO, PATH, "pull_request", "completed", "success", HEAD, FORK, at(1), "m")


def labeled(actor: str, minute: float, event: str = "labeled") -> LabelEvent:
    return LabelEvent(event, LABEL, actor, at(minute))


def test_gate_takes_the_latest_label_change_before_the_run() -> None:
    roles = {"m": "write", "t": "triage"}
    assert check_gate(CLAIM, RUN, [labeled("m", 0)], roles).ok
    assert not check_gate(CLAIM, RUN, [labeled("m", 0), labeled("t", 0.5)], roles).ok
    assert check_gate(CLAIM, RUN, [labeled("t", -1), labeled("m", 0)], roles).ok
    assert check_gate(CLAIM, RUN, [labeled("m", 0), labeled("t", 2, "unlabeled")], roles).ok
    other = LabelEvent("labeled", "bug", "m", at(0))
    assert not check_gate(CLAIM, RUN, [other], roles).ok
    assert not check_gate(CLAIM, replace(RUN, head_repo=None), [], roles).ok  # deleted fork


def test_gate_wants_the_run_the_label_started() -> None:
    roles = {"m": "write", "n": "admin"}
    assert check_gate(CLAIM, RUN, [labeled("m", 0)], roles).ok
    assert not check_gate(CLAIM, replace(RUN, triggering_actor="n"), [labeled("m", 0)], roles).ok
    assert not check_gate(CLAIM, replace(RUN, run_attempt=2), [labeled("m", 0)], roles).ok
    late = replace(RUN, created_at=at(2.5))  # more than GATE_WINDOW after the label
    assert not check_gate(CLAIM, late, [labeled("m", 0)], roles).ok
    assert check_gate(CLAIM, replace(RUN, created_at=at(1.9)), [labeled("m", 0)], roles).ok
    between = LabelEvent("assigned", "", "m", at(0.5))
    assert not check_gate(CLAIM, RUN, [labeled("m", 0), between], roles).ok
    after = LabelEvent("assigned", "", "m", at(1.5))
    assert check_gate(CLAIM, RUN, [labeled("m", 0), after], roles).ok


def test_role_of_tells_maintain_from_write_and_triage_from_read() -> None:
    assert role_of({"permission": "write", "role_name": "maintain"}) == "maintain"
    assert role_of({"permission": "read", "role_name": "triage"}) == "triage"
    assert role_of({"permission": "write", "role_name": "custom-role"}) == "write"
    assert role_of({"permission": "owner"}) == "none"
    assert PullFacts(1, HEAD, None).head_repo is None

"""PR events that change an alert without a new bench run (docs/WORKFLOWS.md, "PR events").

perfbot-pr-event.yml records that a PR was merged or closed, got a `/perfbot ...` comment, or had
the acknowledge label added or removed; it holds nothing (no token scope, no secret, no
checkout) and says one thing, a PR number, in a small artifact. post-results.yml runs on its
completion: it asks GitHub what the event run was, reads the number as untrusted data, asks
GitHub for the PR's head and the bench runs of that head, verifies the one it will use with
`python -m bot verify-run`, and then posts it as after a bench run. The scripts that touch the
event's data are run for real (bash, python, jq), GitHub and the bot shimmed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from workflow_expr import evaluate_if, truthy
from workflow_rules import (
    BENCH,
    EVENT,
    GATE_LABEL,
    OUR_REPO,
    POSTER,
    REPO,
    WORKFLOWS,
    check_checks_out_nothing,
    check_no_secrets_no_write,
    iter_steps,
    jobs,
    load_workflow,
    outputs,
    run_step,
    shim,
    shim_calls,
    step_by_id,
    triggers,
)

RECORDER = load_workflow(WORKFLOWS / EVENT)
WF = load_workflow(WORKFLOWS / POSTER)
HEAD, BASE = "b" * 40, "a" * 40
EVENT_PATH = f".github/workflows/{EVENT}"
BENCH_PATH = f".github/workflows/{BENCH}"


def _ack_label() -> str:
    from bot.config import Config  # the label the bot counts (perfbot.toml [acknowledge])

    return Config.from_env({}, REPO / "perfbot.toml").alerts.ack_label


# ----- the recorder: when it runs, and what it holds -----


def _records(github: dict[str, Any]) -> bool:
    (job,) = jobs(RECORDER).values()
    return truthy(evaluate_if(str(job["if"]), {"github": {"repository": OUR_REPO, **github}}))


def _pr_event(action: str, label: str | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"action": action, "pull_request": {"number": 7}}
    if label is not None:
        event["label"] = {"name": label}
    return {"event_name": "pull_request", "event": event}


def _comment(body: str, on_pr: bool = True) -> dict[str, Any]:
    issue: dict[str, Any] = {"number": 7}
    if on_pr:
        issue["pull_request"] = {"url": "https://api.github.com/repos/o/r/pulls/7"}
    event = {"action": "created", "issue": issue, "comment": {"body": body}}
    return {"event_name": "issue_comment", "event": event}


def test_the_recorder_runs_on_the_events_that_change_an_alert_and_on_no_other() -> None:
    ack = _ack_label()
    assert _records(_pr_event("closed"))  # merged or closed unmerged: GitHub says which
    assert _records(_pr_event("labeled", ack)) and _records(_pr_event("unlabeled", ack))
    assert _records(_pr_event("labeled", ack.upper()))  # GitHub compares names as the bot does
    assert _records(_comment("/perfbot ack the 3% is the new tiling, expected"))
    assert _records(_comment("/PerfBot unack"))
    for other in (
        _pr_event("labeled", GATE_LABEL),  # bench-pr's own event: a new bench run reports
        _pr_event("labeled", "documentation"),
        _pr_event("unlabeled", "bug"),
        _pr_event("opened"),
        _pr_event("synchronize"),
        _comment("lgtm, thanks"),
        _comment("see /perfbot ack above"),
        _comment("/perfbot ack", on_pr=False),  # an issue, not a PR
    ):
        assert not _records(other), other
    assert set(triggers(RECORDER)) == {"pull_request", "issue_comment"}
    assert triggers(RECORDER)["pull_request"] == {"types": ["closed", "labeled", "unlabeled"]}
    assert triggers(RECORDER)["issue_comment"] == {"types": ["created"]}


def test_the_recorders_label_is_the_bots_acknowledge_label() -> None:
    (job,) = jobs(RECORDER).values()
    assert re.findall(r"github\.event\.label\.name == '([^']*)'", str(job["if"])) == [_ack_label()]


def test_the_recorder_holds_nothing_and_checks_nothing_out() -> None:
    """A fork PR runs its own copy of this file on pull_request events: whatever it does, the
    real one holds no secret, no scope of the token, no code, and installs nothing."""
    assert check_no_secrets_no_write(RECORDER) == []
    assert check_checks_out_nothing(RECORDER) == []
    assert RECORDER.data["permissions"] == {}
    (job,) = jobs(RECORDER).values()
    assert job["permissions"] == {} and job["runs-on"].startswith("ubuntu-")
    assert "secrets" not in RECORDER.text and "github.token" not in RECORDER.text
    used = [str(s["uses"]).split("@")[0] for _, s in iter_steps(RECORDER) if "uses" in s]
    assert used == ["actions/upload-artifact"]
    for _, step in iter_steps(RECORDER):
        assert not re.search(r"\b(pip|python3?|curl|wget|gh)\b", str(step.get("run", "")))
    # A newer event of one PR supersedes an older one; a run the if: skips joins no group.
    assert "concurrency" not in RECORDER.data
    assert job["concurrency"]["cancel-in-progress"] is True


def _record(tmp_path: Path, pr_number: str) -> Any:
    return run_step(step_by_id(RECORDER, "record"), tmp_path, {"PR_NUMBER": pr_number})


def test_the_recorder_writes_what_the_poster_reads(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    proc = _record(work, "42")
    assert proc.returncode == 0, proc.stderr
    (work / "step-script").unlink()
    # fetch-artifact unpacks the artifact perfbot-event (one file) into EVENT_DIR/perfbot-event.
    event_dir = tmp_path / "event"
    event_dir.mkdir()
    (work / "perfbot-event").rename(event_dir / "perfbot-event")
    proc, out = _read_event(tmp_path, event_dir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs(out) == {"pr": "42"}
    for bad in ("", "0", "42; rm -rf /", "x"):
        case = tmp_path / f"bad-{len(bad)}-{bad[:1]}"
        case.mkdir()
        proc = _record(case, bad)
        assert proc.returncode == 1 and "::error::" in proc.stdout
        assert not (case / "perfbot-event").exists()


# ----- the poster's event path: the event run, its number, the bench run to post -----


def _read_event(tmp_path: Path, event_dir: Path) -> tuple[Any, Path]:
    out = tmp_path / "event-meta-out"
    env = {"EVENT_DIR": str(event_dir), "GITHUB_OUTPUT": str(out)}
    return run_step(step_by_id(WF, "event-meta"), tmp_path, env), out


def _event_dir(tmp_path: Path, content: Any) -> Path:
    folder = tmp_path / "event" / "perfbot-event"
    folder.mkdir(parents=True)
    text = content if isinstance(content, str) else json.dumps(content)
    (folder / "event.json").write_text(text, encoding="utf-8")
    return folder.parent


GOOD_EVENT = {"schema": "perfbot-event/1", "pr": 42}
BAD_EVENTS: dict[str, Any] = {
    "pr as text": {**GOOD_EVENT, "pr": "42"},
    "pr missing": {"schema": "perfbot-event/1"},
    "pr null": {**GOOD_EVENT, "pr": None},
    "pr as bool": {**GOOD_EVENT, "pr": True},
    "pr zero": {**GOOD_EVENT, "pr": 0},
    "pr negative": {**GOOD_EVENT, "pr": -42},
    "pr float": {**GOOD_EVENT, "pr": 42.0},
    "pr huge": {**GOOD_EVENT, "pr": 2**31},
    "pr injected": {**GOOD_EVENT, "pr": "42\n::error::pwned"},
    "another key": {**GOOD_EVENT, "head_sha": "\n::error::pwned"},
    "no schema": {"pr": 42},
    "another schema": {**GOOD_EVENT, "schema": "perfbot-bench-meta/1"},
    "a list": [GOOD_EVENT],
    "not JSON": "{pr: 42",
    "too deep": "[" * 2000 + "]" * 2000,
    "padded past the size cap": json.dumps({**GOOD_EVENT, "schema": "x" * 2000}),
}


@pytest.mark.parametrize("content", BAD_EVENTS.values(), ids=BAD_EVENTS.keys())
def test_the_poster_refuses_a_pr_number_that_is_not_a_positive_integer(
    tmp_path: Path, content: Any
) -> None:
    proc, out = _read_event(tmp_path, _event_dir(tmp_path, content))
    assert proc.returncode == 6, proc.stdout + proc.stderr  # untrusted
    assert "::error::PR-event artifact rejected" in proc.stdout
    assert "pwned" not in proc.stdout + proc.stderr  # nothing from the artifact is echoed
    assert not out.exists()


def test_the_poster_refuses_an_event_artifact_of_another_shape(tmp_path: Path) -> None:
    """No file, a link, a second file, a second artifact, nothing at all: refused."""
    for case in ("missing", "link", "second file", "second artifact", "no artifact"):
        root = tmp_path / case.replace(" ", "-")
        root.mkdir()
        event_dir = _event_dir(root, GOOD_EVENT)
        path = event_dir / "perfbot-event" / "event.json"
        if case == "missing":
            path.unlink()
        elif case == "link":
            (root / "real.json").write_text(path.read_text())
            path.unlink()
            path.symlink_to(root / "real.json")
        elif case == "second file":
            (path.parent / "more.json").write_text("{}")
        elif case == "second artifact":
            (event_dir / "perfbot-event-x").mkdir()
        else:
            path.unlink()
            path.parent.rmdir()
        proc, out = _read_event(root, event_dir)
        assert proc.returncode == 6 and "::error::PR-event artifact rejected" in proc.stdout, case
        assert not out.exists(), case


def _run_json(**changes: Any) -> dict[str, Any]:
    run = {
        "id": 77,
        "path": EVENT_PATH,
        "repository": {"full_name": OUR_REPO},
        "head_repository": {"full_name": "mallory/fusion-perfbot"},  # a fork's event: fine
        "event": "pull_request",
        "status": "completed",
        "conclusion": "success",
    }
    return {**run, **changes}


def _poster_env(path: str, tmp_path: Path) -> dict[str, str]:
    """What the runner gives the poster's steps (dummy tokens: no network here)."""
    return {
        "PATH": path,
        "GH_TOKEN": "t",
        "GITHUB_TOKEN": "t",
        "GITHUB_REPOSITORY": OUR_REPO,
        "RUNNER_TEMP": str(tmp_path),
    }


def _check_event_run(tmp_path: Path, run: dict[str, Any]) -> tuple[Any, str]:
    (tmp_path / "run.json").write_text(json.dumps(run), encoding="utf-8")
    shim(tmp_path, "gh", f"cat {tmp_path}/run.json")
    path = shim(tmp_path, "python", "exit 0")  # fetch-artifact; both shims in one folder
    env = {
        **_poster_env(path, tmp_path),
        "EVENT_RUN_ID": "77",
        "EVENT_WORKFLOW_PATH": EVENT_PATH,
        "EVENT_DIR": str(tmp_path / "event"),
    }
    proc = run_step(step_by_id(WF, "event"), tmp_path, env)
    return proc, shim_calls(tmp_path, "python")


def test_the_poster_downloads_the_event_artifact_of_a_real_event_run_under_limits(
    tmp_path: Path,
) -> None:
    proc, bot = _check_event_run(tmp_path, _run_json())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "gh.calls").read_text().split() == [
        "api",
        f"repos/{OUR_REPO}/actions/runs/77",
    ]
    want = (
        f"-m bot fetch-artifact --repo {OUR_REPO} --run-id 77 --name-prefix perfbot-event "
        f"--dest {tmp_path}/event --max-bytes 65536 --max-files 1 --max-artifacts 1"
    )
    assert bot.split() == want.split()
    (tmp_path / "comment").mkdir()
    proc, _ = _check_event_run(tmp_path / "comment", _run_json(event="issue_comment"))
    assert proc.returncode == 0, proc.stdout + proc.stderr


FORGED_RUNS = {
    "another file of that name": {"path": ".github/workflows/mine.yml"},
    "another repository": {"repository": {"full_name": "mallory/fusion-perfbot"}},
    "a push": {"event": "push"},
    "a dispatch": {"event": "workflow_dispatch"},
    "failed": {"conclusion": "failure"},
    "still running": {"status": "in_progress", "conclusion": None},
    "no answer": {"path": None, "repository": None},
}


@pytest.mark.parametrize("change", FORGED_RUNS.values(), ids=FORGED_RUNS.keys())
def test_the_poster_refuses_an_event_run_github_does_not_vouch_for(
    tmp_path: Path, change: dict[str, Any]
) -> None:
    proc, bot = _check_event_run(tmp_path, _run_json(**change))
    assert proc.returncode == 6 and "::error::run 77 is not a successful run" in proc.stdout
    assert bot == ""  # nothing downloaded


def _runs_listing(*runs: tuple[int, str, dict[str, Any]]) -> dict[str, Any]:
    """(id, created_at, changes): bench-pr runs of HEAD unless a change says otherwise."""
    base = {"head_sha": HEAD, "path": BENCH_PATH, "event": "pull_request"}
    base |= {"status": "completed", "conclusion": "success"}
    return {
        "total_count": len(runs),
        "workflow_runs": [{"id": i, "created_at": at, **base, **c} for i, at, c in runs],
    }


def _choose(
    tmp_path: Path,
    listing: dict[str, Any],
    verdicts: dict[int, int],
    pr_head: str = HEAD,
    event_pr: str = "42",
    trigger_path: str = EVENT_PATH,
) -> tuple[Any, dict[str, str], list[str], str]:
    """Run the target step: GitHub answers pulls/42 with `pr_head` and the runs listing;
    verify-run exits with verdicts[run id] (9 for a run the test did not expect)."""
    (tmp_path / "runs.json").write_text(json.dumps(listing), encoding="utf-8")
    answer = (
        f'case "$*" in *pulls/42*) echo {pr_head};; '
        f"*actions/workflows/bench-pr.yml/runs*) cat {tmp_path}/runs.json;; *) exit 9;; esac"
    )
    shim(tmp_path, "gh", answer)
    cases = " ".join(f'*"--run-id {i} "*) exit {rc};;' for i, rc in verdicts.items())
    path = shim(tmp_path, "python", f'case "$*" in {cases} esac; exit 9')  # verify-run
    out = tmp_path / "out"
    env = {
        **_poster_env(path, tmp_path),
        "GITHUB_OUTPUT": str(out),
        "EVENT_PR": event_pr,
        "TRIGGER_RUN_ID": "77",
        "TRIGGER_HEAD_SHA": "c" * 40,
        "TRIGGER_ATTEMPT": "1",
        "TRIGGER_PATH": trigger_path,
        "WORKFLOW_PATH": BENCH_PATH,
    }
    proc = run_step(step_by_id(WF, "target"), tmp_path, env)
    verified = shim_calls(tmp_path, "python").splitlines()
    return proc, outputs(out), verified, shim_calls(tmp_path, "gh")


def _verify_call(run_id: int) -> str:
    return (
        f"-m bot verify-run --repo {OUR_REPO} --run-id {run_id} --workflow-path {BENCH_PATH} "
        f"--pr 42 --head-sha {HEAD}"
    )


def test_the_event_path_posts_the_prs_newest_verified_bench_run(tmp_path: Path) -> None:
    """The PR's head comes from GitHub, not the event; the runs are those of that head, newest
    first; each is verified with the bot's verify-run, as the bench path does, and the first
    that passes is the one posted: one that fails a trust check (a fork's own bench file run
    later on the same head) is passed over, with a warning."""
    listing = _runs_listing(
        (100, "2026-05-01T10:00:00Z", {}),
        (300, "2026-05-01T12:00:00Z", {}),  # the newest: fails verify-run
        (200, "2026-05-01T11:00:00Z", {}),  # the newest that passes
        (400, "2026-05-01T13:00:00Z", {"head_sha": "c" * 40}),  # another head
        (500, "2026-05-01T13:00:00Z", {"conclusion": "failure"}),
        (600, "2026-05-01T13:00:00Z", {"path": ".github/workflows/mine.yml"}),
        (700, "2026-05-01T13:00:00Z", {"event": "workflow_dispatch"}),
    )
    proc, out, verified, gh = _choose(tmp_path, listing, {300: 6, 200: 0})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out == {"run_id": "200", "head": HEAD, "pr": "42"}
    assert [v.split() for v in verified] == [_verify_call(300).split(), _verify_call(200).split()]
    assert "::warning::bench run 300 of PR #42 failed a trust check" in proc.stdout
    assert f"repos/{OUR_REPO}/pulls/42" in gh
    runs_url = (
        f"repos/{OUR_REPO}/actions/workflows/bench-pr.yml/runs?head_sha={HEAD}"
        "&status=success&event=pull_request&per_page=20"
    )
    assert runs_url in gh


def test_the_event_path_posts_nothing_without_a_verified_bench_run(tmp_path: Path) -> None:
    # No bench run of the head (a fork PR nobody labelled, a push not benched yet): a notice.
    proc, out, verified, _ = _choose(tmp_path, _runs_listing(), {})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out == {"skip": "true"} and verified == []
    assert "::notice::PR #42: no successful, verified bench run" in proc.stdout
    # Every run fails a trust check: at most five are tried, then the same notice.
    (tmp_path / "untrusted").mkdir()
    listing = _runs_listing(*((i, f"2026-05-01T1{i}:00:00Z", {}) for i in range(1, 8)))
    proc, out, verified, _ = _choose(tmp_path / "untrusted", listing, dict.fromkeys(range(1, 8), 6))
    assert proc.returncode == 0 and out == {"skip": "true"}
    assert [v.split()[6] for v in verified] == ["7", "6", "5", "4", "3"]
    # verify-run could not ask GitHub (exit 4): the step fails with it, nothing is chosen.
    (tmp_path / "down").mkdir()
    listing = _runs_listing((1, "2026-05-01T10:00:00Z", {}))
    proc, out, _, _ = _choose(tmp_path / "down", listing, {1: 4})
    assert proc.returncode == 4 and "run_id" not in out


def test_the_event_path_refuses_a_head_github_does_not_give(tmp_path: Path) -> None:
    proc, out, verified, _ = _choose(tmp_path, _runs_listing(), {}, pr_head="null")
    assert proc.returncode == 4 and "::error::GitHub gave no head commit" in proc.stdout
    assert out == {} and verified == []


def test_a_bench_run_is_verified_alone_before_anything_of_it_is_downloaded(
    tmp_path: Path,
) -> None:
    """No PR event: the triggering run and its head, once verify-run (without --pr: the run
    itself, its attempt and head) passed; a run of another file that bears the name is refused
    before anything of it is read; a run verify-run refuses is not chosen, nothing of it read."""
    proc, out, verified, gh = _choose(
        tmp_path, _runs_listing(), {77: 0}, event_pr="", trigger_path=BENCH_PATH
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out == {"run_id": "77", "head": "c" * 40}
    want = (
        f"-m bot verify-run --repo {OUR_REPO} --run-id 77 --workflow-path {BENCH_PATH} "
        f"--head-sha {'c' * 40} --attempt 1"
    )
    assert [v.split() for v in verified] == [want.split()] and gh == ""
    for rc in (6, 4):
        case = tmp_path / f"refused-{rc}"
        case.mkdir()
        proc, out, _, _ = _choose(
            case, _runs_listing(), {77: rc}, event_pr="", trigger_path=BENCH_PATH
        )
        assert proc.returncode == rc and out == {}, proc.stdout
    assert (
        "nothing of it is downloaded"
        in _choose(
            tmp_path / "refused-6", _runs_listing(), {77: 6}, event_pr="", trigger_path=BENCH_PATH
        )[0].stdout
    )
    for other in (".github/workflows/mine.yml", EVENT_PATH, ""):
        case = tmp_path / f"other-{len(other)}"
        case.mkdir()
        proc, out, verified, gh = _choose(
            case, _runs_listing(), {}, event_pr="", trigger_path=other
        )
        assert proc.returncode == 6 and "::error::run 77 is of neither" in proc.stdout
        assert out == {} and verified == [] and gh == ""


def test_the_event_path_verifies_the_run_it_uses_before_reading_it() -> None:
    """The order and the wiring: the event steps run only for the event workflow's file; the
    run chosen (verified in `target`) is the one whose artifacts are fetched, whose metadata
    must name the event's PR, and which verify-run checks again before the bot posts."""
    ids = [s.get("id") for _, s in iter_steps(WF) if s.get("id")]
    assert ids.index("event") < ids.index("event-meta") < ids.index("target") < ids.index("fetch")
    event_if = step_by_id(WF, "event")["if"]
    other = ".github/workflows/x.yml"
    for path, on_event in ((EVENT_PATH, True), (BENCH_PATH, False), (other, False)):
        github = {"event": {"workflow_run": {"path": path}}}
        assert truthy(evaluate_if(event_if, {"github": github, "inputs": {}})) is on_event
    caller = {"event-workflow-path": ".github/workflows/perfbot-event.yml"}
    github = {"event": {"workflow_run": {"path": ".github/workflows/perfbot-event.yml"}}}
    assert truthy(evaluate_if(event_if, {"github": github, "inputs": caller}))
    assert step_by_id(WF, "event-meta")["if"] == "${{ steps.event.outcome == 'success' }}"
    assert "python -m bot verify-run" in step_by_id(WF, "target")["run"]
    assert step_by_id(WF, "target")["env"]["EVENT_PR"] == "${{ steps.event-meta.outputs.pr }}"
    run_id = "${{ steps.target.outputs.run_id }}"
    assert step_by_id(WF, "fetch")["env"]["RUN_ID"] == run_id
    assert step_by_id(WF, "fetch")["if"] == "${{ steps.target.outputs.skip != 'true' }}"
    meta = step_by_id(WF, "meta")
    assert meta["if"] == "${{ steps.fetch.outcome == 'success' }}"
    assert meta["env"]["EXPECTED_RUN_ID"] == run_id
    assert meta["env"]["EXPECTED_HEAD_SHA"] == "${{ steps.target.outputs.head }}"
    assert meta["env"]["EXPECTED_PR"] == "${{ steps.target.outputs.pr }}"
    assert step_by_id(WF, "verify")["env"]["RUN_ID"] == run_id
    assert jobs(WF)["post"]["if"] == "${{ needs.check.outputs.trusted == 'true' }}"
    # Nothing but the PR number leaves the event steps.
    assert "GITHUB_OUTPUT" not in step_by_id(WF, "event")["run"]
    assert step_by_id(WF, "event-meta")["run"].count("out.write(") == 1


def test_the_poster_runs_for_pr_events_and_one_at_a_time() -> None:
    job = jobs(WF)["check"]

    def runs(event: str, conclusion: str = "success") -> bool:
        run = {"event": event, "conclusion": conclusion}
        return truthy(evaluate_if(job["if"], {"github": {"event": {"workflow_run": run}}}))

    assert runs("pull_request") and runs("issue_comment")
    assert not runs("pull_request", "failure") and not runs("issue_comment", "skipped")
    assert not runs("push") and not runs("workflow_dispatch")
    # One poster a repository, queued, never cancelled: the last to run read GitHub last.
    assert jobs(WF)["post"]["concurrency"] == {
        "group": "post-results-${{ github.repository }}",
        "cancel-in-progress": False,
        "queue": "max",
    }


def _bench_artifact(tmp_path: Path, pr: str) -> Path:
    """What bench-pr writes (its own metadata step), unpacked as fetch-artifact does."""
    artifact = tmp_path / "bench" / "bench-pr-results-gpu-h200"
    (artifact / "results" / "nvidia-h200").mkdir(parents=True)
    (artifact / "results" / "nvidia-h200" / "x.json").write_text("{}", encoding="utf-8")
    step = step_by_id(load_workflow(WORKFLOWS / BENCH), "write-meta")
    env = {"PR_NUMBER": pr, "BASE_SHA": BASE, "PR_HEAD_SHA": HEAD, "RUN_ID": "200"}
    proc = run_step(step, artifact, {**env, "RUNNER_LABEL": "gpu-h200"})
    assert proc.returncode == 0, proc.stderr
    (artifact / "step-script").unlink()
    return artifact


@pytest.mark.parametrize(("expected_pr", "ok"), [("42", True), ("", True), ("43", False)])
def test_the_bench_runs_metadata_must_name_the_events_pr(
    tmp_path: Path, expected_pr: str, ok: bool
) -> None:
    """Two PRs may share a head commit: the run chosen for PR 42 must be PR 42's run."""
    artifact = _bench_artifact(tmp_path, "42")
    out = tmp_path / "out"
    env = {
        "ARTIFACTS_DIR": str(artifact.parent),
        "EXPECTED_RUN_ID": "200",
        "EXPECTED_HEAD_SHA": HEAD,
        "EXPECTED_PR": expected_pr,
        "GITHUB_OUTPUT": str(out),
    }
    proc = run_step(step_by_id(WF, "meta"), tmp_path, env)
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert outputs(out) == {"pr": "42", "base": BASE, "head": HEAD}
    else:
        assert proc.returncode == 6 and "pr is not the PR of the PR event" in proc.stdout
        assert not out.exists()

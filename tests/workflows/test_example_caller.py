"""The files a calling repository copies (examples/thunder/, examples/fuser/): one pin, the
workflow rules, and the Thunder caller run end to end on the fake GitHub.

examples/pin.env names this repository and the one commit every example and every snippet of
docs/WORKFLOWS.md calls the reusable workflows at. The end-to-end test runs the example Thunder
caller as GitHub would: its bench run (the artifact bench-package.yml would upload, from the
recorded demo pair 06f650c8 -> 9dc51696, with bench-package's own metadata step run for real),
its PR-event recorder on the merge and on a `/perfbot ack` comment (the example's own copy, its
`if:` and script run), and, after each run, the poster workflows that run's name starts: the
example's perfbot-post.yml, calling post-results.yml of this tree with the example's inputs,
the example's perfbot.toml served from the caller's default branch.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from attack_world import (
    ACTIONS_LOGIN,
    BASE,
    FUSER,
    HEAD,
    ISSUES_LOGIN,
    ISSUES_TOKEN,
    READ_TOKEN,
    THUNDER,
    WRITE_TOKEN,
    payload,
    results_files,
)
from paths import REPO_ROOT
from poster_run import (
    Outcome,
    Tokens,
    called,
    interpolate,
    posters,
    run_caller,
    run_recorders,
)
from workflow_expr import evaluate_if, truthy
from workflow_rules import (
    EVENT,
    GATE_LABEL,
    VERSION_COMMENT,
    WORKFLOWS,
    check_comment_trigger_inert,
    check_no_expressions_in_run,
    check_no_pull_request_target,
    check_no_secrets_no_write,
    check_top_level_permissions,
    check_uses_pinned,
    git,
    jactionlint,
    jobs,
    load_workflow,
    outputs,
    run_step,
    shim,
    step_by_id,
    triggers,
    zizmor,
)

from bot.config import Config
from bot.github.fake import LocalGitHub, start_server
from bot.github.fake.actions import zip_of

EXAMPLES = REPO_ROOT / "examples"
#: The example caller of the reusable calibration (docs/CALIBRATION.md, "Onboarding a GPU kind").
CALIBRATE = "perfbot-calibrate.yml"
CALLERS = {"thunder": THUNDER, "fuser": FUSER}
DOC = REPO_ROOT / "docs" / "WORKFLOWS.md"
#: A reusable workflow of this repository, called: `uses: OWNER/NAME/.github/workflows/X@REF`.
CALL = re.compile(
    r"uses:\s*(?P<repo>[^/\s]+/[^/\s]+)/\.github/workflows/(?P<file>[\w.-]+)@(?P<ref>\S+)(?P<rest>.*)"
)


def pin() -> dict[str, str]:
    """examples/pin.env: KEY=VALUE lines, nothing else (a release rewrites them)."""
    lines = (EXAMPLES / "pin.env").read_text(encoding="utf-8").splitlines()
    assert all(re.fullmatch(r"[A-Z_]+=\S+", line) for line in lines), lines
    values = dict(line.split("=", 1) for line in lines)
    assert set(values) == {"PERFBOT_REPOSITORY", "PERFBOT_REF", "PERFBOT_VERSION"}
    return values


def example_workflows() -> list[Path]:
    return sorted(EXAMPLES.glob("*/.github/workflows/*.yml"))


def callers_of_ours() -> list[Path]:
    """The example workflows that call a reusable workflow of ours (the recorder is a copy)."""
    return [p for p in example_workflows() if p.name != EVENT]


# ----- one name, one pin -----


def test_the_pin_has_its_form_and_names_this_repository_as_its_config_does() -> None:
    """A released commit (a tag can move) and its release: the changelog's entry of that
    version names that commit. tests/test_release.py checks that the commit is on this
    repository's main line and offers every input and secret the examples pass."""
    p = pin()
    assert re.fullmatch(r"[0-9a-f]{40}", p["PERFBOT_REF"]) and p["PERFBOT_REF"] != "0" * 40
    assert re.fullmatch(r"v\d+\.\d+\.\d+", p["PERFBOT_VERSION"])
    changelog = (REPO_ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    entries = dict(
        re.findall(r"^## (v\d+\.\d+\.\d+)[^\n]*\n(.*?)(?=^## |\Z)", changelog, re.M | re.S)
    )
    assert p["PERFBOT_REF"] in entries.get(p["PERFBOT_VERSION"], ""), p
    repo = p["PERFBOT_REPOSITORY"]
    assert (REPO_ROOT / "asv.conf.json").read_text().count(f"https://github.com/{repo}") == 2
    inputs = triggers(load_workflow(WORKFLOWS / "bench-package.yml"))["workflow_call"]["inputs"]
    assert inputs["perfbot-repository"]["default"] == repo


@pytest.mark.parametrize(
    "path", [*callers_of_ours(), DOC], ids=lambda p: str(p.relative_to(REPO_ROOT))
)
def test_every_call_of_this_repository_is_at_the_pin(path: Path) -> None:
    """Each `uses:` of a reusable workflow of fusion-perfbot, in an example or a snippet of
    docs/WORKFLOWS.md, names the pin's repository and commit, with the version comment; each
    perfbot-repository and perfbot-ref given is the same. No other spelling of the name."""
    p = pin()
    text = path.read_text(encoding="utf-8")
    ours = ("bench-package.yml", "post-results.yml", "calibrate-package.yml")
    calls = [m for m in CALL.finditer(text) if m["file"] in ours]
    assert calls, f"{path.name} calls no reusable workflow of this repository"
    for m in calls:
        assert (m["repo"], m["ref"]) == (p["PERFBOT_REPOSITORY"], p["PERFBOT_REF"]), m[0]
        assert VERSION_COMMENT.match(m["rest"]) and p["PERFBOT_VERSION"] in m["rest"], m[0]
    # Quoted: YAML reads a commit of digits alone (or digits and one e) as a number.
    for key, want in (("perfbot-repository", "PERFBOT_REPOSITORY"), ("perfbot-ref", "PERFBOT_REF")):
        for given in re.findall(rf"^\s*{key}:\s*(\S+)", text, re.M):
            assert given in (p[want], f'"{p[want]}"'), f"{path.name}: {key}: {given}"
            assert key != "perfbot-ref" or given.startswith('"'), f"{path.name}: quote {key}"
    if path.suffix == ".yml":
        (job,) = jobs(load_workflow(path)).values()
        assert job["with"]["perfbot-ref"] == p["PERFBOT_REF"]
    assert "OWNER/fusion-perfbot" not in text


# ----- the examples: the rules, the recorder, the labels, the configuration -----


@pytest.mark.parametrize("caller", sorted(CALLERS))
def test_an_example_follows_the_workflow_rules_and_lists_what_it_needs(caller: str) -> None:
    root = EXAMPLES / caller
    flows = {p.name: load_workflow(p) for p in (root / ".github" / "workflows").glob("*.yml")}
    assert set(flows) == {"perfbot-bench.yml", EVENT, "perfbot-post.yml", CALIBRATE}
    for wf in flows.values():
        problems = check_top_level_permissions(wf) + check_no_pull_request_target(wf)
        problems += check_uses_pinned(wf) + check_no_expressions_in_run(wf)
        problems += check_comment_trigger_inert(wf)
        assert problems == [], (wf.path, problems)
    # The recorder is this repository's, unchanged: it holds nothing, and its label is the
    # acknowledge label of the configuration the poster reads.
    recorder = flows[EVENT]
    assert recorder.text == (WORKFLOWS / EVENT).read_text(encoding="utf-8")
    assert check_no_secrets_no_write(recorder) == []
    # The poster starts on both other workflows' names, and knows their files.
    poster_uses, poster = called(root / ".github/workflows/perfbot-post.yml")
    assert poster_uses.split("@")[0].endswith("/.github/workflows/post-results.yml")
    names = triggers(flows["perfbot-post.yml"])["workflow_run"]["workflows"]
    assert sorted(names) == sorted(str(flows[f].data["name"]) for f in ("perfbot-bench.yml", EVENT))
    assert poster["with"]["bench-workflow-path"] == ".github/workflows/perfbot-bench.yml"
    assert poster["with"]["event-workflow-path"] == f".github/workflows/{EVENT}"
    assert poster["with"]["config-path"] == "perfbot.toml" and (root / "perfbot.toml").is_file()
    # GitHub gives a called job no more than the caller's job grants: all that post-results asks.
    ours = load_workflow(WORKFLOWS / "post-results.yml")
    rank = {"none": 0, "read": 1, "write": 2}
    for job in jobs(ours).values():
        for scope, level in job["permissions"].items():
            assert rank[level] <= rank[poster["permissions"].get(scope, "none")], scope
    # The calibration caller: a dispatch only (the reusable workflow gates on the default
    # branch), read scope alone, the inputs the reusable workflow takes.
    calibrate_uses, calibrate = called(root / f".github/workflows/{CALIBRATE}")
    assert calibrate_uses.split("@")[0].endswith("/.github/workflows/calibrate-package.yml")
    assert set(triggers(flows[CALIBRATE])) == {"workflow_dispatch"}
    assert calibrate["permissions"] == {"contents": "read"} and "secrets" not in calibrate
    bench_uses, bench = called(root / ".github/workflows/perfbot-bench.yml")
    assert bench_uses.split("@")[0].endswith("/.github/workflows/bench-package.yml")
    assert bench["with"]["repository"] == "${{ github.repository }}"  # a fork measures itself
    # Its first comment says whose runners it runs on: the caller's own, never this project's.
    header = flows["perfbot-bench.yml"].text.split("\nname:")[0]
    said = " ".join(line.lstrip("#").strip() for line in header.splitlines())
    assert "on THIS repository's own self-hosted GPU runner" in said
    assert "fusion-perfbot's self-hosted" not in said
    # The runners are the caller's own: the line is there to edit, bench-package's default.
    default = triggers(load_workflow(WORKFLOWS / "bench-package.yml"))["workflow_call"]
    assert json.loads(bench["with"]["runners"]) == json.loads(
        default["inputs"]["runners"]["default"]
    )
    assert f"github.event.label.name == '{GATE_LABEL}'" in bench["if"]
    # The labels to create: the gate, the acknowledgement, the alert issues'.
    config = Config.from_env({}, REPO_ROOT / "perfbot.toml", root / "perfbot.toml", CALLERS[caller])
    assert re.findall(
        r"github\.event\.label\.name == '([^']*)'", str(jobs(recorder)["record"]["if"])
    ) == [config.alerts.ack_label]
    listed = [
        line
        for line in (root / "labels.txt").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert sorted(listed) == sorted({GATE_LABEL, config.alerts.ack_label, config.issue_label})


@pytest.mark.parametrize("caller", sorted(CALLERS))
def test_an_example_is_clean_for_the_linters_as_its_own_repository(
    caller: str, tmp_path: Path
) -> None:
    """jactionlint (every workflow_run name must be a workflow of the repository, so the
    example is linted as a repository of its own) and zizmor, pedantic and auditor: nothing."""
    root = tmp_path / caller
    shutil.copytree(EXAMPLES / caller, root)
    shutil.copy2(REPO_ROOT / ".github" / "actionlint.yaml", root / ".github" / "actionlint.yaml")
    git(root, "init", "-q")
    assert jactionlint(root) == (0, [])
    assert zizmor(root, "--persona=pedantic", ".github/workflows") == (0, [])
    assert zizmor(root, "--persona=auditor", ".github/workflows") == (0, [])


def _read_config(
    tmp_path: Path, config_path: str, answer: str, perfbot: str = "fusion-perfbot/fusion-perfbot"
) -> tuple[Any, dict[str, str]]:
    """post-results' caller-config step, `gh` answering `answer` (a shell snippet), called from
    Lightning-AI/lightning-thunder with `perfbot` as its perfbot-repository input."""
    step = step_by_id(load_workflow(WORKFLOWS / "post-results.yml"), "caller-config")
    env = {
        "PATH": shim(tmp_path, "gh", answer),
        "GH_TOKEN": "t",
        "GITHUB_REPOSITORY": THUNDER,
        "PERFBOT_REPOSITORY": perfbot,
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "CONFIG_PATH": config_path,
        "DEFAULT_BRANCH": "main",
        "CONFIG_DIR": str(tmp_path / "config"),
    }
    return run_step(step, tmp_path, env), outputs(tmp_path / "out")


def test_the_poster_reads_the_callers_file_of_the_default_branch_or_stops(tmp_path: Path) -> None:
    """The path is a plain one; the file the default branch's (ref=), a file of at most 64 KiB;
    anything else is exit 2, the bot never started."""
    good = '{"type": "file", "encoding": "base64", "size": 9, "content": "W2FsZXJ0c10K\\n"}'
    proc, out = _read_config(tmp_path, "perfbot.toml", f"echo '{good}'")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert Path(out["path"]).read_text() == "[alerts]\n"
    assert (tmp_path / "gh.calls").read_text().split() == [
        "api",
        f"repos/{THUNDER}/contents/perfbot.toml?ref=main",
    ]
    dir_answer = '{"type": "dir", "encoding": "base64", "size": 1, "content": ""}'
    big = '{"type": "file", "encoding": "base64", "size": 70000, "content": ""}'
    for n, (path, answer) in enumerate(
        [
            ("../secrets.toml", f"echo '{good}'"),
            ("/etc/passwd", f"echo '{good}'"),
            ("perfbot.toml?ref=pr", f"echo '{good}'"),
            ("perfbot.toml", "exit 1"),  # no such file on the default branch
            ("perfbot.toml", f"echo '{dir_answer}'"),
            ("perfbot.toml", f"echo '{big}'"),
        ]
    ):
        case = tmp_path / f"bad-{n}"
        case.mkdir()
        proc, out = _read_config(case, path, answer)
        assert proc.returncode == 2 and "::error::" in proc.stdout, (path, proc.stdout)
        assert out == {}, path


def test_a_caller_must_name_its_perfbot_toml_where_this_repository_need_not(
    tmp_path: Path,
) -> None:
    """Called from another repository without config-path, the poster stops (exit 2) before
    the bot: the caller's file names where its alerts are filed, and the bot's own default
    (NVIDIA/Fuser and Lightning-AI/lightning-thunder) is never a caller's choice. This
    repository's own poster (no perfbot-repository input, or its own name) reads its own."""
    proc, out = _read_config(tmp_path, "", "exit 1")
    assert proc.returncode == 2 and "pass config-path" in proc.stdout, proc.stdout
    assert out == {} and not (tmp_path / "gh.calls").exists()
    for n, own in enumerate(("", THUNDER, THUNDER.upper())):
        case = tmp_path / f"own-{n}"
        case.mkdir()
        proc, out = _read_config(case, "", "exit 1", perfbot=own)
        assert proc.returncode == 0 and out == {}, proc.stdout + proc.stderr


# ----- the Thunder caller, end to end -----


class Caller:
    """The fake GitHub seeded as `repo` (Lightning-AI/lightning-thunder, or a fork of it) with
    the example's files: the caller's checkout at `root` (its workflows), its perfbot.toml on
    the default branch. NVIDIA/Fuser and Lightning-AI/lightning-thunder exist beside it, and
    the issues token reaches every repository (a classic PAT's `public_repo`)."""

    def __init__(self, fake: LocalGitHub, root: Path, tmp: Path, repo: str = THUNDER) -> None:
        self.fake, self.root, self.tmp, self.runs, self.repo = fake, root, tmp, 0, repo
        state = fake.state
        for name in dict.fromkeys((THUNDER, FUSER, repo)):
            state.add_repo(name)
        state.add_user(ACTIONS_LOGIN, type="Bot")
        state.add_token(
            READ_TOKEN, ACTIONS_LOGIN, repos=[self.repo], read_only=True, can_read_user=False
        )
        state.add_token(WRITE_TOKEN, ACTIONS_LOGIN, repos=[self.repo], can_read_user=False)
        state.add_user(ISSUES_LOGIN, token=ISSUES_TOKEN, type="Bot")
        state.actions.set_role(self.repo, "maintainer", "maintain")
        state.actions.set_role(self.repo, "contributor", "write")
        if (root / "perfbot.toml").is_file():
            state.put_file(self.repo, "perfbot.toml", (root / "perfbot.toml").read_bytes())
        self.pr = state.add_pull_request(
            self.repo, "a faster backward", author="contributor", head_ref="fast-bwd", head_sha=HEAD
        )
        state.pulls.descend(self.repo, BASE, HEAD)
        self.outcomes: list[Outcome] = []

    def _post(self, run: Any) -> None:
        """Every poster workflow of the caller that this run's completion starts."""
        for poster in posters(self.root, run.name):
            self.runs += 1
            outcome = run_caller(
                poster,
                REPO_ROOT,
                self.fake.base_url,
                self.fake.web_url,
                self.repo,
                payload(run),
                Tokens(READ_TOKEN, WRITE_TOKEN, ISSUES_TOKEN),
                self.tmp / f"poster-{self.runs}",
            )
            self.outcomes.append(outcome)

    def bench(self) -> None:
        """The PR opened: the example's bench job runs (its gate lets a same-repository PR
        through) and uploads what bench-package.yml uploads; the runs it starts post."""
        wf = load_workflow(self.root / ".github/workflows/perfbot-bench.yml")
        (job,) = jobs(wf).values()
        event = {
            "action": "opened",
            "pull_request": {"number": self.pr.number, "head": {"repo": {"full_name": self.repo}}},
        }
        github = {"event_name": "pull_request", "event": event, "repository": self.repo}
        assert truthy(evaluate_if(str(job["if"]), {"github": github}))
        package = load_workflow(WORKFLOWS / "bench-package.yml")
        runner = "gpu-h200"  # bench-package's default runners: '["gpu-h200"]'
        assert self.pr.pull is not None
        run = self.fake.state.actions.add_run(
            self.repo,
            head_sha=HEAD,
            head_branch=self.pr.pull.head_ref,
            path=".github/workflows/perfbot-bench.yml",
            name=str(wf.data["name"]),
            triggering_actor="contributor",
        )
        work = self.tmp / "bench"
        work.mkdir(parents=True)
        env = {
            "PR_NUMBER": str(self.pr.number),
            "PR_HEAD_SHA": HEAD,
            "BASE_SHA": BASE,
            "HEAD_SHA": HEAD,
            "RUN_ID": str(run.id),
            "RUNNER_LABEL": runner,
        }
        proc = run_step(step_by_id(package, "write-meta"), work, env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        steps = jobs(package)["bench"]["steps"]
        upload = next(s for s in steps if "upload-artifact" in str(s.get("uses")))
        name = interpolate(upload["with"]["name"], {"matrix": {"runner": runner}})
        files = {**results_files(), "bench-meta.json": (work / "bench-meta.json").read_bytes()}
        self.fake.state.actions.add_artifact(run, name, zip_of(files))
        self._post(run)

    def event(self, event_name: str, event: dict[str, Any]) -> None:
        """A PR event: each workflow of the caller it starts runs (the recorder), and each
        such run, with its artifacts, starts the posters that list its name."""
        for recorded in run_recorders(self.root, event_name, event, self.repo, self.tmp / "rec"):
            if not recorded.artifacts:
                continue  # its job was skipped: a run that starts no poster post
            run = self.fake.state.actions.add_run(
                self.repo,
                head_sha="e" * 40,
                path=recorded.path,
                name=recorded.name,
                event=event_name,
                triggering_actor="maintainer",
            )
            for name, files in recorded.artifacts.items():
                self.fake.state.actions.add_artifact(run, name, zip_of(files))
            self._post(run)

    def merge(self) -> None:
        self.fake.state.pulls.finish(self.repo, self.pr.number, merged=True, by="maintainer")
        pull = {"number": self.pr.number, "merged": True}
        self.event("pull_request", {"action": "closed", "pull_request": pull})

    def comment(self, body: str, by: str) -> None:
        self.fake.state.add_comment(self.repo, self.pr.number, body, author=by)
        issue = {"number": self.pr.number, "pull_request": {"url": "https://example/pulls/1"}}
        self.event(
            "issue_comment", {"action": "created", "issue": issue, "comment": {"body": body}}
        )

    # what the caller's repositories hold
    def alerts(self, repo: str) -> list[Any]:
        return [i for i in self.fake.state.issues(repo) if i.pull is None]

    def comments(self) -> int:
        found = self.fake.state.comments_on(self.repo, self.pr.number)
        return len([c for c in found if c.author == ACTIONS_LOGIN])

    def status(self) -> Any:
        found = [s for s in self.fake.state.pulls.statuses if s.repo == self.repo and s.sha == HEAD]
        return found[-1] if found else None


def _thunder(
    tmp_path: Path, fake: LocalGitHub, drop: str | None = None, repo: str = THUNDER
) -> Caller:
    """The example Thunder caller, copied as a repository would copy it (less `drop`)."""
    root = tmp_path / "lightning-thunder"
    shutil.copytree(EXAMPLES / "thunder", root)
    if drop is not None:
        (root / drop).unlink()
    return Caller(fake, root, tmp_path, repo)


def test_the_thunder_caller_files_its_alert_at_merge_and_reads_an_acknowledgement(
    tmp_path: Path,
) -> None:
    """Open: the comment and a failure status, no issue (open_on = "merge", the example's
    perfbot.toml). Merged: the recorder's run starts the poster, which files the alert in
    lightning-thunder alone (Thunder's build changed; nvFuser's did not), labelled with the
    example's [issues] label, read through config-path from the default branch. A maintainer's
    `/perfbot ack`: the recorder again, and the poster closes the issue as not planned and the
    status turns acknowledged."""
    with start_server() as fake:
        caller = _thunder(tmp_path, fake)
        caller.bench()
        assert [o.failed for o in caller.outcomes] == [None], caller.outcomes[0].log
        assert caller.runs == 1 and caller.comments() == 1
        assert caller.status().state == "failure"
        assert caller.alerts(THUNDER) == [] and caller.alerts(FUSER) == []

        caller.merge()
        assert caller.runs == 2, "the merge started no poster: is the PR-event recorder there?"
        (alert,) = caller.alerts(THUNDER)
        assert caller.alerts(FUSER) == []  # an unchanged side is the run's control
        assert alert.state == "open" and "perfbot-regression" in alert.labels
        assert "perf-regression-bot" not in alert.labels  # the built-in label: not read
        assert caller.comments() == 1  # the same comment, updated

        caller.comment("lgtm", by="maintainer")  # starts no recorder job: no poster
        assert caller.runs == 2
        caller.comment("/perfbot ack the unfused backward is intended", by="maintainer")
        assert caller.runs == 3
        assert [o.failed for o in caller.outcomes] == [None] * 3, caller.outcomes[-1].log
        (alert,) = caller.alerts(THUNDER)
        assert alert.state == "closed" and alert.state_reason == "not_planned"
        status = caller.status()
        assert status.state == "success" and "acknowledged" in (status.description or "")
        # What the poster read: the caller's file, from the default branch, through the input.
        reads = [r for r in fake.state.requests if "/contents/" in r.path]
        assert reads and all(r.path.endswith("/contents/perfbot.toml") for r in reads)
        assert all(r.query.get("ref") == ["main"] for r in reads)


FORK = "example-org/lightning-thunder"


def test_a_fork_trial_of_the_example_files_in_the_fork_and_nowhere_else(tmp_path: Path) -> None:
    """ADOPT's first run: the Thunder example copied as it is into a fork. The issues token
    reaches every repository (a classic PAT), yet the alert filed at merge is the fork's
    alone: the example's `[issues] repos = ["self"]`. The same fork with a perfbot.toml that
    names no repository stops at exit 2 and files nothing; naming upstream is a choice the
    file makes, and then the alert goes there (so this test can tell the two apart)."""
    with start_server() as fake:
        caller = _thunder(tmp_path / "trial", fake, repo=FORK)
        caller.bench()
        caller.merge()
        assert [o.failed for o in caller.outcomes] == [None, None], caller.outcomes[-1].log
        (alert,) = caller.alerts(FORK)
        assert alert.state == "open" and "perfbot-regression" in alert.labels
        assert caller.alerts(THUNDER) == [] and caller.alerts(FUSER) == []
    for text, upstream in (
        ('[issues]\nlabel = "perfbot-regression"\n', 0),
        (f'[issues]\nrepos = ["{THUNDER}"]\n', 1),
    ):
        with start_server() as fake:
            caller = _thunder(tmp_path / f"config-{upstream}", fake, repo=FORK)
            fake.state.put_file(FORK, "perfbot.toml", text.encode())
            caller.bench()
            caller.merge()
            if not upstream:
                assert {(o.failed, o.rc) for o in caller.outcomes} == {("post/bot", 2)}
                assert "which this file does not name" in caller.outcomes[0].log
            assert len(caller.alerts(THUNDER)) == upstream
            assert caller.alerts(FORK) == [] and caller.alerts(FUSER) == []


def test_without_the_recorder_a_merge_files_nothing_and_no_ack_is_read(tmp_path: Path) -> None:
    """Why the example carries perfbot-pr-event.yml (and the test above fails without it):
    the bench run posts, and then nothing starts the poster again."""
    with start_server() as fake:
        caller = _thunder(tmp_path, fake, drop=f".github/workflows/{EVENT}")
        caller.bench()
        caller.merge()
        caller.comment("/perfbot ack intended", by="maintainer")
        assert caller.runs == 1 and caller.alerts(THUNDER) == [] and caller.alerts(FUSER) == []
        assert caller.status().state == "failure"


def test_a_caller_config_that_sets_a_refused_key_stops_the_poster_with_exit_2(
    tmp_path: Path,
) -> None:
    """The caller's file is checked before anything is posted: a [github] login in it (whose
    comments would pass for the bot's) is refused, exit 2, and the poster sets the error
    status and nothing else."""
    with start_server() as fake:
        caller = _thunder(tmp_path, fake)
        fake.state.put_file(THUNDER, "perfbot.toml", b'[github]\ncomment_login = "mallory"\n')
        caller.bench()
        (outcome,) = caller.outcomes
        assert (outcome.failed, outcome.rc) == ("post/bot", 2), outcome.log
        assert "[github] may not be set by a caller" in outcome.log
        assert caller.comments() == 0 and caller.alerts(THUNDER) == []
        assert caller.status().state == "error"

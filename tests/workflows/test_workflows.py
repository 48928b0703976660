"""The GitHub workflows stay safe against fork pull requests (docs/WORKFLOWS.md).

The linters (jactionlint, zizmor, check-jsonschema) catch the generic mistakes; the rules in
workflow_rules.py pin down the properties this project's trust model rests on, and which no
linter knows: which events may reach the self-hosted GPU runner, where secrets may appear, and
what the privileged poster may check out. Each rule holds on every real workflow, and each has a
negative test here that feeds it a small bad workflow, so none of them can pass by checking
nothing. The step scripts that handle untrusted data are run for real (bash, python, git),
extracted from the workflow files, so the tests follow any edit to them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bench_run import BASE, HEAD, bench
from workflow_expr import ExpressionError, evaluate_if, truthy
from workflow_rules import (
    BENCH,
    CALIBRATE,
    CALIBRATE_PACKAGE,
    CI,
    EVENT,
    FORK,
    GATE_LABEL,
    NIGHTLY,
    OUR_REPO,
    POSTER,
    REPO,
    RULES,
    SITE,
    UNPRIVILEGED,
    UNTRUSTED_EVENTS,
    WORKFLOWS,
    Scenario,
    Workflow,
    check_checkout_credentials,
    check_checks_out_nothing,
    check_comment_trigger_inert,
    check_jsonschema,
    check_no_expressions_in_run,
    check_no_github_env,
    check_no_pull_request_target,
    check_no_secrets_no_write,
    check_privileged_checkout_is_default_branch,
    check_secrets_only_in_step_env,
    check_self_hosted_gated,
    check_timeouts,
    check_top_level_permissions,
    check_uses_pinned,
    git,
    iter_steps,
    jactionlint,
    jobs,
    load_workflow,
    outputs,
    pr_event,
    run_step,
    runs_on_self_hosted,
    shim,
    step_by_id,
    triggers,
    zizmor,
)

# ----- the rules on the real workflows -----

ALL = sorted(p.name for p in WORKFLOWS.glob("*.yml"))


def test_a_steps_python_is_the_tests_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A step's `python` and `python3` run the interpreter these tests run under, also where
    the first of them on the machine's PATH is another one (issue 38: a fresh machine)."""
    other = tmp_path / "other"
    other.mkdir()
    for name in ("python", "python3"):
        (other / name).write_text("#!/bin/sh\necho another\n")
        (other / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{other}{os.pathsep}{os.environ['PATH']}")
    step = {"run": 'python -c "import sys; print(sys.executable)"; python3 -c "print(1)"'}
    done = run_step(step, tmp_path, {})
    assert done.stdout.split() == [sys.executable, "1"], done.stdout + done.stderr
    shimmed = run_step(step, tmp_path, {"PATH": shim(tmp_path, "python", "echo shim")})
    assert shimmed.stdout.split()[0] == "shim"  # a test's own shim still comes first


def test_ci_runs_the_oldest_and_the_newest_python_the_project_claims() -> None:
    from bot.config_read import tomllib  # tomli on 3.10

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    claimed = sorted(
        (c.rsplit(":: ", 1)[1] for c in project["classifiers"] if "Python :: 3." in c),
        key=lambda v: tuple(map(int, v.split("."))),
    )
    assert project["requires-python"] == f">={claimed[0]}"
    matrix = load_workflow(WORKFLOWS / CI).data["jobs"]["test"]["strategy"]["matrix"]["python"]
    assert list(matrix) == [claimed[0], claimed[-1]]


def test_the_workflows_exist() -> None:
    assert {BENCH, "bench-package.yml", POSTER, SITE, CI, NIGHTLY, EVENT, CALIBRATE} <= set(ALL)
    assert CALIBRATE_PACKAGE in ALL
    assert not list(WORKFLOWS.glob("*.yaml")), "use .yml, so every check here sees the file"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.__name__)
@pytest.mark.parametrize("name", ALL)
def test_rule_holds(rule: Callable[[Workflow], list[str]], name: str) -> None:
    assert rule(load_workflow(WORKFLOWS / name)) == []


@pytest.mark.parametrize("name", UNPRIVILEGED)
def test_unprivileged_workflows_hold_no_secret_and_no_write_token(name: str) -> None:
    assert check_no_secrets_no_write(load_workflow(WORKFLOWS / name)) == []


def test_the_pr_event_recorder_checks_nothing_out() -> None:
    assert check_checks_out_nothing(load_workflow(WORKFLOWS / EVENT)) == []


def test_bench_gate_lets_trusted_events_through() -> None:
    """The other half of the gate: it must not be so tight that nothing ever runs."""
    (job,) = jobs(load_workflow(WORKFLOWS / BENCH)).values()
    assert runs_on_self_hosted(job)

    def runs(scenario: Scenario) -> bool:
        return truthy(evaluate_if(job["if"], {"github": scenario.github}))

    for action in ("opened", "synchronize", "reopened"):
        assert runs(pr_event(action, OUR_REPO))
    assert runs(pr_event("labeled", FORK, GATE_LABEL))
    assert runs(pr_event("labeled", OUR_REPO, GATE_LABEL))  # a maintainer's re-run
    assert not runs(pr_event("labeled", OUR_REPO, "documentation"))  # no duplicate run


def test_runs_the_gate_skips_cancel_nothing() -> None:
    """The workflow's concurrency group: a run the gate lets through shares the PR's group (a
    new push cancels the old run); a run it skips (a fork's push after the label, another label)
    has a group of its own, so it cannot cancel the maintainer-labelled run in progress."""
    wf = load_workflow(WORKFLOWS / BENCH)
    (job,) = jobs(wf).values()

    def group(scenario: Scenario) -> str:
        github = {**scenario.github, "run_id": 99}
        return str(evaluate_if(wf.data["concurrency"]["group"], {"github": github}))

    def gated(scenario: Scenario) -> bool:
        return truthy(evaluate_if(job["if"], {"github": scenario.github}))

    trusted = [pr_event("synchronize", OUR_REPO), pr_event("labeled", FORK, GATE_LABEL)]
    for scenario in trusted:
        assert gated(scenario) and group(scenario) == "bench-pr-7"
    for scenario in [s for s in UNTRUSTED_EVENTS if s.github["event_name"] == "pull_request"]:
        assert not gated(scenario) and group(scenario) == "bench-pr-7-ignored-99", scenario.name


def test_package_bench_gate_holds_for_any_caller() -> None:
    """bench-package.yml is called from Thunder's and Fuser's workflows: its own gate sees the
    caller's event, so a caller without a gate still cannot put a fork's code on the GPU."""
    (job,) = jobs(load_workflow(WORKFLOWS / "bench-package.yml")).values()
    assert runs_on_self_hosted(job)

    def runs(scenario: Scenario) -> bool:
        return truthy(evaluate_if(job["if"], {"github": scenario.github}))

    upstream = "Lightning-AI/lightning-thunder"

    def upstream_event(action: str, head: str, label: str | None = None) -> Scenario:
        event = pr_event(action, head, label)
        return Scenario(event.name, {**event.github, "repository": upstream})

    assert runs(upstream_event("opened", upstream))
    assert runs(upstream_event("labeled", FORK, GATE_LABEL))
    assert not runs(upstream_event("opened", FORK))
    assert not runs(upstream_event("labeled", FORK, "bug"))
    for event_name in ("workflow_dispatch", "schedule"):
        assert runs(Scenario(event_name, {"repository": upstream, "event_name": event_name}))
    for event_name in ("pull_request_target", "issue_comment", "push"):
        assert not runs(Scenario(event_name, {"repository": upstream, "event_name": event_name}))


PACKAGE_INPUTS = {
    "PACKAGE": "thunder",
    "PACKAGE_REPOSITORY": "Lightning-AI/lightning-thunder",
    "PERFBOT_REPOSITORY": "fusion-perfbot/fusion-perfbot",
    "PERFBOT_REF": "c" * 40,
    "SIZE_SET": "pr",
    "REPEATS": "2",
    "RUNNER_LABEL": "gpu-h200",
    "SOURCE_SUBDIRECTORY": "",
    "BASE_INPUT": "lightning-thunder==0.2.6",
    "HEAD_INPUT": "a" * 40,
}


@pytest.mark.parametrize(
    "bad",
    [
        {"PACKAGE": "torch"},
        {"PACKAGE_REPOSITORY": "a/b/c"},
        {"PERFBOT_REF": "main"},
        {"SIZE_SET": "all"},
        {"REPEATS": "0"},
        {"RUNNER_LABEL": "::error::x"},
        {"HEAD_INPUT": "x; curl evil"},
        {"BASE_INPUT": "$(id)"},
        {"SOURCE_SUBDIRECTORY": "../x y"},
    ],
    ids=lambda b: next(iter(b)),
)
def test_package_bench_refuses_bad_inputs(tmp_path: Path, bad: dict[str, str]) -> None:
    step = step_by_id(load_workflow(WORKFLOWS / "bench-package.yml"), "inputs")
    assert run_step(step, tmp_path, PACKAGE_INPUTS).returncode == 0
    proc = run_step(step, tmp_path, {**PACKAGE_INPUTS, **bad})
    assert proc.returncode == 1 and "::error::" in proc.stdout


def test_package_bench_turns_commits_into_git_specs(tmp_path: Path) -> None:
    """Outside a PR (both sides given), a commit becomes git+URL@sha (with the subdirectory
    for nvFuser's python package) and a spec passes through."""
    step = step_by_id(load_workflow(WORKFLOWS / "bench-package.yml"), "specs")
    out = tmp_path / "out"
    env = {**PACKAGE_INPUTS, "PR_BASE_SHA": "", "PR_HEAD_SHA": "", "GITHUB_OUTPUT": str(out)}
    assert run_step(step, tmp_path, env).returncode == 0
    url = "https://github.com/Lightning-AI/lightning-thunder"
    assert outputs(out) == {"base": "lightning-thunder==0.2.6", "head": f"git+{url}@{'a' * 40}"}
    out.unlink()
    env = {**env, "SOURCE_SUBDIRECTORY": "python", "BASE_INPUT": ""}
    proc = run_step(step, tmp_path, env)
    assert proc.returncode == 1 and "no base or head" in proc.stdout
    env["BASE_INPUT"] = "b" * 40
    assert run_step(step, tmp_path, env).returncode == 0
    assert outputs(out)["base"] == f"git+{url}@{'b' * 40}#subdirectory=python"
    # In a PR, a head given as a spec has no merge-base: said, before any git call.
    out.unlink()
    env = {**env, "BASE_INPUT": "", "HEAD_INPUT": "nvfuser-cu130-torch210==0.2.36.dev20260301"}
    proc = run_step(step, tmp_path, {**env, "PR_BASE_SHA": "d" * 40})
    assert proc.returncode == 1 and "give base too" in proc.stdout


@pytest.mark.parametrize(("given", "flag"), [("true", "--turns"), ("false", "--no-turns")])
def test_package_bench_takes_turns_unless_told_not_to(given: str, flag: str) -> None:
    """The input `turns` is true by default (the catalog's job held an H100 155.3 s in turns
    against 401.0 s one at a time, docs/PERFORMANCE.md), and the bench step passes it on: its
    own lines that choose the flag, run as written."""
    wf = load_workflow(WORKFLOWS / "bench-package.yml")
    turns = triggers(wf)["workflow_call"]["inputs"]["turns"]
    assert turns["type"] == "boolean" and turns["default"] is True
    run = step_by_id(wf, "bench")["run"]
    choose = re.search(r"^ *turns=\(--turns\)\n.*?\bfi$", run, re.MULTILINE | re.DOTALL)
    assert choose is not None and '"${turns[@]}"' in run
    script = choose[0] + '\necho "${turns[@]}"'
    done = subprocess.run(
        ["bash", "-c", script], env={"TURNS": given}, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == [flag]


def test_bench_checks_out_the_commit_of_the_event_and_cancels_per_pr() -> None:
    """The label vouches for the head the maintainer saw, not for what is pushed later."""
    wf = load_workflow(WORKFLOWS / BENCH)
    (job,) = jobs(wf).values()
    checkouts = [s for _, s in iter_steps(wf) if str(s.get("uses")).startswith("actions/checkout@")]
    (checkout,) = [s for s in checkouts if "path" not in s["with"]]
    assert checkout["with"]["ref"] == "${{ github.event.pull_request.head.sha }}"
    # The other checkout: the base's helper scripts only (the GPU lock, the launcher of the
    # job's turns), in a folder aside.
    (helpers,) = [s for s in checkouts if "path" in s["with"]]
    assert helpers["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert helpers["with"]["sparse-checkout"].split() == [".github/scripts", "benchmarks/engine"]
    assert job["permissions"] == {"contents": "read"}
    # A new push cancels the PR's run (workflow level); the GPU job queues per runner group
    # and is never cancelled by another PR's run (job level).
    assert "github.event.pull_request.number" in wf.data["concurrency"]["group"]
    assert wf.data["concurrency"]["cancel-in-progress"] is True
    assert job["concurrency"]["group"] == "perfbot-gpu-${{ matrix.runner }}"
    assert job["concurrency"]["cancel-in-progress"] is False
    assert job["concurrency"]["queue"] == "max"


def test_poster_permissions_and_secret_placement() -> None:
    wf = load_workflow(WORKFLOWS / POSTER)
    assert set(triggers(wf)) == {"workflow_run", "workflow_call"}
    assert triggers(wf)["workflow_run"] == {
        "workflows": ["bench-pr", "perfbot-pr-event"],
        "types": ["completed"],
    }
    call = triggers(wf)["workflow_call"]
    assert set(call["inputs"]) == {
        "bench-workflow-path",
        "event-workflow-path",
        "perfbot-repository",
        "perfbot-ref",
        "config-path",
    }
    # A caller's perfbot.toml: none by default (the bot's own alone).
    assert call["inputs"]["config-path"]["default"] == ""
    assert call["inputs"]["bench-workflow-path"]["default"] == ".github/workflows/bench-pr.yml"
    assert call["inputs"]["event-workflow-path"]["default"] == f".github/workflows/{EVENT}"
    assert set(call["secrets"]) == {"PERFBOT_ISSUES_TOKEN"}
    check, post = jobs(wf)["check"], jobs(wf)["post"]
    assert check["runs-on"].startswith("ubuntu-") and post["runs-on"].startswith("ubuntu-")
    # The job that downloads and unpacks the PR run's artifact can write nothing, holds no
    # secret and no environment; the job that writes downloads only what the first handed on.
    assert check["permissions"] == {
        "actions": "read",
        "contents": "read",
        "pull-requests": "read",
    }
    assert "environment" not in check and "secrets" not in json.dumps(check)
    assert post["permissions"] == {
        "contents": "read",
        "issues": "write",
        "pull-requests": "write",
        "statuses": "write",
    }
    assert post["needs"] == "check" and post["environment"] == "perfbot"
    assert post["concurrency"]["cancel-in-progress"] is False
    assert post["concurrency"]["group"] == "post-results-${{ github.repository }}"
    users = [s for _, s in iter_steps(wf) if "PERFBOT_ISSUES_TOKEN" in json.dumps(s)]
    assert [s.get("id") for s in users] == ["bot"]


def test_poster_checks_before_it_trusts_and_installs_by_hash() -> None:
    """check: (a PR event: the event run, its number, the PR's newest verified bench run; a
    bench run: the run alone, verified) -> fetch-artifact (limits) -> metadata -> fresh ->
    verify-run with the PR -> hand-over; post: the hand-over alone -> bot."""
    wf = load_workflow(WORKFLOWS / POSTER)
    ids = {job: [s.get("id") for s in j["steps"] if s.get("id")] for job, j in jobs(wf).items()}
    assert ids == {
        "check": [
            *("install", "event", "event-meta", "target"),
            *("fetch", "meta", "fresh", "verify"),
        ],
        # caller-config: a caller's perfbot.toml from its default branch, before the bot
        "post": ["install-poster", "caller-config", "bot", "status"],
    }
    uses = {
        job: [s.get("uses", "").split("@")[0] for s in j["steps"]] for job, j in jobs(wf).items()
    }
    # The PR run's artifact is fetched by the bot's own fetch-artifact, never by the download
    # action (which unpacks anything), and only in the job that can write nothing.
    assert "actions/download-artifact" not in uses["check"]
    assert "python -m bot fetch-artifact" in step_by_id(wf, "fetch")["run"]
    assert "actions/upload-artifact" in uses["check"]
    (handover,) = [s for s in jobs(wf)["check"]["steps"] if "upload-artifact" in s.get("uses", "")]
    assert handover["if"] == "${{ steps.verify.outputs.trusted == 'true' }}"
    assert handover["with"]["name"] == "perfbot-checked"
    (take,) = [s for s in jobs(wf)["post"]["steps"] if "download-artifact" in s.get("uses", "")]
    assert take["with"]["name"] == "perfbot-checked"  # this run's own, made by `check`
    assert "run-id" not in take["with"] and "github-token" not in take["with"]
    assert "python -m bot verify-run" in step_by_id(wf, "verify")["run"]
    assert 'echo "trusted=true" >> "$GITHUB_OUTPUT"' in step_by_id(wf, "verify")["run"]
    for _, step in iter_steps(wf):
        for line in str(step.get("run", "")).splitlines():
            if "pip install" in line:
                assert "--require-hashes" in line or "--no-deps" in line, line


def test_site_deploy_job_alone_can_write_pages() -> None:
    """Called by the nightly too (workflow_call): the caller's grant is a ceiling, and each job
    here narrows it: the build reads, the deploy alone writes Pages and runs no script."""
    wf = load_workflow(WORKFLOWS / SITE)
    assert set(triggers(wf)) == {"push", "workflow_dispatch", "workflow_call"}
    assert triggers(wf)["push"] == {"branches": ["main"]}
    build, deploy = jobs(wf)["build"], jobs(wf)["deploy"]
    assert build["permissions"] == {"contents": "read"}
    assert build["if"] == "${{ github.ref == 'refs/heads/main' }}"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert all("run" not in step for step in deploy["steps"])


# ----- each rule flags a bad workflow: one edit of a clean one -----

CLEAN = """on: pull_request
permissions: {}
jobs:
  t:
    runs-on: ubuntu-24.04
    timeout-minutes: 5
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          persist-credentials: false
"""
CHECKOUT_END = "persist-credentials: false\n"
Edit = tuple[str, str]
Rule = Callable[[Workflow], list[str]]


def add_step(step: str) -> Edit:
    return CHECKOUT_END, CHECKOUT_END + "      - " + step.replace("\n", "\n        ") + "\n"


def edited(tmp_path: Path, *edits: Edit) -> Workflow:
    text = CLEAN
    for old, new in edits:
        assert old in text, f"the edit {old!r} matches nothing: the test would prove nothing"
        text = text.replace(old, new)
    path = tmp_path / "bad.yml"
    path.write_text(text, encoding="utf-8")
    return load_workflow(path)


def test_the_clean_workflow_is_clean(tmp_path: Path) -> None:
    """So that each negative below is flagged for its one edit, not for something else."""
    wf = edited(tmp_path)
    assert [problem for rule in [*RULES, check_no_secrets_no_write] for problem in rule(wf)] == []


CHECKOUT_STEP = (
    "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2\n"
    "        with:\n          persist-credentials: false\n"
)
NO_CHECKOUT = (CHECKOUT_STEP, "      - run: echo recorded\n")
#: The clean workflow as an inert comment-triggered one: on issue_comment, nothing checked out.
INERT = [("on: pull_request\n", "on: issue_comment\n"), NO_CHECKOUT]
STEP_ENV_SECRET = "        env:\n          T: ${{ secrets.X }}\n"
ON_WORKFLOW_RUN = ("on: pull_request\n", "on:\n  workflow_run:\n    workflows: [x]\n")
REF_OF_THE_EVENT = "          ref: ${{ github.event.workflow_run.head_sha }}\n"
STEP_SECRET_IN_WITH = "uses: actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065 # v5\n"
NEGATIVES: dict[str, tuple[Rule, list[Edit]]] = {
    "no permissions": (check_top_level_permissions, [("permissions: {}\n", "")]),
    "read-all": (check_top_level_permissions, [("permissions: {}", "permissions: read-all")]),
    "pull_request_target": (
        check_no_pull_request_target,
        [("on: pull_request", "on: [push, pull_request_target]")],
    ),
    "tag": (check_uses_pinned, [("11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2", "v4")]),
    "no version comment": (check_uses_pinned, [(" # v4.2.2", "")]),
    "reusable by tag": (
        check_uses_pinned,
        [("    runs-on: ubuntu-24.04\n", "    uses: o/r/.github/workflows/x.yml@v1\n")],
    ),
    "token kept": (check_checkout_credentials, [("persist-credentials: false", "fetch-depth: 0")]),
    "title in run": (
        check_no_expressions_in_run,
        [add_step("run: echo ${{ github.event.pull_request.title }}")],
    ),
    "branch in block": (
        check_no_expressions_in_run,
        [add_step("run: |\n  ls\n  echo ${{\n    github.head_ref }}")],
    ),
    "no timeout": (check_timeouts, [("    timeout-minutes: 5\n", "")]),
    "env for later steps": (
        check_no_github_env,
        [add_step('run: echo "X=1" >> "$GITHUB_ENV"')],
    ),
    "secret in job env": (
        check_secrets_only_in_step_env,
        [("    steps:", "    env:\n      T: ${{ secrets.PERFBOT_ISSUES_TOKEN }}\n    steps:")],
    ),
    "secret in with": (
        check_secrets_only_in_step_env,
        [add_step(STEP_SECRET_IN_WITH + "with:\n  token: ${{ secrets.X }}")],
    ),
    "bench reads a secret": (
        check_no_secrets_no_write,
        [add_step("run: echo hi\nenv:\n  T: ${{ secrets.GITHUB_TOKEN }}")],
    ),
    "bench can write": (
        check_no_secrets_no_write,
        [("contents: read", "contents: read\n      pull-requests: write")],
    ),
    "bench inherits": (
        check_no_secrets_no_write,
        [("    permissions:\n      contents: read\n", "")],
    ),
    "poster checks out the head": (
        check_privileged_checkout_is_default_branch,
        [ON_WORKFLOW_RUN, (CHECKOUT_END, CHECKOUT_END + REF_OF_THE_EVENT)],
    ),
    "poster checks out the fork": (
        check_privileged_checkout_is_default_branch,
        [
            ON_WORKFLOW_RUN,
            (
                CHECKOUT_END,
                CHECKOUT_END
                + "          repository: "
                + "${{ github.event.workflow_run.head_repository.full_name }}\n",
            ),
        ],
    ),
    "poster fetches by hand": (
        check_privileged_checkout_is_default_branch,
        [ON_WORKFLOW_RUN, add_step('run: |\n  git fetch origin "$HEAD"\n  make')],
    ),
    "recorder checks out": (check_checks_out_nothing, []),
    "recorder clones": (
        check_checks_out_nothing,
        [NO_CHECKOUT, ("echo recorded", "git clone https://github.com/o/r")],
    ),
    "recorder fetches the PR": (
        check_checks_out_nothing,
        [NO_CHECKOUT, ("echo recorded", "gh pr checkout 7")],
    ),
    "comment workflow checks out": (
        check_comment_trigger_inert,
        [("on: pull_request\n", "on: issue_comment\n")],
    ),
    "comment workflow can write": (
        check_comment_trigger_inert,
        [*INERT, ("contents: read", "contents: read\n      statuses: write")],
    ),
    "comment workflow inherits": (
        check_comment_trigger_inert,
        [*INERT, ("    permissions:\n      contents: read\n", "")],
    ),
    "comment workflow reads a secret": (
        check_comment_trigger_inert,
        [*INERT, ("echo recorded\n", "echo recorded\n" + STEP_ENV_SECRET)],
    ),
    "comment workflow fetches": (
        check_comment_trigger_inert,
        [*INERT, ("echo recorded", "git fetch origin pull/7/head")],
    ),
    "self-hosted, no gate": (
        check_self_hosted_gated,
        [("runs-on: ubuntu-24.04", "runs-on: [self-hosted, linux, x64, gpu-h200]")],
    ),
    "runner group, no gate": (
        check_self_hosted_gated,
        [("runs-on: ubuntu-24.04", "runs-on:\n      group: gpus")],
    ),
}


def test_an_inert_comment_workflow_is_clean(tmp_path: Path) -> None:
    """What the negatives below edit: on issue_comment, nothing checked out, a read scope."""
    wf = edited(tmp_path, *INERT)
    rules = [*RULES, check_no_secrets_no_write, check_checks_out_nothing]
    assert [problem for rule in rules for problem in rule(wf)] == []


@pytest.mark.parametrize("case", NEGATIVES.values(), ids=NEGATIVES.keys())
def test_rule_flags_bad_workflow(tmp_path: Path, case: tuple[Rule, list[Edit]]) -> None:
    rule, edits = case
    assert rule(edited(tmp_path, *edits)) != []


SAME_REPO = "github.event.pull_request.head.repo.full_name == github.repository"
GATED = "    if: {}\n    runs-on: [self-hosted, linux, x64, gpu-h200]"
BAD_GATES = {
    "any label": "github.event.action == 'labeled'",
    "label survives pushes": "contains(github.event.pull_request.labels.*.name, 'run-gpu-bench')",
    "event name only": "github.event_name == 'pull_request'",
    "always-true text": f'"${{{{ {SAME_REPO} }}}} "',
    "always-true block": f"|\n      ${{{{ {SAME_REPO} }}}}",
}


@pytest.mark.parametrize("gate", BAD_GATES.values(), ids=BAD_GATES.keys())
def test_gate_check_flags_bad_gate(tmp_path: Path, gate: str) -> None:
    wf = edited(tmp_path, ("    runs-on: ubuntu-24.04", GATED.format(gate)))
    assert check_self_hosted_gated(wf) != []


def test_gate_check_flags_self_hosted_on_a_dangerous_trigger(tmp_path: Path) -> None:
    wf = edited(
        tmp_path,
        ("on: pull_request", "on: [pull_request, issue_comment]"),
        ("    runs-on: ubuntu-24.04", GATED.format(SAME_REPO)),
    )
    assert check_self_hosted_gated(wf) == ["t: self-hosted job on issue_comment"]


def test_evaluator_follows_github_semantics() -> None:
    ctx = {"github": {"a": "X", "n": None, "e": {"b": ""}, "l": [{"name": "a"}, {"name": "b"}]}}
    assert evaluate_if("${{ github.a == 'x' }}", ctx) is True  # strings ignore case
    assert evaluate_if("github.missing.deep == null", ctx) is True
    assert evaluate_if("github.e.b || 'fallback'", ctx) == "fallback"
    assert evaluate_if("github.a && github.n", ctx) is None
    assert evaluate_if("!(github.a != 'X') && 'it''s'", ctx) == "it's"
    assert evaluate_if("startsWith(github.a, 'x') && contains(github.l.*.name, 'B')", ctx)
    assert not evaluate_if("contains(github.l.*.name, 'c')", ctx)
    with pytest.raises(ExpressionError):
        evaluate_if("fromJSON(github.a)", ctx)


# ----- the real linters, on the real files and on a bad one -----

BAD_FOR_LINTERS = """on: pull_request
jobs:
  t:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@v4
      - run: echo "${{ github.event.pull_request.title }}"
"""


@pytest.fixture
def bad_repo(tmp_path: Path) -> Path:
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "bad.yml").write_text(BAD_FOR_LINTERS, encoding="utf-8")
    return tmp_path


def test_jactionlint_finds_nothing() -> None:
    assert jactionlint(REPO) == (0, [])


def test_jactionlint_flags_bad_workflow(bad_repo: Path) -> None:
    rc, findings = jactionlint(bad_repo, ".github/workflows/bad.yml")
    assert rc == 1
    assert {"template-injection", "unpinned-uses", "artipacked"} <= {f["id"] for f in findings}


def test_zizmor_finds_nothing() -> None:
    """The one finding we allow is ignored inline, with its reason, in post-results.yml."""
    assert zizmor(REPO, ".github/workflows", ".github/dependabot.yml") == (0, [])


def test_zizmor_pedantic_finds_nothing() -> None:
    """The pedantic persona too, on every workflow: no finding at all is accepted."""
    assert zizmor(REPO, "--persona=pedantic", ".github/workflows") == (0, [])


#: What zizmor's auditor persona finds and why each stands (docs/WORKFLOWS.md, "zizmor's
#: auditor persona"): the GPU jobs must run on the GPU machine. Any other finding fails.
AUDITOR_FINDINGS = {
    ("self-hosted-runner", "bench-package.yml", "bench"),
    ("self-hosted-runner", "bench-pr.yml", "bench"),
    ("self-hosted-runner", "calibrate-package.yml", "measure"),
    ("self-hosted-runner", "nightly.yml", "shard"),
    ("self-hosted-runner", "nightly.yml", "bisect"),
    ("self-hosted-runner", "nightly.yml", "remeasure"),
}


def test_zizmor_auditor_finds_only_the_gpu_jobs() -> None:
    _, found = zizmor(REPO, "--persona=auditor", ".github/workflows")
    seen = set()
    for finding in found:
        where = finding["locations"][0]["symbolic"]
        path = Path(where["key"]["Local"]["verbatim_path"]).name
        job = where["route"]["route"][1]["Key"]
        seen.add((finding["ident"], path, job))
    assert seen == AUDITOR_FINDINGS


def test_zizmor_flags_bad_workflow(bad_repo: Path) -> None:
    rc, findings = zizmor(bad_repo, ".github/workflows")
    assert rc != 0
    assert {"template-injection", "unpinned-uses", "artipacked"} <= {f["ident"] for f in findings}


@pytest.fixture(scope="module")
def schema_of_all() -> subprocess.CompletedProcess[str]:
    """check-jsonschema over every workflow in one process: it checks each file on its own, so
    a pass here is a pass of each file alone."""
    return check_jsonschema(REPO, *(f".github/workflows/{name}" for name in ALL))


@pytest.mark.parametrize("name", ALL)
def test_schema_accepts_workflow(
    schema_of_all: subprocess.CompletedProcess[str], name: str
) -> None:
    proc = schema_of_all
    if proc.returncode != 0:  # some workflow fails: say whether this one does, on its own
        proc = check_jsonschema(REPO, f".github/workflows/{name}")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_schema_rejects_bad_workflow(bad_repo: Path) -> None:
    path = bad_repo / ".github" / "workflows" / "bad.yml"
    path.write_text(BAD_FOR_LINTERS.replace("runs-on:", "runs_on:"), encoding="utf-8")
    proc = check_jsonschema(bad_repo, ".github/workflows/bad.yml")
    assert proc.returncode == 1 and "runs_on" in proc.stdout


# ----- the step scripts that touch untrusted data, run for real -----


def test_bench_finds_the_merge_base_not_the_base_tip(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "fork point")
    fork_point = git(tmp_path, "rev-parse", "HEAD")
    git(tmp_path, "checkout", "-q", "-b", "pr")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "the PR")
    head = git(tmp_path, "rev-parse", "HEAD")
    git(tmp_path, "checkout", "-q", "main")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "main moves on")
    base_tip = git(tmp_path, "rev-parse", "HEAD")
    step = step_by_id(load_workflow(WORKFLOWS / BENCH), "shas")
    out = tmp_path / "out"
    env = {"PR_BASE_SHA": base_tip, "PR_HEAD_SHA": head, "GITHUB_OUTPUT": str(out)}
    proc = run_step(step, tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    assert outputs(out) == {"base": fork_point}
    git(tmp_path, "checkout", "-q", "--orphan", "unrelated")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "no common history")
    out.unlink()
    env["PR_HEAD_SHA"] = git(tmp_path, "rev-parse", "HEAD")
    proc = run_step(step, tmp_path, env)
    assert proc.returncode == 1 and "::error::git merge-base gave no commit" in proc.stdout
    assert not out.exists()


def write_artifact(
    tmp_path: Path, pr: str = "42", run_id: str = "1234", label: str = "gpu-h200"
) -> Path:
    """Runs bench-pr's metadata step, so the poster is tested on what the bench really writes.
    The artifact lands as fetch-artifact unpacks it: ARTIFACTS_DIR/<artifact name>/."""
    artifact = tmp_path / "bench" / f"bench-pr-results-{label}"
    (artifact / "results" / "h200-nvidia-h200").mkdir(parents=True)
    (artifact / "results" / "h200-nvidia-h200" / "x.json").write_text("{}", encoding="utf-8")
    step = step_by_id(load_workflow(WORKFLOWS / BENCH), "write-meta")
    env = {"PR_NUMBER": pr, "BASE_SHA": BASE, "PR_HEAD_SHA": HEAD, "RUN_ID": run_id}
    proc = run_step(step, artifact, {**env, "RUNNER_LABEL": label})
    assert proc.returncode == 0, proc.stderr
    (artifact / "step-script").unlink()
    return artifact


def validate(tmp_path: Path, artifact: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path / "validate-out"
    step = step_by_id(load_workflow(WORKFLOWS / POSTER), "meta")
    env = {"ARTIFACTS_DIR": str(artifact.parent), "EXPECTED_RUN_ID": "1234"}
    env["EXPECTED_HEAD_SHA"] = HEAD
    return run_step(step, tmp_path, {**env, "GITHUB_OUTPUT": str(out)}), out


def test_poster_accepts_what_the_bench_writes(tmp_path: Path) -> None:
    proc, out = validate(tmp_path, write_artifact(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs(out) == {"pr": "42", "base": BASE, "head": HEAD}


def _as_machine(artifact: Path, label: str, **meta: Any) -> Path:
    """The per-machine form: bench-pr-results-<label>, with "machine" in its metadata."""
    moved = artifact.rename(artifact.with_name(f"bench-pr-results-{label}"))
    path = moved / "bench-meta.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "machine": label, **meta}))
    return moved


def test_poster_accepts_one_artifact_per_machine(tmp_path: Path) -> None:
    first = _as_machine(write_artifact(tmp_path / "a"), "gpu-h200")
    second = _as_machine(write_artifact(tmp_path / "b"), "gpu-b200")
    second.rename(first.parent / second.name)
    proc, out = validate(tmp_path, first)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 artifact(s) ok" in proc.stdout
    assert outputs(out) == {"pr": "42", "base": BASE, "head": HEAD}


@pytest.mark.parametrize(
    "meta",
    [{"machine": "gpu-b200"}, {"machine": "::error::x"}, {"pr": 43}],
    ids=["named for another machine", "bad label", "disagrees on the PR"],
)
def test_poster_rejects_machine_artifacts_that_disagree(
    tmp_path: Path, meta: dict[str, Any]
) -> None:
    first = _as_machine(write_artifact(tmp_path / "a"), "gpu-h200")
    second = _as_machine(write_artifact(tmp_path / "b"), "gpu-a100", **meta)
    second.rename(first.parent / second.name)
    proc, out = validate(tmp_path, first)
    assert proc.returncode == 6 and "::error::bench artifact rejected" in proc.stdout
    assert not out.exists()


def test_a_bench_of_builds_not_the_prs_commits_is_read_not_posted(tmp_path: Path) -> None:
    """bench-package.yml writes pr 0 when its head key is not the PR's head (wheel or version
    specs): the poster says so and skips every later step, instead of failing red."""
    proc, out = validate(tmp_path, write_artifact(tmp_path, pr="0"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs(out) == {"pr": "0", "base": BASE, "head": HEAD, "skip": "true"}
    assert "::notice::" in proc.stdout
    wf = load_workflow(WORKFLOWS / POSTER)
    fresh = "${{ steps.meta.outcome == 'success' && steps.meta.outputs.skip != 'true' }}"
    assert step_by_id(wf, "fresh")["if"] == fresh
    assert "steps.fresh.outputs.post == 'true'" in step_by_id(wf, "verify")["if"]
    # The post job runs only on the check job's word that every check passed.
    assert jobs(wf)["check"]["outputs"]["trusted"] == "${{ steps.verify.outputs.trusted }}"
    assert jobs(wf)["post"]["if"] == "${{ needs.check.outputs.trusted == 'true' }}"


def test_package_bench_writes_pr_zero_unless_it_measured_the_prs_head(tmp_path: Path) -> None:
    step = step_by_id(load_workflow(WORKFLOWS / "bench-package.yml"), "write-meta")
    env = {"BASE_SHA": BASE, "HEAD_SHA": HEAD, "RUN_ID": "5", "RUNNER_LABEL": "gpu-h200"}
    for pr_head, expected in ((HEAD, 42), ("c" * 40, 0)):
        proc = run_step(step, tmp_path, {**env, "PR_NUMBER": "42", "PR_HEAD_SHA": pr_head})
        assert proc.returncode == 0, proc.stderr
        assert json.loads((tmp_path / "bench-meta.json").read_text())["pr"] == expected


def test_bench_refuses_to_write_malformed_metadata(tmp_path: Path) -> None:
    step = step_by_id(load_workflow(WORKFLOWS / BENCH), "write-meta")
    env = {"PR_NUMBER": "42; rm -rf /", "BASE_SHA": BASE, "PR_HEAD_SHA": HEAD, "RUN_ID": "1"}
    assert run_step(step, tmp_path, {**env, "RUNNER_LABEL": "gpu-h200"}).returncode != 0
    env = {"PR_NUMBER": "42", "BASE_SHA": BASE, "PR_HEAD_SHA": HEAD, "RUN_ID": "1"}
    assert run_step(step, tmp_path, {**env, "RUNNER_LABEL": "::error::x"}).returncode != 0
    assert not (tmp_path / "bench-meta.json").exists()


INJECTED = "\n::error::pwned"
META_MUTATIONS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "pr as text": lambda m: {**m, "pr": "42"},
    "pr as bool": lambda m: {**m, "pr": True},
    "pr negative": lambda m: {**m, "pr": -1},
    "pr huge": lambda m: {**m, "pr": 2**31},
    "pr float": lambda m: {**m, "pr": 42.0},
    "run id of another run": lambda m: {**m, "run_id": 999},
    "run id as text": lambda m: {**m, "run_id": "1234"},
    "short base": lambda m: {**m, "base_sha": "a" * 39},
    "upper-case head": lambda m: {**m, "head_sha": "B" * 40},
    "injected base": lambda m: {**m, "base_sha": BASE + INJECTED},
    "head of another commit": lambda m: {**m, "head_sha": "c" * 40},
    "no schema": lambda m: {k: v for k, v in m.items() if k != "schema"},
    "a list": lambda m: [m],
    "padded past the size cap": lambda m: {**m, "pad": "x" * 5000},
}


@pytest.mark.parametrize("mutate", META_MUTATIONS.values(), ids=META_MUTATIONS.keys())
def test_poster_rejects_bad_metadata(tmp_path: Path, mutate: Callable[[Any], Any]) -> None:
    artifact = write_artifact(tmp_path)
    meta_path = artifact / "bench-meta.json"
    meta_path.write_text(json.dumps(mutate(json.loads(meta_path.read_text()))), encoding="utf-8")
    proc, out = validate(tmp_path, artifact)
    assert proc.returncode == 6  # untrusted, as fetch-artifact's refusals
    assert "::error::bench artifact rejected" in proc.stdout
    assert "pwned" not in proc.stdout + proc.stderr  # nothing from the artifact is echoed
    assert not out.exists()


def test_poster_rejects_a_broken_artifact_tree(tmp_path: Path) -> None:
    for breakage in ("not json", "too deep", "meta symlink", "results symlink", "no results"):
        case = tmp_path / breakage.replace(" ", "-")
        case.mkdir()
        artifact = write_artifact(case)
        meta = artifact / "bench-meta.json"
        if breakage == "not json":
            meta.write_text("{not json", encoding="utf-8")
        elif breakage == "too deep":
            meta.write_text("[" * 2000 + "]" * 2000, encoding="utf-8")
        elif breakage == "meta symlink":
            (artifact / "real-meta.json").write_bytes(meta.read_bytes())
            meta.unlink()
            meta.symlink_to(artifact / "real-meta.json")
        elif breakage == "results symlink":
            (artifact / "results" / "h200-nvidia-h200" / "y.json").symlink_to("/etc/hostname")
        else:
            (artifact / "results" / "h200-nvidia-h200" / "x.json").unlink()
            (artifact / "results" / "h200-nvidia-h200").rmdir()
            (artifact / "results").rmdir()
        proc, out = validate(case, artifact)
        assert proc.returncode == 6, breakage
        assert "::error::bench artifact rejected" in proc.stdout, breakage
        assert not out.exists(), breakage


# What the runner and the earlier steps give these steps (tokens are dummies: no network here).
STEP_ENV = {
    "GITHUB_REPOSITORY": OUR_REPO,
    "GITHUB_SERVER_URL": "https://github.com",
    "GITHUB_RUN_ID": "9",
    "GITHUB_TOKEN": "t",
    "GH_TOKEN": "t",
    "PERFBOT_ISSUES_TOKEN": "p",
    "PR_NUMBER": "42",
    "BASE_SHA": BASE,
    "HEAD_SHA": HEAD,
}


EXIT_CODES = [
    (0, 0, ""),
    (1, 0, "::warning::"),
    (5, 0, "::warning::"),  # broken: reported like a regression, the run itself succeeded
    *((rc, rc, "::error::") for rc in (2, 3, 4)),
]


@pytest.mark.parametrize(("bot_rc", "step_rc", "level"), EXIT_CODES)
def test_poster_maps_bot_exit_codes(tmp_path: Path, bot_rc: int, step_rc: int, level: str) -> None:
    path = shim(tmp_path, "python", f"exit {bot_rc}")
    out = tmp_path / "out"
    (tmp_path / "a" / "bench-pr-results" / "results").mkdir(parents=True)
    env = {**STEP_ENV, "PATH": path, "GITHUB_OUTPUT": str(out)}
    env["ARTIFACTS_DIR"] = str(tmp_path / "a")
    proc = run_step(step_by_id(load_workflow(WORKFLOWS / POSTER), "bot"), tmp_path, env)
    assert proc.returncode == step_rc
    assert outputs(out) == {"rc": str(bot_rc)}
    assert (level in proc.stdout) if level else "::" not in proc.stdout
    results = tmp_path / "a" / "bench-pr-results" / "results"
    want = f"-m bot pr --results {results} --base {BASE} --head {HEAD} --repo {OUR_REPO} --pr 42"
    assert (tmp_path / "python.calls").read_text().split() == want.split()


def test_poster_passes_each_repeat_folder(tmp_path: Path) -> None:
    """bench-pr's repeats land in <artifact>/results/rep-N, one artifact per machine: every
    repeat of every machine becomes one --results (replicates)."""
    path = shim(tmp_path, "python", "exit 0")
    top = tmp_path / "artifacts"
    for machine in ("gpu-b200", "gpu-h200"):
        results = top / f"bench-pr-results-{machine}" / "results"
        for name in ("rep-1", "rep-2", "rep-10"):
            (results / name).mkdir(parents=True)
        (results / "rep-3").symlink_to(results / "rep-1")  # a link is not a folder of the artifact
    env = {**STEP_ENV, "PATH": path, "GITHUB_OUTPUT": str(tmp_path / "out")}
    env["ARTIFACTS_DIR"] = str(top)
    proc = run_step(step_by_id(load_workflow(WORKFLOWS / POSTER), "bot"), tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    calls = (tmp_path / "python.calls").read_text().split()
    given = [calls[i + 1] for i, a in enumerate(calls) if a == "--results"]
    assert given == [
        str(top / f"bench-pr-results-{m}" / "results" / n)
        for m in ("gpu-b200", "gpu-h200")
        for n in ("rep-1", "rep-10", "rep-2")
    ]


@pytest.mark.parametrize(
    ("bot_rc", "runs"),
    [("", False), ("0", False), ("1", False), ("5", False), ("2", True), ("3", True), ("4", True)],
)
def test_the_poster_sets_the_status_only_when_the_bot_failed(
    tmp_path: Path, bot_rc: str, runs: bool
) -> None:
    """The bot posts perfbot itself for what it decides (exit 0, 1, 5: success,
    failure, neutral, acknowledged); the workflow's step only when the bot could not (any other
    exit code: error), so the two never post for one run. Its if: is evaluated as GitHub does,
    and its script, run for real, posts nothing for 0, 1 or 5 even if it ran."""
    wf = load_workflow(WORKFLOWS / POSTER)
    step = step_by_id(wf, "status")
    context = {"steps": {"bot": {"outputs": {"rc": bot_rc}}}}
    assert truthy(evaluate_if(step["if"], context)) is runs
    env = {**STEP_ENV, "PATH": shim(tmp_path, "gh", ""), "BOT_RC": bot_rc or "0"}
    proc = run_step(step, tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    calls = tmp_path / "gh.calls"
    if not runs:
        assert not calls.exists()
        return
    call = calls.read_text()
    assert f"repos/{OUR_REPO}/statuses/{HEAD}" in call and "state=error" in call
    assert f"description=perfbot failed (exit code {bot_rc}): see the run log" in call
    # No other step of the poster posts a status: the bot does, in the bot step.
    posting = [s.get("id") for _, s in iter_steps(wf) if "/statuses/" in str(s.get("run", ""))]
    assert posting == ["status"]


@pytest.mark.parametrize(
    ("pr_head", "merge_base", "step_rc", "post"),
    [
        (HEAD, BASE, 0, "true"),  # all as the artifact says
        ("c" * 40, BASE, 0, "false"),  # the PR moved on, or the number is another PR's: stay quiet
        (HEAD, "d" * 40, 1, None),  # base is no ancestor of head: refuse
    ],
)
def test_poster_checks_the_artifact_against_github(
    tmp_path: Path, pr_head: str, merge_base: str, step_rc: int, post: str | None
) -> None:
    answer = f'case "$*" in *pulls/42*) echo {pr_head};; *compare/*) echo {merge_base};; esac'
    out = tmp_path / "out"
    env = {**STEP_ENV, "PATH": shim(tmp_path, "gh", answer), "GITHUB_OUTPUT": str(out)}
    proc = run_step(step_by_id(load_workflow(WORKFLOWS / POSTER), "fresh"), tmp_path, env)
    assert proc.returncode == step_rc
    assert outputs(out).get("post") == post


def test_bench_alternates_base_and_head_with_context_once(tmp_path: Path) -> None:
    """base, head, base, head, each its own process in its own worktree into results/rep-N,
    each stored after it; eager and torch.compile only in the first repeat; the GPU probed for
    the machine name once."""
    code, runs, out = bench(tmp_path)
    assert code == 0, out
    res = tmp_path / "results"
    only = " --variants nvfuser,thunder-prims,thunder-func"
    machine = " --machine nvidia-h200"
    measures = [r for r in runs if r.endswith("--phase measure")]

    def run(tree: str, sha: str, rep: int, rest: str) -> str:
        return f"perfbot-{tree} --size-set pr --commit {sha} --results {res}/rep-{rep}{rest}"

    assert measures == [
        run("base", BASE, 1, " --phase measure"),
        run("head", HEAD, 1, f"{machine} --phase measure"),
        run("base", BASE, 2, f"{machine}{only} --phase measure"),
        run("head", HEAD, 2, f"{machine}{only} --phase measure"),
    ]
    stores = [r.removesuffix(" --phase store") for r in runs if r.endswith("--phase store")]
    assert sorted(stores) == sorted(m.removesuffix(" --phase measure") for m in measures)


def test_bench_captures_the_fusions_in_repeat_one_where_the_script_can(tmp_path: Path) -> None:
    """A side whose run_gpu.sh knows --capture gets it in repeat 1 only; an older one (above)
    never does, so an old base still runs."""
    code, runs, out = bench(tmp_path, capture=True)
    assert code == 0, out
    measures = [r for r in runs if r.endswith("--phase measure")]
    assert [("--capture" in r) for r in measures] == [True, True, False, False]


def test_bench_goes_on_when_points_fail_so_the_bot_can_call_it_broken(tmp_path: Path) -> None:
    """asv exits 2 when a point failed (a broken head): every repeat still runs, and the job
    succeeds with a warning so that the artifact is uploaded and the poster runs."""
    code, runs, out = bench(tmp_path, head_store_status=2)
    assert code == 0, out
    assert len([r for r in runs if r.endswith("--phase measure")]) == 4
    assert "::warning::head repeat 1: some points failed" in out
    code, _, out = (
        bench(tmp_path / "again", head_store_status=7)
        if (tmp_path / "again").mkdir() is None
        else (0, [], "")
    )
    assert code == 7 and "::error::head repeat 1: asv could not store the results (exit 7)" in out


def _doc_workflows() -> list[str]:
    """The complete workflows docs/WORKFLOWS.md gives callers to copy (```yaml blocks that
    have `on:` and `jobs:`), placeholders filled with a commit-shaped value."""
    text = (REPO / "docs" / "WORKFLOWS.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    whole = [b for b in blocks if re.search(r"^on:", b, re.M) and re.search(r"^jobs:", b, re.M)]
    return [re.sub(r"<[^>\n]*(commit|hex)[^>\n]*>", "c" * 40, b) for b in whole]


def test_the_documented_caller_workflows_lint_clean(tmp_path: Path) -> None:
    """The Thunder/Fuser bench caller and the poster caller: valid workflows, no zizmor
    finding, so what a maintainer copies is as safe as ours."""
    docs = _doc_workflows()
    assert len(docs) >= 2
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    names = []
    for i, body in enumerate(docs):
        (folder / f"caller-{i}.yml").write_text(body, encoding="utf-8")
        names.append(f".github/workflows/caller-{i}.yml")
    proc = check_jsonschema(tmp_path, *names)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code, findings = zizmor(tmp_path, ".github/workflows")
    assert code == 0 and findings == [], findings


def test_the_documented_caller_grants_what_each_poster_job_asks() -> None:
    """A called workflow's job gets at most what the caller's job granted: the snippet in
    docs/WORKFLOWS.md must cover both jobs' asks (write covers read), and ask nothing more."""
    doc = (REPO / "docs" / "WORKFLOWS.md").read_text(encoding="utf-8")
    granted_text = re.search(r"^    permissions: \{(.*)\}$", doc, re.M)
    assert granted_text is not None
    granted = dict(p.strip().split(": ") for p in granted_text[1].split(","))
    asked: dict[str, str] = {}
    for job in jobs(load_workflow(WORKFLOWS / POSTER)).values():
        for scope, level in job["permissions"].items():
            asked[scope] = "write" if "write" in (level, asked.get(scope)) else level
    assert granted == asked


def test_bench_gives_every_run_the_jobs_compile_cache_emptied_first(tmp_path: Path) -> None:
    """Issue 39 part 3: one cache folder under the runner's temp for all the job's processes,
    and nothing left from an earlier job (another PR's code may have written it)."""
    stale = tmp_path / "perfbot-compile-cache" / "nvfuser-0123456789abcdef"
    stale.mkdir(parents=True)
    (stale / "left-by-another-job").write_text("x")
    code, runs, out = bench(tmp_path)
    assert code == 0, out
    seen = (tmp_path / "run_gpu.calls.cache").read_text().splitlines()
    assert len(seen) == len(runs) == 8
    assert {line.split(" ", 1)[0] for line in seen} == {str(tmp_path / "perfbot-compile-cache")}
    assert not any("nvfuser-0123456789abcdef" in line for line in seen)

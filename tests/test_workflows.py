"""The GitHub workflows stay safe against fork pull requests (docs/WORKFLOWS.md).

The linters (jactionlint, zizmor, check-jsonschema) catch the generic mistakes; the rules below
pin down the properties this project's trust model rests on, and which no linter knows: which
events may reach the self-hosted GPU runner, where secrets may appear, and what the privileged
poster may check out. Each rule is a pure function from a parsed workflow to a list of problems,
and each has a negative test that feeds it a small bad workflow, so none of them can pass by
checking nothing. The step scripts that handle untrusted data are run for real (bash, python,
git), extracted from the workflow files, so the tests follow any edit to them.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"
BENCH, POSTER, SITE, CI = "bench-pr.yml", "post-results.yml", "publish-site.yml", "ci.yml"
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>\S+)(?P<rest>.*)$")
PINNED_WITH_VERSION = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
VERSION_COMMENT = re.compile(r"^\s+#\s+v\d+(\.\d+)*\b")
GATE_LABEL = "run-gpu-bench"
OUR_REPO = "example-org/fusion-perfbot"
# Events only people with write access can cause: the only ones besides the gated
# pull_request that may start a job on the self-hosted runner.
SELF_HOSTED_TRIGGERS = {"pull_request", "push", "schedule", "workflow_dispatch"}


class Workflow(NamedTuple):
    path: Path
    text: str
    data: dict[str, Any]


def load_workflow(path: Path) -> Workflow:
    """YAML 1.2 (ruamel), as GitHub reads it: `on` stays a string key, not YAML 1.1's True."""
    text = path.read_text(encoding="utf-8")
    data = YAML(typ="safe", pure=True).load(text)
    assert isinstance(data, dict), f"{path.name}: not a mapping"
    return Workflow(path, text, data)


def triggers(wf: Workflow) -> dict[str, Any]:
    on = wf.data.get("on", {})
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    return dict(on or {})


def jobs(wf: Workflow) -> dict[str, dict[str, Any]]:
    return dict(wf.data.get("jobs") or {})


def iter_steps(wf: Workflow) -> Iterator[tuple[str, dict[str, Any]]]:
    for job_id, job in jobs(wf).items():
        for step in job.get("steps") or []:
            yield job_id, step


def step_by_id(wf: Workflow, step_id: str) -> dict[str, Any]:
    found = [step for _, step in iter_steps(wf) if step.get("id") == step_id]
    assert len(found) == 1, f"{wf.path.name}: want one step with id {step_id!r}"
    return found[0]


# ----- rules: each returns the problems it finds, empty when the workflow is fine -----


def check_top_level_permissions(wf: Workflow) -> list[str]:
    """Every job must then ask for what it needs: nothing is inherited from repo settings."""
    if "permissions" not in wf.data or wf.data["permissions"] != {}:
        return ["top-level permissions must be {}"]
    return []


def check_no_pull_request_target(wf: Workflow) -> list[str]:
    bad = "pull_request_target" in triggers(wf) or "pull_request_target" in wf.text
    return ["pull_request_target is never used here"] if bad else []


def check_uses_pinned(wf: Workflow) -> list[str]:
    """A tag can be moved to other code; a full commit SHA cannot. The comment says which tag."""
    problems = []
    refs = [s["uses"] for _, s in iter_steps(wf) if "uses" in s]
    refs += [job["uses"] for job in jobs(wf).values() if "uses" in job]
    problems += [f"{ref}: not pinned to a full commit SHA" for ref in refs if not pinned(ref)]
    for number, line in enumerate(wf.text.splitlines(), 1):
        match = USES_LINE.match(line)
        if match and not VERSION_COMMENT.match(match["rest"]):
            problems.append(f"line {number}: a pinned uses: needs a '# vX.Y.Z' comment")
    return problems


def pinned(ref: str) -> bool:
    return PINNED_WITH_VERSION.fullmatch(ref) is not None


def check_checkout_credentials(wf: Workflow) -> list[str]:
    """A persisted token in .git/config is readable by every later step, PR code included."""
    return [
        f"{job_id}: checkout without persist-credentials: false"
        for job_id, step in iter_steps(wf)
        if str(step.get("uses", "")).startswith("actions/checkout@")
        and (step.get("with") or {}).get("persist-credentials") not in (False, "false")
    ]


def check_no_expressions_in_run(wf: Workflow) -> list[str]:
    """Stricter than no `github.event` in run:: no ${{ }} at all, every value comes by env:."""
    return [
        f"{job_id}: ${{{{ }}}} inside run: {expr.strip()!r} (pass it through env:)"
        for job_id, step in iter_steps(wf)
        for expr in re.findall(r"\$\{\{(.*?)\}\}", str(step.get("run", "")), re.DOTALL)
    ]


def check_timeouts(wf: Workflow) -> list[str]:
    return [
        f"{job_id}: no timeout-minutes"
        for job_id, job in jobs(wf).items()
        if "uses" not in job and not isinstance(job.get("timeout-minutes"), int)
    ]


def check_secrets_only_in_step_env(wf: Workflow) -> list[str]:
    """A secret in a job's env reaches every step; only the step that needs it may see it."""
    return [f"secret outside a step's env: at {where}" for where in _secret_refs(wf.data, ())]


def _secret_refs(node: Any, path: tuple[str, ...]) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _secret_refs(value, (*path, str(key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _secret_refs(value, (*path, str(index)))
    elif isinstance(node, str) and re.search(r"\bsecrets\s*[.\[]", node):
        in_step_env = len(path) == 6 and path[0] == "jobs" and path[2:5:2] == ("steps", "env")
        if not in_step_env:
            yield ".".join(path)


def check_no_secrets_no_write(wf: Workflow) -> list[str]:
    """For a workflow that runs PR code: nothing in it worth stealing."""
    problems = ["refers to secrets"] if re.search(r"\bsecrets\s*[.\[]", wf.text) else []
    blocks = [("workflow", wf.data.get("permissions"))]
    blocks += [(job_id, job.get("permissions")) for job_id, job in jobs(wf).items()]
    for where, perms in blocks:
        if perms == "write-all" or (isinstance(perms, dict) and "write" in perms.values()):
            problems.append(f"{where}: asks for a write permission")
        if perms is None and where != "workflow":
            problems.append(f"{where}: no job permissions (would inherit)")
    return problems


def check_privileged_checkout_is_default_branch(wf: Workflow) -> list[str]:
    """workflow_run runs with secrets: it may check out only this repo's default branch."""
    if "workflow_run" not in triggers(wf):
        return []
    problems = []
    for job_id, step in iter_steps(wf):
        given = set(step.get("with") or {}) & {"ref", "repository"}
        if str(step.get("uses", "")).startswith("actions/checkout@") and given:
            problems.append(f"{job_id}: checkout sets {sorted(given)} in a workflow_run workflow")
        if re.search(
            r"\b(git\s+(fetch|checkout|switch|pull)|gh\s+pr\s+checkout)\b", str(step.get("run", ""))
        ):
            problems.append(f"{job_id}: a run: step fetches or checks out code")
    return problems


class Scenario(NamedTuple):
    name: str
    github: dict[str, Any]


def pr_event(action: str, head_repo: str | None, label: str | None = None) -> Scenario:
    """`label` is the label of a (un)labeled event, and on other events one the PR carries."""
    repo = None if head_repo is None else {"full_name": head_repo}
    labels = [] if label is None else [{"name": label}]
    event: dict[str, Any] = {
        "action": action,
        "pull_request": {"number": 7, "head": {"repo": repo, "sha": "b" * 40}, "labels": labels},
    }
    if label is not None:
        event["label"] = {"name": label}
    github = {"repository": OUR_REPO, "event_name": "pull_request", "event": event}
    return Scenario(f"{action} (head {head_repo}, label {label})", github)


FORK = "mallory/fusion-perfbot"
UNTRUSTED_EVENTS = [
    *(pr_event(a, FORK) for a in ("opened", "synchronize", "reopened", "edited")),
    pr_event("synchronize", None),  # the fork was deleted: head.repo is null
    pr_event("labeled", FORK, "bug"),
    pr_event("unlabeled", FORK, GATE_LABEL),
    pr_event("synchronize", FORK, GATE_LABEL),
]


def runs_on_self_hosted(job: dict[str, Any]) -> bool | None:
    """None when runs-on is an expression: then nobody can say where the job runs."""
    runs_on = job.get("runs-on")
    labels = runs_on.get("labels", []) if isinstance(runs_on, dict) else runs_on
    labels = [labels] if isinstance(labels, str) else list(labels or [])
    if isinstance(runs_on, dict) and "group" in runs_on:
        return True
    if any("${{" in str(label) for label in labels):
        return None
    return "self-hosted" in labels


def check_self_hosted_gated(wf: Workflow) -> list[str]:
    """Evaluates each self-hosted job's if: for every event a fork author can cause alone."""
    problems = []
    for job_id, job in jobs(wf).items():
        where = runs_on_self_hosted(job)
        if where is None:
            problems.append(f"{job_id}: runs-on is an expression: cannot prove the gate")
        if not where:
            continue
        problems += [
            f"{job_id}: self-hosted job on {t}"
            for t in sorted(set(triggers(wf)) - SELF_HOSTED_TRIGGERS)
        ]
        if "if" not in job:
            problems.append(f"{job_id}: self-hosted job without an if: gate")
            continue
        for scenario in UNTRUSTED_EVENTS:
            try:
                runs = truthy(evaluate_if(str(job["if"]), {"github": scenario.github}))
            except ExpressionError as err:
                problems.append(f"{job_id}: cannot evaluate the gate: {err}")
                break
            if runs:
                problems.append(f"{job_id}: runs fork code on {scenario.name}")
    return problems


RULES: list[Callable[[Workflow], list[str]]] = [
    check_top_level_permissions,
    check_no_pull_request_target,
    check_uses_pinned,
    check_checkout_credentials,
    check_no_expressions_in_run,
    check_timeouts,
    check_secrets_only_in_step_env,
    check_privileged_checkout_is_default_branch,
    check_self_hosted_gated,
]


# ----- a small evaluator for GitHub's expression language (the subset gates use) -----


class ExpressionError(ValueError):
    pass


TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||[!(),])"
    r"|(?P<name>[A-Za-z_][\w-]*(?:\.(?:[A-Za-z_][\w-]*|\*))*))"
)
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "contains": lambda hay, needle: (
        any(equal(item, needle) for item in hay)
        if isinstance(hay, list)
        else str(needle).casefold() in str(hay).casefold()
    ),
    "startsWith": lambda text, prefix: str(text).casefold().startswith(str(prefix).casefold()),
    "endsWith": lambda text, suffix: str(text).casefold().endswith(str(suffix).casefold()),
    # Job-status functions, for a job whose needs all succeeded.
    "success": lambda: True,
    "always": lambda: True,
    "failure": lambda: False,
    "cancelled": lambda: False,
}


def evaluate_if(condition: str, context: dict[str, Any]) -> Any:
    """An if: is one bare expression or exactly one ${{ }}; any other text (a space, the newline
    of a `|` block) makes GitHub read it as a non-empty string: always true."""
    wrapped = re.fullmatch(r"\$\{\{(.*)\}\}", condition, re.DOTALL)
    text = wrapped[1] if wrapped else condition
    if "${{" in text or "}}" in text:
        raise ExpressionError("text around ${{ }}: such an if: is always true")
    tokens = _tokenize(text)
    value, rest = _parse_or(tokens, context)
    if rest:
        raise ExpressionError(f"unexpected {rest[0][1]!r}")
    return value


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens, pos = [], 0
    while text[pos:].strip():
        match = TOKEN.match(text, pos)
        if not match:
            raise ExpressionError(f"cannot read {text[pos:].strip()[:20]!r} (functions?)")
        kind = match.lastgroup or ""
        tokens.append((kind, match[kind]))
        pos = match.end()
    return tokens


Tokens = list[tuple[str, str]]


def _parse_or(tokens: Tokens, ctx: dict[str, Any]) -> tuple[Any, Tokens]:
    value, tokens = _parse_and(tokens, ctx)
    while tokens and tokens[0] == ("op", "||"):
        right, tokens = _parse_and(tokens[1:], ctx)
        value = value if truthy(value) else right
    return value, tokens


def _parse_and(tokens: Tokens, ctx: dict[str, Any]) -> tuple[Any, Tokens]:
    value, tokens = _parse_eq(tokens, ctx)
    while tokens and tokens[0] == ("op", "&&"):
        right, tokens = _parse_eq(tokens[1:], ctx)
        value = right if truthy(value) else value
    return value, tokens


def _parse_eq(tokens: Tokens, ctx: dict[str, Any]) -> tuple[Any, Tokens]:
    value, tokens = _parse_unary(tokens, ctx)
    while tokens and tokens[0] in (("op", "=="), ("op", "!=")):
        op = tokens[0][1]
        right, tokens = _parse_unary(tokens[1:], ctx)
        value = equal(value, right) == (op == "==")
    return value, tokens


def _parse_unary(tokens: Tokens, ctx: dict[str, Any]) -> tuple[Any, Tokens]:
    if not tokens:
        raise ExpressionError("expression ends too early")
    (kind, text), rest = tokens[0], tokens[1:]
    if (kind, text) == ("op", "!"):
        value, rest = _parse_unary(rest, ctx)
        return not truthy(value), rest
    if (kind, text) == ("op", "("):
        value, rest = _parse_or(rest, ctx)
        if not rest or rest[0] != ("op", ")"):
            raise ExpressionError("unbalanced (")
        return value, rest[1:]
    if kind == "str":
        return text[1:-1].replace("''", "'"), rest
    if kind == "num":
        return float(text), rest
    if kind == "name":
        if rest and rest[0] == ("op", "("):
            return _call(text, rest[1:], ctx)
        keywords = {"true": True, "false": False, "null": None}
        return (keywords[text] if text in keywords else lookup(ctx, text)), rest
    raise ExpressionError(f"unexpected {text!r}")


def _call(name: str, tokens: Tokens, ctx: dict[str, Any]) -> tuple[Any, Tokens]:
    if name not in FUNCTIONS:
        raise ExpressionError(f"function {name}() is not supported")
    args: list[Any] = []
    while tokens and tokens[0] != ("op", ")"):
        if args:
            if tokens[0] != ("op", ","):
                raise ExpressionError(f"{name}(): want ','")
            tokens = tokens[1:]
        value, tokens = _parse_or(tokens, ctx)
        args.append(value)
    if not tokens:
        raise ExpressionError(f"{name}(: unbalanced (")
    try:
        return FUNCTIONS[name](*args), tokens[1:]
    except TypeError as err:
        raise ExpressionError(f"{name}(): {err}") from err


def lookup(ctx: dict[str, Any], dotted: str) -> Any:
    """`a.*.b` maps over a list, as GitHub's object filter does."""
    node: Any = ctx
    for part in dotted.split("."):
        if part == "*":
            node = node if isinstance(node, list) else []
        elif isinstance(node, list):
            node = [item.get(part) for item in node if isinstance(item, dict)]
        else:
            node = node.get(part) if isinstance(node, dict) else None
    return node


def truthy(value: Any) -> bool:
    return not (value in (None, False, 0, "") or (isinstance(value, float) and math.isnan(value)))


def equal(left: Any, right: Any) -> bool:
    """GitHub compares strings ignoring case, and coerces mixed types to numbers."""
    if isinstance(left, str) and isinstance(right, str):
        return left.casefold() == right.casefold()
    if type(left) is type(right):
        return bool(left == right)
    return _number(left) == _number(right)


def _number(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return float(bool(value))
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value) if isinstance(value, str) else math.nan
    except ValueError:
        return math.nan


# ----- the rules on the real workflows -----

ALL = sorted(p.name for p in WORKFLOWS.glob("*.yml"))


def test_the_four_workflows_exist() -> None:
    assert {BENCH, POSTER, SITE, CI} <= set(ALL)
    assert not list(WORKFLOWS.glob("*.yaml")), "use .yml, so every check here sees the file"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.__name__)
@pytest.mark.parametrize("name", ALL)
def test_rule_holds(rule: Callable[[Workflow], list[str]], name: str) -> None:
    assert rule(load_workflow(WORKFLOWS / name)) == []


def test_bench_holds_no_secret_and_no_write_token() -> None:
    assert check_no_secrets_no_write(load_workflow(WORKFLOWS / BENCH)) == []


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


def test_bench_checks_out_the_commit_of_the_event_and_cancels_per_pr() -> None:
    """The label vouches for the head the maintainer saw, not for what is pushed later."""
    wf = load_workflow(WORKFLOWS / BENCH)
    (job,) = jobs(wf).values()
    (checkout,) = [
        s for _, s in iter_steps(wf) if str(s.get("uses")).startswith("actions/checkout@")
    ]
    assert checkout["with"]["ref"] == "${{ github.event.pull_request.head.sha }}"
    assert job["permissions"] == {"contents": "read"}
    assert "github.event.pull_request.number" in job["concurrency"]["group"]
    assert job["concurrency"]["cancel-in-progress"] is True


def test_poster_permissions_and_secret_placement() -> None:
    wf = load_workflow(WORKFLOWS / POSTER)
    assert set(triggers(wf)) == {"workflow_run"}
    assert triggers(wf)["workflow_run"] == {"workflows": ["bench-pr"], "types": ["completed"]}
    (job,) = jobs(wf).values()
    assert job["runs-on"].startswith("ubuntu-")
    assert job["permissions"] == {
        "actions": "read",
        "contents": "read",
        "issues": "write",
        "pull-requests": "write",
        "statuses": "write",
    }
    assert job["concurrency"]["cancel-in-progress"] is False
    users = [s for _, s in iter_steps(wf) if "PERFBOT_ISSUES_TOKEN" in json.dumps(s)]
    assert [s.get("id") for s in users] == ["bot"]


def test_site_deploy_job_alone_can_write_pages() -> None:
    wf = load_workflow(WORKFLOWS / SITE)
    assert set(triggers(wf)) == {"push", "schedule", "workflow_dispatch"}
    assert triggers(wf)["push"] == {"branches": ["main"]}
    build, deploy = jobs(wf)["build"], jobs(wf)["deploy"]
    assert build["permissions"] == {"contents": "read"}
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
    "poster fetches by hand": (
        check_privileged_checkout_is_default_branch,
        [ON_WORKFLOW_RUN, add_step('run: |\n  git fetch origin "$HEAD"\n  make')],
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


def tool(name: str) -> str:
    """The console script installed beside this interpreter (zizmor ships no module)."""
    path = Path(sysconfig.get_path("scripts")) / name
    assert path.is_file(), f"{name} is not installed beside {sys.executable}: pip install .[test]"
    return str(path)


def run_tool(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def jactionlint(cwd: Path, *files: str) -> tuple[int, list[dict[str, Any]]]:
    """--strict-exit: a warning or an info finding fails too. Without files: the whole repo."""
    args = [sys.executable, "-m", "jactionlint", "--format", "json", "--strict-exit", "--no-hints"]
    proc = run_tool([*args, *files], cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout or "[]")


def zizmor(cwd: Path, *paths: str) -> tuple[int, list[dict[str, Any]]]:
    args = [tool("zizmor"), "--offline", "--strict-collection", "--format", "json", *paths]
    proc = run_tool(args, cwd)
    assert "error" not in proc.stderr.lower(), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def check_jsonschema(cwd: Path, *files: str) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows"]
    return run_tool([*args, *files], cwd)


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


def test_zizmor_flags_bad_workflow(bad_repo: Path) -> None:
    rc, findings = zizmor(bad_repo, ".github/workflows")
    assert rc != 0
    assert {"template-injection", "unpinned-uses", "artipacked"} <= {f["ident"] for f in findings}


@pytest.mark.parametrize("name", ALL)
def test_schema_accepts_workflow(name: str) -> None:
    proc = check_jsonschema(REPO, f".github/workflows/{name}")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_schema_rejects_bad_workflow(bad_repo: Path) -> None:
    path = bad_repo / ".github" / "workflows" / "bad.yml"
    path.write_text(BAD_FOR_LINTERS.replace("runs-on:", "runs_on:"), encoding="utf-8")
    proc = check_jsonschema(bad_repo, ".github/workflows/bad.yml")
    assert proc.returncode == 1 and "runs_on" in proc.stdout


# ----- the step scripts that touch untrusted data, run for real -----


def run_step(
    step: dict[str, Any], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """As the runner does: `bash --noprofile --norc -eo pipefail` or `python` on the script."""
    script = cwd / "step-script"
    script.write_text(step["run"], encoding="utf-8")
    shell = step.get("shell", "bash")
    cmd = (
        [sys.executable, str(script)]
        if shell == "python"
        else ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)]
    )
    full_env = {"PATH": os.environ["PATH"], "HOME": str(cwd), **env}
    return subprocess.run(
        cmd, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=60, check=False
    )


def outputs(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    return dict(line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines())


def git(cwd: Path, *args: str) -> str:
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    proc = subprocess.run(
        ["git", *ident, *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=30
    )
    return proc.stdout.strip()


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


BASE, HEAD = "a" * 40, "b" * 40


def write_artifact(tmp_path: Path, pr: str = "42", run_id: str = "1234") -> Path:
    """Runs bench-pr's metadata step, so the poster is tested on what the bench really writes."""
    artifact = tmp_path / "bench"
    (artifact / "results" / "h200-nvidia-h200").mkdir(parents=True)
    (artifact / "results" / "h200-nvidia-h200" / "x.json").write_text("{}", encoding="utf-8")
    step = step_by_id(load_workflow(WORKFLOWS / BENCH), "write-meta")
    env = {"PR_NUMBER": pr, "BASE_SHA": BASE, "PR_HEAD_SHA": HEAD, "RUN_ID": run_id}
    proc = run_step(step, artifact, env)
    assert proc.returncode == 0, proc.stderr
    (artifact / "step-script").unlink()
    return artifact


def validate(tmp_path: Path, artifact: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path / "validate-out"
    step = step_by_id(load_workflow(WORKFLOWS / POSTER), "meta")
    env = {"ARTIFACT_DIR": str(artifact), "EXPECTED_RUN_ID": "1234", "EXPECTED_HEAD_SHA": HEAD}
    return run_step(step, tmp_path, {**env, "GITHUB_OUTPUT": str(out)}), out


def test_poster_accepts_what_the_bench_writes(tmp_path: Path) -> None:
    proc, out = validate(tmp_path, write_artifact(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = str(tmp_path / "bench" / "results")
    assert outputs(out) == {"pr": "42", "base": BASE, "head": HEAD, "results": results}


def test_bench_refuses_to_write_malformed_metadata(tmp_path: Path) -> None:
    step = step_by_id(load_workflow(WORKFLOWS / BENCH), "write-meta")
    env = {"PR_NUMBER": "42; rm -rf /", "BASE_SHA": BASE, "PR_HEAD_SHA": HEAD, "RUN_ID": "1"}
    assert run_step(step, tmp_path, env).returncode != 0
    assert not (tmp_path / "bench-meta.json").exists()


INJECTED = "\n::error::pwned"
META_MUTATIONS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "pr as text": lambda m: {**m, "pr": "42"},
    "pr as bool": lambda m: {**m, "pr": True},
    "pr zero": lambda m: {**m, "pr": 0},
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
    assert proc.returncode == 1
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
        assert proc.returncode == 1, breakage
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


def shim(tmp_path: Path, name: str, body: str) -> str:
    """A stand-in for a program the step calls (the bot, gh): the step's own logic is under test."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    program = bindir / name
    program.write_text(f"#!/bin/bash\nprintf '%s\\n' \"$*\" >> {tmp_path}/{name}.calls\n{body}\n")
    program.chmod(0o755)
    return f"{bindir}:{os.environ['PATH']}"


EXIT_CODES = [(0, 0, ""), (1, 0, "::warning::"), *((rc, rc, "::error::") for rc in (2, 3, 4))]


@pytest.mark.parametrize(("bot_rc", "step_rc", "level"), EXIT_CODES)
def test_poster_maps_bot_exit_codes(tmp_path: Path, bot_rc: int, step_rc: int, level: str) -> None:
    path = shim(tmp_path, "python", f"exit {bot_rc}")
    out = tmp_path / "out"
    env = {**STEP_ENV, "PATH": path, "GITHUB_OUTPUT": str(out), "RESULTS_DIR": "/r"}
    proc = run_step(step_by_id(load_workflow(WORKFLOWS / POSTER), "bot"), tmp_path, env)
    assert proc.returncode == step_rc
    assert outputs(out) == {"rc": str(bot_rc)}
    assert (level in proc.stdout) if level else "::" not in proc.stdout
    want = f"-m bot pr --results /r --base {BASE} --head {HEAD} --repo {OUR_REPO} --pr 42"
    assert (tmp_path / "python.calls").read_text().split() == want.split()


@pytest.mark.parametrize(("bot_rc", "state"), [("0", "success"), ("1", "failure"), ("3", "error")])
def test_poster_sets_commit_status(tmp_path: Path, bot_rc: str, state: str) -> None:
    env = {**STEP_ENV, "PATH": shim(tmp_path, "gh", ""), "BOT_RC": bot_rc}
    proc = run_step(step_by_id(load_workflow(WORKFLOWS / POSTER), "status"), tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    call = (tmp_path / "gh.calls").read_text()
    assert f"repos/{OUR_REPO}/statuses/{HEAD}" in call and f"state={state}" in call


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

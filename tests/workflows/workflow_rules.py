"""The checks behind tests/test_workflows.py: what keeps the workflows safe against fork PRs.

The trust model (docs/WORKFLOWS.md) rests on properties no generic linter knows: which events
may reach the self-hosted GPU runner, where secrets may appear, and what the privileged poster
may check out. Each rule here is a pure function from a parsed workflow to a list of problems
(empty when fine), so a test can run it on the real files and on a deliberately bad one alike.
The module also holds the I/O edges the tests share: running the real linters, and running a
step's script as the runner would, taken from the workflow file so the tests follow its edits.
Kept out of the test module so that the file list shows the concerns; no side effects on import.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from paths import REPO_ROOT
from ruamel.yaml import YAML
from workflow_expr import ExpressionError, evaluate_if, truthy

REPO = REPO_ROOT
WORKFLOWS = REPO / ".github" / "workflows"
BENCH, POSTER, SITE, CI = "bench-pr.yml", "post-results.yml", "publish-site.yml", "ci.yml"
NIGHTLY = "nightly.yml"
#: The unprivileged PR-event recorder (post-results.yml's second trigger); the runner calibration:
#: this repository's dispatch, and the reusable workflow it calls as Thunder and Fuser do.
EVENT, CALIBRATE = "perfbot-pr-event.yml", "calibrate-runner.yml"
CALIBRATE_PACKAGE = "calibrate-package.yml"
SCRIPTS = REPO / ".github" / "scripts"
#: The GPU host's lock, one script every GPU workflow sources (bench-pr, bench-package, nightly).
GPU_LOCK_SH = SCRIPTS / "gpu-lock.sh"
# The raw text is checked as well as the parsed YAML, because the version comment after a
# pinned SHA exists only in the text.
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>\S+)(?P<rest>.*)$")
PINNED_WITH_VERSION = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
VERSION_COMMENT = re.compile(r"^\s+#\s+v\d+(\.\d+)*\b")
SELF = re.compile(r"\$/\.github/workflows/[A-Za-z0-9._-]+\.yml")
GATE_LABEL = "run-gpu-bench"
OUR_REPO = "example-org/fusion-perfbot"
# Events only people with write access can cause: the only ones besides the gated
# pull_request that may start a job on the self-hosted runner.
# workflow_call: a called workflow's `if:` sees its caller's event, so the same untrusted
# scenarios below are evaluated against its gate (a caller on pull_request_target included).
SELF_HOSTED_TRIGGERS = {"pull_request", "push", "schedule", "workflow_call", "workflow_dispatch"}


class Workflow(NamedTuple):
    """Both forms of one file: rules on structure read `data`, rules on comments read `text`."""

    path: Path
    text: str
    data: dict[str, Any]


def load_workflow(path: Path) -> Workflow:
    """YAML 1.2 (ruamel), as GitHub reads it: `on` stays a string key, not YAML 1.1's True."""
    text = path.read_text(encoding="utf-8")
    data = copy.deepcopy(_parse(text))  # a rule's test may edit its copy
    assert isinstance(data, dict), f"{path.name}: not a mapping"
    return Workflow(path, text, data)


@functools.lru_cache(maxsize=256)
def _parse(text: str) -> Any:
    """The pure-Python parser takes 45 ms a workflow, and the rules' tests read the same few
    files over two hundred times: parse each text once."""
    return YAML(typ="safe", pure=True).load(text)


def triggers(wf: Workflow) -> dict[str, Any]:
    """`on:` may be a string, a list or a mapping; rules want one shape: event -> its filter."""
    on = wf.data.get("on", {})
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    return dict(on or {})


def jobs(wf: Workflow) -> dict[str, dict[str, Any]]:
    """A missing or empty `jobs:` (YAML null) is no jobs, not a crash inside a rule."""
    return dict(wf.data.get("jobs") or {})


def iter_steps(wf: Workflow) -> Iterator[tuple[str, dict[str, Any]]]:
    """With the job id, so a problem says where it is; reusable-workflow jobs have no steps."""
    for job_id, job in jobs(wf).items():
        for step in job.get("steps") or []:
            yield job_id, step


def step_by_id(wf: Workflow, step_id: str) -> dict[str, Any]:
    """Tests run a step's script from the workflow itself, so a renamed id must fail loudly."""
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
    """It runs with secrets on fork PRs. The raw text is searched too: even a mention fails."""
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
        if match and not SELF.fullmatch(match["ref"]) and not VERSION_COMMENT.match(match["rest"]):
            problems.append(f"line {number}: a pinned uses: needs a '# vX.Y.Z' comment")
    return problems


def pinned(ref: str) -> bool:
    """owner/repo[/path]@<40 hex digits>: a short SHA can be shadowed by a branch or tag. Or
    GitHub's self-repository form, ``$/.github/workflows/x.yml``: it resolves at the run's own
    commit, so it is pinned by construction (and, unlike ``./``, not read from the work tree)."""
    return PINNED_WITH_VERSION.fullmatch(ref) is not None or SELF.fullmatch(ref) is not None


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
    """Without one a hung job holds its runner (the GPU one too) for GitHub's 360 minutes."""
    return [
        f"{job_id}: no timeout-minutes"
        for job_id, job in jobs(wf).items()
        if "uses" not in job and not isinstance(job.get("timeout-minutes"), int)
    ]


def check_secrets_only_in_step_env(wf: Workflow) -> list[str]:
    """A secret in a job's env reaches every step; only the step that needs it may see it."""
    return [f"secret outside a step's env: at {where}" for where in _secret_refs(wf.data, ())]


def _secret_refs(node: Any, path: tuple[str, ...]) -> Iterator[str]:
    """Dotted paths of strings that name a secret, except jobs.<id>.steps.<n>.env.<name>."""
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


def check_git_alone(steps: list[dict[str, Any]]) -> list[str]:
    """For a job that holds a write token: it downloads its artifact and runs git, nothing
    else (no checkout, no Python, no pip, no script of ours)."""
    problems = []
    used = [str(s.get("uses", "")).split("@")[0] for s in steps if "uses" in s]
    if used != ["actions/download-artifact"]:
        problems.append(f"uses {used}, not the artifact download alone")
    for step in steps:
        for word in (r"\bpython", r"\bpip\b", r"\bbash\b", r"\.github/", r"\bsource\b"):
            if re.search(word, str(step.get("run", ""))):
                problems.append(f"a step runs {word}")
    return problems


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


#: What fetches code onto a runner from a run: step (a checkout by hand, a clone, a PR's head).
FETCHES_CODE = re.compile(
    r"\b(git\s+(clone|fetch|checkout|switch|pull|worktree)|gh\s+(pr\s+checkout|repo\s+clone))\b"
)
#: Events anyone can cause on this repository whose runs get the default branch's workflow and
#: token (a comment, an issue, a review comment): their workflows must hold nothing worth taking.
ANYONE_TRIGGERS = {"issue_comment", "issues", "discussion_comment", "pull_request_review_comment"}


def check_checks_out_nothing(wf: Workflow) -> list[str]:
    """For a workflow that needs no code of ours or of the PR (the PR-event recorder): no
    checkout action and no run: step that fetches or checks out code."""
    problems = []
    for job_id, step in iter_steps(wf):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            problems.append(f"{job_id}: checks out code")
        if FETCHES_CODE.search(str(step.get("run", ""))):
            problems.append(f"{job_id}: a run: step fetches or checks out code")
    return problems


def check_comment_trigger_inert(wf: Workflow) -> list[str]:
    """A workflow on an event anyone can cause (a comment) holds no secret, asks for no write
    scope and checks nothing out: what such a run can do is say that the event happened."""
    if not ANYONE_TRIGGERS & set(triggers(wf)):
        return []
    return [
        f"on {sorted(ANYONE_TRIGGERS & set(triggers(wf)))}: {problem}"
        for problem in check_no_secrets_no_write(wf) + check_checks_out_nothing(wf)
    ]


#: The one checkout a privileged workflow may steer: the perfbot commit a reusing repository
#: pins through workflow_call inputs (post-results.yml checks their shape first); empty, this
#: repository's default branch. Never a value of the triggering event.
CALLER_PINNED_CHECKOUT = {
    "repository": "${{ inputs.perfbot-repository || github.repository }}",
    "ref": "${{ inputs.perfbot-ref }}",
}


def check_privileged_checkout_is_default_branch(wf: Workflow) -> list[str]:
    """workflow_run runs with secrets: it may check out only this repo's default branch (or
    the perfbot commit its caller pins, CALLER_PINNED_CHECKOUT)."""
    if "workflow_run" not in triggers(wf):
        return []
    problems = []
    for job_id, step in iter_steps(wf):
        given = {
            key
            for key, value in (step.get("with") or {}).items()
            if key in ("ref", "repository") and CALLER_PINNED_CHECKOUT.get(key) != value
        }
        if str(step.get("uses", "")).startswith("actions/checkout@") and given:
            problems.append(f"{job_id}: checkout sets {sorted(given)} in a workflow_run workflow")
        if re.search(
            r"\b(git\s+(fetch|checkout|switch|pull)|gh\s+pr\s+checkout)\b", str(step.get("run", ""))
        ):
            problems.append(f"{job_id}: a run: step fetches or checks out code")
    return problems


class Scenario(NamedTuple):
    """One event as an `if:` sees it: the `github` context, with a name for the problem text."""

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
# Events that reach the gate with no maintainer vouching for the head commit: a fork's opens,
# pushes and edits (also after the fork is deleted), another label, the gate label's removal,
# and a push to a PR still labelled from an earlier approval, which vouched for older code.
UNTRUSTED_EVENTS = [
    *(pr_event(a, FORK) for a in ("opened", "synchronize", "reopened", "edited")),
    pr_event("synchronize", None),  # the fork was deleted: head.repo is null
    pr_event("labeled", FORK, "bug"),
    pr_event("unlabeled", FORK, GATE_LABEL),
    pr_event("synchronize", FORK, GATE_LABEL),
    # A caller of a reusable bench on pull_request_target (a fork's code with the base's rights).
    Scenario(
        "pull_request_target from a fork (a caller's event)",
        {**pr_event("opened", FORK).github, "event_name": "pull_request_target"},
    ),
]


def runs_on_self_hosted(job: dict[str, Any]) -> bool | None:
    """None when runs-on is an expression: then nobody can say where the job runs."""
    runs_on = job.get("runs-on")
    labels = runs_on.get("labels", []) if isinstance(runs_on, dict) else runs_on
    labels = [labels] if isinstance(labels, str) else list(labels or [])
    if isinstance(runs_on, dict) and "group" in runs_on:
        return True
    # Every label must match: a literal self-hosted makes the job self-hosted whatever an
    # expression among the other labels gives (the matrix's GPU kind).
    if "self-hosted" in labels:
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


#: The workflows that must hold no secret and no write scope (check_no_secrets_no_write): the
#: benches run the PR's code, the PR-event recorder runs a fork's own copy of itself on
#: pull_request events, and the runner calibration needs none (it measures a pinned commit of
#: this suite, fits a model and uploads it).
UNPRIVILEGED = [BENCH, "bench-package.yml", EVENT, CALIBRATE, CALIBRATE_PACKAGE]


# The rules that hold for every workflow here; check_no_secrets_no_write holds only for the
# UNPRIVILEGED ones and check_checks_out_nothing for the PR-event recorder, so each is applied
# to those alone.
def check_no_github_env(wf: Workflow) -> list[str]:
    """A value written to GITHUB_ENV becomes every later step's environment (LD_PRELOAD,
    PATH...), where one written to GITHUB_OUTPUT is only read by name: no step here needs the
    former, and zizmor cannot check `shell: python` steps for it, so this does."""
    return [
        f"{job_id}: a step writes GITHUB_ENV"
        for job_id, step in iter_steps(wf)
        if "GITHUB_ENV" in str(step.get("run", "")) or "GITHUB_PATH" in str(step.get("run", ""))
    ]


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
    check_comment_trigger_inert,
    check_no_github_env,
]


# ----- the real linters: generic mistakes, on the real files or on a bad one -----


def newest_only(linter: str) -> None:
    """Skip where a linter the tests pin does not install (it needs Python >= 3.11): the
    workflow files are the same whatever the Python, and CI's newest-Python leg runs it."""
    if sys.version_info < (3, 11):
        pytest.skip(f"{linter} needs Python >= 3.11 (CI's newest-Python leg runs it)")


def tool(name: str) -> str:
    """The console script installed beside this interpreter (zizmor ships no module)."""
    path = Path(sysconfig.get_path("scripts")) / name
    assert path.is_file(), f"{name} is not installed beside {sys.executable}: pip install .[test]"
    return str(path)


def run_tool(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Never raises on a non-zero exit: each caller decides which exit codes mean findings."""
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def jactionlint(cwd: Path, *files: str) -> tuple[int, list[dict[str, Any]]]:
    """--strict-exit: a warning or an info finding fails too. Without files: the whole repo."""
    args = [sys.executable, "-m", "jactionlint", "--format", "json", "--strict-exit", "--no-hints"]
    proc = run_tool([*args, *files], cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout or "[]")


def zizmor(cwd: Path, *paths: str) -> tuple[int, list[dict[str, Any]]]:
    """Skipped on Python 3.10 (:func:`newest_only`). --offline: the tests must not need the
    network; --strict-collection: a file zizmor
    cannot parse fails the run instead of being skipped with a warning and looking clean."""
    newest_only("zizmor 1.32")
    args = [tool("zizmor"), "--offline", "--strict-collection", "--format", "json", *paths]
    proc = run_tool(args, cwd)
    assert "error" not in proc.stderr.lower(), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def check_jsonschema(cwd: Path, *files: str) -> subprocess.CompletedProcess[str]:
    """The vendored workflow schema, so the check needs no download; exit 1 means invalid.
    Skipped on Python 3.10, which check-jsonschema 0.39 does not install on (as zizmor)."""
    newest_only("check-jsonschema 0.39")
    args = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows"]
    return run_tool([*args, *files], cwd)


# ----- step scripts, run for real as the runner runs them -----


def run_step(
    step: dict[str, Any], cwd: Path, env: dict[str, str], script_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """As the runner does: `bash --noprofile --norc -eo pipefail` or `python` on the script.
    The script is written to `script_dir` (default `cwd`: give another when cwd is the
    repository itself)."""
    script = (script_dir or cwd) / "step-script"
    script.write_text(step["run"], encoding="utf-8")
    shell = step.get("shell", "bash")
    cmd = (
        [sys.executable, str(script)]
        if shell == "python"
        else ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)]
    )
    full_env = {"HOME": str(cwd), **env, "PATH": with_our_python(env.get("PATH"))}
    return subprocess.run(
        cmd, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=300, check=False
    )


@functools.cache
def _our_python() -> Path:
    """A folder whose ``python`` and ``python3`` run this test's interpreter (a script, not a
    symlink: a virtual environment's interpreter found through a link elsewhere forgets its
    environment)."""
    folder = Path(tempfile.mkdtemp(prefix="perfbot-python-"))
    for name in ("python", "python3"):
        program = folder / name
        program.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
        program.chmod(0o755)
    return folder


def with_our_python(path: str | None) -> str:
    """`path` (default: this process's PATH) with this test's interpreter as ``python`` and
    ``python3`` ahead of the system's, after any shims put before it: a step's `python -m bot`
    runs the bot this test imports, whatever interpreter is first on the machine's PATH."""
    system = os.environ["PATH"]
    path = path or system
    if not path.endswith(system):
        return path
    return f"{path[: len(path) - len(system)]}{_our_python()}{os.pathsep}{system}"


def outputs(path: Path) -> dict[str, str]:
    """A step's $GITHUB_OUTPUT as a dict; no file means the step wrote no output at all."""
    if not path.exists():
        return {}
    return dict(line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines())


def git(cwd: Path, *args: str) -> str:
    """Git with a fixed identity and no signing, so it works in a bare CI home directory."""
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    proc = subprocess.run(
        ["git", *ident, *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=30
    )
    return proc.stdout.strip()


def shim(tmp_path: Path, name: str, body: str) -> str:
    """A stand-in for a program the step calls (the bot, gh): the step's own logic is under test."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    program = bindir / name
    program.write_text(f"#!/bin/bash\nprintf '%s\\n' \"$*\" >> {tmp_path}/{name}.calls\n{body}\n")
    program.chmod(0o755)
    return f"{bindir}:{os.environ['PATH']}"


def shim_calls(tmp_path: Path, name: str) -> str:
    """What a shim was called with, a line a call; "" when the step never called it."""
    calls = tmp_path / f"{name}.calls"
    return calls.read_text() if calls.exists() else ""

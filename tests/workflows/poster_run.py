"""Run post-results.yml as a runner would, job by job and step by step, against the fake GitHub.

The unit tests run one step's script at a time with its neighbours shimmed; this runs them all
in order, so that an attack is tried on the poster as it is wired: each job's `if:`, each
step's `if:` and `env:` evaluated (workflow_expr), every `run:` script run for real (bash,
python, jq), `gh api` a small client of the fake over HTTP, and `python -m bot` the bot of the
tree given (this one, or an older commit's worktree for the "before" column). Each job gets a
GITHUB_TOKEN that can do what its `permissions:` say: a job without a write scope gets one the
fake refuses every write. What a runner does and this does not: `actions/checkout` (the tree
given is the checkout), `actions/setup-python` and the `pip install` steps (the bot is
installed here already); upload-artifact and download-artifact copy folders within the run.

A calling repository's files (examples/thunder/.github/workflows) run as GitHub would run them:
`run_recorders` runs each workflow an event starts (its jobs' `if:`, its scripts for real, what
it uploads kept), `posters` names the workflows a finished run's name starts (`workflow_run`),
and `run_caller` runs the reusable post-results.yml its job `uses:`, from the pinned checkout
given, with the job's `with:` as inputs and its `secrets:`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workflow_expr import _text, evaluate_if, truthy
from workflow_rules import jobs, load_workflow, outputs, run_step, triggers

#: `gh api [--method M] [-f k=v ...] [--jq Q] PATH`, all the poster's scripts use of gh.
GH_SHIM = """#!/usr/bin/env python3
import json, os, subprocess, sys, urllib.error, urllib.request
args, method, fields, jq, path = sys.argv[2:], "GET", {}, None, None
assert sys.argv[1] == "api", sys.argv
while args:
    flag = args.pop(0)
    if flag == "--method":
        method = args.pop(0)
    elif flag == "-f":
        key, _, value = args.pop(0).partition("=")
        fields[key] = value
    elif flag == "--jq":
        jq = args.pop(0)
    else:
        path = flag
url = os.environ["GITHUB_API_URL"].rstrip("/") + "/" + path.lstrip("/")
data = json.dumps(fields).encode() if method != "GET" else None
headers = {"Authorization": "token " + os.environ["GH_TOKEN"], "Content-Type": "application/json"}
try:
    body = urllib.request.urlopen(urllib.request.Request(url, data, headers, method=method)).read()
except urllib.error.HTTPError as err:
    sys.stderr.write(f"gh: HTTP {err.code} {method} {path}\\n")
    sys.exit(1)
if jq is None:
    sys.stdout.buffer.write(body)
    sys.exit(0)
done = subprocess.run(["jq", "-r", jq], input=body, capture_output=True)
sys.stdout.buffer.write(done.stdout)
sys.exit(done.returncode)
"""


@dataclass
class Tokens:
    """GITHUB_TOKEN for a job that can only read, for one that can write, and the secret."""

    read: str
    write: str
    issues: str


@dataclass
class Outcome:
    jobs: dict[str, str]  # job id: success, failure or skipped
    failed: str | None  # "job/step" of the first step that failed
    rc: int | None  # its exit status
    log: str
    artifacts: dict[str, Path] = field(default_factory=dict)


def interpolate(text: str, ctx: dict[str, Any]) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _text(evaluate_if(m[1].strip(), ctx)), text)


def _writes(job: dict[str, Any]) -> bool:
    perms = job.get("permissions") or {}
    return perms == "write-all" or (isinstance(perms, dict) and "write" in perms.values())


def run_poster(
    workflow: Path,
    bot_root: Path,
    api_url: str,
    web_url: str,
    repo: str,
    workflow_run: dict[str, Any],
    tokens: Tokens,
    tmp: Path,
    inputs: dict[str, str] | None = None,
    secrets: dict[str, str] | None = None,
    default_branch: str = "main",
) -> Outcome:
    """One run of the poster on the `workflow_run` event's payload; nothing is raised for a
    failed step: the outcome says which failed and how. `inputs` and `secrets`: what a
    caller's job passes (`with:`, `secrets:`); by default none, and the issues secret."""
    wf = load_workflow(workflow)
    bindir = tmp / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    (bindir / "gh").write_text(GH_SHIM, encoding="utf-8")
    (bindir / "gh").chmod(0o755)
    store: dict[str, Path] = {}
    done: dict[str, dict[str, Any]] = {}
    log: list[str] = []
    failed: tuple[str, int] | None = None
    for job_id, job in jobs(wf).items():
        needs = job.get("needs") or []
        needs = [needs] if isinstance(needs, str) else list(needs)
        token = tokens.write if _writes(job) else tokens.read
        temp = tmp / "runner" / job_id
        temp.mkdir(parents=True, exist_ok=True)
        ctx: dict[str, Any] = {
            "github": {
                "event": {
                    "workflow_run": workflow_run,
                    "repository": {"full_name": repo, "default_branch": default_branch},
                },
                "event_name": "workflow_run",
                "repository": repo,
                "token": token,
                "server_url": web_url,
                "run_id": "9001",
            },
            "inputs": dict(inputs or {}),
            "runner": {"temp": str(temp)},
            "secrets": {"PERFBOT_ISSUES_TOKEN": tokens.issues} if secrets is None else secrets,
            "needs": {n: done.get(n, {}) for n in needs},
            "steps": {},
        }
        needs_ok = all(done.get(n, {}).get("result") == "success" for n in needs)
        gate = job.get("if")
        if not needs_ok or (gate is not None and not truthy(evaluate_if(str(gate), ctx))):
            done[job_id] = {"result": "skipped", "outputs": {}}
            log.append(f"== job {job_id}: skipped")
            continue
        job_failed = False
        status = {"failed": False}  # what success() sees: read when a step's if: is evaluated
        ctx["__functions__"] = {
            "success": lambda status=status: not status["failed"],
            "always": lambda: True,
        }
        for n, step in enumerate(job["steps"]):
            name = step.get("id") or step.get("name", f"step-{n}")
            if not truthy(evaluate_if(str(step.get("if", "${{ success() }}")), ctx)):
                ctx["steps"][name] = {"outcome": "skipped", "conclusion": "skipped", "outputs": {}}
                continue
            out_file = temp / f"output-{n}"
            rc, text = _one_step(step, ctx, bot_root, bindir, temp, out_file, store, api_url, repo)
            log.append(f"== {job_id}/{name}: exit {rc}\n{text}")
            outcome = "success" if rc == 0 else "failure"
            ctx["steps"][name] = {
                "outcome": outcome,
                "conclusion": outcome,
                "outputs": outputs(out_file),
            }
            if rc != 0 and not job_failed:
                job_failed = status["failed"] = True
                failed = failed or (f"{job_id}/{name}", rc)
        job_outputs = {k: interpolate(str(v), ctx) for k, v in (job.get("outputs") or {}).items()}
        done[job_id] = {"result": "failure" if job_failed else "success", "outputs": job_outputs}
    return Outcome(
        {j: d["result"] for j, d in done.items()},
        failed[0] if failed else None,
        failed[1] if failed else None,
        "\n".join(log),
        store,
    )


def _one_step(
    step: dict[str, Any],
    ctx: dict[str, Any],
    bot_root: Path,
    bindir: Path,
    temp: Path,
    out_file: Path,
    store: dict[str, Path],
    api_url: str,
    repo: str,
) -> tuple[int, str]:
    uses = str(step.get("uses", "")).split("@")[0]
    inputs = {k: interpolate(str(v), ctx) for k, v in (step.get("with") or {}).items()}
    if uses in ("actions/checkout", "actions/setup-python"):
        return 0, f"({uses}: the tree given is the checkout)"
    if uses == "actions/upload-artifact":
        saved = temp.parent.parent / "artifacts" / inputs["name"]
        shutil.copytree(inputs["path"].strip(), saved)
        store[inputs["name"]] = saved
        return 0, f"uploaded {inputs['name']}"
    if uses == "actions/download-artifact":
        if inputs["name"] not in store:
            return 1, f"no artifact {inputs['name']} in this run"
        shutil.copytree(store[inputs["name"]], inputs["path"], dirs_exist_ok=True)
        return 0, f"downloaded {inputs['name']}"
    if uses:
        return 1, f"the harness cannot run {uses}"
    if "pip install" in step["run"]:
        return 0, "(pip install: the bot is installed here already)"
    env = {k: interpolate(str(v), ctx) for k, v in (step.get("env") or {}).items()}
    env |= {
        "GITHUB_REPOSITORY": repo,
        "GITHUB_OUTPUT": str(out_file),
        "GITHUB_API_URL": api_url,
        "GITHUB_SERVER_URL": ctx["github"]["server_url"],
        "GITHUB_RUN_ID": "9001",
        "GITHUB_ACTIONS": "true",
        "RUNNER_TEMP": str(temp),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PATH": f"{bindir}:{os.environ['PATH']}",
    }
    try:
        proc = run_step(step, bot_root, env, script_dir=temp)
    except subprocess.TimeoutExpired:
        return 124, "timed out"
    return proc.returncode, proc.stdout + proc.stderr


# ----- a calling repository's workflows, as GitHub starts them -----


@dataclass
class Recorded:
    """A finished run of an unprivileged workflow of the caller, and what it uploaded."""

    path: str  # .github/workflows/<file>, as GitHub's run says
    name: str  # the workflow's name: what a `workflow_run` trigger lists
    artifacts: dict[str, dict[str, bytes]]  # artifact name: its files


def _started(on: dict[str, Any], event_name: str, action: str | None) -> bool:
    if event_name not in on:
        return False
    types = (on[event_name] or {}).get("types")
    return types is None or action in types


def run_recorders(
    root: Path, event_name: str, event: dict[str, Any], repo: str, tmp: Path
) -> list[Recorded]:
    """Every workflow of the caller at `root` that this event starts, run: each job whose
    `if:` lets the event through, its `run:` steps for real (env interpolated), upload-artifact
    kept. A job that calls a reusable workflow is not run here (the GPU bench): a test makes
    that run's artifacts itself."""
    done = []
    github = {"event_name": event_name, "event": event, "repository": repo}
    for path in sorted((root / ".github" / "workflows").glob("*.yml")):
        wf = load_workflow(path)
        if not _started(triggers(wf), event_name, event.get("action")):
            continue
        artifacts: dict[str, dict[str, bytes]] = {}
        for job_id, job in jobs(wf).items():
            gate = job.get("if")
            if gate is not None and not truthy(evaluate_if(str(gate), {"github": github})):
                continue
            assert "uses" not in job, f"{path.name}/{job_id}: a reusable workflow, not run here"
            work = tmp / "recorders" / path.stem / job_id
            work.mkdir(parents=True, exist_ok=True)
            for step in job["steps"]:
                ctx = {"github": github}
                given = {k: interpolate(str(v), ctx) for k, v in (step.get("with") or {}).items()}
                if str(step.get("uses", "")).startswith("actions/upload-artifact@"):
                    files = [work / line.strip() for line in given["path"].splitlines()]
                    found = {f.name: f.read_bytes() for f in files if f.is_file()}
                    assert found, f"{path.name}: nothing to upload at {given['path']}"
                    artifacts[given["name"]] = found
                    continue
                assert "uses" not in step, f"{path.name}: the harness cannot run {step['uses']}"
                env = {k: interpolate(str(v), ctx) for k, v in (step.get("env") or {}).items()}
                proc = run_step(step, work, env, script_dir=tmp)
                assert proc.returncode == 0, f"{path.name}/{job_id}: {proc.stdout}{proc.stderr}"
        name = str(wf.data.get("name", f".github/workflows/{path.name}"))
        done.append(Recorded(f".github/workflows/{path.name}", name, artifacts))
    return done


def posters(root: Path, run_name: str) -> list[Path]:
    """The caller's workflows that a completed run of the workflow named `run_name` starts."""
    found = []
    for path in sorted((root / ".github" / "workflows").glob("*.yml")):
        on = triggers(load_workflow(path)).get("workflow_run")
        lists = isinstance(on, dict) and run_name in on.get("workflows", [])
        if lists and "completed" in on.get("types", ["completed"]):
            found.append(path)
    return found


def called(caller: Path) -> tuple[str, dict[str, Any]]:
    """The caller's one job: what it `uses:` (owner/name/path@ref) and the job itself."""
    (job,) = jobs(load_workflow(caller)).values()
    return str(job["uses"]), job


def run_caller(
    caller: Path,
    pinned: Path,
    api_url: str,
    web_url: str,
    repo: str,
    workflow_run: dict[str, Any],
    tokens: Tokens,
    tmp: Path,
) -> Outcome:
    """The caller's poster workflow on the `workflow_run` payload: the reusable workflow its
    job `uses:` (a path in `pinned`, the fusion-perfbot checkout of the pinned commit), with
    the job's `with:` as inputs and `secrets:` evaluated in the caller's context."""
    uses, job = called(caller)
    target = uses.split("@", 1)[0].split("/", 2)[2]
    ctx = {
        "github": {"repository": repo, "event": {"workflow_run": workflow_run}},
        "secrets": {"PERFBOT_ISSUES_TOKEN": tokens.issues},
    }
    declared = triggers(load_workflow(pinned / target))["workflow_call"].get("inputs") or {}
    unknown = set(job.get("with") or {}) - set(declared)
    assert not unknown, f"{caller.name}: {target} takes no input {sorted(unknown)}"
    # GitHub gives an input the caller left out its default.
    inputs = {k: str(v.get("default", "")) for k, v in declared.items()}
    inputs |= {k: interpolate(str(v), ctx) for k, v in (job.get("with") or {}).items()}
    secrets = {k: interpolate(str(v), ctx) for k, v in (job.get("secrets") or {}).items()}
    return run_poster(
        pinned / target, pinned, api_url, web_url, repo, workflow_run, tokens, tmp, inputs, secrets
    )

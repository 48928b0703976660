"""nightly.yml: what each job may touch, and its steps run for real (git, bash, the bot).

The trust rules of workflow_rules.py hold for it like for every workflow (test_workflows.py);
here what is particular to it: trusted code only (main, schedule or dispatch), one write token
in a job that runs git alone, the issues token in one step, Pages' scopes for the site's
deploy job; and its scripts, run as the runner runs them, against real git repositories (a
bare repository stands in for GitHub), a real store and the real bot.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from paths import run_bot
from workflow_expr import evaluate_if, truthy
from workflow_rules import (
    GPU_LOCK_SH,
    NIGHTLY,
    OUR_REPO,
    REPO,
    SITE,
    UNTRUSTED_EVENTS,
    WORKFLOWS,
    check_git_alone,
    git,
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

WF = load_workflow(WORKFLOWS / NIGHTLY)
NIGHTLIES = REPO / "data" / "h200-thunder-nightlies" / "results"
KEY = "cee6d1168fc57e24c6e7b1153b91a98d3f3088b9"  # a recorded nightly's commit
MACHINE = "nvidia-h200"


def _github(event: str, ref: str = "refs/heads/main") -> dict[str, Any]:
    return {"repository": OUR_REPO, "event_name": event, "ref": ref, "event": {}}


def _runs(job: dict[str, Any], github: dict[str, Any], skip: str = "false") -> bool:
    needs = {
        "plan": {"outputs": {"skip": skip}},
        "bisect-plan": {"outputs": {"planned": "true"}},
    }
    return truthy(evaluate_if(str(job["if"]), {"github": github, "needs": needs}))


def test_trusted_code_only_main_on_a_schedule_or_a_dispatch() -> None:
    assert set(triggers(WF)) == {"schedule", "workflow_dispatch"}
    for job_id, job in jobs(WF).items():
        assert _runs(job, _github("schedule")), job_id
        assert _runs(job, _github("workflow_dispatch")), job_id
        assert not _runs(job, _github("workflow_dispatch", "refs/heads/feature")), job_id
        assert not _runs(job, _github("push")), job_id
        for scenario in UNTRUSTED_EVENTS:
            assert not _runs(job, scenario.github), (job_id, scenario.name)
    # No standing break to follow: nothing bisected, nothing posted.
    for job_id in ("bisect", "bisect-post"):
        context = {"github": _github("schedule"), "needs": {"bisect-plan": {"outputs": {}}}}
        assert not truthy(evaluate_if(str(jobs(WF)[job_id]["if"]), context)), job_id
    # A build the store has already: nothing measured, merged or pushed.
    for job_id in ("shard", "merge"):
        assert not _runs(jobs(WF)[job_id], _github("schedule"), skip="true")
    for job in jobs(WF).values():  # every checkout: the run's own commit of main
        for step in job.get("steps", []):
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert set(step["with"]) <= {"fetch-depth", "persist-credentials", "ref", "path"}
                assert step["with"].get("ref") in (None, "${{ needs.merge.outputs.new_tip }}")


def test_what_each_job_may_touch() -> None:
    j = jobs(WF)
    read = {"contents": "read"}
    for job_id in ("plan", "shard", "merge", "watch", "bisect-plan", "bisect", "bisect-post"):
        assert j[job_id]["permissions"] == read, job_id
    assert j["push"]["permissions"] == {"contents": "write"}
    assert j["publish"]["permissions"] == {
        "contents": "read",
        "pages": "write",
        "id-token": "write",
    }
    assert j["publish"]["uses"] == f"$/.github/workflows/{SITE}"
    site = load_workflow(WORKFLOWS / SITE)
    assert "workflow_call" in triggers(site)
    assert jobs(site)["build"]["permissions"] == read  # narrower than the caller's grant
    # The write token's job runs git alone: no checkout, no Python, no pip, no script of ours.
    assert check_git_alone(j["push"]["steps"]) == []
    # The issues token: the watch's and the bisect poster's one step, in the perfbot
    # environment; never on the GPU runner, which installs builds from outside.
    holders = [(jid, s.get("id")) for jid, s in iter_steps(WF) if "secrets." in json.dumps(s)]
    assert holders == [("watch", "watch"), ("bisect-post", "post")]
    for job_id in ("watch", "bisect-post"):
        assert j[job_id]["environment"] == "perfbot"
        installs = [s["run"] for s in j[job_id]["steps"] if "pip install" in str(s.get("run", ""))]
        assert installs and all("--require-hashes" in r and "--no-deps" in r for r in installs)
    assert "environment" not in j["bisect"] and "self-hosted" in j["bisect"]["runs-on"]


def test_one_gpu_kind_queued_like_bench_pr_and_every_shard_kept() -> None:
    shard = jobs(WF)["shard"]
    assert shard["runs-on"] == ["self-hosted", "linux", "x64", "${{ needs.plan.outputs.runner }}"]
    assert shard["strategy"] == {
        "fail-fast": False,
        "matrix": {"include": "${{ fromJSON(needs.plan.outputs.shards) }}"},
    }
    assert shard["concurrency"] == {
        "group": "perfbot-gpu-${{ needs.plan.outputs.runner }}",
        "cancel-in-progress": False,
        "queue": "max",
    }
    steps = {s.get("name"): s for s in shard["steps"]}
    upload = next(s for s in shard["steps"] if "upload-artifact" in str(s.get("uses")))
    assert upload["if"] == "${{ always() }}" and upload["with"]["overwrite"] is True
    assert upload["with"]["name"] == "nightly-shard-${{ matrix.k }}"
    resume = next(s for s in shard["steps"] if "download-artifact" in str(s.get("uses")))
    assert resume["with"]["name"] == upload["with"]["name"]
    assert resume["if"] == "${{ github.run_attempt != '1' }}"
    assert any("benchmarks.shards run" in str(s.get("run")) for s in steps.values())
    merge = next(s for s in jobs(WF)["merge"]["steps"] if "download-artifact" in str(s.get("uses")))
    assert merge["with"] == {
        "pattern": "nightly-shard-*",
        "merge-multiple": True,
        "path": "results",
    }


# ----- the plan job -----


def test_the_plan_checks_its_inputs(tmp_path: Path) -> None:
    step = step_by_id(WF, "inputs")
    # The runner label as bench-pr's matrix has it: the nightly's variable, else the first.
    assert step["env"]["RUNNER"] == (
        "${{ vars.PERFBOT_NIGHTLY_RUNNER"
        " || fromJSON(vars.PERFBOT_GPU_RUNNERS || '[\"gpu-h200\"]')[0] }}"
    )
    bench = load_workflow(WORKFLOWS / "bench-pr.yml")
    assert "fromJSON(vars.PERFBOT_GPU_RUNNERS || '[\"gpu-h200\"]')" in bench.text
    out = tmp_path / "out"
    good = {"PACKAGE": "thunder", "BUILD": "", "RUNNER": "gpu-h200", "GITHUB_OUTPUT": str(out)}
    proc = run_step(step, tmp_path, good)
    assert proc.returncode == 0, proc.stdout
    assert outputs(out) == {"package": "thunder", "runner": "gpu-h200"}
    for bad in (
        {"PACKAGE": "torch"},
        {"BUILD": "x; rm -rf /"},
        {"BUILD": "lightning-thunder"},
        {"RUNNER": "::error::x"},
        {"RUNNER": "a b"},
    ):
        out.unlink(missing_ok=True)
        proc = run_step(step, tmp_path, {**good, **bad})
        assert proc.returncode == 1 and "::error::" in proc.stdout, bad
        assert not out.exists()


def _store(*args: str) -> None:
    """``python -m bot store ARGS``, which must succeed."""
    done = run_bot("store", *args, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def made_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real store (bot store init, add) holding the recorded nightly `KEY`, made once for the
    module; a test takes a copy of its own (``_store_with_the_key``), never this one."""
    store = tmp_path_factory.mktemp("made-store") / "store-src"
    for args in (
        ["init", "--store", str(store)],
        [
            "add",
            "--store",
            str(store),
            "--results",
            str(NIGHTLIES),
            "--commit",
            KEY,
            "--machine",
            MACHINE,
        ],
    ):
        _store(*args)
    return store


def _store_with_the_key(made_store: Path, tmp_path: Path) -> Path:
    """The test's own copy of the store holding `KEY` (a git repository, copied whole)."""
    store = tmp_path / "store-src"
    shutil.copytree(made_store, store, symlinks=True)
    return store


def _checkout(tmp_path: Path, store: Path | None) -> Path:
    """A checkout of main as fetch-depth 0 leaves it: origin/perf-results when there is one."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    git(checkout, "init", "-q", "-b", "main")
    git(checkout, "commit", "-q", "--allow-empty", "-m", "main")
    if store is not None:
        git(checkout, "fetch", "-q", str(store), "perf-results:refs/remotes/origin/perf-results")
    return checkout


@pytest.mark.parametrize(
    ("stored", "replace", "skip"),
    [(True, "false", "true"), (True, "true", "false"), (False, "false", "false")],
    ids=["stored", "stored, replace", "no store yet"],
)
def test_a_build_in_the_store_is_not_measured_again(
    made_store: Path, tmp_path: Path, stored: bool, replace: str, skip: str
) -> None:
    checkout = _checkout(tmp_path, _store_with_the_key(made_store, tmp_path) if stored else None)
    out, summary = tmp_path / "out", tmp_path / "summary"
    env = {
        "KEY": KEY,
        "SPEC": "lightning-thunder==0.2.7.dev20260201",
        "REPLACE": replace,
        "GITHUB_OUTPUT": str(out),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    proc = run_step(step_by_id(WF, "stored"), checkout, env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs(out) == {"skip": skip}
    assert f"already stored and skipped: {skip}" in summary.read_text()
    # Another key: measured.
    out.unlink()
    proc = run_step(step_by_id(WF, "stored"), checkout, {**env, "KEY": "f" * 40}, tmp_path)
    assert outputs(out) == {"skip": "false"}


def test_the_plan_gives_the_shards_as_a_matrix(tmp_path: Path) -> None:
    """The real planner on the real size set and cost model."""
    out = tmp_path / "out"
    env = {
        "NIGHTLY_VARIANTS": "nvfuser,thunder-prims,thunder-func",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(out),
    }
    proc = run_step(step_by_id(WF, "shards"), REPO, env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shards = json.loads(outputs(out)["shards"])
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert [s["shard"] for s in shards] == [s["shard"] for s in plan["shards"]]
    assert [s["k"] for s in shards] == [str(k) for k in range(1, plan["count"] + 1)]
    assert sum(len(s["points"]) for s in plan["shards"]) == 180


# ----- the build: the same key on every machine -----


def _test_inputs() -> ModuleType:
    """tests/suite/under_test_inputs.py, for its wheel maker (one definition of a test wheel)."""
    path = REPO / "tests" / "suite" / "under_test_inputs.py"
    spec = importlib.util.spec_from_file_location("nightly_under_test_inputs", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_make_wheel = _test_inputs().make_wheel


def _wheel(index: Path, version: str) -> None:
    """A pure wheel of lightning-thunder (TEST INPUT) in `index`, as pip's index would serve it."""
    _make_wheel(index, version)


def _build(tmp_path: Path, work: str, *spec: str) -> tuple[int, dict[str, str], str]:
    env = {
        **os.environ,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(tmp_path / "index"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "HOME": str(tmp_path),
    }
    proc = subprocess.run(
        ["bash", ".github/scripts/nightly-build.sh", "thunder", str(tmp_path / work), *spec],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    found = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    return proc.returncode, found, proc.stderr


@pytest.mark.slow  # seconds of real pip, asv or bash end to end (docs/BOT.md: pytest -m slow)
def test_the_newest_build_is_installed_and_keyed_alike_everywhere(tmp_path: Path) -> None:
    for version in ("0.2.6", "0.2.7.dev20260104", "0.2.7.dev20260201"):
        _wheel(tmp_path / "index", version)
    code, plan, err = _build(tmp_path, "plan")
    assert code == 0, err
    assert plan["spec"] == "lightning-thunder==0.2.7.dev20260201"
    assert plan["version"] == "0.2.7.dev20260201" and len(plan["key"]) == 40
    # A shard, on another machine, given the plan's spec: the same key.
    code, shard, err = _build(tmp_path, "shard", plan["spec"])
    assert code == 0, err
    assert shard["key"] == plan["key"] and Path(shard["overlay"]).is_dir()
    record = json.loads((tmp_path / "shard" / "under-test.json").read_text())
    assert record["side"] == "nightly" and record["key"] == plan["key"]
    assert (Path(shard["overlay"]) / "thunder" / "__init__.py").is_file()
    code, older, err = _build(tmp_path, "older", "lightning-thunder==0.2.7.dev20260104")
    assert code == 0 and older["key"] != plan["key"]
    code, _, err = _build(tmp_path, "none", "lightning-thunder==9.9.9")
    assert code != 0 and "pip" in err


def test_a_shard_that_installs_another_build_stops(tmp_path: Path) -> None:
    (tmp_path / ".github" / "scripts").mkdir(parents=True)
    (tmp_path / ".github" / "scripts" / "nightly-build.sh").write_text(
        "echo key=" + "b" * 40 + "\necho overlay=/x\n"
    )
    env = {
        "PACKAGE": "thunder",
        "SPEC": "lightning-thunder==0.2.6",
        "KEY": "a" * 40,
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "out"),
    }
    proc = run_step(_job_step("shard", "build"), tmp_path, env)
    assert proc.returncode == 1 and "another build than the plan keyed" in proc.stdout


def _job_step(job_id: str, step_id: str) -> dict[str, Any]:
    (step,) = [s for s in jobs(WF)[job_id]["steps"] if s.get("id") == step_id]
    return step


# ----- a shard measures under the lock -----


@pytest.mark.parametrize(
    ("status", "level"),
    [(0, ""), (3, "no usable GPU"), (4, "some points raised"), (1, "failed (exit 1)")],
)
def test_the_shard_measures_under_the_lock_and_says_why_it_failed(
    tmp_path: Path, status: int, level: str
) -> None:
    (tmp_path / "lock").mkdir()
    build = tmp_path / "nightly-build"
    build.mkdir()
    (build / "under-test.json").write_text('{"side": "nightly"}')
    path = shim(
        tmp_path,
        "python3",
        f'echo "PYTHONPATH=$PYTHONPATH UT=$RMSNORM_BENCH_UNDER_TEST" >> {tmp_path}/env\n'
        f"exit {status}",
    )
    env = {
        "PATH": path,
        "SHARD": "2/3",
        "KEY": KEY,
        "MACHINE": MACHINE,
        "OVERLAY": "/ov",
        "NIGHTLY_VARIANTS": "nvfuser,thunder-prims,thunder-func",
        "RUNNER_TEMP": str(tmp_path),
        "PERFBOT_GPU_LOCK": str(tmp_path / "lock" / "gpu.lock"),
        "PERFBOT_GPU_LOCK_SH": str(GPU_LOCK_SH),
    }
    proc = run_step(_job_step("shard", "measure"), tmp_path, env)
    assert proc.returncode == status
    assert "holding the GPU lock" in proc.stdout
    assert (level in proc.stdout) if level else "::error::" not in proc.stdout
    call = (tmp_path / "python3.calls").read_text().split()
    assert call == [
        "-m",
        "benchmarks.shards",
        "run",
        "--size-set",
        "nightly",
        "--variants",
        "nvfuser,thunder-prims,thunder-func",
        "--shard",
        "2/3",
        "--commit",
        KEY,
        "--results",
        "results",
        "--machine",
        MACHINE,
    ]
    assert (tmp_path / "env").read_text().strip() == 'PYTHONPATH=/ov UT={"side": "nightly"}'


# ----- the merge -----


@pytest.mark.parametrize(
    ("status", "says"), [(0, ""), (5, "points are missing"), (6, "the shards disagree")]
)
def test_the_merge_names_the_one_machine_and_its_failures(
    tmp_path: Path, status: int, says: str
) -> None:
    (tmp_path / "results" / MACHINE / f"{KEY}.shards").mkdir(parents=True)
    path = shim(tmp_path, "python3", f"exit {status}")
    out = tmp_path / "out"
    env = {
        "PATH": path,
        "KEY": KEY,
        "REPLACE": "true",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(out),
    }
    proc = run_step(_job_step("merge", "merge"), tmp_path, env)
    assert proc.returncode == status and (says in proc.stdout if says else True)
    assert outputs(out) == {"machine": MACHINE}
    call = (tmp_path / "python3.calls").read_text().split()
    assert call == [
        "-m",
        "benchmarks.shards",
        "merge",
        "--results",
        "results",
        "--commit",
        KEY,
        "--machine",
        MACHINE,
        "--store",
        "--asv-repo",
        f"{tmp_path}/nightly-build/keys",
        "--replace",
    ]
    (tmp_path / "results" / "nvidia-b200").mkdir()
    proc = run_step(_job_step("merge", "merge"), tmp_path, env)
    assert proc.returncode == 1 and "not one" in proc.stdout


def _bot_env(tmp_path: Path) -> dict[str, str]:
    return {
        "PYTHONPATH": str(REPO),
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "sum"),
    }


def test_the_store_is_opened_from_perf_results_or_made(made_store: Path, tmp_path: Path) -> None:
    store_src = _store_with_the_key(made_store, tmp_path)
    tip = git(store_src, "rev-parse", "perf-results")
    checkout = _checkout(tmp_path, store_src)
    proc = run_step(_job_step("merge", "store"), checkout, _bot_env(tmp_path), tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs(tmp_path / "out") == {"old_tip": tip}
    assert git(checkout / "store", "rev-parse", "HEAD") == tip
    assert git(checkout / "store", "branch", "--show-current") == "perf-results"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    empty = _checkout(fresh, None)
    proc = run_step(_job_step("merge", "store"), empty, _bot_env(fresh), fresh)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no perf-results branch yet" in proc.stdout
    assert outputs(fresh / "out") == {"old_tip": ""}
    assert json.loads((empty / "store" / "index.json").read_text())["rows"] == []


def _merged(tmp_path: Path) -> Path:
    """A merge job's folder after the merge: a new store and the merged asv results."""
    work = tmp_path / "job"
    work.mkdir()
    subprocess.run(["cp", "-r", str(NIGHTLIES), str(work / "results")], check=True)
    _store("init", "--store", str(work / "store"))
    return work


@pytest.mark.slow  # seconds of real pip, asv or bash end to end (docs/BOT.md: pytest -m slow)
def test_the_result_is_added_checked_and_thinned_with_the_real_bot(tmp_path: Path) -> None:
    work = _merged(tmp_path)
    env = {**_bot_env(tmp_path), "KEY": KEY, "MACHINE": MACHINE, "REPLACE": "false"}
    add = next(s for s in jobs(WF)["merge"]["steps"] if "store add" in str(s.get("run")))
    proc = run_step(add, work, env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    store = work / "store"
    assert git(store, "status", "--porcelain") == ""
    assert KEY in git(store, "log", "--format=%s")
    assert json.loads((tmp_path / "history.json").read_text())["schema"] == "perfbot-history/1"
    assert "store: 1 run(s)" in (tmp_path / "sum").read_text()
    # The same night again (a re-run): nothing changes.
    head = git(store, "rev-parse", "HEAD")
    assert run_step(add, work, env, tmp_path).returncode == 0
    assert git(store, "rev-parse", "HEAD") == head


# ----- the push: git alone, compare-and-swap -----


def _remote(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A bare repository where GitHub would be: GITHUB_SERVER_URL/GITHUB_REPOSITORY."""
    server = tmp_path / "server"
    remote = server / OUR_REPO
    remote.mkdir(parents=True)
    git(remote, "init", "-q", "--bare")
    env = {
        "GITHUB_SERVER_URL": f"file://{server}",
        "GITHUB_REPOSITORY": OUR_REPO,
        "GITHUB_TOKEN": "t",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "sum"),
    }
    return remote, env


def _bundle(store: Path, tmp_path: Path) -> tuple[Path, str]:
    bundle = tmp_path / "bundle" / "perf-results.bundle"
    bundle.parent.mkdir(exist_ok=True)
    bundle.unlink(missing_ok=True)
    git(store, "bundle", "create", str(bundle), "perf-results")
    return bundle, git(store, "rev-parse", "perf-results")


def test_the_push_is_compare_and_swap(made_store: Path, tmp_path: Path) -> None:
    remote, env = _remote(tmp_path)
    push = _job_step("push", "push")
    store = _store_with_the_key(made_store, tmp_path)
    bundle, first = _bundle(store, tmp_path)
    # The first night: the branch must not exist yet, and now it does.
    proc = run_step(push, tmp_path, {**env, "BUNDLE": str(bundle), "OLD_TIP": "", "NEW_TIP": first})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git(remote, "rev-parse", "perf-results") == first
    assert "::add-mask::AUTHORIZATION: basic " in proc.stdout
    # The next night, squashed (a rewrite: a force push), on top of what it read: pushed.
    _store("thin", "--store", str(store), "--keep-history", "1")
    bundle, second = _bundle(store, tmp_path)
    assert second != first
    proc = run_step(
        push, tmp_path, {**env, "BUNDLE": str(bundle), "OLD_TIP": first, "NEW_TIP": second}
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git(remote, "rev-parse", "perf-results") == second
    # The same push again (a re-run of the job): the remote has it already; fine.
    proc = run_step(
        push, tmp_path, {**env, "BUNDLE": str(bundle), "OLD_TIP": second, "NEW_TIP": second}
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # A stale read (another night pushed in between), or "new" when it exists: refused.
    _store("pin", "--store", str(store), "--commit", KEY, "--reason", "a third night")
    bundle, third = _bundle(store, tmp_path)
    for old in (first, ""):
        proc = run_step(
            push, tmp_path, {**env, "BUNDLE": str(bundle), "OLD_TIP": old, "NEW_TIP": third}
        )
        assert proc.returncode == 1 and "moved since the merge" in proc.stdout
    assert git(remote, "rev-parse", "perf-results") == second
    # A bundle that is not what the merge said it made: refused before any push.
    proc = run_step(
        push, tmp_path, {**env, "BUNDLE": str(bundle), "OLD_TIP": second, "NEW_TIP": "c" * 40}
    )
    assert proc.returncode == 1 and "not the commit the merge made" in proc.stdout
    assert "t" not in {line.strip() for line in proc.stdout.splitlines()}


# ----- the watch, and the site's choice of results -----


@pytest.mark.parametrize(
    ("rc", "step_rc", "level"),
    [(0, 0, ""), (1, 0, "::warning::"), (5, 0, "::warning::"), (3, 3, "::error::")],
)
def test_the_watch_maps_the_bots_exit_codes(
    tmp_path: Path, rc: int, step_rc: int, level: str
) -> None:
    path = shim(tmp_path, "python", f"exit {rc}")
    env = {"PATH": path, "PERFBOT_ISSUES_TOKEN": "p", "GITHUB_OUTPUT": str(tmp_path / "out")}
    proc = run_step(_job_step("watch", "watch"), tmp_path, env)
    assert proc.returncode == step_rc and outputs(tmp_path / "out") == {"rc": str(rc)}
    assert (level in proc.stdout) if level else "::" not in proc.stdout
    assert (tmp_path / "python.calls").read_text().split() == [
        "-m",
        "bot",
        "history",
        "--results",
        "store/results",
    ]


def test_the_site_is_built_from_the_store_or_says_it_is_not(
    made_store: Path, tmp_path: Path
) -> None:
    step = step_by_id(load_workflow(WORKFLOWS / SITE), "results")
    checkout = _checkout(tmp_path, _store_with_the_key(made_store, tmp_path))
    proc = run_step(step, checkout, _bot_env(tmp_path), tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    chosen = Path(outputs(tmp_path / "out")["dirs"])
    assert chosen == tmp_path / "perf-results" / "results"
    assert (chosen / MACHINE / f"{KEY}.provenance.jsonl").is_file()
    assert "the history store, perf-results at" in (tmp_path / "sum").read_text()
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    bare = _checkout(fresh, None)
    proc = run_step(step, bare, _bot_env(fresh), fresh)
    assert proc.returncode == 0 and "::notice::no history store" in proc.stdout
    assert outputs(fresh / "out")["dirs"] == "data/h200-smoke/results"  # no recorded data
    (bare / "data" / "h200" / "results").mkdir(parents=True)
    (fresh / "out").unlink()
    proc = run_step(step, bare, _bot_env(fresh), fresh)
    assert outputs(fresh / "out")["dirs"].split() == [
        "data/h200/results",
        "data/h200-thunder-nightlies/results",
        "data/h200-nightly/results",
    ]
    assert "**no history store yet**" in (fresh / "sum").read_text()


def test_a_build_the_store_retired_is_not_measured_again(made_store: Path, tmp_path: Path) -> None:
    """A retired run is not brought back by `store add` (docs/STORE.md): measuring its key
    again would only spend the GPU, so the plan skips a retired key as it skips a stored one."""
    store = _store_with_the_key(made_store, tmp_path)
    index = json.loads((store / "index.json").read_text(encoding="utf-8"))
    (row,) = index["rows"]
    index["rows"], index["retired"] = [], [{**row, "retired": "by age, 2027-01-01"}]
    (store / "index.json").write_text(json.dumps(index), encoding="utf-8")
    git(store, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "retire")
    checkout = _checkout(tmp_path, store)
    out, summary = tmp_path / "out", tmp_path / "summary"
    env = {
        "KEY": KEY,
        "SPEC": "lightning-thunder==0.2.7.dev20260201",
        "REPLACE": "false",
        "GITHUB_OUTPUT": str(out),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    proc = run_step(step_by_id(WF, "stored"), checkout, env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs(out) == {"skip": "true"}


@pytest.mark.parametrize(("watch_rc", "listed"), [(0, True), (1, True), (5, True), (3, False)])
def test_the_site_lists_the_watchs_changes(tmp_path: Path, watch_rc: int, listed: bool) -> None:
    """publish-site runs the watch read-only (no token) and builds the site with its JSON, so
    the deployed site marks the watch's changes (docs/SITE.md); a watch that cannot read the
    results leaves the site without the list, with a warning, never without a site."""
    step = step_by_id(load_workflow(WORKFLOWS / SITE), "build")
    body = f'case "$*" in *" history "*) exit {watch_rc};; esac; exit 0'
    path = shim(tmp_path, "python", body)
    env = {"PATH": path, "RESULTS": "a/results b/results", "RUNNER_TEMP": str(tmp_path)}
    proc = run_step(step, tmp_path, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    watch, build = shim_calls(tmp_path, "python").splitlines()
    assert watch.split() == [
        *("-m", "bot", "history", "--results", "a/results", "--results", "b/results"),
        *("--dry-run", "--json", f"{tmp_path}/history.json"),
    ]
    assert ("--history-json" in build.split()) is listed
    assert build.split()[:3] == ["-m", "bot", "site"] and "--out" in build
    assert ("::warning::the watch could not read" in proc.stdout) is not listed
    assert "secrets" not in json.dumps(step) and "TOKEN" not in json.dumps(step)


# ----- the bisect of a standing break -----


@pytest.mark.parametrize(
    ("status", "step_rc", "level"),
    [
        (0, 0, "the first bad build is named"),
        (9, 0, "no first bad build can be named"),
        (8, 0, "the next night resumes"),
        (10, 10, "::error::a build could not be measured"),
        (3, 3, "::error::the bisect failed (exit 3)"),
    ],
)
def test_the_bisect_runs_under_the_lock_and_maps_its_exit_codes(
    tmp_path: Path, status: int, step_rc: int, level: str
) -> None:
    (tmp_path / "lock").mkdir()
    path = shim(tmp_path, "python3", f"exit {status}")
    env = {
        "PATH": path,
        "MACHINE": MACHINE,
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "PERFBOT_GPU_LOCK": str(tmp_path / "lock" / "gpu.lock"),
        "PERFBOT_GPU_LOCK_SH": str(GPU_LOCK_SH),
    }
    proc = run_step(_job_step("bisect", "bisect"), tmp_path, env)
    assert proc.returncode == step_rc and level in proc.stdout
    assert "holding the GPU lock" in proc.stdout
    assert outputs(tmp_path / "out") == {"status": str(status)}
    call = (tmp_path / "python3.calls").read_text().split()
    assert call[:4] == ["-m", "bot", "bisect", "--plan"] and "--post" not in call
    assert call[call.index("--machine") + 1] == MACHINE and "--budget-s" in call


def test_the_poster_measures_nothing_and_posts_the_answer(tmp_path: Path) -> None:
    path = shim(tmp_path, "python", "exit 8")
    env = {"PATH": path, "PERFBOT_ISSUES_TOKEN": "p"}
    proc = run_step(_job_step("bisect-post", "post"), tmp_path, env)
    assert proc.returncode == 0 and "not finished: nothing is written yet" in proc.stdout
    call = (tmp_path / "python.calls").read_text().split()
    assert {"--post-only", "--post"} <= set(call)
    restore, save = (
        s["with"]["key"]
        for s in jobs(WF)["bisect"]["steps"]
        if "actions/cache" in str(s.get("uses"))
    )
    assert restore == save and "github.run_id" in restore  # each night saves a new entry
    assert jobs(WF)["bisect-post"]["needs"] == ["bisect-plan", "bisect"]


def test_the_plan_step_writes_no_plan_for_a_history_without_a_standing_break(
    tmp_path: Path,
) -> None:
    """The real bot on the recorded nightlies (no break): nothing planned, no bisect job."""
    store = tmp_path / "store"
    shutil.copytree(NIGHTLIES, store / "results")
    env = {"GITHUB_OUTPUT": str(tmp_path / "out"), "GITHUB_STEP_SUMMARY": str(tmp_path / "sum"),
           "RUNNER_TEMP": str(tmp_path), "BUDGET_S": "9000", "GITHUB_TOKEN": "t",
           "PATH": os.environ["PATH"]}  # fmt: skip
    proc = run_step(_job_step("bisect-plan", "plan"), tmp_path, env)
    assert proc.returncode == 0, proc.stdout
    assert outputs(tmp_path / "out") == {"planned": "false", "slug": ""}
    assert "no standing alert can be bisected" in (tmp_path / "sum").read_text()
    proc = run_step(_job_step("bisect-plan", "plan"), tmp_path, {**env, "BUDGET_S": "1e9"})
    assert proc.returncode == 1 and "must be whole seconds" in proc.stdout

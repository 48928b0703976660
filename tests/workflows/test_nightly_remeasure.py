"""nightly.yml's re-measurement (docs/HISTORY.md, "Far beyond noise"): when the merge's watch
asks to measure tonight's build again, the `remeasure` jobs measure it again on the GPU runner
(no secret, the GPU lock, the stored run's machine), `remeasure-store` adds the run to the
store's re-measurements on top of the store the merge made, `remeasure-push` pushes it (git
alone, compare-and-swap), and the watch, which waits for it, reads it as a replicate and files
the change the same night. Each step's script is run as the runner runs it: real git, a real
store, the real bot on the recorded 11x step (data/h200), a bare repository for GitHub and the
fake GitHub for the issues.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from paths import DATA, run_bot
from workflow_expr import evaluate_if, truthy
from workflow_rules import (
    GPU_LOCK_SH,
    NIGHTLY,
    OUR_REPO,
    REPO,
    UNTRUSTED_EVENTS,
    WORKFLOWS,
    check_git_alone,
    git,
    jobs,
    load_workflow,
    outputs,
    run_step,
    shim,
    shim_calls,
)

from bot.github.fake import BOT_LOGIN, BOT_TOKEN, LocalGitHub

WF = load_workflow(WORKFLOWS / NIGHTLY)
H200 = DATA / "h200" / "results"
MACHINE = "nvidia-h200"
#: data/h200's commits: two stock runs, then the unfused backward (the 11x step).
STOCK = ("06f650c87bcca99fe961d28d3bec88c38e1bfdbe", "da17d548f3e6eff323c8348d60147c060c057143")
KEY = "9dc516960ffdea53271e079984bda56109317307"
ALERT = "rmsnorm-bwd|nvidia-h200|da17d548f3e6..9dc516960ffd"
THUNDER = "Lightning-AI/lightning-thunder"
NEW_JOBS = ("remeasure", "remeasure-store", "remeasure-push")
IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def _step(job_id: str, step_id: str) -> dict[str, Any]:
    (step,) = [s for s in jobs(WF)[job_id]["steps"] if s.get("id") == step_id]
    return step


def _runs(job_id: str, github: dict[str, Any], needs: dict[str, Any]) -> bool:
    return truthy(evaluate_if(str(jobs(WF)[job_id]["if"]), {"github": github, "needs": needs}))


def _github(event: str = "schedule", ref: str = "refs/heads/main") -> dict[str, Any]:
    return {"repository": OUR_REPO, "event_name": event, "ref": ref, "event": {}}


# ----- where the jobs run, when, and what they may touch -----


def test_the_remeasurement_runs_only_on_tonights_build_when_the_watch_asks() -> None:
    asked = {"plan": {"outputs": {"key": KEY}}, "merge": {"outputs": {"remeasure": KEY}}}
    quiet = {"plan": {"outputs": {"key": KEY}}, "merge": {"outputs": {"remeasure": ""}}}
    for job_id in ("remeasure", "remeasure-store"):
        assert _runs(job_id, _github(), asked), job_id
        assert _runs(job_id, _github("workflow_dispatch"), asked), job_id
        assert not _runs(job_id, _github(), quiet), job_id  # the usual night: nothing to measure
        assert not _runs(job_id, _github("schedule", "refs/heads/feature"), asked)
        assert not _runs(job_id, _github("push"), asked)
        for scenario in UNTRUSTED_EVENTS:
            assert not _runs(job_id, scenario.github, asked), (job_id, scenario.name)
    # The push runs every night (a no-op without a re-measurement) so that the watch, which
    # waits for it, runs either way; its steps run only on a stored re-measurement.
    assert _runs("remeasure-push", _github(), {})
    assert not _runs("remeasure-push", _github("push"), {})
    for step in jobs(WF)["remeasure-push"]["steps"]:
        assert step["if"] == "${{ needs.remeasure-store.result == 'success' }}"
    assert "remeasure-push" in jobs(WF)["watch"]["needs"]
    assert "remeasure-push" in jobs(WF)["bisect-plan"]["needs"]
    assert jobs(WF)["remeasure-store"]["needs"] == ["plan", "merge", "remeasure"]


def test_the_gpu_job_is_a_shard_again_and_only_push_jobs_write() -> None:
    j = jobs(WF)
    shard, again = j["shard"], j["remeasure"]
    for key in ("runs-on", "strategy", "concurrency", "timeout-minutes", "permissions"):
        assert again[key] == shard[key], key  # the same runner, matrix, GPU queue and scopes
    assert j["remeasure-store"]["permissions"] == {"contents": "read"}
    assert j["remeasure-push"]["permissions"] == {"contents": "write"}
    for job_id in NEW_JOBS:
        assert "secrets." not in json.dumps(j[job_id]) and "environment" not in j[job_id]
    # The write token's job runs git alone, as push does.
    assert check_git_alone(j["remeasure-push"]["steps"]) == []
    # Its own artifacts: the nightly's shards and bundle are never taken for the re-measurement.
    names = [
        s["with"].get("name") or s["with"].get("pattern")
        for job_id in NEW_JOBS
        for s in j[job_id]["steps"]
        if "artifact" in str(s.get("uses", ""))
    ]
    assert "nightly-shard-*" not in names and "nightly-shard-${{ matrix.k }}" not in names
    assert names.count("perf-results-bundle") == 1  # read by remeasure-store, never replaced


@pytest.mark.parametrize(("status", "level"), [(0, ""), (3, "no usable GPU"), (4, "points raised")])
def test_the_shard_is_measured_again_under_the_lock_on_the_stored_runs_machine(
    tmp_path: Path, status: int, level: str
) -> None:
    (tmp_path / "lock").mkdir()
    (tmp_path / "nightly-build").mkdir()
    (tmp_path / "nightly-build" / "under-test.json").write_text('{"side": "nightly"}')
    env = {
        "PATH": shim(tmp_path, "python3", f"exit {status}"),
        "SHARD": "2/4",
        "KEY": KEY,
        "MACHINE": MACHINE,
        "MERGED_ON": MACHINE,
        "OVERLAY": "/ov",
        "NIGHTLY_VARIANTS": "nvfuser,thunder-prims,thunder-func",
        "RUNNER_TEMP": str(tmp_path),
        "PERFBOT_GPU_LOCK": str(tmp_path / "lock" / "gpu.lock"),
        "PERFBOT_GPU_LOCK_SH": str(GPU_LOCK_SH),
    }
    step = _step("remeasure", "measure-again")
    assert step["env"]["PERFBOT_GPU_LOCK"] == "/var/lock/perfbot/gpu.lock"
    assert step["env"]["PERFBOT_GPU_LOCK_SH"] == ".github/scripts/gpu-lock.sh"
    proc = run_step(step, tmp_path, env)
    assert proc.returncode == status and "holding the GPU lock" in proc.stdout
    assert (level in proc.stdout) if level else "::error::" not in proc.stdout
    call = shim_calls(tmp_path, "python3").split()
    assert call[:3] == ["-m", "benchmarks.shards", "run"]
    assert call[call.index("--commit") + 1] == KEY and call[call.index("--shard") + 1] == "2/4"
    # Another GPU kind is no replicate of the stored run: refused before the lock is taken.
    (tmp_path / "python3.calls").unlink()
    proc = run_step(step, tmp_path, {**env, "MERGED_ON": "nvidia-b200"})
    assert proc.returncode == 1 and "not a re-measurement" in proc.stdout
    assert shim_calls(tmp_path, "python3") == "" and "GPU lock" not in proc.stdout


# ----- the merge names tonight's build (the real bot's JSON) -----


def _history_json(tmp_path: Path, *folders: Path) -> Path:
    out = tmp_path / "history.json"
    args = [a for f in folders for a in ("--results", str(f))]
    done = run_bot("history", *args, "--dry-run", "--json", str(out))
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return out


@pytest.mark.parametrize(
    ("key", "want", "says"),
    [
        (KEY, KEY, "measuring it again tonight"),
        ("f" * 40, "", f"asks to measure {KEY} again: not tonight's build"),
    ],
    ids=["tonight's build", "another build"],
)
def test_the_merge_asks_for_tonights_build_when_the_watch_does(
    tmp_path: Path, key: str, want: str, says: str
) -> None:
    _history_json(tmp_path, H200)  # the recorded 11x step, measured once
    env = {
        "KEY": key,
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "sum"),
    }
    proc = run_step(_step("merge", "remeasure"), tmp_path, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs(tmp_path / "out") == {"remeasure": want} and says in proc.stdout


def test_the_merge_asks_nothing_of_a_history_without_such_a_change(tmp_path: Path) -> None:
    _history_json(tmp_path, DATA / "h200-thunder-nightlies" / "results")
    env = {
        "KEY": KEY,
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "sum"),
    }
    proc = run_step(_step("merge", "remeasure"), tmp_path, env)
    assert proc.returncode == 0 and outputs(tmp_path / "out") == {"remeasure": ""}
    assert "::notice::" not in proc.stdout
    assert "re-measure tonight's build: no" in (tmp_path / "sum").read_text()


# ----- the watch reads the store and its re-measurements as replicates -----


def test_the_watch_reads_the_store_alone_when_nothing_was_remeasured(tmp_path: Path) -> None:
    shutil.copytree(H200, tmp_path / "store" / "results")
    env = {"GITHUB_STEP_SUMMARY": str(tmp_path / "sum")}
    for job_id in ("watch", "bisect-plan"):
        step = _step(job_id, f"replicates-{job_id}")
        assert run_step(step, tmp_path, env).returncode == 0
        assert (tmp_path / "store" / "results" / MACHINE / "machine.json").is_file()
        assert not (tmp_path / "sum").exists()


# ----- the night of a re-measurement, end to end -----


def _second_run(dest: Path) -> Path:
    """The recorded unfused run copied as a run of its own (its provenance record's start an
    hour later; every measured number as recorded): what the re-measure shards merge into."""
    mdir = dest / MACHINE
    mdir.mkdir(parents=True)
    shutil.copyfile(H200 / "benchmarks.json", dest / "benchmarks.json")
    shutil.copyfile(H200 / MACHINE / "machine.json", mdir / "machine.json")
    (asv,) = (H200 / MACHINE).glob(f"{KEY[:8]}-*.json")
    shutil.copyfile(asv, mdir / asv.name)
    record = H200 / MACHINE / f"{KEY}.provenance.jsonl"
    lines = []
    for line in record.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        for k in ("started_at", "finished_at"):
            entry[k] = (datetime.fromisoformat(entry[k]) + timedelta(hours=1)).isoformat()
        lines.append(json.dumps(entry))
    (mdir / record.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


def _merged_store(tmp_path: Path) -> tuple[Path, str]:
    """The store as the merge left it (data/h200's three runs), as its bundle; and its tip."""
    store = tmp_path / "merged-store"
    add = ["add", "--store", str(store), "--results", str(H200), "--machine", MACHINE]
    for args in (["init", "--store", str(store)], *([*add, "--commit", c] for c in (*STOCK, KEY))):
        done = run_bot("store", *args)
        assert done.returncode == 0, done.stdout + done.stderr
    bundle = tmp_path / "merged" / "perf-results.bundle"
    bundle.parent.mkdir()
    git(store, "bundle", "create", str(bundle), "perf-results")
    return bundle, git(store, "rev-parse", "perf-results")


def _bot_path(tmp_path: Path) -> str:
    """`python` as the runner's setup-python gives it: this interpreter, the bot importable."""
    bindir = tmp_path / "py"
    bindir.mkdir()
    (bindir / "python").symlink_to(os.path.realpath(sys.executable))
    return f"{bindir}:{os.environ['PATH']}"


@pytest.mark.slow  # seconds of real pip, asv or bash end to end (docs/BOT.md: pytest -m slow)
def test_a_remeasured_night_stores_the_run_and_the_watch_files_the_change(
    tmp_path: Path, fake_github: LocalGitHub
) -> None:
    bundle, old_tip = _merged_store(tmp_path)
    work = tmp_path / "remeasure-store"
    work.mkdir()
    _second_run(work / "results")  # what "Merge the re-measured shards" leaves in results/
    env = {
        **IDENTITY,
        "PATH": _bot_path(tmp_path),
        "PYTHONPATH": str(REPO),
        "BUNDLE": str(bundle),
        "OLD_TIP": old_tip,
        "KEY": KEY,
        "MACHINE": MACHINE,
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "sum"),
    }
    proc = run_step(_step("remeasure-store", "add-remeasured"), work, env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    store = work / "store"
    assert git(store, "log", "-1", "--format=%s") == f"store: re-measured {MACHINE} {KEY}"
    assert git(store, "status", "--porcelain") == ""
    index = json.loads((store / "remeasured" / "index.json").read_text())
    assert [(r["machine"], r["commit"]) for r in index["rows"]] == [(MACHINE, KEY)]
    assert (
        f"re-measured {KEY} on {MACHINE}: 2 change(s) confirmed by it"
        in (tmp_path / "sum").read_text()
    )
    # The store itself is as it was: one run a commit, every file listed, check passes.
    assert run_bot("store", "check", "--store", str(store)).returncode == 0
    assert (store / "results" / MACHINE / f"{KEY}.provenance.jsonl").is_file()
    assert git(store, "rev-parse", "HEAD^") == old_tip  # on top of the merge's store
    proc = run_step(_step("remeasure-store", "bundle-remeasured"), work, env, tmp_path)
    new_tip = outputs(tmp_path / "out")["new_tip"]
    assert new_tip == git(store, "rev-parse", "perf-results")

    # remeasure-push: compare-and-swap on the tip the merge pushed.
    server = tmp_path / "server"
    remote = server / OUR_REPO
    remote.mkdir(parents=True)
    git(remote, "init", "-q", "--bare")
    git(remote, "fetch", "-q", str(bundle), "perf-results:perf-results")  # the merge's push
    new_bundle = tmp_path / "bundle" / "perf-results.bundle"
    new_bundle.parent.mkdir()
    git(store, "bundle", "create", str(new_bundle), "perf-results")
    push_env = {
        "GITHUB_SERVER_URL": f"file://{server}",
        "GITHUB_REPOSITORY": OUR_REPO,
        "GITHUB_TOKEN": "t",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "pushed"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "sum"),
        "BUNDLE": str(new_bundle),
        "NEW_TIP": new_tip,
    }
    push = _step("remeasure-push", "push-remeasured")
    stale = run_step(push, tmp_path, {**push_env, "OLD_TIP": "e" * 40})
    assert stale.returncode == 1 and "the re-measurement is not stored" in stale.stdout
    assert outputs(tmp_path / "pushed") == {}  # the watch reads no unstored run
    proc = run_step(push, tmp_path, {**push_env, "OLD_TIP": old_tip})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git(remote, "rev-parse", "perf-results") == new_tip
    assert outputs(tmp_path / "pushed") == {"pushed": "true"}

    # The watch: the store the merge pushed, tonight's re-measurement as its artifact.
    night = tmp_path / "watch"
    night.mkdir()
    git(night, "clone", "-q", "--branch", "perf-results", str(bundle), "store")
    shutil.copytree(store / "remeasured" / "results", night / "remeasured")
    for name in ("perfbot.toml", "noise"):
        (night / name).symlink_to(REPO / name)
    summary = {"GITHUB_STEP_SUMMARY": str(tmp_path / "watch-sum")}
    proc = run_step(_step("watch", "replicates-watch"), night, summary, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in (night / "store" / "results").iterdir()) == ["rep-1", "rep-2"]
    watch_env = {
        "PATH": _bot_path(night),
        "PYTHONPATH": str(REPO),
        "PERFBOT_ISSUES_TOKEN": BOT_TOKEN,
        "GITHUB_TOKEN": BOT_TOKEN,
        "GITHUB_API_URL": fake_github.base_url,
        "GITHUB_OUTPUT": str(tmp_path / "watch-out"),
    }
    proc = run_step(_step("watch", "watch"), night, watch_env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs(tmp_path / "watch-out") == {"rc": "1"}
    assert "confirmed by re-measuring 9dc51696" in proc.stdout
    marker = f"<!-- fusion-perfbot-key: {ALERT} -->"
    filed = [i for i in fake_github.state.issues(THUNDER) if i.author == BOT_LOGIN]
    assert [marker in (i.body or "") for i in filed] == [True]

"""``shards run``: one shard's missing points measured in a child process (worker.py), with the
runner checks before and after it, so a killed shard keeps what it measured and a re-run
measures only the rest."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.engine.config import SuiteConfig
from benchmarks.engine.digest import suite_digest
from benchmarks.shards import store
from benchmarks.shards.common import ROOT, Exit, plan_for, suite_config, suite_env
from benchmarks.shards.plan import parse_shard


def _same_settings(cfg: SuiteConfig, digest: str, runs: list[dict[str, Any]]) -> str | None:
    mine = {
        "size_set": cfg.size_set,
        "rounds": cfg.rounds,
        "variants": list(cfg.variants),
        "calls_per_sample": cfg.calls_per_sample,
        "thunder_variant": cfg.thunder_variant,
        "suite_digest": digest,
    }
    for run in runs:
        h = run["header"]
        for key, value in mine.items():
            if h.get(key) != value:
                return f"run {run['id']} has {key} {h.get(key)!r}, this one {value!r}"
    return None


def _check(when: str, commit: str, out: Path) -> None:
    code = subprocess.call(
        [
            sys.executable,
            "-m",
            "benchmarks.runner_check",
            "--when",
            when,
            "--commit",
            commit,
            "--out",
            str(out),
        ],
        cwd=ROOT,
    )
    if code != 0:
        raise RuntimeError(f"runner check ({when}) exited {code}")


def cmd_run(args: argparse.Namespace) -> int:
    started = time.time()
    env = suite_env(args)
    cfg = suite_config(env)
    k, n = parse_shard(args.shard)
    shards = plan_for(args, cfg)
    if n != len(shards):
        print(
            f"shards: --shard {args.shard}, but the plan has {len(shards)} shards now "
            "(costs.json or the budget changed?)",
            file=sys.stderr,
        )
        return Exit.USAGE
    folder = store.shards_dir(Path(args.results).resolve(), args.machine, args.commit)
    digest = suite_digest()
    conflict = _same_settings(cfg, digest, store.read_runs(folder)) if folder.is_dir() else None
    if conflict:
        print(f"shards: {folder} holds runs measured otherwise: {conflict}", file=sys.stderr)
        return Exit.USAGE
    done = store.done(folder)
    todo = [p for p in shards[k - 1].points if p not in done]
    print(
        f"shards: shard {args.shard}: {len(todo)} of {len(shards[k - 1].points)} points to "
        f"measure (about {shards[k - 1].estimate_s:.0f} s for all)",
        file=sys.stderr,
    )
    if not todo:
        return Exit.OK
    run_id = f"{k}of{n}-{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    hygiene = folder / f"hygiene-{run_id}.jsonl"
    _check("before", args.commit, hygiene)
    child_env = {
        **os.environ,
        **env,
        "RMSNORM_BENCH_COMMIT": args.commit,
        "RMSNORM_BENCH_MACHINE": args.machine,
        "SHARD_DIR": str(folder),
        "SHARD_RUN_ID": run_id,
        "SHARD_LABEL": args.shard,
        "RMSNORM_BENCH_POINTS": ",".join(todo),
        "SHARD_SUITE_DIGEST": digest,
        "SHARD_PROCESS_START": str(started),
    }
    code = subprocess.call(
        [sys.executable, "-m", "benchmarks.shards.worker"], cwd=ROOT, env=child_env
    )
    _check("after", args.commit, hygiene)
    print(
        f"shards: shard {args.shard} took {time.time() - started:.0f} s (exit {code})",
        file=sys.stderr,
    )
    return code if code in (Exit.OK, Exit.NO_GPU, Exit.POINT_FAILED) else Exit.FAILED

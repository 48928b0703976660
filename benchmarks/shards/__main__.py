"""``python3 -m benchmarks.shards``: a long size set measured in resumable shards, then merged.

The nightly set (180 dtype x shape points) does not fit one GPU job. ``plan`` splits it into
shards that each fit a budget (default 8 minutes on one GPU, from a cost model fitted on
recorded runs: plan.py, fit.py); ``run`` measures one shard's points that this commit does not
have yet (any runner of the GPU kind; a failed shard re-runs alone and measures only what is
missing: the points that raised, and every point of a process killed before its header);
``merge`` checks the shards measured the same thing the same way and writes the commit's one
provenance record, which asv then stores (``--store``) as one asv result.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from enum import IntEnum
from pathlib import Path
from typing import Any

from benchmarks.rmsnorm_bwd.config import SuiteConfig, point_key
from benchmarks.shards import store
from benchmarks.shards.fit import fit
from benchmarks.shards.plan import COSTS_FILE, Costs, Shard, parse_shard, plan

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BUDGET_S = 480.0


class Exit(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    NO_GPU = 3
    POINT_FAILED = 4
    INCOMPLETE = 5
    DISAGREE = 6


MEANING = {
    Exit.OK: "done (run: every point of the shard is measured; merge: the record is written)",
    Exit.FAILED: "a step failed (runner check, the measuring process, asv's store)",
    Exit.USAGE: "bad arguments, or a plan or settings that differ from this commit's shards",
    Exit.NO_GPU: "the suite found no usable GPU stack; nothing was measured",
    Exit.POINT_FAILED: "some point raised; it is kept as failed and a re-run measures it again",
    Exit.INCOMPLETE: "merge: points of the set are missing (named); run their shards",
    Exit.DISAGREE: "merge: shards measured differently (GPU kind, versions, settings), or the "
    "commit already has another record",
}


def suite_digest() -> str:
    """The measuring code and the size sets: shards of one commit must have run the same."""
    h = hashlib.sha256()
    files = sorted((ROOT / "benchmarks" / "rmsnorm_bwd").glob("*.py"))
    files += [ROOT / "benchmarks" / "bench_rmsnorm_bwd.py", ROOT / "benchmarks" / "size_sets.toml"]
    for path in files:
        h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def suite_env(args: argparse.Namespace) -> dict[str, str]:
    env = {"RMSNORM_BENCH_SIZES": args.size_set}
    if getattr(args, "variants", None):
        env["RMSNORM_BENCH_VARIANTS"] = args.variants
    if getattr(args, "rounds", None):
        env["RMSNORM_BENCH_ROUNDS"] = str(args.rounds)
    return env


def _config(env: Mapping[str, str]) -> SuiteConfig:
    return SuiteConfig.from_env({**os.environ, **env})


def _shards(args: argparse.Namespace, cfg: SuiteConfig) -> list[Shard]:
    return plan(cfg, Costs.load(Path(args.costs)), args.budget_s)


def cmd_plan(args: argparse.Namespace) -> int:
    cfg = _config(suite_env(args))
    shards = _shards(args, cfg)
    doc = {
        "size_set": cfg.size_set,
        "count": len(shards),
        "budget_s": args.budget_s,
        "shards": [{"shard": s.label, "points": list(s.points), "estimate_s": s.estimate_s}
                   for s in shards],
    }
    if args.json:
        print(json.dumps(doc))
    else:
        for s in shards:
            print(f"shard {s.label}: {len(s.points)} points, about {s.estimate_s:.0f} s")
    return Exit.OK


def _same_settings(cfg: SuiteConfig, digest: str, runs: list[dict[str, Any]]) -> str | None:
    mine = {"size_set": cfg.size_set, "rounds": cfg.rounds, "variants": list(cfg.variants),
            "calls_per_sample": cfg.calls_per_sample, "thunder_variant": cfg.thunder_variant,
            "suite_digest": digest}
    for run in runs:
        h = run["header"]
        for key, value in mine.items():
            if h.get(key) != value:
                return f"run {run['id']} has {key} {h.get(key)!r}, this one {value!r}"
    return None


def _check(when: str, commit: str, out: Path) -> None:
    code = subprocess.call([sys.executable, "-m", "benchmarks.runner_check", "--when", when,
                            "--commit", commit, "--out", str(out)], cwd=ROOT)
    if code != 0:
        raise RuntimeError(f"runner check ({when}) exited {code}")


def cmd_run(args: argparse.Namespace) -> int:
    started = time.time()
    env = suite_env(args)
    cfg = _config(env)
    k, n = parse_shard(args.shard)
    shards = _shards(args, cfg)
    if n != len(shards):
        print(f"shards: --shard {args.shard}, but the plan has {len(shards)} shards now "
              "(costs.json or the budget changed?)", file=sys.stderr)
        return Exit.USAGE
    folder = store.shards_dir(Path(args.results).resolve(), args.machine, args.commit)
    digest = suite_digest()
    conflict = _same_settings(cfg, digest, store.read_runs(folder)) if folder.is_dir() else None
    if conflict:
        print(f"shards: {folder} holds runs measured otherwise: {conflict}", file=sys.stderr)
        return Exit.USAGE
    done = store.done(folder)
    todo = [p for p in shards[k - 1].points if p not in done]
    print(f"shards: shard {args.shard}: {len(todo)} of {len(shards[k - 1].points)} points to "
          f"measure (about {shards[k - 1].estimate_s:.0f} s for all)", file=sys.stderr)
    if not todo:
        return Exit.OK
    run_id = f"{k}of{n}-{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    hygiene = folder / f"hygiene-{run_id}.jsonl"
    _check("before", args.commit, hygiene)
    child_env = {
        **os.environ, **env,
        "RMSNORM_BENCH_COMMIT": args.commit, "RMSNORM_BENCH_MACHINE": args.machine,
        "SHARD_DIR": str(folder), "SHARD_RUN_ID": run_id, "SHARD_LABEL": args.shard,
        "SHARD_POINTS": ",".join(todo), "SHARD_SUITE_DIGEST": digest,
        "SHARD_PROCESS_START": str(started),
    }
    code = subprocess.call([sys.executable, "-m", "benchmarks.shards.worker"], cwd=ROOT,
                           env=child_env)
    _check("after", args.commit, hygiene)
    print(f"shards: shard {args.shard} took {time.time() - started:.0f} s (exit {code})",
          file=sys.stderr)
    return code if code in (Exit.OK, Exit.NO_GPU, Exit.POINT_FAILED) else Exit.FAILED


def _write_once(path: Path, text: str, replace: bool) -> bool:
    """Write ``text`` unless the file holds something else; True if it now holds ``text``."""
    if path.exists() and path.read_text(encoding="utf-8") != text and not replace:
        return False
    store.write_text_atomic(path, text)
    return True


def cmd_merge(args: argparse.Namespace) -> int:
    results = Path(args.results).resolve()
    folder = store.shards_dir(results, args.machine, args.commit)
    runs = store.read_runs(folder) if folder.is_dir() else []
    size_set = args.size_set or (runs[0]["header"]["size_set"] if runs else "nightly")
    cfg = _config({"RMSNORM_BENCH_SIZES": size_set})
    expected = [point_key(d, s) for d, s in cfg.points_to_measure()]
    try:
        record = store.merge(folder, expected)
    except store.MissingPoints as exc:
        print(f"shards: merge: {exc}", file=sys.stderr)
        return Exit.INCOMPLETE
    except store.Disagree as exc:
        print(f"shards: merge: {exc}", file=sys.stderr)
        return Exit.DISAGREE
    target = results / args.machine / f"{args.commit}.provenance.jsonl"
    if not _write_once(target, json.dumps(record, sort_keys=True) + "\n", args.replace):
        print(f"shards: merge: {target} exists with another record (--replace to overwrite)",
              file=sys.stderr)
        return Exit.DISAGREE
    _write_once(results / args.machine / f"{args.commit}.hygiene.jsonl",
                store.merged_hygiene(folder), True)
    print(f"shards: merged {len(record['points'])} points from {len(record['shards'])} runs "
          f"into {target}", file=sys.stderr)
    if not args.store:
        return Exit.OK
    cmd = ["bash", str(ROOT / "benchmarks" / "run_gpu.sh"), "--phase", "store",
           "--size-set", size_set, "--commit", args.commit, "--results", str(results),
           "--machine", args.machine]
    if args.asv_repo:
        cmd += ["--asv-repo", args.asv_repo]
    code = subprocess.call(cmd, cwd=ROOT)
    # asv exits 2 when some benchmark failed: a broken point, stored as failed; the bot reads it.
    return Exit.OK if code in (0, 2) else Exit.FAILED


def cmd_status(args: argparse.Namespace) -> int:
    cfg = _config(suite_env(args))
    folder = store.shards_dir(Path(args.results), args.machine, args.commit)
    done = store.done(folder)
    missing = 0
    for s in _shards(args, cfg):
        left = [p for p in s.points if p not in done]
        missing += len(left)
        print(f"shard {s.label}: {len(s.points) - len(left)}/{len(s.points)} measured"
              + (f"; missing {', '.join(left)}" if left else ""))
    for run in store.read_runs(folder) if folder.is_dir() else []:
        h = run["header"]
        print(f"run {run['id']}: shard {run['shard']}, {len(run['points'])} points, "
              f"{run['process_wall_s']} s on {run['host']} ({h['gpu']['name']}, "
              f"{h['started_at']} to {h['finished_at']})")
    return Exit.INCOMPLETE if missing else Exit.OK


def cmd_fit(args: argparse.Namespace) -> int:
    costs = fit([Path(p).resolve() for p in args.records], root=ROOT)
    Path(args.out).write_text(costs.to_json(), encoding="utf-8")
    print(costs.to_json(), end="")
    return Exit.OK


def _parser() -> argparse.ArgumentParser:
    epilog = "exit codes:\n" + "\n".join(f"  {c.value}  {c.name:<13} {MEANING[c]}" for c in Exit)
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.shards", description=__doc__,
                                epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    def suite(q: argparse.ArgumentParser) -> None:
        q.add_argument("--size-set", default="nightly")
        q.add_argument("--variants", help="as run_gpu.sh --variants (default: every variant)")
        q.add_argument("--rounds", type=int, help="paired rounds a point (default: the suite's)")
        q.add_argument("--budget-s", type=float, default=DEFAULT_BUDGET_S,
                       help="estimated seconds a shard may take (default: %(default)s)")
        q.add_argument("--costs", default=str(COSTS_FILE), help="the fitted cost model")

    def where(q: argparse.ArgumentParser) -> None:
        q.add_argument("--results", required=True, help="asv results folder")
        q.add_argument("--commit", required=True, help="the commit (key) being measured")
        q.add_argument("--machine", required=True, help="asv machine name, e.g. nvidia-h200")

    q = sub.add_parser("plan", help="print the shards (--json: a workflow matrix)")
    suite(q)
    q.add_argument("--json", action="store_true")
    q = sub.add_parser("run", help="measure one shard's missing points")
    suite(q)
    where(q)
    q.add_argument("--shard", required=True, help="K/N, as the plan numbers them")
    q = sub.add_parser("status", help="which points of each shard are measured")
    suite(q)
    where(q)
    q = sub.add_parser("merge", help="one provenance record (and with --store, asv's result)")
    where(q)
    q.add_argument("--size-set", help="default: the shards' own")
    q.add_argument("--store", action="store_true", help="then have asv store it (no GPU needed)")
    q.add_argument("--asv-repo", help="git repository asv looks the commit up in")
    q.add_argument("--replace", action="store_true", help="overwrite an existing record")
    q = sub.add_parser("fit", help="fit the cost model on provenance records")
    q.add_argument("records", nargs="+")
    q.add_argument("--out", default=str(COSTS_FILE))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handler = {"plan": cmd_plan, "run": cmd_run, "status": cmd_status, "merge": cmd_merge,
               "fit": cmd_fit}[args.command]
    try:
        return int(handler(args))
    except (ValueError, OSError) as exc:
        print(f"shards: {args.command}: {exc}", file=sys.stderr)
        return Exit.USAGE if isinstance(exc, ValueError) else Exit.FAILED
    except RuntimeError as exc:
        print(f"shards: {args.command}: {exc}", file=sys.stderr)
        return Exit.FAILED


if __name__ == "__main__":
    sys.exit(main())

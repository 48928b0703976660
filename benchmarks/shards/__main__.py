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
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.shards import store
from benchmarks.shards.common import (
    DEFAULT_BUDGET_S,
    MEANING,
    ROOT,
    Exit,
    plan_for,
    suite_config,
    suite_env,
)
from benchmarks.shards.fit import fit
from benchmarks.shards.merge import cmd_merge
from benchmarks.shards.plan import COSTS_FILE
from benchmarks.shards.run import cmd_run


def cmd_plan(args: argparse.Namespace) -> int:
    cfg = suite_config(suite_env(args))
    shards = plan_for(args, cfg)
    doc = {
        "size_set": cfg.size_set,
        "count": len(shards),
        "budget_s": args.budget_s,
        "shards": [
            {"shard": s.label, "points": list(s.points), "estimate_s": s.estimate_s} for s in shards
        ],
    }
    if args.json:
        print(json.dumps(doc))
    else:
        for s in shards:
            print(f"shard {s.label}: {len(s.points)} points, about {s.estimate_s:.0f} s")
    return Exit.OK


def cmd_status(args: argparse.Namespace) -> int:
    cfg = suite_config(suite_env(args))
    folder = store.shards_dir(Path(args.results), args.machine, args.commit)
    done = store.done(folder)
    missing = 0
    for s in plan_for(args, cfg):
        left = [p for p in s.points if p not in done]
        missing += len(left)
        print(
            f"shard {s.label}: {len(s.points) - len(left)}/{len(s.points)} measured"
            + (f"; missing {', '.join(left)}" if left else "")
        )
    for run in store.read_runs(folder) if folder.is_dir() else []:
        h = run["header"]
        print(
            f"run {run['id']}: shard {run['shard']}, {len(run['points'])} points, "
            f"{run['process_wall_s']} s on {run['host']} ({h['gpu']['name']}, "
            f"{h['started_at']} to {h['finished_at']})"
        )
    return Exit.INCOMPLETE if missing else Exit.OK


def cmd_fit(args: argparse.Namespace) -> int:
    costs = fit([Path(p).resolve() for p in args.records], root=ROOT)
    Path(args.out).write_text(costs.to_json(), encoding="utf-8")
    print(costs.to_json(), end="")
    return Exit.OK


def _parser() -> argparse.ArgumentParser:
    epilog = "exit codes:\n" + "\n".join(f"  {c.value}  {c.name:<13} {MEANING[c]}" for c in Exit)
    p = argparse.ArgumentParser(
        prog="python3 -m benchmarks.shards",
        description=__doc__,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True)

    def suite(q: argparse.ArgumentParser) -> None:
        q.add_argument("--size-set", default="nightly")
        q.add_argument("--variants", help="as run_gpu.sh --variants (default: every variant)")
        q.add_argument("--rounds", type=int, help="paired rounds a point (default: the suite's)")
        q.add_argument(
            "--budget-s",
            type=float,
            default=DEFAULT_BUDGET_S,
            help="estimated seconds a shard may take (default: %(default)s)",
        )
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
    handler = {
        "plan": cmd_plan,
        "run": cmd_run,
        "status": cmd_status,
        "merge": cmd_merge,
        "fit": cmd_fit,
    }[args.command]
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

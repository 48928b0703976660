"""``shards merge``: the commit's shards checked against each other and against the set, then
written as the commit's one provenance record (and, with ``--store``, asv's result)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchmarks.engine.config import point_key
from benchmarks.fusions.spec import DEFAULT_FUSION
from benchmarks.shards import store
from benchmarks.shards.common import ROOT, Exit, suite_config


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
    # The fusions the runs measured (a header from before the catalog: RMSNorm backward's).
    fusions = runs[0]["header"].get("fusions", [DEFAULT_FUSION]) if runs else []
    env = {"RMSNORM_BENCH_SIZES": size_set}
    if fusions:
        env["RMSNORM_BENCH_FUSIONS"] = ",".join(fusions)
    cfg = suite_config(env)
    expected = [point_key(d, s, f) for f, d, s in cfg.fusion_points()]
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
        print(
            f"shards: merge: {target} exists with another record (--replace to overwrite)",
            file=sys.stderr,
        )
        return Exit.DISAGREE
    _write_once(
        results / args.machine / f"{args.commit}.hygiene.jsonl", store.merged_hygiene(folder), True
    )
    print(
        f"shards: merged {len(record['points'])} points from {len(record['shards'])} runs "
        f"into {target}",
        file=sys.stderr,
    )
    if not args.store:
        return Exit.OK
    cmd = [
        "bash",
        str(ROOT / "benchmarks" / "run_gpu.sh"),
        "--phase",
        "store",
        "--size-set",
        size_set,
        "--commit",
        args.commit,
        "--results",
        str(results),
        "--machine",
        args.machine,
    ]
    if args.asv_repo:
        cmd += ["--asv-repo", args.asv_repo]
    code = subprocess.call(cmd, cwd=ROOT)
    # asv exits 2 when some benchmark failed: a broken point, stored as failed; the bot reads it.
    return Exit.OK if code in (0, 2) else Exit.FAILED

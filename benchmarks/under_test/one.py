"""``python3 -m benchmarks.under_test.one``: measure ONE build of the package under test.

A bisect (``python -m bot bisect``) measures builds one at a time, each at a few points, and
decides each against a reference measured earlier in the same session; a base/head pair
(``python3 -m benchmarks.under_test``) is the wrong shape for that. The build is installed,
checked and keyed exactly as a side of a pair is (install.py, keys.py), then
benchmarks/run_gpu.sh measures it (``RMSNORM_BENCH_POINTS``, ``--variants``, and ``--fusions``
where the points are another fusion's than RMSNorm backward's) and asv stores the run; a
manifest says what was measured, under which key, with which stack.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.under_test import install, keys
from benchmarks.under_test.__main__ import Exit
from benchmarks.under_test.pair import Side, keyed_side, stderr, suite_commit
from benchmarks.under_test.spec import PACKAGES, Spec, SpecError, parse_spec

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "perfbot-under-test-one/1"
#: asv's exit 2: some points failed. For a bisect that is data (a broken build), not a failure.
SOME_POINTS_FAILED = 2


def _parser() -> argparse.ArgumentParser:
    codes = "\n".join(f"  {c.value}  {c.name}" for c in Exit if c != Exit.NOT_COMPARABLE)
    p = argparse.ArgumentParser(
        prog="python3 -m benchmarks.under_test.one",
        description=(
            "Install one build of the package under test (Thunder or nvFuser) into its own "
            "overlay, key it, and measure it once at the given points and variants into an asv "
            "results folder, with a manifest (key, machine, stack) beside it. A bisect's step."
        ),
        epilog=f"exit codes:\n{codes}\n  (points that fail are data: a broken build, exit 0)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--package", required=True, choices=sorted(PACKAGES))
    p.add_argument("--build", required=True, metavar="SPEC")
    p.add_argument("--results", required=True, type=Path, metavar="DIR", help="a new folder")
    p.add_argument(
        "--work", required=True, type=Path, metavar="DIR", help="overlays and the keys repository"
    )
    p.add_argument("--manifest", type=Path, metavar="FILE", help="default: DIR.build.json")
    p.add_argument("--size-set", default="pr", choices=["smoke", "pr", "nightly"])
    p.add_argument(
        "--points",
        default="",
        help="dtype/MxN keys, fusion/dtype/MxN for another fusion (default: the whole size set)",
    )
    p.add_argument(
        "--fusions", default="", help="run_gpu.sh --fusions: the fusions measured (default: all)"
    )
    p.add_argument("--variants", default="", help="comma list (default: all five)")
    p.add_argument("--machine", default=None, help="asv machine name (default: from the GPU)")
    p.add_argument("--pip-arg", action="append", default=[], metavar="ARG")
    p.add_argument("--install-only", action="store_true", help="install and key; measure nothing")
    return p


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:80] or "build"


def machine_in(results: Path) -> str | None:
    """The asv machine name a run wrote into ``results`` (its one folder), or None."""
    found = sorted(p.name for p in results.iterdir() if p.is_dir()) if results.is_dir() else []
    return found[0] if len(found) == 1 else None


def install_keyed(name: str, spec: Spec, work: Path, results: Path, pip_args: list[str]) -> Side:
    """``spec`` installed into a fresh overlay under ``work`` (named for it and its results
    folder) and keyed in ``work``'s keys repository; InstallError or KeysError otherwise."""
    side_dir = work / "overlays" / slug(f"{spec.shown()}-{results.name}")
    shutil.rmtree(side_dir, ignore_errors=True)
    installed = install.install(spec, side_dir, pip_args)
    keys.init_keys(work / "keys")
    return keyed_side(name, installed, work / "keys")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        spec = parse_spec(args.build, args.package)
    except SpecError as exc:
        stderr(f"under_test.one: {exc}")
        return Exit.USAGE
    results = args.results.resolve()
    if results.exists() and any(results.iterdir()):
        stderr(f"under_test.one: {results} is not empty: each measurement gets a new folder")
        return Exit.USAGE
    work = args.work.resolve()
    try:
        side = install_keyed("bisect", spec, work, results, args.pip_arg)
        installed = side.installed
        stack = install.stack(installed.overlay, args.package)
    except (install.InstallError, keys.KeysError) as exc:
        stderr(f"under_test.one: {exc}")
        return Exit.INSTALL_FAILED
    stderr(f"== {installed.distribution} {installed.version} from {spec.shown()} -> key {side.key}")
    manifest = {
        "schema": SCHEMA,
        "package": args.package,
        "build": side.provenance(),
        "key": side.key,
        "key_date": side.key_date,
        "suite_commit": suite_commit(ROOT),
        "size_set": args.size_set,
        "points": [p for p in args.points.split(",") if p],
        "variants": [v for v in args.variants.split(",") if v],
        **({"fusions": args.fusions.split(",")} if args.fusions else {}),
        "stack": stack,
        "machine": args.machine,
        "run_status": None,
        "wall_s": None,
    }
    code = Exit.OK
    if not args.install_only:
        start = time.monotonic()
        status = _run(side, args, results, work / "keys")
        manifest.update(run_status=status, wall_s=round(time.monotonic() - start, 1))
        manifest["machine"] = args.machine or machine_in(results)
        if status == Exit.NO_GPU:
            code = Exit.NO_GPU
        elif status not in (0, SOME_POINTS_FAILED) or manifest["machine"] is None:
            code = Exit.MEASURE_FAILED
    target = args.manifest or results.parent / f"{results.name}.build.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return code


def _run(side: Side, args: argparse.Namespace, results: Path, keys_repo: Path) -> int:
    """One process of the suite, measure and store (``--phase all``); its exit status."""
    run_script = ROOT / "benchmarks" / "run_gpu.sh"
    cmd = side.suite_command(run_script, args.size_set, keys_repo, results, args.machine)
    more, env = selection(args.points, args.variants, args.fusions)
    return subprocess.run(cmd + more, env={**side.suite_env(), **env}, check=False).returncode


def selection(points: str, variants: str, fusions: str) -> tuple[list[str], dict[str, str]]:
    """What run_gpu.sh gets to measure only these: its arguments, and the environment it reads
    the points from. ``fusions`` (a bisect of a catalog fusion: its ``fusion/dtype/MxN``
    points) has the suite set up that fusion only; none given, the arguments are those from
    before the catalog."""
    more = ["--variants", variants] if variants else []
    more += ["--fusions", fusions] if fusions else []
    return more, ({"RMSNORM_BENCH_POINTS": points} if points else {})


if __name__ == "__main__":
    sys.exit(main())

"""``python3 -m benchmarks.under_test.builds``: several builds of the package under test (a run
of its nightlies), each measured once, as one job's turns: a history.

A history of Thunder's nightlies measures one process a nightly, and one at a time each
compiles alone (about 70 s of an H200 a nightly for the catalog, most of it compiling). In
turns (benchmarks/engine/turns.py) the processes build side by side and then each has the GPU
alone for its timed rounds, in the order given; the asv stores follow, one at a time, once the
GPU lock is let go. Each build is installed and keyed exactly as one.py and a pair's side are
(install.py, keys.py): a nightly's key is dated by its ``devYYYYMMDD``, so the history reads
the builds in their nightlies' order, and a build measured again in another call lands under
the same key. Unlike a pair, a build that does not install or measure stops nothing: a nightly
that does not run is a point of the history, said in the manifest.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.engine import room
from benchmarks.under_test import install, keys
from benchmarks.under_test.__main__ import Exit
from benchmarks.under_test.one import ROOT, SOME_POINTS_FAILED, install_keyed, machine_in, selection
from benchmarks.under_test.pair import (
    DECIDING_VARIANTS,
    Side,
    release_gpu_lock,
    run_told,
    stderr,
    suite_commit,
)
from benchmarks.under_test.spec import PACKAGES, Spec, SpecError, parse_spec

SCHEMA = "perfbot-under-test-builds/1"


def _parser() -> argparse.ArgumentParser:
    codes = "\n".join(f"  {c.value}  {c.name}" for c in Exit if c != Exit.NOT_COMPARABLE)
    p = argparse.ArgumentParser(
        prog="python3 -m benchmarks.under_test.builds",
        description=(
            "Install several builds of the package under test (Thunder or nvFuser), each into "
            "its own overlay, key each, and measure each once into one asv results folder, as "
            "one job's turns: they build side by side, then each times alone, in the order "
            "given. A manifest beside the folder says what each build was and how it went."
        ),
        epilog=f"exit codes (the worst over the builds):\n{codes}\n"
        "  (points that fail are data: a broken build, exit 0)\n\n"
        "example, four of Thunder's nightlies:\n"
        "  python3 -m benchmarks.under_test.builds --package thunder --results history/call-1 \\\n"
        "      --work work --capture --pip-arg=--no-index \\\n"
        "      --build wheels/lightning_thunder-0.2.7.dev20251102-py3-none-any.whl \\\n"
        "      --build wheels/lightning_thunder-0.2.7.dev20251109-py3-none-any.whl ...\n"
        "then: python -m bot history --results history/call-1 --results history/call-2 ...",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--package", required=True, choices=sorted(PACKAGES))
    p.add_argument(
        "--build",
        required=True,
        action="append",
        metavar="SPEC",
        help="a wheel, NAME==VERSION or git+URL@<commit>; repeat it, in the order to time them",
    )
    p.add_argument("--results", required=True, type=Path, metavar="DIR", help="a new folder")
    p.add_argument(
        "--work", required=True, type=Path, metavar="DIR", help="overlays and the keys repository"
    )
    p.add_argument("--manifest", type=Path, metavar="FILE", help="default: DIR.builds.json")
    p.add_argument("--size-set", default="pr", choices=["smoke", "pr", "nightly"])
    p.add_argument("--points", default="", help="as one.py's (default: the whole size set)")
    p.add_argument("--fusions", default="", help="run_gpu.sh --fusions (default: all)")
    p.add_argument(
        "--variants",
        default=DECIDING_VARIANTS,
        help=f"comma list (default: {DECIDING_VARIANTS}: the context says nothing of a history)",
    )
    p.add_argument("--capture", action="store_true", help="each build captures its fusions")
    p.add_argument("--machine", default=None, help="asv machine name (default: from the GPU)")
    p.add_argument("--pip-arg", action="append", default=[], metavar="ARG")
    return p


def _specs(texts: list[str], package: str) -> list[Spec]:
    specs = [parse_spec(text, package) for text in texts]
    seen: set[str] = set()
    for spec in specs:
        if spec.shown() in seen:
            raise SpecError(f"{spec.shown()} is given twice: measure a build again in a new call")
        seen.add(spec.shown())
    return specs


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        specs = _specs(args.build, args.package)
    except SpecError as exc:
        stderr(f"under_test.builds: {exc}")
        return Exit.USAGE
    results = args.results.resolve()
    if results.exists() and any(results.iterdir()):
        stderr(f"under_test.builds: {results} is not empty: each call gets a new folder")
        return Exit.USAGE
    work = args.work.resolve()
    keys_repo = work / "keys"
    entries: list[dict[str, object]] = []
    sides: list[Side] = []
    for index, spec in enumerate(specs, start=1):
        try:
            side = install_keyed(f"build-{index}", spec, work, results, args.pip_arg)
        except (install.InstallError, keys.KeysError) as exc:
            stderr(f"under_test.builds: {spec.shown()}: {exc}")
            entries.append({"spec": spec.shown(), "install_error": str(exc)})
            continue
        twin = next((s for s in sides if s.key == side.key), None)
        if twin is not None:  # one results file a key: asv would keep the second run only
            why = f"the same build as {twin.installed.spec.shown()} (key {side.key})"
            stderr(f"under_test.builds: {spec.shown()}: {why}")
            entries.append({"spec": spec.shown(), "install_error": why})
            continue
        stderr(f"== {side.installed.distribution} {side.installed.version} -> key {side.key}")
        entries.append({**side.provenance(), "key_date": side.key_date})
        sides.append(side)
    results.mkdir(parents=True, exist_ok=True)
    more, env = selection(args.points, args.variants, args.fusions)
    more += ["--capture"] if args.capture else []
    together, line = room.here(len(sides))
    stderr(f"under_test.builds: {line}")
    outcomes = measure_in_turns(
        sides,
        results=results,
        size_set=args.size_set,
        keys_repo=keys_repo,
        machine=args.machine,
        run_script=ROOT / "benchmarks" / "run_gpu.sh",
        more=more,
        env=env,
        log=stderr,
        together=together,
    )
    measured = iter(outcomes)
    for entry in entries:
        if "key" in entry:
            entry["measure_status"], entry["store_status"] = next(measured)
    manifest = {
        "schema": SCHEMA,
        "package": args.package,
        "suite_commit": suite_commit(ROOT),
        "size_set": args.size_set,
        "arguments": more,
        "points": env.get("RMSNORM_BENCH_POINTS", ""),
        "builds": entries,
        "stack": install.stack(sides[0].installed.overlay, args.package) if sides else {},
    }
    target = args.manifest or results.parent / f"{results.name}.builds.json"
    target.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return worst_exit(entries)


def measure_in_turns(
    sides: list[Side],
    *,
    results: Path,
    size_set: str,
    keys_repo: Path,
    machine: str | None,
    run_script: Path,
    more: list[str],
    env: dict[str, str],
    log: Callable[[str], None],
    together: bool = True,
) -> list[tuple[int, int | None]]:
    """Each build's (measuring exit, asv store exit or None where nothing was stored), in the
    order given: every measuring process started at once, each timing in its turn (or, not
    ``together``, one process after the other: a GPU without room for them all); then a store
    for each that measured, one at a time, after the GPU lock is let go."""
    if not sides:
        return []

    def command(side: Side, phase: str, machine: str | None) -> list[str]:
        return [
            *side.suite_command(run_script, size_set, keys_repo, results, machine),
            *more,
            "--phase",
            phase,
        ]

    def env_of(side: Side) -> dict[str, str]:
        return {**side.suite_env(), **env}

    how, measures = "turn" if together else "run", []
    for k, side in enumerate(sides, start=1):
        shown = side.installed.spec.shown()
        log(f"== {how} {k} of {len(sides)}: {shown} (key {side.key[:12]})")
        measures.append((shown, command(side, "measure", machine), env_of(side)))
    statuses = run_told(measures, log, together=together)
    if release_gpu_lock(os.environ) is not None:
        log("== released the GPU lock: the stores need no GPU")
    machine = machine or machine_in(results)
    outcomes: list[tuple[int, int | None]] = []
    for side, status in zip(sides, statuses, strict=True):
        if status != 0 or machine is None:
            outcomes.append((status, None))
            continue
        stored = subprocess.run(command(side, "store", machine), env=env_of(side), check=False)
        outcomes.append((status, stored.returncode))
    return outcomes


def worst_exit(entries: list[dict[str, object]]) -> int:
    """The call's exit: a build that did not install, then one that did not measure or store
    (no GPU, where none found one), else OK; points that failed are data (asv's exit 2)."""
    if any("install_error" in e for e in entries):
        return Exit.INSTALL_FAILED
    measured = [e.get("measure_status") for e in entries]
    if measured and all(m == Exit.NO_GPU for m in measured):
        return Exit.NO_GPU
    stored = (0, SOME_POINTS_FAILED)
    if any(e.get("measure_status") != 0 or e.get("store_status") not in stored for e in entries):
        return Exit.MEASURE_FAILED
    return Exit.OK


if __name__ == "__main__":
    sys.exit(main())

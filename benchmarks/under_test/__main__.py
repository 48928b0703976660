"""``python3 -m benchmarks.under_test``: base and head of Thunder or nvFuser (docs/WORKFLOWS.md)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Callable, Sequence
from enum import IntEnum
from pathlib import Path

from benchmarks.engine import room
from benchmarks.under_test import install, keys, pair
from benchmarks.under_test.spec import PACKAGES, Spec, SpecError, parse_spec

ROOT = Path(__file__).resolve().parents[2]


class Exit(IntEnum):
    OK = 0
    MEASURE_FAILED = 1
    USAGE = 2
    NO_GPU = 3
    INSTALL_FAILED = 4
    NOT_COMPARABLE = 5


MEANING = {
    Exit.OK: "both sides installed and measured (failed points are warnings: the bot reports them)",
    Exit.MEASURE_FAILED: "a measurement or an asv store failed; later runs would be unpaired",
    Exit.USAGE: "bad arguments or spec; nothing was installed",
    Exit.NO_GPU: "the suite found no usable GPU (run_gpu.sh's exit 3)",
    Exit.INSTALL_FAILED: "a side did not install, or installed another build than it asked for",
    Exit.NOT_COMPARABLE: "the sides differ in more than the package under test, or not at all",
}

EPILOG = (
    "exit codes:\n"
    + "\n".join(f"  {c.value}  {c.name:<15} {MEANING[c]}" for c in Exit)
    + """

examples:
  python3 -m benchmarks.under_test --package thunder \\
      --base lightning-thunder==0.2.6 --head lightning-thunder==0.2.7.dev20260201
  python3 -m benchmarks.under_test --package thunder \\
      --base wheels/lightning_thunder-0.2.6-py3-none-any.whl \\
      --head git+https://github.com/Lightning-AI/lightning-thunder@<40-hex> --repeats 2

Then: python -m bot report --results RESULTS/rep-1 --results RESULTS/rep-2 --base KEY --head KEY
(the keys are printed at the end and kept in RESULTS/under-test.json)."""
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python3 -m benchmarks.under_test",
        description=(
            "Measure base and head of one package under test (Thunder or nvFuser), each installed "
            "into its own overlay from a spec: a wheel file, NAME==VERSION, or git+URL@<commit>. "
            "The rest of the stack is this machine's and must resolve the same for both sides; "
            "this repository's suite runs at its current commit for both. Results land as asv "
            "results under RESULTS/rep-N/, keyed by the package's commit (git) or a commit made "
            "from the installed build (wheel, version)."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--package", required=True, choices=sorted(PACKAGES))
    p.add_argument("--base", required=True, metavar="SPEC")
    p.add_argument("--head", required=True, metavar="SPEC")
    p.add_argument("--size-set", default="pr", choices=["smoke", "pr", "nightly"])
    p.add_argument("--repeats", type=int, default=2, help="runs a side, alternated (default 2)")
    p.add_argument(
        "--turns",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="start every run at once: they build side by side, then each times alone in its "
        "turn, alternated (benchmarks/engine/turns.py; the default); --no-turns: one run at a "
        "time",
    )
    p.add_argument("--results", type=Path, default=Path("results"), metavar="DIR")
    p.add_argument(
        "--work",
        type=Path,
        default=None,
        metavar="DIR",
        help="overlays, install logs and the keys repository (default RESULTS/../under-test-work)",
    )
    p.add_argument(
        "--machine", default=None, help="asv machine name (default: from the GPU's name)"
    )
    p.add_argument(
        "--pip-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="passed to every pip call, e.g. --pip-arg=--no-index --pip-arg=--find-links=DIR",
    )
    p.add_argument(
        "--install-only",
        action="store_true",
        help="install, check and key both sides, write the manifest, measure nothing",
    )
    return p


class _DifferentStacks(RuntimeError):
    pass


def _prepare(
    specs: dict[str, Spec], work: Path, pip_args: list[str], package: str
) -> tuple[list[pair.Side], dict[str, str]]:
    """Install, check and key both sides: every failure here is before any GPU time."""
    installed = {}
    for name, spec in specs.items():
        try:
            installed[name] = install.install(spec, work / name, pip_args)
        except install.InstallError as exc:
            raise install.InstallError(f"install failed ({name}): {exc}") from None
    stacks = {name: install.stack(i.overlay, package) for name, i in installed.items()}
    if stacks["base"] != stacks["head"]:
        diff = sorted(set(stacks["base"].items()) ^ set(stacks["head"].items()))
        raise _DifferentStacks(f"base and head see different stacks besides {package}: {diff[:10]}")
    keys.init_keys(work / "keys")
    sides = []
    for name, inst in installed.items():
        sides.append(side := pair.keyed_side(name, inst, work / "keys"))
        pair.stderr(
            f"== {name}: {inst.distribution} {inst.version} from {inst.spec.shown()} "
            f"-> key {side.key}"
        )
    return sides, stacks["base"]


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    say = pair.stderr
    if args.repeats < 1:
        say("under_test: --repeats must be at least 1")
        return Exit.USAGE
    try:
        specs = {name: parse_spec(getattr(args, name), args.package) for name in ("base", "head")}
    except SpecError as exc:
        say(f"under_test: {exc}")
        return Exit.USAGE
    results = args.results.resolve()
    if not args.install_only and any(results.glob("rep-*")):
        # Seen on the lab machine: a second pair into the same folder appended its records to
        # the first pair's files. A side's folder must hold that pair's runs alone.
        say(f"under_test: {results} already holds runs (rep-*): give an empty or new folder")
        return Exit.USAGE
    work = (args.work or results.parent / "under-test-work").resolve()
    for side in specs:
        shutil.rmtree(work / side, ignore_errors=True)
    try:
        sides, stack = _prepare(specs, work, args.pip_arg, args.package)
    except (install.InstallError, keys.KeysError) as exc:
        say(f"under_test: {exc}")
        return Exit.INSTALL_FAILED
    except _DifferentStacks as exc:
        say(f"under_test: {exc}")
        return Exit.NOT_COMPARABLE
    if sides[0].key == sides[1].key:
        say(
            f"under_test: base and head are the same build (key {sides[0].key}): nothing to compare"
        )
        return Exit.NOT_COMPARABLE
    results.mkdir(parents=True, exist_ok=True)
    record = pair.manifest(
        args.package, sides, stack, pair.suite_commit(ROOT), args.size_set, args.repeats
    )
    (results / "under-test.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    if args.install_only:
        return Exit.OK
    try:
        turns = args.turns and _room_for_turns(2 * args.repeats, say)
        measure = pair.in_turns if turns else pair.one_at_a_time
        warnings = measure(
            sides,
            repeats=args.repeats,
            results=results,
            size_set=args.size_set,
            keys_repo=work / "keys",
            machine=args.machine,
            run_script=ROOT / "benchmarks" / "run_gpu.sh",
            log=say,
        )
    except pair.MeasureFailed as exc:
        say(f"under_test: {exc}")
        return Exit.NO_GPU if exc.code == 3 else Exit.MEASURE_FAILED
    for line in warnings:
        say(f"under_test: warning: {line}")
    folders = " ".join(f"--results {results}/rep-{r}" for r in range(1, args.repeats + 1))
    say(f"== done. python -m bot report {folders} --base {sides[0].key} --head {sides[1].key}")
    return Exit.OK


def _room_for_turns(processes: int, say: Callable[[str], None]) -> bool:
    """Whether the GPU's memory holds every process's built points (benchmarks/engine/room.py):
    where it cannot, or nvidia-smi cannot tell, the runs go one at a time."""
    fits, line = room.here(processes)
    say(f"under_test: {line}")
    return fits


if __name__ == "__main__":
    sys.exit(main())

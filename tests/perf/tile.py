"""``python3 -m tests.perf.tile``: a nightly-sized asv results folder tiled from a recorded run.

    python3 -m tests.perf.tile --results data/h200/results --commit 06f650c8 \\
        --size-set nightly --out /tmp/tiled/results [--as-commit SHA --date ISO]

Every point of the size set carries the real samples of a recorded point (the recorded points
in turn), in asv's own results format, with the provenance record beside it; both say in their
``perfbot_tiled`` field that they are tiled test input and from where (tests/perf/tiling.py).
It is test and benchmark input, never measured data: the command refuses to write under the
repository's data/ folder, and never replaces a file that is not tiled itself.

Exit codes are the bot's (bot/exitcodes.py): 2 for bad arguments, 3 for unreadable results.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from asv import util as asv_util
from asv.results import get_filename

from benchmarks.engine.config import load_size_set
from bot.commands.steps import write_text_atomically
from bot.exitcodes import ExitCode
from bot.results.asv_file import parse_points, read_json
from bot.results.folders import commit_files
from bot.results.provenance import load_provenance
from bot.results.strict_json import decode
from bot.results.tiled import TILED_SCHEMA, tiled_marker
from bot.results.types import BadInput
from tests.perf.tiling import plan, tile_benchmarks, tile_provenance, tile_results

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = REPO_ROOT / "data"
TOOL = "tests/perf/tile.py"
_SHA = re.compile(r"[0-9a-f]{40}")


class UsageError(ValueError):
    """Bad arguments: nothing was written."""


@dataclass(frozen=True)
class Tiled:
    """What one call wrote."""

    commit: str
    machine: str
    points: int
    results_file: Path
    provenance_file: Path | None


def _date_ms(text: str) -> int:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--date {text!r} is not an ISO 8601 date") from None
    when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
    return int(when.timestamp() * 1000)


def _refuse_data_folder(out: Path) -> None:
    resolved = out.resolve()
    if resolved == DATA.resolve() or DATA.resolve() in resolved.parents:
        raise UsageError(f"{out}: tiled results are test input and never go under {DATA}")


def _writable(path: Path) -> None:
    """Replace only a tiled file: anything else in the folder may be real data."""
    if not path.exists():
        return
    try:
        data = decode(path, path.read_text(encoding="utf-8").splitlines()[-1])
    except (BadInput, IndexError, OSError, UnicodeDecodeError):
        data = None
    if not isinstance(data, dict) or tiled_marker(data) is None:
        raise UsageError(f"{path}: exists and is not tiled: refusing to replace it")


def _same_or_new(path: Path, data: Any) -> None:
    """benchmarks.json and machine.json are shared by every run in the folder."""
    text = json.dumps(data, indent=4, sort_keys=True)
    if path.exists() and json.loads(path.read_text(encoding="utf-8")) != data:
        raise UsageError(f"{path}: exists and describes other benchmarks or another machine")
    if not path.exists():
        write_text_atomically(path, text)


def tile(
    results: Path,
    commit: str,
    out: Path,
    *,
    size_set: str = "nightly",
    as_commit: str | None = None,
    date: str | None = None,
    machine: str | None = None,
    variants: Sequence[str] | None = None,
    shapes: Sequence[str] | None = None,
    slim_provenance: bool = False,
) -> Tiled:
    """Tile ``commit``'s recorded run in ``results`` over ``size_set`` (or ``shapes``, for a
    size no set has) into the results folder ``out``; see the module docstring."""
    _refuse_data_folder(out)
    if as_commit is not None and not _SHA.fullmatch(as_commit):
        raise UsageError(f"--as-commit {as_commit!r} is not a full 40-hex commit hash")
    date_ms = None if date is None else _date_ms(date)
    try:
        set_shapes, dtypes = load_size_set(size_set)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    labels = list(shapes) if shapes is not None else [s.label for s in set_shapes]
    found = commit_files(results, commit)
    if len(found) != 1:
        where = ", ".join(sorted(found)) or "no machine"
        raise BadInput(f"{results}: commit {commit} must be on exactly one machine ({where})")
    ((src_machine, (full, src_file)),) = found.items()
    data = read_json(src_file)
    parse_points(src_file, data, 1)  # the bot must read the source as it is
    if tiled_marker(data) is not None:
        raise UsageError(f"{src_file}: is tiled already; tile a recorded run")
    name = machine or src_machine
    target = as_commit or full
    try:
        p = plan(data, dtypes, labels, size_set if shapes is None else "tiled", variants)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    prov = load_provenance(src_file.parent / f"{full}.provenance.jsonl", full)
    marker = {
        "schema": TILED_SCHEMA,
        "what": "test and benchmark input, not a measurement: each point carries the "
        "recorded samples of the recorded point named in the provenance's points_from",
        "tool": TOOL,
        "source": {
            "results": str(results),
            "file": src_file.name,
            "machine": src_machine,
            "commit": full,
            "size_set": prov.text("size_set") if prov else None,
        },
        "size_set": p.size_set,
        "points": p.points,
    }
    mdir = out / name
    mdir.mkdir(parents=True, exist_ok=True)
    machine_json = json.loads((src_file.parent / "machine.json").read_text(encoding="utf-8"))
    _same_or_new(mdir / "machine.json", {**machine_json, "machine": name})
    bench_file = results / "benchmarks.json"
    if bench_file.is_file():
        benchmarks = json.loads(bench_file.read_text(encoding="utf-8"))
        _same_or_new(out / "benchmarks.json", tile_benchmarks(benchmarks, p))
    results_file = out / get_filename(name, target, str(data.get("env_name")))
    prov_file = mdir / f"{target}.provenance.jsonl"
    _writable(results_file)
    _writable(prov_file)
    tiled = tile_results(data, p, target, date_ms, name, marker)
    tiled.pop("version", None)
    asv_util.write_json(str(results_file), tiled, api_version=2, compact=True)
    if prov is None:
        prov_file.unlink(missing_ok=True)
        return Tiled(target, name, p.points, results_file, None)
    record = tile_provenance(prov.record, p, target, name, marker, slim=slim_provenance)
    write_text_atomically(prov_file, json.dumps(record) + "\n")
    return Tiled(target, name, p.points, results_file, prov_file)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python3 -m tests.perf.tile",
        description="Tile a recorded run's asv results over a larger size set: test input, "
        "never measured data.",
    )
    ap.add_argument("--results", type=Path, required=True, help="the recorded results folder")
    ap.add_argument("--commit", required=True, help="the recorded run's commit (a prefix)")
    ap.add_argument("--size-set", default="nightly", help="from benchmarks/size_sets.toml")
    ap.add_argument("--out", type=Path, required=True, help="the results folder to write into")
    ap.add_argument("--as-commit", help="the tiled run's commit (40 hex; default: the source's)")
    ap.add_argument("--date", help="the tiled run's commit date, ISO 8601 (default: the source's)")
    ap.add_argument("--machine", help="the tiled run's machine name (default: the source's)")
    ap.add_argument("--variants", help="comma list of variants to keep (default: all)")
    ap.add_argument("--slim-provenance", action="store_true", help="no per-round lists")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    variants = args.variants.split(",") if args.variants else None
    try:
        done = tile(
            args.results,
            args.commit,
            args.out,
            size_set=args.size_set,
            as_commit=args.as_commit,
            date=args.date,
            machine=args.machine,
            variants=variants,
            slim_provenance=args.slim_provenance,
        )
    except UsageError as exc:
        print(f"tile: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except BadInput as exc:
        print(f"tile: {exc}", file=sys.stderr)
        return ExitCode.BAD_INPUT
    print(
        f"tiled {done.points} points of {done.machine} {done.commit[:12]} into {done.results_file}"
    )
    return ExitCode.OK_NO_REGRESSION


if __name__ == "__main__":
    sys.exit(main())

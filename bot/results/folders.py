"""An asv results folder on disk: its machine folders and which file holds a commit.

Apart from bot/results/locate.py (which loads what is found here) so that each stays short;
every name found here is checked before it becomes part of a path, the comment or a key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from bot.results import names
from bot.results.asv_file import read_json
from bot.results.limits import full_sha, listed
from bot.results.types import BadInput

_SHA = re.compile(r"[0-9a-f]{4,40}")


def _results_dir(results_dir: Path) -> None:
    """Refuse what is not an asv results folder, saying what it is instead."""
    if results_dir.is_file():
        raise BadInput(
            f"{results_dir}: is a file, not an asv results directory (a folder with one "
            "subfolder per machine, each holding machine.json)"
        )
    if not results_dir.is_dir():
        raise BadInput(f"{results_dir}: results directory does not exist")
    if (results_dir / "machine.json").is_file():
        raise BadInput(
            f"{results_dir}: is one machine's folder (it holds machine.json); pass the "
            f"results directory above it: {results_dir.parent}"
        )


#: How many entries of a folder a hint looks at: a hint must not cost a walk of a big tree.
HINT_LOOKS_AT = 200


def _below(results_dir: Path) -> str:
    """Where the results are when `results_dir` is one level too high (``data/h200``, whose
    ``results/`` holds them; a job's artifact folder): its subfolders that are asv results
    folders, named as ``--results`` takes them. Empty when there are none."""
    found = [
        child
        for child in sorted(islice(_subfolders(results_dir), HINT_LOOKS_AT))
        if any((m / "machine.json").is_file() for m in islice(_subfolders(child), HINT_LOOKS_AT))
    ]
    if not found:
        return ""
    if len(found) == 1:
        return f"; the results are one level down: --results {found[0]}"
    return "; results are one level down, in " + ", ".join(f"--results {f}" for f in found)


def _subfolders(folder: Path) -> Iterator[Path]:
    try:
        for entry in folder.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                yield entry
    except OSError:
        return


def machine_dirs(results_dir: Path) -> list[Path]:
    """asv's machine directories (those with a machine.json), names checked: they end up in
    the comment, the issue key and URLs."""
    _results_dir(results_dir)
    machines = sorted(d for d in results_dir.iterdir() if (d / "machine.json").is_file())
    if not machines:
        raise BadInput(
            f"{results_dir}: no asv machine directories (no */machine.json)" + _below(results_dir)
        )
    for mdir in machines:
        names.machine(mdir.name, f"{results_dir}: machine directory")
    return machines


def results_files(mdir: Path) -> list[Path]:
    return [p for p in listed(mdir, "*.json", "results files") if p.name != "machine.json"]


def commit_files(results_dir: Path, sha: str) -> dict[str, tuple[str, Path]]:
    """:func:`find_commit_files`, but empty where no machine of the folder has the commit."""
    sha = sha.lower()
    if not _SHA.fullmatch(sha):
        raise BadInput(f"{sha!r} is not a commit hash (4 to 40 hex digits)")
    machines = machine_dirs(results_dir)
    found: dict[str, tuple[str, Path]] = {}
    for mdir in machines:
        hits: dict[str, list[Path]] = {}
        for path in results_files(mdir):
            if not path.name.split("-", 1)[0].startswith(sha[:8]):
                continue
            # A full hash needs no look inside here: _load checks the file's hash before any use.
            full = (
                sha if len(sha) == 40 else full_sha(read_json(path).get("commit_hash"), str(path))
            )
            if full.startswith(sha):
                hits.setdefault(full, []).append(path)
        if len(hits) > 1:
            raise BadInput(f"{mdir}: commit prefix {sha} is ambiguous: {', '.join(sorted(hits))}")
        for full, paths in hits.items():
            if len(paths) > 1:
                names = ", ".join(p.name for p in paths)
                raise BadInput(f"{mdir}: several results files for commit {full}: {names}")
            found[mdir.name] = (full, paths[0])
    return found

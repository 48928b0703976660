"""Reading a history from disk: every run of every commit in the results folders, through the
bot's own readers (bot/results), and the order file. The only I/O of bot/history.

A folder may be a store holding many commits, a job's repeats (``rep-N``), or several folders
given at once; the same run copied into two folders counts once (same machine, commit and
start time), while two processes of one commit (repeats) are two runs of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bot.history.series import History, history, parse_order
from bot.results.asv_file import read_json
from bot.results.folders import machine_dirs, results_files
from bot.results.limits import MAX_PROVENANCE_BYTES, full_sha, read_capped
from bot.results.locate import DEFAULT_MIN_SAMPLES, expand_repeats, load_run
from bot.results.types import BadInput, CommitResults


def _started(run: CommitResults) -> str | None:
    return run.provenance.text("started_at") if run.provenance else None


def read_runs(
    dirs: Sequence[Path], machine: str | None = None, min_samples: int = DEFAULT_MIN_SAMPLES
) -> dict[str, list[CommitResults]]:
    """Every run in the folders, per machine (only ``machine`` when given)."""
    expanded = expand_repeats(dirs)
    folders = list({d.resolve(): d for d in expanded}.values())  # a folder given twice: once
    if not folders:
        raise BadInput("no results directory given")
    out: dict[str, list[CommitResults]] = {}
    seen: set[tuple[str, str, str | None]] = set()
    for folder in folders:
        for mdir in machine_dirs(folder):
            if machine is not None and mdir.name != machine:
                continue
            here: dict[str, Path] = {}
            for path in results_files(mdir):
                full = full_sha(read_json(path).get("commit_hash"), str(path))
                if full in here:
                    raise BadInput(
                        f"{mdir}: several results files for commit {full}: "
                        f"{here[full].name}, {path.name}"
                    )
                here[full] = path
                run = load_run(path, mdir.name, full, min_samples)
                identity = (run.machine, run.commit, _started(run))
                if identity not in seen:
                    seen.add(identity)
                    out.setdefault(mdir.name, []).append(run)
    if machine is not None and machine not in out:
        raise BadInput(f"no results on machine {machine} in the results folders")
    if not out:
        raise BadInput("the results folders hold no results files")
    return out


def read_order(path: Path) -> list[str]:
    """The order file (size-capped as a provenance record is: it is a list of hashes)."""
    raw = read_capped(path, MAX_PROVENANCE_BYTES, "order file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: order file is not UTF-8 text") from None
    return parse_order(text, str(path))


def load_histories(
    dirs: Sequence[Path],
    machine: str | None = None,
    order: Path | None = None,
    min_samples: int = DEFAULT_MIN_SAMPLES,
) -> tuple[History, ...]:
    """One history a machine, in commit order (``order``: that file's)."""
    listed = read_order(order) if order is not None else None
    runs = read_runs(dirs, machine, min_samples)
    return tuple(history(m, runs[m], listed) for m in sorted(runs))

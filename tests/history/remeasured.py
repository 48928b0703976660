"""A second run of a recorded commit, for the re-measurement tests: a results folder (as
``--results`` reads one, as the nightly's remeasure job stores one) holding one recorded run,
copied, under a run of its own.

asv keeps one results file per commit and environment in a machine folder
(``<sha8>-<env>.json``), so a second run of a commit is a second folder (a job's ``rep-2``, a
store's re-measurements); the history counts two runs of one commit as replicates and the same
run copied twice as one (same machine, commit and ``started_at``: bot/history/load.py). So the
copy here moves ``started_at``/``finished_at`` of its provenance record by ``later`` and keeps
every measured number as recorded; ``as_commit`` relabels it as a run of another commit (its
hash and asv's commit date, nothing measured): a re-measurement that shows another state.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path

from paths import DATA

H200 = DATA / "h200" / "results"
STATES = DATA / "h200-states" / "results"
MACHINE = "nvidia-h200"


def _files(folder: Path, commit: str) -> tuple[Path, Path]:
    mdir = folder / MACHINE
    (asv,) = mdir.glob(f"{commit[:8]}-*.json")
    (record,) = mdir.glob(f"{commit[:8]}*.provenance.jsonl")
    return asv, record


def _later(stamp: str, by: timedelta) -> str:
    return (datetime.fromisoformat(stamp) + by).isoformat()


def second_run(
    dest: Path,
    source: Path,
    commit: str,
    *,
    as_commit: tuple[Path, str] | None = None,
    later: timedelta = timedelta(hours=1),
) -> Path:
    """``dest``, an asv results folder holding the recorded run of ``commit`` (from ``source``)
    as a run of its own; ``as_commit``: (its folder, hash) to label it with."""
    asv, record = _files(source, commit)
    mdir = dest / MACHINE
    mdir.mkdir(parents=True)
    shutil.copyfile(source / "benchmarks.json", dest / "benchmarks.json")
    shutil.copyfile(source / MACHINE / "machine.json", mdir / "machine.json")
    data = json.loads(asv.read_text(encoding="utf-8"))
    target = data["commit_hash"]
    if as_commit is not None:
        folder, other = as_commit
        theirs = json.loads(_files(folder, other)[0].read_text(encoding="utf-8"))
        target = theirs["commit_hash"]
        data["commit_hash"], data["date"] = target, theirs["date"]
    lines = []
    for line in record.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if "commit" in entry:
            entry["commit"] = target
        for key in ("started_at", "finished_at"):
            if key in entry:
                entry[key] = _later(entry[key], later)
        lines.append(json.dumps(entry))
    name = asv.name.replace(commit[:8], target[:8], 1)
    (mdir / name).write_text(json.dumps(data), encoding="utf-8")
    (mdir / f"{target}.provenance.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest

"""Store test input: recorded H200 runs filed under other commits and dates, and a real store.

The measurements are the committed ones of data/h200-thunder-nightlies, byte for byte in every
measured field; only the commit a copy is filed under (and asv's commit date) changes, which is
what a history of many nights needs and six recorded runs alone do not give. A "different
measurement of the same commit" is another recorded run filed under that commit.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from paths import DATA, run_bot

NIGHTLIES = DATA / "h200-thunder-nightlies" / "results"
MACHINE = "nvidia-h200"
#: Two recorded runs (Thunder nightlies 0.2.7.dev20260201 and dev20251102).
RUN_A, RUN_B = "cee6d116", "69d61fb1"


def sha(n: int) -> str:
    """A commit-shaped name for night `n` (a 40-hex digest, as git's are)."""
    return hashlib.sha1(f"night {n}".encode()).hexdigest()


def day(n: int) -> datetime:
    """03:00 UTC of night `n` of a simulated history starting on 2026-01-01."""
    return datetime(2026, 1, 1, 3, tzinfo=timezone.utc) + timedelta(days=n)


@functools.cache
def _recorded(source: str) -> tuple[str, dict[str, Any], tuple[dict[str, Any], ...]]:
    """Recorded run `source` as parsed once a process: its asv file's name after the commit
    part, the asv file and the provenance records (read only: filed_as changes copies)."""
    src_dir = NIGHTLIES / MACHINE
    (asv_file,) = src_dir.glob(f"{source}-*.json")
    (prov,) = src_dir.glob(f"{source}*.provenance.jsonl")
    data = json.loads(asv_file.read_text(encoding="utf-8"))
    records = tuple(json.loads(line) for line in prov.read_text(encoding="utf-8").splitlines())
    return asv_file.name.split("-", 1)[1], data, records


def filed_as(results: Path, commit: str, when: datetime, source: str = RUN_A) -> Path:
    """Copy recorded run `source` into the asv results folder `results` as `commit` at `when`."""
    src_dir = NIGHTLIES / MACHINE
    env_part, recorded, records = _recorded(source)
    mdir = results / MACHINE
    mdir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src_dir / "machine.json", mdir / "machine.json")
    shutil.copyfile(NIGHTLIES / "benchmarks.json", results / "benchmarks.json")
    data = {**recorded, "commit_hash": commit, "date": int(when.timestamp() * 1000)}
    target = mdir / f"{commit[:8]}-{env_part}"
    target.write_text(json.dumps(data), encoding="utf-8")
    lines = [json.dumps({**record, "commit": commit}, sort_keys=True) + "\n" for record in records]
    (mdir / f"{commit}.provenance.jsonl").write_text("".join(lines), encoding="utf-8")
    return target


def commit_added(store: Path, message: str) -> None:
    """Commit what an add changed, as bot.store.git.commit_all does (the store's own git
    call: its identity and options), in its two steps alone: a test that has just added a run
    knows the store is a repository and that the add changed it (commit_all's three checks of
    that are five git processes a commit instead of two)."""
    from bot.store.git import git as store_git

    store_git(store, "add", "-A", ".")
    store_git(store, "commit", "-q", "-m", message)


def git(repo: Path, *args: str) -> str:
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    done = subprocess.run(
        ["git", *ident, "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def tree_state(store: Path) -> tuple[str, str, str]:
    """HEAD, the work tree's status and the index's bytes: 'nothing changed' means all three."""
    return (
        git(store, "rev-parse", "HEAD"),
        git(store, "status", "--porcelain", "--untracked-files=all"),
        (store / "index.json").read_text(encoding="utf-8"),
    )


def store_add(
    store: Path, results: Path, commit: str, *more: str
) -> subprocess.CompletedProcess[str]:
    """``python -m bot store add`` of one commit of ``results`` on MACHINE."""
    return run_bot(
        "store", "add", "--store", str(store), "--results", str(results), "--commit", commit,
        "--machine", MACHINE, *more,
    )  # fmt: skip

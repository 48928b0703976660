"""The recorded pr runs of data/h200 tiled over the nightly set (tests/perf/tile.py), each
tiled once per test session and copied into the results folders the tests make.

``tiled_copy(factory, out, commit, machine)`` leaves in ``out`` exactly the files
``tile(SOURCE, commit, out, machine=machine)`` writes there (tiling is deterministic): the
run's asv file and provenance record, and asv's benchmarks.json and machine.json, which every
run of the folder shares (as tile does, an existing one is kept only if it says the same).

Safe under pytest-xdist: every worker is its own process, so a run is tiled by whichever
worker asks first, under an exclusive lock, into a folder of its own (named by process) that
becomes the shared one in one rename; the others wait on the lock and then copy it. The
folders live under the session's own temporary root (the workers' common parent under xdist),
never at a fixed shared path.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import pickle
import shutil
from pathlib import Path

import pytest

from tests.perf.tile import Tiled, tile

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The recorded pr set (baseline 06f650c8, regressed 9dc51696, A/A da17d548).
SOURCE = REPO_ROOT / "data" / "h200" / "results"
#: Its one machine: tile's default name for a tiled run (``machine or`` the source's), so a
#: run tiled without a machine and one tiled for this machine are the same files.
RECORDED_MACHINE = "nvidia-h200"


def session_root(factory: pytest.TempPathFactory) -> Path:
    """This test session's own temporary root, shared by its processes: under pytest-xdist
    the controller's basetemp (each worker's is its ``popen-gwN`` folder), else the basetemp.
    A pytest started inside a worker inherits PYTEST_XDIST_WORKER but not that folder name,
    so it gets a root of its own."""
    base = factory.getbasetemp()
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return base.parent if worker and base.name == f"popen-{worker}" else base


def _cached(factory: pytest.TempPathFactory, commit: str, machine: str) -> Path:
    """The folder holding ``results/`` (what tile wrote into an empty folder) and the Tiled."""
    root = session_root(factory) / "tiled-runs"
    root.mkdir(parents=True, exist_ok=True)
    # A commit by its first 8 digits (asv's file names; tile resolves a prefix to its run).
    name = f"{commit[:8]}-{machine}"
    done = root / name
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (done / "tiled.pickle").is_file():
            partial = root / f"{name}.partial-{os.getpid()}"
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir()
            tree = partial / "results"
            got = tile(SOURCE, commit, tree, machine=machine)
            # Its files named relative to the results folder, which moves with the rename.
            prov = got.provenance_file
            got = dataclasses.replace(
                got,
                results_file=got.results_file.relative_to(tree),
                provenance_file=None if prov is None else prov.relative_to(tree),
            )
            (partial / "tiled.pickle").write_bytes(pickle.dumps(got))
            shutil.rmtree(done, ignore_errors=True)
            partial.rename(done)
    return done


def tiled_copy(
    factory: pytest.TempPathFactory, out: Path, commit: str, machine: str | None = None
) -> Tiled:
    """As ``tile(SOURCE, commit, out, machine=machine)`` (the nightly size set), into a
    folder that holds no run of that commit and machine yet."""
    machines = [p.name for p in SOURCE.iterdir() if p.is_dir()]
    assert machines == [RECORDED_MACHINE], machines
    cached = _cached(factory, commit, machine or RECORDED_MACHINE)
    made: Tiled = pickle.loads((cached / "tiled.pickle").read_bytes())
    assert made.commit.startswith(commit), (made.commit, commit)
    tree = cached / "results"
    shared = {tree / "benchmarks.json", tree / made.machine / "machine.json"}
    for src in sorted(p for p in tree.rglob("*") if p.is_file()):
        dst = out / src.relative_to(tree)
        if src in shared and dst.exists():
            same = json.loads(dst.read_text(encoding="utf-8")) == json.loads(src.read_text())
            assert same, f"{dst}: describes other benchmarks or another machine"
            continue
        assert not dst.exists(), f"{dst}: the folder holds this run already"
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)

    prov = made.provenance_file
    return dataclasses.replace(
        made,
        results_file=out / made.results_file,
        provenance_file=None if prov is None else out / prov,
    )

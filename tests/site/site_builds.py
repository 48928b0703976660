"""The sites the site tests read, each built once per test session (``asv publish`` is half a
second to several seconds a build) and shared by every module that reads it.

A shared site is for reading only: a test that writes copies it first (``shutil.copytree``).

Safe under pytest-xdist: every worker is its own process, so a site is built by whichever
worker asks first, under an exclusive lock, into a folder of its own (named by process) that
becomes the shared one in one rename; the others wait on the lock and then read it. The
folders live under the session's own temporary root (the workers' common parent under xdist),
never at a fixed shared path.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import pickle
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from data_helpers import SyntheticResults
from paths import REPO_ROOT

from bot.results.types import PointKey
from bot.site import SiteReport, build_site
from tests.perf.tiled_runs import session_root

REPO = REPO_ROOT


@dataclass(frozen=True)
class SiteData:
    results: Path
    machine: str
    point: PointKey


# The results, machine, dtype and shape the site tests open (the contender is thunder-prims):
# the recorded pr set (baseline, A/A, regressed) at the report's headline point.
OPEN = ("data/h200/results", "nvidia-h200", "bfloat16", "2048x8192")
SITE = SiteData(REPO / OPEN[0], OPEN[1], PointKey("thunder-prims", OPEN[2], OPEN[3]))
#: The site's real history (docs/SITE.md): the pr set's three lab states, then six Thunder
#: nightlies, all measured on the H200.
HISTORY = (REPO / "data/h200/results", REPO / "data/h200-thunder-nightlies/results")
#: Real results keyed by the package-under-test command (wheel keys: a release, a nightly).
KEYED = REPO / "data/h200-under-test/thunder-pair/results/rep-1"
#: The whole nightly sweep measured on the H200 (180 points).
NIGHTLY = REPO / "data/h200-nightly/results"
#: SYNTHETIC TEST INPUT (tests/data_helpers.py): a 10% step of Thunder's kernel time.
STEP = ("base", "same", "thunder_slower", "nvfuser_faster")


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _subset(synth: SyntheticResults, tmp_path: Path, scenarios: tuple[str, ...]) -> Path:
    """Whole results files of some scenarios, copied unchanged."""
    dest = tmp_path / "results"
    (dest / synth.machine).mkdir(parents=True)
    shutil.copy(synth.results_dir / "benchmarks.json", dest)
    shutil.copy(synth.results_dir / synth.machine / "machine.json", dest / synth.machine)
    for name in scenarios:
        sha = synth.commits[name]
        shutil.copy(synth.result_file(name), dest / synth.machine)
        shutil.copy(
            synth.results_dir / synth.machine / f"{sha}.provenance.jsonl", dest / synth.machine
        )
    return dest


def _conf(tmp_path: Path, repo: Path, **extra: object) -> Path:
    conf = json.loads((REPO / "asv.conf.json").read_text())
    conf.update(repo=str(repo), **extra)
    path = tmp_path / "asv.conf.json"
    path.write_text(json.dumps(conf))
    return path


@dataclass(frozen=True)
class Built:
    """A shared site, and the digests of its results folders before and after its build."""

    report: SiteReport
    inputs_before: tuple[dict[str, str], ...]
    inputs_after: tuple[dict[str, str], ...]


def shared_site(
    factory: pytest.TempPathFactory,
    name: str,
    inputs: tuple[Path, ...],
    build: Callable[[Path], SiteReport],
) -> Built:
    """The site ``build(folder)`` builds into ``folder``, built once for the whole session.

    ``inputs`` are the results folders it reads: their digests before and after the build
    come with it (a build must never touch them).
    """
    root = session_root(factory) / "shared-sites"
    root.mkdir(parents=True, exist_ok=True)
    done = root / name
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (done / "built.pickle").is_file():
            partial = root / f"{name}.partial-{os.getpid()}"
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir()
            before = tuple(tree_digest(d) for d in inputs)
            report = build(partial)
            after = tuple(tree_digest(d) for d in inputs)
            # The report as it reads once the folder has its shared name.
            out_dir = done / report.out_dir.relative_to(partial.resolve())
            built = Built(dataclasses.replace(report, out_dir=out_dir), before, after)
            (partial / "built.pickle").write_bytes(pickle.dumps(built))
            shutil.rmtree(done, ignore_errors=True)
            partial.rename(done)
        loaded: Built = pickle.loads((done / "built.pickle").read_bytes())
    return loaded


@pytest.fixture(scope="session")
def pr_site(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The site of SITE.results (the recorded pr set)."""
    return shared_site(
        tmp_path_factory, "pr", (SITE.results,), lambda d: build_site(SITE.results, d / "site")
    )


@pytest.fixture(scope="session")
def history_site(tmp_path_factory: pytest.TempPathFactory) -> SiteReport:
    """The real history (data/h200 then the six nightlies) plus the wheel-keyed pair of the
    package-under-test command."""
    dirs = (*HISTORY, KEYED)
    return shared_site(
        tmp_path_factory, "history", dirs, lambda d: build_site(list(dirs), d / "site")
    ).report


@pytest.fixture(scope="session")
def whole_history_site(tmp_path_factory: pytest.TempPathFactory) -> SiteReport:
    """Everything real: data/h200, the six Thunder nightlies, then the whole nightly sweep."""
    dirs = (*HISTORY, NIGHTLY)
    return shared_site(
        tmp_path_factory, "whole-history", dirs, lambda d: build_site(list(dirs), d / "site")
    ).report


@pytest.fixture(scope="session")
def step_site(synthetic: SyntheticResults, tmp_path_factory: pytest.TempPathFactory) -> SiteReport:
    """SYNTHETIC TEST INPUT: the STEP scenarios with the git history of the helper's throwaway
    repository (every commit on its main)."""
    project = synthetic.results_dir.parent / "project"

    def build(folder: Path) -> SiteReport:
        results = _subset(synthetic, folder, STEP)
        return build_site(results, folder / "site", conf_path=_conf(folder, project))

    return shared_site(tmp_path_factory, "step-git", (), build).report

"""Adding runs to a real store (a git repository on branch perf-results) through the CLI.

Every run is a recorded H200 run (tests/store/store_runs.py); every refusal must leave the
store exactly as it was: same HEAD, clean work tree, same index.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from paths import DATA
from paths import run_bot as bot
from store_runs import MACHINE, RUN_A, RUN_B, day, filed_as, git, sha, store_add, tree_state

from bot.exitcodes import ExitCode
from bot.results.locate import load_commit


@pytest.fixture(scope="module")
def new_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store as `store init` makes it, made once for the module."""
    path = tmp_path_factory.mktemp("new-store") / "store"
    proc = bot("store", "init", "--store", str(path))
    assert proc.returncode == 0, proc.stderr
    assert git(path, "branch", "--show-current") == "perf-results"
    return path


@pytest.fixture
def store(new_store: Path, tmp_path: Path) -> Path:
    """A fresh store of the test's own: a copy of the new one (its work tree and .git)."""
    path = tmp_path / "store"
    shutil.copytree(new_store, path, symlinks=True)
    return path


def add(store: Path, results: Path, commit: str, *more: str) -> tuple[int, str]:
    proc = store_add(store, results, commit, *more)
    return proc.returncode, proc.stdout + proc.stderr


def test_a_run_is_added_once_and_read_back_by_the_bot(store: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    filed_as(results, sha(1), day(1))
    code, out = add(store, results, sha(1))
    assert code == 0 and "added" in out, out
    before = tree_state(store)
    assert before[1] == ""  # committed
    code, out = add(store, results, sha(1))
    assert code == 0 and "already stored" in out and "nothing to commit" in out, out
    assert tree_state(store) == before
    stored = load_commit(store / "results", sha(1), MACHINE)
    assert stored.points == load_commit(results, sha(1), MACHINE).points
    assert bot("store", "check", "--store", str(store)).returncode == 0


def test_the_recorded_nightly_sweep_is_stored_whole(store: Path) -> None:
    """The real 180-point nightly (data/h200-nightly, three shards merged): its asv file,
    record and runner checks; the shards' own folder stays out."""
    results = DATA / "h200-nightly" / "results"
    commit = "4e57021e32936a96ba33e0293901790ffae9e73d"
    code, out = add(store, results, commit)
    assert code == 0, out
    stored = sorted(p.name for p in (store / "results" / MACHINE).iterdir())
    assert stored == sorted(
        [p.name for p in (results / MACHINE).glob(f"{commit[:8]}-*.json")]
        + [f"{commit}.hygiene.jsonl", f"{commit}.provenance.jsonl", "machine.json"]
    )
    points = load_commit(store / "results", commit).points.values()
    assert sum(p.no_data is None for p in points) == 180 * 3  # nvFuser and two Thunder variants
    assert bot("store", "check", "--store", str(store)).returncode == 0


def test_asvs_own_bookkeeping_is_not_a_different_result(store: Path, tmp_path: Path) -> None:
    """asv writes when it stored and how long it took: two stores of one record differ there,
    and are the same measurement."""
    results = tmp_path / "results"
    path = filed_as(results, sha(1), day(1))
    assert add(store, results, sha(1))[0] == 0
    before = tree_state(store)
    data = json.loads(path.read_text())
    columns = data["result_columns"]
    for row in data["results"].values():
        row[columns.index("started_at")] += 86_400_000
        row[columns.index("duration")] = 1.5
    data["durations"] = {}
    path.write_text(json.dumps(data))
    code, out = add(store, results, sha(1))
    assert code == 0 and "already stored" in out
    assert tree_state(store) == before


def test_a_different_result_for_a_stored_commit_is_refused(store: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    filed_as(first, sha(1), day(1), RUN_A)
    filed_as(second, sha(1), day(1), RUN_B)  # another recorded run, same commit
    assert add(store, first, sha(1))[0] == 0
    before = tree_state(store)
    code, out = add(store, second, sha(1))
    assert code == ExitCode.CONFLICT, out
    assert "different measurement" in out and "--replace" in out
    assert tree_state(store) == before
    code, out = add(store, second, sha(1), "--replace")
    assert code == 0 and "replaced" in out
    assert (
        load_commit(store / "results", sha(1), MACHINE).points
        == load_commit(second, sha(1), MACHINE).points
    )
    assert bot("store", "check", "--store", str(store)).returncode == 0


BREAKAGES = {
    "truncated asv file": lambda asv, prov: asv.write_bytes(asv.read_bytes()[:5000]),
    "truncated record": lambda asv, prov: prov.write_bytes(prov.read_bytes()[:5000]),
    "no record": lambda asv, prov: prov.unlink(),
    "record of another commit": lambda asv, prov: prov.write_text(
        prov.read_text().replace(sha(1), sha(2))
    ),
    "record missing a point": lambda asv, prov: prov.write_text(_drop_point(prov.read_text())),
    "no benchmark list": lambda asv, prov: (asv.parent.parent / "benchmarks.json").unlink(),
    "asv file without samples": lambda asv, prov: asv.write_text(
        asv.read_text().replace('"samples"', '"no_samples"')
    ),
}


def _drop_point(text: str) -> str:
    record = json.loads(text)
    record["points"].pop(sorted(record["points"])[0])
    return json.dumps(record) + "\n"


@pytest.mark.parametrize("breakage", BREAKAGES.values(), ids=BREAKAGES.keys())
def test_a_corrupt_or_partial_run_is_refused_and_changes_nothing(
    store: Path, tmp_path: Path, breakage: object
) -> None:
    results = tmp_path / "results"
    assert add(store, *_ready(results, 0))[0] == 0
    asv = filed_as(results, sha(1), day(1))
    before = tree_state(store)
    breakage(asv, asv.parent / f"{sha(1)}.provenance.jsonl")  # type: ignore[operator]
    code, out = add(store, results, sha(1))
    assert code == ExitCode.BAD_INPUT, out
    assert out.count("\n") <= 2 and "Traceback" not in out
    assert tree_state(store) == before


def _ready(results: Path, n: int) -> tuple[Path, str]:
    filed_as(results, sha(n), day(n))
    return results, sha(n)


def test_the_store_refuses_to_start_on_uncommitted_changes(store: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    filed_as(results, sha(1), day(1))
    (store / "stray.txt").write_text("x")
    code, out = add(store, results, sha(1))
    assert code == ExitCode.USAGE and "uncommitted" in out
    code, out = add(tmp_path / "nowhere", results, sha(1))
    assert code == ExitCode.USAGE and "not a history store" in out
    assert bot("store", "init", "--store", str(store)).returncode == ExitCode.USAGE


def test_check_finds_a_hand_edit_and_a_stray_file(store: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    filed_as(results, sha(1), day(1))
    assert add(store, results, sha(1))[0] == 0
    stored = store / "results" / MACHINE
    prov = stored / f"{sha(1)}.provenance.jsonl"
    original = prov.read_text()
    record = json.loads(original)
    record["versions"]["thunder"] = "9.9.9"
    prov.write_text(json.dumps(record) + "\n")
    proc = bot("store", "check", "--store", str(store))
    assert proc.returncode == ExitCode.BAD_INPUT and "fingerprint differs" in proc.stderr
    prov.write_text(original)
    (stored / f"{sha(9)}.provenance.jsonl").write_text(original)
    proc = bot("store", "check", "--store", str(store))
    assert proc.returncode == ExitCode.BAD_INPUT and "does not list" in proc.stderr

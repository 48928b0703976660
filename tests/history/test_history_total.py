"""The watch is total (issue 38): no valid history makes `history` fail. Histories are built from
every committed results folder (data/**: RMSNorm backward alone, the catalog, the package under
test, nightlies, bisect runs), in random orders with random gaps, so that runs of other
variant sets, breaks, catalog and RMSNorm runs meet as a long main branch would bring them.
Each must end in 0, 1 or 5, every alert with its title and note, every confirmed break as an
alert; and the one history that crashed the watch (a break at a commit whose runs measured
other variants) is reported.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
from pathlib import Path
from typing import Any

from history_data import BROKEN, FOLDERS, order_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import DATA

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.results.asv_file import read_json
from bot.results.folders import machine_dirs, results_files

TOTAL = {ExitCode.OK_NO_REGRESSION, ExitCode.REGRESSION, ExitCode.BROKEN}


@functools.cache
def committed() -> dict[Path, tuple[str, ...]]:
    """Every committed asv results folder, with the full hashes of the commits it holds."""
    found: dict[Path, tuple[str, ...]] = {}
    for machine_json in sorted(DATA.rglob("machine.json")):
        folder = machine_json.parent.parent
        shas = {read_json(p)["commit_hash"] for m in machine_dirs(folder) for p in results_files(m)}
        if shas:
            found[folder] = tuple(sorted(shas))
    return found


def watch(tmp: Path, folders: list[Path], order: list[str]) -> tuple[int, dict[str, Any], str]:
    argv = ["history", *(f"--results={f}" for f in folders), "--dry-run", "--json", "-"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([*argv, "--order", str(order_file(tmp, order))], env={})
    doc = json.loads(out.getvalue()) if code in TOTAL else {}
    return code, doc, err.getvalue()


def reported(doc: dict[str, Any]) -> None:
    """Every alert has its words and where it goes (a primary repository, or why nothing is
    filed upstream: the suite's own change), and every confirmed break is an alert."""
    keys = set()
    for alert in doc["alerts"]:
        assert alert["title"].strip() and alert["note"].strip(), alert
        assert alert["primary"] or alert["upstream_none"].strip(), alert
        keys.add((alert["unit"], alert["last_good"], alert["first_bad"]))
    for m in doc["machines"]:
        for b in m["breaks"]:
            if b["status"] == "confirmed":
                assert (m["unit"], b["last_good"], b["first_bad"]) in keys, b


def test_the_folders_cover_catalog_and_rmsnorm_runs() -> None:
    folders = committed()
    assert len(folders) >= 30 and sum(map(len, folders.values())) >= 70
    assert any("h200-catalog" in str(f) for f in folders) and FOLDERS[0] in folders


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[Path], list[str]]:
    folders = committed()
    chosen = draw(st.lists(st.sampled_from(sorted(folders)), min_size=1, max_size=5, unique=True))
    commits = sorted({c for f in chosen for c in folders[f]})
    order = draw(st.permutations(commits))
    kept = [c for c in order if draw(st.integers(0, 5))]  # a gap, one commit in six
    return chosen, kept or order[:1]


@st.composite
def histories_with_a_break(draw: st.DrawFn) -> tuple[list[Path], list[str]]:
    """A break as a main branch has one: the two broken commits (Thunder 0.2.5) next to each
    other, in either order, after at least one good commit, amid the commits of the
    three-variant repeats (in half of the histories) and of up to three other folders, those
    kept at a drawn rate (none, a third, most): at rate none most runs measured other variants
    than the first bad one (the history that crashed the watch)."""
    folders = committed()
    broken = [f for f in sorted(folders) if any(c.startswith(BROKEN) for c in folders[f])]
    three = sorted(DATA.glob("h200-repeats/call-*/results/rep-2"))
    others = [f for f in sorted(folders) if f not in broken and f not in three]
    chosen = [*broken, *draw(st.sampled_from([[], three]))]
    chosen += draw(st.lists(st.sampled_from(others), max_size=3, unique=True))
    first_bad = {c for f in broken for c in folders[f] if c.startswith(BROKEN)}
    bad = draw(st.permutations(sorted(first_bad)))
    held = {c for f in chosen if f in three for c in folders[f]}
    rate = draw(st.sampled_from([0, 2, 5]))  # of 6
    rest = sorted({c for f in chosen for c in folders[f]} - set(bad))
    # A shuffle by a drawn generator: permutations() stays near the sorted order.
    draw(st.randoms(use_true_random=False)).shuffle(rest)
    kept = [c for c in rest if c in held or draw(st.integers(0, 5)) < rate] or rest[:1]
    at = draw(st.integers(1, len(kept)))
    return chosen, [*kept[:at], *bad, *kept[at:]]


@settings(
    max_examples=90,
    deadline=None,
    derandomize=True,  # the same histories on every machine: a failure is reproducible
    suppress_health_check=list(HealthCheck),
)
@given(history=st.one_of(histories(), histories_with_a_break()))
def test_no_valid_history_makes_the_watch_fail(
    history: tuple[list[Path], list[str]], tmp_path: Path
) -> None:
    """Any folders in any order, or a real break amid them (both crashes of issue 38 were
    histories of the second kind)."""
    folders, order = history
    code, doc, err = watch(tmp_path, folders, order)
    assert code in TOTAL, (folders, order, err)
    reported(doc)


def test_a_break_behind_a_change_of_variants_is_reported(tmp_path: Path) -> None:
    """Thunder 0.2.5 (no nvFuser executor) at two commits whose runs measured all five
    variants, amid runs of three: the broken guard reads every run, the timing guards the
    three-variant ones. The watch crashed here with StopIteration (a link to a commit that
    was not among the comparable ones); now the break is an alert like any other."""
    repeats = sorted(DATA.glob("h200-repeats/call-*/results/rep-2"))
    states, pair = FOLDERS[1], FOLDERS[-1]  # where the two broken commits were measured
    three = [c for f in repeats for c in committed()[f]]
    held = {c for f, shas in committed().items() for c in shas if f.is_relative_to(pair)}
    held |= set(committed()[states])
    broken = [next(c for c in sorted(held) if c.startswith(b)) for b in BROKEN]
    folders = [*repeats, states, pair]
    code, doc, err = watch(tmp_path, folders, [*three[:4], *broken, *three[4:]])
    assert code == ExitCode.OK_NO_REGRESSION, err  # the points run again at the newest commits
    reported(doc)
    (alert,) = doc["alerts"]
    assert alert["first_bad"] == broken[0] and alert["sections"][0]["guard"] == "broken"
    assert "of another sampling or set of variants left out" in json.dumps(doc["machines"])


def test_a_first_bad_commit_among_other_variants_is_linked() -> None:
    """The link to a break's first bad commit is found among every run's commits: a commit
    whose runs measured other variants is in ``every`` only, and is still linked."""
    from bot.history.sections import commit_ref
    from bot.history.series import Commit, History
    from bot.results.types import CommitResults

    def commit(sha: str, i: int) -> Commit:
        return Commit(sha, i, (CommitResults("nvidia-h200", sha, Path(f"{sha}.json"), {}),))

    good, bad = "a" * 40, "b" * 40
    h = History("nvidia-h200", (commit(good, 0),), every=(commit(good, 0), commit(bad, 1)))
    assert commit_ref(h, bad, "o/r") == f"[`{bad[:12]}`](https://github.com/o/r/commit/{bad})"
    assert commit_ref(h, "c" * 40, "o/r") == f"`{'c' * 12}`"  # not in the history: no link

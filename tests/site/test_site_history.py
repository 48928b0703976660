"""The site's history from several results folders, and where each commit links (rule: only
where the commit, tag or day exists; bot/site/commits.py).

Every input is a committed H200 results folder, used as recorded; the synthetic suite
(tests/data_helpers.py) stands in only where a git history of real commits is needed.
"""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from data_helpers import SyntheticResults, synthetic
from site_builds import (
    HISTORY,
    KEYED,
    NIGHTLY,
    STEP,
    _conf,
    _subset,
    history_site,
    tree_digest,
    whole_history_site,
)
from test_site_landing import cells

from bot.commands.cli import main
from bot.exitcodes import ExitCode
from bot.results.provenance import load_provenance
from bot.results.types import BENCH_RATIO, BadInput
from bot.site import SiteReport, build_site
from bot.site.commits import describe, nightly_day
from bot.site.commits_page import COMMIT_ROUTE

# The shared fixtures: real asv output (tests/data_helpers.py), the sites built once a session
# (tests/site/site_builds.py).
__all__ = ["history_site", "synthetic", "whole_history_site"]

MACHINE = "nvidia-h200"
RATIO = BENCH_RATIO
THUNDER = "https://github.com/Lightning-AI/lightning-thunder"


def _record(results: Path, commit: str) -> dict[str, Any]:
    prov = load_provenance(results / MACHINE / f"{commit}.provenance.jsonl", commit)
    assert prov is not None
    return dict(prov.record)


def _commits(results: Path) -> list[str]:
    return sorted(p.name.split(".")[0] for p in (results / MACHINE).glob("*.provenance.jsonl"))


@pytest.fixture(scope="module")
def history(history_site: SiteReport) -> SiteReport:
    """The real history (data/h200 then the six nightlies) plus the wheel-keyed pair, built
    once for the session (tests/site/site_builds.py)."""
    return history_site


def _rows(site: Path) -> dict[str, tuple[str, list[str]]]:
    """The commits page: full hash -> (its row's text, its links)."""
    page = (site / "index.html").read_text()
    page = page[page.index('<div id="perfbot-commits"') :]
    out = {}
    for sha, body in re.findall(r'<tr data-commit="([0-9a-f]{40})"[^>]*>(.*?)</tr>', page, re.S):
        out[sha] = (re.sub(r"<[^>]+>", " ", body), re.findall(r'href="([^"]+)"', body))
    return out


# --- several results folders ---------------------------------------------------------------------


def test_several_folders_make_one_history_in_date_order(history: SiteReport) -> None:
    index = json.loads((history.out_dir / "index.json").read_text())
    order = [index["revision_to_hash"][str(i)] for i in range(len(index["revision_to_hash"]))]
    dates = [index["revision_to_date"][str(i)] for i in range(len(order))]
    assert dates == sorted(dates)
    expected = {c for d in (*HISTORY, KEYED) for c in _commits(d)}
    assert set(order) == expected and len(order) == len(expected)
    nightlies = [c for c in order if c in _commits(HISTORY[1])]
    versions = [_record(HISTORY[1], c)["versions"]["thunder"] for c in nightlies]
    assert versions == sorted(versions) and len(versions) == 6  # dev dates in order
    # One machine, one graph: the lab hosts' differing RAM totals do not split the history.
    assert history.machines == (MACHINE,) and len(history.ratio_graphs) == 1
    assert any("ram" in w and "one machine" in w for w in history.warnings)


def test_the_folders_given_are_not_touched(tmp_path: Path) -> None:
    before = [tree_digest(d) for d in HISTORY]
    build_site(list(HISTORY), tmp_path / "site")
    assert [tree_digest(d) for d in HISTORY] == before


def test_the_same_commit_with_other_results_is_refused(tmp_path: Path) -> None:
    """rep-1 and rep-2 of a real pair hold the same key commits, measured twice."""
    rep2 = KEYED.parent / "rep-2"
    assert set(_commits(KEYED)) == set(_commits(rep2))
    with pytest.raises(BadInput, match=r"commit [0-9a-f]{40} on machine nvidia-h200 is also in"):
        build_site([KEYED, rep2], tmp_path / "site")
    assert not (tmp_path / "site").exists()


def test_the_same_folder_twice_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="given twice"):
        build_site([HISTORY[0], HISTORY[0]], tmp_path / "site")


def test_a_folder_of_identical_copies_merges(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(HISTORY[1], copy)
    report = build_site([HISTORY[1], copy], tmp_path / "site")
    assert len(report.commits) == len(_commits(HISTORY[1]))


def test_a_benchmark_defined_differently_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(HISTORY[1], copy)
    benchmarks = json.loads((copy / "benchmarks.json").read_text())
    name = next(iter(sorted(benchmarks)))
    benchmarks[name]["version"] = "0" * 64  # as a changed benchmark's code would
    (copy / "benchmarks.json").write_text(json.dumps(benchmarks))
    with pytest.raises(BadInput, match=rf"defines {re.escape(name)} unlike .*version"):
        build_site([HISTORY[0], copy], tmp_path / "site")


def test_the_cli_takes_several_folders_and_names_a_conflict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    args = ["site", "build", "--out", str(out)]
    assert main([*args, "--results", str(HISTORY[0]), "--results", str(HISTORY[1])]) == 0
    assert "9 commit(s)" in capsys.readouterr().out
    before = tree_digest(out)
    code = main([*args, "--results", str(KEYED), "--results", str(KEYED.parent / "rep-2")])
    assert code == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "with different results" in err
    assert tree_digest(out) == before  # the previous site is left whole


# --- where commits link --------------------------------------------------------------------------


def test_thunder_nightlies_link_to_thunder_on_their_day(history: SiteReport) -> None:
    rows = _rows(history.out_dir)
    for commit in _commits(HISTORY[1]):  # lab commits of this suite, each with one nightly
        version = _record(HISTORY[1], commit)["versions"]["thunder"]
        day = re.fullmatch(r"0\.2\.7\.dev(\d{4})(\d{2})(\d{2})", version)
        assert day is not None
        text, links = rows[commit]
        assert f"Thunder nightly {version}" in text and "nightly" in text
        assert links == [f"{THUNDER}/commits/main?until={day[1]}-{day[2]}-{day[3]}"]


def test_wheel_keys_link_to_the_package_not_to_a_commit(history: SiteReport) -> None:
    rows = _rows(history.out_dir)
    for commit in _commits(KEYED):
        u = _record(KEYED, commit)["under_test"]
        assert u["kind"] == "wheel" and u["key"] == commit
        text, links = rows[commit]
        day = nightly_day(u["version"])
        if day is not None:
            assert links == [f"{THUNDER}/commits/main?until={day}"] and "nightly" in text
        else:  # a release: its tag (Thunder tags releases by the bare version)
            assert links == [f"{THUNDER}/releases/tag/{u['version']}"]
        assert "no commit of Lightning-AI/lightning-thunder" in text


def test_a_wheel_keys_date_is_its_nightlys_day(history: SiteReport) -> None:
    """The key commit is dated by devYYYYMMDD (benchmarks/under_test/keys.py): the link's day."""
    from benchmarks.under_test.keys import build_date

    index = json.loads((history.out_dir / "index.json").read_text())
    dates = {h: index["revision_to_date"][r] for r, h in index["revision_to_hash"].items()}
    for commit in _commits(KEYED):
        version = _record(KEYED, commit)["under_test"]["version"]
        key_date = datetime.fromisoformat(build_date(version))
        assert nightly_day(version) in (key_date.date().isoformat(), None)
        assert dates[commit] == int(key_date.timestamp() * 1000)


def test_lab_commits_link_only_to_the_thunder_they_ran(history: SiteReport) -> None:
    rows = _rows(history.out_dir)
    for commit in _commits(HISTORY[0]):
        record = _record(HISTORY[0], commit)
        text, links = rows[commit]
        assert links == [f"{THUNDER}/releases/tag/{record['versions']['thunder']}"]
        assert "in no repository" in text
        if record["thunder_variant"] != "stock":
            assert record["thunder_variant"] in text


def test_no_link_goes_to_a_commit_that_is_not_in_its_repository(history: SiteReport) -> None:
    """None of these commits is in this repository or Thunder's: no /commit/ link anywhere,
    and asv's own commit links all lead to the commits page."""
    site = history.out_dir
    index = json.loads((site / "index.json").read_text())
    assert index["show_commit_url"] == COMMIT_ROUTE
    for path in (site / "index.html", site / "regressions.xml"):
        text = path.read_text()
        assert not re.search(r"/commit/[0-9a-f]{7,40}", text), path
        assert not re.search(r"/compare/[0-9a-f]{7,40}", text), path


def test_git_spec_keys_link_to_the_packages_commit() -> None:
    """A git spec's key is the package's own commit: the record of a real wheel key, as the
    same command writes it for a git spec (docs/DATA.md), links to that commit."""
    record = _record(KEYED, _commits(KEYED)[0])
    sha = "1e22aacb1aef6e79718a5ca2f49ab91b993cb4ef"  # a commit of Lightning-AI/lightning-thunder
    git = {
        **record["under_test"],
        "kind": "git",
        "key": sha,
        "vcs_commit": sha,
        "repository": "Lightning-AI/lightning-thunder",
        "spec": f"git+{THUNDER}@{sha}",
    }
    note = describe(sha, 0, {**record, "under_test": git}, on_branch=False, show_commit_url="")
    assert [link.url for link in note.links] == [f"{THUNDER}/commit/{sha}"]
    other = describe("f" * 40, 0, {**record, "under_test": {**git, "key": "f" * 40}},
                     on_branch=False, show_commit_url="")  # fmt: skip
    assert other.links == ()  # the record's commit is not the key: no link


def test_this_repositorys_commits_link_to_show_commit_url(
    synthetic: SyntheticResults, tmp_path: Path
) -> None:
    project = synthetic.results_dir.parent / "project"  # commits on its main
    results = _subset(synthetic, tmp_path, STEP)
    url = "https://github.com/example/project/commit/"
    report = build_site(
        results, tmp_path / "site", conf_path=_conf(tmp_path, project, show_commit_url=url)
    )
    rows = _rows(report.out_dir)
    for commit in report.commits:
        assert rows[commit][1][0] == url + commit
    assert report.commit_kinds == {"repository": len(STEP)}


@pytest.mark.slow  # at the nightly set's size: seconds (docs/BOT.md: pytest -m slow)
def test_a_run_of_another_size_set_joins_the_history(tmp_path: Path) -> None:
    """TILED TEST INPUT (tests/perf/tile.py) standing in for a nightly-set run after the pr-set
    nightlies: asv's benchmarks.json gets every shape, each run keeps its own."""
    from tests.perf.tile import tile

    tiled = tmp_path / "tiled"
    latest = _commits(HISTORY[1])
    tile(HISTORY[1], latest[0], tiled, as_commit="ab" * 20, date="2026-12-24T12:00:00Z")
    report = build_site([HISTORY[1], tiled], tmp_path / "site")
    assert report.commits[-1] == "ab" * 20 and len(report.commits) == len(latest) + 1
    index = json.loads((report.out_dir / "index.json").read_text())
    shapes = index["benchmarks"][RATIO]["params"][2]
    pr = json.loads((HISTORY[1] / "benchmarks.json").read_text())
    assert set(pr[RATIO]["params"][2]) < set(shapes)
    page = (report.out_dir / "index.html").read_text()
    found = cells(page)
    # Like with like (issue 21): the tiled run of another size set and kind is compared with
    # no pr-set nightly before it; the landing says so rather than compare 9 points of 180.
    assert found and all(c["kind"] == "new" for c in found)
    assert "No earlier commit of the same kind" in page


def plain(benchmarks: dict[str, Any], axis: int) -> list[str]:
    """One parameter's values of the ratio, without asv's repr quotes."""
    return [v.strip("'") for v in benchmarks[RATIO]["params"][axis]]


@pytest.mark.slow  # at the nightly set's size: seconds (docs/BOT.md: pytest -m slow)
def test_the_real_nightly_sweep_joins_the_history_as_one_graph(
    whole_history_site: SiteReport,
) -> None:
    """data/h200-nightly was measured on an H200 but merged and stored by asv on a CPU machine
    (another interpreter, another RAM total): the published description is the one most of the
    machine's results carry, so its 180 points join the same graphs as the lab's runs.
    whole_history_site: the site of [*HISTORY, nightly], built once for the session."""
    nightly = HISTORY[0].parents[1] / "h200-nightly" / "results"
    assert nightly == NIGHTLY
    report = whole_history_site
    assert report.commits[-1] == _commits(nightly)[0]
    assert len(report.ratio_graphs) == 1
    machine_dir = report.out_dir / "graphs" / "branch-main" / f"machine-{MACHINE}"
    assert [p.name for p in machine_dir.iterdir()] == ["python-_opt_torch_.venv_bin_python3"]
    assert any("python" in w and "most of its results" in w for w in report.warnings)

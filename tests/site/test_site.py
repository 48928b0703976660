"""The history website: real ``asv publish`` over the committed H200 results, vendored for
offline use. The browser half is tests/test_site_browser.py.

Every expected number is read from the results files with asv's own reader; nothing measured
is typed into this file.
"""

from __future__ import annotations

import hashlib
import html
import io
import itertools
import json
import re
import shutil
import tarfile
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import asv
import pytest
from asv.results import iter_results
from data_helpers import SyntheticResults, synthetic
from site_builds import (
    HISTORY,
    KEYED,
    REPO,
    SITE,
    STEP,
    Built,
    SiteData,
    _conf,
    _subset,
    pr_site,
    step_site,
    tree_digest,
)

from bot.config import ConfigError
from bot.results.types import BENCH_KERNEL, BENCH_RATIO, BadInput, CommitInfo, PointKey
from bot.site import SiteReport, build_site, start_server
from bot.site.asv_history import RecordedHistory, write_history
from bot.site.build import MARKER
from bot.site.check import audit
from bot.site.history import choose, results_order
from bot.site.links import graph_href
from bot.site.lockfile import (
    ASSETS,
    VendorError,
    check_bytes,
    load_lock,
    sri,
    sri_matches,
    verify_dir,
)
from bot.site.page import patch_index
from bot.site.refs import css_refs, is_remote, resource_refs, rewrite_page
from bot.site.thresholds import threshold_notes, thresholds
from bot.site.vendor import member
from bot.tell.rows import graph_url as render_graph_url

# The shared fixtures: real asv output (tests/data_helpers.py), the sites built once a session
# (tests/site/site_builds.py); and what the other site test modules import from here.
__all__ = [
    "HISTORY",
    "KEYED",
    "REPO",
    "SITE",
    "STEP",
    "SiteData",
    "_conf",
    "_subset",
    "pr_site",
    "step_site",
    "synthetic",
    "tree_digest",
]
ASV_PAGE = (Path(asv.__file__).parent / "www" / "index.html").read_text(encoding="utf-8")


def measured(
    results: Path,
    machine: str,
    benchmark: str,
    params: Mapping[str, str],
    commit: str | None = None,
) -> float:
    """The value asv stored for one parameter combination at ``commit`` (default: the newest
    commit), read with asv's own reader."""
    bench = json.loads((results / "benchmarks.json").read_text())[benchmark]
    found = [
        r
        for r in iter_results(str(results / machine))
        if benchmark in r.get_all_result_keys() and (commit is None or r.commit_hash == commit)
    ]
    newest = max(found, key=lambda r: r.date)
    values = newest.get_result_value(benchmark, bench["params"])
    combo = tuple(repr(params[name]) for name in bench["param_names"])
    value = values[list(itertools.product(*bench["params"])).index(combo)]
    assert isinstance(value, float)
    return value


@pytest.fixture(scope="module")
def built(pr_site: Built) -> SiteReport:
    """The site of SITE.results, built once for the session (tests/site/site_builds.py)."""
    return pr_site.report


# --- vendoring ----------------------------------------------------------------------------------


def test_committed_copies_match_the_lockfile() -> None:
    lock = load_lock()
    verify_dir(ASSETS, lock)
    assert lock.asv_version == asv.__version__, "asv changed: re-check its CDN list (docs/SITE.md)"
    for entry in lock.entries:
        data = (ASSETS / entry.local_path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry.sha256
        if entry.replaces:
            assert sri_matches(data, entry.integrity)


def test_lockfile_covers_exactly_the_cdn_files_of_asvs_page() -> None:
    lock = load_lock()
    remote = {ref for ref in resource_refs(ASV_PAGE) if is_remote(ref)}
    assert remote == set(lock.by_url())


def test_identical_bytes_keep_asvs_integrity_and_others_are_recomputed() -> None:
    lock = load_lock()
    identical = [e for e in lock.entries if e.byte_identical]
    assert {e.package for e in identical} == {
        "jquery",
        "flot-orderbars",
        "blueimp-md5",
        "bootstrap",
    }
    for e in lock.entries:
        if not e.replaces:
            continue
        data = (ASSETS / e.local_path).read_bytes()
        assert e.upstream_integrity is not None
        if e.byte_identical:
            assert e.integrity == e.upstream_integrity and sri_matches(data, e.upstream_integrity)
        else:
            assert not sri_matches(data, e.upstream_integrity)
            assert e.integrity == sri(data, "sha384") and e.note


def test_rewritten_page_loads_only_local_copies_with_matching_integrity() -> None:
    lock = load_lock()
    page = patch_index(ASV_PAGE, lock, '<div id="perfbot-landing"></div>')
    refs = resource_refs(page)
    assert refs and not [r for r in refs if is_remote(r)]
    assert not re.search(r"cdn|code\.jquery\.com|cloudflare|jsdelivr", page, re.I)
    for tag in re.finditer(r"<(?:script|link)\b[^>]*\bintegrity=\"([^\"]+)\"[^>]*>", page):
        src = re.search(r"\b(?:src|href)=\"([^\"]+)\"", tag.group(0))
        assert src is not None
        assert sri_matches((ASSETS / src.group(1)).read_bytes(), tag.group(1)), src.group(1)


def test_an_unknown_cdn_script_fails_the_rewrite() -> None:
    extra = ASV_PAGE.replace(
        "</head>", '<script src="https://cdn.example.net/x.js"></script></head>'
    )
    with pytest.raises(VendorError, match=r"cdn\.example\.net"):
        rewrite_page(extra, load_lock())


def test_a_changed_upstream_integrity_fails_the_rewrite() -> None:
    changed = ASV_PAGE.replace("sha256-FgpCb/", "sha256-XXXXX/")
    with pytest.raises(VendorError, match="integrity"):
        rewrite_page(changed, load_lock())


def test_a_tampered_copy_is_refused() -> None:
    entry = next(e for e in load_lock().entries if e.package == "jquery" and e.replaces)
    data = bytearray((ASSETS / entry.local_path).read_bytes())
    data[100] ^= 1
    with pytest.raises(VendorError, match="sha256"):
        check_bytes(entry, bytes(data))


def test_tarball_member_reads_regular_files_only() -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        body = b"/*! lib */"
        info = tarfile.TarInfo("package/lib.js")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
        link = tarfile.TarInfo("package/link.js")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    assert member(buf.getvalue(), "package/lib.js") == b"/*! lib */"
    with pytest.raises(VendorError, match="not a regular file"):
        member(buf.getvalue(), "package/link.js")
    with pytest.raises(VendorError, match="no package/nope"):
        member(buf.getvalue(), "package/nope")


@pytest.mark.network
@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_copies_are_npms_bytes(tmp_path: Path) -> None:
    """The lockfile's provenance, checked against the registry (npm pack, a few MB)."""
    from bot.site.vendor import fetch

    lock = load_lock()
    fetched = fetch(lock, tmp_path)
    for entry in lock.entries:
        check_bytes(entry, fetched[entry.local_path])
        assert fetched[entry.local_path] == (ASSETS / entry.local_path).read_bytes()


# --- the built site -----------------------------------------------------------------------------


def test_build_writes_asvs_site_with_the_ratio(built: SiteReport) -> None:
    site = built.out_dir
    for name in (
        "index.html",
        "index.json",
        "regressions.json",
        "regressions.xml",
        "perfbot.js",
    ):
        assert (site / name).is_file(), name
    assert built.machines == (SITE.machine,)
    (ratio_graph,) = [g for g in built.ratio_graphs if f"machine-{SITE.machine}" in g]
    index = json.loads((site / "index.json").read_text())
    bench = index["benchmarks"][BENCH_RATIO]
    assert bench["param_names"] == ["variant", "dtype", "shape"]
    series = json.loads((site / ratio_graph).read_text())
    latest = max(series, key=lambda point: point[0])
    combo = tuple(repr(v) for v in (SITE.point.variant, SITE.point.dtype, SITE.point.shape))
    drawn = latest[1][list(itertools.product(*bench["params"])).index(combo)]
    params = {"variant": SITE.point.variant, "dtype": SITE.point.dtype, "shape": SITE.point.shape}
    assert drawn == measured(SITE.results, SITE.machine, BENCH_RATIO, params)
    assert index["revision_to_hash"][str(latest[0])] == built.commits[-1]
    assert "regressions" in json.loads((site / "regressions.json").read_text())


def test_the_committed_results_are_not_touched(pr_site: Built) -> None:
    """The shared build of SITE.results (tests/site/site_builds.py) digested its input right
    before and right after it ran."""
    (before,), (after,) = pr_site.inputs_before, pr_site.inputs_after
    assert before == tree_digest(SITE.results)
    assert after == before


def test_lab_commits_get_the_recorded_history(built: SiteReport) -> None:
    """The committed results were measured at commits this repository does not have."""
    assert built.history == "recorded"
    assert "not on main" in built.history_reason
    assert built.dropped == ()


def test_landing_page_leads_with_the_ratio_and_kernel_times(built: SiteReport) -> None:
    index = (built.out_dir / "index.html").read_text()
    page = index[index.index('<div id="perfbot-landing"') :]
    p = {"dtype": SITE.point.dtype, "shape": SITE.point.shape}
    ratio = measured(SITE.results, SITE.machine, BENCH_RATIO, {"variant": SITE.point.variant, **p})
    mine = measured(SITE.results, SITE.machine, BENCH_KERNEL, {"variant": SITE.point.variant, **p})
    ref = measured(SITE.results, SITE.machine, BENCH_KERNEL, {"variant": "nvfuser", **p})
    row = next(
        r
        for r in re.findall(r"<tr class=\"gating\" .*?</tr>", page)
        if f'data-point="{SITE.point.label}"' in r
    )
    assert f">{ratio:.3f}</a>" in row
    for seconds in (mine, ref):
        us = seconds * 1e6
        assert (f"{us:.1f} µs" if us >= 100 else f"{us:.2f} µs") in row
    href = graph_href(BENCH_RATIO, {"variant": SITE.point.variant, **p}, SITE.machine)
    assert f'href="{html.escape(href)}"' in row
    assert page.index("Above 1") < page.index("What the graphs show")
    assert "L2 cache flushed" in page and "paired rounds" in page


def test_site_audit_passes_and_no_third_party_url_can_be_fetched(built: SiteReport) -> None:
    assert audit(built.out_dir, load_lock()) == []
    for path in built.out_dir.rglob("*"):
        if path.suffix == ".html":
            refs = resource_refs(path.read_text())
        elif path.suffix == ".css":
            refs = css_refs(path.read_text())
        else:
            continue
        assert not [r for r in refs if is_remote(r)], path


@pytest.mark.parametrize(
    ("file", "injected", "problem"),
    [
        ("index.html", '<script src="https://cdn.example.net/a.js"></script>', "loads remote"),
        ("perfbot.css", "body { background: url(//img.example.net/b.png) }", "loads remote"),
        ("asv.js", 'var u = "https://api.example.net/x";', "could fetch"),
        ("error.html", '<img src="missing.png">', "does not have"),
    ],
)
def test_audit_catches_what_would_leave_the_site(
    built: SiteReport, tmp_path: Path, file: str, injected: str, problem: str
) -> None:
    site = tmp_path / "site"
    shutil.copytree(built.out_dir, site)
    path = site / file
    path.write_text(path.read_text() + injected)
    assert any(file in p and problem in p for p in audit(site, load_lock()))


def test_rebuilding_replaces_the_previous_site(built: SiteReport, tmp_path: Path) -> None:
    out = tmp_path / "site"
    shutil.copytree(built.out_dir, out)  # a previous build of the same results
    (out / "stale.txt").write_text("from an older build")
    build_site(SITE.results, out)
    assert not (out / "stale.txt").exists() and (out / MARKER).is_file()


def test_a_folder_that_is_not_a_site_is_never_replaced(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    out.mkdir()
    (out / "notes.md").write_text("mine")
    with pytest.raises(ConfigError, match="refusing"):
        build_site(SITE.results, out)
    assert (out / "notes.md").read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir()] == ["docs"]  # no staging folder left behind


def _results_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "results"
    shutil.copytree(SITE.results, copy)
    return copy


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            lambda r: next(r.glob("*/*-*.json")).write_text('{"version": 2, "results": {'),
            "truncated",
        ),
        (lambda r: (r / "benchmarks.json").unlink(), "benchmarks.json"),
        (lambda r: next(r.glob("*/machine.json")).unlink(), "no asv machine"),
    ],
)
def test_bad_results_are_bad_input_and_leave_the_old_site(
    built: SiteReport, tmp_path: Path, damage: object, message: str
) -> None:
    out = tmp_path / "site"
    shutil.copytree(built.out_dir, out)  # the old site: a build of the same results
    before = tree_digest(out)
    results = _results_copy(tmp_path)
    damage(results)  # type: ignore[operator]
    with pytest.raises(BadInput, match=message):
        build_site(results, out)
    assert tree_digest(out) == before


def test_a_missing_configuration_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="asv configuration"):
        build_site(SITE.results, tmp_path / "site", conf_path=tmp_path / "nope.json")


# --- history, regressions and thresholds on a multi-commit history ----------------------------
# SYNTHETIC TEST INPUT (tests/data_helpers.py): real asv output of a seeded CPU suite, not
# measurements. Its scenarios are commits of a throwaway git repository; "thunder_slower" makes
# Thunder 10% slower and "nvfuser_faster" keeps the ratio there, so the ratio steps up by 10%.


def _feed_titles(site: Path) -> list[str]:
    ns = {"a": "http://www.w3.org/2005/Atom"}
    root = ET.parse(site / "regressions.xml").getroot()
    return [e.findtext("a:title", namespaces=ns) or "" for e in root.findall("a:entry", ns)]


def test_git_history_when_every_commit_is_on_main_and_the_ratio_step_is_a_regression(
    synthetic: SyntheticResults, step_site: SiteReport
) -> None:
    """step_site (tests/site/site_builds.py): the STEP scenarios' whole results files, built
    with the asv configuration's repo set to the helper's throwaway git repository."""
    project = synthetic.results_dir.parent / "project"  # the helper's throwaway git repository
    assert (project / ".git").is_dir()
    report = step_site
    assert report.history == "git" and report.dropped == ()
    assert report.commits == tuple(synthetic.commits[s] for s in STEP)
    # asv's own step detection is off (asv.conf.json): the watch's changes are the ones that
    # count, never a second list beside them; the step itself is in the graphs.
    entries = json.loads((report.out_dir / "regressions.json").read_text())["regressions"]
    assert entries == [] and report.ratio_regressions == 0
    assert not _feed_titles(report.out_dir)


def test_recorded_history_keeps_every_result_in_commit_date_order(
    synthetic: SyntheticResults, tmp_path: Path
) -> None:
    results = _subset(synthetic, tmp_path, STEP)
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    report = build_site(results, tmp_path / "site", conf_path=_conf(tmp_path, elsewhere))
    assert report.history == "recorded" and "no readable branch main" in report.history_reason
    index = json.loads((report.out_dir / "index.json").read_text())
    order = [index["revision_to_hash"][str(i)] for i in range(len(STEP))]
    assert order == [synthetic.commits[s] for s in STEP]
    assert report.ratio_regressions == 0  # asv's detection is off: the watch's changes count


def test_forcing_git_history_drops_and_reports_foreign_commits(
    synthetic: SyntheticResults, tmp_path: Path
) -> None:
    project = synthetic.results_dir.parent / "project"
    results = _subset(synthetic, tmp_path, STEP)
    for path in SITE.results.glob(f"{SITE.machine}/*"):  # a lab commit the repository lacks
        (results / SITE.machine).mkdir(exist_ok=True)
        shutil.copy(path, results / SITE.machine)
    conf = _conf(tmp_path, project)
    lab = {json.loads(p.read_text())["commit_hash"] for p in SITE.results.glob("*/*-*.json")}
    report = build_site(results, tmp_path / "site", conf_path=conf, history="git")
    assert set(report.dropped) == lab and not lab & set(report.commits)
    auto = build_site(results, tmp_path / "site", conf_path=conf)
    assert auto.history == "recorded" and len(auto.commits) == len(STEP) + len(lab)


def test_results_order_is_by_commit_date_then_hash() -> None:
    infos = [
        CommitInfo("m", "b" * 40, 2000, None),
        CommitInfo("m", "a" * 40, 2000, None),
        CommitInfo("n", "c" * 40, 1000, None),
        CommitInfo("n", "b" * 40, 2000, None),
    ]
    assert results_order(infos) == [("c" * 40, 1000), ("a" * 40, 2000), ("b" * 40, 2000)]


def test_choose_recorded_when_asked(tmp_path: Path) -> None:
    hist = choose("recorded", [CommitInfo("m", "a" * 40, 5, None)], tmp_path, ["main"])
    assert hist.mode == "recorded" and hist.commits == (("a" * 40, 5),)


def test_recorded_history_answers_asvs_range_questions(tmp_path: Path) -> None:
    hashes = [c * 40 for c in "abcd"]
    path = tmp_path / "h.json"
    write_history(path, "main", [(h, i) for i, h in enumerate(hashes)])
    repo = RecordedHistory(str(path), "unused")
    assert repo.get_branch_commits("main") == hashes[::-1]
    assert repo.get_branch_commits("other") == []
    assert repo.get_hashes_from_range(repo.get_range_spec(hashes[1], hashes[3])) == hashes[:1:-1]
    assert repo.get_hashes_from_range(repo.get_range_spec(hashes[2], hashes[3])) == [hashes[3]]
    assert repo.get_hash_from_name("b" * 8) == hashes[1]
    assert repo.get_revisions({hashes[0], hashes[2]}) == {hashes[0]: 0, hashes[2]: 2}
    assert repo.get_date(hashes[3]) == 3


def test_asv_applies_the_largest_matching_threshold() -> None:
    """What asv does with overlapping patterns, asked of asv's own code."""
    benches: dict[str, dict[str, Any]] = {
        BENCH_RATIO: {"params": [["'thunder-prims'"]]},
        BENCH_KERNEL: {"params": []},
    }
    overlapping = {"branches": ["main"], "regressions_thresholds": {".*Ratio.*": 0.03, ".*": 0.05}}
    assert thresholds(overlapping, benches) == {BENCH_RATIO: 0.05, BENCH_KERNEL: 0.05}
    (note,) = threshold_notes(overlapping, sorted(benches))
    assert BENCH_RATIO in note and "largest, 0.05" in note
    disjoint = {
        "branches": ["main"],
        "regressions_thresholds": {r"^bench_rmsnorm_bwd\.RatioToNvfuser\.": 0.03},
    }
    assert thresholds(disjoint, benches) == {BENCH_RATIO: 0.03, BENCH_KERNEL: 0.05}
    assert threshold_notes(disjoint, sorted(benches)) == []
    switched_off = {**disjoint, "regressions_first_commits": {".*track_kernel_time": None}}
    assert thresholds(switched_off, benches) == {BENCH_RATIO: 0.03, BENCH_KERNEL: None}


# --- links and serving --------------------------------------------------------------------------


@pytest.mark.parametrize("machine", [None, "nvidia-h200"])
def test_graph_links_agree_with_the_pr_comments_links(machine: str | None) -> None:
    key = PointKey("thunder-prims", "bfloat16", "2048x8192")
    params = {"variant": key.variant, "dtype": key.dtype, "shape": key.shape}
    base = "https://example.github.io/site"
    assert (
        render_graph_url(base, key, machine) == f"{base}/{graph_href(BENCH_RATIO, params, machine)}"
    )


def test_server_serves_the_site_and_nothing_else(built: SiteReport) -> None:
    with start_server(built.out_dir) as site:
        assert site.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(site.url + "/index.json") as resp:
            assert resp.headers["Content-Type"] == "application/json"
            assert json.load(resp)["project"] == "fusion-perfbot"
        with urllib.request.urlopen(site.url + "/regressions.xml") as resp:
            assert resp.headers["Content-Type"] == "application/atom+xml"
        for path in ("/graphs/", "/../../etc/passwd", "/nope.html"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(site.url + path)
            assert err.value.code == 404


def test_the_package_exports_what_the_cli_wires() -> None:
    """Each lazy export is the very object of the module it names, and nothing else resolves."""
    import importlib

    import bot.site

    for name in bot.site.__all__:
        home = importlib.import_module(bot.site._WHERE[name])
        assert getattr(bot.site, name) is getattr(home, name), name
    assert set(bot.site._WHERE) == set(bot.site.__all__)
    with pytest.raises(AttributeError, match="no attribute 'build_sites'"):
        getattr(bot.site, "build_sites")  # noqa: B009 - a typo must not resolve to anything

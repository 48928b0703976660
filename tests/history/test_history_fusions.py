"""The watch judges each fusion of the catalog on its own (docs/HISTORY.md, "One history a
fusion"), on the catalog's real H200 runs (data/h200-catalog): one history per fusion of a
machine, RMSNorm backward first; a change of one fusion is found in its own family and filed
under its own unit (``machine:fusion``) and title, while the other 13 do not move; and results
of RMSNorm backward alone read as before the catalog.

The confirmed step is recorded runs in a chosen order, as tests/history/history_tiled.py makes
its histories: the four stock runs of one sampling (``aa``'s stock-2, the pair's base repeat 2,
``aa2``'s two), then the pair's head repeat 2 (Thunder's Bias+GELU backward 5% slower, a real
sleep kernel in the timed call) as two commits, under made-up hashes. Nothing is made up but the
hashes and the dates.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from history_data import CATALOG, MACHINE, catalog_pool, pool, shipped
from history_github import github_env, writes
from paths import REPO_ROOT

from bot.bisect.watch_plan import targets
from bot.commands.history import _watch
from bot.commands.noise_file import configured_noise_models
from bot.config import Config
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, LocalGitHub
from bot.history.issues import alert_json, watch_issues
from bot.history.load import load_histories
from bot.history.method import Method
from bot.history.moved import moved_from
from bot.history.render import report_text, to_json
from bot.history.series import History, fusion_histories, history
from bot.history.stranded import parse_key, stranded
from bot.history.summary import reports_text
from bot.history.watch import Watch, analyse
from bot.results.types import DEFAULT_FUSION, CommitResults, fusions_of
from bot.site.watch import read_rows

FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"  # seeded by fake_github
GELU = f"{MACHINE}:gelu_bwd"
#: (commit, folder) of each commit of the arranged history, oldest first.
ARRANGED = (
    ("da6533d1", "aa"),
    ("6a438ce9", "rep-2"),
    ("c4af5b47", "aa2"),
    ("baad8fb3", "aa2"),
    ("e0cdef8e", "rep-2"),  # Thunder's Bias+GELU backward 5% slower
    ("e0cdef8e", "rep-2"),  # the same recorded run, a second commit at that level
)
DAY_MS = 86_400_000


def made_up(i: int) -> str:
    return hashlib.sha1(f"history-fusions {i}".encode()).hexdigest()


def arranged() -> list[CommitResults]:
    """The recorded runs of ARRANGED, each under a made-up commit, one a day."""
    runs = catalog_pool()
    picked = [
        next(r for r in runs if r.commit.startswith(c) and r.folder == f) for c, f in ARRANGED
    ]
    return [
        replace(r, commit=made_up(i), date=1_800_000_000_000 + i * DAY_MS)
        for i, r in enumerate(picked)
    ]


def watches() -> list[Watch]:
    s, model = shipped()
    return [analyse(h, s, model) for h in fusion_histories(MACHINE, arranged())]


def key(unit: str, good: int, bad: int) -> str:
    """An alert's key spelled out as docs/HISTORY.md gives it, not made by the code under test."""
    return f"rmsnorm-bwd|{unit}|{made_up(good)[:12]}..{made_up(bad)[:12]}"


def test_each_fusion_of_a_machine_is_a_history_of_its_own_rmsnorm_backward_first() -> None:
    histories = load_histories(list(CATALOG))
    fusions = fusions_of(catalog_pool())
    assert len(fusions) == 14 and fusions[0] == DEFAULT_FUSION
    assert [h.fusion for h in histories] == list(fusions)
    assert {h.machine for h in histories} == {MACHINE}  # the real machine, for the readers
    assert histories[0].unit == MACHINE  # RMSNorm backward: the machine alone, as before
    assert [h.unit for h in histories[1:]] == [f"{MACHINE}:{f}" for f in fusions[1:]]
    shas = [c.sha for c in histories[0].commits]
    assert len(shas) == 5  # the runs of the common sampling (3 variants), in date order
    for h in histories:
        assert [c.sha for c in h.commits] == shas
        assert {k.fusion for r in h.runs for k in r.points} == {h.fusion}
        assert {k.fusion for c in h.every for r in c.runs for k in r.points} == {h.fusion}
        whole = next(r for r in catalog_pool() if r.commit == h.runs[0].commit)
        mine = {k: p for k, p in whole.points.items() if k.fusion == h.fusion}
        assert dict(h.runs[0].points) == mine  # every point of the fusion, and no other


def test_a_step_of_one_fusion_moves_its_history_alone_with_its_own_noise() -> None:
    found = watches()
    moved = [w.history.fusion for w in found if w.scan.changes or w.scan.pending or w.breaks]
    assert moved == ["gelu_bwd"]  # the other 13 fusions, in families of their own, did not move
    gelu = next(w for w in found if w.history.unit == GELU)
    assert {(c.guard, c.direction, c.confirmed) for c in gelu.scan.changes} == {
        ("ratio", "regressed", True),
        ("thunder", "regressed", True),
    }
    assert {(c.last_good, c.first_bad) for c in gelu.scan.changes} == {(made_up(3), made_up(4))}
    assert [w.code for w in found].count(ExitCode.REGRESSION) == 1
    # The noise model's series of each fusion, from the A/A runs that fusion was fitted on.
    assert found[0].model == "between-run noise from 12 A/A runs on nvidia-h200"
    assert gelu.model == "between-run noise from 4 A/A runs on nvidia-h200"
    text = report_text(gelu)
    assert text.startswith("Main-branch history on Bias+GELU backward on nvidia-h200: 6 commit")
    assert report_text(found[0]).startswith("Main-branch history on nvidia-h200: 6 commit")
    machines = to_json(found)["machines"]
    assert [(m["machine"], m["fusion"], m["unit"]) for m in machines][:2] == [
        (MACHINE, DEFAULT_FUSION, MACHINE),
        (MACHINE, "dropout_layernorm_bwd", f"{MACHINE}:dropout_layernorm_bwd"),
    ]


def test_the_step_is_one_alert_under_its_unit_with_its_fusions_title() -> None:
    cfg = Config.from_env({}, REPO_ROOT / "perfbot.toml")
    (ai,) = watch_issues(watches(), FUSER, cfg.issue_repos, cfg.issue_label, cfg.alerts.link)
    a, spec = ai.alert, ai.spec
    assert spec.key == key(GELU, 3, 4)
    assert (a.machine, a.fusion, a.unit) == (MACHINE, "gelu_bwd", GELU)
    assert [p.section.name for p in a.parts] == [f"{GELU}/ratio", f"{GELU}/thunder"]
    assert a.repos == (THUNDER,)  # Thunder's kernels moved; nvFuser's build did not change
    since = f"on nvidia-h200 since {made_up(4)[:12]}"
    assert spec.title.startswith(f"Bias+GELU backward: Thunder's kernels slower {since} (")
    assert spec.linked_title is not None
    assert spec.linked_title.startswith(f"Bias+GELU backward slower {since} (main branch")
    assert spec.body.startswith("### Bias\\+GELU backward: main-branch history on nvidia-h200\n")
    assert ai.note.startswith(
        f"Main-branch history on Bias+GELU backward on nvidia-h200 between {made_up(3)[:12]} "
    )
    assert spec.linked_body is not None
    assert "alert on Bias\\+GELU backward on nvidia-h200, filed in" in spec.linked_body
    for text in (spec.title, spec.linked_title, spec.body, spec.linked_body, ai.note):
        assert "RMSNorm" not in text
    said = alert_json(ai)
    assert (said["key"], said["machine"], said["fusion"], said["unit"]) == (
        key(GELU, 3, 4),
        MACHINE,
        "gelu_bwd",
        GELU,
    )


def _bot_issues(fake: LocalGitHub) -> list[tuple[str, str, str]]:
    return [
        (i.repo, i.title, i.state)
        for r in (FUSER, THUNDER)
        for i in fake.state.issues(r)
        if i.author == BOT_LOGIN
    ]


def test_the_step_files_its_issue_on_github_once(fake_github: LocalGitHub) -> None:
    """The whole watch of the 14 histories against the fake GitHub: one issue, the fusion's,
    in Thunder's repository; a rerun on the same histories writes nothing."""
    cfg = Config.from_env(github_env(fake_github), REPO_ROOT / "perfbot.toml")
    models = configured_noise_models(cfg.verdict)
    histories = fusion_histories(MACHINE, arranged())

    def night() -> int:
        out = io.StringIO()
        return _watch(
            histories, cfg, models, out, json_path=None, repo=FUSER, dry_run=False, method=Method()
        )

    assert night() == ExitCode.REGRESSION
    ((repo, title, state),) = _bot_issues(fake_github)
    assert (repo, state) == (THUNDER, "open")
    assert title.startswith("Bias+GELU backward: Thunder's kernels slower on nvidia-h200 since")
    (issue,) = fake_github.state.issues(THUNDER)
    assert f"<!-- fusion-perfbot-key: {key(GELU, 3, 4)} -->" in (issue.body or "")
    assert f"{GELU}/thunder=1.05" in (issue.body or "")  # its sizes marker names the unit
    before = writes(fake_github)
    assert night() == ExitCode.REGRESSION
    assert writes(fake_github) == before


def test_an_issue_is_judged_by_its_own_units_history_alone() -> None:
    """A stranded or moved issue of one fusion is followed by that fusion's history, never by
    another fusion's of the same machine (their keys differ only in the unit)."""
    found = watches()
    rms, gelu = found[0], next(w for w in found if w.history.unit == GELU)
    old_gelu, old_rms = key(GELU, 2, 3), key(MACHINE, 2, 3)
    assert parse_key(old_gelu) == (GELU, made_up(2)[:12], made_up(3)[:12], None)
    current = {key(GELU, 3, 4): frozenset({"ratio", "thunder"})}
    sizes = {f"{GELU}/thunder": 1.05, f"{MACHINE}/ratio": 1.05}
    mine = stranded(gelu, old_gelu, current, sizes)
    assert mine is not None and mine.guards == ("thunder",)  # its unit's sections only
    assert "history on Bias+GELU backward on nvidia-h200: the history" in mine.note
    assert stranded(rms, old_gelu, current, sizes) is None
    assert stranded(gelu, old_rms, current, sizes) is None
    theirs = stranded(rms, old_rms, current, sizes)
    assert theirs is not None and theirs.guards == ("ratio",)
    guards = frozenset({"thunder"})
    assert moved_from(gelu, key(GELU, 3, 4), guards, {old_gelu: guards}, set(current)) == old_gelu
    assert moved_from(gelu, key(GELU, 3, 4), guards, {old_rms: guards}, set(current)) is None


def test_rmsnorm_backward_alone_reads_as_before_the_catalog() -> None:
    """Runs of RMSNorm backward alone make the one history they made before (the same run
    objects: a packed run stays packed), keyed by the machine; the catalog's RMSNorm backward
    history is those points alone."""
    runs = list(pool())
    order = [r.commit for r in sorted(runs, key=lambda r: (r.date or 0, r.commit))]
    order = list(dict.fromkeys(order))
    (alone,) = fusion_histories(MACHINE, runs, order)
    assert alone == history(MACHINE, runs, order)
    assert alone.unit == MACHINE and alone.fusion == DEFAULT_FUSION
    assert all(any(r is p for p in runs) for r in alone.runs)
    (loaded,) = load_histories([REPO_ROOT / "data" / "h200-states" / "results"])
    assert loaded.unit == MACHINE and loaded.fusion == DEFAULT_FUSION
    first = fusion_histories(MACHINE, list(catalog_pool()))[0]
    only = [r.of_fusion(DEFAULT_FUSION) for r in catalog_pool()]
    assert first == history(MACHINE, only)


@pytest.mark.parametrize("fusion", ["softmax_bwd", DEFAULT_FUSION])
def test_a_historys_unit_is_the_pr_modes(fusion: str) -> None:
    h = History(MACHINE, (), fusion=fusion)
    assert h.unit == (MACHINE if fusion == DEFAULT_FUSION else f"{MACHINE}:{fusion}")


def _history_json() -> dict[str, object]:
    """What ``history --json`` says of the arranged catalog history (dry: the alerts as filed)."""
    cfg = Config.from_env({}, REPO_ROOT / "perfbot.toml")
    found = watches()
    issues = watch_issues(found, FUSER, cfg.issue_repos, cfg.issue_label, cfg.alerts.link)
    return {**to_json(found), "alerts": [alert_json(ai) for ai in issues]}


def test_the_site_lists_the_step_under_its_fusion(tmp_path: Path) -> None:
    """The landing view's watch rows name the fusion, and link its own alert's issue."""
    path = tmp_path / "history.json"
    path.write_text(json.dumps(_history_json()), encoding="utf-8")
    rows = read_rows(path)
    assert {r.machine for r in rows} == {"Bias+GELU backward on nvidia-h200"}
    assert all(r.issue and "lightning-thunder/issues" in r.issue for r in rows)


def test_a_bisect_plan_follows_a_catalog_fusion_s_alert_at_its_points() -> None:
    """A catalog fusion's alert is planned as RMSNorm backward's are, at its own points (the
    suite's ``fusion/dtype/MxN`` keys) with its fusion, so the bisect measures that fusion. Its
    ends measured the suite's slowdown hook, no installable build: named by --build-of here."""
    history = _history_json()
    (alert,) = history["alerts"]
    found, skipped = targets(history)
    assert found == ()
    assert skipped == (
        f"{key(GELU, 3, 4)}: {alert['first_bad'][:12]} measured a thunder side made slower by "
        "0.05, not a build a bisect can install",
    )
    good, bad = "lightning-thunder==0.2.6", "lightning-thunder==0.2.7.dev20260201"
    builds_of = {alert["last_good"]: good, alert["first_bad"]: bad}
    found, skipped = targets(history, builds_of)
    assert skipped == ()
    (target,) = found
    assert (target.key, target.fusion, target.machine) == (key(GELU, 3, 4), "gelu_bwd", MACHINE)
    assert target.points == ("gelu_bwd/bfloat16/16384x4096",)
    assert (target.package, target.good, target.bad) == ("thunder", good, bad)


def test_the_report_folds_the_fusions_that_did_not_move() -> None:
    """One history in full a machine (RMSNorm backward's), the quiet others in one line; a
    fusion that moved is printed in full."""
    text = reports_text(watches())
    assert text.count("Commits, oldest first:") == 2  # RMSNorm backward's, Bias+GELU backward's
    assert "Main-branch history on Bias+GELU backward on nvidia-h200: 6 commit(s)" in text
    folded = text.rsplit("\n\n", 1)[1]
    assert folded.startswith("Main-branch history of 12 more fusion(s) on nvidia-h200: no change")
    assert "Bias+GELU backward" not in folded and "Softmax backward" in folded

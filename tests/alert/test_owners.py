"""Ownership from provenance (bot/alert/builds.py, owners.py, control.py) on recorded H200 runs:
a side owns a section only when its build changed, a linked issue goes only to a side that is
implicated, and a side that did not change is the run's control."""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import pytest
from paths import DATA, REPO_ROOT

from bot.alert.builds import UNKNOWN, compare_builds
from bot.alert.control import controlled
from bot.alert.decision import Unit, decide_run
from bot.alert.model import Alert, build_alert, pr_key
from bot.commands import cli
from bot.commands.cli import load
from bot.commands.inputs import Loaded, Selection
from bot.config import LinkPolicy
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_TOKEN, HUMAN_LOGIN, LocalGitHub
from bot.results.types import Provenance
from bot.tell.comment import headline_of
from bot.tell.view import headline

FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"
CONFIGURED = (FUSER, THUNDER)
H200 = DATA / "h200" / "results"  # stock Thunder 06f650c8, the unfused backward 9dc51696
STATES = DATA / "h200-states" / "results"
STOCK_3, STOCK_4 = "6c840f30", "022fefdd"
SLOW_NVFUSER_5, SLOW_THUNDER_5, BROKEN = "93486aaf", "8681cae2", "f888795e"
PAIR = DATA / "h200-under-test" / "thunder-pair" / "results"  # Thunder 0.2.6 → 0.2.7 wheels
BUILDS = DATA / "h200-nvfuser-builds" / "results"  # nvFuser 0.2.35 → 0.2.36


@functools.cache
def _load(results: Path | tuple[Path, ...], base: str, head: str) -> Loaded:
    folders = results if isinstance(results, tuple) else (results,)
    return load(Selection(folders, base, head, None, REPO_ROOT / "perfbot.toml"), {})


def _report(results: Path, base: str, head: str) -> Unit:
    (m,) = _load(results, base, head).decision.units
    return m


def _alert(m: Unit, link: LinkPolicy = "implicated", pr_repo: str = THUNDER) -> Alert:
    assert m.verdict is not None
    hinted = {m.machine: m.hints.attribution.owner if m.hints else None}
    return build_alert(
        {m.machine: m.verdict}, hinted, [], key=pr_key(pr_repo, 3), configured=CONFIGURED,
        pr_repo=pr_repo, builds={m.machine: m.builds}, link=link,
    )  # fmt: skip


def test_what_differs_is_read_from_both_records() -> None:
    unfused = _report(H200, "06f650c8", "9dc51696").builds
    assert unfused.known and unfused.changed_of("thunder") == ("thunder_code",)
    assert unfused.words("thunder_code") == "the suite's Thunder variant stock → unfused-backward"
    assert not unfused.changed("nvfuser") and unfused.versions["nvfuser"] == "0.2.36+git7e04d26"
    pair = _report(PAIR, "977510d7", "13612769").builds
    assert pair.words("thunder") == (
        "Thunder 0.2.6 → 0.2.7.dev20260201; Thunder's wheel 7b0bb904e5a1 → 329252e8a4ab (sha256)"
    )
    assert pair.changed_of("nvfuser") == ()
    nvfuser = _report(BUILDS, "fb46810b", "84faa557").builds
    assert nvfuser.changed_of("nvfuser") == ("nvfuser",) and not nvfuser.changed("thunder")
    slow = _report(STATES, STOCK_3, SLOW_NVFUSER_5).builds
    assert slow.changed_of("nvfuser") == ("definition",) and not slow.changed("nvfuser")
    assert compare_builds(None, None) is UNKNOWN


def _record(**fields: object) -> Provenance:
    record = {"versions": {"nvfuser": "0.2.36", "thunder": "0.2.6"}, "points": {}, **fields}
    return Provenance(Path("x.provenance.jsonl"), 1, record)


def _points(sha: object, canonical: object = "absent") -> dict[str, object]:
    entry = {"definition_sha256": sha}
    if canonical != "absent":
        entry["definition_canonical_sha256"] = canonical
    return {"bfloat16/2048x8192": {"variants": {"nvfuser": entry}}}


def test_the_hand_written_definition_is_its_canonical_fingerprint() -> None:
    """Issue 38: identical code prints with other numbering (and another tensor for a size op):
    a printed text that differs says nothing, the canonical form decides."""
    one, two = "a" * 64, "b" * 64
    same = compare_builds(_record(points=_points(one)), _record(points=_points(one)))
    assert same.known and same.changed_of("nvfuser") == () and "definition" not in same.unknown
    printed = compare_builds(_record(points=_points(one)), _record(points=_points(two)))
    assert printed.changed_of("nvfuser") == () and "definition" in printed.unknown
    renumbered = compare_builds(
        _record(points=_points(one, one)), _record(points=_points(two, one))
    )
    assert renumbered.changed_of("nvfuser") == () and "definition" not in renumbered.unknown
    math = compare_builds(_record(points=_points(one, one)), _record(points=_points(one, two)))
    assert math.words("definition") == "the hand-written definition's math changed"
    failed = compare_builds(_record(points=_points(one)), _record(points=_points(None)))
    assert not failed.changed("definition") and "at base only" in failed.unknown["definition"]
    older = compare_builds(_record(), _record())
    assert older.changed_of("nvfuser") == ()  # neither side recorded one: the rest decides


@pytest.mark.parametrize(
    ("results", "base", "head", "repos", "owners"),
    [
        # Thunder's backward unfused (the suite's Thunder variant): Thunder's alone.
        (H200, "06f650c8", "9dc51696", [THUNDER], {"thunder"}),
        # Thunder +5% (injected after Thunder's backward: a stand-in for Thunder's change).
        (STATES, STOCK_3, SLOW_THUNDER_5, [THUNDER], {"thunder"}),
        # Thunder 0.2.5 breaks every Thunder point: Thunder's build changed.
        (STATES, STOCK_3, BROKEN, [THUNDER], {"thunder"}),
        # The hand-written fusion +5%: this suite's own definition, nobody's upstream.
        (STATES, STOCK_3, SLOW_NVFUSER_5, [], {None}),
    ],
    ids=["unfused", "thunder+5%", "broken", "nvfuser+5%"],
)
def test_a_side_owns_a_section_only_when_its_build_changed(
    results: Path, base: str, head: str, repos: list[str], owners: set[str | None]
) -> None:
    alert = _alert(_report(results, base, head))
    assert alert.state == "regressed" and list(alert.repos) == repos
    assert {s.owner for s in alert.sections} == owners
    assert alert.everywhere[:1] == (THUNDER,) or not repos  # closes look everywhere


def test_the_other_repository_is_told_only_when_implicated() -> None:
    m = _report(H200, "06f650c8", "9dc51696")
    (told,) = _alert(m).told
    assert (told.repo, told.told) == (FUSER, False)
    assert told.why == (
        "nvFuser 0.2.36+git7e04d26 is the same at base and head and the "
        "fusion hints do not point at it"
    )
    always = _alert(m, link="always")
    assert always.repos == (THUNDER, FUSER) and always.told[0].why == '[alerts] link = "always"'
    assert _alert(m, link="never").repos == (THUNDER,)
    # The fusion hints implicate the side they name, whatever its build.
    hinted = build_alert(
        {m.machine: m.verdict}, {m.machine: "fuser"}, [], key=pr_key(THUNDER, 3),  # type: ignore[dict-item]
        configured=CONFIGURED, pr_repo=THUNDER, builds={m.machine: m.builds},
    )  # fmt: skip
    assert hinted.repos == (THUNDER, FUSER)
    assert hinted.told[0].why == "the fusion hints point at nvFuser's scheduler"


def test_a_suite_change_files_nothing_and_says_why() -> None:
    alert = _alert(_report(STATES, STOCK_3, SLOW_NVFUSER_5))
    assert alert.repos == () and alert.owner == "" and alert.everywhere == (THUNDER, FUSER)
    assert alert.upstream_none == (
        "the suite itself changed (a +5% slowdown injected at head by the suite's slowdown hook)"
    )


def test_without_records_the_rule_before_them_stands() -> None:
    m = _report(H200, "06f650c8", "9dc51696")
    assert m.verdict is not None
    bare = build_alert(
        {m.machine: m.verdict}, {}, [], key=pr_key(THUNDER, 3), configured=CONFIGURED,
        pr_repo=THUNDER,
    )  # fmt: skip
    assert bare.repos == (THUNDER, FUSER) and bare.told[0].told


def test_a_side_that_moved_alone_with_nothing_changed_is_said_so() -> None:
    """The hand-written fusion +5% with its slowdown's record taken away (the same records
    otherwise): what moved had nothing recorded that changed, and it moved alone (Thunder did
    not, the ratio fell with it): not drift, which moves both sides (issue 38), but not
    judged either: said as it is, nothing filed, measure it again."""
    m = _report(STATES, STOCK_3, SLOW_NVFUSER_5)
    assert m.verdict is not None and m.control is None and m.gates
    head = m.measured.head_runs[0]
    assert head.provenance is not None
    stripped = replace(head.provenance, record={**head.provenance.record, "slowdown": None})
    runs = (replace(head, provenance=stripped),)
    (bare,) = decide_run([replace(m.measured, head_runs=runs)]).units
    assert bare.control is not None and bare.control.finding == "unexplained"
    assert bare.control.text == (
        "nvFuser's hand-written fusion moved +4.8% alone although nothing recorded in it "
        "changed (the records cannot rule out a change of the suite's measuring code): not "
        "drift (which moves both sides), not judged; measure it again"
    )
    assert (
        not bare.gates
        and bare.state == "unexplained"
        and bare.why_not
        == (
            "nvFuser's hand-written fusion moved +4.8% with nothing recorded to explain it; "
            "measure it again"
        )
    )
    v = bare.verdict
    assert v is not None and v.overall == "uncalibrated"
    assert headline(v).startswith("Not judged: nvFuser's hand-written fusion moved \\+4.8%")
    assert all(g.state not in ("regressed", "broken") for g in v.guards)
    assert controlled(m.measured.verdict, UNKNOWN) is None  # without records: judged as before


DRIFT = DATA / "h200-drift" / "results"  # Thunder 0.2.6 → 0.2.7, a neighbour during the head


def test_a_real_drift_is_caught_by_the_unchanged_side(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """data/h200-drift: a Thunder PR's pair whose head was measured beside another process's
    memory copies, between two runner checks that both passed. Thunder's kernels moved with
    its build (+2%), and so did nvFuser's hand-written fusion, whose build and definition
    (the same fingerprints) did not change: the run is not evidence. Nothing is filed, the
    status is neutral, nothing on the first screen is red, and the comment offers the re-run."""
    m = _report(DRIFT, "3a66a921", "64433c4d")
    assert m.builds.changed_of("nvfuser") == () and m.builds.changed("thunder")
    assert m.control is not None and m.control.finding == "drift" and m.control.guard == "nvfuser"
    assert m.measured.held is None and m.standing == "drifted"
    measured = m.measured.verdict
    assert measured is not None and measured.guard("thunder").state == "regressed"  # type: ignore[union-attr]
    pull = fake_github.state.add_pull_request(THUNDER, "x", author=HUMAN_LOGIN, head_ref="x")
    fake_github.state.pulls.finish(THUNDER, pull.number, merged=True, by=HUMAN_LOGIN)
    argv = ["pr", "--results", str(DRIFT), "--base", "3a66a921", "--head", "64433c4d"]
    argv += ["--repo", THUNDER, "--pr", str(pull.number)]
    env = {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake_github.base_url}
    assert cli.main(argv, env=env) == ExitCode.OK_NO_REGRESSION
    assert "alert issue" not in capsys.readouterr().out
    assert [i for r in CONFIGURED for i in fake_github.state.issues(r) if i.pull is None] == []
    (status,) = fake_github.state.pulls.statuses
    assert status.description.startswith("Neutral: the runner drifted on nvidia-h200")
    (comment,) = fake_github.state.comments_on(THUNDER, pull.number)
    first = comment.body.split("<details>")[0]
    assert first.splitlines()[1] == (
        "### ⚪ RMSNorm backward: Not judged: the runner drifted \\(nvFuser's hand-written "
        "fusion moved \\+2.3% with nothing changed, the ratio steady\\); re-run the benchmark job"
    )
    assert "🔴" not in first and "neither side's figures are evidence" in first
    assert "- **Re-run:** re-run the benchmark job: the runner drifted" in first


def test_a_section_nobody_owns_does_not_pull_the_owner_home() -> None:
    """Two machines: one with Thunder's change, one whose only move is this suite's own
    hand-written definition. The Thunder sections decide the owner, not the PR's repository."""
    thunder = _report(H200, "06f650c8", "9dc51696")
    suite = _report(STATES, STOCK_3, SLOW_NVFUSER_5)
    assert thunder.verdict is not None and suite.verdict is not None
    alert = build_alert(
        {"a": thunder.verdict, "b": suite.verdict}, {}, [], key=pr_key(FUSER, 3),
        configured=CONFIGURED, pr_repo=FUSER, builds={"a": thunder.builds, "b": suite.builds},
    )  # fmt: skip
    assert [s.owner for s in alert.sections] == ["thunder", "thunder", None]
    assert alert.repos == (THUNDER,) and alert.owner_why == "what moved points at Thunder"


CATALOG = DATA / "h200-catalog"
#: Bias+GELU backward's Thunder side slowed 5% at head, the 13 other fusions untouched.
CATALOG_PAIR = ((CATALOG / "pair" / "rep-1", CATALOG / "pair" / "rep-2"), "6a438ce9", "e0cdef8e")


def test_a_slowdown_of_one_fusion_is_that_fusions_alone() -> None:
    """The catalog pair: the slowdown the suite injected at head is Bias+GELU backward's, and no
    other fusion's build changed; the run is regressed although its first fusion is not."""
    d = _load(*CATALOG_PAIR).decision
    changed = {u.fusion: u.builds.differs["thunder_code"] for u in d.units}
    assert changed.pop("gelu_bwd") == (
        "a +5% slowdown injected at head by the suite's slowdown hook",
    )
    assert set(changed.values()) == {()} and len(changed) == 13
    assert d.units[0].fusion == "rmsnorm_bwd" and d.units[0].state == "no change"
    assert d.overall == "regressed" and d.exit_code == ExitCode.REGRESSION


def test_a_change_of_how_the_suite_measured_is_the_suites() -> None:
    """aa/: the same code at both sides, but base measured five variants and head three (the
    context baselines interleaved change the small kernels' times): every fusion's suite part
    says so, and RMSNorm backward's 2% is the suite's change, judged, nothing filed, never
    drift."""
    d = _load(CATALOG / "aa", "a561aca0", "da6533d1").decision
    said = "variants measured eager, nvfuser, thunder-func, thunder-prims, torch-compile → "
    assert {u.builds.differs["suite"] for u in d.units} == {
        (f"{said}nvfuser, thunder-func, thunder-prims",)
    }
    rmsnorm = d.units[0]
    assert rmsnorm.standing == "judged" and rmsnorm.state == "regressed" and not d.drifted_machines
    assert headline_of(d).endswith("(the suite itself changed: nothing is filed)")


def test_one_fusions_drift_leaves_the_others_judged() -> None:
    """The drifted RMSNorm backward pair (data/h200-drift) beside the 13 other fusions of an A/A
    catalog pair on the same machine: the drift is that fusion's, the others are judged, and
    the headline and the status name it; alone, the drift is the machine's."""
    (drift,) = _load(DRIFT, "3a66a921", "64433c4d").decision.units
    others = [u.measured for u in _load(CATALOG / "aa2", "c4af5b47", "baad8fb3").decision.units]
    d = decide_run([drift.measured, *(m for m in others if m.fusion != "rmsnorm_bwd")])
    assert not d.drifted_machines and len(d.judged) == 13
    assert [u.fusion for u in d.units if not u.gates] == ["rmsnorm_bwd"]
    assert headline_of(d).startswith("⚪ 14 fusions: No change; not judged: RMSNorm backward: ")
    assert d.unsettled == ("the runner drifted on RMSNorm backward on nvidia-h200: re-run",)
    alone = decide_run([drift.measured])
    assert list(alone.drifted_machines) == ["nvidia-h200"]
    assert alone.unsettled == ("the runner drifted on nvidia-h200: re-run",)


def test_a_printed_definition_that_differs_on_identical_code_is_unknown_not_a_change() -> None:
    """The catalog pair's records carry the printed definition's fingerprint alone: it differs
    between base and head of identical code for 5 fusions (docs/DATA.md quotes the figure).
    Each of them is "unknown", never a change of the definition; nvFuser's side still serves
    as the control, and the one regression is Bias+GELU backward's own."""
    d = _load(*CATALOG_PAIR).decision
    printed = sorted(u.fusion for u in d.units if "definition" in u.builds.unknown)
    assert printed == sorted(
        ["rmsnorm_fwd", "layernorm_fwd", "dropout_layernorm_fwd", "dropout_layernorm_bwd",
         "softmax_fwd"]
    )  # fmt: skip
    assert all(u.builds.differs["definition"] == () for u in d.units)
    assert [u.fusion for u in d.units if u.state != "no change"] == ["gelu_bwd"]
    assert all(u.control is None for u in d.units)

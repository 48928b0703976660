"""A sweep's comment and issue bodies stay under 20,000 characters whatever its number of points
(the rows a table shows are capped: bot/tell/tables.py): on tiled pairs of 180 (the nightly
set) and 3,000 points, regressed and unchanged, on several machines, with the fusion hints
present; and for any number of points.

The tests on the 3,000-point pair (tiling it and deciding it take half a minute) are slow ones:
the default run leaves them out, CI runs them (``pytest -m slow``). The nightly set's stay in."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from random import Random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import DATA, REPO_ROOT, run_bot

from bot.alert.decision import decide_run
from bot.alert.measured import Measured
from bot.alert.model import build_alert, pr_key
from bot.commands import cli
from bot.commands.cli import load
from bot.commands.inputs import Loaded, Selection
from bot.decide.verdict import decide
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, BOT_TOKEN, HUMAN_LOGIN, LocalGitHub
from bot.results.types import CommitResults
from bot.tell.alert_issue import alert_spec
from bot.tell.comment import Context, render_report
from bot.tell.hints import SUMMARY as HINTS
from tests.perf.bench_report import THOUSANDS, THOUSANDS_VARIANTS
from tests.perf.tile import tile
from tests.perf.tiled_runs import SOURCE as TILED_SOURCE
from tests.perf.tiled_runs import tiled_copy

SOURCE = DATA / "h200" / "results"
BASE, REGRESSED, SAME = "06f650c8", "9dc51696", "da17d548"
#: Each commit's real fusion captures (data/h200-captures), put beside its tiled results.
CAPTURES = {BASE: "stock-0.2.6", REGRESSED: "unfused-backward-0.2.6", SAME: "stock-0.2.6"}
SITE = "https://nvidia.github.io/fusion-perfbot/"
CTX = Context(repo="Lightning-AI/lightning-thunder", pr=7, run_url=None, site_url=SITE)
REPOS = ("NVIDIA/Fuser", "Lightning-AI/lightning-thunder")
MACHINES = ("nvidia-h200", "h200-runner-b", "h200-runner-c")
#: The bound docs/PERFORMANCE.md states for a sweep's comment and each issue body.
SUMMARY_CHARS = 20_000


def _tiled(out: Path, machines: tuple[str, ...], **options: object) -> Path:
    for machine in machines:
        for commit in (BASE, REGRESSED, SAME):
            done = tile(SOURCE, commit, out, machine=machine, **options)  # type: ignore[arg-type]
            beside = out / machine / f"{done.commit}.captures"
            shutil.copytree(DATA / "h200-captures" / CAPTURES[commit], beside)
    return out


@pytest.fixture(scope="module")
def nightly(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """nightly(head): the nightly-sized pair of BASE and head on three machines, each run tiled
    once a session (tests/perf/tiled_runs.py), its captures beside it, as _tiled puts them;
    made when a test first asks for that head (the default run asks for one)."""
    assert TILED_SOURCE == SOURCE
    made: dict[str, Path] = {}

    def folder(head: str) -> Path:
        if head not in made:
            out = tmp_path_factory.mktemp("nightly") / "results"
            for machine in MACHINES:
                for commit in (BASE, head):
                    done = tiled_copy(tmp_path_factory, out, commit, machine)
                    beside = out / machine / f"{done.commit}.captures"
                    shutil.copytree(DATA / "h200-captures" / CAPTURES[commit], beside)
            made[head] = out
        return made[head]

    return folder


@pytest.fixture(scope="module")
def thousands(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Loaded]:
    """The 3,000-point pair on two machines, loaded once for each head."""
    out = _tiled(
        tmp_path_factory.mktemp("thousands") / "results",
        MACHINES[:2],
        shapes=THOUSANDS,
        variants=THOUSANDS_VARIANTS,
        slim_provenance=True,
    )
    return {head: _load(out, head) for head in (REGRESSED, SAME)}


def _load(results: Path, head: str) -> Loaded:
    sel = Selection((results,), BASE, head, None, REPO_ROOT / "perfbot.toml")
    return load(sel, {"PERFBOT_SITE_URL": SITE})


def _texts(reports: tuple[Measured, ...]) -> dict[str, str]:
    """The comment (every machine, and the one the noise model is for alone) and every issue
    body. The other machines have no noise model: their A/A verdicts may be false alarms."""
    alone = [m for m in reports if m.machine == MACHINES[0]] or list(reports[:1])
    decision = decide_run(reports)
    out = {
        "comment": render_report(decision, CTX),
        "comment, one machine": render_report(decide_run(alone), CTX),
    }
    judged = {u.machine: u.verdict for u in decision.judged if u.verdict is not None}
    assert CTX.repo is not None and CTX.pr is not None
    unjudged = [u.machine for u in decision.units if not u.gates]
    alert = build_alert(
        judged, {}, unjudged, key=pr_key(CTX.repo, CTX.pr), configured=REPOS, pr_repo=CTX.repo,
    )  # fmt: skip
    if alert.sections:  # the alert's two issues: the evidence, and the linked one
        assert all(m.hints is not None for m in reports)
        hints = {m.machine: m.hints for m in reports}
        sides = {m.machine: (m.base, m.head) for m in reports}
        spec = alert_spec(alert, judged, CTX, hints, "perf", sides)
        out["issue, primary"] = spec.body
        out["issue, linked"] = spec.body_for(spec.repos[1])
    return out


def _check(texts: dict[str, str], headline: str, points: int, machines: int) -> None:
    for name, text in texts.items():
        assert len(text) <= SUMMARY_CHARS, f"{name}: {len(text)} characters"
    for name in ("comment", "comment, one machine"):
        assert HINTS in texts[name] and f"[history]({SITE})" in texts[name]
        assert texts[name].split("<details>")[0].count("| thunder-") <= 5  # a handful of rows
    assert headline in texts["comment, one machine"].splitlines()[1]
    if headline == "Regressed":  # every gating point counted, whatever the rows shown
        text = texts["comment, one machine"]  # Thunder's two variants, or one of them
        assert f"of {2 * points} points regressed" in text or f"of {points} points" in text
    assert f"\n**{MACHINES[0]}**: " in texts["comment"]
    assert sum(f"\n**{m}**: " in texts["comment"] for m in MACHINES) == machines
    assert f"\n**{MACHINES[0]}**: " not in texts["comment, one machine"]
    if "issue, primary" in texts:
        assert f"### 🔴 {MACHINES[0]}: " in texts["issue, primary"]


STATES = [(REGRESSED, "Regressed"), (SAME, "No change")]


@pytest.mark.parametrize(
    ("head", "headline"),
    [STATES[0], pytest.param(*STATES[1], marks=pytest.mark.slow)],  # one head in the default run
)
def test_the_nightly_sweep_on_three_machines(
    nightly: Callable[[str], Path], head: str, headline: str
) -> None:
    got = _load(nightly(head), head)
    _check(_texts(_measured(got)), headline, 180, 3)


@pytest.mark.slow
@pytest.mark.parametrize(("head", "headline"), STATES)
def test_thousands_of_points_on_two_machines(
    thousands: dict[str, Loaded], head: str, headline: str
) -> None:
    _check(_texts(_measured(thousands[head])), headline, 3 * len(THOUSANDS), 2)


def _measured(got: Loaded) -> tuple[Measured, ...]:
    return tuple(u.measured for u in got.decision.units)


def _subset(run: CommitResults, keep: set[tuple[str, str]], machine: str) -> CommitResults:
    points = {k: p for k, p in run.points.items() if (k.dtype, k.shape) in keep}
    return replace(run, points=points, machine=machine)


def _reports(got: Loaded, keep: set[tuple[str, str]], machines: int) -> tuple[Measured, ...]:
    first = got.decision.units[0].measured
    out = []
    for name in MACHINES[:machines]:
        b = tuple(_subset(r, keep, name) for r in first.base_runs)
        h = tuple(_subset(r, keep, name) for r in first.head_runs)
        out.append(Measured(name, decide(b, h, got.config.verdict), b, h, hints=first.hints))
    return tuple(out)


@pytest.mark.slow
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    count=st.integers(1, 600),
    machines=st.integers(1, 3),
    regressed=st.booleans(),
    rnd=st.randoms(use_true_random=False),
)
def test_any_number_of_points_past_the_limit(
    thousands: dict[str, Loaded], count: int, machines: int, regressed: bool, rnd: Random
) -> None:
    got = thousands[REGRESSED if regressed else SAME]
    pool = sorted({(k.dtype, k.shape) for k in got.decision.units[0].measured.base_runs[0].points})
    texts = _texts(_reports(got, set(rnd.sample(pool, count)), machines))
    for name, text in texts.items():
        assert len(text) <= SUMMARY_CHARS, f"{name}: {len(text)} characters"


@pytest.mark.slow  # at the nightly set's size: seconds (docs/BOT.md: pytest -m slow)
def test_the_console_report_and_its_full_tables(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    out = tmp_path / "results"
    for commit in (BASE, REGRESSED):
        tiled_copy(tmp_path_factory, out, commit)  # tile(SOURCE, commit, out), tiled once
    args = ["report", "--results", str(out), "--base", BASE, "--head", REGRESSED]
    short, full = run_bot(*args), run_bot(*args, "--full")
    assert short.returncode == full.returncode == 1
    assert len(short.stdout) <= SUMMARY_CHARS and "_and 355 more_" in short.stdout
    assert full.stdout.count("| thunder-prims ") == 2 * 180 + 5  # ratio, kernel; first screen
    folded = full.stdout.split("<details>", 1)[1]  # the first screen is the same handful
    assert "_and " not in folded and "left out" not in full.stdout


@pytest.mark.slow  # at the nightly set's size: seconds (docs/BOT.md: pytest -m slow)
def test_the_pr_flow_posts_the_summary_over_real_http(
    nightly: Callable[[str], Path], fake_github: LocalGitHub
) -> None:
    """The whole pr flow, real PyGithub against the local fake: the sticky comment and the
    alert's issues of a three-machine nightly-sized regression (the PR merged), as posted,
    within the bound."""
    thunder = "Lightning-AI/lightning-thunder"
    pull = fake_github.state.add_pull_request(thunder, "Rework", author=HUMAN_LOGIN, head_ref="w")
    number = pull.number
    fake_github.state.pulls.finish(thunder, number, merged=True, by=HUMAN_LOGIN)
    argv = ["pr", "--repo", thunder, "--pr", str(number), "--results", str(nightly(REGRESSED))]
    argv += ["--base", BASE, "--head", REGRESSED, "--config", str(REPO_ROOT / "perfbot.toml")]
    env = {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake_github.base_url}
    env["PERFBOT_SITE_URL"] = SITE
    assert cli.main(argv, env=env) == ExitCode.REGRESSION
    (comment,) = fake_github.state.comments_on(thunder, number)
    assert len(comment.body) <= SUMMARY_CHARS and HINTS in comment.body
    assert sum(f"\n**{m}**: " in comment.body for m in MACHINES) == 3
    issues = [i for repo in REPOS for i in fake_github.state.issues(repo) if i.pull is None]
    # Thunder's change alone (nvFuser's build is the same): one issue, in Thunder.
    assert len(issues) == 1 and all(i.author == BOT_LOGIN for i in issues)
    for issue in issues:  # the filer adds its key marker and the cross-links to the body
        assert len(issue.body or "") <= SUMMARY_CHARS + 1_000, issue.title
    (primary,) = [i for i in issues if i.repo == thunder]
    assert "_and " in (primary.body or ""), primary.title  # rows capped, the rest counted

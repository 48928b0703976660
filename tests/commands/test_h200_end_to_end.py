"""The whole ``pr`` flow on the recorded H200 data (data/README.md), real PyGithub against the
local fake: what a Thunder PR would get from a real regression, a re-run, a fix, and from two
runs of unchanged code. The shipped perfbot.toml is used, as in CI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from paths import REPO_ROOT

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, BOT_TOKEN, HUMAN_LOGIN, LocalGitHub
from bot.github.fake.state import Issue
from bot.tell.comment import MARKER
from bot.tell.words import GUARD_NAMES

ROOT = REPO_ROOT
EIGHT_CALL = ROOT / "data" / "h200" / "results"
SINGLE_CALL = ROOT / "data" / "h200-single-call" / "results"
BASELINE, BASELINE_AGAIN, REGRESSED = "06f650c8", "da17d548", "9dc51696"
FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"  # seeded by fake_github


def _pr(fake: LocalGitHub, base: str, head: str, results: Path = EIGHT_CALL) -> list[str]:
    number = fake.state.add_pull_request(
        THUNDER, "Rework the nvFuser executor", author=HUMAN_LOGIN, head_ref="rework"
    ).number
    return _argv(number, base, head, results)


def _argv(number: int, base: str, head: str, results: Path = EIGHT_CALL) -> list[str]:
    return [
        "pr",
        "--repo",
        THUNDER,
        "--pr",
        str(number),
        "--results",
        str(results),
        "--base",
        base,
        "--head",
        head,
        "--config",
        str(ROOT / "perfbot.toml"),
    ]


def _env(fake: LocalGitHub) -> dict[str, str]:
    return {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake.base_url}


def _issues(fake: LocalGitHub) -> dict[str, list[Issue]]:
    return {
        repo: [i for i in fake.state.issues(repo) if i.pull is None and i.author == BOT_LOGIN]
        for repo in (FUSER, THUNDER)
    }


def _snapshot(fake: LocalGitHub, number: int) -> list[object]:
    """Copies of what a re-run could change (the fake hands out its live objects)."""
    issues = [i for found in _issues(fake).values() for i in found]
    return [
        [(i.repo, i.number, i.state, i.body, i.updated_at) for i in issues],
        [(c.id, c.body) for i in issues for c in fake.state.comments_on(i.repo, i.number)],
        [(c.id, c.body) for c in fake.state.comments_on(THUNDER, number)],
    ]


def _url(fake: LocalGitHub, issue: Issue) -> str:
    return f"{fake.web_url}/{issue.repo}/issues/{issue.number}"


def _alert(fake: LocalGitHub) -> dict[str, list[Issue]]:
    """The bot's alert issues in each repository (every one carries the PR's key)."""
    return {
        repo: [i for i in found if "<!-- fusion-perfbot-key: rmsnorm-bwd|pr|" in (i.body or "")]
        for repo, found in _issues(fake).items()
    }


def _headline(body: str) -> str:
    """The comment's headline, the line under its marker."""
    marker, headline = body.split("\n")[:2]
    assert marker == MARKER
    return headline


def _guard_lines(body: str) -> list[str]:
    """The first screen's line a guard (``- <icon> **<guard>**: <words>``)."""
    first = body.split("<details>")[0]
    return [x for x in first.splitlines() if re.match(r"- \S+ \*\*[^*]+\*\*: ", x)]


def _fold(body: str, summary: str) -> str:
    """The folded section whose summary starts with ``summary``."""
    start = body.index(f"<details><summary>{summary}")
    return body[start : body.index("</details>", start)]


def _merge(fake: LocalGitHub, argv: list[str]) -> list[str]:
    """The PR of `argv` merged (the shipped configuration files alerts at merge)."""
    fake.state.pulls.finish(argv[2], int(argv[4]), merged=True, by=HUMAN_LOGIN)
    return argv


def test_regression_rerun_and_recovery(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, env = _pr(fake_github, BASELINE, REGRESSED), _env(fake_github)
    number = int(argv[4])

    # Open: the comment and a failing status; the alert waits for the merge.
    assert cli.main(argv, env=env) == ExitCode.REGRESSION
    (comment,) = fake_github.state.comments_on(THUNDER, number)
    assert _headline(comment.body) == (
        "### 🔴 RMSNorm backward: Regressed: Thunder's kernels 11.4x slower"
    )
    assert _guard_lines(comment.body)[:2] == [
        "- 🔴 **Thunder's own kernels**: 11.4x slower at the geometric mean (18 of 18 points "
        "regressed)",
        "- 🔴 **Thunder against nvFuser (kernel-time ratio)**: 11.3x slower relative to "
        "nvFuser at the geometric mean (18 of 18 points regressed)",
    ]
    ratio = _fold(comment.body, "Thunder against nvFuser (kernel-time ratio): regressed")
    assert "\n| thunder-prims bfloat16 2048x8192 | 1.023 → 17.286 | " in ratio  # base ratio
    assert "the alert is filed when the PR merges" in comment.body
    assert _alert(fake_github) == {FUSER: [], THUNDER: []}
    (status,) = fake_github.state.pulls.of(THUNDER, fake_github.state.pulls.statuses[0].sha)
    assert status.state == "failure" and status.description == (
        "Regressed: RMSNorm backward on nvidia-h200: Thunder's kernels 11.4x slower, ratio "
        "1.05x → 11.90x"
    )

    # Merged: Thunder's backward runs unfused, its kernels and the ratio moved: ONE alert,
    # its issue in Thunder (what moved is Thunder's). nvFuser's build is the same at base and
    # head and the hints point at Thunder: Fuser is not told, and the issue says why.
    assert cli.main(_merge(fake_github, argv), env=env) == ExitCode.REGRESSION
    issues = _alert(fake_github)
    (thunder,) = issues[THUNDER]
    assert issues[FUSER] == [] and thunder.state == "open"
    assert (
        f"\n{FUSER} is not told: nvFuser 0.2.36\\+git7e04d26 is the same at base and head and "
        "the fusion hints do not point at it.\n"
    ) in (thunder.body or "")
    assert f"in {THUNDER}#{number}: base" in (thunder.body or "")  # a reference GitHub links
    assert thunder.title == (  # the second guard by what it says, never "and 1 more"
        "RMSNorm backward: Thunder's kernels 11.4x slower, ratio 1.05x → 11.90x in "
        "Lightning-AI/lightning-thunder#1"
    )
    assert (
        "\n### 🔴 nvidia-h200: Thunder's own kernels, 11.4x slower at the geometric mean (18 of "
        "18 points regressed)\n"
    ) in (thunder.body or "")
    assert (
        "\n### 🔴 nvidia-h200: Thunder against nvFuser (kernel-time ratio), 11.3x slower "
        "relative to nvFuser at the geometric mean (18 of 18 points regressed)\n"
    ) in (thunder.body or "")
    (comment,) = fake_github.state.comments_on(THUNDER, number)
    assert f"{FUSER} is not told: nvFuser 0.2.36\\+git7e04d26 is the same" in comment.body
    assert f"[{THUNDER}#{thunder.number} (primary)]" in comment.body
    capsys.readouterr()

    # The same run again: no write reaches GitHub at all.
    before, writes = _snapshot(fake_github, number), len(fake_github.requests())
    writes -= len(fake_github.requests("GET"))
    assert cli.main(argv, env=env) == ExitCode.REGRESSION
    assert "comment unchanged" in capsys.readouterr().out
    assert len(fake_github.requests()) - len(fake_github.requests("GET")) == writes
    assert _snapshot(fake_github, number) == before

    # Thunder back (a re-run measuring fixed code): the comment is updated in place, the
    # alert closes, as completed, where it was filed.
    recovered = _argv(number, BASELINE, BASELINE_AGAIN)
    assert cli.main(recovered, env=env) == ExitCode.OK_NO_REGRESSION
    (updated,) = fake_github.state.comments_on(THUNDER, number)
    assert updated.id == before[2][0][0]
    assert _headline(updated.body) == "### ⚪ RMSNorm backward: No change"
    closed = {
        repo: [(i.state, i.state_reason) for i in found]
        for repo, found in _issues(fake_github).items()
    }
    assert closed == {FUSER: [], THUNDER: [("closed", "completed")]}


STATES = ROOT / "data" / "h200-states" / "results"
STOCK_3, STOCK_4 = "6c840f30", "022fefdd"
SLOW_NVFUSER_5, SLOW_NVFUSER_2, BROKEN = "93486aaf", "3f0f630d", "f888795e"


def _fuser_pr(fake: LocalGitHub, base: str, head: str) -> list[str]:
    number = fake.state.add_pull_request(
        FUSER, "Retune the inner reduction", author=HUMAN_LOGIN, head_ref="retune"
    ).number
    argv = _argv(number, base, head, STATES)
    argv[2] = FUSER
    return argv


@pytest.mark.parametrize("head", [SLOW_NVFUSER_5, SLOW_NVFUSER_2], ids=["+5%", "+2%"])
def test_an_nvfuser_slowdown_is_an_nvfuser_regression_never_an_improvement(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str], head: str
) -> None:
    """The hand-written fusion made slower by a measured injected kernel (Thunder untouched):
    the ratio falls, and the bot says nvFuser's fusion regressed, never an improvement. The
    injection is this suite's own definition of the hand-written fusion (nvFuser's build is
    the same at both sides): nobody upstream owns it, so nothing is filed in either
    repository, the comment says why, and the status still fails; a push back to stock code
    is fine again."""
    argv, env = _fuser_pr(fake_github, STOCK_3, head), _env(fake_github)
    number = int(argv[4])
    assert cli.main(_merge(fake_github, argv), env=env) == ExitCode.REGRESSION
    (comment,) = fake_github.state.comments_on(FUSER, number)
    headline = (
        r"### 🔴 RMSNorm backward: Regressed: nvFuser's hand-written fusion [0-9.]+% slower "
        r"\(the suite itself changed: nothing is filed\)"
    )
    assert re.fullmatch(headline, _headline(comment.body)), _headline(comment.body)
    lines = _guard_lines(comment.body)
    assert re.fullmatch(
        r"- 🔴 \*\*nvFuser's hand-written fusion\*\*: [0-9.]+% slower at the geometric mean "
        r"\(\d of 9 points regressed\)",
        lines[0],
    ), lines[0]
    # The ratio fell only because nvFuser got slower: grey, and said to be no gain.
    assert (
        "- ⚪ **Thunder against nvFuser (kernel-time ratio)**: lower only because nvFuser's "
        "fusion got slower: not a gain"
    ) in lines
    assert "Improved" not in comment.body and "improved" not in comment.body
    assert "🟢" not in comment.body
    assert _alert(fake_github) == {FUSER: [], THUNDER: []}
    assert (
        "**Alert:** nothing is filed in either repository: the suite itself changed \\(a \\+"
        in comment.body
    )
    (status,) = fake_github.state.pulls.statuses
    assert status.state == "failure"
    capsys.readouterr()

    back = _argv(number, STOCK_3, STOCK_4, STATES)
    back[2] = FUSER
    assert cli.main(back, env=env) == ExitCode.OK_NO_REGRESSION
    assert _alert(fake_github) == {FUSER: [], THUNDER: []}


def test_a_broken_head_fails_the_run_and_files_the_error(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """Thunder 0.2.5 at head: its nvFuser executor is None on nvFuser 0.2.36, so every Thunder
    point fails there while it ran at base."""
    argv, env = _pr(fake_github, STOCK_3, BROKEN, STATES), _env(fake_github)
    number = int(argv[4])
    assert cli.main(_merge(fake_github, argv), env=env) == ExitCode.BROKEN
    (comment,) = fake_github.state.comments_on(THUNDER, number)
    assert _headline(comment.body) == (
        "### 💥 RMSNorm backward: Broken: 18 point(s) that ran at base fail at head"
    )
    assert (
        "- 💥 **Every point still runs**: no: 18 point(s) that ran at base fail at head"
    ) in _guard_lines(comment.body)
    # The error once, with the points it hit.
    assert comment.body.count("not a valid Executor") == 1
    assert (
        "is not a valid Executor. Executor list: \\[None\\] | 18: thunder-func, thunder-prims "
        "at 9 sizes |"
    ) in comment.body
    # Thunder's build changed (0.2.6 → 0.2.5) and its points fail: Thunder's issue alone.
    issues = _alert(fake_github)
    (thunder,) = issues[THUNDER]
    assert issues[FUSER] == []
    assert (thunder.body or "").count("not a valid Executor") == 1
    assert "\n### 💥 nvidia-h200: Every point still runs, no: 18 point(s)" in (thunder.body or "")
    assert f"- {THUNDER} (primary): this issue" in (thunder.body or "")
    assert "18 point(s)" in thunder.title
    # A broken head leads with the break, not with an acknowledgement.
    steps = comment.body.split("**What next**")[1].split("\n- ")[1:]
    assert steps[0].startswith("**Broken:**") and steps[1].startswith("**Reproduce**")
    # The same broken head again: one issue still, nothing new.
    capsys.readouterr()
    assert cli.main(argv, env=env) == ExitCode.BROKEN
    assert [len(v) for v in _alert(fake_github).values()] == [0, 1]


@pytest.mark.parametrize(
    ("results", "base", "head"),
    [
        (EIGHT_CALL, BASELINE, BASELINE_AGAIN),
        (STATES, STOCK_3, STOCK_4),
        (STATES, "324c493b", "016e16b1"),
    ],
    ids=["A/A day 1", "A/A day 2", "A/A day 2 again"],
)
def test_two_runs_of_the_same_code_give_a_clean_comment_and_no_issue(
    fake_github: LocalGitHub, results: Path, base: str, head: str
) -> None:
    argv = _pr(fake_github, base, head, results)
    assert cli.main(argv, env=_env(fake_github)) == ExitCode.OK_NO_REGRESSION
    (comment,) = fake_github.state.comments_on(THUNDER, int(argv[4]))
    assert _headline(comment.body) == "### ⚪ RMSNorm backward: No change"
    lines = _guard_lines(comment.body)
    assert len(lines) == 4 and all(x.startswith("- ⚪ **") for x in lines)
    assert "**What next**" not in comment.body  # nothing to do
    assert _issues(fake_github) == {FUSER: [], THUNDER: []}


def test_single_call_runs_say_the_noise_model_does_not_apply(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The shipped model was measured on 8-call samples; single-call runs are not compared with
    it, and the comment says so (their within-run intervals alone call this A/A pair a
    regression at fp32 512x4096, which is why the model exists)."""
    argv = ["report", "--results", str(SINGLE_CALL), "--base", "7decf673", "--head", "44674d6c"]
    cli.main([*argv, "--config", str(ROOT / "perfbot.toml"), "--json", "-"], env={})
    (verdict,) = [m["verdict"] for m in json.loads(capsys.readouterr().out)["machines"]]
    why = "the noise model is for 8 call(s) per sample, these runs have None: not used"
    assert verdict["noise_model"] == why and why in verdict["notes"]


REPEATS = ROOT / "data" / "h200-repeats"


@pytest.mark.parametrize(
    ("call", "base", "head", "code", "guards"),
    [
        ("call-1", "ae560ef0", "223f991a", ExitCode.OK_NO_REGRESSION, set()),  # stock-7 vs 8
        ("call-4", "6033818a", "70e55a95", ExitCode.OK_NO_REGRESSION, set()),  # stock-11 vs 12
        ("call-2", "983be29d", "c57e54a6", ExitCode.REGRESSION, {"nvfuser"}),  # +2% nvFuser
        ("call-3", "240f289b", "8b5a6516", ExitCode.REGRESSION, {"thunder", "ratio"}),  # +2%
    ],
    ids=["A/A stock-7/8", "A/A stock-11/12", "nvFuser +2%", "Thunder +2%"],
)
def test_two_alternated_repeats_a_side(
    fake_github: LocalGitHub, call: str, base: str, head: str, code: int, guards: set[str]
) -> None:
    """The real PR shape: base, head, base, head, each its own process (results/rep-1 and
    rep-2, given as their parent folder), paired by repeat."""
    argv = _pr(fake_github, base, head, REPEATS / call / "results")
    assert cli.main(_merge(fake_github, argv), env=_env(fake_github)) == code
    (comment,) = fake_github.state.comments_on(THUNDER, int(argv[4]))
    assert "2 run(s) of base, 2 of head" in comment.body
    filed = [i.body or "" for found in _alert(fake_github).values() for i in found]
    sections = {
        g
        for g, name in GUARD_NAMES.items()
        if any(f"\n### 🔴 nvidia-h200: {name}, " in body for body in filed)
    }
    # The injected slowdowns stand for a change of their side: Thunder's is Thunder's alone
    # (nvFuser's build is the same), the hand-written fusion's is this suite's own (nothing
    # upstream owns it: nothing is filed).
    owned = guards - {"nvfuser"}
    assert sections == owned and len(filed) == (1 if owned else 0)
    assert "Improved" not in comment.body and "🟢" not in comment.body
    regressed = {
        g for g, name in GUARD_NAMES.items()
        if any(x.startswith(f"- 🔴 **{name}**: ") for x in _guard_lines(comment.body))
    }  # fmt: skip
    assert regressed == guards

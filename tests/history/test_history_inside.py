"""A main-branch alert says what changed inside the fusion between its two commits' captures
(issue 41: a maintainer handed a ratio step first asks what Thunder does differently now).

Real data: data/h200's stock Thunder 0.2.6 run (da17d548) and its unfused-backward run
(9dc51696), each with the captures recorded of that same state (data/h200-captures), put
beside the results as ``<commit>.captures/`` as benchmarks.under_test.builds writes them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from history_github import CONFIG, github_env
from paths import DATA

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.fusion.read import read_side
from bot.github.fake import BOT_LOGIN, LocalGitHub
from bot.history.inside import changed_inside

GOOD, BAD = "da17d548f3e6eff323c8348d60147c060c057143", "9dc516960ffdea53271e079984bda56109317307"
CAPTURES = {GOOD: "stock-0.2.6", BAD: "unfused-backward-0.2.6"}
THUNDER = "Lightning-AI/lightning-thunder"


def _results(tmp: Path, captured: dict[str, str]) -> Path:
    """data/h200's three runs (stock, stock, unfused), with the captures named beside."""
    source = DATA / "h200" / "results" / "nvidia-h200"
    target = tmp / "results" / "nvidia-h200"
    shutil.copytree(source, target)
    for commit, state in captured.items():
        (target / f"{commit}.captures").symlink_to(DATA / "h200-captures" / state)
    return tmp / "results"


def _night(fake: LocalGitHub, tmp: Path, captured: dict[str, str]) -> str:
    order = tmp / "order.txt"
    order.write_text(f"06f650c8\n{GOOD}\n{BAD}\n", encoding="utf-8")
    argv = ["history", "--results", str(_results(tmp, captured)), "--order", str(order)]
    code = cli.main([*argv, "--min-after", "1", *CONFIG], env=github_env(fake))
    assert code == ExitCode.REGRESSION
    (issue,) = [i for i in fake.state.issues(THUNDER) if i.author == BOT_LOGIN]
    return issue.body or ""


def test_the_alert_tells_what_changed_inside_between_its_commits(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    body = _night(fake_github, tmp_path, CAPTURES)
    assert "#### What changed inside the fusion" in body
    inside = body.split("#### What changed inside the fusion", 1)[1]
    # The unfused backward: Thunder's backward trace holds no nvFuser region at the first bad.
    assert "no nvFuser fusion" in inside, inside[:1500]
    assert inside.index("last good") < inside.index("\n- ")


def test_without_both_captures_the_alert_says_nothing_inside(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    body = _night(fake_github, tmp_path, {BAD: CAPTURES[BAD]})
    assert "What changed inside the fusion" not in body


def test_the_same_programs_are_said_to_be_the_same() -> None:
    stock = read_side(DATA / "h200-captures" / "stock-0.2.6")
    said = changed_inside(stock, stock)
    assert len(said) == 3 and all("the same compiled program at base and head" in b for b in said)
    assert changed_inside(stock, {}) == ()

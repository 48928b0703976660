"""The main-branch watch follows the PR mode's ownership and link rule (docs/ALERTS.md,
bot/alert/owners.py), on recorded runs: what differs between a range's two commits (their
provenance records) decides whose news each section is, and the other repository gets the
linked issue only where ``[alerts] link`` says so.

- slow-thunder-2 (the suite's slowdown hook after Thunder's backward: Thunder's side) and
  Thunder 0.2.5's break (Thunder's package) file in Lightning-AI/lightning-thunder alone, and
  the primary issue says why NVIDIA/Fuser is not told (its build is the same at both commits);
- slow-nvfuser-2 (a slowdown injected into the suite's own hand-written fusion: its
  definition, never nvFuser's news) files nothing upstream: no repository, the reason in
  ``history --json``, not one write to GitHub, while it stands and when it is back;
- ``link = "always"`` tells both repositories of the Thunder step (the rule before records);
  ``"never"`` the owner's alone; without records, every configured repository is told.

Every run is a recorded process, as measured (history_data.py); the keys and the words are
spelled out here, never made by the code under test."""

from __future__ import annotations

import functools
import json
from dataclasses import replace
from pathlib import Path

import pytest
from history_data import BROKEN, NVFUSER_2, STOCK, THUNDER_2, folder_args, order_file, real, shipped
from history_github import CONFIG, github_env, link_config, writes

from bot.commands import cli
from bot.config import LinkPolicy
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, LocalGitHub
from bot.history.issues import AlertIssue, alert_json, watch_issues
from bot.history.watch import Watch, analyse

FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"
REPOS = (FUSER, THUNDER)
LABEL = "perf-regression-bot"
THUNDER_STEP = [*STOCK[:6], *THUNDER_2]
THUNDER_BREAK = [*STOCK[:6], *BROKEN]
NVFUSER_STEP = [*STOCK[:6], *NVFUSER_2]
NVFUSER_KEY = "rmsnorm-bwd|nvidia-h200|016e16b1cc86..3f0f630db3be"
#: Why the nvFuser step is nobody's upstream, as the records say it (bot/alert/owners.py).
SUITES_OWN = (
    "the suite itself changed (a +2% slowdown injected at head by the suite's "
    "slowdown hook)"
)
FUSER_UNCHANGED = "nvFuser 0.2.36+git7e04d26 is the same at base and head"


@functools.cache
def watch(*commits: str) -> Watch:
    s, model = shipped()
    return analyse(real(commits), s, model)


def alert_of(commits: list[str], link: LinkPolicy = "implicated") -> AlertIssue:
    (ai,) = watch_issues([watch(*commits)], None, REPOS, LABEL, link)
    return ai


def without_records(w: Watch) -> Watch:
    """``w`` with no provenance record on any run: what changed is unknown."""
    commits = tuple(
        replace(c, runs=tuple(replace(r, provenance=None) for r in c.runs))
        for c in w.history.commits
    )
    return replace(w, history=replace(w.history, commits=commits, every=()))


@pytest.mark.parametrize(
    ("commits", "guards"),
    [(THUNDER_STEP, ["ratio", "thunder"]), (THUNDER_BREAK, ["broken"])],
    ids=["slow-thunder-2", "thunder-0.2.5-break"],
)
def test_thunders_change_files_in_thunder_alone_and_says_why_fuser_is_not_told(
    commits: list[str], guards: list[str]
) -> None:
    ai = alert_of(commits)
    a = ai.alert
    assert [p.guard for p in a.parts] == guards
    assert [p.section.owner for p in a.parts] == ["thunder"] * len(guards)
    assert a.repos == ai.spec.repos == (THUNDER,) and a.owner == THUNDER
    assert a.owner_why == "what moved points at Thunder" and a.upstream_none == ""
    ((repo, told, why),) = [(t.repo, t.told, t.why) for t in a.told]
    assert (repo, told) == (FUSER, False)
    assert why == f"{FUSER_UNCHANGED} and the fusion hints do not point at it"
    escaped = FUSER_UNCHANGED.replace("(", "\\(").replace(")", "\\)").replace("+", "\\+")
    assert f"- {FUSER} is not told: {escaped}" in ai.spec.body  # the primary says why
    data = alert_json(ai)
    assert (data["primary"], data["linked"], data["repos"]) == (THUNDER, [], [THUNDER])
    assert data["told"] == [{"repo": FUSER, "told": False, "why": why}]


def test_a_slowdown_of_the_suites_own_fusion_files_nothing_upstream() -> None:
    """slow-nvfuser-2 moved nvFuser's hand-written fusion, but the nvFuser build is the same at
    both commits: the suite's own definition changed (its slowdown hook). Nobody's news."""
    ai = alert_of(NVFUSER_STEP)
    a = ai.alert
    assert (a.key, a.state) == (NVFUSER_KEY, "regressed")
    assert [(p.guard, p.section.owner) for p in a.parts] == [("nvfuser", None)]
    assert a.repos == ai.spec.repos == () and a.told == () and a.owner == ""
    assert a.upstream_none == a.owner_why == SUITES_OWN
    assert a.everywhere == REPOS  # where an issue of it filed earlier may be closed
    assert "Nothing is filed upstream: the suite itself changed" in ai.spec.body
    data = alert_json(ai)
    assert (data["primary"], data["linked"], data["repos"]) == (None, [], [])
    assert (data["upstream_none"], data["told"]) == (SUITES_OWN, [])
    # "always" tells every repository of an alert that is filed; this one is nobody's
    assert alert_of(NVFUSER_STEP, "always").alert.repos == ()


def test_with_link_always_both_repositories_are_told_and_never_the_owners_alone() -> None:
    always = alert_of(THUNDER_STEP, "always")
    assert always.alert.repos == always.spec.repos == (THUNDER, FUSER)
    assert [(t.repo, t.told, t.why) for t in always.alert.told] == [
        (FUSER, True, '[alerts] link = "always"')
    ]
    assert f"- {FUSER} has the linked issue: " in always.spec.body
    never = alert_of(THUNDER_STEP, "never")
    assert never.alert.repos == (THUNDER,)
    assert [(t.repo, t.told) for t in never.alert.told] == [(FUSER, False)]


def test_without_records_every_configured_repository_is_told() -> None:
    """No provenance on either commit: nothing can be told apart, the rule before records."""
    (ai,) = watch_issues([without_records(watch(*THUNDER_STEP))], None, REPOS, LABEL)
    assert ai.alert.repos == (THUNDER, FUSER)
    (ai,) = watch_issues([without_records(watch(*NVFUSER_STEP))], None, REPOS, LABEL)
    assert ai.alert.repos == (FUSER, THUNDER) and ai.alert.upstream_none == ""


def _history(tmp: Path, commits: list[str], *more: str) -> list[str]:
    return ["history", *folder_args(), "--order", str(order_file(tmp, commits)), *CONFIG, *more]


def _bots(fake: LocalGitHub) -> list[object]:
    return [i for r in REPOS for i in fake.state.issues(r) if i.author == BOT_LOGIN]


def test_the_suites_own_change_touches_no_tracker_and_the_json_says_why(
    fake_github: LocalGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Over the fake GitHub: the confirmed regression is reported (exit 1), the sync writes
    nothing while it stands and nothing when it is back, and ``--json`` shows the alert with no
    repository and the reason."""
    env = github_env(fake_github)
    out = tmp_path / "history.json"
    argv = [*_history(tmp_path, NVFUSER_STEP), "--json", str(out)]
    assert cli.main(argv, env=env) == ExitCode.REGRESSION
    assert "step '" not in capsys.readouterr().err  # no failed step
    assert writes(fake_github) == 0 and _bots(fake_github) == []
    (alert,) = json.loads(out.read_text(encoding="utf-8"))["alerts"]
    assert (alert["key"], alert["state"], alert["primary"], alert["repos"]) == (
        NVFUSER_KEY,
        "regressed",
        None,
        [],
    )
    assert alert["upstream_none"] == SUITES_OWN
    assert [(s["guard"], s["owner"]) for s in alert["sections"]] == [("nvfuser", None)]
    for more in (link_config(tmp_path, "always"), []):  # "always" files it nowhere either
        assert cli.main([*_history(tmp_path, NVFUSER_STEP), *more], env=env) == 1
        assert writes(fake_github) == 0
    assert cli.main([*_history(tmp_path, NVFUSER_STEP), "--dry-run"], env=env) == 1
    dry = capsys.readouterr().out
    assert "Would file nothing upstream (no side's build explains it)" in dry
    assert " (primary)" not in dry
    later = [*NVFUSER_STEP, *STOCK[6:9]]  # back at the stock runs
    assert cli.main(_history(tmp_path, later), env=env) == ExitCode.OK_NO_REGRESSION
    assert writes(fake_github) == 0 and _bots(fake_github) == []


def test_thunders_step_opens_one_issue_in_thunder_and_none_in_fuser(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    env = github_env(fake_github)
    assert cli.main(_history(tmp_path, THUNDER_STEP), env=env) == ExitCode.REGRESSION
    assert fake_github.state.issues(FUSER) == []
    (issue,) = fake_github.state.issues(THUNDER)
    assert f"- {FUSER} is not told: nvFuser 0.2.36\\+git7e04d26 is the same at base and head" in (
        issue.body or ""
    )
    assert "(primary): this issue" in (issue.body or "") and f"- {FUSER}:" not in (issue.body or "")

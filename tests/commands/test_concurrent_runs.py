"""Two `pr` runs on the same PR at the same moment, as two real processes against the fake.

The fake holds both processes' first listings (of the PR's comments and of each repository's
issues) until both have arrived, so both find nothing and both post: the interleaving that
left 2 comments and 2 issues per repository before. What must remain is one comment and one
open issue per repository, cross-linked, and a third run must find nothing to do.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import DATA, REPO_ROOT

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, BOT_TOKEN, HUMAN_LOGIN, LocalGitHub
from bot.tell.comment import MARKER

PRIMARY, SECONDARY = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"  # the fixture's repos
RESULTS = DATA / "h200" / "results"
BASE, HEAD = "06f650c8", "9dc51696"  # stock Thunder vs the unfused backward: a real regression


def _argv(number: int, config: Path) -> list[str]:
    return [
        "pr",
        "--results",
        str(RESULTS),
        "--base",
        BASE,
        "--head",
        HEAD,
        "--repo",
        SECONDARY,
        "--pr",
        str(number),
        "--config",
        str(config),
    ]


def _always(folder: Path) -> Path:
    """The shipped configuration, every configured repository told: this race is about the
    alert's issues in both repositories (the default tells Fuser nothing of a Thunder change
    whose nvFuser build is the same: tests/alert/test_owners.py)."""
    text = (REPO_ROOT / "perfbot.toml").read_text()
    assert 'link = "implicated"' in text
    path = folder / "perfbot.toml"
    model = f'noise_model = "{REPO_ROOT / "noise" / "nvidia-h200.json"}"'
    text = text.replace('noise_model = "noise/nvidia-h200.json"', model)
    path.write_text(text.replace('link = "implicated"', 'link = "always"'))
    return path


def _env(fake: LocalGitHub) -> dict[str, str]:
    return {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake.base_url}


def _writes(fake: LocalGitHub) -> int:
    return sum(len(fake.requests(m)) for m in ("POST", "PATCH", "DELETE"))


def test_two_processes_at_once_leave_one_comment_and_one_issue_per_repo(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pull = fake_github.state.add_pull_request(
        SECONDARY, "Faster rms_norm", author=HUMAN_LOGIN, head_ref="fast"
    )
    fake_github.state.pulls.finish(SECONDARY, pull.number, merged=True, by=HUMAN_LOGIN)
    # Each run lists the PR's comments twice before it posts (what GitHub says of the PR, then
    # the sticky comment's own listing), and each repository's issues twice (the alert's
    # lookup, and once more after filing): one rendezvous per listing keeps the two runs in
    # step at every one of them.
    for _listing in range(2):
        fake_github.rendezvous(
            "GET", rf"/repos/{SECONDARY}/issues/{pull.number}/comments$", parties=2, timeout=60
        )
        for repo in (PRIMARY, SECONDARY):
            fake_github.rendezvous("GET", rf"/repos/{repo}/issues$", parties=2, timeout=60)
    env = {**os.environ, **_env(fake_github), "PYTHONPATH": str(REPO_ROOT)}
    argv = [sys.executable, "-m", "bot", *_argv(pull.number, _always(tmp_path))]
    procs = [
        subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=120)[0] for proc in procs]
    assert [proc.returncode for proc in procs] == [ExitCode.REGRESSION] * 2, outputs

    # Both really raced: each posted a comment and filed the alert's issue in each repository.
    assert len(fake_github.requests("POST", rf"/{SECONDARY}/issues/{pull.number}/comments$")) == 2
    for repo in (PRIMARY, SECONDARY):
        assert len(fake_github.requests("POST", rf"/repos/{repo}/issues$")) == 2

    comments = fake_github.state.comments_on(SECONDARY, pull.number)
    assert [c.author for c in comments] == [BOT_LOGIN] and MARKER in comments[0].body
    marker = f"<!-- fusion-perfbot-key: rmsnorm-bwd|pr|{SECONDARY}#{pull.number} -->"
    survivors = {}
    for repo in (PRIMARY, SECONDARY):
        own = [i for i in fake_github.state.issues(repo) if i.author == BOT_LOGIN]
        keyed = [i for i in own if i.state == "open" and marker in (i.body or "")]
        assert len(keyed) == 1, (repo, [(i.number, i.state) for i in own])
        folded = [i for i in own if i.state == "closed" and i.title == keyed[0].title]
        assert [i.state_reason for i in folded] == ["not_planned"]
        assert keyed[0].number < folded[0].number
        survivors[repo] = keyed[0]
    primary, secondary = survivors[PRIMARY], survivors[SECONDARY]
    assert f"{SECONDARY}#{secondary.number}]" in (primary.body or "")
    assert f"{PRIMARY}#{primary.number}]" in (secondary.body or "")
    assert f"{SECONDARY}#{secondary.number} (primary)" in comments[0].body  # the comment links
    said = "".join(outputs)
    assert "duplicate" in said  # the runs say what they repaired

    # A third run, alone: nothing left to repair, nothing written.
    before = _writes(fake_github)
    third = _argv(pull.number, _always(tmp_path))
    assert cli.main(third, env=_env(fake_github)) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert "comment unchanged" in out and out.count(": unchanged") == 2
    assert _writes(fake_github) == before

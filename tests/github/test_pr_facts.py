"""What the bot reads of a PR (bot/github/pr_facts.py) and the status it sets
(bot/github/status.py), with real PyGithub against the fake: the PR's state, who acknowledged
and how GitHub says they relate to the repository, and the state its own comment kept."""

from __future__ import annotations

import github

from bot.alert.ack import AckCommand
from bot.alert.status import Status
from bot.github.fake import BOT_LOGIN, HUMAN_LOGIN, LocalGitHub
from bot.github.pr_facts import read_pr_facts
from bot.github.status import post_status
from bot.tell.comment import MARKER
from bot.tell.comment_state import CommentState, state_marker

REPO = "NVIDIA/Fuser"  # seeded by the fake_github fixture
SHA = "ab" * 20


def _facts(gh: github.Github, number: int):  # type: ignore[no-untyped-def]
    return read_pr_facts(gh, REPO, number, marker=MARKER, bot_login=BOT_LOGIN,
                         ack_label="perfbot-acknowledged")  # fmt: skip


def test_open_merged_closed_and_the_author(fake_github: LocalGitHub, gh: github.Github) -> None:
    state = fake_github.state
    numbers = [state.add_pull_request(REPO, f"pr {i}", author=HUMAN_LOGIN, head_ref=f"b{i}").number
               for i in range(3)]  # fmt: skip
    state.pulls.finish(REPO, numbers[1], merged=True, by=HUMAN_LOGIN)
    state.pulls.finish(REPO, numbers[2], merged=False, by=HUMAN_LOGIN)
    got = [_facts(gh, n) for n in numbers]
    assert [f.state for f in got] == ["open", "merged", "closed"]
    assert {f.author for f in got} == {HUMAN_LOGIN} and all(f.acks == () for f in got)


def test_acknowledgements_with_what_github_says_of_their_authors(
    fake_github: LocalGitHub, gh: github.Github
) -> None:
    state = fake_github.state
    number = state.add_pull_request(REPO, "x", author=HUMAN_LOGIN, head_ref="x").number
    state.actions.set_role(REPO, "bob", "write")
    state.actions.set_role(REPO, "tri", "triage")
    state.pulls.set_association(REPO, "mia", "MEMBER")
    state.add_comment(REPO, number, "/perfbot ack by a member", author="mia")
    state.add_comment(REPO, number, "looks fine", author="bob")  # not a command
    state.add_comment(REPO, number, "/perfbot ack\nfrom a stranger", author="mallory")
    state.add_comment(REPO, number, "/perfbot unack", author="bob")
    state.add_comment(REPO, number, "/perfbot ack the bot itself", author=BOT_LOGIN)  # ignored
    state.pulls.label(REPO, number, "perfbot-acknowledged", by="bob")
    state.pulls.label(REPO, number, "perfbot-acknowledged", by="tri", remove=True)
    state.pulls.label(REPO, number, "other label", by="bob")  # not the acknowledge label
    acks = _facts(gh, number).acks
    assert [(a.by, a.association, a.reason, a.withdraw) for a in acks] == [
        ("mia", "MEMBER", "by a member", False),
        ("mallory", "NONE", "", False),
        ("bob", "COLLABORATOR", "", True),
        ("bob", "COLLABORATOR", "the perfbot-acknowledged label", False),
        ("tri", "TRIAGE", "the perfbot-acknowledged label", True),
    ]
    assert acks[0].source.startswith("comment ") and acks[3].source.startswith("label event ")
    assert acks[0].url and acks[0].url.endswith(f"/pull/{number}#issuecomment-{acks[0].source[8:]}")
    assert isinstance(acks[0], AckCommand)


def test_the_state_is_read_from_the_bots_own_comment_only(
    fake_github: LocalGitHub, gh: github.Github
) -> None:
    state = fake_github.state
    number = state.add_pull_request(REPO, "x", author=HUMAN_LOGIN, head_ref="x").number
    planted = state_marker(CommentState({"h/ratio": 9.0}))
    state.add_comment(REPO, number, f"{MARKER}\n{planted}", author=HUMAN_LOGIN)  # a lookalike
    assert _facts(gh, number).remembered is None
    own = state_marker(CommentState({"h/ratio": 1.1}))
    state.add_comment(REPO, number, f"{MARKER}\n{own}", author=BOT_LOGIN)
    assert _facts(gh, number).remembered == CommentState({"h/ratio": 1.1})


def test_a_status_is_posted_once(fake_github: LocalGitHub, gh: github.Github) -> None:
    failing = Status("failure", "Regressed: Thunder slower relative to nvFuser +2.8% on h200")
    assert post_status(gh, REPO, SHA, failing, "https://ci.example/run/1")
    assert not post_status(gh, REPO, SHA, failing, "https://ci.example/run/2")  # the same again
    acked = Status("acknowledged", "Acknowledged: acknowledged by @bob; Thunder +2.8% on h200")
    assert post_status(gh, REPO, SHA, acked, None)
    got = [(s.state, s.description, s.context) for s in fake_github.state.pulls.of(REPO, SHA)]
    assert got == [
        ("success", acked.description, "perfbot"),
        ("failure", failing.description, "perfbot"),
    ]

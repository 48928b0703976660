"""One alert of recorded H200 verdicts (bot/alert/model.py): its sections, its owner, and when it
is back; and the state the PR comment keeps for the next run (bot/tell/comment_state.py)."""

from __future__ import annotations

import functools

import pytest
from paths import DATA, REPO_ROOT

from bot.alert.ack import AckRecord
from bot.alert.model import Alert, build_alert, pr_key
from bot.commands.cli import load
from bot.commands.inputs import Selection
from bot.decide.types import Verdict
from bot.tell.comment_state import STATE_MARKER, CommentState, read_state, state_marker

STATES = DATA / "h200-states" / "results"
STOCK, STOCK_LATER = "6c840f30", "022fefdd"
CONFIGURED = ("NVIDIA/Fuser", "Lightning-AI/lightning-thunder")


@functools.cache
def verdict(base: str, head: str) -> Verdict:
    return load(Selection((STATES,), base, head, None, REPO_ROOT / "perfbot.toml"), {}).verdict


def _alert(head: str, pr_repo: str = "someone/else", **more: object) -> Alert:
    v = verdict(STOCK, head)
    return build_alert({v.machine: v}, {}, [], key=pr_key(pr_repo, 3), configured=CONFIGURED,
                       pr_repo=pr_repo, **more)  # type: ignore[arg-type]  # fmt: skip


@pytest.mark.parametrize(
    ("head", "guards", "owner"),
    [
        ("63e9dde7", ["thunder", "ratio"], "Lightning-AI/lightning-thunder"),  # Thunder +2%
        ("8681cae2", ["thunder", "ratio"], "Lightning-AI/lightning-thunder"),  # Thunder +5%
        ("93486aaf", ["nvfuser"], "NVIDIA/Fuser"),  # nvFuser +5%: the ratio fell
        ("f888795e", ["broken"], "Lightning-AI/lightning-thunder"),  # Thunder 0.2.5 broken
    ],
)
def test_the_sections_and_their_owner(head: str, guards: list[str], owner: str) -> None:
    alert = _alert(head)
    assert [s.guard for s in alert.sections] == guards and alert.state == "regressed"
    assert alert.repos[0] == owner and set(alert.repos) == set(CONFIGURED)
    assert alert.owner_why.startswith("what moved points at ")


def test_a_thunder_size_is_its_mean_not_its_worst_point() -> None:
    """slow-thunder-2 moved the small points by 4-5% and the mean by 2.6-2.9% (data/README.md):
    the alert's size is the mean, so a +5% run (its mean about 5%) is clearly worse."""
    two, five = _alert("63e9dde7").sizes, _alert("8681cae2").sizes
    assert 1.02 < two["nvidia-h200/ratio"] < 1.035 and 1.045 < five["nvidia-h200/ratio"] < 1.07


def test_sections_pointing_both_ways_go_to_the_prs_repository() -> None:
    alert = _alert("63e9dde7", pr_repo="NVIDIA/Fuser")
    assert alert.repos[0] == "Lightning-AI/lightning-thunder"  # one way: its owner, not the PR's
    v = verdict(STOCK, "63e9dde7")
    mixed = build_alert(
        {v.machine: v, "other": verdict(STOCK, "93486aaf")}, {}, [],
        key=pr_key("NVIDIA/Fuser", 3), configured=CONFIGURED, pr_repo="NVIDIA/Fuser",
    )  # fmt: skip
    assert mixed.repos[0] == "NVIDIA/Fuser" and "the PR's repository" in mixed.owner_why
    elsewhere = build_alert(
        {v.machine: v, "other": verdict(STOCK, "93486aaf")}, {}, [],
        key=pr_key("a/b", 3), configured=CONFIGURED, pr_repo="a/b",
    )  # fmt: skip
    assert elsewhere.repos == CONFIGURED  # not one of them: the configured order


def test_back_when_what_it_had_is_back() -> None:
    same = _alert(STOCK_LATER)
    assert not same.sections and same.state == "recovered"
    assert _alert(STOCK_LATER, previous={"nvidia-h200/ratio": 1.03}).state == "recovered"
    assert _alert(STOCK_LATER, previous={"other/ratio": 1.03}).state == "hold"  # not judged now
    v = verdict(STOCK, STOCK_LATER)
    unjudged = build_alert({v.machine: v}, {}, ["other"], key=pr_key("a/b", 3),
                           configured=CONFIGURED, pr_repo="a/b")  # fmt: skip
    assert unjudged.state == "hold"  # without what it had, every machine must be judged


def test_the_comment_state_round_trips_and_refuses_what_is_not_its_own() -> None:
    state = CommentState(
        {"nvidia-h200/ratio": 1.0263},
        AckRecord("comment 5", "bob", 'a "quoted" -- reason >', {"nvidia-h200/ratio": 1.02}),
    )
    marker = state_marker(state)
    assert "--" not in marker[4:-3] and ">" not in marker[4:-3]  # cannot end its HTML comment
    assert read_state(f"text\n{marker}\n") == state  # its place: the comment's last line
    assert read_state(f"text\n{marker}\nmore") is None  # elsewhere it is text, not the bot's
    assert read_state("no marker") is None
    assert read_state(STATE_MARKER.format("%7Bnot%20json")) is None
    assert read_state(STATE_MARKER.format("%7B%22schema%22%3A%22other%2F1%22%7D")) is None
    assert read_state(STATE_MARKER.format("x" * 9000)) is None

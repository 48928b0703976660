"""The alert's pure rules (bot/alert/): clearly worse, acknowledgements, the issues' plan, the
status. Every expected value is written out here, not made by the code under test."""

from __future__ import annotations

import pytest

from bot.alert.ack import AckCommand, AckRecord, decide_ack, parse_command
from bot.alert.model import Alert, Section, change_words, clearly_worse, moved_words
from bot.alert.plan import plan_issues, worse_note
from bot.alert.status import MAX_DESCRIPTION, commit_status

KEY = "rmsnorm-bwd|pr|Lightning-AI/lightning-thunder#7"
REPOS = ("Lightning-AI/lightning-thunder", "NVIDIA/Fuser")
PR = "Lightning-AI/lightning-thunder#7"


def _alert(*sections: tuple[str, float], state: str = "regressed") -> Alert:
    made = tuple(
        Section(name.split("/")[0], name.split("/")[1], "regressed", size, "thunder", "words")  # type: ignore[arg-type]
        for name, size in sections
    )
    return Alert(KEY, state, made, REPOS, "what moved points at Thunder", ("h200",))  # type: ignore[arg-type]


# -- clearly worse ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("then", "now", "worse"),
    [
        ({"h200/ratio": 1.10}, {"h200/ratio": 1.15}, []),  # exactly 1.5x the excess: not more
        ({"h200/ratio": 1.10}, {"h200/ratio": 1.1501}, [("h200/ratio", 1.10, 1.1501)]),
        ({"h200/ratio": 1.10}, {"h200/ratio": 1.05}, []),  # better
        ({"h200/ratio": 1.10}, {"h200/ratio": 1.10, "h200/nvfuser": 1.03},
         [("h200/nvfuser", None, 1.03)]),  # a section it did not have
        ({"h200/broken": 4.0}, {"h200/broken": 6.0}, []),  # 1.5x the points: not more
        ({"h200/broken": 4.0}, {"h200/broken": 7.0}, [("h200/broken", 4.0, 7.0)]),
        ({}, {}, []),
    ],
)  # fmt: skip
def test_clearly_worse_is_more_than_the_factor_of_the_excess(
    then: dict[str, float], now: dict[str, float], worse: list[object]
) -> None:
    assert clearly_worse(then, now, 1.5) == worse


def test_sizes_in_words() -> None:
    assert change_words("h200/ratio", 1.103) == "+10.3%"
    assert change_words("h200/thunder", 25.0) == "25.0x slower"
    assert change_words("h200/thunder", 1.999) == "+99.9%"
    assert change_words("h200/broken", 18.0) == "18 point(s)"


def test_what_moved_in_one_phrase_says_slower_once() -> None:
    assert moved_words("thunder", 11.4) == "Thunder's kernels 11.4x slower"
    assert moved_words("ratio", 1.021) == "Thunder 2.1% slower relative to nvFuser"
    assert moved_words("nvfuser", 1.999) == "nvFuser's hand-written fusion 99.9% slower"
    assert moved_words("nvfuser", 2.0) == "nvFuser's hand-written fusion 2.0x slower"
    assert moved_words("broken", 3.0) == "3 point(s) that ran at base fail at head"


# -- acknowledgements ---------------------------------------------------------------------------


def test_the_command_is_the_first_line() -> None:
    assert parse_command("/perfbot ack intended: a 2% trade") == (False, "intended: a 2% trade")
    assert parse_command("  /perfbot acknowledge\nmore text") == (False, "")
    assert parse_command("/PERFBOT UNACK") == (True, "")
    assert parse_command("please /perfbot ack") is None
    assert parse_command("/perfbot acked") is None
    assert parse_command("") is None


def _cmd(n: int, by: str, association: str, withdraw: bool = False) -> AckCommand:
    return AckCommand(f"comment {n}", by, association, f"reason {n}", withdraw)


def _decide(
    commands: list[AckCommand],
    alert: Alert,
    remembered: AckRecord | None = None,
    *,
    allow_author: bool = False,
    shown: dict[str, float] | None = None,
):  # type: ignore[no-untyped-def]
    return decide_ack(commands, remembered, alert, shown=shown, pr_author="alice",
                      allow_author=allow_author, factor=1.5)  # fmt: skip


@pytest.mark.parametrize("association", ["OWNER", "MEMBER", "COLLABORATOR"])
def test_a_maintainer_acknowledges(association: str) -> None:
    alert = _alert(("h200/ratio", 1.10))
    got = _decide([_cmd(1, "bob", association)], alert)
    assert got.holds and got.words == 'acknowledged by @bob: "reason 1"' and got.refused == ()
    assert got.record == AckRecord("comment 1", "bob", "reason 1", {"h200/ratio": 1.10})


@pytest.mark.parametrize("association", ["CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "NONE", ""])
def test_anyone_else_does_not(association: str) -> None:
    got = _decide([_cmd(1, "mallory", association)], _alert(("h200/ratio", 1.10)))
    assert not got.holds and got.record is None
    assert got.refused == (
        f"@mallory ({association.lower() or 'no association'}): only an owner, member or "
        "collaborator can acknowledge",
    )


def test_the_pr_author_does_not_unless_allowed() -> None:
    alert = _alert(("h200/ratio", 1.10))
    refused = _decide([_cmd(1, "Alice", "COLLABORATOR")], alert)
    assert not refused.holds and "is the PR's author" in refused.refused[0]
    assert _decide([_cmd(1, "alice", "COLLABORATOR")], alert, allow_author=True).holds


def test_the_newest_accepted_one_decides_and_unack_withdraws() -> None:
    alert = _alert(("h200/ratio", 1.10))
    later = [_cmd(1, "bob", "MEMBER"), _cmd(2, "carol", "OWNER")]
    assert _decide(later, alert).record.source == "comment 2"  # type: ignore[union-attr]
    withdrawn = [_cmd(1, "bob", "MEMBER"), _cmd(2, "bob", "MEMBER", withdraw=True)]
    assert _decide(withdrawn, alert).record is None and not _decide(withdrawn, alert).holds
    ignored = [_cmd(1, "bob", "MEMBER"), _cmd(2, "mallory", "NONE", withdraw=True)]
    assert _decide(ignored, alert).holds  # a withdrawal that does not count changes nothing


def test_it_covers_what_was_shown_and_lapses_for_good_when_clearly_worse() -> None:
    shown = {"h200/ratio": 1.10}
    first = _decide([_cmd(1, "bob", "MEMBER")], _alert(("h200/ratio", 1.12)), shown=shown)
    assert first.holds and first.record is not None and first.record.sizes == shown
    still = _decide([_cmd(1, "bob", "MEMBER")], _alert(("h200/ratio", 1.14)), first.record)
    assert still.holds
    worse = _decide([_cmd(1, "bob", "MEMBER")], _alert(("h200/ratio", 1.16)), first.record)
    assert not worse.holds and worse.record is not None and worse.record.lapsed
    assert worse.words == (
        "the acknowledgement by @bob no longer holds: h200/ratio +10.0% then, +16.0% now "
        "(clearly worse: more than 1.5x the acknowledged excess)"
    )
    back = _decide([_cmd(1, "bob", "MEMBER")], _alert(("h200/ratio", 1.10)), worse.record)
    assert not back.holds and back.words == "the acknowledgement by @bob has lapsed"
    again = _decide([_cmd(1, "bob", "MEMBER"), _cmd(2, "bob", "MEMBER")],
                    _alert(("h200/ratio", 1.16)), worse.record)  # fmt: skip
    assert again.holds  # a new acknowledgement covers the new numbers


def test_a_new_section_is_not_covered() -> None:
    record = AckRecord("comment 1", "bob", "", {"h200/ratio": 1.10})
    got = _decide([_cmd(1, "bob", "MEMBER")], _alert(("h200/ratio", 1.10), ("h200/nvfuser", 1.03)),
                  record)  # fmt: skip
    assert not got.holds and "h200/nvfuser is new" in got.words


# -- the issues' plan ---------------------------------------------------------------------------


def _no_ack():  # type: ignore[no-untyped-def]
    return _decide([], _alert(("h200/ratio", 1.10)))


@pytest.mark.parametrize(
    ("state", "pr_state", "open_on", "action"),
    [
        ("regressed", "open", "merge", "update"),
        ("regressed", "merged", "merge", "file"),
        ("regressed", "open", "push", "file"),
        ("regressed", "closed", "push", "abandon"),
        ("recovered", "closed", "merge", "abandon"),
        ("recovered", "open", "merge", "recover"),
        ("recovered", "merged", "merge", "recover"),
        ("hold", "open", "push", "hold"),
        ("hold", "merged", "merge", "hold"),
    ],
)
def test_what_the_issues_do(state: str, pr_state: str, open_on: str, action: str) -> None:
    alert = (
        _alert(("h200/ratio", 1.10), state=state) if state == "regressed" else _alert(state=state)
    )
    plan = plan_issues(alert, pr_state, open_on, _no_ack(), PR, "a" * 40)  # type: ignore[arg-type]
    assert plan.action == action
    assert bool(plan.note) == (action in ("recover", "abandon", "acknowledge"))


def test_an_acknowledgement_closes_but_a_closed_pr_comes_first() -> None:
    alert = _alert(("h200/ratio", 1.10))
    ack = _decide([_cmd(1, "bob", "MEMBER")], alert)
    plan = plan_issues(alert, "merged", "merge", ack, PR, "a" * 40)
    assert plan.action == "acknowledge"
    assert plan.note.startswith(f'Acknowledged by @bob: "reason 1" on {PR}. Closed as not planned')
    assert plan_issues(alert, "closed", "merge", ack, PR, "a" * 40).action == "abandon"


def test_the_worse_note_says_a_closed_issue_stays_closed() -> None:
    worse = [("h200/ratio", 1.10, 1.30)]
    assert worse_note(worse, 1.5, PR, closed=False) == (
        f"Clearly worse on {PR} (more than 1.5x the excess this issue last showed): "
        "h200/ratio: +10.0% → +30.0%."
    )
    assert worse_note(worse, 1.5, PR, closed=True).endswith(
        "The bot leaves this issue closed; reopen it if it matters."
    )


# -- the status ---------------------------------------------------------------------------------


def test_the_four_kinds_of_status() -> None:
    regressed = _alert(("h200/ratio", 1.10), ("h200/thunder", 1.12))
    failure = commit_status(regressed, _no_ack(), [])
    assert (failure.kind, failure.state) == ("failure", "failure")
    # The fusion and machine first; the second guard by what it says, never "+1 more".
    assert failure.description == (
        "Regressed: RMSNorm backward on h200: Thunder's kernels 12.0% slower, ratio +10.0%"
    )
    acked = commit_status(regressed, _decide([_cmd(1, "bob", "MEMBER")], regressed), [])
    assert (acked.kind, acked.state) == ("acknowledged", "success")
    assert acked.description.startswith('Acknowledged: acknowledged by @bob: "reason 1"; ')
    neutral = commit_status(_alert(state="hold"), _no_ack(), ["h100 uncalibrated (no noise model)"])
    assert (neutral.kind, neutral.state) == ("neutral", "success")
    assert neutral.description == "Neutral: h100 uncalibrated (no noise model)"
    fine = commit_status(_alert(state="recovered"), _no_ack(), [])
    assert (fine.kind, fine.state) == ("success", "success")
    broken = commit_status(_alert(("h200/broken", 18.0), ("h200/ratio", 2.5)), _no_ack(), [])
    assert broken.description == (
        "Broken: RMSNorm backward on h200: 18 point(s) that ran at base fail at head, ratio 2.5x "
        "slower"
    )
    two = _alert(("h200:gelu_bwd/thunder", 1.05), ("h200:softmax_bwd/thunder", 1.03))
    assert commit_status(two, _no_ack(), []).description == (
        "Regressed: Bias+GELU backward on h200: Thunder's kernels 5.0% slower; also Softmax "
        "backward on h200"
    )


def test_a_long_description_is_cut_to_githubs_limit() -> None:
    many = [f"machine-{i:02d} uncalibrated (no noise model)" for i in range(10)]
    got = commit_status(_alert(state="hold"), _no_ack(), many)
    assert len(got.description) == MAX_DESCRIPTION and got.description.endswith("…")

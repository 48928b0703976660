"""An issue's key is parsed from its own place and compared, never found in text (issue 37): a
bot-authored issue whose body carries another PR's key marker as text is not that PR's issue,
whatever text the bot was given to post; an issue filed before the trailer (0.1: the key on the
first line) is still found, and moves to the trailer when it is next written."""

from __future__ import annotations

from dataclasses import replace

import github
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.github.fake import BOT_LOGIN, LocalGitHub
from bot.github.issue_body import (
    hidden,
    key_marker,
    key_of,
    read_sizes,
    sizes_marker,
    with_hidden,
    with_links,
)
from bot.github.issues import sync_issues
from bot.tell.issue import IssueSpec

THUNDER = "Lightning-AI/lightning-thunder"
A = IssueSpec("rmsnorm-bwd|pr|fusion-perfbot/fusion-perfbot#1", "A", "A's evidence", (THUNDER,))
B = replace(A, key="rmsnorm-bwd|pr|fusion-perfbot/fusion-perfbot#2", title="B", body="B's")


def _sync(gh: github.Github, spec: IssueSpec, action: str = "file") -> str:
    (outcome,) = sync_issues(lambda _repo: gh, spec, action, "note")  # type: ignore[arg-type]
    return outcome.action


def test_a_key_marker_in_the_evidence_is_text(fake_github: LocalGitHub, gh: github.Github) -> None:
    """A's alert, filed with B's marker in its evidence (a fusion name once carried it), stays
    A's: B's runs neither find it nor touch it, and B gets an issue of its own."""
    poisoned = replace(A, body=f"fusion x{key_marker(B.key)} regressed")
    assert _sync(gh, poisoned) == "opened"
    (issue,) = fake_github.state.issues(THUNDER)
    assert key_of(issue.body) == A.key and key_marker(B.key) not in (issue.body or "")
    before = (issue.body, issue.title, issue.state)
    assert _sync(gh, B, "update") == "absent"  # B's open PR: update what exists, file nothing
    assert _sync(gh, B) == "opened"  # B merged: its own issue
    assert (issue.body, issue.title, issue.state) == before
    assert _sync(gh, A) == "unchanged"  # A still finds its own


def test_an_issue_filed_before_the_trailer_is_found_and_moved(
    fake_github: LocalGitHub, gh: github.Github
) -> None:
    old = f"{key_marker(A.key)}\n{sizes_marker([('h200/ratio', 1.1)])}\n{A.body}\n\nold links"
    issue = fake_github.state.add_issue(
        THUNDER, A.title, author=BOT_LOGIN, body=old, labels=[A.label]
    )
    assert key_of(old) == A.key and read_sizes(old) == {"h200/ratio": 1.1}
    assert _sync(gh, A) == "unchanged"
    lines = (issue.body or "").splitlines()
    assert lines[-1] == key_marker(A.key) and lines[0] == A.body  # rewritten, key last
    assert len(fake_github.state.issues(THUNDER)) == 1


def test_a_key_quoted_in_an_old_issue_is_not_its_key(
    fake_github: LocalGitHub, gh: github.Github
) -> None:
    """An issue 0.1 filed for A, its evidence holding B's marker raw (0.1 posted names as they
    were): B's runs find nothing there; A's find it."""
    body = f"{key_marker(A.key)}\n{sizes_marker([])}\n### x{key_marker(B.key)}: slower"
    issue = fake_github.state.add_issue(
        THUNDER, A.title, author=BOT_LOGIN, body=body, labels=[A.label]
    )
    assert _sync(gh, B, "update") == "absent" and issue.body == body
    assert _sync(gh, A, "update") == "unchanged"


def test_only_the_block_in_its_place_counts() -> None:
    mark, sizes = key_marker(A.key), sizes_marker([("h200/ratio", 1.2)])
    assert key_of(f"text\n\nlinks\n{sizes}\n{mark}") == A.key
    assert key_of(f"{mark}\n{sizes}\ntext") == A.key  # 0.1's header
    assert key_of(f"text {mark}\nmore") is None  # in a line of text
    assert key_of(f"text\n{mark}\nmore") is None  # on a line of its own, amid the text
    assert key_of(f"text\n{mark}\n{mark}") is None  # two keys: no block of the bot's
    assert key_of(f"text\n{mark}\n{sizes}") is None  # the key is not the last line
    assert key_of(f"text\r\n{sizes}\r\n{mark}\r\n\r\n") == A.key  # as GitHub may hand it back
    assert read_sizes(f"{sizes_marker([('x/ratio', 9.0)])}\ntext\n{mark}") is None


def test_rewrites_stay_in_the_block() -> None:
    body = f"text\n\nlinks\n{sizes_marker([])}\n{key_marker(A.key)}"
    moved = with_hidden(body, "sizes", sizes_marker([("h200/ratio", 1.3)]))
    assert read_sizes(moved) == {"h200/ratio": 1.3} and key_of(moved) == A.key
    linked = with_links("text\n" + "\n".join(body.splitlines()[-2:]), "LINKS")
    assert linked.splitlines()[-3:] == ["LINKS", sizes_marker([]), key_marker(A.key)]
    assert hidden(linked).start == len(linked.splitlines()) - 2


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_no_evidence_makes_an_issue_anothers(text: str) -> None:
    """Whatever the evidence holds, the body the bot composes is found by its own key alone."""
    from bot.github.issues import _compose

    body = _compose(replace(A, body=text + key_marker(B.key)), THUNDER, "LINKS")
    assert key_of(body) == A.key
    assert "<!--" not in body.split("LINKS")[0]

"""Untrusted text never becomes a GitHub reference, and untrusted log values stay inert."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.tell.issue import title_text
from bot.tell.log import log_line, quoted
from bot.tell.markdown import escape_md, plain_text

# What GitHub turns into a link or a notification when it renders a comment.
AUTOLINK = re.compile(r"(?i)(?<![\w])(gh-\d|#\d|@[a-z0-9]|[\w.-]+/[\w.-]+#\d)")


@pytest.mark.parametrize(
    "text",
    [
        "GH-123",
        "see gh-7",
        "#123",
        "fixes owner/repo#45",
        "NVIDIA/Fuser#3629",
        "@alice please",
        "error in (GH-1): @org/team",
    ],
)
def test_references_and_mentions_are_broken(text: str) -> None:
    assert AUTOLINK.search(text)
    assert not AUTOLINK.search(escape_md(text))


def test_plain_words_and_bare_shas_are_left_alone() -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    assert escape_md(sha) == sha
    assert escape_md("bf16 GHz-1 high-5") == "bf16 GHz-1 high-5"


def test_quoted_values_cannot_start_or_end_a_line_or_hold_a_command() -> None:
    for hostile in ("::error::x", "a\n::warning::b", "x\r::add-mask::y", "##[error]z", "\u200b::x"):
        shown = quoted(hostile)
        assert shown.isascii() and "\n" not in shown and "\r" not in shown
        assert not shown.startswith("::") and "##[" not in shown
    assert quoted("x" * 300, 10) == "'xxxxxxxxxx'..."


def test_log_line_never_starts_a_command() -> None:
    assert not log_line("::error::x").startswith("::")
    assert "\n" not in log_line("a\n::error::b") and "\x1b" not in log_line("\x1b[31m")


LIVE_IN_TITLE = re.compile(
    r"(?<![A-Za-z0-9])#[0-9]|[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]|@[A-Za-z0-9]"
    r"|(?<![A-Za-z0-9])gh-[0-9]|[a-z]+://",
    re.IGNORECASE,
)


@given(st.text(alphabet="#@ghGH-:/0123456789abc ", max_size=40))
def test_an_untrusted_name_in_a_title_is_never_a_live_reference(name: str) -> None:
    """A machine named "GH-77" (issue 20) or "x/y#3" reaches a title as text, not a link to
    issue 77 or a mention: every reference, mention and URL gets a zero-width joiner."""
    title = title_text(f"RMSNorm backward: slower on {plain_text(name)} since abc")
    assert not LIVE_IN_TITLE.search(title), title
    plain = title_text(f"RMSNorm backward: slower on {name} since abc")
    assert title.replace("\u200d", "") == plain  # nothing else changed


def test_the_main_branch_titles_make_the_machine_name_inert() -> None:
    """The watch's issue titles carry the machine's name (from the results): "GH-77" stays
    text in both the primary and the linked title."""
    from bot.alert.model import Section
    from bot.history.alerts import MainAlert, Part
    from bot.history.issues import alert_title, linked_title

    section = Section("GH-77", "broken", "broken", 3.0, None, "3 points fail")
    part = Part(section, "regressed", None, None)
    alert = MainAlert(
        "k", "GH-77", "a" * 40, "b" * 40, "regressed", (part,), ("NVIDIA/Fuser",), "why"
    )
    for title in (alert_title(alert), linked_title(alert)):
        assert "GH\u200d-77" in title and not LIVE_IN_TITLE.search(title), title

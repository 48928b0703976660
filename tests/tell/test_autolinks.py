"""Untrusted text never becomes a GitHub reference, and untrusted log values stay inert."""

from __future__ import annotations

import re

import pytest

from bot.tell.log import log_line, quoted
from bot.tell.markdown import escape_md

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

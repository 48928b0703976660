"""The comment's alert part (bot/tell/alert_comment.py): what it adds, measured on comments."""

from __future__ import annotations

import pytest

from bot.tell.alert_comment import added_chars, with_alert
from bot.tell.comment_state import CommentState

COMMENTS = [
    "",
    "<!-- m -->\n### RMSNorm backward\n\n⚪ **No change**: fine\n\n| a | b |\n|---|---|\nmore",
    "no headline at all\nsecond line\nthird\nfourth",
]


@pytest.mark.parametrize("comment", COMMENTS)
def test_the_room_reserved_is_what_the_alert_part_adds(comment: str) -> None:
    lines = ["- **Status** `perfbot/rmsnorm-bwd`: Regressed", "- **One alert** for this PR"]
    state = CommentState({"h200/ratio": 1.1}, None)
    added = len(with_alert(comment, lines, "- rule one\n- rule two", state)) - len(comment)
    assert added_chars(lines, "- rule one\n- rule two", state) == added

"""Every name reaches GitHub through one rule a medium (bot/tell/markdown.py), even one that
never passed bot/results/names.py: a markdown body, HTML the bot writes, a plain title or
status, and a command line a reader is told to run (issue 37's sinks, each shown a hostile
name here directly, as if the read-time check were gone)."""

from __future__ import annotations

import re

import pytest
from data_helpers import HOSTILE_FUSIONS

from bot.alert.ack import AckDecision, decide_ack
from bot.alert.model import Alert, Section
from bot.alert.status import commit_status
from bot.results.names import FUSIONS
from bot.tell.alert_issue import alert_title, linked_title
from bot.tell.context import Context
from bot.tell.markdown import COMMAND_TOKEN, command, escape_html, plain_text
from bot.tell.next_steps import measure_command

#: What GitHub makes live in a title or a body: a reference, a mention, a URL.
LIVE = re.compile(
    r"(?<![A-Za-z0-9])#[0-9]|[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]|@[A-Za-z0-9]|[a-z]+://",
    re.IGNORECASE,
)
BASE, HEAD = "6a438ce967f8", "e0cdef8e0a8c"


def _printable(text: str) -> bool:
    """Printable but for the zero-width characters that break references and markers."""
    return text.replace("\u200d", "").replace("\u200b", "").isprintable()


def _alert(fusion: str) -> Alert:
    section = Section(f"nvidia-h200:{fusion}", "thunder", "regressed", 1.053, "thunder", "w")
    return Alert("k", "regressed", (section,), ("Lightning-AI/lightning-thunder",), "why", ())


#: The hostile names a shell or markdown would read (the others, "/etc" or "GELU_BWD", are plain
#: words in a command: what refuses them is the catalog, bot/results/names.py).
ACTIVE = [n for n in HOSTILE_FUSIONS if not COMMAND_TOKEN.fullmatch(n)]


def test_most_hostile_names_are_active_text() -> None:
    assert len(ACTIVE) >= 4


@pytest.mark.parametrize("name", ACTIVE, ids=ascii)
def test_a_command_is_never_built_of_a_name_it_does_not_allow(name: str) -> None:
    with pytest.raises(ValueError, match="may not stand in a command"):
        measure_command(BASE, HEAD, (None, None), (name,))


def test_the_catalog_makes_a_plain_command() -> None:
    line = measure_command(BASE, HEAD, (None, None), FUSIONS[:2])
    assert line == (
        f"in this suite's checkout, `git checkout {BASE} && bash benchmarks/run_gpu.sh "
        "--size-set pr --fusions rmsnorm_bwd,rmsnorm_fwd --results results`, the same at "
        f"`{HEAD}`"
    )


def test_a_token_the_shell_reads_is_quoted_and_a_span_cannot_close() -> None:
    assert command(["pip", "install", "nvfuser==1!2.0"]) == "`pip install 'nvfuser==1!2.0'`"
    for bad in ("a b", "x`y", "$(id)", "a;b", "a|b", "a&b", "'", "", "\x00", "a>b"):
        with pytest.raises(ValueError):
            command(["echo", bad])


@pytest.mark.parametrize("name", HOSTILE_FUSIONS, ids=ascii)
def test_titles_statuses_and_summaries_hold_no_live_reference(name: str) -> None:
    ctx = Context(repo="fusion-perfbot/fusion-perfbot", pr=2)
    alert = _alert(name)
    for title in (alert_title(alert, ctx), linked_title(alert, ctx)):
        named = title.split(" in fusion-perfbot/")[0]  # the bot's own reference to the PR stays
        assert not LIVE.search(named) and "<!--" not in title and _printable(title), title
    ack = decide_ack((), None, alert, shown=None, pr_author="", allow_author=False, factor=1.5)
    status = commit_status(alert, ack, ()).description
    assert not LIVE.search(status) and "<!--" not in status and _printable(status), status
    for text in (plain_text(name), escape_html(name)):
        assert not LIVE.search(text) and "<!--" not in text and _printable(text), text
    assert "<" not in escape_html(name)


def test_a_status_holds_no_control_character_whatever_reached_it() -> None:
    """A maintainer's acknowledgement is text from a comment: a NUL or an escape in it never
    reaches GitHub's status description."""
    said = AckDecision(None, True, "acknowledged by 'x\x00y' (why: \x1b[31mintended\r\n)")
    status = commit_status(_alert("gelu_bwd"), said, ()).description
    assert _printable(status) and status.startswith("Acknowledged: acknowledged by 'x y'"), status

"""Markdown building blocks (pure): untrusted text made inert, safe links, and bodies that
fit GitHub's limit.

Everything that came from outside the bot (names from the results, provenance strings, PR
titles, branch names, error texts) is rendered by one rule a medium, all of them here: markdown
through :func:`escape_md`, HTML the bot writes through :func:`escape_html`, plain text (issue
titles, status descriptions) through :func:`plain_text`, and a command line through
:func:`command`, which takes allowlisted tokens only. URLs are linked only when plainly safe.
GitHub caps a body at 65,536 characters: :func:`fit` cuts the detail sections first and
says so, rather than letting GitHub refuse the whole comment.
"""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from bot.decide.stats import Interval

#: Under GitHub's 65,536 with room for what bot/github/sticky.py and bot/github/issues.py add.
MAX_CHARS = 60_000
_ESCAPE = {c: "\\" + c for c in "\\`*_[](){}|!~+="}
_ESCAPE.update({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
ZWJ = "\u200d"
#: GitHub links ``GH-123`` (any case) to issue 123 of the repository, like ``#123``.
_GH_REF = re.compile(r"(?<![A-Za-z0-9])(gh)-(?=[0-9])", re.IGNORECASE)
#: An argument of a command shown to run: plain words, paths, options, commits and version
#: specs (a version epoch's ``!`` is quoted); never a quote, a backtick, a space, ``$``,
#: ``;``, ``|``, ``&`` or a redirection.
COMMAND_TOKEN = re.compile(r"[A-Za-z0-9_@%+=:,./!-]{1,200}")
_URL_SAFE = re.compile(r"https?://[A-Za-z0-9.:/_~%+-]+(?:#[A-Za-z0-9._~%'&=?+-]*)?")


def escape_md(text: object, limit: int = 200) -> str:
    """Untrusted text as inert markdown: no markup, HTML, mentions, references or autolinks.

    GitHub resolves @mentions, #references (``#1``, ``owner/repo#1``, ``GH-1``) and bare URLs
    on the rendered text, after markdown escapes are gone, so those get a zero-width joiner that
    breaks the pattern instead. Bare commit hashes are left to link: they name no person and
    cannot point outside the repository.
    """
    return inert_references("".join(_ESCAPE.get(c, c) for c in printable(text, limit)))


def escape_html(text: object, limit: int = 200) -> str:
    """Untrusted text inside HTML the bot writes (a ``<summary>``, where GitHub shows markdown
    escapes as they are): entities for markup, and references broken as :func:`escape_md`
    breaks them."""
    return inert_references(html.escape(printable(text, limit)))


def plain_text(text: object, limit: int = 200) -> str:
    """Untrusted text in plain text GitHub shows (an issue title, a status description): no
    control character, every reference, mention and URL broken (titles resolve them too)."""
    return no_markers(inert_references(printable(text, limit)))


def no_markers(text: str) -> str:
    """`text` with every ``<!--`` broken by a zero-width space: the bot finds its comment, its
    issues and their state by HTML-comment markers (bot/github/issue_body.py), and no text from
    outside may carry one, in a code fence or a title alike. Escaped text needs none (its
    ``<`` is an entity)."""
    return text.replace("<!--", "<\u200b!--")


def printable(text: object, limit: int = 200) -> str:
    """`text` on one line of printable characters (NUL, newlines, controls as spaces), cut."""
    raw = "".join(c if c.isprintable() else " " for c in str(text))
    return raw if len(raw) <= limit else raw[: limit - 1] + "…"


def command(*commands: Sequence[str]) -> str:
    """Command lines a reader is told to copy and run, as one code span: each argument one of
    :data:`COMMAND_TOKEN` (the bot's own words, commits, and names that passed
    bot/results/names.py), shell-quoted; the commands joined by ``&&``. Anything else is a
    ValueError: a command is never built from text that could close the span or run more."""
    lines = []
    for argv in commands:
        for token in argv:
            if not COMMAND_TOKEN.fullmatch(token):
                raise ValueError(f"{ascii(token)[:80]} may not stand in a command shown to run")
        lines.append(" ".join(shlex.quote(token) for token in argv))
    return f"`{' && '.join(lines)}`"


def inert_references(text: str) -> str:
    """``text`` with a zero-width joiner in every @mention, #reference (``#1``,
    ``owner/repo#1``), ``GH-1`` and bare URL, which GitHub resolves on rendered text and in
    issue titles alike; nothing else changes (titles are plain text: no markdown escapes)."""
    out = _GH_REF.sub(f"\\1{ZWJ}-", text.replace("@", f"@{ZWJ}").replace("#", f"#{ZWJ}"))
    return out.replace("://", f":{ZWJ}//").replace("www.", f"www{ZWJ}.")


def link(label: str, url: str | None) -> str:
    """A markdown link if the URL is plainly safe, else the (escaped) label alone."""
    if url is None or not _URL_SAFE.fullmatch(url):
        return label
    return f"[{label}]({url})"


def pct(x: float) -> str:
    return f"{(x - 1) * 100:+.1f}%"


def change_text(iv: Interval) -> str:
    return f"{pct(iv.estimate)} [{pct(iv.low)}, {pct(iv.high)}]"


def ratio_text(iv: Interval) -> str:
    return f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"


def details(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


@dataclass(frozen=True)
class Section:
    """A collapsible section; ``rows`` may be cut, lowest ``priority`` number kept first."""

    summary: str
    preamble: str
    rows: Sequence[str]
    priority: int


def fit(head: str, sections: Sequence[Section], limit: int = MAX_CHARS) -> str:
    """``head`` plus the sections in order, cutting rows (then sections) to stay under limit."""
    notice = (
        "_Truncated: {} detail row(s) left out to stay under GitHub's 65,536-character limit; "
        "`fusion-perfbot report --json FILE` writes everything._"
    )
    budget = limit - len(head) - len(notice) - 20
    kept: dict[int, list[str] | None] = {}
    for i in sorted(range(len(sections)), key=lambda i: sections[i].priority):
        sec = sections[i]
        cost = len(details(sec.summary, sec.preamble)) + 2
        if cost > budget:
            kept[i] = None
            continue
        rows: list[str] = []
        for row in sec.rows:
            if cost + len(row) + 1 > budget:
                break
            rows.append(row)
            cost += len(row) + 1
        kept[i], budget = rows, budget - cost
    parts, dropped = [head], 0
    for i, sec in enumerate(sections):
        rows_kept = kept[i]
        if rows_kept is None:
            dropped += len(sec.rows) + 1
            continue
        dropped += len(sec.rows) - len(rows_kept)
        parts.append(details(sec.summary, sec.preamble + "\n".join(rows_kept)))
    if dropped:
        parts.append(notice.format(dropped))
    return "\n\n".join(parts)

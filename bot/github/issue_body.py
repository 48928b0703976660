"""The hidden parts of a linked issue's body (pure): the key it is found by, the digest of the
note that opened it, the sizes it last showed, the cross-link section, and the mark a folded
duplicate carries instead of its key.

Kept apart from the GitHub calls (bot/github/issues.py) so that what the bot writes into a body,
and how it reads it back, can be tested without a server.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote

from bot.tell.issue import IssueSpec

KEY_MARKER = "<!-- fusion-perfbot-key: {} -->"
NOTE_MARKER = "<!-- fusion-perfbot-note: {} -->"
DUPLICATE_MARKER = "<!-- fusion-perfbot-duplicate-of: {} -->"
SIZES_MARKER = "<!-- fusion-perfbot-sizes: {} -->"
#: One hidden line of the bot's: its kind and its (percent-encoded) value, the whole line.
_HIDDEN_LINE = re.compile(r"<!-- fusion-perfbot-(key|note|sizes|duplicate-of): (\S*) -->")
_NOTE_VALUE = re.compile(r"[0-9a-f]{16}")
_SIZE_ITEM = re.compile(r"([A-Za-z0-9_.%/-]+)=([0-9]+(?:\.[0-9]+)?)")
LINKS_START = "<!-- fusion-perfbot-links:start -->"
LINKS_END = "<!-- fusion-perfbot-links:end -->"
_SAFE_URL = re.compile(r"https?://[^\s()<>\[\]]+")
_REPO_NAME = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
MAX_BODY = 65536  # GitHub's limit for an issue body or comment
MAX_TITLE = 256
LINK_LINE_BUDGET = 600  # generous upper bound of one rendered link line


def note_marker(note: str) -> str:
    """The hidden record, in an issue's body, of the note of the run that opened it."""
    digest = hashlib.sha256(note.strip().encode("utf-8")).hexdigest()[:16]
    return NOTE_MARKER.format(digest)


def escape_key(key: str) -> str:
    """Percent-encode `key` so it cannot end the HTML comment it sits in (no `--`, `<`, `>`)."""
    return quote(key, safe="|#/:@+=,;!*'()[]").replace("--", "-%2D")


def key_marker(key: str) -> str:
    return KEY_MARKER.format(escape_key(key))


def sizes_marker(sizes: Sequence[tuple[str, float]]) -> str:
    """The sizes an issue shows (``machine/guard=1.103``), percent-encoded like a key."""
    items = ",".join(f"{escape_key(name).replace(',', '%2C')}={size:.6g}" for name, size in sizes)
    return SIZES_MARKER.format(items)


@dataclass(frozen=True)
class Hidden:
    """The bot's hidden lines of one issue body, read from their own place and nowhere else:
    the trailer the bot writes (its last lines, the key or the duplicate mark the very last)
    or, in an issue filed before the trailer (fusion-perfbot 0.1), the header (its first lines,
    the key first). A marker's text anywhere else in the body is text, never the bot's mark:
    an issue is found by its key compared for equality, never by a search of its body.
    `lines`: each kind's whole line; `start`, `end`: the block's line numbers."""

    lines: Mapping[str, str]
    start: int
    end: int

    @property
    def key(self) -> str | None:
        return self._value("key")

    def _value(self, kind: str) -> str | None:
        line = self.lines.get(kind)
        found = _HIDDEN_LINE.fullmatch(line) if line else None
        return unquote(found.group(2)) if found else None


NO_HIDDEN = Hidden({}, 0, 0)


def _block(lines: Sequence[str], start: int, end: int) -> Hidden | None:
    """The hidden block of lines[start:end], if it is one: each kind once at most, a key or
    duplicate mark in it."""
    kinds: dict[str, str] = {}
    for line in lines[start:end]:
        found = _HIDDEN_LINE.fullmatch(line)
        if found is None or found.group(1) in kinds:
            return None
        kinds[found.group(1)] = line
    return Hidden(kinds, start, end) if {"key", "duplicate-of"} & set(kinds) else None


def hidden(body: str | None) -> Hidden:
    """The bot's hidden lines of `body` (:class:`Hidden`); none when it has no block."""
    lines = _lines(body)
    end = len(lines)
    start = end
    while start > 0 and _HIDDEN_LINE.fullmatch(lines[start - 1]):
        start -= 1
    last = _HIDDEN_LINE.fullmatch(lines[end - 1]) if lines else None
    if start < end and last and last.group(1) in ("key", "duplicate-of"):
        return _block(lines, start, end) or NO_HIDDEN
    head = 0
    while head < len(lines) and _HIDDEN_LINE.fullmatch(lines[head]):
        head += 1
    first = _HIDDEN_LINE.fullmatch(lines[0]) if head else None
    if first and first.group(1) in ("key", "duplicate-of"):
        return _block(lines, 0, head) or NO_HIDDEN
    return NO_HIDDEN


def _lines(body: str | None) -> list[str]:
    """The body's lines, CRLF as GitHub may hand it back, trailing blank lines left out."""
    lines = (body or "").replace("\r\n", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def key_of(body: str | None) -> str | None:
    """The key an issue body's own key marker names; None when it has none in its place."""
    return hidden(body).key


def with_hidden(body: str, kind: str, line: str | None) -> str:
    """`body` with its hidden line of `kind` replaced by `line` (None: removed), in its block;
    a body without a block gets one at its end."""
    found = hidden(body)
    lines = _lines(body)
    if found is NO_HIDDEN:
        return body if line is None else f"{body.rstrip()}\n{line}"
    block = dict(found.lines)
    if line is None:
        block.pop(kind, None)
    else:
        block[kind] = line
    ordered = [block[k] for k in HIDDEN_ORDER if k in block]
    if found.start == 0 and found.end < len(lines):  # the 0.1 header: key first
        ordered = ordered[::-1]
    return "\n".join([*lines[: found.start], *ordered, *lines[found.end :]])


#: The trailer's order: the note, the sizes, then the key (or duplicate mark) the very last.
HIDDEN_ORDER = ("note", "sizes", "duplicate-of", "key")


def trailer(key: str, note: str | None, sizes: Sequence[tuple[str, float]]) -> str:
    """The hidden lines the bot ends a body with (:class:`Hidden`)."""
    return "\n".join([*([note] if note else []), sizes_marker(sizes), key_marker(key)])


def read_note(body: str | None) -> str | None:
    """The note marker's whole line, when the body has one in its place."""
    line = hidden(body).lines.get("note")
    found = _HIDDEN_LINE.fullmatch(line) if line else None
    return line if found and _NOTE_VALUE.fullmatch(found.group(2)) else None


def read_sizes(body: str | None) -> dict[str, float] | None:
    """The sizes an issue's body last showed; None when it has no marker (an older issue)."""
    line = hidden(body).lines.get("sizes")
    found = _HIDDEN_LINE.fullmatch(line) if line else None
    if found is None:
        return None
    out = {}
    for item in found.group(2).split(","):
        matched = _SIZE_ITEM.fullmatch(item)
        if matched:
            out[unquote(matched.group(1))] = float(matched.group(2))
    return out


def as_duplicate(body: str, key: str, canonical: str) -> str:
    """`body` with its key marker replaced by a duplicate-of mark, so that no later run finds
    it by the key again (a folded duplicate must never be reopened or picked as the issue)."""
    if key_of(body) != key:
        return body
    mark = DUPLICATE_MARKER.format(escape_key(canonical))
    return with_hidden(with_hidden(body, "key", None), "duplicate-of", mark)


def rekeyed(body: str, old: str, new: str) -> str:
    """`body` with its key `old` replaced by `new` (a watch's alert that moved), in its place."""
    return with_hidden(body, "key", key_marker(new)) if key_of(body) == old else body


@dataclass(frozen=True)
class Link:
    """One repository's line of the link section, as far as this run knows it."""

    repo: str
    number: int | None = None
    url: str | None = None
    failed_status: int | None = None  # the HTTP status of a failed step (0: no answer)


def link_line(link: Link, this_repo: str, primary: bool = False) -> str:
    """One repository's line; the primary one (where the regression most likely belongs, see
    bot/tell/issue.py) says so."""
    name = f"{link.repo} (primary)" if primary else link.repo
    if link.repo == this_repo:
        return f"- {name}: this issue"
    if link.number is not None:
        ref = f"{link.repo}#{link.number}"
        url = link.url or ""
        return f"- {name}: [{ref}]({url})" if _SAFE_URL.fullmatch(url) else f"- {ref}"
    if link.failed_status is not None:
        answer = f"HTTP {link.failed_status}" if link.failed_status else "no answer"
        why = f"GitHub gave {answer} when the bot tried; its next run retries"
    else:
        why = "the bot files it next; if this line stays, its next run does"
    return f"- {name}: not linked yet ({why})"


def links_section(links: Sequence[Link], this_repo: str) -> str:
    lines = [LINKS_START, "**Tracked in**", ""]
    lines += [link_line(link, this_repo, primary=i == 0) for i, link in enumerate(links)]
    return "\n".join([*lines, LINKS_END])


def with_links(body: str, section: str) -> str:
    """`body` with its link section replaced (the last one: the bot's own, above the trailer),
    or added before the trailer; the rest stays as filed."""
    start, end = body.rfind(LINKS_START), body.rfind(LINKS_END)
    if start >= 0 and end > start:
        return body[:start] + section + body[end + len(LINKS_END) :]
    found, lines = hidden(body), _lines(body)
    if found is NO_HIDDEN or found.start == 0:  # no trailer: the section goes last
        return f"{body.rstrip()}\n\n{section}"
    above = "\n".join(lines[: found.start]).rstrip()
    return "\n".join([f"{above}\n\n{section}", *lines[found.start :]])


ACTIONS = ("file", "update", "recover", "acknowledge", "abandon", "hold", "note")


def validate(spec: IssueSpec, action: str, update_note: str) -> None:
    """Refuse, before any request, what GitHub would reject or the bot could not find again."""
    if action not in ACTIONS:
        raise ValueError(f"action must be one of {', '.join(ACTIONS)}, not {action!r}")
    names = [r.lower() for r in spec.repos]
    if not spec.repos or len(set(names)) != len(names):
        raise ValueError("spec.repos must name at least one repository, each once")
    for repo in spec.repos:
        if not _REPO_NAME.fullmatch(repo):
            raise ValueError(f"not an owner/name repository: {repo!r}")
    if not spec.key or not spec.label.strip() or len(spec.label) > 50:
        raise ValueError("spec.key must be non-empty and spec.label 1-50 characters")
    for repo in spec.repos:
        title, body = spec.title_for(repo), spec.body_for(repo)
        if not title.strip() or len(title) > MAX_TITLE:
            raise ValueError(f"spec.title must have 1-{MAX_TITLE} characters")
        worst = (
            len(key_marker(spec.key))
            + len(note_marker(""))
            + len(sizes_marker(spec.sizes))
            + len(body)
            + LINK_LINE_BUDGET * (len(spec.repos) + 1)
        )
        if worst > MAX_BODY:
            raise ValueError(f"spec.body is too long for a GitHub issue ({MAX_BODY} characters)")
    needs_note = action not in ("file", "update", "hold")
    if len(update_note) > MAX_BODY or (needs_note and not update_note.strip()):
        raise ValueError(f"update_note must have 1-{MAX_BODY} characters")

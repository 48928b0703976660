"""The hidden parts of a linked issue's body (pure): the key it is found by, the digest of the
note that opened it, the sizes it last showed, the cross-link section, and the mark a folded
duplicate carries instead of its key.

Kept apart from the GitHub calls (bot/github/issues.py) so that what the bot writes into a body,
and how it reads it back, can be tested without a server.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote

from bot.tell.issue import IssueSpec

KEY_MARKER = "<!-- fusion-perfbot-key: {} -->"
NOTE_MARKER = "<!-- fusion-perfbot-note: {} -->"
DUPLICATE_MARKER = "<!-- fusion-perfbot-duplicate-of: {} -->"
SIZES_MARKER = "<!-- fusion-perfbot-sizes: {} -->"
SIZES_PATTERN = re.compile(r"<!-- fusion-perfbot-sizes: (\S*) -->")
NOTE_PATTERN = re.compile(r"<!-- fusion-perfbot-note: [0-9a-f]{16} -->")
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


def read_sizes(body: str) -> dict[str, float] | None:
    """The sizes an issue's body last showed; None when it has no marker (an older issue)."""
    found = SIZES_PATTERN.search(body or "")
    if found is None:
        return None
    out = {}
    for item in found.group(1).split(","):
        matched = _SIZE_ITEM.fullmatch(item)
        if matched:
            out[unquote(matched.group(1))] = float(matched.group(2))
    return out


def as_duplicate(body: str, key: str, canonical: str) -> str:
    """`body` with its key marker replaced by a duplicate-of mark, so that no later run finds
    it by the key again (a folded duplicate must never be reopened or picked as the issue)."""
    mark = DUPLICATE_MARKER.format(escape_key(canonical))
    return body.replace(key_marker(key), mark)


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
    """`body` with its link section replaced (or appended); the rest stays as filed."""
    start, end = body.find(LINKS_START), body.find(LINKS_END)
    if start >= 0 and end > start:
        return body[:start] + section + body[end + len(LINKS_END) :]
    return f"{body.rstrip()}\n\n{section}"


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

"""Plain HTML pages behind the fake's `html_url`s, so a demo's links lead somewhere.

Bodies are shown as escaped source text (no markdown rendering): the point is to see
exactly what the bot wrote, hidden markers included.
"""

from __future__ import annotations

import re
from html import escape

from bot.github.fake.state import State

_PAGE = re.compile(r"/([^/]+)/([^/]+)/(issues|pull)/(\d+)")
_STYLE = (
    "body{font-family:sans-serif;max-width:60em;margin:auto}pre{white-space:pre-wrap;"
    "background:#f6f8fa;padding:1em}"
)


def render(state: State, path: str) -> str | None:
    """The page for `path`, or None (404)."""
    with state.lock:
        if path in ("", "/"):
            return _index(state)
        match = _PAGE.fullmatch(path)
        repo = state.repos.get(f"{match[1]}/{match[2]}".lower()) if match else None
        if match is None or repo is None:
            return None
        issue = repo.issues.get(int(match[4]))
        if issue is None or (match[3] == "pull") != (issue.pull is not None):
            return None
        ref = f"{repo.full_name}#{issue.number}"
        parts = [
            f"<h1>{escape(issue.title)} <small>{escape(ref)}</small></h1>",
            f"<p>{escape(issue.state)} &middot; opened by {escape(issue.author)} &middot; labels: "
            f"{escape(', '.join(issue.labels) or 'none')}</p>",
            f"<pre>{escape(issue.body or '')}</pre>",
        ]
        for c in state.comments_on(repo.full_name, issue.number):
            parts.append(
                f'<h3 id="issuecomment-{c.id}">{escape(c.author)} commented</h3>'
                f"<pre>{escape(c.body)}</pre>"
            )
        return _html(f"{repo.full_name}#{issue.number}", "\n".join(parts))


def _index(state: State) -> str:
    items = []
    for repo in state.repos.values():
        for issue in repo.issues.values():
            kind = "pull" if issue.pull else "issues"
            href = f"/{repo.full_name}/{kind}/{issue.number}"
            items.append(
                f'<li><a href="{escape(href)}">{escape(repo.full_name)}#{issue.number}</a> '
                f"{escape(issue.title)} ({escape(issue.state)})</li>"
            )
    return _html("local GitHub", f"<h1>local GitHub</h1><ul>{''.join(items)}</ul>")


def _html(title: str, content: str) -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body>{content}</body></html>"
    )

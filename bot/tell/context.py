"""Where a comment or an issue goes and what it links to (pure data); any of it may be absent
(a local ``report`` has no PR, no CI run and no website)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.tell.markdown import link


@dataclass(frozen=True)
class Context:
    repo: str | None = None
    pr: int | None = None
    pr_title: str | None = None
    head_ref: str | None = None
    run_url: str | None = None
    site_url: str | None = None
    issue_links: tuple[tuple[str, str], ...] = ()  # (label, url)
    docs_url: str | None = None  # this project's docs/ folder on the web ([site] docs_url)


def pr_ref(ctx: Context) -> str:
    """``OWNER/NAME#N``, or "this change" where no PR is at hand (a local report)."""
    return f"{ctx.repo}#{ctx.pr}" if ctx.repo and ctx.pr is not None else "this change"


def doc_link(label: str, page: str, ctx: Context, section: str = "") -> str:
    """A link to one of docs/'s pages (METHOD.md, ALERTS.md), or to a ``section`` of one (its
    heading), where the method and the rules are written once instead of pasted into every
    comment and issue. Without a configured folder, the page (and section) is named
    (``docs/METHOD.md`` of fusion-perfbot), not linked to a guess."""
    if not ctx.docs_url:
        where = f', "{section}"' if section else ""
        return f"{label}: fusion-perfbot's `docs/{page}`{where}"
    anchor = f"#{anchor_of(section)}" if section else ""
    return link(label, ctx.docs_url.rstrip("/") + "/" + page + anchor)


def anchor_of(heading: str) -> str:
    """GitHub's anchor of a markdown heading: lower case, punctuation but hyphens dropped,
    each space a hyphen ("Onboarding a GPU kind" -> onboarding-a-gpu-kind)."""
    kept = "".join(c for c in heading.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")

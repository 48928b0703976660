"""The package under test, as the provenance record names it (pure): the comment's side
labels ("Thunder 0.2.6 → Thunder 0.2.7.dev20260201") and its rows in the provenance table.

The record's optional ``under_test`` object (docs/DATA.md) says which package a side installed
and how: a requirement, a wheel or a git commit. It comes from the runner, so every value is
escaped, and a commit is linked only when the repository and the hash are plain.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.results.limits import FULL_SHA, REPOSITORY
from bot.results.types import Provenance
from bot.tell.markdown import escape_md, link

NAMES = {"thunder": "Thunder", "nvfuser": "nvFuser"}


def under_test(prov: Provenance | None) -> Mapping[str, Any] | None:
    record = prov.record.get("under_test") if prov else None
    return record if isinstance(record, Mapping) else None


def _text(u: Mapping[str, Any], key: str) -> str | None:
    value = u.get(key)
    return None if value is None or isinstance(value, (dict, list)) else str(value)


def _name(u: Mapping[str, Any]) -> str:
    package = _text(u, "package") or _text(u, "distribution") or "package"
    return NAMES.get(package, package)


def side_label(prov: Provenance | None, commit: str) -> str:
    """``Thunder 0.2.6 (06f650c87bcc)`` where the record names the package under test, else
    the bare hash; markdown, escaped."""
    u = under_test(prov)
    if u is None:
        return commit[:12]
    version = _text(u, "version") or _text(u, "spec") or "unknown version"
    vcs = _text(u, "vcs_commit")
    at = f" at {vcs[:12]}" if vcs and FULL_SHA.fullmatch(vcs) else ""
    return f"{escape_md(f'{_name(u)} {version}', 120)}{at} ({commit[:12]})"


def _commit_cell(u: Mapping[str, Any] | None) -> str:
    if u is None:
        return "n/a"
    vcs, repo = _text(u, "vcs_commit"), _text(u, "repository")
    if vcs is None:
        return "n/a"
    if FULL_SHA.fullmatch(vcs) and repo and REPOSITORY.fullmatch(repo):
        return link(vcs[:12], f"https://github.com/{repo}/commit/{vcs}")
    return escape_md(vcs, 60)


def _cell(u: Mapping[str, Any] | None, *keys: str) -> str:
    if u is None:
        return "n/a"
    parts = [t for k in keys if (t := _text(u, k)) is not None]
    if not parts:
        return "n/a"
    return escape_md(parts[0] + "".join(f" ({p})" for p in parts[1:]), 200)


def under_test_cells(
    base: Provenance | None, head: Provenance | None
) -> list[tuple[str, str, str]]:
    """(label, base, head) of the package under test, already escaped; none without it."""
    b, h = under_test(base), under_test(head)
    if b is None and h is None:
        return []
    names = [escape_md(_name(u), 60) if u else "n/a" for u in (b, h)]
    rows = [
        ("package under test", names[0], names[1]),
        ("distribution", _cell(b, "distribution"), _cell(h, "distribution")),
        ("spec", _cell(b, "spec", "kind"), _cell(h, "spec", "kind")),
        ("installed version", _cell(b, "version"), _cell(h, "version")),
        ("package commit", _commit_cell(b), _commit_cell(h)),
    ]
    if any(u and _text(u, "sha256") for u in (b, h)):
        rows.append(("sha256", _cell(b, "sha256"), _cell(h, "sha256")))
    return rows

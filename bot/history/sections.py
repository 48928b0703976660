"""One section of a main-branch alert as markdown (pure): a guard that moved at the alert's
commit range, under its own heading, with its evidence and what its follow-up says now; and the
commit links the alert's texts share.

Apart from bot/history/issues.py (which puts the sections, the range and the method together
into the primary and linked issues) so that each file stays readable whole.
"""

from __future__ import annotations

from bot.decide.types import Guard, GuardKind, PointVerdict, Verdict
from bot.history.alerts import Part
from bot.history.follow import FollowUp
from bot.history.remeasure import bound_words
from bot.history.series import Commit, History
from bot.tell.issue import TITLE_WHAT
from bot.tell.markdown import escape_md, link
from bot.tell.rows import (
    BROKEN_HEADER,
    KERNEL_HEADER,
    MAIN_HEADER,
    MAX_MAIN_ROWS,
    broken_row,
    kernel_row,
    main_row,
    worst_first,
)

WHAT: dict[GuardKind, str] = {**TITLE_WHAT, "broken": "points that ran stopped running"}
BROKEN_NOW = {
    "regressed": "they still fail at the newest commit",
    "recovered": "every one of them runs again",
    "hold": "they run again, not yet at enough commits in a row to call it",
}


def commit_url(commit: Commit, repo: str | None) -> str | None:
    """Where a commit can be seen: the package's repository for a package-under-test key of
    a git spec, nowhere for a key made from a wheel or version (no such commit exists), this
    repository (``--repo``) otherwise."""
    prov = commit.runs[0].provenance if commit.runs else None
    kind = prov.text("under_test", "kind") if prov else None
    if kind is not None:
        where = prov.text("under_test", "repository") if prov else None
        vcs = prov.text("under_test", "vcs_commit") if prov else None
        return (
            f"https://github.com/{where}/commit/{vcs}" if kind == "git" and where and vcs else None
        )
    return f"https://github.com/{repo}/commit/{commit.sha}" if repo else None


def commit_ref(h: History, sha: str, repo: str | None) -> str:
    """A commit of the history as a link; found among every run's commits, as the broken
    guard reads them (issue 38: a break at a commit of other variants crashed the watch)."""
    commit = h.commit(sha)
    return link(f"`{sha[:12]}`", commit_url(commit, repo) if commit is not None else None)


def _rows(g: Guard, v: Verdict) -> list[str]:
    bad: list[PointVerdict] = worst_first(p for p in g.points if p.state == "regressed")
    shown = (bad or worst_first(g.points))[:MAX_MAIN_ROWS]
    if g.kind == "ratio":
        return [MAIN_HEADER, *(main_row(p, v) for p in shown)]
    return [KERNEL_HEADER, *(kernel_row(p, v) for p in shown)]


def _follow_words(f: FollowUp, h: History, repo: str | None) -> str:
    if f.reason:
        return escape_md(f.reason, 400)
    if f.state == "recovered" and f.back_at:
        return f"back since {commit_ref(h, f.back_at, repo)}"
    if f.state == "recovered" and f.back_before:
        return (
            f"back before the same guard regressed again at {commit_ref(h, f.back_before, repo)} "
            "(a change of its own, with its own alert)"
        )
    return {
        "regressed": "still regressed at the newest commits",
        "recovered": "back at the newest commits",
        "hold": "the newest commits are neither clearly regressed nor back",
    }[f.state]


def now_words(h: History, p: Part, repo: str | None) -> str:
    """What the section's follow-up says now, free of figures that move from night to night."""
    if p.change is not None:
        return _follow_words(p.change, h, repo)
    return BROKEN_NOW[p.follow]


def _remeasured_words(h: History, f: FollowUp, repo: str | None) -> str:
    """How a change confirmed by a re-measurement of its commit was (bot/history/remeasure.py);
    empty for one confirmed by the commits after it."""
    r = f.change.remeasure
    if not f.change.confirmed or r is None:
        return ""
    return (
        f" Confirmed by re-measuring {commit_ref(h, r.commit, repo)}: each of its {r.runs} runs, "
        f"alone, is far beyond noise ({escape_md(bound_words(r.far), 200)})."
    )


def _timing_lines(h: History, p: Part, f: FollowUp, repo: str | None) -> list[str]:
    c, v = f.change, f.change.verdict
    g = v.guard(c.guard)
    assert g is not None
    return [
        "",
        f"#### {escape_md(g.title)} (regressed)",
        "",
        f"{escape_md(g.summary, 1200)}.",
        "",
        f"Decided on {v.runs[0]} run(s) of {c.span.before} commit(s) before against "
        f"{v.runs[1]} run(s) of {c.span.after} commit(s) after."
        f"{_remeasured_words(h, f, repo)} Now: {now_words(h, p, repo)}.",
        "",
        *_rows(g, v),
    ]


def section_lines(h: History, p: Part, repo: str | None) -> list[str]:
    """The section under its own heading: the guard's summary, the windows it was decided
    on, what it is now, and its evidence table (the worst points first)."""
    if p.change is not None:
        return _timing_lines(h, p, p.change, repo)
    b = p.broken
    assert b is not None
    return [
        "",
        "#### Every point still runs (broken)",
        "",
        f"{len(b.points)} point(s) ran at {commit_ref(h, b.last_good, repo)} and fail from "
        f"{commit_ref(h, b.first_bad, repo)} on. Now: {now_words(h, p, repo)}.",
        "",
        BROKEN_HEADER,
        *(broken_row(q) for q in b.points[:MAX_MAIN_ROWS]),
    ]

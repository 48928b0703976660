"""The linked issues of a history (pure): one per confirmed regression or break, keyed by its
commit range, as the PR mode keys its own by the PR (bot/tell/issue.py), filed and kept by the
same code (bot/github/issues.py ``sync_regression_issues``).

The key, ``rmsnorm-bwd|<machine>|<last good>..<first bad>|<guard>``, has the PR key's form
with the commit range where the PR's ``<base>..<repo>#<pr>`` stands (12 hex digits each, no
``#``: no PR key can equal it). A rerun on the same results builds the same keys, texts and
states, so it changes nothing; a later history where the guard is back closes them. Pending
changes and improvements build no issue.

Every note is free of figures that move from one night to the next, so that a standing
regression is said once, not every night (the fake GitHub and the issue code skip a note equal
to the bot's latest one); the figures are in the body, filed once.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.decide.types import Guard, GuardKind, PointVerdict, Verdict
from bot.history.broken import Break
from bot.history.follow import FollowUp
from bot.history.method import Method
from bot.history.series import Commit, History
from bot.history.watch import Watch
from bot.tell.comment import METHOD_SECTION
from bot.tell.issue import FAMILY, TITLE_WHAT, GuardIssue, IssueSpec, SyncState, repos_for
from bot.tell.markdown import Section, escape_md, fit, link
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


def method_text(m: Method) -> str:
    return (
        "The bot reads every commit's runs of the main branch in commit order and, at every "
        "split between two commits, compares the commits before it with the commits after it "
        f"(at most {m.window} a side) with the PR mode's four guards and rules: a 95% "
        "Student-t interval whose variance adds the within-run noise and the between-run noise "
        "of this machine, a change at least the threshold, one-sided p below alpha over the "
        "number of windows tested (Holm-adjusted within each guard). A change is confirmed once "
        f"{m.min_after} commits after it each moved at least half of it; the strongest change "
        "is taken first and the windows stop at the changes found. Full method and its "
        "false-alarm rate on recorded A/A runs: docs/HISTORY.md."
    )


def history_key(machine: str, last_good: str, first_bad: str, guard: GuardKind) -> str:
    return f"{FAMILY}|{machine}|{last_good[:12]}..{first_bad[:12]}|{guard}"


def commit_url(commit: Commit, repo: str | None) -> str | None:
    """Where a commit can be seen: the package's repository for a package-under-test key of
    a git spec, nowhere for a key made from a wheel or version (no such commit exists), this
    repository (``--repo``) otherwise."""
    prov = commit.runs[0].provenance if commit.runs else None
    kind = prov.text("under_test", "kind") if prov else None
    if kind is not None:
        where = prov.text("under_test", "repository") if prov else None
        sha = prov.text("under_test", "vcs_commit") if prov else None
        return (
            f"https://github.com/{where}/commit/{sha}" if kind == "git" and where and sha else None
        )
    return f"https://github.com/{repo}/commit/{commit.sha}" if repo else None


def commit_ref(h: History, sha: str, repo: str | None) -> str:
    commit = next(c for c in h.commits if c.sha == sha)
    return link(f"`{sha[:12]}`", commit_url(commit, repo))


def _title(machine: str, guard: GuardKind, first_bad: str, amount: str = "") -> str:
    title = (
        f"RMSNorm backward: {WHAT[guard]} on {machine} since {first_bad[:12]}{amount} (main branch)"
    )
    return "".join(c if c.isprintable() else " " for c in title)[:256]


def _amount(g: Guard) -> str:
    flagged = [a for a in g.aggregates if a.state == "regressed"]
    if not flagged:
        return ""
    worst = max(flagged, key=lambda a: a.geomean.estimate)
    return f" ({worst.variant} geomean {100 * (worst.geomean.estimate - 1):+.1f}%)"


def _rows(g: Guard, v: Verdict) -> list[str]:
    bad: list[PointVerdict] = worst_first(p for p in g.points if p.state == "regressed")
    shown = (bad or worst_first(g.points))[:MAX_MAIN_ROWS]
    if g.kind == "ratio":
        return [MAIN_HEADER, *(main_row(p, v) for p in shown)]
    return [KERNEL_HEADER, *(kernel_row(p, v) for p in shown)]


def _state_words(f: FollowUp, h: History, repo: str | None) -> str:
    if f.reason:
        return escape_md(f.reason, 400)
    if f.state == "recovered" and f.back_at:
        return f"back since {commit_ref(h, f.back_at, repo)}"
    if f.state == "recovered" and f.back_before:
        return (
            f"back before the same guard regressed again at {commit_ref(h, f.back_before, repo)} "
            "(a change of its own, with its own issue)"
        )
    return {
        "regressed": "still regressed at the newest commits",
        "recovered": "back at the newest commits",
        "hold": "the newest commits are neither clearly regressed nor back",
    }[f.state]


def _timing_issue(
    w: Watch, f: FollowUp, repo: str | None, repos: tuple[str, ...], label: str
) -> GuardIssue:
    h, c = w.history, f.change
    v = c.verdict
    g = v.guard(c.guard)
    assert g is not None
    key = history_key(h.machine, c.last_good, c.first_bad, c.guard)
    lines = [
        f"### RMSNorm backward: main-branch history on {escape_md(h.machine)}",
        "",
        f"**This issue tracks: {escape_md(g.title)}** (regressed)",
        "",
        f"Last good {commit_ref(h, c.last_good, repo)}, first bad "
        f"{commit_ref(h, c.first_bad, repo)}: {escape_md(g.summary, 1200)}.",
        "",
        f"Decided on {v.runs[0]} run(s) of {c.span.before} commit(s) before "
        f"against {v.runs[1]} run(s) of {c.span.after} commit(s) after, alpha "
        f"{w.scan.alpha:.2g} a window ({w.scan.windows} windows at {w.scan.tested} splits "
        f"tested); {escape_md(w.model, 200)}.",
        f"Now: {_state_words(f, h, repo)}.",
        "",
        *_rows(g, v),
    ]
    body = fit(
        "\n".join(lines),
        [Section(METHOD_SECTION, method_text(w.method), (), 0)],
        limit=40_000,
    )
    note = (
        f"Main-branch history on {h.machine}: {g.title} between {c.last_good[:12]} and "
        f"{c.first_bad[:12]}: {_state_words(f, h, repo)}."
    )
    spec = IssueSpec(
        key,
        _title(h.machine, c.guard, c.first_bad, _amount(g)),
        body,
        repos_for(g, repos, v),
        label,
    )
    return GuardIssue(c.guard, spec, f.state, note, h.machine)


def _broken_issue(
    w: Watch, b: Break, repo: str | None, repos: tuple[str, ...], label: str
) -> GuardIssue:
    h = w.history
    key = history_key(h.machine, b.last_good, b.first_bad, "broken")
    g = Guard("broken", "broken", f"{len(b.points)} point(s) stopped running", b.points)
    now = {
        "regressed": "they still fail at the newest commit",
        "recovered": "every one of them runs again",
        "hold": "they run again, not yet at enough commits in a row to call it",
    }[b.follow]
    lines = [
        f"### RMSNorm backward: main-branch history on {escape_md(h.machine)}",
        "",
        "**This issue tracks: Every point still runs** (broken)",
        "",
        f"{len(b.points)} point(s) ran at {commit_ref(h, b.last_good, repo)} and fail from "
        f"{commit_ref(h, b.first_bad, repo)} on. Now: {now}.",
        "",
        BROKEN_HEADER,
        *(broken_row(p) for p in b.points[:MAX_MAIN_ROWS]),
    ]
    body = fit(
        "\n".join(lines),
        [Section(METHOD_SECTION, method_text(w.method), (), 0)],
        limit=40_000,
    )
    note = (
        f"Main-branch history on {h.machine}: {len(b.points)} point(s) stopped running between "
        f"{b.last_good[:12]} and {b.first_bad[:12]}: {now}."
    )
    amount = f" ({len(b.points)} point(s))"
    spec = IssueSpec(
        key, _title(h.machine, "broken", b.first_bad, amount), body, repos_for(g, repos), label
    )
    state: SyncState = b.follow
    return GuardIssue("broken", spec, state, note, h.machine)


def watch_issues(
    watches: Sequence[Watch], repo: str | None, repos: tuple[str, ...], label: str
) -> tuple[GuardIssue, ...]:
    """Every issue the histories ask for: confirmed regressions and breaks, never pending."""
    out: list[GuardIssue] = []
    for w in watches:
        out += [_timing_issue(w, f, repo, repos, label) for f in w.follow]
        out += [_broken_issue(w, b, repo, repos, label) for b in w.breaks if b.confirmed]
    return tuple(out)

"""The issues of a history (pure): one alert per break on main (bot/history/alerts.py), filed
and kept by the PR mode's code (bot/github/issues.py ``sync_issues``) as one primary issue, in
the repository that owns the alert, and a short linked one in each other repository told
(``[alerts] link``, bot/alert/owners.py).

The primary body has the commit range once, who owns it and, a line a repository, whether each
other one is told and why (bot/tell/next_steps.py ``told_lines``, the PR comment's words), one
section per guard that moved there (its evidence under its own heading) and the method once; the
linked body says what moved, a line a section, and points at the primary. An alert that is
nobody's upstream (only this suite's own definition or the stack changed between its two
commits) has no repository: nothing is filed, and ``history --json`` says why.

A rerun on the same results builds the same keys, texts and states, so it changes nothing; a
later history where every section is back closes them. Pending changes and improvements are
in no alert.

Every note is free of figures that move from one night to the next, so that a standing
regression is said once, not every night (the issue code skips a note equal to the bot's
latest one); the figures are in the body, kept up to date without a notification.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.alert.model import Alert, change_words, what_else, worst_section
from bot.config import LinkPolicy
from bot.decide.types import GUARD_TITLES
from bot.fusion.names import fusion_title, unit_named, unit_words
from bot.history.alerts import Inside, MainAlert, Part, alerts_of, broken_part, timing_part
from bot.history.inside import INSIDE_WHY, SUMMARY
from bot.history.method import Method
from bot.history.sections import WHAT, commit_ref, now_words, section_lines
from bot.history.watch import Watch
from bot.tell.issue import IssueSpec, title_text
from bot.tell.markdown import Section, escape_md, fit, plain_text
from bot.tell.next_steps import told_lines

METHOD_SECTION = "How this is decided"


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


@dataclass(frozen=True)
class AlertIssue:
    """An alert and what the filer gets for it: the spec, and the night's note (said once)."""

    alert: MainAlert
    spec: IssueSpec
    note: str


def _worst(a: MainAlert) -> Part:
    pick = worst_section([p.section for p in a.parts])
    return next(p for p in a.parts if p.section is pick)


def _amount(p: Part) -> str:
    """The worst section's size, as its variant's geometric mean when one moved."""
    if p.change is None:
        return f"{p.section.size:.0f} point(s)"
    g = p.change.change.verdict.guard(p.guard)
    flagged = [a for a in g.aggregates if a.state == "regressed"] if g else []
    if not flagged:
        return change_words(p.section.name, p.section.size)
    worst = max(flagged, key=lambda a: a.geomean.estimate)
    return f"{worst.variant} geomean {100 * (worst.geomean.estimate - 1):+.1f}%"


def alert_title(a: MainAlert) -> str:
    """ "Softmax backward: Thunder's kernels slower on nvidia-h200 since ...": the fusion that
    moved first (RMSNorm backward's titles as before the catalog)."""
    worst = _worst(a)
    extra = plain_text(what_else([p.section for p in a.parts], unit_named), 120)
    fusion, machine = plain_text(fusion_title(a.fusion)), plain_text(a.machine)
    return title_text(
        f"{fusion}: {WHAT[worst.guard]} on {machine} since {a.first_bad[:12]} "
        f"({_amount(worst)}{extra}) (main branch)"
    )


def linked_title(a: MainAlert) -> str:
    return title_text(
        f"{plain_text(fusion_title(a.fusion))} slower on {plain_text(a.machine)} since "
        f"{a.first_bad[:12]} (main branch; tracked in {a.owner})"
    )


def _range(w: Watch, a: MainAlert, repo: str | None) -> str:
    h = w.history
    return (
        f"last good {commit_ref(h, a.last_good, repo)}, first bad "
        f"{commit_ref(h, a.first_bad, repo)}"
    )


def told_words(a: MainAlert) -> tuple[str, ...]:
    """A line for each other configured repository: told (the linked issue) or not, and why,
    in the PR comment's words (bot/tell/next_steps.py ``told_lines``)."""
    said = Alert(a.key, a.state, (), a.repos, a.owner_why, (), a.ranked, a.told, a.upstream_none)
    return told_lines(said)


def _owner_words(a: MainAlert) -> str:
    if not a.repos:
        return f"Nothing is filed upstream: {escape_md(a.upstream_none)}."
    return f"Owner: {escape_md(a.owner)} ({escape_md(a.owner_why)})."


def alert_body(w: Watch, a: MainAlert, repo: str | None) -> str:
    told = told_words(a)
    lines = [
        f"### {escape_md(fusion_title(a.fusion))}: main-branch history on {escape_md(a.machine)}",
        "",
        f"**One alert for the break between {_range(w, a, repo)}**: {len(a.parts)} "
        "section(s), one a guard that moved at this commit range; it closes when every one of "
        f"them is back. {_owner_words(a)}",
        *(("", f"Between the two builds: {a.between}.") if a.between else ()),
        *(("", *(f"- {line}" for line in told)) if told else ()),
        "",
        f"Alpha {w.scan.alpha:.2g} a window ({w.scan.windows} windows at {w.scan.tested} "
        f"splits tested); {escape_md(w.model, 200)}.",
    ]
    for p in a.parts:
        lines += section_lines(w.history, p, repo)
    if a.inside:
        lines += ["", f"#### {SUMMARY}", "", INSIDE_WHY, "", *(f"- {b}" for b in a.inside)]
    head = "\n".join(lines)
    return fit(head, [Section(METHOD_SECTION, method_text(w.method), (), 0)], limit=40_000)


def linked_body(w: Watch, a: MainAlert, repo: str | None) -> str:
    """The short issue in another repository: what moved, a line a section, and where the
    evidence and the discussion are."""
    lines = [
        f"**A main-branch performance alert on {escape_md(unit_words(a.unit))}, filed in "
        f"{escape_md(a.owner)}** ({escape_md(a.owner_why)}): the evidence and the discussion "
        "are in the primary issue linked below. This one closes with it.",
        "",
        f"The break: {_range(w, a, repo)}.",
        "",
    ]
    if a.between:
        lines += [f"Between the two builds: {a.between}.", ""]
    lines += [f"- {WHAT[p.guard]}: {change_words(p.section.name, p.section.size)}" for p in a.parts]
    return "\n".join(lines)


def alert_note(w: Watch, a: MainAlert, repo: str | None) -> str:
    """The night's follow-up: each section's state in words (no figure that moves nightly),
    so it changes, and is posted, only when a section's state does or a section joins."""
    said = "; ".join(f"{GUARD_TITLES[p.guard]}: {now_words(w.history, p, repo)}" for p in a.parts)
    end = " Every section is back: closed as completed." if a.state == "recovered" else ""
    return (
        f"Main-branch history on {unit_words(a.unit)} between {a.last_good[:12]} and "
        f"{a.first_bad[:12]}: {said}.{end}"
    )


def alert_issue(w: Watch, a: MainAlert, repo: str | None, label: str) -> AlertIssue:
    """The alert's spec: filed (opened or kept up to date) in the repositories told; noted or
    closed wherever an issue of it may be (every configured repository, as the PR mode closes
    an alert's issues), which opens nothing. An alert that is nobody's upstream and stands
    has no repository: its spec is never synced."""
    spec = IssueSpec(
        a.key,
        alert_title(a),
        alert_body(w, a, repo),
        a.repos if a.state == "regressed" else a.everywhere,
        label,
        linked_title=linked_title(a),
        linked_body=linked_body(w, a, repo),
        sizes=tuple(sorted(a.sizes.items())),
    )
    return AlertIssue(a, spec, alert_note(w, a, repo))


def watch_issues(
    watches: Sequence[Watch],
    repo: str | None,
    repos: tuple[str, ...],
    label: str,
    link: LinkPolicy = "implicated",
    inside: Inside | None = None,
) -> tuple[AlertIssue, ...]:
    """Every alert the histories ask for: confirmed regressions and breaks, never pending,
    grouped by history (a fusion on a machine) and commit range; ``link``: which other
    repositories get the linked issue (``[alerts] link``). An alert that is nobody's upstream
    is here too, with no repository (its spec is never synced: bot/commands/history.py)."""
    out: list[AlertIssue] = []
    for w in watches:
        unit = w.history.unit
        parts = [timing_part(unit, f) for f in w.follow]
        parts += [broken_part(unit, b) for b in w.breaks if b.confirmed]
        alerts = alerts_of(w, parts, repos, repo, link, inside)
        out += [alert_issue(w, a, repo, label) for a in alerts]
    return tuple(out)


def alert_json(ai: AlertIssue) -> dict[str, Any]:
    """The alert as ``history --json`` gives it: its key, state, repositories (none, and why
    in ``upstream_none``, when it is nobody's upstream), who is told and why, and sections."""
    a = ai.alert
    return {
        "key": a.key,
        "machine": a.machine,
        "fusion": a.fusion,
        "unit": a.unit,
        "last_good": a.last_good,
        "first_bad": a.first_bad,
        "state": a.state,
        "primary": a.owner or None,
        "linked": list(a.repos[1:]),
        "repos": list(a.repos),
        "owner_why": a.owner_why,
        "upstream_none": a.upstream_none,
        "told": [{"repo": t.repo, "told": t.told, "why": t.why} for t in a.told],
        "title": ai.spec.title,
        "note": ai.note,
        "sections": [
            {
                "name": p.section.name,
                "guard": p.guard,
                "state": p.follow,
                "size": p.section.size,
                "owner": p.section.owner,
            }
            for p in a.parts
        ],
    }

"""An alert's two issues as markdown (pure): the primary one, in the repository that owns the
alert, with every section's evidence; and the short linked one in the other repository, which
points at it (the link section, kept by bot/github/issues.py, says where).

The primary issue's sections are the guards that moved, machine by machine, each with its own
evidence table; the fusion hints of a machine follow its sections, open (they are the first
clue); the method comes once, last. A summarised sweep (bot/tell/summary.py) shows its points
by variant and dtype and the whole stays under SUMMARY_CHARS: fewer worst rows first, then the
reproducer, then the hints go.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.alert.model import Alert, Section, moved_words
from bot.decide.types import Verdict
from bot.fusion.hints import Hints
from bot.tell.comment import METHOD, METHOD_SECTION, Context, header
from bot.tell.hints import SUMMARY, hints_markdown
from bot.tell.issue import IssueSpec, evidence, title_text
from bot.tell.markdown import Section as Fold
from bot.tell.markdown import escape_md, fit, link
from bot.tell.rows import graph_url, point_name
from bot.tell.summary import LADDER, SUMMARY_CHARS, is_summarised
from bot.tell.sweep import guard_evidence

MAX_BODY_CHARS = 40_000
NO_ALERT_TITLE = "RMSNorm backward: performance alert"


def _where(ctx: Context) -> str:
    return f"{ctx.repo}#{ctx.pr}" if ctx.repo and ctx.pr is not None else "this change"


def alert_title(alert: Alert, ctx: Context) -> str:
    """Plain text (titles are not markdown), one line, within GitHub's 256 characters."""
    worst = alert.worst
    if worst is None:
        return title_text(f"{NO_ALERT_TITLE} in {_where(ctx)}")
    more = len(alert.sections) - 1
    extra = f" (and {more} more)" if more else ""
    moved = moved_words(worst.guard, worst.size)
    return title_text(f"RMSNorm backward: {moved}{extra} in {_where(ctx)}")


def linked_title(alert: Alert, ctx: Context) -> str:
    return title_text(f"RMSNorm backward slower in {_where(ctx)} (tracked in {alert.owner})")


def _section_lines(s: Section, v: Verdict, ctx: Context, k: int | None) -> list[str]:
    g = v.guard(s.guard)
    assert g is not None
    lines = ["", f"### {escape_md(s.machine)}: {g.title} ({g.state})"]  # the title is ours
    lines += [escape_md(g.summary, 600)]
    lines += evidence(v, g) if k is None else guard_evidence(v, g, k)
    if ctx.site_url and g.kind == "ratio":
        bad = [p for p in g.points if p.state == "regressed"][:10]
        graphs = [link(point_name(p.key), graph_url(ctx.site_url, p.key, v.machine)) for p in bad]
        if graphs:
            lines += ["", "History: " + ", ".join(graphs)]
    return lines


def _body(
    alert: Alert,
    verdicts: Mapping[str, Verdict],
    ctx: Context,
    hints: Mapping[str, Hints | None],
    k: int | None,
    script: bool,
    limit: int,
) -> str:
    first = verdicts[alert.sections[0].machine] if alert.sections else None
    lines = header(first, ctx)[1:] if first is not None else []  # no comment marker here
    n = len(alert.sections)
    lines += [
        "",
        f"**One alert for {escape_md(_where(ctx))}**: {n} section(s), one a guard that moved "
        f"on one machine; it closes when every one of them is back. Owner: "
        f"{escape_md(alert.owner)} ({escape_md(alert.owner_why)}).",
    ]
    for machine in dict.fromkeys(s.machine for s in alert.sections):
        v = verdicts[machine]
        for s in (s for s in alert.sections if s.machine == machine):
            lines += _section_lines(s, v, ctx, k)
        found = hints.get(machine)
        if found is not None:
            lines += [
                "",
                f"### {SUMMARY} ({escape_md(machine)})",
                "",
                hints_markdown(found, script=script),
            ]
    return fit("\n".join(lines), [Fold(METHOD_SECTION, METHOD, (), 0)], limit=limit)


def alert_body(
    alert: Alert,
    verdicts: Mapping[str, Verdict],
    ctx: Context,
    hints: Mapping[str, Hints | None],
) -> str:
    if not alert.sections:
        return f"The performance alert of {escape_md(_where(ctx))}: nothing stands now."
    if not any(is_summarised(verdicts[m]) for m in {s.machine for s in alert.sections}):
        return _body(alert, verdicts, ctx, hints, None, True, MAX_BODY_CHARS)
    body = ""
    for k, script in LADDER:
        body = _body(alert, verdicts, ctx, hints, k, script, SUMMARY_CHARS)
        if len(body) <= SUMMARY_CHARS and METHOD_SECTION in body:  # nothing cut
            return body
    return _body(alert, verdicts, ctx, {}, 0, False, SUMMARY_CHARS)


def linked_body(alert: Alert, ctx: Context) -> str:
    """The short issue in the other repository: what moved, in one line a section, and where
    the evidence and the discussion are."""
    lines = [
        f"**A performance alert of {escape_md(_where(ctx))}, filed in "
        f"{escape_md(alert.owner)}** ({escape_md(alert.owner_why)}): the evidence, the fusion "
        "hints and the discussion are in the primary issue linked below. This one closes "
        "with it.",
        "",
    ]
    lines += [f"- {escape_md(s.machine)}: {moved_words(s.guard, s.size)}" for s in alert.sections]
    return "\n".join(lines)


def alert_spec(
    alert: Alert,
    verdicts: Mapping[str, Verdict],
    ctx: Context,
    hints: Mapping[str, Hints | None],
    label: str,
) -> IssueSpec:
    return IssueSpec(
        key=alert.key,
        title=alert_title(alert, ctx),
        body=alert_body(alert, verdicts, ctx, hints),
        repos=alert.repos,
        label=label,
        linked_title=linked_title(alert, ctx),
        linked_body=linked_body(alert, ctx),
        sizes=tuple(sorted(alert.sizes.items())),
    )

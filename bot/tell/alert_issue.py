"""An alert's two issues (pure): the primary one, in the repository that owns the alert, and the
short linked one in the other, which points at it (the link section, kept by
bot/github/issues.py, says where). Laid out by bot/tell/templates/issue.md.j2 and
linked_issue.md.j2 over bot/tell/issue_view.py.

Within GitHub's limit whatever the number of machines and points: a body that does not fit
shows fewer rows a section, then names the reproducer instead of posting it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from bot.alert.model import Alert, moved_words, what_else
from bot.decide.types import Verdict
from bot.fusion.hints import Hints
from bot.fusion.names import fusion_title, unit_fusion, unit_machine, unit_named
from bot.results.types import Provenance
from bot.tell.context import Context, pr_ref
from bot.tell.issue import IssueSpec, title_text
from bot.tell.issue_view import issue_view, linked_view, where_text
from bot.tell.markdown import plain_text
from bot.tell.render import render
from bot.tell.tables import FOLD_ROWS, LEAD_ROWS

#: An issue body's budget (GitHub allows 65,536): past it, fewer rows, then no script.
MAX_BODY_CHARS = 20_000
NO_ALERT_TITLE = "RMSNorm backward: performance alert"
Sides = Mapping[str, tuple[Provenance | None, Provenance | None]]


def alert_title(alert: Alert, ctx: Context) -> str:
    """Plain text (titles are not markdown), one line, within GitHub's 256 characters."""
    worst = alert.worst
    if worst is None:
        return title_text(f"{NO_ALERT_TITLE} in {pr_ref(ctx)}")
    extra = plain_text(what_else(alert.sections, _named(alert)), 160)
    moved = moved_words(worst.guard, worst.size)
    fusion = plain_text(fusion_title(unit_fusion(worst.machine)))
    return title_text(f"{fusion}: {moved}{extra} in {pr_ref(ctx)}")


def _named(alert: Alert) -> Callable[[str], str]:
    """A unit as a title names it: its fusion, and its machine where the alert has several."""
    several = len({unit_machine(s.machine) for s in alert.sections}) > 1
    return lambda unit: unit_named(unit) if several else fusion_title(unit_fusion(unit))


def linked_title(alert: Alert, ctx: Context) -> str:
    worst = alert.worst
    fusion = plain_text(fusion_title(unit_fusion(worst.machine))) if worst else "RMSNorm backward"
    return title_text(f"{fusion} slower in {pr_ref(ctx)} (tracked in {alert.owner})")


def alert_body(
    alert: Alert,
    verdicts: Mapping[str, Verdict],
    ctx: Context,
    hints: Mapping[str, Hints | None],
    sides: Sides | None = None,
) -> str:
    if not alert.sections:
        return f"The performance alert of {where_text(ctx)}: nothing stands now."
    body = ""
    for rows, script in ((FOLD_ROWS, True), (LEAD_ROWS, True), (LEAD_ROWS, False), (0, False)):
        view = issue_view(alert, verdicts, ctx, hints, sides or {}, rows=rows, script=script)
        body = render("issue.md.j2", i=view)
        if len(body) <= MAX_BODY_CHARS:
            return body
    return body[:MAX_BODY_CHARS]


def linked_body(alert: Alert, ctx: Context, verdicts: Mapping[str, Verdict] | None = None) -> str:
    """The short issue in the other repository: what moved, in one line a section, the ratio's
    level, and where the evidence and the discussion are."""
    return render("linked_issue.md.j2", i=linked_view(alert, ctx, verdicts))


def alert_spec(
    alert: Alert,
    verdicts: Mapping[str, Verdict],
    ctx: Context,
    hints: Mapping[str, Hints | None],
    label: str,
    sides: Sides | None = None,
) -> IssueSpec:
    return IssueSpec(
        key=alert.key,
        title=alert_title(alert, ctx),
        body=alert_body(alert, verdicts, ctx, hints, sides),
        repos=alert.repos,
        label=label,
        linked_title=linked_title(alert, ctx),
        linked_body=linked_body(alert, ctx, verdicts),
        sizes=tuple(sorted(alert.sizes.items())),
    )

"""The PR comment's alert part (pure): under the headline, the status, the alert and what
happens to its issues, the acknowledgement; at the end, the rules, folded; and the hidden state
the next run reads (bot/tell/comment_state.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.alert.ack import AckDecision
from bot.alert.model import Alert, moved_words
from bot.alert.plan import IssuePlan
from bot.alert.status import CONTEXT, Status
from bot.tell.comment_state import CommentState, state_marker
from bot.tell.markdown import details, escape_md, link

RULES_SECTION = "How this bot treats its alerts and your decisions"


def rules(factor: float, label: str, open_on: str, allow_author: bool) -> str:
    """Every rule of the alerts, as the comment's footer states them (README repeats them)."""
    author = "may" if allow_author else "may not"
    when = "when the PR merges" if open_on == "merge" else "at the first push that shows it"
    return "\n".join(
        [
            "- **One alert per PR.** Every guard that moved, on every machine that judges, is a "
            "section of one alert: one issue in the repository that owns it (what moved points "
            "there; else the PR's repository) and one short linked issue in the other. Its key "
            "names the PR, so pushes and rebases update the same alert.",
            f"- **When it is filed:** {when} (perfbot.toml `[alerts] open_on`). A PR closed "
            "without merging closes its open alert issues as not planned.",
            "- **It closes** as completed when every section is back within its threshold.",
            "- **Your close stands.** A closed alert issue is never reopened, however it was "
            f"closed. If the alert gets clearly worse (a new section, or an excess more than "
            f"{factor:g}x what the issue showed), the issue gets one comment saying so.",
            "- **Acknowledge an intended slowdown** with a PR comment whose first line is "
            f"`/perfbot ack <why>` (`/perfbot unack` takes it back), or the `{escape_md(label)}` "
            "label. It counts from an owner, member or collaborator of this repository; the "
            f"PR's author {author} acknowledge their own PR (perfbot.toml `[acknowledge]`). "
            "The status turns success, the alert's issues close as not planned, and it holds "
            f"until the alert gets clearly worse ({factor:g}x).",
            f"- **The `{CONTEXT}` status** is success, failure (a regression or a break: exit "
            "1 or 5), neutral (not judged or not settled: no noise model for a machine, a "
            "failed runner check, unsure points; GitHub shows it as success) or acknowledged.",
        ]
    )


def _section_words(alert: Alert) -> str:
    return "; ".join(
        f"{moved_words(s.guard, s.size)} on {escape_md(s.machine)}" for s in alert.sections
    )


def alert_lines(
    alert: Alert,
    ack: AckDecision,
    plan: IssuePlan,
    status: Status,
    issues: Sequence[tuple[str, str]],
    ack_label: str,
) -> list[str]:
    """The lines under the headline, a markdown list (lines of one paragraph would run
    together); ``issues``: the alert's issues as (label, url)."""
    lines = [f"- **Status** `{CONTEXT}`: {escape_md(status.description, 200)}"]
    if alert.sections:
        lines.append(
            f"- **One alert** for this PR ({len(alert.sections)} section(s): "
            f"{_section_words(alert)}); owner {escape_md(alert.owner)} "
            f"({escape_md(alert.owner_why)}); {escape_md(plan.why)}."
        )
    elif plan.action in ("abandon", "acknowledge") or (plan.action == "recover" and issues):
        lines.append(f"- **Alert:** {escape_md(plan.why)}.")  # a clean PR says nothing of it
    if issues:
        lines.append("- **Alert issues:** " + ", ".join(link(lab, url) for lab, url in issues))
    if ack.words:
        lines.append(f"- **{escape_md(ack.words[0].upper() + ack.words[1:], 500)}.**")
    if alert.state == "regressed" and not ack.holds:
        lines.append(
            "- Intended? A maintainer comments `/perfbot ack <why>` (or adds the "
            f"`{escape_md(ack_label)}` label); the rules are at the end."
        )
    lines += [f"- Not counted: {escape_md(r, 300)}." for r in ack.refused]
    return lines


def added_chars(lines: Sequence[str], footer: str, state: CommentState) -> int:
    """How much :func:`with_alert` adds to a comment (the same whatever the comment): what
    render_report must leave room for."""
    return len(with_alert("", lines, footer, state))


def with_alert(comment: str, lines: Sequence[str], footer: str, state: CommentState) -> str:
    """The rendered comment with the alert lines right under its headline (its first line
    that starts with an icon and bold words), the rules folded at the end, the state hidden."""
    rows = comment.split("\n")
    at = next(
        (i + 1 for i, row in enumerate(rows) if " **" in row[:6] and not row.startswith("|")),
        min(len(rows), 3),
    )
    rows[at:at] = ["", *lines]
    return "\n".join([*rows, "", details(RULES_SECTION, footer), state_marker(state)])

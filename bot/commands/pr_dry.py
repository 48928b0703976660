"""What ``pr`` prints when it posts nothing (no token, or ``--dry-run``): the comment, the
status, and what would happen to the alert's issues, each in full."""

from __future__ import annotations

from bot.alert.plan import IssuePlan
from bot.alert.status import CONTEXT, Status
from bot.config import Config
from bot.tell.issue import IssueSpec

CLOSES = {"recover": "close as completed", "acknowledge": "close as not planned",
          "abandon": "close as not planned"}  # fmt: skip


def dry_run_text(
    comment: str, spec: IssueSpec, plan: IssuePlan, status: Status, why: str, cfg: Config
) -> str:
    lines = [
        f"DRY RUN ({why}): nothing was posted.",
        f"Would set the {CONTEXT} status: {status.state} ({status.kind}): {status.description}",
        "Would create or update the bot's comment:",
        "----- comment -----",
        comment,
        "----- end of comment -----",
    ]
    repos = ", ".join(spec.repos)
    if not cfg.file_issues:
        lines.append("Would not touch the alert's issues (disabled).")
    elif plan.action in CLOSES:
        lines.append(
            f"Would {CLOSES[plan.action]} any open alert issue (key {spec.key}) in {repos}, "
            f"saying: {plan.note}"
        )
    elif plan.action == "hold":
        lines.append(f"Would not touch the alert's issues (key {spec.key}): {plan.why}")
    else:
        verb = "open or update" if plan.action == "file" else "update (but not open)"
        lines += [
            f"Would {verb} the alert's issues in {repos} ({plan.why})",
            f"key: {spec.key}",
            f"label: {spec.label}",
            f"primary issue in {spec.repos[0]}: {spec.title}",
            "----- primary issue body -----",
            spec.body,
        ]
        for repo in spec.repos[1:]:
            lines += [
                f"----- linked issue in {repo}: {spec.title_for(repo)} -----",
                spec.body_for(repo),
            ]
        lines.append("----- end of issues -----")
    return "\n".join(lines) + "\n"

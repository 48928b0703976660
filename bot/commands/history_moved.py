"""``history``'s first pass over GitHub, before the alerts are synced: an alert whose change
point moved by a commit takes over the open issue of the range it moved from (the rule and
why: bot/history/moved.py). The issue's key marker is rewritten to the new key, in every
configured repository that has it, and it gets one comment saying so; the sync that follows
then finds it under the new key and updates its title and body in place, so one change keeps
one issue. Run only with an issues token and without ``--dry-run``; a rerun finds the issue
under the new key already and does nothing."""

from __future__ import annotations

from collections.abc import Sequence

import github

from bot.commands.history_stranded import open_keyed_issues
from bot.commands.steps import StepFailed, step
from bot.config import Config
from bot.exitcodes import ExitCode
from bot.github.client import github_step
from bot.github.issue_body import read_sizes, rekeyed
from bot.history.issues import AlertIssue
from bot.history.moved import moved_from, moved_note
from bot.history.stranded import guards_of, parse_key
from bot.history.watch import Watch


def rekey_moved(
    gh: github.Github, cfg: Config, watches: Sequence[Watch], issues: Sequence[AlertIssue]
) -> tuple[list[str], list[str]]:
    """What was re-keyed, and what failed (each repository in turn)."""
    current = {ai.spec.key for ai in issues}
    by_unit = {w.history.unit: w for w in watches}  # a fusion on a machine: one history
    lines: list[str] = []
    failures: list[str] = []
    for repo, _, listed in open_keyed_issues(gh, cfg, failures):
        found = dict(listed)
        guards = {}
        for key, issue in found.items():
            parsed = parse_key(key)
            if parsed is not None:
                guards[key] = frozenset(guards_of(read_sizes(issue.body or ""), parsed[0]))
        for ai in issues:
            w = by_unit.get(ai.alert.unit)
            mine = frozenset(p.guard for p in ai.alert.parts)
            old = moved_from(w, ai.spec.key, mine, guards, current) if w else None
            if old is None:
                continue
            issue = found[old]
            where = f"{repo}#{issue.number}"
            try:
                with step(f"move {where} to {ai.spec.key}", ExitCode.GITHUB_FAILURE):
                    body = rekeyed(issue.body or "", old, ai.spec.key)
                    with github_step(f"edit {where}"):
                        issue.edit(body=body)
                    with github_step(f"comment on {where}"):
                        issue.create_comment(moved_note(ai.alert.unit, old, ai.spec.key))
            except StepFailed as failure:
                failures.append(str(failure))
                continue
            guards.pop(old)
            lines.append(f"issue (moved: {old} -> {ai.spec.key}) in {repo}: {issue.html_url}")
    return lines, failures

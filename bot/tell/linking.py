"""The linked-issue spec for a confirmed regression (pure; bot/github/issues.py does the
GitHub part).

The dedupe key names the benchmark family, the machine and the regressing commit range as
"base of PR N": re-runs of the same PR (new pushes included) update one issue per repository
instead of filing new ones, while another PR or another machine gets its own.
"""

from __future__ import annotations

import re

from bot.decide.verdict import Verdict
from bot.github.issues import IssueSpec
from bot.tell.render import Context, issue_body, issue_title

FAMILY = "rmsnorm-bwd"
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def issue_key(machine: str, base_sha: str, repo: str, pr: int) -> str:
    if not _REPO.fullmatch(repo) or pr < 1:
        raise ValueError(f"not a repository and PR number: {repo!r} #{pr}")
    return f"{FAMILY}|{machine}|{base_sha[:12]}..{repo}#{pr}"


def issue_spec(v: Verdict, ctx: Context, repos: tuple[str, ...], label: str) -> IssueSpec:
    """What bot/github/issues.py files (or updates, or closes) for this PR's verdict."""
    if ctx.repo is None or ctx.pr is None:
        raise ValueError("an issue needs the PR it is about (repo and number)")
    return IssueSpec(
        key=issue_key(v.machine, v.base, ctx.repo, ctx.pr),
        title=issue_title(v, ctx),
        body=issue_body(v, ctx),
        repos=repos,
        label=label,
    )

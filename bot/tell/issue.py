"""The linked issue for a confirmed regression, as markdown (pure), and what to file where.

bot/github/issues.py does the GitHub part with the :class:`IssueSpec` built here. The dedupe
key names the benchmark family, the machine and the regressing commit range as "base of PR N":
re-runs of the same PR (new pushes included) update one issue per repository instead of filing
new ones, while another PR or another machine gets its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.decide.types import Verdict
from bot.tell.comment import (
    MAIN_HEADER,
    MAX_MAIN_ROWS,
    METHOD,
    Context,
    graph_url,
    header,
    main_row,
    point_name,
    worst_first,
)
from bot.tell.markdown import Section, change_text, fit, link, pct

FAMILY = "rmsnorm-bwd"
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class IssueSpec:
    key: str  # stable dedupe key, e.g. "rmsnorm-bwd|h200-nvidia-h200|abc123..owner/repo#12"
    title: str
    body: str  # evidence markdown; the key marker and the cross-links are added by the filer
    repos: tuple[str, ...]  # primary first
    label: str = "perf-regression-bot"


def issue_title(v: Verdict, ctx: Context) -> str:
    """Plain text (titles are not markdown), one line, within GitHub's 256 characters."""
    worst = v.worst.ratio.change.estimate if v.worst and v.worst.ratio else None
    amount = f" (worst {pct(worst)})" if worst is not None else ""
    where = f" in {ctx.repo}#{ctx.pr}" if ctx.repo and ctx.pr is not None else ""
    title = f"RMSNorm backward: Thunder slower relative to nvFuser on {v.machine}{amount}{where}"
    return "".join(c if c.isprintable() else " " for c in title)[:256]


def issue_body(v: Verdict, ctx: Context) -> str:
    """The evidence: the regressed points, the summary, links; the key marker is added later."""
    lines = header(v, ctx)[1:]  # no comment marker: this is not the sticky comment
    bad = worst_first(p for p in v.points if p.gating and p.state == "regressed")
    lines += ["", MAIN_HEADER, *(main_row(p) for p in bad[:MAX_MAIN_ROWS])]
    if ctx.site_url:
        graphs = [
            link(point_name(p.key), graph_url(ctx.site_url, p.key, v.machine)) for p in bad[:10]
        ]
        lines += ["", "History: " + ", ".join(graphs)]
    sections = [Section("How this is decided", METHOD, (), 0)]
    return fit("\n".join(lines), sections, limit=40_000)


def update_note(v: Verdict, ctx: Context) -> str:
    """One comment on a linked issue: what the latest run of this PR found."""
    worst = (
        f"; worst {point_name(v.worst.key)} {change_text(v.worst.ratio.change)}"
        if (v.worst and v.worst.ratio)
        else ""
    )
    run = f" ({link('CI run', ctx.run_url)})" if ctx.run_url else ""
    state = "still regressed" if v.regressed else f"now {v.overall}"
    return f"Head {v.head[:12]} against base {v.base[:12]}: {state}{worst}{run}."


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

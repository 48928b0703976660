"""The linked issues, one per guard, as markdown (pure), and what to do with each.

bot/github/issues.py does the GitHub part with the :class:`GuardIssue` built here. Each guard
(bot/decide/types.py: broken, nvfuser, thunder, ratio) tracks one thing and has its own issue,
so that each opens on its own evidence and closes only on evidence that what IT tracks
recovered: a Thunder issue does not close because the ratio moved back, and a ratio issue does
not close because nvFuser's fusion got slower and pulled the ratio down.

The dedupe key names the benchmark family, the machine, the regressing commit range as "base
of PR N" and the guard: re-runs of the same PR (new pushes included) update one issue per
repository and guard instead of filing new ones, while another PR or machine gets its own.
The ratio guard's key has no suffix: it is the key this bot used before guards existed, so
issues filed then are still found.

Several machines (one PR benchmarked on several GPU runners) need no new key form: the machine
(the asv machine name, e.g. ``nvidia-h200``) has been the key's second field from the start, so
each machine's guards get their own issues, and an issue filed before machines were merged into
one comment carries exactly the key the same machine's run builds now: it is found and
updated, never duplicated. A machine whose runner check failed does not gate: its issues are
held (``hold``: an open one gets the note, nothing is opened or closed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot.decide.types import Guard, GuardKind, PointVerdict, Verdict
from bot.fusion.hints import Hints
from bot.tell.comment import METHOD, METHOD_SECTION, Context, header
from bot.tell.hints import SUMMARY, hints_markdown
from bot.tell.markdown import Section, escape_md, fit, link
from bot.tell.rows import (
    BROKEN_HEADER,
    KERNEL_HEADER,
    MAIN_HEADER,
    MAX_MAIN_ROWS,
    broken_row,
    graph_url,
    kernel_row,
    main_row,
    point_name,
    worst_first,
)
from bot.tell.summary import LADDER, SUMMARY_CHARS, is_summarised
from bot.tell.sweep import guard_evidence

FAMILY = "rmsnorm-bwd"
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
SyncState = Literal["regressed", "recovered", "hold"]
TITLE_WHAT: dict[GuardKind, str] = {
    "ratio": "Thunder slower relative to nvFuser",
    "nvfuser": "nvFuser's hand-written fusion slower",
    "thunder": "Thunder's kernels slower",
    "broken": "points that ran at base fail at head",
}


@dataclass(frozen=True)
class IssueSpec:
    """What the filer (bot/github/issues.py) keeps in line: one issue per repository for `key`.

    The primary repository (first) gets `title` and `body`; every other one the linked issue,
    `linked_title` and `linked_body` (the same as the primary's when not given). `sizes` is
    what the issue shows (bot/alert/model.py), kept in a hidden marker so that a later run can
    tell whether the alert got clearly worse than the issue said.
    """

    key: str  # stable dedupe key, e.g. "rmsnorm-bwd|pr|Lightning-AI/lightning-thunder#7"
    title: str
    body: str  # evidence markdown; the key marker and the cross-links are added by the filer
    repos: tuple[str, ...]  # primary first
    label: str = "perf-regression-bot"
    linked_title: str | None = None
    linked_body: str | None = None
    sizes: tuple[tuple[str, float], ...] = ()

    def title_for(self, repo: str) -> str:
        primary = repo == self.repos[0] or self.linked_title is None
        return self.title if primary else str(self.linked_title)

    def body_for(self, repo: str) -> str:
        primary = repo == self.repos[0] or self.linked_body is None
        return self.body if primary else str(self.linked_body)


@dataclass(frozen=True)
class GuardIssue:
    guard: GuardKind
    spec: IssueSpec
    state: SyncState
    note: str
    machine: str = ""


def issue_key(machine: str, base_sha: str, repo: str, pr: int, guard: GuardKind = "ratio") -> str:
    if not _REPO.fullmatch(repo) or pr < 1:
        raise ValueError(f"not a repository and PR number: {repo!r} #{pr}")
    key = f"{FAMILY}|{machine}|{base_sha[:12]}..{repo}#{pr}"
    return key if guard == "ratio" else f"{key}|{guard}"


def _owns(repo: str, word: str) -> bool:
    return word in repo.lower()


def repos_for(
    g: Guard, repos: tuple[str, ...], v: Verdict | None = None, owner: str | None = None
) -> tuple[str, ...]:
    """Primary first: nvFuser's repository for its fusion's slowdown (or a broken nvFuser
    point), Thunder's for Thunder's kernels or broken Thunder points; for the ratio, which
    either side can move, the owner the fusion hints name (bot/fusion/attribute.py), else the
    side whose own kernel time moved, else the configured order."""
    word = None
    if g.kind == "ratio" and owner in ("thunder", "fuser"):
        return tuple(sorted(repos, key=lambda r: not _owns(r, owner)))
    thunder = v.guard("thunder") if v else None
    nvfuser = v.guard("nvfuser") if v else None
    if g.kind == "nvfuser" or (
        g.kind == "broken" and any(p.key.variant == "nvfuser" for p in g.points)
    ):
        word = "fuser"
    elif g.kind in ("thunder", "broken"):
        word = "thunder"
    elif g.kind == "ratio" and thunder and nvfuser and thunder.alarming != nvfuser.alarming:
        word = "thunder" if thunder.alarming else "fuser"
    if word is None:
        return repos
    return tuple(sorted(repos, key=lambda r: not _owns(r, word)))


def sync_state(g: Guard, v: Verdict) -> SyncState:
    """Open on alarm; close only on evidence that what the guard tracks is fine again: every
    one of its points measured at both sides, none regressed or unsure (even set aside as
    uncorroborated). A point that stopped running, or was not measured, is no such evidence."""
    if g.alarming:
        return "regressed"
    if g.state not in ("no change", "improved"):
        return "hold"
    if g.kind != "broken" and any(
        p.cmp is None or p.state in ("regressed", "unsure") for p in g.points
    ):
        return "hold"
    nv = v.guard("nvfuser")
    if g.kind == "ratio" and nv is not None and nv.state not in ("no change", "improved"):
        return "hold"  # the ratio may be back only because nvFuser's fusion got slower
    return "recovered"


def issue_title(v: Verdict, g: Guard, ctx: Context) -> str:
    """Plain text (titles are not markdown), one line, within GitHub's 256 characters."""
    amount = ""
    flagged = [a for a in g.aggregates if a.state == "regressed"] or list(g.aggregates)
    if g.kind == "broken":
        amount = f" ({sum(p.state == 'broken' for p in g.points)} point(s))"
    elif flagged:
        worst = max(flagged, key=lambda a: a.geomean.estimate)
        amount = f" ({worst.variant} geomean {100 * (worst.geomean.estimate - 1):+.1f}%)"
    where = f" in {ctx.repo}#{ctx.pr}" if ctx.repo and ctx.pr is not None else ""
    title = f"RMSNorm backward: {TITLE_WHAT[g.kind]} on {v.machine}{amount}{where}"
    return "".join(c if c.isprintable() else " " for c in title)[:256]


def evidence(v: Verdict, g: Guard) -> list[str]:
    bad: list[PointVerdict] = worst_first(p for p in g.points if p.state in ("regressed", "broken"))
    if g.kind == "broken":
        return ["", BROKEN_HEADER, *(broken_row(p) for p in g.points[:MAX_MAIN_ROWS])]
    if g.kind == "ratio":
        return ["", MAIN_HEADER, *(main_row(p, v) for p in (bad or list(g.points))[:MAX_MAIN_ROWS])]
    return ["", KERNEL_HEADER, *(kernel_row(p, v) for p in (bad or list(g.points))[:MAX_MAIN_ROWS])]


def issue_body(v: Verdict, g: Guard, ctx: Context, hints: Hints | None = None) -> str:
    """The evidence: the whole headline, then this guard's points, then what changed inside
    the fusion (open, not folded: it is the first clue); the key marker is added later by the
    filer. A summarised sweep (bot/tell/summary.py) shows its points by variant and dtype and
    stays under SUMMARY_CHARS: fewer worst rows, then the reproducer, then the hints go first."""
    if not is_summarised(v):
        return _body(v, g, ctx, hints, evidence(v, g), 40_000)
    body = ""
    for k, script in LADDER:
        body = _body(v, g, ctx, hints, guard_evidence(v, g, k), SUMMARY_CHARS, script)
        if len(body) <= SUMMARY_CHARS and METHOD_SECTION in body:  # nothing cut
            return body
    return _body(v, g, ctx, None, guard_evidence(v, g, 0), SUMMARY_CHARS)


def _body(
    v: Verdict,
    g: Guard,
    ctx: Context,
    hints: Hints | None,
    evidence: list[str],
    limit: int,
    script: bool = True,
) -> str:
    lines = header(v, ctx)[1:]  # no comment marker: this is not the sticky comment
    lines += ["", f"**This issue tracks: {escape_md(g.title)}** ({g.state})", *evidence]
    if hints is not None:
        lines += ["", f"### {SUMMARY}", "", hints_markdown(hints, script=script)]
    if ctx.site_url and g.kind == "ratio":
        bad = [p for p in g.points if p.state == "regressed"][:10]
        graphs = [link(point_name(p.key), graph_url(ctx.site_url, p.key, v.machine)) for p in bad]
        if graphs:
            lines += ["", "History: " + ", ".join(graphs)]
    sections = [Section(METHOD_SECTION, METHOD, (), 0)]
    return fit("\n".join(lines), sections, limit=limit)


def update_note(v: Verdict, g: Guard, ctx: Context) -> str:
    """One comment on a linked issue: what the latest run of this PR found for its guard."""
    run = f" ({link('CI run', ctx.run_url)})" if ctx.run_url else ""
    state = {"regressed": "still regressed", "broken": "still broken"}.get(
        g.state, f"now {g.state}"
    )
    if g.kind == "ratio" and sync_state(g, v) == "hold" and g.state in ("no change", "improved"):
        state += " (but nvFuser's fusion got slower, so this is not a recovery)"
    summary = escape_md(g.summary, 600)
    return f"Head {v.head[:12]} against base {v.base[:12]}: {g.title}: {state}; {summary}{run}."


def guard_issues(
    v: Verdict,
    ctx: Context,
    repos: tuple[str, ...],
    label: str,
    *,
    held: str | None = None,
    hints: Hints | None = None,
) -> tuple[GuardIssue, ...]:
    """What bot/github/issues.py files, updates, notes or closes for this PR's verdict; with
    ``held`` (why this machine does not gate), every issue is held and its note says why."""
    if ctx.repo is None or ctx.pr is None:
        raise ValueError("an issue needs the PR it is about (repo and number)")
    out = []
    for g in v.guards:
        spec = IssueSpec(
            key=issue_key(v.machine, v.base, ctx.repo, ctx.pr, g.kind),
            title=issue_title(v, g, ctx),
            body=issue_body(v, g, ctx, hints),
            repos=repos_for(g, repos, v, hints.attribution.owner if hints else None),
            label=label,
        )
        state, note = sync_state(g, v), update_note(v, g, ctx)
        if held is not None:
            state, note = "hold", f"{note} Not acted on: {escape_md(held, 300)}."
        out.append(GuardIssue(g.kind, spec, state, note, v.machine))
    return tuple(out)

"""A bisect's outcome in words: the command's text, and the issue's "bisect" section (pure).

The section is one comment on the linked issue, found again by its hidden marker (one a
package, and a fusion of the catalog other than RMSNorm backward) and rewritten in place on
every run, so a resumed or repeated bisect leaves one section saying the latest answer. The
words name the fusion bisected where it is not RMSNorm backward, whose texts are those from
before the catalog. Build names come from the command line or an index: they are escaped
like any text from outside.
"""

from __future__ import annotations

from bot.bisect.classify import Figure
from bot.bisect.driver import Outcome, Plan, Row
from bot.bisect.points import DEFAULT_VARIANTS
from bot.bisect.render import Bracket, bracket, gpu_seconds, reason, what_changed
from bot.bisect.search import most_measurements
from bot.fusion.names import on_fusion
from bot.results.types import DEFAULT_FUSION
from bot.tell.markdown import escape_md, pct
from bot.tell.under_test import NAMES as PACKAGE_NAMES

MARKER = "<!-- fusion-perfbot-bisect:{} -->"
GUARD_WORDS = {"ratio": "ratio", "thunder": "Thunder kernels", "nvfuser": "nvFuser kernel"}
HEADLINES = {
    "found": "first bad build found",
    "stuck": "stopped without an answer",
    "unfinished": "unfinished (resumes from its state file)",
}


def marker(package: str, fusion: str = DEFAULT_FUSION) -> str:
    """One section a package and fusion: a PR's issue may hold bisects of two fusions."""
    return MARKER.format(package if fusion == DEFAULT_FUSION else f"{package}:{fusion}")


def _order(f: Figure) -> tuple[int, int, str]:
    guards, variants = list(GUARD_WORDS), list(DEFAULT_VARIANTS)
    g = guards.index(f.guard) if f.guard in guards else len(guards)
    v = variants.index(f.variant) if f.variant in variants else len(variants)
    return g, v, f.variant


def _figures(figs: tuple[Figure, ...]) -> str:
    """The ratio first (what the comment leads with), then each side's own kernel time."""
    parts: dict[str, list[str]] = {}
    for f in sorted(figs, key=_order):
        shown = f"{f.variant} {pct(f.estimate)} [{pct(f.low)}, {pct(f.high)}]"
        parts.setdefault(GUARD_WORDS.get(f.guard, f.guard), []).append(shown)
    return "; ".join(f"{g}: {', '.join(v)}" for g, v in parts.items())


def _class(row: Row) -> str:
    return row.label or "-"


def _counts(outcome: Outcome, *, this_call: bool) -> str:
    """The measurements used against the builds (the section leaves out what this call did,
    so that a call that measured nothing rewrites nothing)."""
    n = len(outcome.rows)
    now = f"{outcome.measured_now} in this call, " if this_call else ""
    return (
        f"{outcome.measurements} measurement(s) for {n} builds (one step needs at most "
        f"{most_measurements(n)}, unsure re-runs aside); {now}"
        f"{gpu_seconds(outcome):.0f} s of measuring in all"
    )


def culprit(outcome: Outcome, plan: Plan, *, markdown: bool) -> str | None:
    """The first bad upstream commit, with its link, title, author and date; or, where the
    known-bad build itself is first bad after the last commit measured good, that the commits
    listed between do not hold the change."""
    if outcome.status != "found" or not plan.upstream:
        return None
    b = bracket(outcome)
    assert b.first_bad is not None and b.last_good is not None
    commit = plan.commit_of(b.first_bad)
    if commit is None:
        if b.first_bad == plan.timeline.bad.name and plan.commit_of(b.last_good):
            return (
                "none of the upstream commits listed between the two builds: the newest of them "
                "measured good, so what changed came with the known-bad build itself (a "
                "commit after the range, or how the build was made)"
            )
        return None
    who = commit.author_name + (f" ({commit.author_login})" if commit.author_login else "")
    day = commit.date[:10]
    if not markdown:
        return f"{commit.sha[:12]} {commit.title} by {who}, {day}: {commit.url}"
    # The link is made from the repository and the sha only; nobody is @-mentioned: the
    # maintainers decide whom to ask.
    title = escape_md(commit.title, 200)
    return (
        f"[`{commit.sha[:12]}`]({commit.url}) {title}, by {escape_md(who, 150)}, {escape_md(day)}"
    )


def to_text(outcome: Outcome, plan: Plan) -> str:
    b, why, change = bracket(outcome), reason(outcome), what_changed(outcome, plan)
    lines = [f"bisect {plan.timeline.package}{on_fusion(plan.fusion)}: {HEADLINES[outcome.status]}"]
    if outcome.status == "found":
        if commit := culprit(outcome, plan, markdown=False):
            lines.append(f"first bad commit: {commit}")
        lines += [f"first bad build: {b.first_bad}", f"last good build: {b.last_good}"]
    else:  # a bracket is not an answer: the first bad build lies inside it
        lines.append(f"no first bad build named; {_bracket_words(b, escape=False)}")
    if why:
        lines.append(f"why: {why}")
    if change:
        lines.append(f"what changed: {change.url or change.text}")
    lines += [
        _counts(outcome, this_call=True),
        f"machine {outcome.machine or '-'}; points ({len(plan.points)}): "
        f"{', '.join(plan.points)}; variants: {', '.join(plan.variants)}",
    ]
    if noise := _noise(outcome):
        lines.append(f"noise: {noise}")
    lines.append("")
    width = max(len(r.name) for r in outcome.rows)
    for row in outcome.rows:
        figs = _figures(row.judged.figures) if row.judged else ""
        lines.append(
            f"{row.index:>3}  {row.name:<{width}}  {_class(row):<9} {len(row.runs)} run(s)"
            + (f"  {figs}" if figs else "")
        )
    return "\n".join(lines) + "\n"


def section(outcome: Outcome, plan: Plan) -> str:
    """The issue's bisect comment: the answer first, then every build measured."""
    t, b = plan.timeline, bracket(outcome)
    name = PACKAGE_NAMES.get(t.package, t.package)
    change, why = what_changed(outcome, plan), reason(outcome)
    lines = [
        marker(t.package, plan.fusion),
        f"### Bisect of {name} builds{on_fusion(plan.fusion)}: {HEADLINES[outcome.status]}",
        "",
    ]
    if outcome.status == "found":
        if commit := culprit(outcome, plan, markdown=True):
            lines.append(f"- **First bad commit:** {commit}")
        lines += [
            f"- **First bad build:** {_build(b.first_bad)}",
            f"- **Last good build:** {_build(b.last_good)}",
        ]
    else:
        lines.append(f"- **No first bad build named.** {_bracket_words(b, escape=True)}")
    if change:
        shown = escape_md(change.text, 300)
        lines.append(f"- **What changed:** {change.markdown(shown)}")
    if why:
        lines.append(f"- **Why it stopped:** {escape_md(why, 500)}")
    lines += [
        f"- {_counts(outcome, this_call=False)}, on {escape_md(outcome.machine or '-')}; "
        "each build decided against the known-good one by the bot's verdict at "
        f"{', '.join(escape_md(p) for p in plan.points)} "
        f"({', '.join(escape_md(v) for v in plan.variants)})"
        + (f"; intervals: {escape_md(noise)}" if (noise := _noise(outcome)) else ""),
        "",
        "| # | build | class | runs | geometric-mean change against the known-good build |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in outcome.rows:
        if not row.runs:
            continue
        figs = escape_md(_figures(row.judged.figures), 1000) if row.judged else ""
        lines.append(
            f"| {row.index} | {_row_name(row, plan)} | {_class(row)} | {len(row.runs)} | {figs} |"
        )
    return "\n".join(lines) + "\n"


def _row_name(row: Row, plan: Plan) -> str:
    """An upstream commit by its link and title (its git spec says only the sha)."""
    commit = plan.commit_of(row.name)
    if commit is None:
        return escape_md(row.name)
    return f"[`{commit.sha[:12]}`]({commit.url}) {escape_md(commit.title, 120)}"


def _noise(outcome: Outcome) -> str | None:
    """Which noise model the decisions used (the known-bad build's verdict, decided first):
    without one, intervals see only within-run noise and a bisect calls builds bad too easily,
    so the answer must say so."""
    judged = [row.judged for row in reversed(outcome.rows) if row.judged and row.judged.noise]
    return judged[0].noise if judged else None


def _bracket_words(b: Bracket, *, escape: bool) -> str:
    """Where the measurements leave the answer, said as a bracket, never as the answer."""

    def shown(name: str | None) -> str:
        if name is None:
            return "none yet"
        return escape_md(name) if escape else name

    return (
        f"last build measured good: {shown(b.last_good)}; first measured bad: "
        f"{shown(b.first_bad)} (the first bad build is that one or one before it)"
    )


def _build(name: str | None) -> str:
    return escape_md(name) if name else "not known yet"

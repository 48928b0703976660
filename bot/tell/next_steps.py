"""What a reader can do next, and what happens to the alert (pure): the comment's last words on
the first screen.

Why each step is a command or a link: a maintainer who reads "unsure" or "regressed" needs the
one thing to type (acknowledge, reproduce, settle with more runs), not the method. The rules
behind them are in docs/ALERTS.md, linked from the footer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.alert.ack import AckDecision
from bot.alert.model import Alert
from bot.alert.plan import IssuePlan
from bot.alert.status import Status
from bot.decide.types import Verdict
from bot.results.types import DEFAULT_FUSION, Provenance
from bot.tell.markdown import command, escape_md, link
from bot.tell.under_test import under_test
from bot.tell.words import more_runs

#: What may go into a command line shown to be typed: a distribution name and a version,
#: nothing else from the runner's record (a reader copies it; it must be plain).
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+!-]{0,60}")


@dataclass(frozen=True)
class AlertPart:
    """The PR flow's decisions the comment reports (bot/commands/pr.py)."""

    alert: Alert
    ack: AckDecision
    plan: IssuePlan
    status: Status
    issues: tuple[tuple[str, str], ...]  # (label, url) of the alert's issues
    ack_label: str
    hidden: str  # the state marker the next run reads (bot/tell/comment_state.py)


def told_lines(alert: Alert) -> tuple[str, ...]:
    """A line for each other configured repository: whether it got the linked issue, and why."""
    return tuple(
        f"{escape_md(t.repo)} {'has the linked issue' if t.told else 'is not told'}: "
        f"{escape_md(t.why, 300)}."
        for t in alert.told
    )


def alert_lines(part: AlertPart) -> list[str]:
    """The alert in a line or two: what is filed where (or when it will be), who decided."""
    alert, plan, ack = part.alert, part.plan, part.ack
    lines = []
    if part.issues:
        lines.append("**Alert issues:** " + ", ".join(link(lab, url) for lab, url in part.issues))
    if alert.sections and not alert.repos:
        lines.append(
            f"**Alert:** {escape_md(plan.why)}; the comment and the status are the report."
        )
    elif alert.sections:
        lines.append(
            f"**Alert:** owner {escape_md(alert.owner)} ({escape_md(alert.owner_why)}); "
            f"{escape_md(plan.why)}."
        )
        lines += told_lines(alert)
    elif plan.action in ("abandon", "acknowledge") or (plan.action == "recover" and part.issues):
        lines.append(f"**Alert:** {escape_md(plan.why)}.")
    if ack.words:
        lines.append(f"**{escape_md(ack.words[0].upper() + ack.words[1:], 500)}.**")
    lines += [f"Not counted: {escape_md(r, 300)}." for r in ack.refused]
    return lines


def _sides(reports: Sequence[Verdict]) -> tuple[str, str]:
    v = reports[0]
    return v.base[:12], v.head[:12]


def _requirement(prov: Provenance | None) -> str | None:
    u = under_test(prov)
    if u is None:
        return None
    name, version = u.get("distribution"), u.get("version")
    if not (isinstance(name, str) and isinstance(version, str)):
        return None
    if not (_PLAIN.fullmatch(name) and _PLAIN.fullmatch(version)):
        return None
    return f"{name}=={version}"


def moved_fusions(verdicts: Sequence[Verdict]) -> tuple[str, ...]:
    """The fusions of the verdicts that regressed or broke, when one of them is not RMSNorm
    backward (whose commands stay as they were): the ones worth measuring again."""
    moved = {
        p.key.fusion for v in verdicts if v.overall in ("regressed", "broken") for p in v.points
    }
    return tuple(sorted(moved)) if moved - {DEFAULT_FUSION} else ()


def measure_command(
    base: str,
    head: str,
    provenance: tuple[Provenance | None, Provenance | None],
    fusions: Sequence[str] = (),
) -> str:
    """The command that measures both sides again on a GPU machine: this repository's suite at
    the two commits (``fusions``: those alone), or, where a package under test was compared,
    its two builds. Built by :func:`~bot.tell.markdown.command` alone: a token it refuses
    (a name that did not pass bot/results/names.py) is a bug, never text for a reader to run."""
    b, h = (_requirement(p) for p in provenance)
    package = under_test(provenance[1]) or {}
    name = package.get("package")
    if b and h and name in ("thunder", "nvfuser"):
        under = ["python", "-m", "benchmarks.under_test", "--package", str(name)]
        return command([*under, "--base", b, "--head", h, "--repeats", "2", "--results", "results"])
    only = ["--fusions", ",".join(fusions)] if fusions else []
    run = ["bash", "benchmarks/run_gpu.sh", "--size-set", "pr", *only, "--results", "results"]
    return (
        f"in this suite's checkout, {command(['git', 'checkout', base], run)}, "
        f"the same at {command([head])}"
    )


def _report(base: str, head: str, *folders: str) -> str:
    results = [arg for f in folders for arg in ("--results", f)]
    return command(["python", "-m", "bot", "report", *results, "--base", base, "--head", head])


def next_steps(
    verdicts: Sequence[Verdict],
    *,
    run_url: str | None,
    ack_label: str | None,
    acknowledged: bool,
    has_reproducer: bool,
    provenance: tuple[Provenance | None, Provenance | None] = (None, None),
    filed: bool = False,
    not_gating: Sequence[str] = (),
) -> list[str]:
    """The steps for the worst state the verdicts have; none when there is nothing to do.
    ``filed``: the alert's issues exist (acknowledging closes them, it no longer prevents
    them); ``not_gating``: why machines shown do not count (each offers the re-run). A break
    leads with what failed and how to reproduce it: an acknowledgement is not the first thing
    to offer for a head that no longer works."""
    rerun = link("re-run the benchmark job", run_url) if run_url else "re-run the benchmark job"
    steps = [f"**Re-run:** {rerun}: {escape_md(why, 400)}." for why in not_gating]
    if not verdicts:
        return steps
    states = {v.overall for v in verdicts}
    base, head = _sides(verdicts)
    report = _report(base, head, "results")
    if "broken" in states:
        steps.append("**Broken:** each error is above once, with the points it hit.")
    if "regressed" in states or "broken" in states:
        alone = " (or the reproducer below, the worst point alone)" if has_reproducer else ""
        steps.append(
            f"**Reproduce** on a GPU{alone}: "
            f"{measure_command(base, head, provenance, moved_fusions(verdicts))}, "
            f"then {report}."
        )
    if ("regressed" in states or "broken" in states) and not acknowledged and ack_label:
        then = "its alert issues close as not planned" if filed else "no issue is filed"
        ack = (
            "**Intended?** A maintainer comments `/perfbot ack <why>` (or adds the "
            f"`{escape_md(ack_label)}` label): the status turns green, {then}."
        )
        steps.insert(0 if "broken" not in states else len(steps), ack)
    if "unsure" in states:
        settle = max(more_runs(p) for v in verdicts for p in v.points + v.kernels)
        more = f"about {settle} more run(s) a side" if settle else "more runs a side"
        steps.append(
            f"**Unsure** means {more} would settle it: {rerun}, then judge both runs together "
            f"with {_report(base, head, 'RUN1', 'RUN2')} (each run's artifact unpacked; the "
            "runs of a side are replicates)."
        )
    if "regressed" in states or "broken" in states:
        steps.append(f"**Re-run:** {rerun}; the verdict allows for run-to-run noise already.")
    return steps

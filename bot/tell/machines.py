"""One comment for several machines (pure): a PR benchmarked on several GPU runners.

Each machine is decided on its own (its own runs, its own noise model: bot/decide/verdict.py
uses the configured model only on the machine it was measured on), so the comment is an
overall headline (the worst state, naming the machines that have it), a table with one row a
machine (a machine with one side only: "not compared"), then each machine's own comment under
its name, and the method once. With one machine, compared, the comment is exactly the
one-machine comment (bot/tell/comment.py).

A machine whose runner check failed (bot/results/hygiene.py) measured a GPU in a state the
noise model never saw: its section says so first, which side and repeat, with the problems,
and it does not gate (bot/commands/inputs.py gives it exit 0, its issues are held).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from bot.decide.types import Verdict
from bot.decide.unjudged import unjudged
from bot.fusion.hints import Hints
from bot.results.types import CommitResults, Provenance, RunCheck
from bot.tell.comment import (
    HEADLINE,
    MARKER,
    METHOD,
    METHOD_SECTION,
    TITLE,
    Context,
    comment_parts,
    headline_words,
)
from bot.tell.markdown import MAX_CHARS, Section, details, escape_md, fit, fit_whole
from bot.tell.rows import ICON
from bot.tell.summary import LADDER, SUMMARY_CHARS, WORST, is_summarised
from bot.tell.uncalibrated import uncalibrated_warning

__all__ = ["MachineReport", "check_notes", "check_warning", "render_report", "worst_state"]

#: Worst first: the overall headline is the first of these any machine has.
ORDER = (
    "broken",
    "regressed",
    "unsure",
    "uncalibrated",
    "inconclusive (no data)",
    "no change",
    "improved",
)
#: Failed checks listed in a machine's warning before "and N more".
MAX_LISTED = 10
Links = Mapping[str, tuple[tuple[str, str], ...]]


@dataclass(frozen=True)
class MachineReport:
    """One machine's verdict and runs; no verdict when it has one side only (``missing``)."""

    machine: str
    verdict: Verdict | None
    base_runs: tuple[CommitResults, ...] = ()
    head_runs: tuple[CommitResults, ...] = ()
    missing: str | None = None
    hints: Hints | None = None  # what changed inside the fusion, when both sides were captured
    #: Why no noise model covers this machine (it is shown, not judged), or None.
    uncalibrated: str | None = None

    @property
    def base(self) -> Provenance | None:
        return self.base_runs[0].provenance if self.base_runs else None

    @property
    def head(self) -> Provenance | None:
        return self.head_runs[0].provenance if self.head_runs else None

    def runs(self) -> list[tuple[str, CommitResults]]:
        return [*(("base", r) for r in self.base_runs), *(("head", r) for r in self.head_runs)]

    @property
    def failed_checks(self) -> list[tuple[str, str, RunCheck]]:
        """(side, results folder, failed check) of every run whose runner check failed."""
        return [(side, r.folder, c) for side, r in self.runs() if r.checks for c in r.checks.failed]

    @property
    def held(self) -> str | None:
        """Why this machine does not gate, or None when it does."""
        if not self.failed_checks:
            return None
        sides = sorted({side for side, _, _ in self.failed_checks})
        return f"a runner check failed on {self.machine} ({' and '.join(sides)})"

    @property
    def gates(self) -> bool:
        """Its verdict counts: compared, its runner check passed, a noise model covers it."""
        return self.verdict is not None and self.held is None and self.uncalibrated is None


def check_warning(m: MachineReport) -> list[str]:
    """The prominent block under a machine's headline when a runner check failed."""
    failed = m.failed_checks
    if not failed:
        return []
    lines = [
        "> ⚠️ **A runner check failed: this machine's verdict does not gate** (it sets no "
        "failing exit code, and its linked issues are neither opened nor closed). The "
        "measurements below were taken on a GPU the check found unfit:"
    ]
    for side, folder, c in failed[:MAX_LISTED]:
        problems = "; ".join(escape_md(p, 200) for p in c.problems[:5])
        more = f" (and {len(c.problems) - 5} more)" if len(c.problems) > 5 else ""
        lines.append(
            f"> - **{side}**, {escape_md(folder, 60)}, {escape_md(c.when, 10)} the measurement "
            f"({escape_md(c.checked_at, 40)}): {problems}{more}"
        )
    if len(failed) > MAX_LISTED:
        lines.append(f"> - and {len(failed) - MAX_LISTED} more failed check(s)")
    return lines


def check_notes(m: MachineReport) -> list[str]:
    """A note line when the runner checked this machine's runs and every check passed; none
    for results without checks (old data reads as before)."""
    runs = m.runs()
    checked = [r for _, r in runs if r.checks is not None]
    if not checked or m.failed_checks:
        return []
    unchecked = len(runs) - len(checked)
    rest = f"; {unchecked} run(s) not checked" if unchecked else ""
    return [f"- Runner checks: {len(checked)} of {len(runs)} run(s) checked, all passed{rest}"]


def worst_state(reports: Sequence[MachineReport]) -> str:
    states = {shown(m).overall for m in reports if m.verdict is not None}
    return next((s for s in ORDER if s in states), "inconclusive (no data)")


def _machine_row(m: MachineReport) -> str:
    name = escape_md(m.machine, 100)
    if m.verdict is None:
        why = escape_md(m.missing or "not compared", 300)
        return f"| {name} | ⚫ not compared | | no | {why} |"
    v = shown(m)
    gates = (
        "yes" if m.gates else "no: uncalibrated" if m.uncalibrated else "no: a runner check failed"
    )
    words = escape_md(headline_words(v), 300)
    state = f"{ICON.get(v.overall, '⚪' if v.overall == 'uncalibrated' else '⚫')} {v.overall}"
    return f"| {name} | {state} | {v.runs[0]}, {v.runs[1]} | {gates} | {words} |"


def shown(m: MachineReport) -> Verdict:
    """The verdict as the comment shows it: an uncalibrated machine's is not judged."""
    assert m.verdict is not None
    return m.verdict if m.uncalibrated is None else unjudged(m.verdict, m.uncalibrated)


def _headline(reports: Sequence[MachineReport]) -> str:
    worst = worst_state(reports)
    having = [m for m in reports if m.verdict is not None and shown(m).overall == worst]
    names = ", ".join(
        escape_md(m.machine, 100) + (" (not gating)" if m.held else "") for m in having
    )
    return f"{HEADLINE[worst]} on {names}"


def _one(
    m: MachineReport,
    ctx: Context,
    links: Links,
    *,
    full: bool = False,
    worst: int = WORST,
    script: bool = True,
) -> tuple[list[str], list[Section]]:
    assert m.verdict is not None
    c = replace(ctx, issue_links=tuple(links.get(m.machine, ())))
    return comment_parts(
        shown(m),
        c,
        m.base,
        m.head,
        warning=[*uncalibrated_warning(m), *check_warning(m)],
        notes=check_notes(m),
        hints=m.hints,
        full=full,
        worst=worst,
        script=script,
    )


#: ``full``: no limit at all (the console's ``report --full``, never posted).
UNLIMITED = 10**9


def _fitted(
    m: MachineReport, ctx: Context, links: Links, limit: int, *, full: bool, alone: bool
) -> str:
    """One machine's part within ``limit``: a summarised sweep takes the first rung of
    :data:`LADDER` at which nothing is cut, else the last one cut to fit (the least needed
    sections first), else a pointer to the command that prints it."""
    assert m.verdict is not None
    summarised = is_summarised(m.verdict) and not full
    text = ""
    for k, script in LADDER if summarised else ((WORST, True),):
        lines, sections = _one(m, ctx, links, full=full, worst=k, script=script)
        if not alone:  # under the overall headline: no marker, no title, the method once
            lines = lines[3:]
            sections = [sec for sec in sections if sec.summary != METHOD_SECTION]
        whole = fit_whole("\n".join(lines), sections, limit) if summarised else None
        if whole is not None:
            return whole
        text = fit("\n".join(lines), sections, limit=limit)
        if not summarised:
            return text
    if len(text) <= limit:
        return text
    name = escape_md(m.machine, 100)
    return (
        f"{HEADLINE[m.verdict.overall]} on {name}: too long to show here; "
        f"`fusion-perfbot report --machine {name}` prints it."
    )


def render_report(
    reports: Sequence[MachineReport],
    ctx: Context,
    links: Links,
    *,
    full: bool = False,
    reserve: int = 0,
) -> str:
    """The sticky comment for every machine, marker first, under :data:`MAX_CHARS` (a
    summarised sweep: under :data:`~bot.tell.summary.SUMMARY_CHARS`) less ``reserve`` (what
    the caller adds: bot/tell/alert_comment.py); `links` are each machine's linked issues
    (label, url). ``full``: every row, no limit (for the console)."""
    compared = [m for m in reports if m.verdict is not None]
    summarised = any(m.verdict is not None and is_summarised(m.verdict) for m in compared)
    limit = UNLIMITED if full else (SUMMARY_CHARS if summarised else MAX_CHARS) - reserve
    if len(reports) == 1 and compared:
        return _fitted(compared[0], ctx, links, limit, full=full, alone=True)
    top = [MARKER, TITLE, "", _headline(reports), ""]
    top += [MACHINE_HEADER, *(_machine_row(m) for m in reports)]
    method = details(METHOD_SECTION, METHOD)
    share = (limit - len("\n".join(top)) - len(method) - 400) // max(len(compared), 1)
    parts = ["\n".join(top)]
    for m in reports:
        parts.append(f"---\n\n#### Machine {escape_md(m.machine, 100)}")
        if m.verdict is None:
            parts.append(f"Not compared: {escape_md(m.missing or 'one side only', 300)}.")
            continue
        parts.append(_fitted(m, ctx, links, share, full=full, alone=False))
    parts += ["---", method]
    return "\n\n".join(parts)


MACHINE_HEADER = (
    "| machine | verdict | runs of base, head | gates | in words |\n|---|---|---|---|---|"
)

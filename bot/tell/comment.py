"""The sticky PR comment (pure): the view of every machine's verdict, rendered by
bot/tell/templates/comment.md.j2, within GitHub's limit.

With one machine the comment is that machine's part under the headline; with several, the
headline is the worst state over them (naming the machines that have it) and each machine has
its own lines, decided on its own runs and noise model (bot/decide/verdict.py). A machine
whose runner check failed, or that no noise model covers, says so first and does not gate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from bot.alert.status import CONTEXT
from bot.decide.level import level_of
from bot.results.types import DEFAULT_FUSION
from bot.tell.context import Context, doc_link
from bot.tell.hints import gap_clue
from bot.tell.level import PREFIX as LEVEL_PREFIX
from bot.tell.level import level_text
from bot.tell.machines import (
    ORDER,
    MachineReport,
    check_notes,
    check_warning,
    drift_warning,
    shown,
    worst_state,
)
from bot.tell.markdown import escape_md, link
from bot.tell.next_steps import AlertPart, alert_lines, next_steps
from bot.tell.render import render
from bot.tell.uncalibrated import calibration_fold, uncalibrated_warning
from bot.tell.view import STATE_WORDS, CommentView, MachineView, headline, machine_view
from bot.tell.words import ICON

__all__ = ["MARKER", "AlertPart", "Context", "comment_view", "render_report"]

MARKER = "<!-- fusion-perfbot:rmsnorm-bwd -->"


def _posts_script(m: MachineReport) -> bool:
    """Whether the comment posts the unit's reproducer: RMSNorm backward's is a standalone
    script; another fusion's runs in the suite's checkout, as the comment's Reproduce step
    does already, so only its alert issue carries it (the comment stays within its budget)."""
    return m.fusion == DEFAULT_FUSION


def _machine(
    m: MachineReport, ctx: Context, *, full: bool, script: bool, name: str | None = None
) -> MachineView:
    name = name or m.machine
    if m.verdict is None:
        why = escape_md(m.missing or "one side only", 300)
        return MachineView(escape_md(name, 100), "not compared", "⚫", "", not_compared=why)
    view = machine_view(
        shown(m),
        m.base,
        m.head,
        name=name,
        warning=[*uncalibrated_warning(m), *check_warning(m), *drift_warning(m)],
        notes=check_notes(m),
        hints=m.hints,
        full=full,
        script=script and _posts_script(m),
        site_url=ctx.site_url,
    )
    steps = calibration_fold(m)
    return replace(view, folds=(*view.folds, steps)) if steps else view


def _rerun_why(m: MachineReport) -> str | None:
    """Why a re-run is what to do for a machine that does not gate (a drifted runner, a
    failed runner check); an uncalibrated machine needs a noise model, not a re-run."""
    if m.uncalibrated is not None:
        return None
    return m.drift.short if m.drift is not None else m.held


def _headline(
    reports: Sequence[MachineReport], name: Callable[[MachineReport], str] | None = None
) -> tuple[str, str]:
    """(icon, words): one machine's own headline, or the worst state and who has it (a
    catalog that did not move says so without naming every fusion)."""
    name = name or (lambda m: m.machine)
    compared = [m for m in reports if m.verdict is not None]
    if len(reports) == 1 and compared:
        v = shown(compared[0])
        return ICON.get(v.overall, "⚫"), headline(v)
    worst = worst_state(reports)
    having = [m for m in compared if shown(m).overall == worst]
    lead = headline(shown(having[0])) if having else STATE_WORDS.get(worst, worst)
    if _is_catalog(reports) and all(_quiet(m) for m in reports):
        return ICON.get(worst, "⚫"), lead
    names = ", ".join(
        escape_md(name(m), 100) + (" (not gating)" if m.not_gating else "") for m in having
    )
    return ICON.get(worst, "⚫"), f"{lead} on {names}" if names else lead


def _is_catalog(reports: Sequence[MachineReport]) -> bool:
    """More than one fusion: the comment is the catalog's (bot/tell/machines.py)."""
    return len({m.fusion for m in reports}) > 1


def _quiet(m: MachineReport) -> bool:
    """A fusion the catalog's comment tells in its one "no change" line: judged, unmoved."""
    return m.verdict is not None and m.gates and shown(m).overall == "no change"


def _namer(reports: Sequence[MachineReport]) -> Callable[[MachineReport], str]:
    """How the comment names a report: its machine; in a catalog its fusion, and the machine
    too when there are several."""
    if not _is_catalog(reports):
        return lambda m: m.machine
    if len({m.machine for m in reports}) == 1:
        return lambda m: m.title
    return lambda m: f"{m.title} on {m.machine}"  # RMSNorm backward named too, unlike m.where


def _catalog_parts(
    reports: Sequence[MachineReport], name: Callable[[MachineReport], str]
) -> tuple[list[MachineReport], str, tuple[str, ...]]:
    """The fusions that moved (worst first), the line for the rest, and every fusion's level
    (a line each, for a fold): a catalog that did not move needs one screen to say so. A
    standing gap of a fusion that did not move gets its clue from the captures under its line
    (a fusion that moved has its own section with every hint)."""
    moved = [m for m in reports if not _quiet(m)]
    moved.sort(key=lambda m: ORDER.index(shown(m).overall) if m.verdict is not None else 99)
    quiet = [name(m) for m in reports if _quiet(m)]
    line = ""
    if quiet:
        names = escape_md(", ".join(quiet), 1500)
        line = f"⚪ {len(quiet)} fusion{'s' * (len(quiet) > 1)}: no change ({names})"
    levels = tuple(  # the fold's summary names what the figures are
        f"- {escape_md(name(m), 100)}: {text.removeprefix(f'{LEVEL_PREFIX}: ')}"
        + (f"\n  - {clue}" if _quiet(m) and (clue := gap_clue(m.hints, level_of(shown(m)))) else "")
        for m in reports
        if m.verdict is not None and (text := level_text(shown(m)))
    )
    return moved, line, levels


def _footer(ctx: Context, part: AlertPart | None) -> str:
    parts = [
        doc_link("How this is decided", "METHOD.md", ctx),
        doc_link("how alerts and acknowledgements work", "ALERTS.md", ctx),
    ]
    if ctx.run_url:
        parts.append(link("CI run", ctx.run_url))
    if part is not None:
        parts.append(f"status `{CONTEXT}`: {part.status.kind}")
    return "<sub>" + " · ".join(parts) + "</sub>"


def comment_view(
    reports: Sequence[MachineReport],
    ctx: Context,
    part: AlertPart | None = None,
    *,
    full: bool = False,
    script: bool = True,
) -> CommentView:
    name = _namer(reports)
    icon, words = _headline(reports, name)
    if part is not None and part.ack.holds and words.startswith(("Regressed", "Broken")):
        icon, words = "☑️", f"Acknowledged ({words[0].lower()}{words[1:]})"
    gating = [m for m in reports if m.verdict is not None and m.gates]
    judged = [shown(m) for m in gating]
    hinted = any(
        m.hints is not None and m.hints.reproducer is not None and _posts_script(m) for m in reports
    )
    steps = next_steps(
        judged,
        run_url=ctx.run_url,
        ack_label=part.ack_label if part else None,
        acknowledged=bool(part and part.ack.holds),
        has_reproducer=hinted and script,
        provenance=(gating[0].base, gating[0].head) if gating else (None, None),
        filed=bool(part and part.issues),
        not_gating=list(
            dict.fromkeys(why for m in reports if m.verdict is not None and (why := _rerun_why(m)))
        ),
    )
    levels: tuple[str, ...] = ()
    parts, quiet = list(reports), ""
    catalog = _is_catalog(reports)
    if catalog:
        parts, quiet, levels = _catalog_parts(reports, name)
    machines = [_machine(m, ctx, full=full, script=script, name=name(m)) for m in parts]
    if len(machines) > 1:  # the rows and the reproducer once: a gating machine's, if any
        with_rows = [i for i, m in enumerate(machines) if m.lead is not None]
        gating_rows = [i for i in with_rows if parts[i].gates]
        first = next(iter(gating_rows or with_rows), None)
        machines = [m if i == first else _second(m) for i, m in enumerate(machines)]
    return CommentView(
        marker=MARKER,
        icon=icon,
        headline=words,
        machines=tuple(machines),
        several=len(reports) > 1,
        title=f"{len({m.fusion for m in reports})} fusions" if catalog else "RMSNorm backward",
        quiet=quiet,
        levels=levels,
        alert=tuple(alert_lines(part)) if part else (),
        steps=tuple(steps),
        footer=_footer(ctx, part),
        hidden=part.hidden if part else "",
    )


#: A posted comment's budget, whatever the machines and points (GitHub allows 65,536): past
#: it, details go first (:func:`render_report`).
COMMENT_CHARS = 20_000
CUT = (
    "_Some details were left out to keep this comment short; `fusion-perfbot report --full` "
    "prints them, `--json FILE` writes everything._"
)


def render_report(
    reports: Sequence[MachineReport],
    ctx: Context,
    part: AlertPart | None = None,
    *,
    full: bool = False,
    limit: int = COMMENT_CHARS,
) -> str:
    """The sticky comment for every machine, marker first, within ``limit`` (``full``: every
    row of every guard, no limit): the reproducer goes first, then folds from the last."""
    view = comment_view(reports, ctx, part, full=full)
    text = render("comment.md.j2", v=view)
    if full or len(text) <= limit:
        return text
    view = comment_view(reports, ctx, part, script=False)
    machines = list(view.machines)
    while True:
        text = render("comment.md.j2", v=replace(view, machines=tuple(machines), notes=(CUT,)))
        if len(text) <= limit:
            return text
        cut = next((i for i in reversed(range(len(machines))) if _cuttable(machines[i])), None)
        if cut is None:
            return text[: limit - len(CUT) - 2] + "\n\n" + CUT
        machines[cut] = _less(machines[cut])


def _second(m: MachineView) -> MachineView:
    """Another machine's part: its own guard lines and folds, not the rows and the reproducer
    the first one shows (the same code ran; its hints say whether its fusions differ)."""
    hints = replace(m.hints, script=None) if m.hints is not None else None
    return replace(m, lead=None, hints=hints)


def _cuttable(m: MachineView) -> bool:
    return bool(m.folds or m.hints or m.stack or m.lead)


def _less(m: MachineView) -> MachineView:
    """The machine with its least needed part dropped: the stack, hints, folds, then the rows."""
    if m.stack is not None:
        return replace(m, stack=None)
    if m.hints is not None:
        return replace(m, hints=None)
    if m.folds:
        return replace(m, folds=m.folds[:-1])
    return replace(m, lead=None, lead_caption="")

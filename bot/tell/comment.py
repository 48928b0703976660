"""The sticky PR comment (pure): the run's one decision (bot/alert/decision.py) rendered by
bot/tell/templates/comment.md.j2, within GitHub's limit. Nothing here decides: which fusion is
judged, why another is not, its level and its state come from the decision.

With one fusion on one machine the comment is that unit's part under the headline; with
several, the headline is the worst state over the units judged (naming who has it), what is
not judged says why once, and each unit that moved has its own lines.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from bot.alert.decision import ORDER, Decision, Unit, worst
from bot.alert.owners import SUITE_CHANGED
from bot.alert.status import CONTEXT
from bot.results.types import DEFAULT_FUSION
from bot.tell.context import Context, doc_link
from bot.tell.hints import gap_clue
from bot.tell.level import PREFIX as LEVEL_PREFIX
from bot.tell.level import level_line
from bot.tell.machines import check_notes, check_warning, control_warning
from bot.tell.markdown import escape_md, link
from bot.tell.next_steps import AlertPart, alert_lines, next_steps
from bot.tell.render import render
from bot.tell.stack import stack_warning, unshown_stack_lines
from bot.tell.uncalibrated import (
    AS_MEASURED,
    as_measured_line,
    as_measured_order,
    calibration_fold,
    uncalibrated_warning,
)
from bot.tell.view import STATE_WORDS, CommentView, Fold, MachineView, headline, machine_view
from bot.tell.words import ICON

__all__ = ["MARKER", "AlertPart", "Context", "comment_view", "headline_of", "render_report"]

MARKER = "<!-- fusion-perfbot:rmsnorm-bwd -->"


def _posts_script(u: Unit) -> bool:
    """Whether the comment posts the unit's reproducer: RMSNorm backward's is a standalone
    script; another fusion's runs in the suite's checkout, as the comment's Reproduce step
    does already, so only its alert issue carries it (the comment stays within its budget)."""
    return u.fusion == DEFAULT_FUSION


def _machine(
    u: Unit, d: Decision, ctx: Context, *, full: bool, script: bool, name: str, stack: bool
) -> MachineView:
    """One unit's part; ``stack``: this is its machine's first part shown, which says once
    whether the run is on another stack than the noise model's. In a catalog, a machine no
    noise model covers is said once for all its fusions (:func:`_uncalibrated_once`), not in
    each part."""
    if u.verdict is None:
        why = escape_md(u.why_not, 300)
        return MachineView(escape_md(name, 100), "not compared", "⚫", "", not_compared=why)
    view = machine_view(
        u.verdict,
        u.base,
        u.head,
        name=name,
        warning=[
            *(() if d.catalog else uncalibrated_warning(u)),
            *check_warning(u),
            *control_warning(u, d.drifted_machines.get(u.machine)),
            *(stack_warning(u) if stack else ()),
        ],
        notes=check_notes(u),
        hints=u.hints,
        full=full,
        script=script and _posts_script(u),
        site_url=ctx.site_url,
        level=u.level,
        suite=u.suite,
    )
    steps = None if d.catalog else calibration_fold(u, ctx)
    return replace(view, folds=(*view.folds, steps)) if steps else view


def _headline(d: Decision, name: Callable[[Unit], str]) -> tuple[str, str]:
    """(icon, words): one unit's own headline; else the worst state judged and who has it (a
    catalog that did not move says so without naming every fusion), then, once, why the rest
    is not judged."""
    if len(d.units) == 1 and (v := d.units[0].verdict) is not None:
        return ICON.get(v.overall, "⚫"), headline(v) + _suite_note(d.units[0])
    judged = d.judged
    unjudged = "; ".join(escape_md(w, 400) for w in d.not_judged)
    if not judged:
        return ICON.get(d.overall, "⚪"), f"Not judged: {unjudged}" if unjudged else "No data"
    state = worst([u.state for u in judged])
    having = [u for u in judged if u.state == state]
    lead = headline(having[0].verdict) if having and having[0].verdict else STATE_WORDS[state]
    if not (d.catalog and state == "no change"):
        lead = f"{lead} on {', '.join(escape_md(name(u), 100) for u in having)}"
    lead += _suite_note(having[0]) if having else ""
    return ICON.get(state, "⚫"), lead + (f"; not judged: {unjudged}" if unjudged else "")


def _suite_note(u: Unit) -> str:
    """A move this suite's own change explains is the suite's news: said on the headline."""
    moved = u.suite and u.state in ("regressed", "broken")
    return f" ({SUITE_CHANGED}: nothing is filed)" if moved else ""


def _quiet(u: Unit) -> bool:
    """A fusion the catalog's comment tells in its one "no change" line: judged, unmoved."""
    return u.gates and u.state == "no change"


def _listed_uncalibrated(u: Unit) -> bool:
    """A fusion on a machine no noise model covers, every point of which still runs: the
    catalog lists it in one line of figures as measured (:func:`as_measured_line`), its
    machine's reason said once above; a break keeps its own part."""
    if u.standing != "uncalibrated" or u.verdict is None:
        return False
    broken = u.verdict.guard("broken")
    return broken is None or broken.state != "broken"


def _uncalibrated_once(d: Decision, ctx: Context) -> tuple[list[str], list[Fold]]:
    """A catalog's machines no noise model covers, each said once for all its fusions: why it
    is not judged (a quote on the first screen) and the steps that make it a judge (a fold)."""
    lines: list[str] = []
    folds: list[Fold] = []
    firsts = {u.machine: u for u in reversed(d.units) if u.standing == "uncalibrated"}
    several = _machines(d) > 1
    for u in reversed(firsts.values()):
        lines += [f"> {w}" for w in uncalibrated_warning(u)]
        if (steps := calibration_fold(u, ctx)) is not None:
            prefix = f"{escape_md(u.machine, 100)}: " if several else ""
            folds.append(replace(steps, summary=prefix + steps.summary))
    return lines, folds


def _machines(d: Decision) -> int:
    return len({u.machine for u in d.units})


def _namer(d: Decision) -> Callable[[Unit], str]:
    """How the comment names a unit: its machine; in a catalog its fusion, and the machine
    too when there are several."""
    if not d.catalog:
        return lambda u: u.machine
    if _machines(d) == 1:
        return lambda u: u.title
    return lambda u: f"{u.title} on {u.machine}"  # RMSNorm backward named too, unlike u.where


def _catalog_parts(
    d: Decision, name: Callable[[Unit], str]
) -> tuple[list[Unit], str, tuple[str, ...]]:
    """The fusions that moved or are not judged (worst first), the line for the rest, and every
    fusion's level (a line each, for a fold): a catalog that did not move needs one screen to
    say so. A standing gap (at base and at head) gets its clue from the captures under its line,
    moved or not: what stood at base is no hint of the change (bot/fusion/hints.py)."""
    swept = [u for u in d.units if u.machine in d.drifted_machines]  # said once, above
    listed = [u for u in d.units if _listed_uncalibrated(u) and u not in swept]
    moved = [u for u in d.units if not _quiet(u) and u not in swept and u not in listed]
    moved.sort(key=lambda u: ORDER.index(u.state))
    lines = []
    quiet = [name(u) for u in d.units if _quiet(u)]
    if quiet:
        names = escape_md(", ".join(quiet), 1500)
        lines.append(f"⚪ {len(quiet)} fusion{'s' * (len(quiet) > 1)}: no change ({names})")
    if listed:
        lines.append(AS_MEASURED.format(n=len(listed), s="s" * (len(listed) > 1)))
        listed.sort(key=as_measured_order)
        lines.append("\n".join(as_measured_line(u.verdict, name(u)) for u in listed if u.verdict))
    if swept:
        names = escape_md(", ".join(name(u) for u in swept), 1500)
        lines.append(f"⚪ {len(swept)} fusion{'s' * (len(swept) > 1)}: not judged ({names})")
    line = "\n\n".join(lines)
    levels = tuple(  # the fold's summary names what the figures are
        f"- {escape_md(name(u), 100)}: {text.removeprefix(f'{LEVEL_PREFIX}: ')}"
        + (f"\n  - {clue}" if (clue := gap_clue(u.hints, u.level)) else "")
        for u in d.units
        if u.verdict is not None and (text := level_line(u.level))
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


def headline_of(d: Decision) -> str:
    """The comment's headline, as its first line reads: icon, what it is of, the words."""
    icon, words = _headline(d, _namer(d))
    title = f"{len({u.fusion for u in d.units})} fusions" if d.catalog else "RMSNorm backward"
    return f"{icon} {title}: {words}"


def comment_view(
    d: Decision,
    ctx: Context,
    part: AlertPart | None = None,
    *,
    full: bool = False,
    script: bool = True,
) -> CommentView:
    name = _namer(d)
    icon, words = _headline(d, name)
    if part is not None and part.ack.holds and words.startswith(("Regressed", "Broken")):
        icon, words = "☑️", f"Acknowledged ({words[0].lower()}{words[1:]})"
    judged = d.judged
    hinted = any(
        u.hints is not None and u.hints.reproducer is not None and _posts_script(u) for u in d.units
    )
    steps = next_steps(
        [u.verdict for u in judged if u.verdict is not None],
        run_url=ctx.run_url,
        ack_label=part.ack_label if part else None,
        acknowledged=bool(part and part.ack.holds),
        has_reproducer=hinted and script,
        provenance=(judged[0].base, judged[0].head) if judged else (None, None),
        filed=bool(part and part.issues),
        not_gating=d.reruns,
    )
    levels: tuple[str, ...] = ()
    parts, quiet, folds = list(d.units), "", list[Fold]()
    if d.catalog:
        parts, quiet, levels = _catalog_parts(d, name)
        said, folds = _uncalibrated_once(d, ctx)
        quiet = "\n\n".join(filter(None, ("\n".join(said), quiet)))
    opens = {u.machine: u for u in reversed(parts)}  # each machine's first part shown
    machines = [
        _machine(u, d, ctx, full=full, script=script, name=name(u), stack=opens[u.machine] is u)
        for u in parts
    ]
    quiet = "\n\n".join(filter(None, (quiet, *unshown_stack_lines(d.units, opens))))
    if len(machines) > 1:  # the rows and the reproducer once: a gating unit's, if any
        with_rows = [i for i, m in enumerate(machines) if m.lead is not None]
        gating_rows = [i for i in with_rows if parts[i].gates]
        first = next(iter(gating_rows or with_rows), None)
        machines = [m if i == first else _second(m) for i, m in enumerate(machines)]
    return CommentView(
        marker=MARKER,
        icon=icon,
        headline=words,
        machines=tuple(machines),
        several=len(d.units) > 1,
        title=f"{len({u.fusion for u in d.units})} fusions" if d.catalog else "RMSNorm backward",
        quiet=quiet,
        levels=levels,
        folds=tuple(folds),
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
    d: Decision,
    ctx: Context,
    part: AlertPart | None = None,
    *,
    full: bool = False,
    limit: int = COMMENT_CHARS,
) -> str:
    """The sticky comment for every machine, marker first, within ``limit`` (``full``: every
    row of every guard, no limit): the reproducer goes first, then folds from the last."""
    view = comment_view(d, ctx, part, full=full)
    text = render("comment.md.j2", v=view)
    if full or len(text) <= limit:
        return text
    view = comment_view(d, ctx, part, script=False)
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

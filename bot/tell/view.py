"""One view of the verdict (pure): everything the comment and the issues show, already in words
and escaped, for the templates in bot/tell/templates/ to lay out.

Why a view: the layout (what is on the first screen, what is folded) is the templates' alone,
so a maintainer who wants another first screen edits one file; here is only what each part
says. A machine's view is the same in the comment and in the alert's issue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.alert.model import guard_size, moved_words
from bot.decide.level import RatioLevel
from bot.decide.types import Guard, Verdict
from bot.fusion.hints import Hints
from bot.fusion.launches import LAUNCHES, NVFUSER_LAUNCHES
from bot.results.types import Provenance
from bot.tell.hints import bullets, fence
from bot.tell.level import level_line
from bot.tell.markdown import escape_html, escape_md, link
from bot.tell.tables import (
    COMMENT_ROWS,
    LEAD_ROWS,
    Table,
    context_table,
    guard_table,
    lead_table,
    provenance,
)
from bot.tell.under_test import side_label
from bot.tell.words import GUARD_NAMES, ICON, guard_words, shown_state

#: Worst first: the order of states for the headline, and of guards within a machine.
SEVERITY = (
    "broken",
    "regressed",
    "unsure",
    "still failing",
    "uncalibrated",
    "inconclusive (no data)",
    "no data",
    "not judged",
    "improved",
    "no change",
)
STATE_WORDS = {
    "broken": "Broken",
    "regressed": "Regressed",
    "unsure": "Unsure",
    "improved": "Improved",
    "no change": "No change",
    "inconclusive (no data)": "No data",
    "uncalibrated": "Not judged",
}


@dataclass(frozen=True)
class GuardLine:
    icon: str
    name: str
    words: str


@dataclass(frozen=True)
class Fold:
    """A folded section: a summary line, paragraphs and tables."""

    summary: str
    lines: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()


@dataclass(frozen=True)
class HintsView:
    changed: tuple[str, ...]
    new_at_head: tuple[str, ...]  # Thunder against the hand-written fusion, not so at base
    owner: str
    reasons: tuple[str, ...]
    reproducer: str | None  # "for POINT: WHAT"
    script: str | None  # fenced
    no_reproducer: str | None = None  # why there is none
    compared: int = 0  # points captured at both sides
    source: str = ""  # what head and base were compared by
    #: The same at base and head, listed where nothing moved (under a regression: counted).
    standing: tuple[str, ...] = ()


@dataclass(frozen=True)
class MachineView:
    name: str  # markdown-escaped, for markdown lines
    state: str
    icon: str
    where: str  # base → head, runs
    warning: tuple[str, ...] = ()  # quoted lines: why this machine does not gate
    guards: tuple[GuardLine, ...] = ()
    lead_caption: str = ""
    lead: Table | None = None
    folds: tuple[Fold, ...] = ()
    hints: HintsView | None = None
    stack: Table | None = None
    not_compared: str | None = None
    cause: str = ""  # the hints in one line (:func:`cause_line`)
    level: str = ""  # the ratio's level at head and base (bot/tell/level.py)
    #: The name for a fold's <summary>, HTML-escaped: markdown is not rendered there, so a
    #: markdown escape would show ("Bias\\+GELU").
    fold_name: str = ""


@dataclass(frozen=True)
class CommentView:
    marker: str
    icon: str
    headline: str
    machines: tuple[MachineView, ...]
    several: bool
    alert: tuple[str, ...] = ()
    steps: tuple[str, ...] = ()
    footer: str = ""
    hidden: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: What the heading names: the fusion, or the catalog ("14 fusions").
    title: str = "RMSNorm backward"
    #: The catalog's fusions that did not move, in one line ("12 fusions: no change: ...").
    quiet: str = ""
    #: The catalog's every fusion's ratio level, a line each (a fold).
    levels: tuple[str, ...] = ()
    #: What is said once for the run rather than in each part (a catalog's uncalibrated
    #: machine: the steps that make it a judge).
    folds: tuple[Fold, ...] = ()


def worst_guard(v: Verdict) -> Guard | None:
    """The guard the headline and the first table follow: a break first, then the largest
    regression, then an unsure or improved one."""
    moved = [g for g in v.guards if shown_state(g, v) not in ("no change", "no data")]
    if not moved:
        return None
    return min(moved, key=lambda g: (SEVERITY.index(g.state), -guard_size(g)))


def headline(v: Verdict) -> str:
    """The verdict in a few words: what moved and by how much, or the state."""
    if v.overall == "uncalibrated":  # not judged (bot/tell/machines.py): why, and what to do
        return f"Not judged: {escape_md(v.reason, 400)}"
    g = worst_guard(v)
    if g is None or g.state not in ("regressed", "broken"):
        return STATE_WORDS.get(v.overall, v.overall.capitalize())
    size = guard_size(g)
    return f"{STATE_WORDS[g.state]}: {moved_words(g.kind, size)}"


#: Among guards of one state: the question the bot exists for (the ratio) first.
GUARD_ORDER = ("ratio", "thunder", "nvfuser", "broken")


def guard_lines(v: Verdict, lead: Guard | None) -> tuple[GuardLine, ...]:
    """A line a guard: ``lead``, the one the headline names, first (its rows follow), then
    worst first."""
    order = sorted(
        v.guards,
        key=lambda g: (
            g is not lead,
            SEVERITY.index(shown_state(g, v)),
            GUARD_ORDER.index(g.kind),
        ),
    )
    return tuple(
        GuardLine(ICON.get(shown_state(g, v), "⚪"), GUARD_NAMES[g.kind], guard_words(g, v))
        for g in order
    )


#: The owner the hints name where the decision found the move to be this suite's own change
#: (bot/alert/decision.py ``Unit.suite``): no repository upstream owns it, whatever was launched.
SUITE_OWNER = "none upstream (the suite itself changed)"


def _owner(h: Hints, suite: str = "") -> str:
    if suite:
        return SUITE_OWNER
    repository = h.attribution.repository
    return escape_md(repository) if repository else "not clear"


def _standing(h: Hints) -> str:
    """What the new-at-head part says when nothing is new."""
    n = len(h.standing)
    if not n:
        return "no difference found at base or head"
    return (
        f"nothing new: the {n} difference{'s' * (n > 1)} from the hand-written fusion at head "
        f"{'were' if n > 1 else 'was'} there at base too, so not this change"
    )


def hints_view(h: Hints, *, script: bool, suite: str = "") -> HintsView:
    """``suite``: what of the suite changed for this fusion, where it did (the owner is then
    nobody upstream, as the alert has it)."""
    r = h.reproducer
    n = h.points_compared
    captured = f"{n} point{'s' * (n != 1)} captured at both sides"
    return HintsView(
        changed=tuple(bullets(h.changed)) or ("nothing differs",),
        new_at_head=tuple(bullets(h.new_at_head))
        or ((_standing(h),) if h.moved and h.points_compared else ()),
        standing=() if h.moved else tuple(bullets(h.standing)),
        source=captured if n else "no capture: the runs' kernel lists only",
        owner=_owner(h, suite),
        reasons=tuple(escape_md(reason, 400) for _, reason in h.attribution.reasons),
        reproducer=f"{escape_md(r.point, 80)}: {escape_md(r.what, 200)}" if r else None,
        script=fence(r.script) if r is not None and script else None,
        no_reproducer=escape_md(h.no_reproducer, 200) if h.no_reproducer else None,
        compared=h.points_compared,
    )


LAUNCH_KINDS = (LAUNCHES, NVFUSER_LAUNCHES)


def cause_line(h: Hints | None, suite: str = "") -> str:
    """The fusion hints in one line, for a first screen: who likely owns it, the first clue."""
    if h is None:
        return ""
    # Inside the fusion first (shorter, and nearer the cause), then what the call launched.
    material = sorted((f for f in h.changed if f.material), key=lambda f: f.kind in LAUNCH_KINDS)
    clue = next(iter(material), None)
    found = f": {escape_md(clue.text, 300)}" if clue is not None else ""
    return f"**Likely owner: {_owner(h, suite)}**{found} (details below)."


def guard_folds(v: Verdict, lead: Guard | None, *, full: bool) -> tuple[Fold, ...]:
    """A fold a guard that moved (with ``full``, every guard and every point); the ``lead``
    guard's only if the first screen's rows did not show all of it."""
    folds = []
    for g in v.guards:
        state = shown_state(g, v)
        if state in ("no change", "no data") and not full:
            continue
        table = guard_table(g, v, None if full else COMMENT_ROWS)
        if table is None:
            continue
        if g is lead and not table.more and len(table.rows) <= LEAD_ROWS:
            continue  # the first screen showed all of it
        folds.append(Fold(f"{GUARD_NAMES[g.kind]}: {state}", (), (table,)))
    context = context_table(v) if full else None
    if context is not None:
        folds.append(
            Fold("Context: eager and torch.compile against nvFuser, no verdict", (), (context,))
        )
    return tuple(folds)


def machine_view(
    v: Verdict,
    base: Provenance | None,
    head: Provenance | None,
    *,
    name: str,
    warning: Sequence[str] = (),
    notes: Sequence[str] = (),
    hints: Hints | None = None,
    full: bool = False,
    script: bool = True,
    site_url: str | None = None,
    level: RatioLevel | None = None,
    suite: str = "",
) -> MachineView:
    """One machine's part: its guards in a line each, the worst guard's rows, the folds;
    ``level`` the ratio's level the decision holds (bot/alert/decision.py); ``suite`` what of
    the suite changed for this fusion (the hints then name no owner upstream)."""
    lead = worst_guard(v)
    runs = f"{v.runs[0]} run(s) of base, {v.runs[1]} of head"
    where = f"base {side_label(base, v.base)} → head {side_label(head, v.head)} · {runs}"
    if v.model:
        where += f" · {escape_md(v.model, 200)}"
    if site_url:
        where += " · " + link("history", site_url)
    caption = ""
    table = None
    if lead is not None:
        table = lead_table(lead, v)
        caption = (
            "The errors at head, each once with the points it hit"
            if lead.kind == "broken"
            else f"{GUARD_NAMES[lead.kind]}, worst first"
        )
    folds = guard_folds(v, lead, full=full)
    if notes:  # the runner checks, when they all passed: a few words, not a fold
        where += " · " + " ".join(notes)
    note_lines = tuple(escape_md(n, 300) for n in v.notes if n != v.model)
    if note_lines:
        folds = (*folds, Fold(f"Notes ({len(note_lines)})", note_lines))
    return MachineView(
        fold_name=escape_html(name, 100),
        name=escape_md(name, 100),
        state="not judged" if v.overall == "uncalibrated" else v.overall,
        icon=ICON.get(v.overall, "⚫"),
        where=where,
        warning=tuple(warning),
        guards=guard_lines(v, lead),
        lead_caption=caption,
        lead=table,
        folds=folds,
        hints=hints_view(hints, script=script, suite=suite) if hints is not None else None,
        stack=provenance(base, head, v),
        cause=cause_line(hints, suite) if v.overall in ("regressed", "broken") else "",
        level=level_line(level),
    )

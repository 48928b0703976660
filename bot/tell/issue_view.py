"""The alert's issues as views (pure), for bot/tell/templates/issue.md.j2 and linked_issue.md.j2.

An issue carries what the comment carries for its alert, not the whole comment: each section
(a guard that moved on a machine) with its rows, the fusion hints with the reproducer, the
stack; the method and the rules are linked. The reproducer is the bot's own script, built from
the point's parameters (bot/fusion/repro.py), never a text from the run's artifact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.alert.model import Alert, moved_words
from bot.decide.types import Guard, Verdict
from bot.fusion.hints import Hints
from bot.fusion.names import unit_words
from bot.results.limits import REPOSITORY
from bot.results.types import Provenance
from bot.tell.context import Context, doc_link, pr_ref
from bot.tell.level import levels_text
from bot.tell.markdown import escape_md, link
from bot.tell.next_steps import measure_command, moved_fusions, told_lines
from bot.tell.rows import graph_url
from bot.tell.tables import FOLD_ROWS, Table, guard_table, provenance
from bot.tell.under_test import side_label
from bot.tell.view import HintsView, cause_line, hints_view
from bot.tell.words import GUARD_NAMES, ICON, guard_words, point_name


@dataclass(frozen=True)
class SectionView:
    icon: str
    machine: str
    name: str
    words: str
    table: Table | None
    graphs: str


@dataclass(frozen=True)
class IssueView:
    what: str
    where: str
    sides: str
    count: str
    owner: str
    owner_why: str
    rules: str
    sections: tuple[SectionView, ...]
    hints: tuple[tuple[str, HintsView], ...]
    stacks: tuple[tuple[str, Table], ...]
    several: bool
    footer: str
    reproduce: str = ""  # the command that measures both sides again
    told: tuple[str, ...] = ()  # whether each other repository was told, and why
    cause: str = ""  # the fusion hints in one line: the likely owner and the first clue
    level: str = ""  # the ratio's level at head and base, a paragraph a machine


def where_text(ctx: Context) -> str:
    """The PR as GitHub links it and cross-references it (``OWNER/NAME#N``, not escaped: the
    bot built it from a repository name it checked and a number), else the escaped words."""
    if ctx.repo and ctx.pr is not None and REPOSITORY.fullmatch(ctx.repo) and ctx.pr > 0:
        return f"{ctx.repo}#{ctx.pr}"
    return escape_md(pr_ref(ctx))


def _graphs(v: Verdict, g: Guard, ctx: Context) -> str:
    if not ctx.site_url or g.kind != "ratio":
        return ""
    bad = [p for p in g.points if p.state == "regressed"][:5]
    site = ctx.site_url
    return ", ".join(link(point_name(p.key), graph_url(site, p.key, v.machine)) for p in bad)


def _sections(
    alert: Alert, verdicts: Mapping[str, Verdict], ctx: Context, rows: int | None
) -> tuple[SectionView, ...]:
    out = []
    for s in alert.sections:
        v = verdicts[s.machine]
        g = v.guard(s.guard)
        assert g is not None
        out.append(
            SectionView(
                icon=ICON.get(g.state, "🔴"),
                machine=escape_md(unit_words(s.machine), 100),
                name=GUARD_NAMES[g.kind],
                words=guard_words(g, v),
                table=guard_table(g, v, rows),
                graphs=_graphs(v, g, ctx),
            )
        )
    return tuple(out)


def issue_view(
    alert: Alert,
    verdicts: Mapping[str, Verdict],
    ctx: Context,
    hints: Mapping[str, Hints | None],
    sides: Mapping[str, tuple[Provenance | None, Provenance | None]],
    *,
    rows: int | None = FOLD_ROWS,
    script: bool = True,
) -> IssueView:
    machines = list(dict.fromkeys(s.machine for s in alert.sections))
    first = verdicts[machines[0]]
    b, h = sides.get(machines[0], (None, None))
    worst = alert.worst
    n = len(alert.sections)
    footer = " · ".join(
        x
        for x in (
            doc_link("How this is decided", "METHOD.md", ctx),
            link("the PR's benchmark run", ctx.run_url) if ctx.run_url else "",
            link("history", ctx.site_url) if ctx.site_url else "",
        )
        if x
    )
    return IssueView(
        what=moved_words(worst.guard, worst.size) if worst else "A performance alert",
        where=where_text(ctx),
        sides=f"base {side_label(b, first.base)} → head {side_label(h, first.head)}",
        count=f"{n} section" + ("" if n == 1 else "s") + " (each a guard that moved on a machine)",
        owner=escape_md(alert.owner),
        owner_why=escape_md(alert.owner_why),
        rules=doc_link("the alert rules", "ALERTS.md", ctx),
        sections=_sections(alert, verdicts, ctx, rows),
        hints=tuple(
            (escape_md(m, 100), hints_view(found, script=script))
            for m in machines
            if (found := hints.get(m)) is not None
        ),
        stacks=tuple(
            (escape_md(m, 100), provenance(*sides.get(m, (None, None)), verdicts[m]))
            for m in machines
        ),
        several=len(machines) > 1,
        footer=footer,
        reproduce=measure_command(
            first.base[:12], first.head[:12], (b, h), moved_fusions(list(verdicts.values()))
        ),
        cause=cause_line(hints.get(machines[0])),
        level=levels_text([(m, verdicts[m]) for m in machines], names=len(machines) > 1),
        told=told_lines(alert),
    )


def linked_view(
    alert: Alert, ctx: Context, verdicts: Mapping[str, Verdict] | None = None
) -> dict[str, object]:
    known = verdicts or {}
    names = dict.fromkeys(s.machine for s in alert.sections)
    machines = [(m, known[m]) for m in names if m in known]
    return {
        "level": levels_text(machines, names=len(machines) > 1),
        "where": where_text(ctx),
        "owner": escape_md(alert.owner),
        "owner_why": escape_md(alert.owner_why),
        "sections": [
            {
                "machine": escape_md(unit_words(s.machine), 100),
                "moved": moved_words(s.guard, s.size),
            }
            for s in alert.sections
        ],
    }

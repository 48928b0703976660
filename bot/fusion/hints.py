"""The root-cause hints of one machine's verdict: findings, likely owner, reproducer (pure).

Built from the runs' records, both sides' captures (bot/fusion/read.py) and the verdict. Head
against base comes first, because a regression is a change: the kernels each timed call
launched (bot/fusion/launches.py, from every run's record), then what differs inside the
fusion at every point captured at both sides. Thunder against the hand-written fusion is split
in what is new at head and what stood at base too: a standing difference is no cause of this
change (it is the clue of the level's standing gap, bot/tell/hints.py). Then the attribution
(bot/fusion/attribute.py) and a reproducer for the worst point of the first guard that alarms.
Nothing here is decided from the captures alone: which guard moved is the verdict's, the
records and captures only say what changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from bot.decide.types import GuardKind, Verdict
from bot.fusion.attribute import Attribution, attribute
from bot.fusion.compare import OUTSIDE, STACK, against_handwritten, compare_points, summarise
from bot.fusion.launches import Lists, launch_findings
from bot.fusion.repro import reproducer
from bot.fusion.types import Finding, PointCapture
from bot.results.types import DEFAULT_FUSION, Provenance

#: The guard whose worst point gets the reproducer, first alarming in this order.
REPRO_ORDER: tuple[GuardKind, ...] = ("broken", "ratio", "thunder", "nvfuser")


@dataclass(frozen=True)
class Reproducer:
    point: str  # "thunder-prims bfloat16 2048x8192"
    what: str
    script: str


@dataclass(frozen=True)
class Hints:
    changed: tuple[Finding, ...]  # head against base: launches, then inside, summarised
    #: Thunder against the hand-written fusion at head, where base did not differ so.
    new_at_head: tuple[Finding, ...]
    attribution: Attribution
    reproducer: Reproducer | None
    no_reproducer: str | None = None  # why not, when there is none
    points_compared: int = 0  # points captured at both sides (0: the records' launches only)
    #: Thunder against the hand-written fusion, the same at base and head: the level's clue.
    standing: tuple[Finding, ...] = ()
    moved: tuple[GuardKind, ...] = ()  # the guards that alarm: a regression's hints, or not


def _versions(prov: Provenance | None) -> dict[str, str]:
    versions = prov.record.get("versions") if prov else None
    return {str(k): str(v) for k, v in versions.items()} if isinstance(versions, Mapping) else {}


def _worst_point(v: Verdict) -> tuple[str, str, str] | None:
    for kind in REPRO_ORDER:
        g = v.guard(kind)
        if g is None or not g.alarming:
            continue
        bad = [p for p in g.points if p.state in ("regressed", "broken")]
        if not bad:
            continue
        worst = max(bad, key=lambda p: p.cmp.change.estimate if p.cmp else float("inf"))
        return worst.key.variant, worst.key.dtype, worst.key.shape
    return None


_VALUE_NAME = re.compile(r"\b[tT]\d+\b")


def _same_difference(f: Finding) -> tuple[str, str, str, str]:
    """A difference as base and head are matched: a trace's value names (t121) renumber
    between versions of identical code, so they are not part of it."""
    return f.point, f.variant, f.kind, _VALUE_NAME.sub("t#", f.text)


def _said_outside(f: Finding, launched: set[tuple[str, str]]) -> Finding:
    """ "The same compiled program" points at the stack, unless the records show the timed
    call launching other kernels beside it: then that is where the change is."""
    if f.kind != "same-program" or (f.point, f.variant) not in launched:
        return f
    return replace(f, text=f.text.removesuffix(STACK) + OUTSIDE)


def build_hints(
    v: Verdict,
    base: Mapping[str, PointCapture],
    head: Mapping[str, PointCapture],
    base_prov: Provenance | None,
    head_prov: Provenance | None,
    fusion: str = DEFAULT_FUSION,
    kernels: tuple[Sequence[Lists], Sequence[Lists]] = ((), ()),
) -> Hints:
    """``*_prov``: each side's provenance (versions, thunder_variant, under_test);
    ``kernels``: each base run's and each head run's kernel lists (bot/fusion/launches.py),
    said where the captures found nothing material at that point (there they only echo it:
    an unfused backward's eager kernels beside "head's backward has no nvFuser fusion").
    With no captures (``base``, ``head`` empty) the launches are the hints."""
    both = sorted(set(base) & set(head))
    inside = [f for k in both for f in compare_points(base[k], head[k])]
    explained = {(f.point, f.variant) for f in inside if f.material}
    launches = launch_findings(*kernels, explained=explained)
    launched = {(f.point, f.variant) for f in launches}
    changed = [*launches, *(_said_outside(f, launched) for f in inside)]
    at_base = {_same_difference(f) for k in both for f in against_handwritten(base[k])}
    at_head = [f for k in both for f in against_handwritten(head[k])]
    new = [f for f in at_head if _same_difference(f) not in at_base]
    standing = [f for f in at_head if _same_difference(f) in at_base]
    moved = [g.kind for g in v.guards if g.alarming]
    owner = attribute(
        moved,
        _versions(base_prov),
        _versions(head_prov),
        head_prov.text("under_test", "package") if head_prov else None,
        changed,
    )
    repro, why = None, None
    worst = _worst_point(v)
    if worst is None:
        why = "no guard alarms"
    else:
        variant, dtype, shape = worst
        thunder_variant = (head_prov.text("thunder_variant") if head_prov else None) or "stock"
        try:
            what, script = reproducer(
                variant, dtype, shape, head.get(f"{dtype} {shape}"), thunder_variant, fusion
            )
            repro = Reproducer(f"{variant} {dtype} {shape}", what, script)
        except ValueError as exc:
            why = str(exc)
    return Hints(
        tuple(summarise(changed)),
        tuple(summarise(new)),
        owner,
        repro,
        why,
        len(both),
        tuple(summarise(standing)),
        tuple(moved),
    )

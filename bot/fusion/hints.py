"""The root-cause hints of one machine's verdict: findings, likely owner, reproducer (pure).

Built from both sides' captures (bot/fusion/read.py) and the verdict: head against base at
every point captured on both sides, Thunder against the hand-written fusion at head, then the
attribution (bot/fusion/attribute.py) and a reproducer for the worst point of the first guard
that alarms. Nothing here is decided from the captures alone: which guard moved is the
verdict's, the captures only say what changed inside.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.decide.types import GuardKind, Verdict
from bot.fusion.attribute import Attribution, attribute
from bot.fusion.compare import against_handwritten, compare_points, summarise
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
    changed: tuple[Finding, ...]  # head against base, summarised over points
    against_handwritten: tuple[Finding, ...]  # at head
    attribution: Attribution
    reproducer: Reproducer | None
    no_reproducer: str | None = None  # why not, when there is none
    points_compared: int = 0


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


def build_hints(
    v: Verdict,
    base: Mapping[str, PointCapture],
    head: Mapping[str, PointCapture],
    base_prov: Provenance | None,
    head_prov: Provenance | None,
    fusion: str = DEFAULT_FUSION,
) -> Hints:
    """``*_prov``: each side's provenance (versions, thunder_variant, under_test)."""
    both = sorted(set(base) & set(head))
    changed = [f for k in both for f in compare_points(base[k], head[k])]
    handwritten = [f for k in sorted(head) for f in against_handwritten(head[k])]
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
        tuple(summarise(handwritten)),
        owner,
        repro,
        why,
        len(both),
    )

"""What differs inside the fusion: head against base, and Thunder against the hand-written one.

Each difference is one :class:`~bot.fusion.types.Finding` in plain words an issue can quote.
Times are never findings: two runs of one program differ in time too, and the bot's statistics
already decide whether a time changed; these say *what else* changed. When nothing did, the
one finding says so, which is itself the hint: the cause is in the stack, not in the fusion.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

from bot.fusion import definition, summary
from bot.fusion.definition import BROADCASTS, MATH, RANDOM, REDUCTIONS, Input
from bot.fusion.profiles import UNCOMPARED, profile_findings
from bot.fusion.summary import RoundTrip, Summary
from bot.fusion.types import Finding, PointCapture, VariantCapture
from bot.fusion.words import (
    counts_text,
    extents_text,
    input_key,
    list_text,
    math_text,
    size_text,
    tensor_key,
    tensors_text,
    trip_key,
    value_text,
    versions_text,
)
from bot.results.types import REFERENCE  # the hand-written fusion's variant

STACK = "a time change there is not in the fusion (look at the stack: versions, clocks)"
#: The same program, where the records show the timed call launching other kernels beside it.
OUTSIDE = "the change is in the kernels the timed call launches beside it (above)"


class _Words(NamedTuple):
    """Who is compared with whom, as the findings say it."""

    new: str
    old: str


HEAD = _Words("head", "base")
THUNDER = _Words("Thunder", "the hand-written fusion")


def compare_points(base: PointCapture, head: PointCapture) -> list[Finding]:
    """Every variant of one point, head against base."""
    point = f"{head.dtype} {head.shape}"
    found: list[Finding] = []
    for variant in sorted(set(base.variants) | set(head.variants)):
        old, new = base.variants.get(variant), head.variants.get(variant)
        if old is None or new is None:
            text = f"{'head' if new is None else 'base'} has no capture of this variant"
            found.append(Finding("fusions", point, variant, f"{text}: nothing compared", False))
            continue
        same = (
            "the same compiled program at base and head (definitions, saved tensors, segments, "
            f"schedulers, launches){versions_text(old.versions, new.versions)}: {STACK}"
        )
        found += _pair(old, new, HEAD, point, variant, same, head.call)
    return found


def against_handwritten(point: PointCapture) -> list[Finding]:
    """Each Thunder variant of one point and side against the hand-written fusion."""
    where = f"{point.dtype} {point.shape}"
    handwritten = point.variants.get(REFERENCE)
    found: list[Finding] = []
    for variant, capture in sorted(point.variants.items()):
        if variant == REFERENCE:
            continue
        if handwritten is None:
            text = "no hand-written fusion captured at this point: nothing compared"
            found.append(Finding("fusions", where, variant, text, material=False))
            continue
        same = "Thunder's fusion is the hand-written one in every respect compared"
        found += _pair(handwritten, capture, THUNDER, where, variant, same, point.call)
    return found


def summarise(findings: list[Finding]) -> list[Finding]:
    """Identical findings at several points or variants as one ("at 9 points (...): ...")."""
    groups: dict[tuple[str, str, bool], list[Finding]] = {}
    for finding in findings:
        groups.setdefault((finding.kind, finding.text, finding.material), []).append(finding)
    out = []
    for (kind, text, material), members in groups.items():
        if len(members) == 1:
            out.append(members[0])
            continue
        points = list(dict.fromkeys(member.point for member in members))
        variants = ", ".join(dict.fromkeys(member.variant for member in members))
        where = f"at {len(points)} points" if len(points) > 1 else f"at {points[0]}"
        out.append(
            Finding(kind, ", ".join(points), variants, f"{where} ({variants}): {text}", material)
        )
    return out


def _pair(
    old: VariantCapture,
    new: VariantCapture,
    words: _Words,
    point: str,
    variant: str,
    same: str,
    call: str,
) -> list[Finding]:
    """The differences of two captures, or the one `same` finding where there is none and
    nothing was left uncompared (a missing profile, an unreadable definition); ``call``: whose
    programs they are ("backward", "forward")."""
    found: list[tuple[str, str, bool]] = []
    failed = [(who, c) for who, c in ((words.old, old), (words.new, new)) if c.errors]
    if failed:
        # A capture step failed (or was never made): what it would have said is unknown.
        who, capture = failed[0]
        step = sorted(capture.errors)[0]
        text = f"{who}'s capture {UNCOMPARED}: its step {step!r} failed"
        return [Finding("ops", point, variant, text, False)]
    n_old, n_new = len(old.definitions), len(new.definitions)
    if n_old != n_new:
        count = f"{n_new or 'no'} nvFuser fusion{'s' if n_new > 1 else ''}"
        found.append(("fusions", f"{words.new}'s {call} has {count} ({words.old}: {n_old})", True))
    if words == HEAD:  # the hand-written variant saves nothing: only head and base compare
        found += _saved(old.saved, new.saved, words)
    before, after = _summary(old, words.old, found), _summary(new, words.new, found)
    if before and after:
        found += _random(before, after, words, call)
        found += _definitions(before, after, words, new.saved)
        if before == after and old.definitions != new.definitions:
            found.append(("ops", "the definitions differ only in value names or order", False))
        found += profile_findings(old.profile, new.profile, words.old, words.new)
    material = any(is_material for _, _, is_material in found)
    if not material and not any(UNCOMPARED in text for _, text, _ in found):
        found.append(("same-program", same, False))
    return [Finding(kind, point, variant, text, material) for kind, text, material in found]


def _summary(
    capture: VariantCapture, who: str, found: list[tuple[str, str, bool]]
) -> Summary | None:
    """The summary of a side's definitions; None where it has none, or they cannot be read
    (said as context: a hint the parser does not know must not stop the bot)."""
    try:
        return summary.summarise(capture.definitions) if capture.definitions else None
    except definition.DefinitionError as exc:
        found.append(("ops", f"{who}'s definitions {UNCOMPARED} ({capture.folder}): {exc}", False))
        return None


def _saved(
    old: tuple[dict[str, Any], ...], new: tuple[dict[str, Any], ...], words: _Words
) -> list[tuple[str, str, bool]]:
    before, after = Counter(map(tensor_key, old)), Counter(map(tensor_key, new))
    if before == after:
        return []
    text = (
        f"{words.new} saves {tensors_text(after - before)} for the backward "
        f"({words.old}: {tensors_text(before - after)}); {size_text(after)} in all "
        f"({words.old}: {size_text(before)})"
    )
    return [("saved", text, True)]


def _definitions(
    old: Summary, new: Summary, words: _Words, saved: tuple[dict[str, Any], ...]
) -> list[tuple[str, str, bool]]:
    """The summaries' differences: counts as ``old -> new``, the rest as "X where Y"."""
    arrow = f"({words.old} -> {words.new})"
    rest = {*MATH, *REDUCTIONS, *BROADCASTS, *RANDOM, "cast"}
    counted = [
        ("casts", "casts", old.casts, new.casts),
        ("broadcasts", "broadcasts", old.broadcasts, new.broadcasts),
        ("ops", "op counts", _without(old.ops, rest), _without(new.ops, rest)),
    ]
    found = [(kind, f"{label} {arrow}: {counts_text(a, b)}", True) for kind, label, a, b in counted
             if a != b]  # fmt: skip
    named = {tensor_key(item): item["name"] for item in saved}
    found += _round_trips(new.round_trips, old.round_trips, words.new, words.old, named)
    found += _round_trips(old.round_trips, new.round_trips, words.old, words.new, {})
    described = [
        ("ops", "takes", math_text(old.math), math_text(new.math)),
        ("reductions", "reduces", list_text(old.reductions), list_text(new.reductions)),
        ("extents", "has", extents_text(old), extents_text(new)),
    ]
    for kind, verb, a, b in described:
        if a != b:
            found.append((kind, f"{words.new} {verb} {b} where {words.old} {verb} {a}", True))
    found += _inputs_differ(old.inputs, new.inputs, words)
    return found


def _inputs_differ(
    old: tuple[Input, ...], new: tuple[Input, ...], words: _Words
) -> list[tuple[str, str, bool]]:
    """The inputs one side takes and the other does not, said from the side that has more."""
    before, after = Counter(map(input_key, old)), Counter(map(input_key, new))
    extra_old, extra_new = _inputs(old, before - after), _inputs(new, after - before)
    if not (before - after) and not (after - before):
        return []
    if not (before - after):
        text = f"{words.new} takes inputs {extra_new} that {words.old} does not"
    elif not (after - before):
        text = f"{words.old} takes inputs {extra_old} that {words.new} does not"
    else:
        text = f"{words.new} takes inputs {extra_new} where {words.old} takes inputs {extra_old}"
    return [("inputs", text, True)]


def _random(old: Summary, new: Summary, words: _Words, call: str) -> list[tuple[str, str, bool]]:
    """Random numbers drawn on one side only: a dropout mask drawn again (Thunder's replay of
    the forward's ``uniform``, NVIDIA/Fuser#4625) instead of read back from the forward."""
    drawn = [({op: s.ops[op] for op in RANDOM if s.ops[op]}) for s in (old, new)]
    if drawn[0] == drawn[1]:
        return []
    (who, draws), other = (
        ((words.new, drawn[1]), words.old) if drawn[1] else ((words.old, drawn[0]), words.new)
    )
    ops = ", ".join(f"{n} {op}" for op, n in draws.items())
    if drawn[0] and drawn[1]:
        text = f"random numbers drawn ({words.old} -> {words.new}): {drawn[0]} -> {drawn[1]}"
    else:
        text = f"{who} draws random numbers in the {call} ({ops}), {other} none: a mask drawn again"
    return [("random", text, True)]


def _without(counts: Counter[str], names: set[str]) -> Counter[str]:
    return Counter({name: n for name, n in counts.items() if name not in names})


def _inputs(inputs: tuple[Input, ...], only: Counter[tuple[str, tuple[bool, ...]]]) -> str:
    """The inputs of the kinds in `only` (the ones the other side lacks), else "the same"."""
    picked = [f"{i.dtype} {list(i.shape)}" for i in inputs if only[input_key(i)]]
    return ", ".join(picked) if only else "the same"


def _round_trips(
    mine: tuple[RoundTrip, ...],
    theirs: tuple[RoundTrip, ...],
    who: str,
    other: str,
    named: dict[tuple[str, tuple[str, ...]], str],
) -> list[tuple[str, str, bool]]:
    """The round trips `who` makes and `other` does not (as many as it makes more of)."""
    extra = Counter(map(trip_key, mine)) - Counter(map(trip_key, theirs))
    found = []
    for trip in mine:
        if extra[trip_key(trip)] > 0:
            extra[trip_key(trip)] -= 1
            value = f"{who} casts {value_text(trip, named)} {trip.words}"
            text = f"{value}: a round trip {other} does not make"
            found.append(("casts", text, True))
    return found

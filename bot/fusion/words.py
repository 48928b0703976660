"""The words of the fusion findings: tensors, sizes, counts, extents as a maintainer reads them.

Apart from bot/fusion/compare.py (which decides what differs) so that the wording can change
without touching the comparison, and each is tested through the findings it writes.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from bot.fusion import definition
from bot.fusion.definition import BYTES, MATH, Input
from bot.fusion.summary import RoundTrip, Summary


def tensor_key(item: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    return definition.short_dtype(item["dtype"]), tuple(item["shape"])


def tensors_text(counts: Counter[tuple[str, tuple[str, ...]]]) -> str:
    parts = []
    for (dtype, shape), n in counts.items():
        described = f"{dtype} [{', '.join(shape)}]"
        parts.append(f"{n} {described} tensors" if n > 1 else described)
    return ", ".join(parts) or "nothing else"


def size_text(counts: Counter[tuple[str, tuple[str, ...]]]) -> str:
    if not all(dtype in BYTES and all(map(str.isdigit, shape)) for dtype, shape in counts):
        return "size unknown"
    total = sum(
        n * BYTES[dtype] * math.prod(map(int, shape)) for (dtype, shape), n in counts.items()
    )
    return f"{total / 2**20:.0f} MiB" if total >= 2**20 else f"{total / 2**10:.0f} KiB"


def trip_key(trip: RoundTrip) -> tuple[object, ...]:
    origin = None if trip.origin is None else (trip.origin.dtype, trip.origin.shape)
    return trip.chain, origin, trip.narrowed


def value_text(trip: RoundTrip, named: dict[tuple[str, tuple[str, ...]], str]) -> str:
    """The value a round trip starts at: a saved tensor by name where its shape says which."""
    if trip.origin is None:
        return f"a {trip.narrowed} result"
    key = (trip.origin.dtype, tuple(str(n) for n in trip.origin.shape))
    name = f" {named[key]}" if key in named else ""
    return f"the saved value{name} ({trip.origin.dtype} {list(trip.origin.shape)})"


def input_key(item: Input) -> tuple[str, tuple[bool, ...]]:
    """An input by dtype and which dims are broadcast (1), not by extent (extents say that)."""
    return item.dtype, tuple(n == 1 for n in item.shape)


def counts_text(old: Counter[str], new: Counter[str]) -> str:
    keys = [k for k in dict.fromkeys([*old, *new]) if old[k] != new[k]]
    return ", ".join(f"{k} {old[k]} -> {new[k]}" for k in keys)


def math_text(counts: Counter[str]) -> str:
    parts = [
        f"{counts[name]} {name}{'s' if counts[name] > 1 else ''}" for name in MATH if counts[name]
    ]
    if not parts:
        return "none of " + ", ".join(MATH)
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


def list_text(counts: Counter[str]) -> str:
    return ", ".join(f"{n} x {k}" if n > 1 else k for k, n in sorted(counts.items())) or "nothing"


def extents_text(summary: Summary) -> str:
    fixed = f"fixed extents {list(summary.fixed_extents)}" if summary.fixed_extents else ""
    symbolic = "symbolic extents" if summary.symbolic_extents else ""
    return " and ".join(part for part in (fixed, symbolic) if part) or "no extents"


def versions_text(old: dict[str, str], new: dict[str, str]) -> str:
    changed = [f"{k} {old.get(k, '?')} -> {new.get(k, '?')}" for k in sorted({*old, *new})
               if old.get(k) != new.get(k)]  # fmt: skip
    return f", with {', '.join(changed)}" if changed else ""

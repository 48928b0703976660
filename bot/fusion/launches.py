"""What each timed call launched, head against base, from the runs' records (pure).

Every run's record keeps, per point and variant, the kernels the first timed call launched
(``kernel_names``, docs/DATA.md): no capture is needed to see that head's call launches a
kernel base's did not, and that is often the whole cause (a sleep or a copy beside the
fusion, a fallback to eager kernels, a fusion split in two). A kernel is named as a person
reads it (no ``void``, no argument list, no template arguments, nvFuser's numbering of its
kernels dropped: ``nvfuser_reduction_f0_c1_r0_g0`` and ``..._f1_c1_r0_g0`` are one kernel),
and compared as a multiset. A list that differs between the runs of one side says nothing
(the side does not launch one list), so only a difference every run agrees on is a finding.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple

from bot.fusion.types import Finding
from bot.results.types import DEFAULT_FUSION, REFERENCE

#: A kernel list is the provenance record's; anything else in it is not read.
KERNELS_FIELD = "kernel_names"
#: Kernels named in a finding; the rest are counted.
NAMED = 4
MAX_NAME = 120
_NVFUSER_NUMBERING = re.compile(r"(nvfuser_[a-z_]+?)(?:_f\d+_c\d+_r\d+_g\d+)$")
_ANONYMOUS = "(anonymous namespace)"

#: The kinds of the findings made here (bot/fusion/types.py): a kernel outside nvFuser came
#: or went; only nvFuser's own kernels did.
LAUNCHES, NVFUSER_LAUNCHES = "launches", "nvfuser-launches"

Lists = dict[tuple[str, str], Counter[str]]  # (point "bfloat16 2048x8192", variant) -> kernels


@functools.lru_cache(maxsize=4096)  # a nightly record names ~16,000 launches of ~30 kernels
def kernel_name(signature: str) -> str:
    """``void at::native::reduce_kernel<128, 4, ...>(...)`` -> ``at::native::reduce_kernel``;
    the numbering of nvFuser's kernels dropped (``nvf::nvfuser_reduction``)."""
    name = signature.strip().removeprefix("void ").replace(_ANONYMOUS, "\0")
    if "::" not in name:  # a copy or a memset as CUPTI names it: "Memcpy DtoD (Device -> Device)"
        return name[:MAX_NAME]
    depth, kept = 0, []
    for char in name:  # template arguments and the argument list, nested, are dropped
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth = max(depth - 1, 0)
        elif depth == 0:
            kept.append(char)
    scope, _, last = "".join(kept).strip().rpartition("::")
    short = f"{scope}::" * bool(scope) + _NVFUSER_NUMBERING.sub(r"\1", last)
    return short.replace("\0", _ANONYMOUS)[:MAX_NAME] or signature.strip()[:MAX_NAME]


def kernel_lists(record: Mapping[str, Any], fusion: str = DEFAULT_FUSION) -> Lists:
    """One record's kernel lists of one fusion's points; entries that are not a list of
    strings are left out (the record is untrusted)."""
    points = record.get("points")
    found: Lists = {}
    if not isinstance(points, Mapping):
        return found
    for point in points.values():
        if not isinstance(point, Mapping) or point.get("fusion", DEFAULT_FUSION) != fusion:
            continue
        dtype, shape, variants = point.get("dtype"), point.get("shape"), point.get("variants")
        if not isinstance(variants, Mapping) or not all(isinstance(s, str) for s in (dtype, shape)):
            continue
        for variant, entry in variants.items():
            names = entry.get(KERNELS_FIELD) if isinstance(entry, Mapping) else None
            if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
                found[(f"{dtype} {shape}", str(variant))] = Counter(map(kernel_name, names))
    return found


def _agreed(runs: Sequence[Lists]) -> Lists:
    """The lists every run of a side has, and has alike."""
    if not runs:
        return {}
    keys = set(runs[0]).intersection(*runs[1:])
    return {k: runs[0][k] for k in keys if all(run[k] == runs[0][k] for run in runs[1:])}


def _names(kernels: Counter[str], counted: bool) -> str:
    """The kernels by name, ``x3`` where ``counted`` and one launches more than once."""
    listed = [f"{k} x{n}" if counted and n > 1 else k for k, n in sorted(kernels.items())]
    more = f" and {len(listed) - NAMED} more" if len(listed) > NAMED else ""
    return ", ".join(listed[:NAMED]) + more


def _span(values: Sequence[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low} to {high}"


class _Change(NamedTuple):
    point: str
    variant: str
    before: Counter[str]
    after: Counter[str]


def _text(changes: Sequence[_Change]) -> str:
    """One sentence for the points of one variant where the same kernels came and went: exact
    where they came and went as often at every point, else as ranges and names."""
    first = changes[0]
    whose = "the hand-written fusion's" if first.variant == REFERENCE else "Thunder's"
    olds = [sum(c.before.values()) for c in changes]
    news = [sum(c.after.values()) for c in changes]
    more = [n - o for o, n in zip(olds, news, strict=True)]
    if all(m == 0 for m in more):
        moved = "other kernels"
    elif all(m > 0 for m in more):
        moved = f"{_span(more)} more kernel{'s' * (max(more) > 1)}"
    elif all(m < 0 for m in more):
        moved = f"{_span([-m for m in more])} kernel{'s' * (min(more) < -1)} fewer"
    else:
        moved = "another number of kernels"
    addeds, losts = [c.after - c.before for c in changes], [c.before - c.after for c in changes]
    exact = all(a == addeds[0] for a in addeds) and all(x == losts[0] for x in losts)
    # Exact: every point's own counts; else the names the points add between them.
    added = addeds[0] if exact else Counter({k for a in addeds for k in a})
    lost = losts[0] if exact else Counter({k for x in losts for k in x})
    some = "" if len({frozenset(a) for a in addeds}) == 1 else " (not each at every point)"
    parts = [f"adds {_names(added, exact)}{some}"] if added else []
    parts += [f"no longer {_names(lost, exact)}"] if lost else []
    counts = f"({_span(news)}, base {_span(olds)})"
    return f"head launches {moved} in {whose} timed call {counts}: {'; '.join(parts)}"


def launch_findings(
    base: Sequence[Lists], head: Sequence[Lists], explained: Collection[tuple[str, str]] = ()
) -> list[Finding]:
    """Head against base: each point and variant whose timed call launches other kernels at
    head than at base, in every run of each side; the points of a variant where the same
    kernels went (and some came) are said in one text, summarised over points by the comparer
    (an unfused backward launches another number of eager kernels at every size);
    ``explained``: the (point, variant) pairs left out, where something else says the cause.
    Material: a kernel more or less runs in the timed time. The kind is :data:`LAUNCHES` where
    a kernel outside nvFuser came or went (what Thunder runs beside the fusion, or the
    hand-written call's own), else :data:`NVFUSER_LAUNCHES` (nvFuser's own kernels: how it
    segmented the fusion)."""
    old, new = _agreed(base), _agreed(head)
    groups: dict[tuple[str, bool, frozenset[str]], list[_Change]] = {}
    for point, variant in sorted(set(old) & set(new)):
        before, after = old[(point, variant)], new[(point, variant)]
        if before != after and (point, variant) not in explained:
            key = (variant, bool(after - before), frozenset(before - after))
            groups.setdefault(key, []).append(_Change(point, variant, before, after))
    found = []
    for (variant, _, lost), changes in groups.items():
        added = {k for c in changes for k in c.after - c.before}
        kind = NVFUSER_LAUNCHES if all("nvfuser_" in k for k in added | lost) else LAUNCHES
        text = _text(changes)
        found += [Finding(kind, c.point, variant, text, True) for c in changes]
    return found

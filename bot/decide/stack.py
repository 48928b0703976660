"""The stack a set of runs measured on (pure): GPU, driver, CUDA, torch, nvFuser, Thunder,
Python and the timer, read from their provenance records (docs/DATA.md), kept in the noise
model (``stack``) and compared with a PR run's.

Why the model keeps it: its between-run noise was measured on one stack, and nothing else said
which (issue 40). A run on another environment (another GPU, CUDA, torch, driver or timer) may
move differently from run to run, so the comment says the calibration may not transfer; it
does not gate. nvFuser's and Thunder's builds are recorded but not compared: a PR run measures
other builds by design.

Every value seen is kept, sorted: runs that disagree leave several, and a run whose record
does not say leaves ``None`` ("unknown"). A field with an unknown value in the model is not
compared; nor is a run's unknown value.

The timer: a record names it in ``timer`` since benchmarks/engine/timing.py's ``TIMER``.
A record without it is "unknown", not today's method, because the method changed under the
committed data: the first suite (96ff68c, data/h200-smoke/) profiled each call in its own
session of CUDA activities; from 8a3146b on, one session a round with CPU tracing, each call
found by its window.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.results.types import BadInput, Provenance

#: Each field and where a provenance record holds it.
WHERE: Mapping[str, tuple[str, ...]] = {
    "gpu": ("gpu", "name"),
    "driver": ("gpu", "driver"),
    "cuda": ("gpu", "cuda"),
    "torch": ("versions", "torch"),
    "nvfuser": ("versions", "nvfuser"),
    "thunder": ("versions", "thunder"),
    "python": ("versions", "python"),
    "timer": ("timer",),
}
FIELDS = tuple(WHERE)
#: The environment: what a PR run is compared on, each at the precision that matters (a
#: torch patch release or a driver's minor version is not another calibration).
ENVIRONMENT = ("torch", "cuda", "driver", "gpu", "timer")
#: How a person reads each field's name.
SHOWN = {
    "gpu": "GPU",
    "driver": "driver",
    "cuda": "CUDA",
    "torch": "torch",
    "nvfuser": "nvFuser",
    "thunder": "Thunder",
    "python": "Python",
    "timer": "timer",
}
_MAJOR_MINOR = re.compile(r"\s*(\d+)\.(\d+)")
_MAJOR = re.compile(r"\s*(\d+)")

Values = tuple[str | None, ...]


@dataclass(frozen=True)
class Stack:
    """Every value each field had over some runs (sorted, ``None`` for a record that did not
    say); a field no run had is ``(None,)``."""

    values: Mapping[str, Values]

    def of(self, name: str) -> Values:
        return self.values.get(name, (None,))


@dataclass(frozen=True)
class Difference:
    """One environment field on which a run is not the model's: both sides' values as
    compared (``"2.11"``, not ``"2.11.0+cu130"``)."""

    field: str
    model: tuple[str, ...]
    run: tuple[str, ...]


def _sorted(values: Iterable[str | None]) -> Values:
    unique = set(values)
    return (*sorted(v for v in unique if v is not None), *((None,) if None in unique else ()))


def record_values(prov: Provenance | None) -> dict[str, str | None]:
    """One run's stack; every field ``None`` without a record."""
    return {name: prov.text(*keys) if prov else None for name, keys in WHERE.items()}


def stack_of(records: Iterable[Provenance | None]) -> Stack:
    runs = [record_values(p) for p in records]
    return Stack({name: _sorted(r[name] for r in runs) if runs else (None,) for name in FIELDS})


def merged(a: Stack, b: Stack) -> Stack:
    """Both sets of runs' stack: a model extended with other runs was fitted on both."""
    return Stack({name: _sorted((*a.of(name), *b.of(name))) for name in FIELDS})


def compared(name: str, value: str | None) -> str | None:
    """A value as the environment compares it: torch and CUDA to major.minor, the driver to its
    major version, the GPU and the timer whole; None where it cannot be read."""
    if value is None:
        return None
    if name in ("torch", "cuda"):
        m = _MAJOR_MINOR.match(value)
        return f"{int(m.group(1))}.{int(m.group(2))}" if m else None
    if name == "driver":
        m = _MAJOR.match(value)
        return str(int(m.group(1))) if m else None  # "unknown (NVML unavailable: ...)"
    return value.strip() or None


def environment(stack: Stack, name: str) -> tuple[str, ...] | None:
    """The field's values as compared, or None where any is unknown (not comparable)."""
    values = [compared(name, v) for v in stack.of(name)]
    if not values or None in values:
        return None
    return tuple(sorted({v for v in values if v is not None}))


def differences(model: Stack, run: Stack) -> tuple[Difference, ...]:
    """The environment fields where the run had a value the model's runs never had; a field
    unknown in the model, and a run's unknown value, tell nothing."""
    out = []
    for name in ENVIRONMENT:
        fitted = environment(model, name)
        if fitted is None:
            continue
        seen = sorted({v for v in (compared(name, x) for x in run.of(name)) if v is not None})
        if set(seen) - set(fitted):
            out.append(Difference(name, fitted, tuple(seen)))
    return tuple(out)


def describe(stack: Stack) -> str:
    """Every field in one line, for the ``noise`` report: "GPU NVIDIA H200, driver ..."."""
    return ", ".join(
        f"{SHOWN[name]} {'/'.join(v or 'unknown' for v in stack.of(name))}" for name in FIELDS
    )


def to_json(stack: Stack) -> dict[str, list[str | None]]:
    return {name: list(stack.of(name)) for name in FIELDS}


def from_json(data: Any, where: str) -> Stack:
    """A model file's ``stack``, strictly: an object of the known fields, each a non-empty list
    of strings and nulls."""
    if not isinstance(data, Mapping):
        raise BadInput(f"{where}: must be an object, not {type(data).__name__}")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise BadInput(f"{where}: unknown field {unknown[0]!r:.60}")
    values: dict[str, Values] = {}
    for name in FIELDS:
        raw = data.get(name, [None])
        if (
            not isinstance(raw, list)
            or not raw
            or not all(v is None or (isinstance(v, str) and v) for v in raw)
        ):
            raise BadInput(f"{where}.{name}: must be a non-empty list of strings or nulls")
        values[name] = _sorted(raw)
    return Stack(values)

"""Correctness before speed: a variant's outputs against the float64 reference of its fusion.

Apart from the measurement loop (measure.py) because it is a concern of its own: what a point's
variant must match, and how close (``REL_TOLERANCE``), decides whether it is timed at all.
"""

from __future__ import annotations

from typing import Any

from ..fusions.spec import Fusion
from . import variants
from .config import REL_TOLERANCE


def _rel_error(got: Any, want: Any) -> tuple[float, float]:
    diff = float((got.double() - want).abs().max())
    scale = float(want.abs().max()) or 1.0
    return diff, diff / scale


class Reference:
    """The float64 outputs a variant must match: computed once for a deterministic fusion,
    per variant for one that draws random numbers (it is judged with its own mask)."""

    def __init__(self, fusion: Fusion, inputs: dict[str, Any]) -> None:
        self.fusion, self.inputs = fusion, inputs
        self.cached: tuple[Any, ...] | None = None

    def __call__(self, got: tuple[Any, ...]) -> tuple[Any, ...]:
        if self.fusion.sanity is not None:
            return self.fusion.expected(self.inputs, got)
        if self.cached is None:
            self.cached = self.fusion.expected(self.inputs, got)
        return self.cached


def check(variant: variants.Variant, ref: Reference, dtype: str) -> dict[str, Any]:
    """Correctness before speed: a wrong result is a failed point, never a timed one."""
    import torch

    variant.clear()
    variant.call()
    torch.cuda.synchronize()
    got = variant.outputs()
    want = ref(got)
    if len(got) != len(want):
        raise ValueError(f"{len(got)} outputs, the reference has {len(want)}")
    errors = [_rel_error(g, w) for g, w in zip(got, want, strict=True)]
    max_abs = max(e[0] for e in errors)
    rel = max(e[1] for e in errors)
    tol = REL_TOLERANCE[dtype]
    status = "ok" if rel <= tol and rel == rel else "incorrect"  # rel != rel: NaN
    insane = ref.fusion.sanity(ref.inputs, got) if ref.fusion.sanity else None
    if insane:
        status = "incorrect"
    out = {"max_abs_error": max_abs, "rel_error": rel, "tolerance": tol, "status": status}
    return {**out, "sanity": insane} if insane else out

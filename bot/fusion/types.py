"""The shapes the fusion comparer's parts hand each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class VariantCapture:
    """One variant's capture at one point and side (a folder of capture.py's files)."""

    folder: Path
    variant: str  # "nvfuser", "thunder-prims", "thunder-func"
    definitions: tuple[str, ...]  # nvFuser definition text, one per fusion (may be empty)
    backward_trace: str | None  # Thunder only
    forward_trace: str | None
    saved: tuple[dict[str, Any], ...]  # [{"name", "shape": [str], "dtype"}], Thunder only
    profile: dict[str, Any] | None  # None: no profile (none made, or the call ran no fusion)
    repro: str | None  # nvFuser's repro script, where captured
    errors: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)  # {"thunder": "0.2.6"}, where captured


@dataclass(frozen=True)
class PointCapture:
    """Every variant of one point (dtype, shape) at one side."""

    dtype: str
    shape: str  # "2048x8192"
    variants: dict[str, VariantCapture]
    #: The call whose programs these are: "backward", or "forward" for a forward fusion.
    call: str = "backward"


@dataclass(frozen=True)
class Finding:
    """One difference, in plain words. ``material`` findings can explain a time change;
    others (a renamed value, a timing within noise) are context."""

    kind: str  # "casts", "ops", "random", "reductions", "broadcasts", "saved", "extents", "inputs",
    #            "launches", "nvfuser-launches" (bot/fusion/launches.py),
    #            "fusions", "segments", "kernels", "scheduler", "launch", "same-program"
    point: str  # "bfloat16 2048x8192"
    variant: str
    text: str  # "head casts the saved rms fp32 -> bf16 -> fp32: 2 extra casts"
    material: bool = True

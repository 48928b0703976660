"""A slowdown of known size, made on the GPU for real: an extra kernel inside the timed call.

Why: the bot's power against a small regression, on either side (Thunder's backward, or the
hand-written nvFuser fusion), must be measured on real runs, and a real code change of a chosen
size does not exist. ``torch.cuda._sleep(cycles)`` launched right after the backward, inside
the same timed call, adds one kernel of a length set by ``cycles`` (on the H200 about 0.55 us +
0.0005 us per cycle, ../shared/NOTES.md section 6), which the profiler attributes to that call
like any of its own kernels. Its length is fitted on the device at the start of a run and
measured again for every point, and both are kept in the record, so the data say how much was
really added (at the smallest points the sleep kernel's floor can exceed the asked fraction).

Selected with ``RMSNORM_BENCH_SLOWDOWN=[FUSION/]SIDE:FRACTION``: ``thunder:0.05`` slows both
Thunder variants by 5% of their own kernel time, ``nvfuser:0.02`` the hand-written fusion by 2%,
in every fusion measured; ``softmax_bwd/thunder:0.1`` slows Thunder's softmax backward only.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..fusions.spec import DEFAULT_FUSION
from . import timing

SIDES = ("thunder", "nvfuser")
#: Cycle counts the sleep kernel is timed at to fit its length (microseconds per cycle and the
#: launch floor); the range covers 2% of the shortest point to 5% of the longest one.
FIT_CYCLES = (0, 2_000, 8_000, 32_000, 64_000)
FIT_REPEATS = 5


@dataclass(frozen=True)
class Slowdown:
    side: str
    fraction: float
    #: The one fusion it slows; None: every fusion measured.
    fusion: str | None = None

    @classmethod
    def parse(cls, text: str) -> Slowdown | None:
        """``[FUSION/]SIDE:FRACTION`` (``thunder:0.05``), or None for an empty setting."""
        if not text.strip():
            return None
        scope, _, rest = text.strip().rpartition("/")
        side, _, value = rest.partition(":")
        try:
            fraction = float(value)
        except ValueError:
            fraction = float("nan")
        if side not in SIDES or not 0 < fraction <= 1:
            raise ValueError(
                f"RMSNORM_BENCH_SLOWDOWN={text!r}: expected [FUSION/]SIDE:FRACTION with SIDE one "
                f"of {', '.join(SIDES)} and 0 < FRACTION <= 1 (e.g. thunder:0.05)"
            )
        if scope:
            from ..fusions.catalog import FUSIONS

            if scope not in FUSIONS:
                raise ValueError(
                    f"RMSNORM_BENCH_SLOWDOWN={text!r}: unknown fusion {scope!r} "
                    f"(known: {', '.join(FUSIONS)})"
                )
        return cls(side, fraction, scope or None)

    def applies_to(self, variant: str, fusion: str = DEFAULT_FUSION) -> bool:
        if self.fusion is not None and fusion != self.fusion:
            return False
        if self.side == "nvfuser":
            return variant == "nvfuser"
        return variant.startswith("thunder-")

    @property
    def label(self) -> str:
        scope = f"{self.fusion}/" if self.fusion else ""
        return f"{scope}{self.side}:{self.fraction:g}"


@dataclass(frozen=True)
class SleepFit:
    """Length of the sleep kernel: ``floor_us + us_per_cycle * cycles`` (least squares)."""

    floor_us: float
    us_per_cycle: float

    def cycles_for(self, target_us: float) -> int:
        """Cycles for a kernel of `target_us`; 0 (the floor) when the target is below it."""
        if target_us <= self.floor_us or self.us_per_cycle <= 0:
            return 0
        return round((target_us - self.floor_us) / self.us_per_cycle)


def fit(points: Sequence[tuple[int, float]]) -> SleepFit:
    """Least-squares line through (cycles, microseconds) pairs."""
    xs = [float(c) for c, _ in points]
    ys = [us for _, us in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("the sleep kernel must be timed at two cycle counts at least")
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return SleepFit(my - slope * mx, slope)


def sleep_us(cycles: int) -> float:
    """Median measured length of the sleep kernel at `cycles`."""
    import torch

    return statistics.median(
        timing.profile_call(lambda: torch.cuda._sleep(cycles)).kernel_us for _ in range(FIT_REPEATS)
    )


def fit_on_device() -> tuple[SleepFit, list[Any]]:
    """The fit, and the measurements it came from (kept in the record)."""
    measured = [(cycles, sleep_us(cycles)) for cycles in FIT_CYCLES]
    return fit(measured), [list(m) for m in measured]


def slowed(call: Callable[[], None], cycles: int) -> Callable[[], None]:
    """`call`, then the sleep kernel, inside the same timed call."""
    import torch

    def run() -> None:
        call()
        torch.cuda._sleep(cycles)

    return run

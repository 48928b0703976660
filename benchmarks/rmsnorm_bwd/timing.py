"""Kernel time of one call, the way GPU people trust it.

The figure is the sum of the durations of the GPU activities (kernels, memsets, copies) that one
call launches, read from the profiler (CUPTI underneath), as nvFuser's own harness does. Host
overhead (Thunder spends hundreds of microseconds in Python per backward) never enters it; it is
measured apart, by wall clock, and reported apart.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Bytes written to evict the L2 before every timed call; several times the largest L2 we know
#: (60 MB on an H200), so the previous round's data is gone.
FLUSH_FACTOR = 4


@dataclass(frozen=True)
class KernelSample:
    """What one profiled call did on the GPU."""

    kernel_us: float
    names: tuple[str, ...]


class L2Flusher:
    """Evicts the L2 by writing a buffer several times its size."""

    def __init__(self, l2_bytes: int) -> None:
        import torch

        self._buf = torch.empty(max(l2_bytes, 1 << 20) * FLUSH_FACTOR, dtype=torch.int8, device="cuda")

    def __call__(self) -> None:
        self._buf.zero_()


def _duration_us(event: Any) -> float:
    return float(event.time_range.elapsed_us())


def profile_call(call: Callable[[], None]) -> KernelSample:
    """Run ``call`` once under the profiler and add up its GPU activities."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    device_events = [e for e in prof.events() if e.device_type == DeviceType.CUDA]
    return KernelSample(
        kernel_us=sum(_duration_us(e) for e in device_events),
        names=tuple(e.name for e in device_events),
    )


def host_wall_us(call: Callable[[], None]) -> float:
    """Wall time from launching ``call`` to the GPU finishing it, without the profiler."""
    import torch

    torch.cuda.synchronize()
    start = time.perf_counter()
    call()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e6

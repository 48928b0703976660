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

#: This method, as each provenance record names it (``timer``, docs/DATA.md): the noise model
#: records the timer its runs had, and a run timed otherwise is told its calibration may not
#: transfer. Name it anew whenever the method changes; a record without it is "unknown", as the
#: method changed under the committed data (one session a call, CUDA only, in 96ff68c).
TIMER = (
    "torch.profiler: a session a round with CPU tracing (per-call fallback), L2 flushed before "
    "each call"
)
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

        self._buf = torch.empty(
            max(l2_bytes, 1 << 20) * FLUSH_FACTOR, dtype=torch.int8, device="cuda"
        )

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


@dataclass(frozen=True)
class DeviceEvent:
    """One GPU activity on the profiler's timeline (microseconds)."""

    name: str
    start_us: float
    duration_us: float


@dataclass(frozen=True)
class Window:
    """The host-side span of one labelled call, from launch to its synchronize."""

    label: str
    start_us: float
    end_us: float


def attribute(
    windows: list[Window], events: list[DeviceEvent], expected_outside: int
) -> dict[str, KernelSample] | None:
    """Assign each GPU activity to the call whose window contains its start.

    Why: one profiler session per round instead of one per call (each session costs far more
    than the kernels it times). The calls are separated by synchronizes, so their activities
    cannot overlap; the only activities outside every window are the L2 flushes. When the count
    outside is not exactly ``expected_outside``, or a window caught nothing, the attribution is
    not trusted and None is returned (the caller then profiles call by call).
    """
    found: dict[str, list[DeviceEvent]] = {w.label: [] for w in windows}
    outside = 0
    for event in events:
        owners = [w for w in windows if w.start_us <= event.start_us <= w.end_us]
        if len(owners) == 1:
            found[owners[0].label].append(event)
        elif not owners:
            outside += 1
        else:
            return None
    if outside != expected_outside or any(not hits for hits in found.values()):
        return None
    return {
        label: KernelSample(
            kernel_us=sum(e.duration_us for e in hits), names=tuple(e.name for e in hits)
        )
        for label, hits in found.items()
    }


def profile_round(
    calls: list[tuple[str, Callable[[], None], Callable[[], None]]], flush: L2Flusher
) -> dict[str, KernelSample]:
    """Kernel time of each (name, call, clear) in order, under one profiler session."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile, record_function

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for name, call, clear in calls:
            clear()
            flush()
            torch.cuda.synchronize()
            with record_function(f"rmsnorm-call:{name}"):
                call()
                torch.cuda.synchronize()
    windows, events = [], []
    for e in prof.events():
        if e.device_type == DeviceType.CUDA:
            if not e.name.startswith("rmsnorm-call:"):  # GPU-side copies of the annotations
                events.append(DeviceEvent(e.name, float(e.time_range.start), _duration_us(e)))
        elif e.name.startswith("rmsnorm-call:"):
            windows.append(
                Window(e.name.split(":", 1)[1], float(e.time_range.start), float(e.time_range.end))
            )
    samples = attribute(windows, events, expected_outside=len(calls))
    if samples is None:  # not trusted: fall back to one session per call
        samples = {}
        for name, call, clear in calls:
            clear()
            flush()
            samples[name] = profile_call(call)
        samples["__fallback__"] = KernelSample(0.0, ())
    return samples


def host_wall_us(call: Callable[[], None]) -> float:
    """Wall time from launching ``call`` to the GPU finishing it, without the profiler."""
    import torch

    torch.cuda.synchronize()
    start = time.perf_counter()
    call()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e6

"""What every reproducer script shares (pure): the dtypes it takes, the point's extents, and the
timing loop (20 calls, L2 flushed before each, CUDA events: enough to see a regression and to
bisect with)."""

from __future__ import annotations

DTYPES = {"bfloat16", "float16", "float32"}
#: The Thunder variants a script can jit: from primitives, and via torch.nn.functional.
THUNDER_VARIANTS = ("thunder-prims", "thunder-func")


def mn(shape: str) -> tuple[int, int]:
    m, _, n = shape.partition("x")
    if not (m.isdigit() and n.isdigit()):
        raise ValueError(f"shape {shape!r} is not MxN")
    return int(m), int(n)


def timing(call: str, what: str, before: str = "") -> list[str]:
    """20 calls of ``call``, L2 flushed before each, timed with CUDA events; the median."""
    return [
        "flush = torch.empty(256 << 20, dtype=torch.uint8, device='cuda')",
        "start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)",
        "times = []",
        "for _ in range(20):",
        *([f"    {before}"] if before else []),
        "    flush.zero_()  # L2 flushed before each call",
        "    start.record()",
        f"    {call}",
        "    end.record()",
        "    end.synchronize()",
        "    times.append(start.elapsed_time(end) * 1000)",
        f"print(f'{what}: median {{sorted(times)[10]:.1f}} us over 20 calls (host and kernels)')",
    ]

"""A neighbour on the measured GPU: another process copying memory while the suite measures.

Its intensity, stated: two buffers of ``--mib`` MiB (default 1024) on the current CUDA device;
each cycle is one ``dst.copy_(src)`` (reads and writes ``--mib`` MiB each), a
``torch.cuda.synchronize()``, then a sleep of ``--sleep-ms`` (default: env ``DRIFT_SLEEP_MS``,
else 20 ms). On an H200 a 1 GiB device-to-device copy takes well under a millisecond, so the
default keeps the GPU's memory busy a few percent of the wall time, in bursts; the summary
says what it was (``busy_share``: copy + sync time over wall time).

It stops on SIGTERM or SIGINT (data/h200-drift/run.sh stops it after the measurement), and by
itself after ``--seconds`` in any case, so a killed caller never leaves it running for long.
After its first copy it touches ``--ready FILE``; at exit it prints one JSON line (the
summary) to stdout.

    python3 data/h200-drift/neighbour.py --seconds 240 --ready /tmp/neighbour.ready
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import time
from pathlib import Path
from types import FrameType

MIB = 1 << 20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=1024, help="size of each buffer (MiB)")
    parser.add_argument(
        "--sleep-ms",
        type=float,
        default=float(os.environ.get("DRIFT_SLEEP_MS") or 20),
        help="sleep between copies (ms; default env DRIFT_SLEEP_MS, else 20)",
    )
    parser.add_argument("--seconds", type=float, default=240.0, help="stop by itself after this")
    parser.add_argument("--ready", type=Path, help="touched after the first copy")
    args = parser.parse_args(argv)
    if args.mib <= 0 or args.sleep_ms < 0 or args.seconds <= 0:
        parser.error("--mib and --seconds must be > 0, --sleep-ms >= 0")

    stop = {"why": "time limit"}

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop["why"] = signal.Signals(signum).name

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    import torch

    started = time.time()
    deadline = time.monotonic() + args.seconds
    src = torch.ones(args.mib * MIB, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    torch.cuda.synchronize()
    copy_s: list[float] = []
    t0 = time.monotonic()
    while stop["why"] == "time limit" and time.monotonic() < deadline:
        c0 = time.monotonic()
        dst.copy_(src)
        torch.cuda.synchronize()
        copy_s.append(time.monotonic() - c0)
        if len(copy_s) == 1 and args.ready is not None:
            args.ready.touch()
        time.sleep(args.sleep_ms / 1000)
    wall = time.monotonic() - t0
    busy = sum(copy_s)
    summary = {
        "neighbour": "dst.copy_(src), torch.cuda.synchronize(), sleep",
        "device": torch.cuda.get_device_name(),
        "pid": os.getpid(),
        "mib": args.mib,
        "sleep_ms": args.sleep_ms,
        "time_limit_s": args.seconds,
        "stopped_by": stop["why"],
        "started_at": started,
        "finished_at": time.time(),
        "wall_s": round(wall, 3),
        "copies": len(copy_s),
        "busy_s": round(busy, 3),
        "busy_share": round(busy / wall, 4) if wall > 0 else None,
        "copy_ms_median": round(1000 * statistics.median(copy_s), 3) if copy_s else None,
        "copy_ms_max": round(1000 * max(copy_s), 3) if copy_s else None,
        # bytes read + written per second of copying
        "copy_gbps": round(2 * args.mib * MIB * len(copy_s) / busy / 1e9, 1) if busy else None,
    }
    print(json.dumps(summary, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

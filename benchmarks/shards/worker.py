"""The measuring process of one shard: ``python3 -m benchmarks.shards.worker`` (run by ``run``).

Its own process because the runner checks around it (benchmarks/runner_check.py) must see the
GPU with no CUDA context of ours on it. The shard's id and where to write come in the
environment (``SHARD_RUN_ID``, ``SHARD_DIR``, ``SHARD_LABEL``, ``SHARD_PROCESS_START``); the
suite's settings, the points to measure included (``RMSNORM_BENCH_POINTS``), in the usual
``RMSNORM_BENCH_*`` variables. Every
point is written the moment it is measured; the run header last, so a header means the process
finished and its settings are known.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

from benchmarks.engine.config import SuiteConfig, point_key
from benchmarks.shards.common import Exit
from benchmarks.shards.store import RUN_SCHEMA, write_json_atomic, write_point


def main() -> int:
    from benchmarks.engine.measure import measure_key, progress_line
    from benchmarks.engine.session import open_run, run_header

    cfg = SuiteConfig.from_env()
    folder = Path(os.environ["SHARD_DIR"])
    run_id = os.environ["SHARD_RUN_ID"]
    todo = cfg.fusion_points()  # every fusion of the run, the catalog's order
    run = open_run(cfg)
    if isinstance(run, str):
        print(f"shards: {run}", file=sys.stderr)
        return Exit.NO_GPU
    start = float(os.environ.get("SHARD_PROCESS_START", time.time()))

    def write_run(finished: bool) -> None:
        """The header first with ``finished`` false, before any point: a process killed
        half-way (a job's time limit, a lost runner) leaves points whose settings are known,
        so a re-run keeps them and measures only the rest; rewritten whole at the end."""
        header = run_header(cfg, run)
        header["suite_digest"] = os.environ.get("SHARD_SUITE_DIGEST")
        write_json_atomic(
            folder / f"run-{run_id}.json",
            {
                "schema": RUN_SCHEMA,
                "id": run_id,
                "shard": os.environ.get("SHARD_LABEL"),
                "host": socket.gethostname(),
                "finished": finished,
                "points": [point_key(d, s, f) for f, d, s in todo],
                # From before the imports: what a shard costs, not only its points.
                "process_wall_s": round(time.time() - start, 1) if finished else None,
                "header": header,
            },
        )

    write_run(finished=False)
    failed = 0
    for i, (fusion, dtype, shape) in enumerate(todo, 1):
        key = point_key(dtype, shape, fusion)
        point = measure_key(run, cfg, dtype, shape, fusion)
        failed += "error" in point
        write_point(folder, key, point, run_id)
        print(progress_line(i, len(todo), key, point), file=sys.stderr, flush=True)
    write_run(finished=True)
    return Exit.POINT_FAILED if failed else Exit.OK


if __name__ == "__main__":
    sys.exit(main())

"""Can nvFuser's PythonProfiler (CUPTI subscriber) run in a process after torch.profiler did?

    python3 data/issue39/cupti_probe.py MODE     MODE: default | teardown-env | teardown-late

Builds the hand-written RMSNorm backward at the smoke point, times 25 rounds with the suite's
timer (torch.profiler, CUDA activity only; the seconds the sessions took are printed), then asks
nvFuser for its profile of one execute, as capture.py does. nvFuser exits the process when its
cuptiSubscribe fails, so each mode is its own process. teardown-env sets Kineto's
TEARDOWN_CUPTI=1 before torch is imported; teardown-late sets it only before the last round.
"""

import os
import sys
import time

mode = sys.argv[1]
if mode == "teardown-env":
    os.environ["TEARDOWN_CUPTI"] = "1"

import torch  # noqa: E402

from benchmarks.engine import timing, variants  # noqa: E402
from benchmarks.engine.capture_files import profile_of  # noqa: E402
from benchmarks.fusions.catalog import FUSIONS  # noqa: E402

f = FUSIONS["rmsnorm_bwd"]
inputs = f.make_inputs(2048, 8192, "bfloat16", 0)
v = variants.build("nvfuser", inputs, "bfloat16", "stock", f)
flush = timing.L2Flusher(torch.cuda.get_device_properties(0).L2_cache_size)
calls = [(f"nvfuser#{i}", v.call, v.clear) for i in range(8)]
start = time.perf_counter()
for r in range(25):
    if mode == "teardown-late" and r == 24:
        os.environ["TEARDOWN_CUPTI"] = "1"
    got = timing.profile_round(calls, flush)
    fallback = "__fallback__" in got
print(
    f"{mode}: 25 rounds {time.perf_counter() - start:.2f} s, last fallback {fallback}, "
    f"median {sorted(s.kernel_us for k, s in got.items() if k != '__fallback__')[4]:.1f} us",
    flush=True,
)
start = time.perf_counter()
prof = profile_of(lambda: v.built.fd.execute(v.built.args))
print(
    f"{mode}: nvFuser profile in {time.perf_counter() - start:.2f} s: "
    f"{sorted(prof)[:6] if isinstance(prof, dict) else type(prof)}",
    flush=True,
)
got = timing.profile_round(calls, flush)
print(
    f"{mode}: a round after the nvFuser profile: fallback {'__fallback__' in got}, "
    f"{len(got)} samples, names {next(iter(got.values())).names}",
    flush=True,
)

"""Where a number came from: the GPU, its clocks, the driver and every version that matters.

asv's machine.json has no GPU fields, so the suite keeps this record itself (docs/DATA.md).
NVML (nvidia-ml-py) is optional: without it the record says what it could not read.
"""

from __future__ import annotations

import json
import os
import platform
import time
from datetime import datetime, timezone
from typing import Any


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def process_started(self_stat: str, proc_stat: str, clock_ticks: int) -> float:
    """When a process started, in seconds since the epoch, from Linux's ``/proc/self/stat``
    (its 22nd field: clock ticks after boot) and ``/proc/stat`` (``btime``: the boot's epoch)."""
    fields = self_stat[self_stat.rindex(")") + 2 :].split()  # after "pid (comm) ": field 3 on
    boot = next(
        int(line.split()[1]) for line in proc_stat.splitlines() if line.startswith("btime ")
    )
    return boot + int(fields[22 - 3]) / clock_ticks


def process_age_s() -> float | None:
    """Seconds since this process started (its interpreter's start-up and imports, before a
    run opens), or None where /proc cannot tell."""
    try:
        with (
            open("/proc/self/stat", encoding="ascii") as fh,
            open("/proc/stat", encoding="ascii") as st,
        ):
            started = process_started(fh.read(), st.read(), os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, StopIteration, IndexError):
        return None
    return round(time.time() - started, 2)


def _nvml_handle() -> Any:
    import pynvml

    pynvml.nvmlInit()
    return pynvml.nvmlDeviceGetHandleByIndex(0)


def clocks() -> dict[str, Any]:
    """SM and memory clocks and temperature now; drift between start and end is worth seeing."""
    try:
        import pynvml

        handle = _nvml_handle()
        return {
            "sm_mhz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
            "mem_mhz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM),
            "temperature_c": pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU),
        }
    except Exception as exc:  # NVML absent or refused: say so, do not guess
        return {"error": f"NVML unavailable: {exc}"}


def peak_bandwidth() -> tuple[float | None, str]:
    """Theoretical DRAM bandwidth in GB/s from NVML: max memory clock x bus width x 2 (DDR)."""
    try:
        import pynvml

        handle = _nvml_handle()
        mem_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)
        bus_bits = pynvml.nvmlDeviceGetMemoryBusWidth(handle)
        gbps = mem_mhz * 1e6 * 2 * bus_bits / 8 / 1e9
        return gbps, f"nvml: max memory clock {mem_mhz} MHz x {bus_bits}-bit bus x 2"
    except Exception as exc:
        return None, f"NVML unavailable: {exc}"


def copy_bandwidth_gbps(nbytes: int = 2 << 30, repeats: int = 5) -> float:
    """Measured device-to-device copy rate (read + write bytes), the practical ceiling."""
    import torch

    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best_ms = float("inf")
    for _ in range(repeats):
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        best_ms = min(best_ms, start.elapsed_time(end))
    del src, dst
    torch.cuda.empty_cache()
    return 2 * nbytes / (best_ms * 1e-3) / 1e9


def gpu() -> dict[str, Any]:
    """Static facts of device 0."""
    import torch

    props = torch.cuda.get_device_properties(0)
    info: dict[str, Any] = {
        "name": props.name,
        "cuda": torch.version.cuda,
        "sm_count": props.multi_processor_count,
        "l2_bytes": getattr(props, "L2_cache_size", None),
        "memory_bytes": props.total_memory,
        "capability": f"{props.major}.{props.minor}",
    }
    try:
        import pynvml

        _nvml_handle()
        driver = pynvml.nvmlSystemGetDriverVersion()
        info["driver"] = driver.decode() if isinstance(driver, bytes) else driver
    except Exception as exc:
        info["driver"] = f"unknown (NVML unavailable: {exc})"
    peak, source = peak_bandwidth()
    info["peak_bandwidth_gbps"] = peak
    info["peak_bandwidth_source"] = source
    info["copy_bandwidth_gbps"] = round(copy_bandwidth_gbps(), 1)
    if peak is None:  # no datasheet figure is hard-coded: fall back to what we measured
        info["peak_bandwidth_gbps"] = info["copy_bandwidth_gbps"]
        info["peak_bandwidth_source"] = f"measured device copy ({source})"
    return info


def under_test(text: str | None) -> dict[str, Any] | None:
    """The side's package-under-test record, passed by benchmarks/under_test as JSON; a value
    that is not a JSON object is a caller's bug, so it fails the run rather than vanish."""
    if not text:
        return None
    record = json.loads(text)
    if not isinstance(record, dict):
        raise ValueError("RMSNORM_BENCH_UNDER_TEST is not a JSON object")
    return record


def versions() -> dict[str, str]:
    from importlib import metadata

    import torch

    found = {"python": platform.python_version(), "torch": torch.__version__}
    for key, dist in (
        ("nvfuser", "nvfuser-cu130-torch210"),
        ("thunder", "lightning-thunder"),
        ("asv", "asv"),
        ("asv_runner", "asv-runner"),
    ):
        try:
            found[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            found[key] = "not installed"
    try:
        import nvfuser_direct

        found["nvfuser"] = str(nvfuser_direct.version())  # carries the git hash of the build
    except Exception as exc:
        found["nvfuser"] += f" (nvfuser_direct does not import: {exc.__class__.__name__})"
    return found

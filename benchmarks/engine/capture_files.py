"""How capture.py writes a capture: a variant's folder with each step's failure recorded, nvFuser's
profile objects as JSON, a trace's tensor proxies as name, shape and dtype. Nothing here knows
a fusion; torch and nvFuser are imported inside the functions that need them."""

from __future__ import annotations

import json
import re
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

PUBLIC_SKIP = ("__",)


def _plain(value: Any, depth: int = 0) -> Any:
    """A JSON-able view of an nvFuser profile object: its public attributes, recursively."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if depth > 4:
        return repr(value)
    fields: dict[str, Any] = {"__type__": type(value).__name__}
    for name in dir(value):
        if name.startswith("_"):
            continue
        try:
            attr = getattr(value, name)
        except Exception as exc:  # a property the build does not support
            fields[name] = f"<unreadable: {exc.__class__.__name__}>"
            continue
        if callable(attr):
            continue
        fields[name] = _plain(attr, depth + 1)
    return fields


class Capture:
    """One variant's folder; ``step`` runs one capture and records its failure, if any."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.errors: dict[str, str] = {}

    def step(self, name: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:
            self.errors[name] = f"{exc.__class__.__name__}: {exc}\n{traceback.format_exc()[-1500:]}"
            return None

    def write(self, name: str, text: str) -> None:
        (self.folder / name).write_text(text, encoding="utf-8")

    def write_json(self, name: str, value: Any) -> None:
        self.write(name, json.dumps(value, indent=1, sort_keys=True, default=repr) + "\n")

    def close(self) -> None:
        self.write_json("errors.json", self.errors)


#: fusion ids already profiled in this process: PythonProfiler hands back the last profile it
#: made when the profiled call ran no nvFuser fusion (seen on the H200: every unfused-backward
#: Thunder variant "profiled" as the hand-written fusion just before it, same fusion_id).
_SEEN_FUSIONS: set[int] = set()


#: Where :func:`launch_profile_of`'s profile comes from (its ``source``): the bot compares only
#: profiles of one source (nvFuser's own profiler splits shared memory, this one cannot).
KINETO_SOURCE = "torch.profiler kernel records"
_NVFUSER_KERNEL = re.compile(
    r"(?<![A-Za-z0-9_])nvfuser_(?P<scheduler>[a-z_]+?)_f\d+_c\d+_r\d+_g\d+\b"
)


def launch_profile_of(call: Callable[[], Any]) -> dict[str, Any]:
    """nvFuser's kernels of one steady call, with what the bot compares of them (segments;
    each kernel's scheduler, grid, block, registers, shared memory), read from the CUPTI
    kernel records of a torch.profiler session.

    Why not nvFuser's own profiler (:func:`profile_of`): it subscribes to CUPTI, which fails in
    a process where torch.profiler already has (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
    also with Kineto's TEARDOWN_CUPTI), and nvFuser then exits the process
    (data/h100-issue39/README.md); the measuring process times with torch.profiler. The scheduler is
    the one nvFuser names its kernel by (``nvfuser_<scheduler>_f0_c1_r0_g0``)."""
    import tempfile

    import torch
    from torch.profiler import ProfilerActivity, profile

    call()  # compiled and warm: the profile is of a steady call
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.json"
        prof.export_chrome_trace(str(path))
        trace = json.loads(path.read_text(encoding="utf-8"))
    return kernel_profile_from_trace(trace)


def kernel_profile_from_trace(trace: dict[str, Any]) -> dict[str, Any]:
    """The profile of :func:`launch_profile_of` from a chrome trace's kernel events (pure).

    Kineto names a kernel by its demangled signature (``nvf::nvfuser_inner_outer_persistent_
    f0_c1_r0_g0(nvf::Tensor<...>, ...)``, seen on an H100): the nvFuser kernel's own name is
    found inside it. Every kernel's launch arguments are kept whole (``args``) beside the
    fields the bot compares, so a field read under another name is not lost."""
    kernels = sorted(
        (e for e in trace.get("traceEvents", []) if e.get("cat") == "kernel"),
        key=lambda e: float(e.get("ts", 0.0)),
    )
    profiles, others = [], []
    for event in kernels:
        full, args = str(event.get("name", "")), dict(event.get("args", {}))
        found = _NVFUSER_KERNEL.search(full)
        if found is None:
            others.append({"name": full, "args": args})
            continue
        profiles.append(
            {
                "name": found[0],
                "scheduler": found["scheduler"],
                "grid_str": str(list(args.get("grid", []))),
                "block_str": str(list(args.get("block", []))),
                "registers": args.get("registers per thread"),
                "shared_mem_str": str([args.get("shared memory")]),
                "time_us": event.get("dur"),
                "args": args,
            }
        )
    return {
        "source": KINETO_SOURCE,
        "segments": len(profiles),
        "kernel_profiles": profiles,
        "other_kernels": others,
    }


def profile_of(call: Callable[[], Any]) -> Any:
    import torch
    from nvfuser_direct import PythonProfiler

    call()  # compiled and warm: the profile is of a steady call
    torch.cuda.synchronize()
    with PythonProfiler() as prof:
        call()
        torch.cuda.synchronize()
    profile = _plain(prof.profile)
    fusion_id = profile.get("fusion_id") if isinstance(profile, dict) else None
    if isinstance(fusion_id, int) and fusion_id in _SEEN_FUSIONS:
        return {
            "no_fusion": True,
            "why": f"the profile is of fusion {fusion_id}, profiled before: "
            "this call ran no nvFuser fusion of its own",
        }
    if isinstance(fusion_id, int):
        _SEEN_FUSIONS.add(fusion_id)
    return profile


def proxies(value: Any) -> list[dict[str, Any]]:
    """Tensor proxies in a (nested) trace argument, as name, shape and dtype."""
    found: list[dict[str, Any]] = []
    if isinstance(value, (list, tuple)):
        for v in value:
            found += proxies(v)
    elif isinstance(value, dict):
        for v in value.values():
            found += proxies(v)
    elif hasattr(value, "name") and hasattr(value, "shape"):
        found.append(
            {
                "name": str(value.name),
                "shape": [str(s) for s in value.shape],
                "dtype": str(getattr(value, "dtype", "?")),
            }
        )
    return found

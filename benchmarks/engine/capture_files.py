"""How capture.py writes a capture: a variant's folder with each step's failure recorded, nvFuser's
profile objects as JSON, a trace's tensor proxies as name, shape and dtype. Nothing here knows
a fusion; torch and nvFuser are imported inside the functions that need them."""

from __future__ import annotations

import json
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

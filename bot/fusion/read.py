"""Reading one side's captures (capture.py's folders), strictly and within size limits.

The captures come from a GPU runner, so they are read like the results are: every file
size-capped (:func:`bot.results.limits.read_capped`), every JSON shape checked, and any
surprise a :class:`~bot.results.types.BadInput` that names the file. A missing file is not a
surprise (a Thunder-only file at the hand-written variant, a step that failed): it reads as
None or empty, and the comparer says what it could not compare.

One recorded defect is undone here, where the files are read: nvFuser's PythonProfiler hands
back its *last* profile when the profiled call ran no fusion, so a Thunder variant whose
profile carries the hand-written fusion's ``fusion_id`` at the same point and side (the 18
files of ``unfused-backward-0.2.6``), like one that says ``{"no_fusion": true}``, has no
profile.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.fusion.names import timed_call
from bot.fusion.types import PointCapture, VariantCapture
from bot.results import names
from bot.results.limits import MIB, read_capped
from bot.results.types import DEFAULT_FUSION, REFERENCE, BadInput  # REFERENCE: hand-written

#: One program text (a definition, a trace, a repro script); the real ones are under 10 kB.
MAX_TEXT_BYTES = 4 * MIB
#: One JSON file (saved tensors, profile, errors, versions); the real ones are under 2 kB.
MAX_JSON_BYTES = 4 * MIB
#: Point folders in one side, variants in one point: far above the nine points x 3 variants.
MAX_ENTRIES = 1_000

NO_FUSION = "# no nvFuser fusion in the trace"
POINT_DIR = re.compile(r"(?P<dtype>[a-z][a-z0-9]*)_(?P<shape>[0-9]+(?:x[0-9]+)*)")
VARIANT_DIR = re.compile(r"[a-z][a-z0-9-]*")
#: Another fusion's folder inside a side's (``softmax_bwd/``): RMSNorm backward's points sit in
#: the side's folder itself, as before the catalog, beside the other fusions' folders.
FUSION_DIR = re.compile(r"[a-z][a-z0-9]*(?:_[a-z][a-z0-9]*)+")
FUSION_SEPARATOR = re.compile(r"^# ===== nvFusion[0-9]+[ \t]*$", re.MULTILINE)


def fusion_folder(side: Path, fusion: str) -> Path:
    """Where one fusion's points are in a side's folder (benchmarks/engine/capture.py).
    The name is from a results file: only a catalog fusion's becomes part of a path."""
    names.fusion(fusion, f"{side}: captures")
    return side if fusion == DEFAULT_FUSION else side / fusion


def has_fusion(side: Path, fusion: str) -> bool:
    """Whether the side captured the fusion (a run may capture some fusions only)."""
    folder = fusion_folder(side, fusion)
    if fusion != DEFAULT_FUSION:
        return folder.is_dir()
    return folder.is_dir() and any(POINT_DIR.fullmatch(e.name) for e in _entries(folder))


def read_side(folder: Path, fusion: str = DEFAULT_FUSION) -> dict[str, PointCapture]:
    """Every point of one fusion at one side (a state's folder), keyed
    ``"bfloat16 2048x8192"``."""
    own = fusion_folder(folder, fusion)
    if not own.is_dir():
        raise BadInput(f"{own}: not a folder of fusion captures")
    call = timed_call(fusion)
    points: dict[str, PointCapture] = {}
    for entry in _entries(own):
        if fusion == DEFAULT_FUSION and entry.is_dir() and FUSION_DIR.fullmatch(entry.name):
            continue  # another fusion's folder
        match = POINT_DIR.fullmatch(entry.name)
        if not entry.is_dir() or match is None:
            raise BadInput(f"{entry}: not a point folder (<dtype>_<shape>: bfloat16_2048x8192)")
        variants = {}
        for sub in _entries(entry):
            if not sub.is_dir() or not VARIANT_DIR.fullmatch(sub.name):
                raise BadInput(f"{sub}: not a variant folder (nvfuser, thunder-prims, ...)")
            variants[sub.name] = _read_variant(sub)
        point = PointCapture(match["dtype"], match["shape"], _drop_stale(variants), call)
        points[f"{point.dtype} {point.shape}"] = point
    return points


def _entries(folder: Path) -> list[Path]:
    found = sorted(folder.iterdir())
    if len(found) > MAX_ENTRIES:
        raise BadInput(f"{folder}: more than {MAX_ENTRIES} entries (bot/fusion/read.py)")
    return found


def _read_variant(folder: Path) -> VariantCapture:
    saved = _json(folder / "saved.json")
    profile = _json(folder / "profile.json")
    errors = _strings(_json(folder / "errors.json"), folder / "errors.json")
    versions = _json(folder / "versions.json")
    if not (folder / "definition.py.txt").is_file():
        # Not captured is not "no fusion": a failed capture step must not read as a change.
        errors = {**errors, "definition": "not captured (no definition.py.txt)"}
    return VariantCapture(
        folder=folder,
        variant=folder.name,
        definitions=_definitions(folder / "definition.py.txt"),
        backward_trace=_text(folder / "backward_trace.py.txt"),
        forward_trace=_text(folder / "forward_trace.py.txt"),
        saved=_saved(saved, folder / "saved.json"),
        profile=_profile(profile, folder / "profile.json"),
        repro=_text(folder / "repro.py.txt"),
        errors=errors,
        versions=_strings(versions, folder / "versions.json"),
    )


def _text(path: Path) -> str | None:
    if not path.exists():
        return None
    data = read_capped(path, MAX_TEXT_BYTES, "program text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _json(path: Path) -> Any:
    if not path.exists():
        return None
    data = read_capped(path, MAX_JSON_BYTES, "capture JSON")
    try:
        return json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadInput(f"{path}: not valid JSON: {exc}") from None


def _definitions(path: Path) -> tuple[str, ...]:
    """The definitions, one text a fusion: several are separated by ``# ===== nvFusionN``."""
    text = _text(path)
    if text is None or text.strip() == NO_FUSION:
        return ()
    parts = tuple(part.strip("\n") + "\n" for part in FUSION_SEPARATOR.split(text))
    parts = tuple(part for part in parts if part.strip())
    for part in parts:
        if "fd." not in part:
            raise BadInput(f"{path}: a part holds no nvFuser definition: {part[:80]!r}")
    return parts


def _saved(value: Any, path: Path) -> tuple[dict[str, Any], ...]:
    """What the forward saved: a list of {"name": str, "shape": [str], "dtype": str}."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise BadInput(f"{path}: saved tensors are not a list")
    for index, item in enumerate(value):
        ok = (
            isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and isinstance(item.get("dtype"), str)
            and isinstance(item.get("shape"), list)
            and all(isinstance(extent, str) for extent in item["shape"])
        )
        if not ok:
            raise BadInput(
                f"{path}: saved tensor {index} is not "
                '{"name": str, "shape": [str, ...], "dtype": str}'
            )
    return tuple(value)


def _profile(value: Any, path: Path) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadInput(f"{path}: the profile is not a JSON object")
    if value.get("no_fusion") is True:
        return None
    if not isinstance(value.get("segments"), int) or not isinstance(
        value.get("kernel_profiles"), list
    ):
        raise BadInput(f"{path}: the profile has no integer segments and kernel_profiles list")
    for index, kernel in enumerate(value["kernel_profiles"]):
        if not isinstance(kernel, dict):
            raise BadInput(f"{path}: kernel_profiles[{index}] is not a JSON object")
    return value


def _strings(value: Any, path: Path) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(key, str) and isinstance(item, str) for key, item in value.items()
    ):
        raise BadInput(f"{path}: not a JSON object of strings")
    return dict(value)


def _drop_stale(variants: dict[str, VariantCapture]) -> dict[str, VariantCapture]:
    """The variants with the profiler's stale copies of the hand-written profile removed.
    Only nvFuser's PythonProfiler names a ``fusion_id``; a profile read from torch.profiler's
    kernel records (nvFuser's direct frontend) names none, and two profiles without one are
    not copies of each other (all of Thunder's were dropped as stale, issue 41)."""
    handwritten = variants.get(REFERENCE)
    if handwritten is None or handwritten.profile is None:
        return variants
    stale_id = handwritten.profile.get("fusion_id")
    if stale_id is None:
        return variants
    fixed = {}
    for name, capture in variants.items():
        profile = capture.profile
        if name != REFERENCE and profile is not None and profile.get("fusion_id") == stale_id:
            capture = replace(capture, profile=None)
        fixed[name] = capture
    return fixed

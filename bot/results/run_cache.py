"""A cache of runs as the main-branch watch reads them (opt-in: PERFBOT_CACHE_DIR).

A nightly-sized run is an asv file of ~1.3 MB and a provenance record of several MB, 80% of it
per-round lists no verdict reads (bot/results/provenance.py); decoding and checking both takes
~90 ms, and a history reads ~100 runs every night, the same files night after night. So what
the reader made of them (the points, the slimmed record, the date, the tiled marker) is kept
in a folder of its own, one file a run, named by what identifies the files' content
cheaply, as make and ccache's direct mode do: each file's resolved path, size, modification
time in ns and inode, the commit and machine asked for, the sample minimum, and this module's
FORMAT (a change of what the reader keeps is a new format, never an old entry read as new). A
file rewritten in place gets a new time, so a stale entry is never found. The runner's hygiene
checks are small and read from their file every time.

An entry is one line of JSON (padded to 8 bytes) and then every sample as raw little-endian
float64 (the points keep them so: bot/results/packed.py), not pickle: an entry is data, so a
cache folder that someone else could write holds at worst numbers of the right shape, never
code; an entry of the wrong shape, or with a sample that is not a finite positive float, is a
miss. Raw, not base64 in the JSON: decoding and scanning ~0.5 MB of text a run was a fifth of
reading a cached history. An entry that cannot be read is a miss, one that cannot be written
is skipped: the watch never fails for its cache.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bot.results.packed import PackedPoints
from bot.results.types import CommitResults, PointKey, Provenance

_KEY_FIELDS = ("variant", "dtype", "shape", "fusion")
FORMAT = "perfbot-run-cache/5"  # 5: keys carry the fusion (the catalog)


def entry_path(
    cache: Path, files: Sequence[Path], commit: str | None, machine: str, min_samples: int
) -> Path | None:
    """Where the entry for these files as they are now lives (a missing file counts as
    missing); None when one cannot be stat'ed for another reason."""
    parts = [FORMAT, str(commit), machine, str(min_samples)]
    for f in files:
        try:
            st = f.stat()
        except FileNotFoundError:
            parts.append(f"{f.resolve()}:absent")
            continue
        except OSError:
            return None
        parts.append(f"{f.resolve()}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}")
    return cache / f"{hashlib.sha256(chr(0).join(parts).encode()).hexdigest()}.run"


def _array(text: Any, dtype: str) -> np.ndarray[Any, Any] | None:
    if not isinstance(text, str):
        return None
    try:
        return np.frombuffer(base64.b64decode(text, validate=True), dtype=dtype)
    except (ValueError, TypeError):
        return None


def _strings(column: Any, n: int, optional: bool = False) -> bool:
    allowed = {str, type(None)} if optional else {str}
    return isinstance(column, list) and len(column) == n and set(map(type, column)) <= allowed


def _points(data: dict[str, Any], samples: np.ndarray[Any, Any]) -> PackedPoints | None:
    """The points of an entry, or None when any part of it has another shape. Stored by
    column (the counts and scalars as base64 arrays in the JSON, the samples raw after it), so
    that checking 100 runs of ~900 points each is a few whole-array tests, not a loop, and kept
    so (bot/results/packed.py: a Point is built when one is asked for)."""
    keys = data.get("keys")
    if not isinstance(keys, list) or len(keys) != len(_KEY_FIELDS):
        return None
    n = len(keys[0]) if isinstance(keys[0], list) else -1
    if n < 0 or not all(_strings(k, n) for k in keys):
        return None
    no_data = data.get("no_data")
    lengths, scalars = _array(data.get("lengths"), "<i4"), _array(data.get("scalars"), "<f8")
    if not isinstance(no_data, list) or not _strings(no_data, n, optional=True):
        return None
    if lengths is None or scalars is None:
        return None
    if len(lengths) != 3 * n or len(scalars) != 3 * n:
        return None
    if lengths.size and int(lengths.min()) < -1:
        return None
    if int(np.maximum(lengths, 0).sum()) != len(samples):
        return None
    if not bool(np.all(np.isfinite(samples) & (samples > 0.0))):
        return None
    if not bool(np.all(np.isnan(scalars) | (np.isfinite(scalars) & (scalars >= 0.0)))):
        return None
    ordered = [PointKey(*k) for k in zip(*keys, strict=True)]
    if len(set(ordered)) != n:
        return None
    return PackedPoints(ordered, no_data, lengths, scalars, samples)


def _packed(values: Sequence[float], dtype: str) -> str:
    return base64.b64encode(np.asarray(values, dtype=dtype).tobytes()).decode()


def split_entry(raw: bytes) -> tuple[Any, np.ndarray[Any, Any]] | None:
    """An entry's JSON line and its samples, or None where it is not laid out as one."""
    end = raw.find(b"\n")
    if end < 0 or (end + 1) % 8 or (len(raw) - end - 1) % 8:
        return None
    try:
        data = json.loads(raw[:end])
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return data, np.frombuffer(raw, dtype="<f8", offset=end + 1).copy()


def join_entry(data: Mapping[str, Any], samples: bytes) -> bytes:
    head = json.dumps(data).encode("ascii")  # no newline: json.dumps escapes them
    return head + b" " * (-(len(head) + 1) % 8) + b"\n" + samples


def read_entry(path: Path, results: Path, record: Path) -> CommitResults | None:
    """The run the entry holds (without its hygiene checks), or None for a miss."""
    try:
        found = split_entry(path.read_bytes())
    except OSError:
        return None
    if found is None:
        return None
    data, samples = found
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    prov = data.get("provenance")
    points = _points(data, samples)
    if points is None or not isinstance(data.get("commit"), str):
        return None
    provenance = None
    if prov is not None:
        if not (isinstance(prov, dict) and type(prov.get("line")) is int):
            return None
        if not isinstance(prov.get("record"), dict):
            return None
        provenance = Provenance(record, prov["line"], prov["record"])
    date, tiled = data.get("date"), data.get("tiled")
    return CommitResults(
        machine=str(data.get("machine")),
        commit=data["commit"],
        path=results,
        points=points,
        provenance=provenance,
        date=date if type(date) is int else None,
        tiled=tiled if isinstance(tiled, dict) else None,
    )


def write_entry(path: Path, run: CommitResults) -> None:
    """Written whole or not at all (a temporary file renamed over)."""
    prov = run.provenance
    data: dict[str, Any] = {
        "format": FORMAT,
        "machine": run.machine,
        "commit": run.commit,
        "date": run.date,
        "tiled": dict(run.tiled) if run.tiled is not None else None,
        "provenance": None if prov is None else {"line": prov.line, "record": prov.record},
    }
    points = list(run.points.values())
    data["keys"] = [[getattr(p.key, f) for p in points] for f in _KEY_FIELDS]
    data["no_data"] = [p.no_data for p in points]
    lists = [(p.ratio, p.kernel_s, p.host_s) for p in points]
    data["lengths"] = _packed([-1 if x is None else len(x) for t in lists for x in t], "<i4")
    extra = [(p.bandwidth_pct, p.kernel_count, p.compile_s) for p in points]
    data["scalars"] = _packed([math.nan if x is None else x for t in extra for x in t], "<f8")
    flat = [v for t in lists for x in t if x is not None for v in x]
    try:
        raw = join_entry(data, np.asarray(flat, dtype="<f8").tobytes())
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".entry-", suffix=".run")
        with os.fdopen(fd, "wb") as out:
            out.write(raw)
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        return

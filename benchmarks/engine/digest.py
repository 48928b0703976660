"""What decides a measurement, fingerprinted so that the bot can tell, fusion by fusion and side
by side, what a change of this suite touched (docs/DATA.md, "What the record fingerprints").

- the **engine** (``engine_digest``): the measuring code every fusion shares (this package,
  the fusion seam and catalog, the asv modules, the size sets). A change here may move any
  fusion's figures on both sides.
- a fusion's **Thunder side** (``thunder_digest``): the functions Thunder traces (from
  primitives, through ``torch.nn.functional``) and the inputs they get, by their source text.
- a fusion's **hand-written side**: its printed FusionDefinition in canonical form
  (``canonical_definition``), recorded a point at a time beside its measurement. nvFuser's
  printer numbers tensors as it meets them and picks any tensor of the right extent for a
  ``size`` op (``fd.ops.size(tv8, dim=0)`` in one run, ``size(tv6, dim=0)`` in the next, on
  identical code): the canonical form renumbers every name by first definition and keeps of
  a ``size`` op its dimension alone, so only a change of the math changes it.
- ``suite_digest``: all of it at once (the nightly's shards of one commit must have run the
  same code), as it has always been computed.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
_SEAM = ("__init__.py", "spec.py", "catalog.py")
_NAME = re.compile(r"\b(tv|c|t|s)(\d+)\b")
_SIZE = re.compile(r"fd\.ops\.size\(\s*[A-Za-z_]\w*\s*,")


def _digest(paths: Iterable[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def engine_files() -> list[Path]:
    own = sorted((BENCHMARKS / "engine").glob("*.py"))
    seam = [BENCHMARKS / "fusions" / name for name in _SEAM]
    asv = [BENCHMARKS / name for name in ("bench_rmsnorm_bwd.py", "bench_fusions.py")]
    return [*own, *seam, *asv, BENCHMARKS / "size_sets.toml"]


def engine_digest() -> str:
    return _digest(engine_files())


def suite_digest() -> str:
    """The measuring code, every fusion's module and the size sets: shards of one commit must
    have run the same."""
    files = sorted((BENCHMARKS / "engine").glob("*.py"))
    files += sorted((BENCHMARKS / "fusions").glob("*.py"))
    files += [BENCHMARKS / name for name in ("bench_rmsnorm_bwd.py", "bench_fusions.py")]
    return _digest([*files, BENCHMARKS / "size_sets.toml"])


def _source(fn: Callable[..., Any] | None) -> str:
    if fn is None:
        return "<none>"
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):  # a builtin or a lambda made at run time: its name, then
        return f"<{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}>"


def thunder_digest(fusion: Any) -> str:
    """The Thunder side of one fusion (a ``benchmarks.fusions.spec.Fusion``): the source of the
    functions it traces and of its inputs, and which inputs it takes."""
    parts = [_source(fusion.prims), _source(fusion.functional), _source(fusion.make_inputs)]
    text = "\0".join([*parts, ",".join(fusion.call_inputs), fusion.direction])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def fusion_digests(fusions: Iterable[Any]) -> dict[str, dict[str, str]]:
    """What the record carries for each fusion measured (its hand-written side is per point)."""
    return {f.name: {"thunder": thunder_digest(f)} for f in fusions}


def canonical_definition(text: str) -> str:
    """A printed FusionDefinition with only the math left: every ``fd.ops.size`` op keeps its
    dimension, not which tensor of that extent the printer chose; then every name (``tvN``,
    ``cN``, ``tN``, ``sN``) is renumbered by its first appearance, per kind. Blank lines and
    trailing spaces go."""
    text = _SIZE.sub("fd.ops.size(_,", text)
    numbers: dict[tuple[str, str], int] = {}

    def renumber(m: re.Match[str]) -> str:
        kind = m.group(1)
        key = (kind, m.group(2))
        if key not in numbers:
            numbers[key] = sum(1 for k in numbers if k[0] == kind)
        return f"{kind}{numbers[key]}"

    lines = (_NAME.sub(renumber, line).rstrip() for line in text.splitlines())
    return "\n".join(line for line in lines if line) + "\n"


def canonical_sha256(text: str) -> str:
    return hashlib.sha256(canonical_definition(text).encode("utf-8")).hexdigest()

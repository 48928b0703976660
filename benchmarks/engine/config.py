"""Which fusions, points, variants and dtypes the suite measures, and how hard.

Size sets live in ``benchmarks/size_sets.toml`` so that a sweep is chosen by name
(``RMSNORM_BENCH_SIZES``), never by literals scattered through the code: RMSNorm backward's
under ``[sets]`` (its keys predate the catalog), every other fusion's under the group its
module names (``[groups.<group>.sets]``).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..fusions.spec import DEFAULT_FUSION
from .slowdown import Slowdown

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

SIZE_SETS_FILE = Path(__file__).resolve().parent.parent / "size_sets.toml"

#: The hand-written fusion every other variant is compared with.
BASELINE = "nvfuser"
#: Variants compared with the baseline, in the order they are reported.
CONTENDERS = ("thunder-prims", "thunder-func", "eager", "torch-compile")
VARIANTS = (BASELINE, *CONTENDERS)
DTYPES = ("bfloat16", "float16", "float32")

#: Max error relative to the largest reference magnitude that a variant may show and still be
#: timed. bf16 keeps 8 significant bits (2**-8 = 0.4% per element) and eager bf16 computes its
#: intermediates in bf16 too, so its budget is widest; fp32 leaves room for reordered sums over
#: up to 16384 rows.
REL_TOLERANCE = {"bfloat16": 4e-2, "float16": 1e-2, "float32": 1e-4}

DEFAULT_ROUNDS = 25
DEFAULT_WARMUP = 3
#: Flushed calls averaged into one sample. Why: one ~40-us call jitters by ~1.5-2% (measured on
#: the H200, bf16 2048x8192), which put the per-round ratio's CoV at ~2.5%; the mean of 8
#: independent calls cuts that by ~sqrt(8). Every call is still flushed and timed on its own.
DEFAULT_CALLS_PER_SAMPLE = 8
#: The context baselines (eager, torch.compile) decide nothing, and eager launches 16-17
#: kernels a call: at 8 calls a sample they took 20-28 s of a process's 33-43 s of timed rounds
#: on the H200 (data/h200-repeats). Two calls keep their row readable for a third of the cost.
CONTEXT = ("eager", "torch-compile")
DEFAULT_CONTEXT_CALLS_PER_SAMPLE = 2


@dataclass(frozen=True)
class Shape:
    """One problem size: ``m`` rows normalised over a hidden size of ``n``."""

    m: int
    n: int

    @property
    def label(self) -> str:
        return f"{self.m}x{self.n}"

    @classmethod
    def parse(cls, label: str) -> Shape:
        m, _, n = label.partition("x")
        return cls(int(m), int(n))


@dataclass(frozen=True)
class SuiteConfig:
    """What one asv run measures; read from the environment so asv's processes agree."""

    size_set: str
    shapes: tuple[Shape, ...]
    dtypes: tuple[str, ...]
    rounds: int
    warmup: int
    thunder_variant: str
    variants: tuple[str, ...] = VARIANTS
    calls_per_sample: int = DEFAULT_CALLS_PER_SAMPLE
    slowdown: Slowdown | None = None  # a known slowdown injected on one side (slowdown.py)
    context_calls_per_sample: int = DEFAULT_CONTEXT_CALLS_PER_SAMPLE
    #: ``dtype/MxN`` keys to measure (empty: every point of the set). asv then declares only
    #: these points' dtypes and shapes (bench_rmsnorm_bwd.py); readers take each result's
    #: params from its file, so a partial run still lines up with a full one point by point.
    #: Another fusion's points are ``fusion/dtype/MxN``.
    points: tuple[str, ...] = ()
    #: The fusions of the catalog this run measures (benchmarks/fusions/catalog.py).
    fusions: tuple[str, ...] = (DEFAULT_FUSION,)
    #: Fusions whose size set says ``context = false``: no eager or torch.compile there (a
    #: PR's budget; the nightly measures them).
    no_context: tuple[str, ...] = ()

    def measures(self, variant: str, fusion: str) -> bool:
        """Whether ``variant`` of ``fusion`` runs (the set may leave the context out)."""
        return variant in self.variants and not (variant in CONTEXT and fusion in self.no_context)

    def points_to_measure(self) -> list[tuple[str, Shape]]:
        """RMSNorm backward's (dtype, shape) points this run measures, in the set's order."""
        return [(d, s) for f, d, s in self.fusion_points() if f == DEFAULT_FUSION]

    def fusion_points(self) -> list[tuple[str, str, Shape]]:
        """Every (fusion, dtype, shape) this run measures: fusion by fusion, in catalog order."""
        wanted = set(self.points)
        out = []
        for fusion in self.fusions:
            shapes, dtypes = sizes_of(fusion, self.size_set)
            out += [
                (fusion, dtype, shape)
                for dtype in dtypes
                for shape in shapes
                if not wanted or point_key(dtype, shape, fusion) in wanted
            ]
        return out

    def calls_for(self, variant: str) -> int:
        """Calls averaged into one sample of ``variant`` (the context baselines get fewer)."""
        if variant in CONTEXT:
            return min(self.context_calls_per_sample, self.calls_per_sample)
        return self.calls_per_sample

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> SuiteConfig:
        env = os.environ if env is None else env
        size_set = env.get("RMSNORM_BENCH_SIZES", "pr")
        fusions = _catalog().parse_fusions(env.get("RMSNORM_BENCH_FUSIONS", ""))
        try:
            shapes, dtypes = load_size_set(size_set)
        except ValueError:
            if DEFAULT_FUSION in fusions:
                raise
            shapes, dtypes = (), ()  # a set of the other fusions only (the catalog's fp32)
        rounds = int(env.get("RMSNORM_BENCH_ROUNDS", DEFAULT_ROUNDS))
        if rounds < 10:
            raise ValueError(f"RMSNORM_BENCH_ROUNDS={rounds}: at least 10 samples are needed")
        calls = int(env.get("RMSNORM_BENCH_CALLS_PER_SAMPLE", DEFAULT_CALLS_PER_SAMPLE))
        if calls < 1:
            raise ValueError(f"RMSNORM_BENCH_CALLS_PER_SAMPLE={calls}: at least 1 call per sample")
        context = int(
            env.get("RMSNORM_BENCH_CONTEXT_CALLS_PER_SAMPLE", DEFAULT_CONTEXT_CALLS_PER_SAMPLE)
        )
        if context < 1:
            raise ValueError(
                f"RMSNORM_BENCH_CONTEXT_CALLS_PER_SAMPLE={context}: at least 1 call per sample"
            )
        return cls(
            size_set=size_set,
            shapes=shapes,
            dtypes=dtypes,
            rounds=rounds,
            warmup=int(env.get("RMSNORM_BENCH_WARMUP", DEFAULT_WARMUP)),
            thunder_variant=env.get("RMSNORM_BENCH_THUNDER_VARIANT", "stock"),
            variants=parse_variants(env.get("RMSNORM_BENCH_VARIANTS", "")),
            calls_per_sample=calls,
            slowdown=Slowdown.parse(env.get("RMSNORM_BENCH_SLOWDOWN", "")),
            context_calls_per_sample=context,
            points=parse_points(
                env.get("RMSNORM_BENCH_POINTS", ""), shapes, dtypes, size_set, fusions
            ),
            fusions=fusions,
            no_context=tuple(f for f in fusions if not context_of(f, size_set)),
        )


def _catalog() -> Any:
    """The catalog module, imported late: it imports this module's neighbours."""
    from ..fusions import catalog

    return catalog


def sizes_of(fusion: str, size_set: str) -> tuple[tuple[Shape, ...], tuple[str, ...]]:
    """The shapes and dtypes ``fusion`` runs in the named set (its module names its group)."""
    if fusion == DEFAULT_FUSION:
        return load_size_set(size_set)
    return load_size_set(size_set, group=_catalog().FUSIONS[fusion].size_group)


def context_of(fusion: str, size_set: str) -> bool:
    """Whether the set measures the context baselines for ``fusion`` (``context``, default yes)."""
    doc = _size_sets(SIZE_SETS_FILE)
    if fusion != DEFAULT_FUSION:
        doc = doc.get("groups", {}).get(_catalog().FUSIONS[fusion].size_group, {})
    return bool(doc.get("sets", {}).get(size_set, {}).get("context", True))


def point_key(dtype: str, shape: Shape, fusion: str = DEFAULT_FUSION) -> str:
    """A point's name everywhere: records, shard files, ``RMSNORM_BENCH_POINTS``. RMSNorm
    backward's keep the name they had before the catalog; another fusion's lead with it."""
    key = f"{dtype}/{shape.label}"
    return key if fusion == DEFAULT_FUSION else f"{fusion}/{key}"


def parse_points(
    text: str,
    shapes: tuple[Shape, ...],
    dtypes: tuple[str, ...],
    size_set: str,
    fusions: tuple[str, ...] = (DEFAULT_FUSION,),
) -> tuple[str, ...]:
    """A comma list of ``dtype/MxN`` (or ``fusion/dtype/MxN``) keys of the chosen set (empty:
    all of it).

    Why: a shard of the nightly sweep, or a bisect that re-measures only the regressed
    points, runs a part of a set; a key outside the set is a typo that would measure nothing.
    """
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    known = (
        {point_key(d, s) for d in dtypes for s in shapes} if DEFAULT_FUSION in fusions else set()
    )
    for fusion in fusions:
        if fusion != DEFAULT_FUSION and names:
            f_shapes, f_dtypes = sizes_of(fusion, size_set)
            known |= {point_key(d, s, fusion) for d in f_dtypes for s in f_shapes}
    unknown = sorted(set(names) - known)
    if unknown:
        raise ValueError(
            f"RMSNORM_BENCH_POINTS: {', '.join(unknown)} not in size set {size_set!r} "
            "(keys look like bfloat16/2048x8192)"
        )
    return names


def parse_variants(text: str) -> tuple[str, ...]:
    """A comma list of variants to measure (empty: all); the baseline is always measured.

    Why: the context baselines (eager, torch.compile) cost most of a run's compile time and say
    nothing about Thunder against nvFuser; a PR job in a hurry may leave them out. The asv
    parameter list stays the full one, so the results of every run line up.
    """
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        return VARIANTS
    unknown = sorted(set(names) - set(VARIANTS))
    if unknown:
        raise ValueError(
            f"RMSNORM_BENCH_VARIANTS: unknown {unknown} (known: {', '.join(VARIANTS)})"
        )
    return tuple(v for v in VARIANTS if v == BASELINE or v in names)


def _size_sets(path: Path) -> dict[str, Any]:
    """The size-sets file, parsed once while it is unchanged: a configuration of the catalog
    asks for every fusion's set and context (twice 13 reads in each of asv's ~1,000 benchmark
    processes of a store). Callers read it and never change it."""
    stat = path.stat()
    return _parsed(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _parsed(path: Path, mtime_ns: int, size: int) -> dict[str, Any]:
    with path.open("rb") as fh:
        doc: dict[str, Any] = tomllib.load(fh)
    return doc


def load_size_set(
    name: str, path: Path = SIZE_SETS_FILE, group: str | None = None
) -> tuple[tuple[Shape, ...], tuple[str, ...]]:
    """Shapes and dtypes of the named set (of ``group``, else RMSNorm backward's); unknown
    names fail loudly with the known ones."""
    doc = _size_sets(path)
    if group is not None:
        doc = {"dtypes": doc.get("dtypes", DTYPES), **doc.get("groups", {}).get(group, {})}
    sets = doc.get("sets", {})
    if name not in sets:
        raise ValueError(f"unknown size set {name!r} (known: {', '.join(sorted(sets))}) in {path}")
    spec = sets[name]
    if "shapes" in spec:
        shapes = tuple(Shape(int(m), int(n)) for m, n in spec["shapes"])
    else:
        shapes = tuple(Shape(int(m), int(n)) for m in spec["m"] for n in spec["n"])
    dtypes = tuple(spec.get("dtypes", doc.get("dtypes", DTYPES)))
    unknown = set(dtypes) - set(DTYPES)
    if unknown:
        raise ValueError(f"size set {name!r}: unsupported dtypes {sorted(unknown)}")
    return shapes, dtypes


def bandwidth_pct(moved: int, kernel_us: float, peak_gbps: float) -> float:
    """Achieved bandwidth (bytes moved over kernel time) as a share of the GPU's peak."""
    return 100.0 * moved / (kernel_us * 1e-6) / (peak_gbps * 1e9)

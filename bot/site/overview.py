"""The landing view's numbers: per machine, the latest commit's ratio and kernel times of every
point, each with its change since the previous commit (bot/site/change.py).

Every number is read from the graph files ``asv publish`` wrote (the values the graphs draw:
asv's stored median of each benchmark's samples), never recomputed, so the summary and the
graphs cannot disagree. The HTML is bot/site/landing.py.
"""

from __future__ import annotations

import ast
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bot.results.types import DEFAULT_FUSION, REFERENCE, PointKey, bench_names, catalog_fusions
from bot.site.change import Delta, Thresholds
from bot.site.links import graph_href


class Settings(Thresholds, Protocol):
    """What the view needs of bot.config.VerdictSettings: thresholds, and which variants gate."""

    def is_gating(self, variant: str) -> bool: ...


@dataclass(frozen=True)
class Row:
    variant: str
    dtype: str
    shape: str
    gating: bool
    ratio: Delta
    contender: Delta  # the contender's kernel time, seconds
    nvfuser: Delta  # nvFuser's kernel time at the same point, seconds
    ratio_href: str
    contender_href: str
    nvfuser_href: str


@dataclass(frozen=True)
class MachineSummary:
    machine: str
    commit: str
    #: The newest earlier commit of the same kind (a lab run, a package's nightly, ...) and
    #: size set: what the changes are against; None: there is none.
    previous: str | None
    n_commits: int
    rows: tuple[Row, ...]
    #: Contenders with no value at this commit at any point: not measured in this run (the
    #: nightlies measure Thunder only), or failed everywhere. Their history is in the graphs.
    absent: tuple[str, ...]
    #: The fusion of the catalog this summary is of (the landing view has a section a fusion).
    fusion: str = DEFAULT_FUSION


def plain_params(benchmark: Mapping[str, Any]) -> list[list[str]]:
    """asv stores parameter values as Python reprs: ``"'bfloat16'"`` -> ``bfloat16``."""
    out = []
    for values in benchmark.get("params", []):
        plain = []
        for v in values:
            try:
                lit = ast.literal_eval(v)
            except (ValueError, SyntaxError):
                lit = v
            plain.append(str(lit))
        out.append(plain)
    return out


def _at(series: Sequence[Sequence[Any]], revision: int | None) -> list[float | None] | None:
    for rev, values in series:
        if rev == revision:
            return values if isinstance(values, list) else [values]
    return None


def _table(
    benchmark: Mapping[str, Any], values: list[float | None] | None
) -> dict[tuple[str, ...], float | None]:
    combos = list(itertools.product(*plain_params(benchmark)))
    if values is None:
        return {}
    if len(values) != len(combos):
        raise ValueError(
            f"{benchmark.get('name')}: graph has {len(values)} values for {len(combos)} "
            "parameter combinations"
        )
    return {
        c: (v if isinstance(v, (int, float)) else None) for c, v in zip(combos, values, strict=True)
    }


def _shape_key(shape: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in shape.split("x"))
    except ValueError:
        return (0,)


def summarize(
    index: Mapping[str, Any],
    machine: str,
    ratio_series: Sequence[Sequence[Any]],
    kernel_series: Sequence[Sequence[Any]],
    settings: Settings,
    kinds: Mapping[str, object] | None = None,
    fusion: str = DEFAULT_FUSION,
) -> MachineSummary | None:
    """The latest revision that has a ratio, against the newest earlier one like it (like with
    like, ``kinds`` by hash: the same kind of commit and size set, so that a nightly of 180
    points is not compared with a lab run of the pr set); None if the machine has no ratio
    data."""
    revisions = sorted({rev for rev, _ in ratio_series})
    if not revisions:
        return None
    latest = revisions[-1]
    hashes = index["revision_to_hash"]

    def like(rev: int) -> object:
        return (kinds or {}).get(str(hashes.get(str(rev))))

    want = like(latest)
    previous = next((r for r in reversed(revisions[:-1]) if like(r) == want), None)
    benches = index["benchmarks"]
    names = bench_names(fusion)
    ratios = _table(benches[names.ratio], _at(ratio_series, latest))
    ratios_before = _table(benches[names.ratio], _at(ratio_series, previous))
    kernels = _table(benches[names.kernel], _at(kernel_series, latest))
    kernels_before = _table(benches[names.kernel], _at(kernel_series, previous))

    def kernel(combo: tuple[str, ...]) -> Delta:
        variant, dtype, shape = combo
        label = PointKey(variant, dtype, shape, fusion).label
        return Delta(
            kernels_before.get(combo), kernels.get(combo), settings.kernel_threshold_for(label)
        )

    rows = []
    for combo in ratios:
        variant, dtype, shape = combo
        point = {"dtype": dtype, "shape": shape}
        label = PointKey(variant, dtype, shape, fusion).label
        rows.append(
            Row(
                variant,
                dtype,
                shape,
                settings.is_gating(variant),
                Delta(ratios_before.get(combo), ratios[combo], settings.threshold_for(label)),
                kernel(combo),
                kernel((REFERENCE, dtype, shape)),
                graph_href(names.ratio, {"variant": variant, **point}, machine),
                graph_href(names.kernel, {"variant": variant, **point}, machine),
                graph_href(names.kernel, {"variant": REFERENCE, **point}, machine),
            )
        )
    order = {v: i for i, v in enumerate(plain_params(benches[names.ratio])[0])}
    present = {
        r.variant for r in rows if r.ratio.after is not None or r.contender.after is not None
    }
    absent = tuple(sorted({r.variant for r in rows} - present, key=order.__getitem__))
    kept = sorted(
        (r for r in rows if r.variant in present),
        key=lambda r: (r.dtype, _shape_key(r.shape), not r.gating, order[r.variant]),
    )
    return MachineSummary(
        machine,
        str(hashes[str(latest)]),
        str(hashes[str(previous)]) if previous is not None else None,
        len(revisions),
        tuple(kept),
        absent,
        fusion,
    )


def load_series(html_dir: Path, graph_params: Mapping[str, Any], benchmark: str) -> list[Any]:
    """One graph file asv wrote (its path is asv's own ``Graph.get_file_path``)."""
    from asv.graph import Graph

    path = html_dir / (Graph.get_file_path(dict(graph_params), benchmark) + ".json")
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, list) else []


def fusions_published(index: Mapping[str, Any]) -> list[str]:
    """The fusions asv published: RMSNorm backward first when present, then the catalog's."""
    benches = index.get("benchmarks", {})
    catalog = catalog_fusions(benches)
    found = [DEFAULT_FUSION] if bench_names(DEFAULT_FUSION).ratio in benches else []
    return found + [f for f in catalog if bench_names(f).ratio in benches]


def summaries(
    html_dir: Path, settings: Settings, kinds: Mapping[str, object] | None = None
) -> tuple[Mapping[str, Any], list[MachineSummary]]:
    """asv's index.json and every machine's summary of every fusion, from asv's output in
    ``html_dir``; ``kinds``: what kind of commit each hash is (the commits page's kind and
    nightly flag)."""
    index = json.loads((html_dir / "index.json").read_text(encoding="utf-8"))
    out = []
    for fusion in fusions_published(index) or [DEFAULT_FUSION]:
        names = bench_names(fusion)
        for params in index.get("graph_param_list", []):
            machine = str(params.get("machine", ""))
            ratio = load_series(html_dir, params, names.ratio)
            kernel = load_series(html_dir, params, names.kernel)
            summary = summarize(index, machine, ratio, kernel, settings, kinds, fusion)
            if summary is not None:
                out.append(summary)
    return index, out

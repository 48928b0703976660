"""Split a size set into shards that each fit one GPU job, from a cost model fitted on records.

Pure: the same size set, settings and costs give the same shards on every runner, so a
workflow's matrix (one job a shard) and each shard job agree on which points are whose
without passing lists around. Points are packed largest first onto the least-loaded shard
(LPT), with as few shards as keep every one under the budget.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.engine.config import Shape, SuiteConfig, point_key
from benchmarks.engine.point import HOST_ROUNDS  # host-timed calls after the rounds
from benchmarks.fusions.rmsnorm import backward_bytes

COSTS_FILE = Path(__file__).resolve().parent / "costs.json"
ITEMSIZE = {"bfloat16": 2, "float16": 2, "float32": 4}


@dataclass(frozen=True)
class Costs:
    """Seconds a measurement costs, fitted by ``fit.py`` on recorded provenance records.

    A point costs ``build_s_per_variant`` + ``build_s_per_gb`` x the GB it moves for each variant
    built and checked (inputs, the fp64 reference and the checks grow with the size), then every
    timed call costs its kernel (``kernel_floor_us`` + bytes moved / ``kernel_gbps``) plus
    ``call_overhead_us`` (flush, profiler, launch); a shard process costs ``process_s`` once.
    """

    process_s: float
    build_s_per_variant: float
    call_overhead_us: float
    kernel_floor_us: float
    kernel_gbps: float
    build_s_per_gb: float = 0.0
    #: Measured over estimated wall time of the worst fitted shard (>= 1): the typical fit,
    #: scaled so that the slowest shard seen would have been planned for what it took.
    safety: float = 1.0
    sources: tuple[str, ...] = ()

    @classmethod
    def load(cls, path: Path = COSTS_FILE) -> Costs:
        doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        doc["sources"] = tuple(doc.get("sources", ()))
        return cls(**doc)

    def to_json(self) -> str:
        doc = asdict(self)
        doc["sources"] = list(self.sources)
        return json.dumps(doc, indent=2, sort_keys=True) + "\n"


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int
    points: tuple[str, ...]
    estimate_s: float

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


def kernel_us(costs: Costs, moved: int) -> float:
    return costs.kernel_floor_us + moved / (costs.kernel_gbps * 1e3)


def point_seconds(costs: Costs, cfg: SuiteConfig, dtype: str, shape: Shape) -> float:
    """Estimated wall time of one point under ``cfg`` (every variant of it)."""
    moved = backward_bytes(shape.m, shape.n, ITEMSIZE[dtype])
    per_call_s = (kernel_us(costs, moved) + costs.call_overhead_us) * 1e-6
    calls = sum(cfg.rounds * cfg.calls_for(v) + cfg.warmup + HOST_ROUNDS for v in cfg.variants)
    build_s = costs.build_s_per_variant + costs.build_s_per_gb * moved / 1e9
    return costs.safety * (build_s * len(cfg.variants) + calls * per_call_s)


def plan(cfg: SuiteConfig, costs: Costs, budget_s: float) -> list[Shard]:
    """The fewest shards, each estimated at most ``budget_s`` (process start included)."""
    room = budget_s - costs.safety * costs.process_s
    # Another fusion's point is estimated with RMSNorm backward's fitted costs (costs.json):
    # an estimate for packing shards, which the shards' own wall times then correct.
    estimates = {
        point_key(d, s, f): point_seconds(costs, cfg, d, s) for f, d, s in cfg.fusion_points()
    }
    too_big = [k for k, est in estimates.items() if est > room]
    if too_big:
        raise ValueError(
            f"points estimated over the {budget_s:.0f} s budget on their own: {', '.join(too_big)}"
        )
    position = {k: i for i, k in enumerate(estimates)}  # the set's order: ties break by it
    ranked = sorted(estimates, key=lambda k: (-estimates[k], position[k]))
    count = max(1, math.ceil(sum(estimates.values()) / room))
    while True:
        loads = [0.0] * count
        members: list[list[str]] = [[] for _ in range(count)]
        for key in ranked:
            i = min(range(count), key=lambda j: (loads[j], j))
            loads[i] += estimates[key]
            members[i].append(key)
        if max(loads) <= room:
            break
        count += 1
    return [
        Shard(
            index=i + 1,
            count=count,
            points=tuple(sorted(members[i], key=position.__getitem__)),
            estimate_s=round(loads[i] + costs.safety * costs.process_s, 1),
        )
        for i in range(count)
    ]


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` -> (K, N), 1 <= K <= N."""
    k, sep, n = text.partition("/")
    if not sep or not k.isdigit() or not n.isdigit() or not 1 <= int(k) <= int(n):
        raise ValueError(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. 2/3")
    return int(k), int(n)

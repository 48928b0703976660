"""The between-run noise model: how far each series' log median moves from one process to the
next on one machine, estimated from recorded A/A runs (runs of the same code), and stored as a
small JSON file that perfbot.toml names (``[verdict] noise_model``).

Estimate, per series (bot/decide/stats.py defines series, ``y`` and ``w``): over ``k`` runs,
``S`` = the sample variance of ``y``; its expectation is ``tau^2 + mean(w)``, so the raw
estimate is ``S - mean(w)`` with ``k - 1`` degrees of freedom (clamped at 0 for the series
itself; the pool averages the unclamped values, which keeps it unbiased, then clamps). Six
runs are few for a variance, so each series is shrunk toward its variant's pooled value (the
mean raw
estimate over that variant's points, per kind: ratio or kernel time; variants differ by far
more than points do: torch.compile's kernels move 2-3% between runs, Thunder's ratio 0.3-0.8%),
as if the pool were :data:`PRIOR_DF` more runs:
``tau^2 = ((k - 1) raw + PRIOR_DF pool) / (k - 1 + PRIOR_DF)`` with that many degrees of
freedom (the moderated variance of Smyth's limma, with a fixed prior weight). A series the
model has not seen gets its variant's pool (or, for a variant it has not seen, the largest
pool of the kind) with :data:`PRIOR_DF` degrees of freedom.

Geometric means over a variant's points are series of their own ("aggregates"): the points of
one run share its clock state, so their changes are correlated and the aggregate's tau^2 must
be measured, not summed. It applies only to the same set of points; for another set the
members' mean tau^2 is used, an upper bound whatever the correlation.

The model records the stack its runs measured on (``stack``, bot/decide/stack.py): the noise
of one GPU, driver, CUDA, torch and timer need not be another's, and a comment on a run of
another stack says so. A file written before it has none: the stack is unknown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from bot.decide import stack as stacks
from bot.decide.stats import PRIOR_DF as STATS_PRIOR_DF
from bot.decide.stats import Between, RunStat, aggregate, run_stat
from bot.results.types import DEFAULT_FUSION, REFERENCE, BadInput, CommitResults, PointKey

Kind = Literal["ratio", "kernel"]
KINDS: tuple[Kind, ...] = ("ratio", "kernel")
SCHEMA = "perfbot-noise-model/1"
#: The pooled value's weight, in runs (see the module docstring); the same weight the verdict
#: gives the model beside a job's own repeats.
PRIOR_DF = STATS_PRIOR_DF


def series_label(kind: Kind, key: PointKey) -> str:
    return f"{kind}:{key.label}"


def aggregate_label(kind: Kind, variant: str) -> str:
    return f"{kind}:{variant}/*"


def label_parts(label: str) -> tuple[str, str, str]:
    """(kind, fusion, variant) of a series or aggregate label, the inverse of the two above:
    ``kind:fusion:variant/...``, or RMSNorm backward's ``kind:variant/...``."""
    head = label.split("/", 1)[0].split(":")
    if len(head) == 3:
        return head[0], head[1], head[2]
    return head[0], DEFAULT_FUSION, head[-1]


def samples_of(kind: Kind, run: CommitResults, key: PointKey) -> tuple[float, ...] | None:
    p = run.points.get(key)
    if p is None:
        return None
    return p.ratio if kind == "ratio" else p.kernel_s


def keys_of(kind: Kind, run: CommitResults) -> set[PointKey]:
    return {
        k
        for k, p in run.points.items()
        if (p.ratio if kind == "ratio" else p.kernel_s)
        and (kind == "kernel" or k.variant != REFERENCE)
    }


@dataclass(frozen=True)
class SeriesNoise:
    tau2: float  # shrunk
    df: float
    raw_tau2: float  # before shrinkage
    within: float  # mean w over the runs
    spread: float  # largest change of the median between two runs: max/min - 1


@dataclass(frozen=True)
class AggregateNoise:
    tau2: float
    df: float
    points: tuple[str, ...]  # "dtype/shape" of the member points


@dataclass(frozen=True)
class NoiseModel:
    machine: str
    calls_per_sample: str | None
    runs: tuple[str, ...]  # commit hashes (a commit twice: two processes of it)
    prior_df: float
    pool: Mapping[str, float]  # "kind:variant" -> pooled tau^2
    series: Mapping[str, SeriesNoise]
    aggregates: Mapping[str, AggregateNoise] = field(default_factory=dict)
    #: The A/A runs of the fusions added by :func:`extended`, per fusion: their series came
    #: from these runs, not from ``runs``.
    fusion_runs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: The stack of every run the model was fitted on; None: not recorded (an older file).
    stack: stacks.Stack | None = None
    #: The fusions whose own out-of-sample calibration fell short (bot/decide/calibration.py,
    #: ``provisional``; ``calibrate --mark-model`` writes it), with why: their moves are shown,
    #: not gated on (issue 39). Empty: none known to fall short (or never calibrated per fusion).
    provisional: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def runs_for(self, fusion: str) -> tuple[str, ...]:
        """The A/A runs behind ``fusion``'s series."""
        return self.fusion_runs.get(fusion, self.runs)

    def between(self, kind: Kind, key: PointKey) -> Between:
        s = self.series.get(series_label(kind, key))
        if s is not None:
            return Between(s.tau2, s.df)
        pool = self.pool.get(f"{kind}:{key.series}")
        if pool is None:
            pool = max((v for k, v in self.pool.items() if k.startswith(f"{kind}:")), default=0.0)
        return Between(pool, self.prior_df)

    def between_aggregate(self, kind: Kind, variant: str, keys: Sequence[PointKey]) -> Between:
        agg = self.aggregates.get(aggregate_label(kind, keys[0].series if keys else variant))
        members = tuple(sorted(f"{k.dtype}/{k.shape}" for k in keys))
        if agg is not None and agg.points == members:
            return Between(agg.tau2, agg.df)
        parts = [self.between(kind, k) for k in keys]
        return Between(sum(b.tau2 for b in parts) / len(parts), min(b.df for b in parts))


def _raw(stats: Sequence[RunStat]) -> tuple[float, float, float]:
    k = len(stats)
    mean = sum(s.y for s in stats) / k
    var = sum((s.y - mean) ** 2 for s in stats) / (k - 1)
    within = sum(s.w for s in stats) / k
    return var - within, within, math.expm1(max(s.y for s in stats) - min(s.y for s in stats))


def fit(
    runs: Sequence[CommitResults],
    prior_df: float = PRIOR_DF,
    keep: Callable[[str], bool] | None = None,
) -> NoiseModel:
    """The model from A/A runs (at least 2; the caller checks they are the same code), of the
    variants ``keep`` accepts (the noise command keeps what decides: the gating variants and
    nvFuser; the context baselines are sampled with fewer calls and decide nothing)."""
    if len(runs) < 2:
        raise BadInput(f"a noise model needs at least 2 runs of the same code, got {len(runs)}")
    tiled = [r.commit[:12] for r in runs if r.tiled is not None]
    if tiled:
        raise BadInput(
            f"{', '.join(tiled)}: tiled test input, not measurements: no noise model from it"
        )
    machines = {r.machine for r in runs}
    if len(machines) != 1:
        raise BadInput(f"runs on several machines: {', '.join(sorted(machines))}")
    k = len(runs)
    series: dict[str, SeriesNoise] = {}
    aggregates: dict[str, AggregateNoise] = {}
    pool: dict[str, float] = {}
    for kind in KINDS:
        keys = sorted(
            k
            for k in set.intersection(*(keys_of(kind, r) for r in runs))
            if keep is None or keep(k.variant)
        )
        stats = {key: [run_stat(samples_of(kind, r, key) or ()) for r in runs] for key in keys}
        raws = {key: _raw(st) for key, st in stats.items()}
        # Per series: a variant within its fusion (PointKey.series).
        for variant in sorted({key.series for key in keys}):
            mine = [r[0] for key, r in raws.items() if key.series == variant]
            pool[f"{kind}:{variant}"] = max(sum(mine) / len(mine), 0.0)
        for key, (raw, within, spread) in raws.items():
            raw = max(raw, 0.0)
            prior = pool[f"{kind}:{key.series}"]
            tau2 = ((k - 1) * raw + prior_df * prior) / (k - 1 + prior_df)
            series[series_label(kind, key)] = SeriesNoise(
                tau2, k - 1 + prior_df, raw, within, spread
            )
        for variant in sorted({key.series for key in keys}):
            members = [key for key in keys if key.series == variant]
            raw, _, _ = _raw(aggregate([stats[key] for key in members]))
            aggregates[aggregate_label(kind, variant)] = AggregateNoise(
                max(raw, 0.0), float(k - 1), tuple(sorted(f"{m.dtype}/{m.shape}" for m in members))
            )
    calls = {r.provenance.text("calls_per_sample") if r.provenance else None for r in runs}
    if len(calls) != 1:
        raise BadInput(
            f"the runs differ in calls per sample ({sorted(map(str, calls))}): not pooled"
        )
    return NoiseModel(
        machine=next(iter(machines)),
        calls_per_sample=next(iter(calls)),
        runs=tuple(r.commit for r in runs),
        prior_df=prior_df,
        pool=pool,
        series=series,
        aggregates=aggregates,
        stack=stacks.stack_of(r.provenance for r in runs),
    )


def extended(kept: NoiseModel, new: NoiseModel) -> NoiseModel:
    """``kept`` with what ``new`` fitted that it lacks: a fusion new to the catalog gets its
    series from its own A/A runs while every entry already in use (and the verdicts made with
    it) stays as it was; ``fusion_runs`` names the runs each added fusion was fitted on, and
    the stack is both sets of runs' (unknown where ``kept`` does not record its own)."""
    if (new.machine, new.calls_per_sample) != (kept.machine, kept.calls_per_sample):
        raise BadInput(
            f"the model to extend is for {kept.machine} at {kept.calls_per_sample} call(s) per "
            f"sample; these runs are {new.machine} at {new.calls_per_sample}"
        )
    fusions = {label_parts(label)[1] for label in new.series} - {
        label_parts(label)[1] for label in kept.series
    }
    return replace(
        kept,
        fusion_runs={**dict.fromkeys(sorted(fusions), new.runs), **kept.fusion_runs},
        pool={**new.pool, **kept.pool},
        series={**new.series, **kept.series},
        aggregates={**new.aggregates, **kept.aggregates},
        stack=(
            stacks.merged(kept.stack, new.stack)
            if kept.stack is not None and new.stack is not None
            else None
        ),
    )


def to_json(model: NoiseModel) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "machine": model.machine,
        "calls_per_sample": model.calls_per_sample,
        "runs": list(model.runs),
        **(
            {"fusion_runs": {f: list(r) for f, r in model.fusion_runs.items()}}
            if model.fusion_runs
            else {}
        ),
        **(
            {"provisional": {f: list(why) for f, why in sorted(model.provisional.items())}}
            if model.provisional
            else {}
        ),
        "prior_df": model.prior_df,
        "pool": dict(model.pool),
        "series": {
            label: {
                "tau2": s.tau2,
                "df": s.df,
                "raw_tau2": s.raw_tau2,
                "within": s.within,
                "spread": s.spread,
            }
            for label, s in sorted(model.series.items())
        },
        "aggregates": {
            label: {"tau2": a.tau2, "df": a.df, "points": list(a.points)}
            for label, a in sorted(model.aggregates.items())
        },
        **({"stack": stacks.to_json(model.stack)} if model.stack is not None else {}),
    }


def _number(where: str, value: Any, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadInput(f"{where}: {value!r:.60} is not a finite number")
    if value < 0 or (positive and value == 0):
        raise BadInput(f"{where}: {value!r} is out of range")
    return float(value)


def _table(where: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise BadInput(f"{where}: must be an object, not {type(value).__name__}")
    return value


def _text(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise BadInput(f"{where}: must be a non-empty string, not {value!r:.60}")
    return value


def _texts(where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise BadInput(f"{where}: must be a list of strings, not {type(value).__name__}")
    return tuple(_text(f"{where}[{i}]", v) for i, v in enumerate(value))


def _field(where: str, data: Mapping[str, Any], key: str) -> Any:
    if key not in data:
        raise BadInput(f"{where}: {key} is missing")
    return data[key]


def from_json(data: Any, where: str) -> NoiseModel:
    """Parse and check a model file's content; every defect is a BadInput naming the field."""
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
        raise BadInput(f"{where}: not a noise model (schema {SCHEMA!r} expected)")

    def get(table: Mapping[str, Any], key: str, at: str) -> Any:
        return _field(f"{where}: {at}", table, key)

    series = {}
    for label, raw in _table(f"{where}: series", get(data, "series", "top level")).items():
        s = _table(f"{where}: series.{label}", raw)
        series[str(label)] = SeriesNoise(
            *(
                _number(f"{where}: {label}.{k}", get(s, k, label), positive=k == "df")
                for k in ("tau2", "df", "raw_tau2", "within", "spread")
            )
        )
    aggregates = {}
    for label, raw in _table(f"{where}: aggregates", get(data, "aggregates", "top level")).items():
        a = _table(f"{where}: aggregates.{label}", raw)
        aggregates[str(label)] = AggregateNoise(
            _number(f"{where}: {label}.tau2", get(a, "tau2", label)),
            _number(f"{where}: {label}.df", get(a, "df", label), positive=True),
            _texts(f"{where}: {label}.points", get(a, "points", label)),
        )
    pool = {
        str(k): _number(f"{where}: pool.{k}", v)
        for k, v in _table(f"{where}: pool", get(data, "pool", "top level")).items()
    }
    calls = get(data, "calls_per_sample", "top level")
    return NoiseModel(
        machine=_text(f"{where}: machine", get(data, "machine", "top level")),
        calls_per_sample=None if calls is None else _text(f"{where}: calls_per_sample", calls),
        runs=_texts(f"{where}: runs", get(data, "runs", "top level")),
        prior_df=_number(f"{where}: prior_df", get(data, "prior_df", "top level"), positive=True),
        pool=pool,
        series=series,
        aggregates=aggregates,
        fusion_runs={
            str(f): _texts(f"{where}: fusion_runs.{f}", r)
            for f, r in _table(f"{where}: fusion_runs", data.get("fusion_runs", {})).items()
        },
        stack=stacks.from_json(data["stack"], f"{where}: stack") if "stack" in data else None,
        provisional={
            str(f): _texts(f"{where}: provisional.{f}", why)
            for f, why in _table(f"{where}: provisional", data.get("provisional", {})).items()
        },
    )

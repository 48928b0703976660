"""The between-run noise model: its fit by hand, its lookups, its file format's checks.

The hand-computed runs are in memory (tests/data_helpers.py's state_from_rounds), built so that
every run's log median and within-run variance are known: each run is the same five-round
pattern scaled by a run-level factor, so the model's numbers follow from sample variances of
a few offsets. The real A/A runs (data/h200*) check the fit on what the bot really reads.
"""

from __future__ import annotations

import copy
import json
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from data_helpers import state_from_rounds
from paths import DATA, STOCK_RUNS

from bot.decide.noise_model import (
    PRIOR_DF,
    SCHEMA,
    NoiseModel,
    fit,
    from_json,
    to_json,
)
from bot.decide.stats import Between, run_stat
from bot.results.locate import load_commit
from bot.results.types import BadInput, CommitResults, PointKey, Provenance

# -- hand-built A/A runs --------------------------------------------------------------------------

PATTERN = [-0.01, 0.0, 0.01, 0.005, -0.005]  # per-round log offsets: median 0, MAD 0.005
#: Within-run variance of every series below: (pi/2) (1.4826 * 0.005)^2 / 5.
W = (math.pi / 2) * (1.4826 * 0.005) ** 2 / 5
S1, S2 = "512x4096", "2048x8192"
#: Per run, the log offset of each (variant, shape); nvFuser does not move.
OFFSETS = {
    ("thunder-prims", S1): [0.0, 0.02, -0.01],
    ("thunder-prims", S2): [0.01, 0.0, -0.01],
    ("eager", S1): [0.0, 0.05, -0.05],
}
BASE_S = {"nvfuser": 50e-6, "thunder-prims": 40e-6, "eager": 120e-6}
TP1, TP2 = PointKey("thunder-prims", "bfloat16", S1), PointKey("thunder-prims", "bfloat16", S2)
EAGER = PointKey("eager", "bfloat16", S1)


def _provenance(calls: object) -> Provenance:
    return Provenance(Path("<memory>"), 1, {"calls_per_sample": calls})


def aa_run(i: int, machine: str = "h-test", calls: object = 8) -> CommitResults:
    rounds: dict[tuple[str, str], dict[str, list[float]]] = {}
    for shape in (S1, S2):
        per: dict[str, list[float]] = {"nvfuser": [BASE_S["nvfuser"]] * len(PATTERN)}
        for (variant, s), offs in OFFSETS.items():
            if s == shape:
                per[variant] = [BASE_S[variant] * math.exp(offs[i] + g) for g in PATTERN]
        rounds[("bfloat16", shape)] = per
    run: CommitResults = state_from_rounds(f"{i:x}" * 8, rounds, machine)
    return replace(run, provenance=None if calls is None else _provenance(calls))


RUNS = [aa_run(i) for i in range(3)]
K = len(RUNS)


def raw(offsets: Sequence[float], w: float = W) -> float:
    return statistics.variance(offsets) - w


def shrunk(r: float, pool: float) -> float:
    return ((K - 1) * r + PRIOR_DF * pool) / (K - 1 + PRIOR_DF)


@pytest.fixture(scope="module")
def model() -> NoiseModel:
    return fit(RUNS)


def test_the_hand_built_runs_are_what_they_say() -> None:
    s = run_stat(RUNS[1].points[TP1].kernel_s or ())
    assert s.y == pytest.approx(math.log(40e-6) + 0.02, abs=1e-12)
    assert s.w == pytest.approx(W, rel=1e-9, abs=0)


def test_fit_by_hand(model: NoiseModel) -> None:
    """raw = var(y) - mean(w); pool = the variant's mean raw; tau^2 shrunk with PRIOR_DF."""
    r1, r2 = raw(OFFSETS[("thunder-prims", S1)]), raw(OFFSETS[("thunder-prims", S2)])
    assert r1 == pytest.approx(7 / 3 * 1e-4 - W) and r2 == pytest.approx(1e-4 - W)
    pool = (r1 + r2) / 2
    for kind in ("ratio", "kernel"):  # nvFuser is flat, so the ratio moves as the kernel does
        assert model.pool[f"{kind}:thunder-prims"] == pytest.approx(pool, rel=1e-8, abs=0)
        s1 = model.series[f"{kind}:{TP1.label}"]
        assert s1.raw_tau2 == pytest.approx(r1, rel=1e-8, abs=0)
        assert s1.tau2 == pytest.approx(shrunk(r1, pool), rel=1e-8, abs=0)
        assert s1.df == K - 1 + PRIOR_DF
        assert s1.within == pytest.approx(W, rel=1e-9, abs=0)
        assert s1.spread == pytest.approx(math.expm1(0.03), rel=1e-9, abs=0)
        s2 = model.series[f"{kind}:{TP2.label}"]
        assert s2.tau2 == pytest.approx(shrunk(r2, pool), rel=1e-8, abs=0)
        # Shrinkage moves each series toward the pool, not past it.
        assert s2.raw_tau2 < s2.tau2 < pool < s1.tau2 < s1.raw_tau2
        eager = raw(OFFSETS[("eager", S1)])
        assert model.pool[f"{kind}:eager"] == pytest.approx(eager, rel=1e-8, abs=0)
        # A variant with one point is its own pool: shrinkage leaves it.
        assert model.series[f"{kind}:{EAGER.label}"].tau2 == pytest.approx(eager, rel=1e-8, abs=0)
    # nvFuser's kernel series: no spread at all, so 0 (and no nvFuser ratio series exists).
    nv = model.series[f"kernel:nvfuser/bfloat16/{S1}"]
    assert (nv.tau2, nv.raw_tau2, nv.within, nv.spread) == (0.0, 0.0, 0.0, 0.0)
    assert "ratio:nvfuser" not in model.pool
    assert not any(label.startswith("ratio:nvfuser/") for label in model.series)
    assert (model.machine, model.calls_per_sample, model.prior_df) == ("h-test", "8", PRIOR_DF)
    assert model.runs == tuple(r.commit for r in RUNS)


def test_a_negative_raw_estimate_counts_as_zero() -> None:
    """A series whose runs agree better than its within-run noise says has tau^2 0, not < 0."""
    runs = [aa_run(i) for i in (0, 0, 0)]  # the same offsets three times: var(y) = 0
    m = fit(runs)
    s = m.series[f"ratio:{TP1.label}"]
    assert s.raw_tau2 == 0.0 and s.tau2 == 0.0
    assert m.pool["ratio:thunder-prims"] == 0.0
    assert m.aggregates["ratio:thunder-prims/*"].tau2 == 0.0


def test_aggregates_by_hand(model: NoiseModel) -> None:
    """A variant's geometric mean is a series: per run the mean of its points' y, w / k^2."""
    mean_offsets = [
        (a + b) / 2
        for a, b in zip(OFFSETS[("thunder-prims", S1)], OFFSETS[("thunder-prims", S2)], strict=True)
    ]
    for kind in ("ratio", "kernel"):
        agg = model.aggregates[f"{kind}:thunder-prims/*"]
        assert agg.tau2 == pytest.approx(raw(mean_offsets, W / 2), rel=1e-8, abs=0)
        assert agg.df == K - 1
        assert agg.points == tuple(sorted([f"bfloat16/{S1}", f"bfloat16/{S2}"]))
    assert model.aggregates["kernel:nvfuser/*"].tau2 == 0.0
    assert "ratio:nvfuser/*" not in model.aggregates


def test_between_for_known_and_unknown_series(model: NoiseModel) -> None:
    s1 = model.series[f"ratio:{TP1.label}"]
    assert model.between("ratio", TP1) == Between(s1.tau2, s1.df)
    # Unknown point of a known variant: the variant's pool, with PRIOR_DF.
    other_shape = PointKey("thunder-prims", "float32", S1)
    assert model.between("ratio", other_shape) == Between(model.pool["ratio:thunder-prims"], 4.0)
    # Unknown variant: the largest pool of the kind (eager's, here), with PRIOR_DF.
    assert model.pool["ratio:eager"] > model.pool["ratio:thunder-prims"]
    unseen = PointKey("thunder-func", "bfloat16", S1)
    assert model.between("ratio", unseen) == Between(model.pool["ratio:eager"], PRIOR_DF)
    assert model.between("kernel", unseen) == Between(model.pool["kernel:eager"], PRIOR_DF)


def test_between_aggregate_over_the_same_or_another_set(model: NoiseModel) -> None:
    agg = model.aggregates["ratio:thunder-prims/*"]
    same = model.between_aggregate("ratio", "thunder-prims", [TP2, TP1])  # order does not matter
    assert same == Between(agg.tau2, agg.df)
    # Another point set: the members' mean tau^2 (an upper bound), their smallest df.
    one = model.between_aggregate("ratio", "thunder-prims", [TP1])
    s1 = model.series[f"ratio:{TP1.label}"]
    assert one == Between(s1.tau2, s1.df)
    extra = PointKey("thunder-prims", "float32", S1)
    three = model.between_aggregate("ratio", "thunder-prims", [TP1, TP2, extra])
    members = [model.between("ratio", k) for k in (TP1, TP2, extra)]
    assert three.tau2 == pytest.approx(sum(b.tau2 for b in members) / 3, rel=1e-12, abs=0)
    assert three.df == min(b.df for b in members) == PRIOR_DF
    # A variant without an aggregate: its members' lookups (here the largest pool).
    unseen = [PointKey("thunder-func", "bfloat16", s) for s in (S1, S2)]
    got = model.between_aggregate("ratio", "thunder-func", unseen)
    assert got == Between(pytest.approx(model.pool["ratio:eager"]), PRIOR_DF)  # type: ignore[arg-type]


# -- what fit refuses -----------------------------------------------------------------------------


def test_fit_refuses_fewer_than_two_runs() -> None:
    with pytest.raises(BadInput, match="at least 2 runs"):
        fit(RUNS[:1])
    with pytest.raises(BadInput, match="at least 2 runs"):
        fit([])


def test_fit_refuses_several_machines() -> None:
    with pytest.raises(BadInput, match="several machines: h-other, h-test"):
        fit([*RUNS[:2], aa_run(2, machine="h-other")])


@pytest.mark.parametrize("odd", [16, "16", None])
def test_fit_refuses_runs_with_different_calls_per_sample(odd: object) -> None:
    with pytest.raises(BadInput, match="calls per sample"):
        fit([*RUNS[:2], aa_run(2, calls=odd)])


def test_runs_without_provenance_fit_with_unknown_calls() -> None:
    m = fit([aa_run(i, calls=None) for i in range(2)])
    assert m.calls_per_sample is None


# -- the file format -------------------------------------------------------------------------------


def test_json_round_trip(model: NoiseModel) -> None:
    text = json.dumps(to_json(model))
    back = from_json(json.loads(text), "model.json")
    assert back == model
    assert to_json(back) == to_json(model)
    assert json.loads(text)["schema"] == SCHEMA


def _good() -> dict[str, Any]:
    return to_json(fit(RUNS))


Edit = Callable[[dict[str, Any]], object]
LABEL = f"ratio:{TP1.label}"
AGG = "ratio:thunder-prims/*"


def _series(field: str, value: object) -> Edit:
    return lambda d: d["series"][LABEL].__setitem__(field, value)


def _drop(*path: str) -> Edit:
    def edit(d: dict[str, Any]) -> None:
        for key in path[:-1]:
            d = d[key]
        del d[path[-1]]

    return edit


def _set(key: str, value: object) -> Edit:
    return lambda d: d.__setitem__(key, value)


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (_set("schema", "perfbot-noise-model/0"), "schema"),
        (_drop("schema"), "schema"),
        (_drop("series"), "series"),
        (_drop("pool"), "pool"),
        (_drop("aggregates"), "aggregates"),
        (_drop("machine"), "machine"),
        (_drop("runs"), "runs"),
        (_drop("prior_df"), "prior_df"),
        (_drop("calls_per_sample"), "calls_per_sample"),
        (_drop("series", LABEL, "tau2"), "tau2"),
        (_drop("series", LABEL, "df"), "df"),
        (_drop("series", LABEL, "spread"), "spread"),
        (_drop("aggregates", AGG, "points"), "points"),
        (_series("tau2", float("nan")), f"{LABEL}.tau2"),
        (_series("tau2", float("inf")), f"{LABEL}.tau2"),
        (_series("tau2", -1e-6), f"{LABEL}.tau2"),
        (_series("raw_tau2", -1.0), f"{LABEL}.raw_tau2"),
        (_series("within", float("nan")), f"{LABEL}.within"),
        (_series("spread", -0.1), f"{LABEL}.spread"),
        (_series("df", 0), f"{LABEL}.df"),
        (_series("df", -2.0), f"{LABEL}.df"),
        (_series("tau2", "0.1"), f"{LABEL}.tau2"),
        (_series("tau2", None), f"{LABEL}.tau2"),
        (_series("tau2", True), f"{LABEL}.tau2"),
        (_series("tau2", [0.1]), f"{LABEL}.tau2"),
        (lambda d: d["aggregates"][AGG].__setitem__("df", 0.0), f"{AGG}.df"),
        (lambda d: d["aggregates"][AGG].__setitem__("tau2", -1.0), f"{AGG}.tau2"),
        (lambda d: d["pool"].__setitem__("ratio:eager", float("nan")), "pool.ratio:eager"),
        (lambda d: d["pool"].__setitem__("ratio:eager", -1e-9), "pool.ratio:eager"),
        (lambda d: d["pool"].__setitem__("ratio:eager", "x"), "pool.ratio:eager"),
        (_set("prior_df", 0), "prior_df"),
        (_set("prior_df", float("nan")), "prior_df"),
        (_set("prior_df", "4"), "prior_df"),
    ],
)
def test_from_json_refuses_a_defect_naming_the_field(edit: Edit, named: str) -> None:
    data = _good()
    edit(data)
    with pytest.raises(BadInput) as info:
        from_json(data, "perfbot-noise.json")
    assert str(info.value).startswith("perfbot-noise.json: ")
    assert named in str(info.value)


@pytest.mark.parametrize("data", [None, [], "model", 3, {"schema": SCHEMA.upper()}])
def test_from_json_refuses_what_is_not_a_model(data: object) -> None:
    with pytest.raises(BadInput, match="not a noise model"):
        from_json(data, "m.json")


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        pytest.param(
            _set("series", []),
            "series",
        ),
        pytest.param(
            _set("pool", [1.0]),
            "pool",
        ),
        pytest.param(
            lambda d: d["series"].__setitem__(LABEL, 5),
            LABEL,
        ),
        pytest.param(
            _set("runs", 5),
            "runs",
        ),
        pytest.param(
            lambda d: d["aggregates"][AGG].__setitem__("points", 5),
            "points",
        ),
    ],
)
def test_from_json_names_a_field_of_the_wrong_container_type(edit: Edit, named: str) -> None:
    data = _good()
    edit(data)
    with pytest.raises(BadInput) as info:
        from_json(data, "m.json")
    assert named in str(info.value)


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(_set("machine", None), id="machine-null"),
        pytest.param(_set("machine", 5), id="machine-number"),
        pytest.param(_set("runs", "abc"), id="runs-string"),
        pytest.param(
            lambda d: d["aggregates"][AGG].__setitem__("points", "bfloat16/8x8"), id="points-string"
        ),
        pytest.param(_set("calls_per_sample", [8]), id="calls-list"),
    ],
)
def test_from_json_refuses_wrong_scalar_and_list_types(edit: Edit) -> None:
    data = _good()
    edit(data)
    with pytest.raises(BadInput):
        from_json(data, "m.json")


def test_from_json_does_not_alter_its_input(model: NoiseModel) -> None:
    data = to_json(model)
    before = copy.deepcopy(data)
    from_json(data, "m.json")
    assert data == before


# -- real A/A runs (data/h200*) ------------------------------------------------------------------

H200 = DATA / "h200" / "results"
STATES = DATA / "h200-states" / "results"
STOCK = STOCK_RUNS


@pytest.fixture(scope="module")
def stock() -> dict[str, CommitResults]:
    return {c: load_commit(d, c) for c, d in STOCK.items()}


def test_fit_on_the_real_stock_runs(stock: dict[str, CommitResults]) -> None:
    runs = list(stock.values())
    m = fit(runs)
    k = len(runs)
    assert (m.machine, m.calls_per_sample) == ("nvidia-h200", "8")
    assert m.runs == tuple(r.commit for r in runs)
    kinds = {label.split(":", 1)[0] for label in m.series}
    assert kinds == {"ratio", "kernel"}
    for label, s in m.series.items():
        variant = label.split(":", 1)[1].split("/", 1)[0]
        pool = m.pool[f"{label.split(':', 1)[0]}:{variant}"]
        assert s.df == k - 1 + PRIOR_DF
        assert s.raw_tau2 >= 0.0 and s.tau2 >= 0.0 and s.within > 0.0 and s.spread > 0.0
        lo, hi = sorted((s.raw_tau2, pool))
        assert lo - 1e-18 <= s.tau2 <= hi + 1e-18, label  # shrunk toward the pool
        assert math.sqrt(s.tau2) < 0.05, label  # the H200 moves well under 5% run to run
    for label, a in m.aggregates.items():
        assert a.df == k - 1 and len(a.points) >= 3, label
    # The gating variants' points each have a series of both kinds.
    ratio_points = {lb.split(":", 1)[1] for lb in m.series if lb.startswith("ratio:thunder-")}
    kernel_points = {lb.split(":", 1)[1] for lb in m.series if lb.startswith("kernel:thunder-")}
    assert ratio_points == kernel_points and len(ratio_points) >= 6
    assert from_json(json.loads(json.dumps(to_json(m))), "m.json") == m


def test_real_runs_from_two_machines_are_not_pooled(stock: dict[str, CommitResults]) -> None:
    runs = list(stock.values())
    with pytest.raises(BadInput, match="several machines"):
        fit([*runs[:2], replace(runs[2], machine="nvidia-h100")])

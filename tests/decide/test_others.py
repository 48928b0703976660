"""The leave-one-out geometric means (bot/decide/others.py) are the ones the verdict used to build
point by point: the same formulas, O(1) a point instead of O(n)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.decide.noise_model import AggregateNoise, NoiseModel, SeriesNoise, aggregate_label
from bot.decide.others import PriorSums, SideSums
from bot.decide.stats import RunStat, aggregate
from bot.results.types import PointKey

stat = st.builds(
    RunStat,
    st.floats(-12, 2, allow_nan=False),
    st.floats(0, 1e-3, allow_nan=False),
    st.integers(10, 40),
)


@st.composite
def members(draw: st.DrawFn) -> list[list[RunStat]]:
    runs = draw(st.integers(1, 3))
    return draw(st.lists(st.lists(stat, min_size=runs, max_size=runs), min_size=2, max_size=12))


@given(members())
def test_each_others_mean_is_the_aggregate_of_the_others(stats: list[list[RunStat]]) -> None:
    sums = SideSums(stats)
    for i in range(len(stats)):
        want = aggregate([s for j, s in enumerate(stats) if j != i])
        got = sums.without(i)
        for g, w in zip(got, want, strict=True):
            assert math.isclose(g.y, w.y, rel_tol=1e-9, abs_tol=1e-12)
            assert math.isclose(g.w, w.w, rel_tol=1e-9, abs_tol=1e-18)
            assert g.n == w.n


def _model(
    keys: list[PointKey], tau2: list[float], df: list[float], agg: tuple[str, ...] | None
) -> NoiseModel:
    series = {
        f"ratio:{k.label}": SeriesNoise(t, d, t, 0.0, 0.0)
        for k, t, d in zip(keys, tau2, df, strict=True)
    }
    aggregates = {}
    if agg is not None:
        aggregates[aggregate_label("ratio", "v")] = AggregateNoise(0.123, 7.0, agg)
    return NoiseModel("m", "8", ("a", "b"), 4.0, {"ratio:v": 1e-4}, series, aggregates)


@settings(max_examples=60)
@given(
    st.integers(2, 10).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(0, 1e-3), min_size=n, max_size=n),
            st.lists(st.floats(1, 20), min_size=n, max_size=n),
            st.one_of(st.none(), st.integers(0, n - 1)),
            st.integers(0, n),  # the model has not seen the first ones: they get its pool
        )
    )
)
def test_each_others_prior_is_the_models(
    drawn: tuple[list[float], list[float], int | None, int],
) -> None:
    tau2, df, left_out, unseen = drawn
    keys = [PointKey("v", "bfloat16", f"{i + 1}x8") for i in range(len(tau2))]
    # The model's own geometric mean, measured on every point but one: that one's others.
    names = [f"{k.dtype}/{k.shape}" for j, k in enumerate(keys) if j != left_out]
    agg = None if left_out is None else tuple(sorted(names))
    model = _model(keys[unseen:], tau2[unseen:], df[unseen:], agg)
    priors = PriorSums(model, "ratio", "v", keys)
    for i in range(len(keys)):
        want = model.between_aggregate("ratio", "v", [k for j, k in enumerate(keys) if j != i])
        got = priors.without(i)
        assert math.isclose(got.tau2, want.tau2, rel_tol=1e-9, abs_tol=1e-15)
        assert got.df == want.df
    assert PriorSums(None, "ratio", "v", keys).without(0).df == 0.0

"""Each verdict rule at its boundary, and the whole verdict on the real H200 states.

bot/decide/rules.py draws each line exactly: a change must REACH its threshold (``>=``), its
Holm-adjusted p must be BELOW alpha (``<``), its interval must lie strictly above 1
(``low > 1``); corroboration by the series' own interval needs its low end to REACH the
threshold. Comparisons are built directly, so each boundary is hit on the float itself.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from paths import DATA, STOCK_RUNS

from bot.config import VerdictSettings
from bot.decide.noise_model import NoiseModel, fit
from bot.decide.rules import (
    MIN_BROAD_POINTS,
    aggregate_state,
    broken_state,
    corroborate_kernels,
    guard_state,
    is_corroborated,
    overall_state,
    point_state,
    ratio_owner,
    side_moved,
)
from bot.decide.stats import Comparison, Interval
from bot.decide.types import Guard, GuardKind, PointVerdict, State, VariantSummary, Verdict
from bot.decide.verdict import decide
from bot.results.locate import load_commit
from bot.results.types import CommitResults, PointKey

T, ALPHA = 0.02, 0.01
UP, DOWN = 1 + T, 1 / (1 + T)
BELOW = math.nextafter(UP, 0.0)  # the largest float under the threshold
ABOVE_ONE = math.nextafter(1.0, 2.0)
K = PointKey("thunder-prims", "bfloat16", "512x4096")


def cmp(estimate: float, low: float, high: float, p_up: float = 0.5) -> Comparison:
    """A comparison with this change interval (p's are passed to the rules separately)."""
    return Comparison(
        base=Interval(1.0, 0.99, 1.01),
        head=Interval(estimate, low, high),
        change=Interval(estimate, low, high),
        p_up=p_up,
        p_down=1 - p_up,
        log_change=math.log(estimate),
        se=0.01,
        df=10.0,
        tau2=1e-5,
        runs=(1, 1),
    )


# -- the point rule ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("c", "p_up", "p_down", "state"),
    [
        (cmp(UP, 1.01, 1.03), 0.001, 1.0, "regressed"),  # exactly at the threshold: counts
        (cmp(BELOW, 1.01, 1.03), 0.001, 1.0, "no change"),  # a hair under it: does not
        (cmp(UP, 1.01, 1.03), ALPHA, 1.0, "unsure"),  # p must be below alpha, not equal
        (cmp(UP, 1.01, 1.03), math.nextafter(ALPHA, 0.0), 1.0, "regressed"),
        (cmp(UP, 1.0, 1.03), 0.001, 1.0, "unsure"),  # an interval touching 1 is not above it
        (cmp(UP, ABOVE_ONE, 1.03), 0.001, 1.0, "regressed"),
        (cmp(UP, 1.01, 1.03), 1.0, 0.001, "unsure"),  # the wrong tail's p does not count
        (cmp(1.5, 0.9, 2.0), 0.3, 0.7, "unsure"),  # a big change noise could explain
        (cmp(BELOW, 0.9, 1.2), 0.3, 0.7, "no change"),  # under the threshold is never unsure
        (cmp(DOWN, 0.97, 0.99), 1.0, 0.001, "improved"),  # the mirror, at its boundary
        (cmp(math.nextafter(DOWN, 2.0), 0.97, 0.99), 1.0, 0.001, "no change"),
        (cmp(DOWN, 0.97, 1.0), 1.0, 0.001, "no change"),  # an improvement is never "unsure"
        (cmp(DOWN, 0.97, math.nextafter(1.0, 0.0)), 1.0, 0.001, "improved"),
        (cmp(DOWN, 0.97, 0.99), 1.0, ALPHA, "no change"),
        (cmp(DOWN, 0.97, 0.99), 1.0, math.nextafter(ALPHA, 0.0), "improved"),
        (cmp(1.0, 0.99, 1.01), 0.5, 0.5, "no change"),
    ],
)
def test_point_rule_boundaries(c: Comparison, p_up: float, p_down: float, state: State) -> None:
    assert point_state(c, p_up, p_down, T, ALPHA) == state


def test_the_point_rule_reads_the_adjusted_p_not_the_comparisons_own() -> None:
    c = cmp(1.05, 1.03, 1.07, p_up=1e-9)  # the raw p is tiny; Holm raised it past alpha
    assert point_state(c, 0.02, 1.0, T, ALPHA) == "unsure"
    c = cmp(1.05, 1.03, 1.07, p_up=0.5)
    assert point_state(c, 0.001, 1.0, T, ALPHA) == "regressed"


def test_the_threshold_is_the_callers() -> None:
    c = cmp(1.04, 1.02, 1.06)
    assert point_state(c, 0.001, 1.0, 0.04, ALPHA) == "regressed"
    assert point_state(c, 0.001, 1.0, 0.0401, ALPHA) == "no change"


# -- the geometric mean's rule ----------------------------------------------------------------


BROAD = T / 2  # the shipped broad_effect (1%) against the point threshold (2%)


def test_fewer_than_min_broad_points_never_decide() -> None:
    """docs/BOT.md: "a variant's geometric mean over at least 3 points regresses from 1% on"; with
    fewer it never decides, however strong."""
    strong = cmp(1.5, 1.4, 1.6)
    for points in range(3):
        assert aggregate_state(strong, points, 1e-12, 1.0, BROAD, T, ALPHA) == "no change"
        assert (
            aggregate_state(cmp(0.5, 0.4, 0.6), points, 1.0, 1e-12, BROAD, T, ALPHA) == "no change"
        )
        assert aggregate_state(cmp(1.5, 0.5, 3.0), points, 0.4, 0.6, BROAD, T, ALPHA) == "no change"
    assert aggregate_state(strong, 3, 1e-12, 1.0, BROAD, T, ALPHA) == "regressed"


@pytest.mark.parametrize(
    ("c", "p_up", "state"),
    [
        (cmp(1 + BROAD, 1.001, 1.02), 0.001, "regressed"),  # a broad change from broad_effect on
        (cmp(math.nextafter(1 + BROAD, 0), 1.001, 1.02), 0.001, "no change"),
        (cmp(1.015, 0.99, 1.04), 0.5, "no change"),  # past broad_effect, unproven: not news
        (cmp(UP, 0.99, 1.05), 0.5, "unsure"),  # unproven at the point threshold: unsure
    ],
)
def test_a_geometric_mean_regresses_from_broad_effect_and_is_unsure_from_the_threshold(
    c: Comparison, p_up: float, state: State
) -> None:
    assert aggregate_state(c, MIN_BROAD_POINTS, p_up, 1.0, BROAD, T, ALPHA) == state


@pytest.mark.parametrize(
    ("c", "p_up", "p_down", "state"),
    [
        (cmp(UP, 1.005, 1.03), 0.001, 1.0, "regressed"),
        (cmp(BELOW, 1.005, 1.03), 0.001, 1.0, "no change"),
        (cmp(UP, 1.0, 1.03), 0.001, 1.0, "unsure"),
        (cmp(UP, 1.005, 1.03), ALPHA, 1.0, "unsure"),
        (cmp(DOWN, 0.97, 0.995), 1.0, 0.001, "improved"),
    ],
)
def test_from_min_broad_points_the_point_rule_applies(
    c: Comparison, p_up: float, p_down: float, state: State
) -> None:
    """With broad_effect equal to the threshold, the point rule itself."""
    assert aggregate_state(c, MIN_BROAD_POINTS, p_up, p_down, T, T, ALPHA) == state
    assert aggregate_state(c, MIN_BROAD_POINTS + 6, p_up, p_down, T, T, ALPHA) == state


# -- corroboration ----------------------------------------------------------------------------


def test_a_point_whose_own_interval_reaches_the_threshold_is_corroborated() -> None:
    assert is_corroborated("regressed", cmp(1.05, UP, 1.08), T, None)
    assert not is_corroborated("regressed", cmp(1.05, BELOW, 1.08), T, None)
    assert is_corroborated("improved", cmp(0.95, 0.9, DOWN), T, None)
    assert not is_corroborated("improved", cmp(0.95, 0.9, math.nextafter(DOWN, 2)), T, None)
    for state in ("no change", "unsure", "no data", "broken"):
        assert not is_corroborated(state, cmp(1.05, 1.04, 1.08), T, cmp(1.1, 1.05, 1.2))


def test_the_variants_other_points_corroborate_as_a_group() -> None:
    lone = cmp(1.025, 1.005, 1.04)  # regressed, but its own interval does not clear 2%
    assert is_corroborated("regressed", lone, T, cmp(1.01, 1.001, 1.02))
    assert not is_corroborated("regressed", lone, T, cmp(1.0, 0.99, 1.01))
    assert not is_corroborated("regressed", lone, T, None)  # nothing else to ask
    # A group whose interval bottoms out at exactly 1 is not "significantly up".
    assert not is_corroborated("regressed", lone, T, cmp(1.01, 1.0, 1.02))
    assert is_corroborated("regressed", lone, T, cmp(1.01, ABOVE_ONE, 1.02))
    # Going the other way does not corroborate.
    assert not is_corroborated("regressed", lone, T, cmp(0.98, 0.97, 0.99))
    improved = cmp(0.975, 0.96, 0.995)
    assert is_corroborated("improved", improved, T, cmp(0.99, 0.98, 0.999))
    assert not is_corroborated("improved", improved, T, cmp(0.99, 0.98, 1.0))
    assert not is_corroborated("improved", improved, T, cmp(1.01, 1.001, 1.02))


# -- which side moved -------------------------------------------------------------------------


def test_the_side_that_carries_the_change_is_named() -> None:
    ratio = cmp(1.10, 1.08, 1.12)
    slower, steady = cmp(1.10, 1.08, 1.12), cmp(1.0, 0.99, 1.01)
    assert side_moved(slower, steady, ratio, T) == "thunder"
    assert side_moved(steady, cmp(0.91, 0.9, 0.92), ratio, T) == "nvfuser"
    assert side_moved(slower, cmp(0.95, 0.94, 0.96), ratio, T) == "both"
    assert side_moved(steady, steady, ratio, T) == "neither"
    assert side_moved(None, steady, ratio, T) == "unknown"
    assert side_moved(steady, None, ratio, T) == "unknown"


def test_a_side_needs_half_the_ratio_change_to_count_as_moved() -> None:
    """Half, in log terms: sqrt(1.10) for a +10% ratio."""
    ratio = cmp(1.10, 1.08, 1.12)
    half = math.sqrt(1.10)
    steady = cmp(1.0, 0.99, 1.01)
    assert side_moved(cmp(half * 1.0001, 1.03, 1.07), steady, ratio, T) == "thunder"
    assert side_moved(cmp(half / 1.0001, 1.03, 1.07), steady, ratio, T) == "neither"
    unsure = cmp(1.10, 0.99, 1.2)  # a big move whose interval holds 1 is not attributed
    assert side_moved(unsure, steady, ratio, T) == "neither"
    touching = cmp(1.10, 1.0, 1.2)  # nor one whose interval only touches 1
    assert side_moved(touching, steady, ratio, T) == "neither"


def test_common_drift_under_half_the_threshold_moves_no_side() -> None:
    """Absolute times drift together between runs; a drift under half the threshold (1% at
    2%) is not attributed to either side."""
    flat_ratio = cmp(1.0, 0.995, 1.005)
    drift, move = cmp(1.008, 1.004, 1.012), cmp(1.012, 1.008, 1.016)
    assert side_moved(drift, drift, flat_ratio, T) == "neither"
    assert side_moved(move, move, flat_ratio, T) == "both"


# -- a guard ----------------------------------------------------------------------------------


def pv(state: State, corroborated: bool = False, data: bool = True) -> PointVerdict:
    c = cmp(1.0, 0.99, 1.01) if data else None
    return PointVerdict(K, True, T, state, c, 0.5, 0.5, corroborated)


def summary(state: State, points: int = MIN_BROAD_POINTS) -> VariantSummary:
    return VariantSummary("thunder-prims", points, Interval(1.0, 0.99, 1.01), state=state)


def test_a_guard_without_data_says_so() -> None:
    assert guard_state([], []) == "no data"
    assert guard_state([pv("no data", data=False), pv("broken", data=False)], []) == "no data"
    # Points without data never decide, even with a state.
    assert guard_state([pv("regressed", True, data=False), pv("no change")], []) == "no change"


@pytest.mark.parametrize(
    ("points", "aggregates", "state"),
    [
        ([pv("regressed", True), pv("no change")], [], "regressed"),
        ([pv("regressed", False), pv("no change")], [], "no change"),  # set aside as noise
        ([pv("no change")], [summary("regressed")], "regressed"),  # a broad regression
        ([pv("unsure"), pv("unsure")], [], "no change"),  # unsure rows alone do not
        ([pv("no change")], [summary("unsure")], "unsure"),
        ([pv("improved", True)], [], "improved"),
        ([pv("improved", False)], [], "no change"),
        ([pv("no change")], [summary("improved")], "improved"),
        ([pv("improved", True), pv("regressed", True)], [], "regressed"),
        ([pv("improved", True)], [summary("unsure")], "unsure"),  # unsure beats improved
        ([pv("regressed", True)], [summary("unsure")], "regressed"),
        ([pv("no change")], [summary("improved"), summary("regressed")], "regressed"),
        ([pv("no change")], [summary("no change")], "no change"),
    ],
)
def test_guard_state(
    points: list[PointVerdict], aggregates: list[VariantSummary], state: State
) -> None:
    assert guard_state(points, aggregates) == state


def test_broken_state() -> None:
    assert broken_state([]) == "no change"
    assert broken_state([pv("still failing", data=False)]) == "still failing"
    assert broken_state([pv("still failing", data=False), pv("broken", data=False)]) == "broken"
    assert broken_state([pv("no change"), pv("regressed", True)]) == "no change"


# -- the headline ----------------------------------------------------------------------------


def guards(**states: State) -> list[Guard]:
    out = [Guard("broken", states.pop("broken", "no change"), "", ())]
    kinds: tuple[GuardKind, ...] = ("nvfuser", "thunder", "ratio")
    out += [Guard(k, states.pop(k, "no change"), "", ()) for k in kinds]
    assert not states
    return out


@pytest.mark.parametrize(
    ("states", "overall"),
    [
        ({}, "no change"),
        ({"broken": "broken", "ratio": "regressed", "nvfuser": "regressed"}, "broken"),
        ({"broken": "broken", "ratio": "no data", "thunder": "no data"}, "broken"),
        ({"broken": "still failing"}, "no change"),  # said, but no new alarm
        ({"ratio": "regressed", "nvfuser": "unsure"}, "regressed"),
        ({"thunder": "unsure", "ratio": "improved"}, "unsure"),
        ({"ratio": "improved"}, "improved"),
        ({"nvfuser": "improved", "thunder": "improved"}, "improved"),
        # A ratio that fell because nvFuser got slower is an nvFuser regression, not a gain.
        ({"ratio": "improved", "nvfuser": "regressed"}, "regressed"),
        ({"ratio": "regressed", "nvfuser": "improved"}, "regressed"),
        # Without the ratio nothing can be called fine (a head that stopped measuring Thunder).
        (
            {"ratio": "no data", "thunder": "no data", "nvfuser": "no change"},
            "inconclusive (no data)",
        ),
        ({"ratio": "no data", "thunder": "no data", "nvfuser": "regressed"}, "regressed"),
        (
            {"ratio": "no data", "thunder": "no data", "nvfuser": "no data"},
            "inconclusive (no data)",
        ),
        (
            {
                "broken": "still failing",
                "ratio": "no data",
                "thunder": "no data",
                "nvfuser": "no data",
            },
            "inconclusive (no data)",
        ),
    ],
)
def test_overall_state(states: dict[str, State], overall: str) -> None:
    assert overall_state(guards(**states)) == overall


def test_overall_state_without_guards_is_inconclusive() -> None:
    assert overall_state([]) == "inconclusive (no data)"
    assert overall_state([Guard("broken", "no change", "", ())]) == "inconclusive (no data)"
    assert overall_state([Guard("ratio", "improved", "", ())]) == "improved"


@pytest.mark.parametrize(
    "states",
    [
        dict(zip(("nvfuser", "thunder", "ratio"), c, strict=True))
        for c in [
            ("regressed", "improved", "improved"),
            ("improved", "regressed", "improved"),
            ("improved", "improved", "regressed"),
            ("unsure", "improved", "no data"),
            ("no data", "improved", "unsure"),
        ]
    ],
)
def test_improved_only_when_no_guard_is_worse(states: dict[str, State]) -> None:
    assert overall_state(guards(**states)) != "improved"


# -- end to end: the real H200 states ---------------------------------------------------------

H200 = DATA / "h200" / "results"
STATES = DATA / "h200-states" / "results"
STOCK: dict[str, Path] = STOCK_RUNS
BASE = "6c840f30"  # stock-3


@pytest.fixture(scope="module")
def base() -> CommitResults:
    return load_commit(STATES, BASE)


@pytest.fixture(scope="module")
def model() -> NoiseModel:
    """The A/A model from the stock runs other than the base."""
    return fit([load_commit(d, c) for c, d in STOCK.items() if c != BASE])


def verdict(base: CommitResults, model: NoiseModel, head: str) -> Verdict:
    return decide(base, load_commit(STATES, head), VerdictSettings(), model)


def states_of(v: Verdict) -> dict[str, State]:
    return {g.kind: g.state for g in v.guards}


def test_slow_nvfuser_is_an_nvfuser_regression_never_an_improvement(
    base: CommitResults, model: NoiseModel
) -> None:
    v = verdict(base, model, "93486aaf")  # slow-nvfuser-5: nvFuser's fusion 5% slower
    g = states_of(v)
    assert v.overall == "regressed"
    assert g["nvfuser"] == "regressed"
    assert g["broken"] == "no change" and g["thunder"] == "no change"
    assert g["ratio"] == "improved"  # the ratio fell, and that is not good news
    assert "nvFuser's fusion is slower" in v.reason
    ratio = v.guard("ratio")
    assert ratio is not None and "gained ground" not in ratio.summary


def test_slow_thunder_is_a_thunder_regression(base: CommitResults, model: NoiseModel) -> None:
    v = verdict(base, model, "8681cae2")  # slow-thunder-5
    g = states_of(v)
    assert v.overall == "regressed"
    assert g["thunder"] == "regressed"
    assert g["nvfuser"] == "no change" and g["broken"] == "no change"
    assert "Thunder's kernels are slower" in v.reason


def test_a_broken_head_is_broken(base: CommitResults, model: NoiseModel) -> None:
    v = verdict(base, model, "f888795e")
    assert v.overall == "broken"
    assert states_of(v)["broken"] == "broken"
    assert v.broken and not v.regressed


def test_an_aa_pair_is_no_change(base: CommitResults, model: NoiseModel) -> None:
    v = verdict(base, model, "022fefdd")  # stock-4: the same code in another process
    assert v.overall == "no change"
    assert set(states_of(v).values()) == {"no change"}
    assert v.model is not None and "A/A runs" in v.model


def test_a_kernel_point_does_not_corroborate_itself() -> None:
    """Absolute times of one size move together with the machine's state: a lone kernel point
    needs its variant's other points; its own interval is not enough."""
    clear = cmp(1.05, UP, 1.08)
    assert is_corroborated("regressed", clear, T, None)
    assert not is_corroborated("regressed", clear, T, None, alone=False)
    assert is_corroborated("regressed", clear, T, cmp(1.01, 1.001, 1.02), alone=False)


@pytest.mark.parametrize(
    ("ratio", "nvfuser", "thunder", "owned"),
    [
        ("improved", "no change", "improved", "improved"),  # Thunder's kernels are faster
        ("improved", "regressed", "no change", "improved"),  # worded as nvFuser's doing
        ("improved", "unsure", "no change", "improved"),
        ("improved", "no change", "no change", "unsure"),  # whose doing cannot be told
        ("regressed", "improved", "no change", "regressed"),
        ("no change", "no change", "no change", "no change"),
    ],
)
def test_a_lower_ratio_is_thunders_gain_only_when_thunder_is_faster(
    ratio: State, nvfuser: State, thunder: State, owned: State
) -> None:
    assert ratio_owner(ratio, nvfuser, thunder) == owned


def _kernel(variant: str, shape: str, state: State, corroborated: bool = False) -> PointVerdict:
    return PointVerdict(
        PointKey(variant, "float32", shape),
        True,
        T,
        state,
        cmp(1.05 if state == "regressed" else 1.0, 1.04, 1.06),
        corroborated=corroborated,
        kind="kernel",
    )


def test_a_lone_kernel_change_is_corroborated_by_the_paired_ratio() -> None:
    """nvFuser +5% at one size: its kernel row regressed alone, the contenders' ratios there
    fell: an nvFuser regression. The same kernel move with the ratios unmoved (the machine
    slowed that size for everyone) stays uncorroborated."""
    nv = _kernel("nvfuser", "16384x8192", "regressed")
    fell = _kernel("thunder-prims", "16384x8192", "improved")
    (got,) = corroborate_kernels([nv], [replace(fell, kind="ratio")])
    assert got.corroborated
    (still,) = corroborate_kernels([nv], [replace(fell, kind="ratio", state="no change")])
    assert not still.corroborated
    other_size = replace(fell, kind="ratio", key=PointKey("thunder-prims", "float32", "512x4096"))
    assert not corroborate_kernels([nv], [other_size])[0].corroborated
    th = _kernel("thunder-prims", "16384x8192", "regressed")
    up = replace(th, kind="ratio")
    assert corroborate_kernels([th], [up])[0].corroborated
    assert not corroborate_kernels([th], [replace(up, state="improved")])[0].corroborated

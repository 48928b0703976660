"""Each verdict rule at its boundary: the line is drawn exactly where the docs say.

Changing a `>=` to `>` (or `<` to `<=`) in bot/decide/rules.py turns one of these red: before,
such a mutation of the point rule left every test green.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from data_helpers import state_from_rounds

from bot.config import Threshold, VerdictSettings
from bot.decide.rules import (
    MIN_BROAD_POINTS,
    is_corroborated,
    overall_verdict,
    point_state,
    side_moved,
)
from bot.decide.stats import Comparison, Interval
from bot.decide.types import PointVerdict, State, VariantSummary
from bot.decide.verdict import decide
from bot.results.types import CommitResults, PointKey

T, ALPHA = 0.02, 0.01
UP, DOWN = 1 + T, 1 / (1 + T)
BELOW = math.nextafter(UP, 0.0)  # the largest float under the threshold


def _iv(estimate: float, low: float, high: float) -> Interval:
    return Interval(estimate, low, high)


# -- the point rule -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "p_up", "p_down", "state"),
    [
        (_iv(UP, 1.01, 1.03), 0.001, 1.0, "regressed"),  # exactly at the threshold: counts
        (_iv(BELOW, 1.01, 1.03), 0.001, 1.0, "no change"),  # a hair under it: does not
        (_iv(UP, 1.01, 1.03), ALPHA, 1.0, "no change"),  # p must be below alpha, not equal
        (_iv(UP, 1.01, 1.03), math.nextafter(ALPHA, 0.0), 1.0, "regressed"),
        (_iv(UP, 1.0, 1.03), 0.001, 1.0, "no change"),  # CI touching 1 is not above it
        (_iv(UP, math.nextafter(1.0, 2.0), 1.03), 0.001, 1.0, "regressed"),
        (_iv(UP, 1.01, 1.03), 1.0, 0.001, "no change"),  # the wrong tail's p does not count
        (_iv(DOWN, 0.97, 0.99), 1.0, 0.001, "improved"),  # the mirror, at its boundary
        (_iv(math.nextafter(DOWN, 2.0), 0.97, 0.99), 1.0, 0.001, "no change"),
        (_iv(DOWN, 0.97, 1.0), 1.0, 0.001, "no change"),
        (_iv(DOWN, 0.97, 0.99), 1.0, ALPHA, "no change"),
    ],
)
def test_point_rule_boundaries(change: Interval, p_up: float, p_down: float, state: State) -> None:
    assert point_state(change, p_up, p_down, T, ALPHA) == state


def _exact_pair(head_ratio: float, n: int = 25) -> tuple[CommitResults, CommitResults]:
    """One thunder-prims point whose median ratio is exactly 1.0 at base and `head_ratio` at
    head (rounds spread symmetrically by 1e-4 around the median), all else equal."""
    nv = [50e-6] * n
    spread = [k * 1e-4 for k in range(-(n // 2), n // 2 + 1)]
    point = ("bfloat16", "2048x8192")
    base = {point: {"nvfuser": nv, "thunder-prims": [50e-6 * (1 + e) for e in spread]}}
    head = {point: {"nvfuser": nv, "thunder-prims": [50e-6 * (head_ratio + e) for e in spread]}}
    return state_from_rounds("a" * 40, base), state_from_rounds("b" * 40, head)


def test_decide_draws_the_line_at_the_threshold_itself() -> None:
    """Through the whole verdict: a change of exactly +2% regresses at a 2% threshold and not
    at 2.01%."""
    base, head = _exact_pair(1.02)
    key = PointKey("thunder-prims", "bfloat16", "2048x8192")
    at = decide(base, head, VerdictSettings(effect=0.02))
    (point,) = at.points
    assert point.ratio is not None and point.ratio.change.estimate == 1.02
    assert (point.state, point.corroborated, at.overall) == ("regressed", False, "no change")
    above = VerdictSettings(effect=0.02, thresholds=(Threshold(key.label, 0.0201),))
    (point,) = decide(base, head, above).points
    assert point.state == "no change"


# -- corroboration --------------------------------------------------------------------------


def _cmp(estimate: float, low: float, high: float, centre: float | None = None) -> Comparison:
    """A comparison whose bootstrap replicates are spread from `low` to `high`."""
    reps = np.log(np.linspace(low, high, 401)) if centre is None else np.log(np.full(401, centre))
    return Comparison(
        _iv(1.0, 0.99, 1.01), _iv(estimate, low, high), _iv(estimate, low, high), 0.001, 1.0, reps
    )


K = PointKey("thunder-prims", "bfloat16", "512x4096")


def test_a_point_whose_own_interval_reaches_the_threshold_is_corroborated() -> None:
    assert is_corroborated(K, "regressed", {K: _cmp(1.05, UP, 1.08)}, T)
    assert not is_corroborated(K, "regressed", {K: _cmp(1.05, BELOW, 1.08)}, T)
    assert is_corroborated(K, "improved", {K: _cmp(0.95, 0.9, DOWN)}, T)
    assert not is_corroborated(K, "improved", {K: _cmp(0.95, 0.9, math.nextafter(DOWN, 2))}, T)
    assert not is_corroborated(K, "no change", {K: _cmp(1.05, 1.04, 1.08)}, T)


def test_other_sizes_of_the_same_variant_corroborate_as_a_group() -> None:
    lone = _cmp(1.025, 1.005, 1.04)  # regressed, but its own interval does not clear 2%
    up = {PointKey(K.variant, K.dtype, s): _cmp(1.01, 1.001, 1.02) for s in ("2048x8192", "8x8")}
    assert is_corroborated(K, "regressed", {K: lone, **up}, T)
    flat = {PointKey(K.variant, K.dtype, s): _cmp(1.0, 0.99, 1.01) for s in ("2048x8192", "8x8")}
    assert not is_corroborated(K, "regressed", {K: lone, **flat}, T)
    assert not is_corroborated(K, "regressed", {K: lone}, T)  # nothing else to ask
    # A group whose interval bottoms out at exactly 1 is not "significantly up".
    at_one = {PointKey(K.variant, K.dtype, "8x8"): _cmp(1.0, 1.0, 1.0, centre=1.0)}
    assert not is_corroborated(K, "regressed", {K: lone, **at_one}, T)
    assert not is_corroborated(K, "improved", {K: _cmp(0.975, 0.96, 0.995), **at_one}, T)


def test_other_variants_at_the_same_size_never_corroborate() -> None:
    """They share the point's nvFuser rounds: one noisy nvFuser set would vouch for itself."""
    lone = _cmp(1.025, 1.005, 1.04)
    same_size = {PointKey(v, K.dtype, K.shape): _cmp(1.2, 1.15, 1.25) for v in ("thunder-func",)}
    assert not is_corroborated(K, "regressed", {K: lone, **same_size}, T)


# -- the overall rule -----------------------------------------------------------------------


def _pv(state: State, corroborated: bool) -> PointVerdict:
    return PointVerdict(K, True, T, state, _cmp(1.0, 0.99, 1.01), 0.5, 0.5, corroborated)


def _summary(points: int, estimate: float, low: float, high: float) -> VariantSummary:
    return VariantSummary("thunder-prims", points, _iv(estimate, low, high))


def test_a_broad_move_decides_from_three_points_not_two() -> None:
    quiet = [_pv("no change", False)] * MIN_BROAD_POINTS
    broad = _summary(MIN_BROAD_POINTS, UP, 1.005, 1.03)
    assert overall_verdict(quiet, [broad], T)[0] == "regressed"
    two = _summary(MIN_BROAD_POINTS - 1, UP, 1.005, 1.03)
    assert overall_verdict(quiet, [two], T)[0] == "no change"
    under = _summary(MIN_BROAD_POINTS, BELOW, 1.005, 1.03)
    assert overall_verdict(quiet, [under], T)[0] == "no change"
    touching = _summary(MIN_BROAD_POINTS, UP, 1.0, 1.03)
    assert overall_verdict(quiet, [touching], T)[0] == "no change"
    down = _summary(MIN_BROAD_POINTS, DOWN, 0.97, 0.995)
    assert overall_verdict(quiet, [down], T)[0] == "improved"


def test_an_uncorroborated_point_is_set_aside_and_said_so() -> None:
    overall, reason = overall_verdict([_pv("regressed", False), _pv("no change", False)], [], T)
    assert overall == "no change"
    assert reason == (
        "no gating point moved by its threshold (2 points compared); "
        "1 uncorroborated point(s) set aside as noise"
    )
    overall, reason = overall_verdict([_pv("regressed", True)], [], T)
    assert (overall, reason) == ("regressed", "1 point(s) significantly slower relative to nvFuser")


def test_a_regression_outweighs_an_improvement_and_no_data_is_inconclusive() -> None:
    mixed = [_pv("improved", True), _pv("regressed", True)]
    assert overall_verdict(mixed, [], T)[0] == "regressed"
    assert overall_verdict([], [], T) == (
        "inconclusive (no data)",
        "no gating point has data at both commits",
    )


# -- which side moved -----------------------------------------------------------------------


def test_the_side_that_carries_the_change_is_named() -> None:
    ratio = _cmp(1.10, 1.08, 1.12)
    slower, steady = _cmp(1.10, 1.08, 1.12), _cmp(1.0, 0.99, 1.01)
    assert side_moved(slower, steady, ratio, T) == "thunder"
    assert side_moved(steady, _cmp(0.91, 0.9, 0.92), ratio, T) == "nvfuser"
    assert side_moved(slower, _cmp(0.95, 0.94, 0.96), ratio, T) == "both"
    assert side_moved(steady, steady, ratio, T) == "neither"
    assert side_moved(None, steady, ratio, T) == "unknown"


def test_a_side_needs_half_the_ratio_change_to_count_as_moved() -> None:
    """Half, in log terms: sqrt(1.10) for a +10% ratio. (No float has a log exactly equal to
    the bar, so `>=` and `>` cannot be told apart there; just above and below can.)"""
    ratio = _cmp(1.10, 1.08, 1.12)
    half = math.sqrt(1.10)
    steady = _cmp(1.0, 0.99, 1.01)
    assert side_moved(_cmp(half * 1.0001, 1.03, 1.07), steady, ratio, T) == "thunder"
    assert side_moved(_cmp(half / 1.0001, 1.03, 1.07), steady, ratio, T) == "neither"
    unsure = _cmp(1.10, 0.99, 1.2)  # a big move whose interval holds 1 is not attributed
    assert side_moved(unsure, steady, ratio, T) == "neither"


def test_common_drift_under_half_the_threshold_moves_no_side() -> None:
    """Absolute times drift together between runs; the ratio cancels that, and a drift under
    half the threshold (1% at 2%) is not attributed to either side."""
    flat_ratio = _cmp(1.0, 0.995, 1.005)
    drift, move = _cmp(1.008, 1.004, 1.012), _cmp(1.012, 1.008, 1.016)
    assert side_moved(drift, drift, flat_ratio, T) == "neither"
    assert side_moved(move, move, flat_ratio, T) == "both"

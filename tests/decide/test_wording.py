"""Each guard's sentence: the state in words, percentages formatted, the worst point and, for a
regression, the bandwidth drop there."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from bot.config import VerdictSettings
from bot.decide.stats import Between, Comparison, Interval, RunStat, compare
from bot.decide.types import Guard, GuardKind, PointVerdict, State, VariantSummary
from bot.decide.wording import guard_summary, interval_words, signed
from bot.results.types import PointKey

S = VerdictSettings(effect=0.02)
BIG, SMALL = "16384x8192", "512x4096"


def change(estimate: float, low: float, high: float) -> Comparison:
    """A one-run-a-side comparison whose change interval is the one given."""
    c = compare([RunStat(0.0, 0.0, 20)], [RunStat(math.log(estimate), 0.0, 20)], Between())
    return Comparison(
        c.base,
        c.head,
        Interval(estimate, low, high),
        0.001,
        0.999,
        c.log_change,
        0.01,
        10.0,
        0.0,
        (1, 1),
    )


def point(
    variant: str,
    shape: str,
    state: State,
    iv: tuple[float, float, float] | None,
    corroborated: bool = False,
    bandwidth: tuple[float | None, float | None] = (None, None),
) -> PointVerdict:
    return PointVerdict(
        PointKey(variant, "bfloat16", shape),
        True,
        0.02,
        state,
        change(*iv) if iv else None,
        corroborated=corroborated,
        bandwidth_pct=bandwidth,
        kind="kernel",
    )


def mean(
    variant: str, iv: tuple[float, float, float], state: State, c: Comparison | None = None
) -> VariantSummary:
    return VariantSummary(variant, 9, Interval(*iv), "kernel", c, None, state)


def guard(
    kind: GuardKind,
    state: State,
    points: Sequence[PointVerdict],
    aggregates: Sequence[VariantSummary] = (),
) -> Guard:
    return Guard(kind, state, "", tuple(points), tuple(aggregates))


def test_percentages() -> None:
    assert signed(1.0234) == "+2.3%"
    assert signed(0.95) == "-5.0%"
    assert signed(1.0) == "+0.0%"
    assert signed(1.5) == "+50.0%"
    # From 2x on a factor, where "+1045.6%" would make a reader count digits.
    assert signed(2.0) == "2.0x"
    assert signed(11.456) == "11.5x"
    assert interval_words(Interval(11.456, 11.2, 11.7)) == "11.5x [11.2x, 11.7x]"
    assert interval_words(Interval(1.048, 1.028, 1.068)) == "+4.8% [+2.8%, +6.8%]"
    assert interval_words(Interval(0.97, 0.955, 0.985)) == "-3.0% [-4.5%, -1.5%]"


def test_a_regressed_guard_names_the_points_the_mean_the_worst_point_and_the_bandwidth() -> None:
    g = guard(
        "thunder",
        "regressed",
        [
            point("thunder-prims", BIG, "regressed", (1.052, 1.031, 1.074), True, (80.0, 76.0)),
            point("thunder-prims", SMALL, "no change", (1.004, 0.99, 1.02), False, (19.0, 19.0)),
        ],
        [
            mean("thunder-prims", (1.048, 1.028, 1.068), "regressed"),
            mean("thunder-func", (1.002, 0.99, 1.014), "no change"),
        ],
    )
    assert guard_summary(g, S) == (
        "Thunder's kernels are slower (1 point(s)): thunder-prims geometric mean "
        "+4.8% [+2.8%, +6.8%] over 9 point(s); worst point thunder-prims bfloat16 16384x8192 "
        "+5.2% [+3.1%, +7.4%]; % of peak bandwidth there 80% → 76% (-4 percentage points)"
    )


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("ratio", "Thunder lost ground to nvFuser"),
        ("nvfuser", "nvFuser's fusion is slower"),
        ("thunder", "Thunder's kernels are slower"),
    ],
)
def test_each_kind_of_regression_in_words(kind: GuardKind, words: str) -> None:
    g = guard(
        kind,
        "regressed",
        [point("nvfuser", BIG, "regressed", (1.05, 1.03, 1.07), True, (82.0, 78.0))],
        [mean("nvfuser", (1.048, 1.035, 1.062), "regressed")],
    )
    text = guard_summary(g, S)
    assert text.startswith(f"{words} (1 point(s)): ")
    assert "nvfuser geometric mean +4.8% [+3.5%, +6.2%] over 9 point(s)" in text
    assert "82% → 78% (-4 percentage points)" in text


def test_a_broad_regression_without_a_flagged_point() -> None:
    g = guard(
        "thunder",
        "regressed",
        [point("thunder-func", BIG, "no change", (1.03, 1.01, 1.05))],
        [
            mean("thunder-func", (1.029, 1.011, 1.047), "regressed"),
            mean("thunder-prims", (1.01, 0.99, 1.03), "no change"),
        ],
    )
    text = guard_summary(g, S)
    assert text.startswith("Thunder's kernels are slower: thunder-func geometric mean +2.9%")
    assert "thunder-prims" not in text  # only the means that regressed
    assert "point(s)):" not in text
    assert "% of peak bandwidth" not in text  # neither side has it


def test_a_regression_flagged_by_a_point_shows_every_mean() -> None:
    g = guard(
        "thunder",
        "regressed",
        [point("thunder-func", BIG, "regressed", (1.06, 1.03, 1.09), True)],
        [
            mean("thunder-func", (1.01, 0.99, 1.03), "no change"),
            mean("thunder-prims", (1.0, 0.98, 1.02), "no change"),
        ],
    )
    text = guard_summary(g, S)
    assert "thunder-func geometric mean +1.0%" in text
    assert "thunder-prims geometric mean +0.0%" in text


@pytest.mark.parametrize("bandwidth", [(None, 76.0), (80.0, None), (None, None)])
def test_the_bandwidth_needs_both_sides(bandwidth: tuple[float | None, float | None]) -> None:
    g = guard(
        "nvfuser",
        "regressed",
        [point("nvfuser", BIG, "regressed", (1.05, 1.03, 1.07), True, bandwidth)],
        [mean("nvfuser", (1.05, 1.03, 1.07), "regressed")],
    )
    assert "bandwidth" not in guard_summary(g, S)


def test_the_worst_point_of_a_regression_is_the_largest_change() -> None:
    g = guard(
        "thunder",
        "regressed",
        [
            point("thunder-prims", SMALL, "regressed", (1.03, 1.021, 1.04), True, (19.0, 18.0)),
            point("thunder-func", BIG, "unsure", (1.09, 0.99, 1.2), False, (80.0, 73.0)),
            point("thunder-func", SMALL, "no data", None),
        ],
        [mean("thunder-func", (1.03, 1.01, 1.05), "regressed")],
    )
    text = guard_summary(g, S)
    assert "worst point thunder-func bfloat16 16384x8192 +9.0% [-1.0%, +20.0%]" in text
    assert "80% → 73% (-7 percentage points)" in text


def test_an_improved_guard() -> None:
    g = guard(
        "nvfuser",
        "improved",
        [
            point("nvfuser", BIG, "improved", (0.95, 0.93, 0.97), True, (78.0, 82.0)),
            point("nvfuser", SMALL, "improved", (0.97, 0.96, 0.98), True, (18.0, 19.0)),
        ],
        [mean("nvfuser", (0.96, 0.95, 0.97), "improved")],
    )
    text = guard_summary(g, S)
    assert text == (
        "nvFuser's fusion is faster: nvfuser geometric mean -4.0% [-5.0%, -3.0%] over 9 "
        "point(s); worst point nvfuser bfloat16 16384x8192 -5.0% [-7.0%, -3.0%]"
    )  # the largest drop, and no bandwidth (that is said of regressions)
    ratio = guard("ratio", "improved", g.points, g.aggregates)
    assert guard_summary(ratio, S).startswith("Thunder gained ground on nvFuser: ")
    thunder = guard("thunder", "improved", g.points, g.aggregates)
    assert guard_summary(thunder, S).startswith("Thunder's kernels are faster: ")


def test_a_lower_ratio_from_a_slower_nvfuser_is_not_worded_as_a_gain() -> None:
    g = guard(
        "ratio",
        "improved",
        [point("thunder-prims", BIG, "improved", (0.95, 0.93, 0.97), True)],
        [mean("thunder-prims", (0.955, 0.94, 0.97), "improved")],
    )
    text = guard_summary(g, S, nvfuser_slower=True)
    assert text.startswith("lower only because nvFuser's fusion got slower (not a gain): ")
    assert "gained ground" not in text
    assert "thunder-prims geometric mean -4.5% [-6.0%, -3.0%]" in text
    assert guard_summary(g, S).startswith("Thunder gained ground on nvFuser: ")
    # Only the ratio's wording depends on nvFuser: a guard on kernel times says what it saw.
    thunder = guard("thunder", "improved", g.points, g.aggregates)
    assert guard_summary(thunder, S, nvfuser_slower=True).startswith(
        "Thunder's kernels are faster: "
    )


def _settles(change: float, tau2: float = 1e-4) -> Comparison:
    """tau^2 known exactly, one run a side, no within-run noise."""
    return compare(
        [RunStat(0.0, 0.0, 20)], [RunStat(math.log(change), 0.0, 20)], Between(tau2, 1e12)
    )


def test_an_unsure_guard_says_how_many_more_runs_would_settle_it() -> None:
    """A geometric mean settles on its own rule: at least broad_effect (1%), p below alpha
    over the family's two means (0.005). +3% with tau^2 1e-4: at 3 repeats a side t = 3.62 on
    6 df (p 0.0055), at 4 t = 4.18 on 7 df (p 0.002): 4 in all, 3 more."""
    c = _settles(1.03)
    assert c.runs_to_settle(S.broad_effect, S.alpha / 2) == 4
    g = guard(
        "ratio",
        "unsure",
        [point("thunder-prims", BIG, "unsure", (1.03, 1.0, 1.06))],
        [
            mean("thunder-prims", (1.03, 1.005, 1.056), "unsure", c),
            mean("thunder-func", (1.0, 0.99, 1.01), "no change"),
        ],
    )
    assert guard_summary(g, S) == (
        "a change near the 2% effect, not established: thunder-prims geometric mean "
        "+3.0% [+0.5%, +5.6%] over 9 point(s); about 3 more run(s) a side (4 in all) would "
        "settle it"
    )
    # Several unsure means: the runs that settle all of them (the most).
    both = guard(
        "ratio",
        "unsure",
        g.points,
        [
            mean("thunder-prims", (1.03, 1.005, 1.056), "unsure", c),
            mean("thunder-func", (1.04, 1.01, 1.07), "unsure", _settles(1.04)),
        ],
    )
    assert _settles(1.04).runs_to_settle(S.broad_effect, S.alpha / 2) == 3
    assert guard_summary(both, S).endswith(
        "; about 3 more run(s) a side (4 in all) would settle it"
    )
    wider = VerdictSettings(effect=0.05)
    assert "near the 5% effect" in guard_summary(g, wider)


def test_an_unsure_guard_out_of_reach_says_more_runs_may_not_settle_it() -> None:
    noisy = _settles(1.02, tau2=1e-3)  # tau 3.2%: ten runs a side cannot establish +2%
    assert noisy.runs_to_settle(S.broad_effect, S.alpha / 2) is None
    g = guard(
        "ratio",
        "unsure",
        [point("thunder-prims", BIG, "no change", (1.02, 0.99, 1.05))],
        [
            mean("thunder-prims", (1.02, 0.99, 1.05), "unsure", noisy),
            mean("thunder-func", (1.03, 1.005, 1.056), "unsure", _settles(1.03)),
        ],
    )
    text = guard_summary(g, S)
    assert "thunder-prims geometric mean +2.0% [-1.0%, +5.0%]" in text
    assert "thunder-func geometric mean +3.0%" in text
    assert text.endswith("; it sits on the threshold: more runs a side may not settle it")
    assert "would settle it" not in text


def test_no_change_and_no_data() -> None:
    quiet = guard(
        "thunder",
        "no change",
        [point("thunder-prims", BIG, "no change", (1.004, 0.99, 1.02))],
        [
            mean("thunder-prims", (1.002, 0.99, 1.014), "no change"),
            mean("thunder-func", (0.998, 0.985, 1.011), "no change"),
        ],
    )
    assert guard_summary(quiet, S) == (
        "no change: thunder-prims geometric mean +0.2% [-1.0%, +1.4%] over 9 point(s); "
        "thunder-func geometric mean -0.2% [-1.5%, +1.1%] over 9 point(s)"
    )
    bare = guard("thunder", "no change", [point("thunder-prims", BIG, "no change", None)])
    assert guard_summary(bare, S) == "no change"
    empty = guard("nvfuser", "no data", [point("nvfuser", BIG, "no data", None)])
    assert guard_summary(empty, S) == "no point with data at both commits"
    assert guard_summary(guard("ratio", "no data", []), S) == "no point with data at both commits"

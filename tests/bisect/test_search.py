"""The search alone (pure): every one-step timeline is solved within its bound, and what is
not one step, not decided or not bad stops it with a reason."""

from __future__ import annotations

import math

import pytest

from bot.bisect.classify import Class
from bot.bisect.search import Found, Measure, Stuck, most_measurements, next_step


def _walk(n: int, first_bad: int, max_runs: int = 3) -> tuple[object, int]:
    """Bisect builds 0..n-1 whose builds from ``first_bad`` on are bad."""
    order = [f"b{i}" for i in range(n)]
    classes: dict[str, Class] = {}
    runs: dict[str, int] = {}
    for _ in range(3 * n):
        step = next_step(order, classes, runs, max_runs)
        if not isinstance(step, Measure):
            return step, sum(runs.values())
        i = order.index(step.build)
        runs[step.build] = runs.get(step.build, 0) + 1
        if i:
            classes[step.build] = "bad" if i >= first_bad else "good"
    raise AssertionError("the search did not end")


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9, 17, 33, 100])
def test_every_one_step_timeline_is_found_within_its_bound(n: int) -> None:
    for first_bad in range(1, n):
        step, used = _walk(n, first_bad)
        assert step == Found(f"b{first_bad - 1}", f"b{first_bad}")
        assert used <= most_measurements(n) == min(n, 2 + math.ceil(math.log2(n - 1)))


def test_the_ends_are_measured_first() -> None:
    order = ["g", "x", "y", "b"]
    first, second = next_step(order, {}, {}, 3), next_step(order, {}, {"g": 1}, 3)
    assert isinstance(first, Measure) and first.build == "g" and "reference" in first.why
    assert isinstance(second, Measure) and second.build == "b"


def test_an_unsure_build_is_measured_again_then_given_up() -> None:
    order = ["g", "x", "b"]
    step = next_step(order, {"b": "bad", "x": "unsure"}, {"g": 1, "b": 1, "x": 1}, 2)
    assert isinstance(step, Measure) and step.build == "x" and "run 2 of at most 2" in step.why
    step = next_step(order, {"b": "bad", "x": "unsure"}, {"g": 1, "b": 1, "x": 2}, 2)
    assert isinstance(step, Stuck) and step.build == "x" and "still unsure after 2 runs" in step.why


def test_an_unsure_known_bad_build_is_measured_again_first() -> None:
    step = next_step(["g", "x", "b"], {"b": "unsure"}, {"g": 1, "b": 1}, 3)
    assert isinstance(step, Measure) and step.build == "b"


@pytest.mark.parametrize(
    ("cls", "words"),
    [("broken", "another change"), ("other", "another change"), ("no data", "no data")],
)
def test_a_build_that_is_neither_good_nor_bad_stops_it(cls: Class, words: str) -> None:
    step = next_step(["g", "x", "y", "b"], {"b": "bad", "x": cls}, {"g": 1, "b": 1, "x": 1}, 3)
    assert isinstance(step, Stuck) and step.build == "x" and words in step.why
    assert (step.last_good, step.first_bad) == ("g", "b")


def test_a_known_bad_build_that_is_good_has_no_step() -> None:
    step = next_step(["g", "x", "b"], {"b": "good"}, {"g": 1, "b": 1}, 3)
    assert isinstance(step, Stuck) and "no step to find" in step.why


def test_a_good_build_after_a_bad_one_is_a_contradiction() -> None:
    order = ["g", "x", "y", "z", "b"]
    step = next_step(
        order, {"b": "bad", "x": "bad", "z": "good"}, {"g": 1, "b": 1, "x": 1, "z": 1}, 3
    )
    assert isinstance(step, Stuck) and "z is good but comes after x, which is bad" in step.why


def test_builds_measured_in_another_list_are_used_as_they_are() -> None:
    """The state of an earlier bisect knows "y" is good: the bracket starts there."""
    order = ["g", "x", "y", "z", "b"]
    step = next_step(order, {"b": "bad", "y": "good", "q": "bad"}, {"g": 1, "b": 1, "y": 1}, 3)
    assert isinstance(step, Measure) and step.build == "z"

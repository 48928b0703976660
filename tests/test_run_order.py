"""The test files' running order (tests/run_order.py), with orders written out by hand."""

from __future__ import annotations

from run_order import file_order

FILES = ["a.py", "b.py", "b.py", "c.py", "c.py", "c.py", "d.py"]


def _none(file: str) -> bool:
    return False


def test_the_longest_file_last_time_goes_first() -> None:
    seconds = {"a.py": 9.0, "b.py": 0.5, "c.py": 3.0, "d.py": 3.0}
    assert file_order(FILES, seconds, _none) == ["a.py", "c.py", "d.py", "b.py"]


def test_a_file_with_no_record_goes_first_when_others_have_one() -> None:
    seconds = {"a.py": 9.0, "b.py": 0.5, "c.py": 3.0}
    assert file_order(FILES, seconds, _none) == ["d.py", "a.py", "c.py", "b.py"]


def test_with_no_record_at_all_the_file_with_most_tests_goes_first() -> None:
    assert file_order(FILES, {}, _none) == ["c.py", "b.py", "a.py", "d.py"]


def test_files_that_wait_for_a_background_build_go_last() -> None:
    seconds = {"a.py": 9.0, "b.py": 0.5, "c.py": 3.0, "d.py": 3.0}
    waits = {"a.py", "d.py"}.__contains__
    assert file_order(FILES, seconds, waits) == ["c.py", "b.py", "a.py", "d.py"]

"""The test tree's own shape, which pytest only complains about by chance.

tests/ has no __init__.py files, so pytest imports each test file under its basename
(rootdir-relative "prepend" import mode): two files named alike in different folders collide
only when pytest-xdist puts both on one worker, which is how CI first failed on
tests/alert/test_rules.py and tests/decide/test_rules.py while every local run passed.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_files_share_a_basename() -> None:
    by_name: defaultdict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if path.name != "__init__.py" and "__pycache__" not in path.parts:
            by_name[path.name].append(str(path.relative_to(TESTS)))
    clashes = {name: sorted(paths) for name, paths in by_name.items() if len(paths) > 1}
    assert clashes == {}

"""The mutation list (tests/mutants.py) still fits the code: each edit matches exactly one place,
so ``python -m tests.mutants`` breaks what it says it breaks, and a copy of the project holds
what a test run needs."""

from __future__ import annotations

from pathlib import Path

import pytest
from mutants import MUTATIONS, REPO_ROOT, _project_files, red_tests


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_each_mutation_changes_one_place(mutation: object, tmp_path: Path) -> None:
    from mutants import Mutation

    assert isinstance(mutation, Mutation)
    source = REPO_ROOT / mutation.path
    target = tmp_path / mutation.path
    target.parent.mkdir(parents=True)
    target.write_bytes(source.read_bytes())
    mutation.apply(tmp_path)
    after = target.read_text(encoding="utf-8")
    assert after != source.read_text(encoding="utf-8")
    assert after.count(mutation.new) >= 1


def test_names_are_unique() -> None:
    names = [m.name for m in MUTATIONS]
    assert len(names) == len(set(names))


def test_the_copy_holds_the_code_and_the_tests_but_no_build_output() -> None:
    files = set(_project_files(REPO_ROOT))
    assert {"bot/decide/rules.py", "tests/conftest.py", "pyproject.toml"} <= files
    assert not any("__pycache__" in f or f.startswith(".git/") for f in files)


def test_red_tests_reads_failures_and_errors(tmp_path: Path) -> None:
    report = tmp_path / "r.xml"
    report.write_text(
        '<testsuites><testsuite><testcase classname="tests.a.test_x" name="test_ok"/>'
        '<testcase classname="tests.a.test_x" name="test_bad"><failure/></testcase>'
        '<testcase classname="tests.b" name="test_err[1]"><error/></testcase>'
        "</testsuite></testsuites>"
    )
    assert red_tests(report) == ["tests/a/test_x.py::test_bad", "tests/b.py::test_err[1]"]

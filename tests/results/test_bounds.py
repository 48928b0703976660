"""Bounded, validated input: size caps that fail fast, and commit hashes that must be full SHAs
before they are used in a path, a comment or a key."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from data_helpers import (
    MACHINE,
    SyntheticResults,
    damaged_copy,
    edit_json,
    row,
    set_column,
    synthetic,
)

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.results import asv_file, limits
from bot.results.locate import find_commit_files, list_commits, load_commit, load_pair
from bot.results.names import DTYPES, VARIANTS
from bot.results.types import BENCH_KERNEL, BENCH_RATIO, BadInput

__all__ = ["synthetic"]
MIB = 1024 * 1024


def _copy(synthetic: SyntheticResults, tmp_path: Path) -> SyntheticResults:
    return damaged_copy(synthetic, tmp_path)


@contextlib.contextmanager
def never_opened(path: Path) -> Iterator[None]:
    """Fail the test if `path` is opened at all while the body runs: a bound checked on the
    file's size refuses it before a byte is read (reading and parsing 200 MB takes seconds,
    and used to be done)."""
    real_open = Path.open

    def watched(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == path:
            raise AssertionError(f"{path.name} was opened before its size was checked")
        return real_open(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "open", watched)
        yield


def test_a_results_file_padded_to_200_mb_fails_at_once_naming_file_and_limit(
    synthetic: SyntheticResults, tmp_path: Path
) -> None:
    synth = _copy(synthetic, tmp_path)
    path = synth.result_file("same")
    with path.open("ab") as handle:
        handle.truncate(200 * MIB)  # padded (sparse: the disk holds no 200 MB)
    with never_opened(path), pytest.raises(BadInput) as refused:
        load_commit(synth.results_dir, synth.commits["same"])
    assert f"{path.name}: results file is 200.0 MiB, over the limit of 32 MiB" in str(refused.value)


def test_an_oversized_provenance_record_fails_at_once(
    synthetic: SyntheticResults, tmp_path: Path
) -> None:
    synth = _copy(synthetic, tmp_path)
    sha = synth.commits["same"]
    path = synth.provenance_file("same")
    with path.open("ab") as handle:
        handle.truncate(limits.MAX_PROVENANCE_BYTES + 1)
    with never_opened(path), pytest.raises(BadInput) as refused:
        load_commit(synth.results_dir, sha)
    assert "provenance record is 64.0 MiB, over the limit of 64 MiB" in str(refused.value)


def test_a_million_samples_in_a_point_is_bad_input_not_a_memory_error(
    synthetic: SyntheticResults, tmp_path: Path
) -> None:
    synth = _copy(synthetic, tmp_path)
    million = [1.0e-5] * 1_000_000

    def edit(data: dict[str, Any]) -> None:
        samples = row(data, BENCH_RATIO)["samples"]
        samples[0] = million
        set_column(data, BENCH_RATIO, "samples", samples)

    edit_json(synth.result_file("same"), edit)
    with pytest.raises(BadInput, match=r"track_ratio at variant=.*: 1000000 samples, over the "
                       "limit of 1000 a point"):  # fmt: skip
        load_pair(synth.results_dir, synth.commits["base"], synth.commits["same"])


def test_the_samples_limit_is_inclusive(synthetic: SyntheticResults, tmp_path: Path) -> None:
    """Exactly MAX_SAMPLES samples are read; one more is refused (the bound is not off by one)."""
    synth = _copy(synthetic, tmp_path)
    for count, ok in ((limits.MAX_SAMPLES, True), (limits.MAX_SAMPLES + 1, False)):

        def edit(data: dict[str, Any], count: int = count) -> None:
            for bench in (BENCH_RATIO, BENCH_KERNEL):  # every point, so rounds stay paired
                samples = [
                    None if s is None else [1.0e-5] * count for s in row(data, bench)["samples"]
                ]
                set_column(data, bench, "samples", samples)

        edit_json(synth.result_file("same"), edit)
        if ok:
            got = load_commit(synth.results_dir, synth.commits["same"])
            assert max(len(p.ratio or ()) for p in got.points.values()) == count
        else:
            with pytest.raises(BadInput, match="over the limit of 1000"):
                load_commit(synth.results_dir, synth.commits["same"])


def test_too_many_parameter_combinations_fail_before_they_are_built(
    synthetic: SyntheticResults, tmp_path: Path
) -> None:
    synth = _copy(synthetic, tmp_path)

    def edit(data: dict[str, Any]) -> None:
        # Every name a known one (bot/results/names.py): 5 variants x 3 dtypes x 66,667 shapes.
        shapes = [repr(f"{i + 1}x8") for i in range(66_667)]
        names = [[repr(v) for v in VARIANTS], [repr(d) for d in DTYPES], shapes]
        set_column(data, BENCH_RATIO, "params", names)

    edit_json(synth.result_file("same"), edit)

    def no_product(*args: object) -> object:
        raise AssertionError("the combinations were built before they were counted")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(asv_file.itertools, "product", no_product)
        with pytest.raises(BadInput, match="1000005 parameter combinations, over the limit"):
            load_commit(synth.results_dir, synth.commits["same"])


def test_a_fifo_is_refused_without_blocking(synthetic: SyntheticResults, tmp_path: Path) -> None:
    synth = _copy(synthetic, tmp_path)
    path = synth.result_file("same")
    path.unlink()
    os.mkfifo(path)  # opening it for reading would wait for a writer forever
    with never_opened(path), pytest.raises(BadInput, match="not a regular file"):
        load_commit(synth.results_dir, synth.commits["same"][:8])


def test_too_many_files_in_a_machine_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "MAX_FILES", 40)  # the rule, without creating 10,001 files
    machine = tmp_path / "results" / "gpu"
    machine.mkdir(parents=True)
    (machine / "machine.json").write_text("{}")
    for i in range(39):
        (machine / f"{i:08x}-env.json").touch()
    with pytest.raises(BadInput, match="truncated JSON"):
        list_commits(tmp_path / "results")  # 40 files with machine.json: listed, then read
    (machine / "ffffffff-env.json").touch()
    with pytest.raises(BadInput, match="more than 40 results files"):
        list_commits(tmp_path / "results")


@pytest.mark.parametrize(
    "suffix", ["/../", "@nvidia", "<img src=x onerror=alert(1)>", "0" * 31, "0" * 33, ""]
)
def test_a_commit_hash_from_a_file_must_be_a_full_sha_before_any_use(
    synthetic: SyntheticResults, tmp_path: Path, suffix: str
) -> None:
    """The hash inside a results file, found by its 8-digit file name prefix (which the hostile
    value keeps, as in the reported `9dc51696/../`), is refused before it can name a
    provenance file (a path), reach the comment or make an issue key."""
    synth = _copy(synthetic, tmp_path)
    path = synth.result_file("same")
    prefix = synth.prefix("same")
    edit_json(path, lambda d: d.update(commit_hash=prefix + suffix))
    with pytest.raises(BadInput, match="is not a full 40-hex commit hash") as caught:
        find_commit_files(synth.results_dir, prefix)  # the first use: choosing the file
    assert path.name in str(caught.value)
    with pytest.raises(BadInput, match="is not a full 40-hex commit hash"):
        load_commit(synth.results_dir, prefix)
    with pytest.raises(BadInput, match="is not a full 40-hex commit hash"):
        list_commits(synth.results_dir)


def test_the_hostile_hash_never_reaches_the_report(
    synthetic: SyntheticResults, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synth = _copy(synthetic, tmp_path)
    path = synth.result_file("same")
    prefix = synth.prefix("same")
    outside = tmp_path / "outside.provenance.jsonl"
    outside.write_text('{"schema": "rmsnorm-bwd-provenance/1", "secret": "@nvidia"}\n')
    edit_json(path, lambda d: d.update(commit_hash=f"{prefix}/../../outside"))
    argv = ["report", "--results", str(synth.results_dir), "--base", synth.commits["base"]]
    assert cli.main([*argv, "--head", prefix], env={}) == ExitCode.BAD_INPUT
    captured = capsys.readouterr()
    assert captured.out == "" and "@nvidia" not in captured.err
    assert "is not a full 40-hex commit hash" in captured.err


def test_a_provenance_record_for_a_hostile_commit_is_refused(
    synthetic: SyntheticResults, tmp_path: Path
) -> None:
    synth = _copy(synthetic, tmp_path)
    sha = synth.commits["same"]
    path = synth.provenance_file("same")
    path.write_text('{"schema": "rmsnorm-bwd-provenance/1", "commit": "<b>x</b>"}\n')
    with pytest.raises(BadInput, match=r"line 1: commit '<b>x</b>' is not a full 40-hex"):
        load_commit(synth.results_dir, sha)


def test_results_that_point_at_a_file_or_a_machine_folder_say_so(
    synthetic: SyntheticResults,
) -> None:
    machine = synthetic.results_dir / MACHINE
    with pytest.raises(BadInput, match="is a file, not an asv results directory"):
        load_commit(synthetic.result_file("same"), "abcdef")
    with pytest.raises(
        BadInput, match=r"is one machine.s folder .*; pass the results directory above it"
    ):
        load_commit(machine, "abcdef")


def test_an_unknown_sha_lists_the_commits_that_are_there(synthetic: SyntheticResults) -> None:
    with pytest.raises(BadInput) as caught:
        load_commit(synthetic.results_dir, "abcdef12")
    message = str(caught.value)
    assert "no results for commit abcdef12; commits there: " in message
    for sha in synthetic.commits.values():
        assert f"{sha[:8]} ({MACHINE}" in message


@pytest.mark.parametrize("value", [1234, None, ["9dc51696"]])
def test_a_commit_hash_that_is_not_a_string_is_refused(
    synthetic: SyntheticResults, tmp_path: Path, value: object
) -> None:
    synth = _copy(synthetic, tmp_path)
    edit_json(synth.result_file("same"), lambda d: d.update(commit_hash=value))
    with pytest.raises(BadInput, match=r"commit_hash .* is not a full 40-hex commit hash"):
        list_commits(synth.results_dir)


def test_a_full_sha_lookup_still_checks_the_files_hash_before_use(
    synthetic: SyntheticResults, tmp_path: Path
) -> None:
    """With a full SHA the file is found by its name alone; the hash inside is checked when the
    file is read, before the provenance path is built from anything."""
    synth = _copy(synthetic, tmp_path)
    sha = synth.commits["same"]
    edit_json(synth.result_file("same"), lambda d: d.update(commit_hash=sha[:8] + "/../"))
    with pytest.raises(BadInput, match="is not a full 40-hex commit hash"):
        load_commit(synth.results_dir, sha)

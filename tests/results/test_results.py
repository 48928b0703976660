"""The results reader on files written by real asv, intact and damaged."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from data_helpers import (
    DTYPES,
    MACHINE,
    ROUNDS,
    SHAPES,
    SyntheticResults,
    damaged_copy,
    edit_json,
    row,
    set_column,
    synthetic,
)
from paths import DATA, REPO_ROOT

from bot.results.locate import list_commits, load_commit, load_pair
from bot.results.types import (
    BENCH_BANDWIDTH,
    BENCH_KERNEL,
    BENCH_RATIO,
    BadInput,
    CommitResults,
    PointKey,
)

__all__ = ["synthetic"]  # the session fixture, used by name


def test_reads_every_point_of_a_real_asv_run(synthetic: SyntheticResults) -> None:
    res = load_commit(synthetic.results_dir, synthetic.commits["base"])
    assert res.machine == MACHINE
    assert res.commit == synthetic.commits["base"]
    variants = {"nvfuser", "thunder-prims", "thunder-func", "eager", "torch-compile"}
    assert {k.variant for k in res.points} == variants
    assert {(k.dtype, k.shape) for k in res.points} == {(d, s) for d in DTYPES for s in SHAPES}
    point = res.points[PointKey("thunder-prims", "bfloat16", "2048x8192")]
    assert point.ratio is not None and point.kernel_s is not None
    assert len(point.ratio) == len(point.kernel_s) == ROUNDS
    assert point.kernel_count == 2 and point.compile_s == 1.5
    # Each figure from its own benchmark (the synthetic suite's formulas, tests/data_helpers.py):
    # host time = 10 x kernel time + 0.4 ms, bandwidth = 100.7 MB over the median over 4.8 TB/s.
    assert point.host_s is not None and len(point.host_s) == ROUNDS
    for host, kernel in zip(point.host_s, point.kernel_s, strict=True):
        assert math.isclose(host, kernel * 10 + 4e-4, rel_tol=1e-12)
    middle = sorted(point.kernel_s)[ROUNDS // 2]
    assert point.bandwidth_pct == pytest.approx(100.0 * 100.7e6 / middle / 4.8e12, rel=1e-12)
    assert res.points[PointKey("nvfuser", "bfloat16", "2048x8192")].ratio is None
    assert res.provenance is not None and res.provenance.text("size_set") == "pr"


def test_ratio_samples_are_paired_round_by_round_through_asv(synthetic: SyntheticResults) -> None:
    """asv stores samples in order, so ratio i is kernel i over nvFuser's kernel i."""
    res = load_commit(synthetic.results_dir, synthetic.commits["base"])
    for key in res.contenders():
        point, ref = res.points[key], res.reference(key)
        assert point.ratio and point.kernel_s and ref and ref.kernel_s
        for r, t, n in zip(point.ratio, point.kernel_s, ref.kernel_s, strict=True):
            assert math.isclose(r, t / n, rel_tol=1e-12)


@pytest.mark.parametrize("length", [4, 7, 8, 12, 40])
def test_commit_by_full_or_abbreviated_sha(synthetic: SyntheticResults, length: int) -> None:
    sha = synthetic.commits["same"]
    assert load_commit(synthetic.results_dir, sha[:length].upper()).commit == sha


def test_unknown_sha_names_the_directory(synthetic: SyntheticResults) -> None:
    with pytest.raises(BadInput, match="no results for commit 0000000"):
        load_commit(synthetic.results_dir, "0000000")


def test_abbreviation_longer_than_8_must_match_the_full_hash(synthetic: SyntheticResults) -> None:
    sha = synthetic.commits["base"]
    wrong = sha[:8] + ("0" if sha[8] != "0" else "1")
    with pytest.raises(BadInput, match="no results"):
        load_commit(synthetic.results_dir, wrong)


def test_ambiguous_prefix(synthetic: SyntheticResults, tmp_path: Path) -> None:
    synth = damaged_copy(synthetic, tmp_path)
    sha = synth.commits["base"]
    twin = sha[:4] + ("f" if sha[4] != "f" else "e") * 36
    src = synth.result_file("base")
    dst = src.with_name(twin[:8] + src.name[8:])
    shutil.copy(src, dst)
    edit_json(dst, lambda d: d.update(commit_hash=twin))
    with pytest.raises(BadInput, match=f"prefix {sha[:4]} is ambiguous"):
        load_commit(synth.results_dir, sha[:4])
    assert load_commit(synth.results_dir, sha[:8]).commit == sha


def test_two_files_for_one_commit(synthetic: SyntheticResults, tmp_path: Path) -> None:
    synth = damaged_copy(synthetic, tmp_path)
    src = synth.result_file("base")
    shutil.copy(src, src.with_name(src.name[:9] + "existing-other-python.json"))
    with pytest.raises(BadInput, match="several results files for commit"):
        load_commit(synth.results_dir, synth.commits["base"])


def test_several_machines_need_a_choice(synthetic: SyntheticResults, tmp_path: Path) -> None:
    synth = damaged_copy(synthetic, tmp_path)
    other = synth.results_dir / "other-gpu"
    shutil.copytree(synth.results_dir / MACHINE, other)
    edit_json(other / "machine.json", lambda d: d.update(machine="other-gpu"))
    base, head = synth.commits["base"], synth.commits["same"]
    with pytest.raises(BadInput, match="choose one with --machine"):
        load_pair(synth.results_dir, base, head)
    b, h = load_pair(synth.results_dir, base, head, machine="other-gpu")
    assert b.machine == h.machine == "other-gpu"
    with pytest.raises(BadInput, match="no machine has results for both"):
        load_pair(synth.results_dir, base, head, machine="nope")


def test_missing_directory_and_missing_machine_json(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="does not exist"):
        load_commit(tmp_path / "nope", "abcdef")
    (tmp_path / "m").mkdir()
    with pytest.raises(BadInput, match="no asv machine directories"):
        load_commit(tmp_path, "abcdef")


def test_malformed_sha_is_refused(synthetic: SyntheticResults) -> None:
    with pytest.raises(BadInput, match="not a commit hash"):
        load_commit(synthetic.results_dir, "HEAD~1")


def _damage(synthetic: SyntheticResults, tmp_path: Path, text: str | bytes) -> SyntheticResults:
    synth = damaged_copy(synthetic, tmp_path)
    path = synth.result_file("same")
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return synth


def test_truncated_file(synthetic: SyntheticResults, tmp_path: Path) -> None:
    whole = synthetic.result_file("same").read_text()
    synth = _damage(synthetic, tmp_path, whole[: len(whole) // 2])
    with pytest.raises(BadInput, match=r"-existing-.*\.json: truncated JSON"):
        load_pair(synth.results_dir, synth.commits["base"], synth.commits["same"])


def test_a_file_cut_anywhere_reads_as_truncated() -> None:
    """Wherever a killed run cut a real results file (mid-number, mid-NaN, mid-string, after a
    comma), the message says truncated, not corrupt: the cut depends on the file's length, which
    its path and environment name change (issue 38: another machine's file was "corrupt")."""
    from bot.results.strict_json import decode

    path = next((DATA / "h200" / "results" / "nvidia-h200").glob("06f650c8-*.json"))
    text = path.read_text()
    for cut in range(1, len(text) - 1, max(1, len(text) // 997)):
        with pytest.raises(BadInput, match="truncated JSON"):
            decode(path, text[:cut])


def test_empty_file_is_truncated(synthetic: SyntheticResults, tmp_path: Path) -> None:
    synth = _damage(synthetic, tmp_path, "")
    with pytest.raises(BadInput, match="truncated JSON"):
        load_commit(synth.results_dir, synth.commits["same"][:8])


def test_corrupt_file(synthetic: SyntheticResults, tmp_path: Path) -> None:
    whole = synthetic.result_file("same").read_text()
    synth = _damage(synthetic, tmp_path, whole.replace('"result_columns"', '"result_columns" ]', 1))
    with pytest.raises(BadInput, match="corrupt JSON at line 1 column"):
        load_commit(synth.results_dir, synth.commits["same"][:8])


def test_not_utf8(synthetic: SyntheticResults, tmp_path: Path) -> None:
    synth = _damage(synthetic, tmp_path, b"\xff\xfe{")
    with pytest.raises(BadInput, match="not UTF-8"):
        load_commit(synth.results_dir, synth.commits["same"][:8])


def test_other_format_version(synthetic: SyntheticResults, tmp_path: Path) -> None:
    synth = damaged_copy(synthetic, tmp_path)
    edit_json(synth.result_file("same"), lambda d: d.update(version=1))
    with pytest.raises(BadInput, match="format version 1, expected 2"):
        load_commit(synth.results_dir, synth.commits["same"])


def _load_damaged(
    synthetic: SyntheticResults, tmp_path: Path, edit: Callable[[dict[str, Any]], object]
) -> CommitResults:
    synth = damaged_copy(synthetic, tmp_path)
    edit_json(synth.result_file("same"), edit)
    return load_commit(synth.results_dir, synth.commits["same"])


def test_missing_required_benchmark(synthetic: SyntheticResults, tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=f"benchmark {BENCH_RATIO} is missing"):
        _load_damaged(synthetic, tmp_path, lambda d: d["results"].pop(BENCH_RATIO))


def test_missing_optional_benchmark_is_shown_as_absent(
    synthetic: SyntheticResults, tmp_path: Path
) -> None:
    synth = damaged_copy(synthetic, tmp_path)
    edit_json(synth.result_file("same"), lambda d: d["results"].pop(BENCH_BANDWIDTH))
    res = load_commit(synth.results_dir, synth.commits["same"])
    assert all(p.bandwidth_pct is None for p in res.points.values())


# Index 4 of product(variants, dtypes, shapes): thunder-func/bfloat16/2048x8192 for track_ratio
# (whose variants start at thunder-prims), thunder-prims/bfloat16/2048x8192 for the kernel time
# (whose variants start at nvfuser).
WHERE = {
    BENCH_RATIO: "variant=thunder-func, dtype=bfloat16, shape=2048x8192",
    BENCH_KERNEL: "variant=thunder-prims, dtype=bfloat16, shape=2048x8192",
}


@pytest.mark.parametrize("bench", [BENCH_RATIO, BENCH_KERNEL])
@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), "sample 3 is nan, not a finite positive number"),
        (float("inf"), "sample 3 is inf"),
        (float("-inf"), "sample 3 is -inf"),
        (-0.5, "sample 3 is -0.5"),
        (0.0, "sample 3 is 0.0"),
        ("fast", "sample 3 is 'fast'"),
        (True, "sample 3 is True"),
        (None, "sample 3 is None"),
    ],
)
def test_bad_sample_names_file_benchmark_point_and_index(
    synthetic: SyntheticResults, tmp_path: Path, bench: str, value: object, message: str
) -> None:
    def edit(d: dict[str, Any]) -> None:
        row(d, bench)["samples"][4][3] = value  # rows alias the file's lists

    with pytest.raises(BadInput) as info:
        _load_damaged(synthetic, tmp_path, edit)
    text = str(info.value)
    assert bench in text and "-existing-" in text
    assert WHERE[bench] in text
    assert message in text


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("inf"), "value inf is not a finite number"),
        (-3.0, "value -3.0 is negative"),
        ("52%", "value '52%' is not a finite number"),
        (False, "value False is not a finite number"),
    ],
)
def test_bad_scalar_names_its_point(
    synthetic: SyntheticResults, tmp_path: Path, value: object, message: str
) -> None:
    def edit(d: dict[str, Any]) -> None:
        row(d, BENCH_BANDWIDTH)["result"][4] = value

    with pytest.raises(BadInput) as info:
        _load_damaged(synthetic, tmp_path, edit)
    assert f"{BENCH_BANDWIDTH} at {WHERE[BENCH_KERNEL]}: {message}" in str(info.value)


def test_a_nan_scalar_is_a_skipped_point_not_an_error(
    synthetic: SyntheticResults, tmp_path: Path
) -> None:
    """asv writes NaN for a benchmark it skipped: that point has no bandwidth, nothing fails."""

    def edit(d: dict[str, Any]) -> None:
        row(d, BENCH_BANDWIDTH)["result"][4] = float("nan")

    res = _load_damaged(synthetic, tmp_path, edit)
    assert res.points[PointKey("thunder-prims", "bfloat16", "2048x8192")].bandwidth_pct is None
    assert res.points[PointKey("thunder-prims", "bfloat16", "16384x8192")].bandwidth_pct


def test_too_few_samples(synthetic: SyntheticResults, tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        for samples in row(d, BENCH_KERNEL)["samples"]:
            if samples:
                del samples[5:]

    with pytest.raises(BadInput, match="5 samples, at least 10 needed"):
        _load_damaged(synthetic, tmp_path, edit)


def test_results_without_samples(synthetic: SyntheticResults, tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no samples \\(was asv run with --record-samples\\?\\)"):
        _load_damaged(synthetic, tmp_path, lambda d: set_column(d, BENCH_RATIO, "samples", None))


def test_unpaired_rounds(synthetic: SyntheticResults, tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        row(d, BENCH_RATIO)["samples"][0].append(1.0)

    with pytest.raises(
        BadInput, match="21 ratio samples but 20 kernel-time samples of thunder-prims"
    ):
        _load_damaged(synthetic, tmp_path, edit)


def test_unpaired_rounds_of_the_reference_name_nvfuser(
    synthetic: SyntheticResults, tmp_path: Path
) -> None:
    """nvFuser's kernel times pair with every contender's ratio: when they are the ones that
    differ, the message says so instead of blaming the contender's."""

    def edit(d: dict[str, Any]) -> None:
        row(d, BENCH_KERNEL)["samples"][0].append(1.0)  # nvfuser/bfloat16/2048x8192

    with pytest.raises(BadInput, match="20 ratio samples but 21 kernel-time samples of nvfuser"):
        _load_damaged(synthetic, tmp_path, edit)


def test_parameter_that_is_not_a_quoted_name(synthetic: SyntheticResults, tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        row(d, BENCH_RATIO)["params"][0][0] = "__import__('os')"

    with pytest.raises(BadInput, match="is not a quoted name"):
        _load_damaged(synthetic, tmp_path, edit)


@pytest.mark.parametrize("column", ["result", "samples"])
def test_entry_count_must_match_parameters_and_names_the_short_column(
    synthetic: SyntheticResults, tmp_path: Path, column: str
) -> None:
    """The message counts the list that is short, not its neighbour (which has all 16)."""

    def edit(d: dict[str, Any]) -> None:
        row(d, BENCH_RATIO)[column].pop()

    with pytest.raises(BadInput, match=f"15 entries in '{column}' for 16 parameter combinations"):
        _load_damaged(synthetic, tmp_path, edit)


def test_failed_point_is_no_data_with_the_suite_reason(
    synthetic: SyntheticResults, tmp_path: Path
) -> None:
    synth = damaged_copy(synthetic, tmp_path)
    sha = synth.commits["failed_point"]
    prov = synth.results_dir / MACHINE / f"{sha}.provenance.jsonl"
    record = json.loads(prov.read_text())
    record["points"] = {"float32/16384x8192": {"error": "RuntimeError: out of memory"}}
    prov.write_text(prov.read_text() + json.dumps(record) + "\n")
    res = load_commit(synth.results_dir, sha)
    key = PointKey("thunder-prims", "float32", "16384x8192")
    assert res.points[key].ratio is None and res.points[key].no_data == "failed"
    assert res.provenance is not None and res.provenance.line == 2
    assert res.provenance.point_error(key) == "RuntimeError: out of memory"


def test_skipped_point_nan_result_is_no_data(synthetic: SyntheticResults, tmp_path: Path) -> None:
    synth = damaged_copy(synthetic, tmp_path)

    def edit(d: dict[str, Any]) -> None:
        row(d, BENCH_RATIO)["result"][0] = float("nan")  # asv's "skipped"

    edit_json(synth.result_file("same"), edit)
    res = load_commit(synth.results_dir, synth.commits["same"])
    assert res.points[PointKey("thunder-prims", "bfloat16", "2048x8192")].no_data == "skipped"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"schema": "rmsnorm-bwd-provenance/1", "comm', "line 2: truncated JSON"),
        ('{"schema": "something-else"}', "line 2: not a rmsnorm-bwd-provenance/1 record"),
        ('{"schema": "rmsnorm-bwd-provenance/1", "commit": "' + "0" * 40 + '"}', "for commit 000"),
    ],
)
def test_bad_last_provenance_line(
    synthetic: SyntheticResults, tmp_path: Path, text: str, message: str
) -> None:
    synth = damaged_copy(synthetic, tmp_path)
    sha = synth.commits["same"]
    prov = synth.results_dir / MACHINE / f"{sha}.provenance.jsonl"
    prov.write_text(prov.read_text() + text + "\n")
    with pytest.raises(BadInput, match=message):
        load_commit(synth.results_dir, sha)


def test_list_commits_oldest_first(synthetic: SyntheticResults) -> None:
    commits = list_commits(synthetic.results_dir)
    assert [c.commit for c in commits] == list(synthetic.commits.values())
    assert {c.thunder_variant for c in commits} == {"stock", "synthetic-slower"}


def test_deeply_nested_json(synthetic: SyntheticResults, tmp_path: Path) -> None:
    synth = _damage(synthetic, tmp_path, "[" * 100_000 + "]" * 100_000)
    with pytest.raises(BadInput, match="nested too deeply"):
        load_commit(synth.results_dir, synth.commits["same"][:8])


def test_machine_names_must_be_plain(synthetic: SyntheticResults, tmp_path: Path) -> None:
    synth = damaged_copy(synthetic, tmp_path)
    shutil.copytree(synth.results_dir / MACHINE, synth.results_dir / "gpu @team <b>")
    with pytest.raises(BadInput, match="is not a plain runner label"):
        load_commit(synth.results_dir, synth.commits["same"])


SMOKE = REPO_ROOT / "data" / "h200-smoke" / "results"


def test_reads_the_recorded_h200_smoke_run() -> None:
    """Real GPU output (data/README.md): the reader takes it as asv and the suite wrote it."""
    res = load_commit(SMOKE, "8b8c0041")
    assert res.machine == "nvidia-h200"
    assert res.provenance is not None and res.provenance.text("gpu", "name") == "NVIDIA H200"
    assert {k.variant for k in res.points} == {
        "nvfuser",
        "thunder-prims",
        "thunder-func",
        "eager",
        "torch-compile",
    }
    for key in res.contenders():
        point, ref = res.points[key], res.reference(key)
        assert point.ratio is not None and point.kernel_s is not None and ref is not None
        assert len(point.ratio) == len(point.kernel_s) == 10
        assert ref.kernel_s is not None
        for r, t, n in zip(point.ratio, point.kernel_s, ref.kernel_s, strict=True):
            assert math.isclose(r, t / n, rel_tol=1e-9)  # paired by round, through asv

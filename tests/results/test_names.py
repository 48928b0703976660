"""The names a results artifact may carry (bot/results/names.py): the lists are the suite's, and
a name the bot does not know stops the read with a message that names it, on real H200 results
(issue 37: a fusion name went raw into the comment, the issue title, the status and a command)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from data_helpers import HOSTILE_FUSIONS, renamed_fusion
from paths import DATA

from bot.fusion.read import has_fusion, read_side
from bot.results import names
from bot.results.locate import load_commit
from bot.results.types import BadInput

PAIR = DATA / "h200-catalog" / "pair" / "rep-1"
HEAD = "e0cdef8e0a8c185212180a0ad7ba90188ea6f23a"


def test_the_lists_are_the_suites() -> None:
    from benchmarks.engine.config import CONTENDERS, DTYPES
    from benchmarks.fusions.catalog import FUSIONS

    assert tuple(FUSIONS) == names.FUSIONS
    assert ("nvfuser", *CONTENDERS) == names.VARIANTS
    assert names.DTYPES == DTYPES


def test_every_catalog_fusion_has_words() -> None:
    from bot.fusion.names import fusion_title

    assert all(fusion_title(f) != f for f in names.FUSIONS)


def _renamed(tmp_path: Path, new: str) -> Path:
    copy = tmp_path / "results"
    shutil.copytree(PAIR, copy)
    for path in (copy / "nvidia-h200").iterdir():
        if path.suffix in (".json", ".jsonl"):
            path.write_bytes(renamed_fusion(path.read_bytes(), "gelu_bwd", new))
    return copy


def test_the_real_run_reads_with_every_fusion_of_the_catalog(tmp_path: Path) -> None:
    got = load_commit(_renamed(tmp_path, "gelu_bwd"), HEAD)
    assert {k.fusion for k in got.points} == set(names.FUSIONS)


@pytest.mark.parametrize("name", HOSTILE_FUSIONS, ids=ascii)
def test_a_fusion_outside_the_catalog_stops_the_read(tmp_path: Path, name: str) -> None:
    with pytest.raises(BadInput, match="is not a fusion of the catalog") as caught:
        load_commit(_renamed(tmp_path, name), HEAD)
    message = str(caught.value)
    assert "benchmark bench_fusions." in message
    assert "\x00" not in message and "\n" not in message  # shown as an ASCII literal


@pytest.mark.parametrize(
    ("position", "value", "what"),
    [(0, "thunder-prims`<b>", "variant"), (1, "float64", "dtype"), (2, "2048x8192 @x", "shape")],
)
def test_a_parameter_the_suite_does_not_write_stops_the_read(
    tmp_path: Path, position: int, value: str, what: str
) -> None:
    known = ("'thunder-prims'", "'bfloat16'", "'16384x4096'")[position]
    copy = _renamed(tmp_path, "gelu_bwd")
    for path in (copy / "nvidia-h200").glob(f"{HEAD[:8]}-*.json"):
        path.write_text(path.read_text().replace(known, repr(value), 1))
    with pytest.raises(BadInput, match=f"{what} .* is not "):
        load_commit(copy, HEAD)


@pytest.mark.parametrize("name", ["/etc", "..", "softmax_bwd/../../x", "nope_bwd"])
def test_no_capture_path_is_made_of_a_name_outside_the_catalog(tmp_path: Path, name: str) -> None:
    """The poster once read "captures" from its own /etc: a fusion named /etc."""
    side = tmp_path / "side"
    side.mkdir()
    for reader in (has_fusion, read_side):
        with pytest.raises(BadInput, match="is not a fusion of the catalog"):
            reader(side, name)


@pytest.mark.parametrize(
    ("check", "good", "bad"),
    [
        (names.shape, "16384x4096", ["", "0x8", "2048x", "2048 x8", "1x2x3x4x5", "-1x2"]),
        (names.machine, "nvidia-h200", ["", ".hidden", "gpu @team", "a" * 101, "x\x00", "a/b"]),
    ],
)
def test_patterns_for_what_no_catalog_knows(check: object, good: str, bad: list[str]) -> None:
    assert callable(check)
    assert check(good, "here") == good
    for name in bad:
        with pytest.raises(BadInput, match="here: "):
            check(name, "here")

"""Reading captures: missing files are empty, bad ones a BadInput that names the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from paths import DATA

from bot.fusion import read
from bot.fusion.read import read_side
from bot.results.types import BadInput

STOCK = DATA / "h200-captures" / "stock-0.2.6"
POINT = "bfloat16_2048x8192"


def copy(tmp_path: Path) -> Path:
    side = tmp_path / "side"
    shutil.copytree(STOCK / POINT, side / POINT)
    return side


def test_a_point_reads_every_file(tmp_path: Path) -> None:
    point = read_side(copy(tmp_path))["bfloat16 2048x8192"]
    prims = point.variants["thunder-prims"]
    assert (point.dtype, point.shape) == ("bfloat16", "2048x8192")
    assert len(prims.definitions) == 1 and prims.definitions[0].startswith("def nvfuser_fusion")
    assert prims.saved[0] == {"dtype": "thunder.dtypes.bfloat16", "name": "t66",
                              "shape": ["2048", "1"]}  # fmt: skip
    assert prims.profile is not None and prims.profile["segments"] == 1
    assert prims.versions == {"thunder": "0.2.6"} and prims.errors == {}
    assert point.variants["nvfuser"].repro is not None and prims.repro is None


def test_missing_files_are_none_or_empty_and_a_missing_definition_not_captured(
    tmp_path: Path,
) -> None:
    """A missing definition is "not captured", never "no fusion": a failed capture step must
    not read as Thunder dropping its fusion."""
    side = copy(tmp_path)
    folder = side / POINT / "thunder-func"
    for name in ("definition.py.txt", "saved.json", "profile.json", "errors.json"):
        (folder / name).unlink()
    func = read_side(side)["bfloat16 2048x8192"].variants["thunder-func"]
    assert (func.definitions, func.saved, func.profile) == ((), (), None)
    assert func.errors == {"definition": "not captured (no definition.py.txt)"}


def test_several_fusions_and_none(tmp_path: Path) -> None:
    side = copy(tmp_path)
    folder = side / POINT / "thunder-func"
    one = (folder / "definition.py.txt").read_text()
    (folder / "definition.py.txt").write_text(f"# ===== nvFusion0\n{one}# ===== nvFusion1\n{one}")
    assert len(read_side(side)["bfloat16 2048x8192"].variants["thunder-func"].definitions) == 2
    (folder / "definition.py.txt").write_text("# no nvFuser fusion in the trace\n")
    assert read_side(side)["bfloat16 2048x8192"].variants["thunder-func"].definitions == ()


def test_no_fusion_profile_and_a_stale_copy_are_no_profile(tmp_path: Path) -> None:
    side = copy(tmp_path)
    hand = json.loads((side / POINT / "nvfuser" / "profile.json").read_text())
    (side / POINT / "thunder-func" / "profile.json").write_text(json.dumps(hand))
    (side / POINT / "thunder-prims" / "profile.json").write_text('{"no_fusion": true}')
    variants = read_side(side)["bfloat16 2048x8192"].variants
    assert variants["nvfuser"].profile == hand
    assert variants["thunder-func"].profile is None and variants["thunder-prims"].profile is None


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("saved.json", "{not json", "not valid JSON"),
        ("saved.json", '{"a": 1}', "saved tensors are not a list"),
        ("saved.json", '[{"name": "x", "shape": [2048], "dtype": "f"}]', "saved tensor 0 is not"),
        ("profile.json", "[]", "the profile is not a JSON object"),
        ("profile.json", '{"segments": "1", "kernel_profiles": []}', "no integer segments"),
        ("profile.json", '{"segments": 1, "kernel_profiles": [3]}', r"kernel_profiles\[0\]"),
        ("errors.json", '{"step": 3}', "not a JSON object of strings"),
        ("definition.py.txt", "# ===== nvFusion0\nhello\n", "holds no nvFuser definition"),
        ("definition.py.txt", b"\xff\xfe", "not UTF-8"),
    ],
)
def test_bad_files_name_the_path(
    tmp_path: Path, name: str, content: str | bytes, says: str
) -> None:
    side = copy(tmp_path)
    path = side / POINT / "thunder-prims" / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(BadInput, match=says) as error:
        read_side(side)
    assert str(path) in str(error.value)


def test_oversized_files_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    side = copy(tmp_path)
    monkeypatch.setattr(read, "MAX_TEXT_BYTES", 100)
    with pytest.raises(BadInput, match="over the limit"):
        read_side(side)


@pytest.mark.parametrize("stray", ["notes.txt", "bfloat16-2048", "bfloat16_2048x8192/NVFUSER"])
def test_stray_entries_are_refused(tmp_path: Path, stray: str) -> None:
    side = copy(tmp_path)
    (side / stray).mkdir(parents=True) if "." not in stray else (side / stray).write_text("x")
    with pytest.raises(BadInput, match=stray.rsplit("/", 1)[-1]):
        read_side(side)


def test_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="not a folder of fusion captures"):
        read_side(tmp_path / "absent")

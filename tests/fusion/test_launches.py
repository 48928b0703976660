"""Hints of a regression are about the change (issue 38, part 5): what each timed call
launched, head against base, from every run's record (bot/fusion/launches.py); what stood at
base already is no cause of the change (bot/fusion/hints.py), and goes to the level's clue.

On the committed records: the catalog pair's head slowed Bias+GELU backward by a sleep kernel
in Thunder's timed call (data/h200-catalog/README.md), the A/A pairs changed nothing."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from paths import DATA

from bot.config import VerdictSettings
from bot.decide.verdict import decide
from bot.fusion.attribute import FUSER, THUNDER, attribute
from bot.fusion.compare import OUTSIDE, STACK
from bot.fusion.hints import build_hints
from bot.fusion.launches import (
    LAUNCHES,
    NVFUSER_LAUNCHES,
    Lists,
    kernel_lists,
    kernel_name,
    launch_findings,
)
from bot.fusion.read import read_side
from bot.fusion.types import Finding
from bot.results.locate import load_pair
from bot.results.names import FUSIONS

PAIR = DATA / "h200-catalog" / "pair"
CAPTURES = DATA / "h200-catalog" / "captures"
SPIN = "at::cuda::(anonymous namespace)::spin_kernel"
POINT = "bfloat16 16384x4096"


def _record(folder: Path, commit: str) -> dict[str, Any]:
    (path,) = folder.glob(f"*/{commit}*.provenance.jsonl")
    return json.loads(path.read_text(encoding="utf-8").splitlines()[-1])  # type: ignore[no-any-return]


def _side(commit: str, fusion: str, folders: tuple[Path, ...]) -> list[Lists]:
    return [kernel_lists(_record(folder, commit), fusion) for folder in folders]


PAIR_RUNS = (PAIR / "rep-1", PAIR / "rep-2")


@pytest.mark.parametrize(
    ("signature", "name"),
    [
        ("at::cuda::(anonymous namespace)::spin_kernel(long)", SPIN),
        (
            "void at::native::vectorized_elementwise_kernel<2, at::native::FillFunctor<long>, "
            "std::array<char*, 1ul> >(int, at::native::FillFunctor<long>, std::array<char*, 1ul>)",
            "at::native::vectorized_elementwise_kernel",
        ),
        ("nvf::nvfuser_reduction_f0_c1_r0_g0(nvf::Tensor<float, 2, 2>)", "nvf::nvfuser_reduction"),
        (
            "nvf::nvfuser_inner_outer_persistent_f3_c1_r0_g0(int)",
            "nvf::nvfuser_inner_outer_persistent",
        ),
        ("Memcpy DtoD (Device -> Device)", "Memcpy DtoD (Device -> Device)"),
        ("Memset (Device)", "Memset (Device)"),
    ],
)
def test_a_kernel_is_named_as_a_person_reads_it(signature: str, name: str) -> None:
    assert kernel_name(signature) == name


def test_the_catalog_pair_names_the_sleep_kernel_in_thunders_call_and_nothing_else() -> None:
    """Both runs of each side agree: head's Thunder call launches one kernel more, the sleep;
    the hand-written fusion's call and the 13 other fusions launch what they did."""
    found = {
        fusion: launch_findings(
            _side("6a438ce9", fusion, PAIR_RUNS), _side("e0cdef8e", fusion, PAIR_RUNS)
        )
        for fusion in FUSIONS
    }
    assert {fusion for fusion, f in found.items() if f} == {"gelu_bwd"}
    gelu = found["gelu_bwd"]
    assert {(f.point, f.variant) for f in gelu} == {
        (POINT, "thunder-func"),
        (POINT, "thunder-prims"),
    }
    for f in gelu:
        assert f.kind == LAUNCHES and f.material
        assert f.text == (
            f"head launches 1 more kernel in Thunder's timed call (3, base 2): adds {SPIN}"
        )


@pytest.mark.parametrize(
    ("folder", "base", "head"),
    [
        (DATA / "h200-catalog" / "aa", "a561aca0", "da6533d1"),
        (DATA / "h200-catalog" / "aa2", "c4af5b47", "baad8fb3"),
    ],
)
def test_identical_code_launches_the_same_kernels(folder: Path, base: str, head: str) -> None:
    for fusion in FUSIONS:
        assert not launch_findings(_side(base, fusion, (folder,)), _side(head, fusion, (folder,)))


def _lists(**variants: list[str]) -> Lists:
    """One run's lists, as kernel_lists reads a record: each name shortened."""
    return {(POINT, v.replace("_", "-")): Counter(map(kernel_name, n)) for v, n in variants.items()}


def test_a_side_whose_runs_disagree_says_nothing() -> None:
    base = [_lists(thunder_func=["a::k(int)"])]
    head = [_lists(thunder_func=["a::k(int)", "b::x(int)"]), _lists(thunder_func=["a::k(int)"])]
    assert launch_findings(base, head) == []
    agreed = [_lists(thunder_func=["a::k(int)", "b::x(int)"])] * 2
    assert [f.text for f in launch_findings(base, agreed)] == [
        "head launches 1 more kernel in Thunder's timed call (2, base 1): adds b::x"
    ]


def test_nvfusers_own_kernels_are_its_segmentation_and_a_lost_kernel_is_named() -> None:
    base = [_lists(nvfuser=["nvf::nvfuser_reduction_f0_c1_r0_g0(int)"])]
    head = [
        _lists(
            nvfuser=[
                "nvf::nvfuser_reduction_f0_c1_r0_g0(int)",
                "nvf::nvfuser_pointwise_f0_c1_r0_g1(int)",
            ]
        )
    ]
    (split,) = launch_findings(base, head)
    assert split.kind == NVFUSER_LAUNCHES
    assert "the hand-written fusion's timed call" in split.text
    (merged,) = launch_findings(head, base)
    assert merged.text.endswith("no longer nvf::nvfuser_pointwise")
    assert "1 kernel fewer" in merged.text
    assert launch_findings(base, head, explained={(POINT, "nvfuser")}) == []


def test_an_untrusted_record_entry_is_left_out() -> None:
    def point(dtype: object, shape: str, names: object) -> dict[str, object]:
        return {"dtype": dtype, "shape": shape, "variants": {"nvfuser": {"kernel_names": names}}}

    points = {
        "a": point("bfloat16", "1x1", [1]),
        "b": point(3, "1x1", ["k"]),
        "c": point("bfloat16", "2x2", "k"),
        "d": point("bfloat16", "4x4", ["k"]),
    }
    assert list(kernel_lists({"points": points})) == [("bfloat16 4x4", "nvfuser")]
    assert kernel_lists({"points": []}) == {}


def test_a_launch_in_thunders_call_is_thunders_and_in_the_hand_written_call_nvfusers() -> None:
    thunder = Finding(LAUNCHES, POINT, "thunder-prims", "head launches ...")
    handwritten = Finding(LAUNCHES, POINT, "nvfuser", "head launches ...")
    assert attribute([], {}, {}, None, [thunder]).owner == THUNDER
    assert attribute([], {}, {}, None, [handwritten]).owner == FUSER


def test_the_same_program_points_at_the_launch_not_the_stack() -> None:
    """The catalog pair with the stock captures at both sides (what the demo compares): the
    compiled program is the same, so the change is the kernel launched beside it, and none of
    the six differences from the hand-written fusion is new at head."""
    kernels = (_side("6a438ce9", "gelu_bwd", PAIR_RUNS), _side("e0cdef8e", "gelu_bwd", PAIR_RUNS))
    sides = read_side(CAPTURES / "stock-1", "gelu_bwd"), read_side(CAPTURES / "stock-2", "gelu_bwd")
    runs = [load_pair(folder, "6a438ce9", "e0cdef8e") for folder in PAIR_RUNS]
    base, head = (
        [side.of_fusion("gelu_bwd") for side in sides_] for sides_ in zip(*runs, strict=True)
    )
    verdict = decide(base, head, VerdictSettings())
    hints = build_hints(verdict, *sides, None, None, "gelu_bwd", kernels)
    same = {f.variant: f.text for f in hints.changed if f.kind == "same-program"}
    assert same["nvfuser"].endswith(STACK)
    assert same["thunder-func, thunder-prims"].endswith(OUTSIDE)
    assert hints.changed[0].kind == LAUNCHES
    assert hints.new_at_head == () and len(hints.standing) == 6
    assert hints.attribution.owner == THUNDER

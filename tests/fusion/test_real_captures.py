"""The comparer on the H200 captures: it must name the regressed state's cause, stay quiet on
an A/A of the program, and find the round trip of the originating report."""

from __future__ import annotations

from functools import cache

from paths import DATA

from bot.fusion.compare import against_handwritten, compare_points, summarise
from bot.fusion.read import read_side
from bot.fusion.types import Finding, PointCapture

CAPTURES = DATA / "h200-captures"
POINTS = 9
THUNDER = ("thunder-func", "thunder-prims")


@cache
def side(state: str) -> dict[str, PointCapture]:
    return read_side(CAPTURES / state)


def across(base: str, head: str) -> list[Finding]:
    before, after = side(base), side(head)
    assert sorted(before) == sorted(after) and len(before) == POINTS
    return [finding for key in before for finding in compare_points(before[key], after[key])]


def test_the_unfused_backward_is_named_at_every_point_and_thunder_variant() -> None:
    found = across("stock-0.2.6", "unfused-backward-0.2.6")
    for key in side("stock-0.2.6"):
        for variant in THUNDER:
            mine = [f for f in found if f.point == key and f.variant == variant]
            assert "head's backward has no nvFuser fusion (base: 1)" in [f.text for f in mine]
            (saved,) = [f for f in mine if f.kind == "saved"]
            full = key.split()[1].replace("x", ", ")
            assert saved.text.startswith(f"head saves 4 fp32 [{full}] tensors") or (
                key.startswith("float32") and f"3 fp32 [{full}] tensors" in saved.text
            ), saved.text
            assert all(f.material for f in mine)
        (handwritten,) = [f for f in found if f.point == key and f.variant == "nvfuser"]
        assert handwritten.kind == "same-program"


def test_the_unfused_state_summarises_short() -> None:
    grouped = summarise(across("stock-0.2.6", "unfused-backward-0.2.6"))
    assert grouped[1].text == (
        "at 9 points (thunder-func, thunder-prims): head's backward has no nvFuser fusion (base: 1)"
    )
    assert len(grouped) < len(across("stock-0.2.6", "unfused-backward-0.2.6")) / 2


def test_another_thunder_version_is_the_same_program_everywhere() -> None:
    found = across("stock-0.2.6", "stock-0.2.7.dev20260201")
    assert len(found) == POINTS * 3
    assert {f.kind for f in found} == {"same-program"}
    assert not any(f.material for f in found)
    (grouped,) = summarise(found)
    assert grouped.text.startswith("at 9 points (nvfuser, thunder-func, thunder-prims): the same")
    assert "thunder 0.2.6 -> 0.2.7.dev20260201" in grouped.text


def test_the_stale_profiles_of_the_unfused_state_read_as_none() -> None:
    for point in side("unfused-backward-0.2.6").values():
        assert point.variants["nvfuser"].profile is not None
        assert all(point.variants[v].profile is None for v in THUNDER)
    assert all(p.variants[v].profile for p in side("stock-0.2.6").values() for v in THUNDER)


#: Captures of the direct frontend (nvFuser 0.2.36), on an H100: their profiles are read from
#: torch.profiler's kernel records, which name no fusion_id (data/h100-thunder-history).
DIRECT = (
    DATA / "h100-thunder-history" / "call1" / "group-01" / "nvidia-h100-80gb-hbm3"
    / "bdcfd93cde225093d240df955db48087fe79f43b.captures"
)  # fmt: skip


def test_profiles_without_a_fusion_id_are_no_stale_copies() -> None:
    """Thunder's profiles of the direct frontend were all dropped as stale copies of the
    hand-written one (both named no fusion_id): every hint then said 'no nvFuser profile'."""
    for fusion in ("rmsnorm_bwd", "softmax_bwd"):
        points = read_side(DIRECT, fusion)
        assert points and all(
            p.variants[v].profile is not None for p in points.values() for v in THUNDER
        )
        same = [f for k in points for f in compare_points(points[k], points[k])]
        assert {f.variant for f in same if "the same compiled program" in f.text} == {
            "nvfuser",
            *THUNDER,
        }


def test_thunder_against_the_handwritten_fusion_names_the_round_trip() -> None:
    found = against_handwritten(side("stock-0.2.6")["bfloat16 2048x8192"])
    prims = [f.text for f in found if f.variant == "thunder-prims"]
    assert (
        "Thunder casts the saved value t66 (bf16 [2048, 1]) bf16 -> fp32 -> bf16 -> fp32: "
        "a round trip the hand-written fusion does not make"
    ) in prims
    assert "Thunder casts a sum result fp32 -> bf16 -> fp32: a round trip the hand-written " \
        "fusion does not make" in prims  # fmt: skip
    assert (
        "Thunder takes 1 pow, 2 sqrts and 4 reciprocals where the hand-written fusion takes "
        "1 reciprocal and 1 div"
    ) in prims
    assert (
        "Thunder has fixed extents [2048, 8192] where the hand-written fusion has symbolic extents"
    ) in prims
    assert (
        "Thunder takes inputs bf16 [2048, 1] where the hand-written fusion takes inputs "
        "fp32 [-1, 1]" in prims
    )


def test_fp32_points_have_no_round_trip() -> None:
    for key, point in side("stock-0.2.6").items():
        if key.startswith("float32"):
            assert not any("round trip" in f.text for f in against_handwritten(point))

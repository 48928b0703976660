"""The comparer on hand-made captures: one test a kind of finding, and the same program."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from test_definition import BF16_2D, ROUND_TRIP, fusion

from bot.fusion.compare import against_handwritten, compare_points, summarise
from bot.fusion.types import Finding, PointCapture, VariantCapture

SYMBOLIC = fusion(
    "tv0 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, "
    "is_cpu=False)",
    f"tv1 = fd.define_tensor({BF16_2D})",
    "c0 = fd.ops.size(tv1, dim=0)",
    "c1 = fd.ops.size(tv1, dim=1)",
    "tv2 = fd.ops.expand(tv0, shape=[c0, c1])",
    "tv3 = fd.ops.reciprocal(tv2)",
    "tv4 = fd.ops.cast(tv1, dtype=DataType.Float)",
    "tv5 = fd.ops.mul(tv4, tv3)",
    "tv6 = fd.ops.sum(tv5, dims=[1], dtype=DataType.Float)",
    "fd.add_output(tv6)",
)
SAVED = ({"name": "t66", "shape": ["2048", "1"], "dtype": "thunder.dtypes.bfloat16"},)
FP32_SAVED = tuple(
    {"name": f"t{i}", "shape": ["2048", "8192"], "dtype": "thunder.dtypes.float32"}
    for i in range(4)
)


def kernel(**changes: Any) -> dict[str, Any]:
    base = {"scheduler": "inner_outer_persistent", "grid_str": "[1, 264, 1]",
            "block_str": "[8, 32, 1]", "cluster_str": "[0, 0, 0]", "registers": 96,
            "shared_mem_str": "[50176, 128]", "time_ms": 0.04}  # fmt: skip
    return {**base, **changes}


def capture(variant: str = "thunder-prims", definitions: tuple[str, ...] = (ROUND_TRIP,),
            saved: tuple[dict[str, Any], ...] = SAVED, kernels: list[dict[str, Any]] | None = None,
            segments: int = 1) -> VariantCapture:  # fmt: skip
    profile = {"fusion_id": 4, "segments": segments, "kernel_profiles": kernels or [kernel()]}
    return VariantCapture(Path("/x"), variant, definitions, "bwd", "fwd", saved, profile, None)


def point(*captures: VariantCapture) -> PointCapture:
    return PointCapture("bfloat16", "2048x8192", {c.variant: c for c in captures})


def diff(head: VariantCapture, base: VariantCapture | None = None) -> list[Finding]:
    return compare_points(point(base or capture()), point(head))


def texts(findings: list[Finding]) -> list[str]:
    return [f.text for f in findings]


def test_same_program_is_one_finding_and_not_material() -> None:
    timed = capture(kernels=[kernel(time_ms=9.0)])  # a time is never a finding
    (only,) = diff(timed)
    assert only.kind == "same-program" and not only.material
    assert "a time change there is not in the fusion" in only.text


def test_versions_are_named_in_the_same_program() -> None:
    head = replace(capture(), versions={"thunder": "0.2.7"})
    base = replace(capture(), versions={"thunder": "0.2.6"})
    assert "with thunder 0.2.6 -> 0.2.7" in diff(head, base)[0].text


def test_no_fusion_at_head() -> None:
    found = diff(capture(definitions=()))
    assert "head's backward has no nvFuser fusion (base: 1)" in texts(found)
    assert not any(f.kind == "same-program" for f in found)


def test_fusion_count() -> None:
    assert "head's backward has 2 nvFuser fusions (base: 1)" in texts(
        diff(capture(definitions=(ROUND_TRIP, SYMBOLIC)))
    )


def test_saved_dtypes_and_sizes() -> None:
    (found,) = [f for f in diff(capture(saved=FP32_SAVED)) if f.kind == "saved"]
    assert found.text == (
        "head saves 4 fp32 [2048, 8192] tensors for the backward (base: bf16 [2048, 1]); "
        "256 MiB in all (base: 4 KiB)"
    )


def test_cast_pairs_round_trip_math_extents_inputs() -> None:
    found = against_handwritten(point(capture("nvfuser", (SYMBOLIC,), ()), capture()))
    said = texts(found)
    assert (
        "casts (the hand-written fusion -> Thunder): bf16->fp32 1 -> 2, fp32->bf16 0 -> 1" in said
    )
    assert (
        "Thunder casts the saved value t66 (bf16 [2048, 1]) bf16 -> fp32 -> bf16 -> fp32: "
        "a round trip the hand-written fusion does not make"
    ) in said
    assert (
        "Thunder takes 1 sqrt and 1 reciprocal where the hand-written fusion takes 1 reciprocal"
        in said
    )
    assert (
        "Thunder has fixed extents [2048] where the hand-written fusion has symbolic extents"
    ) in said
    assert (
        "Thunder takes inputs bf16 [2048, 1] where the hand-written fusion takes inputs "
        "fp32 [-1, 1], bf16 [-1, -1]" in said
    )
    assert "Thunder reduces nothing where the hand-written fusion reduces sum over [1]" in said
    assert all(f.material for f in found)


def test_round_trip_gone_at_head_is_said_the_other_way() -> None:
    found = diff(capture(definitions=(SYMBOLIC,)))
    assert any(t.startswith("base casts the saved value") and t.endswith("head does not make")
               for t in texts(found))  # fmt: skip


def test_broadcasts_and_op_counts() -> None:
    more = ROUND_TRIP.replace(
        "fd.add_output(tv16)",
        "tv17 = fd.ops.expand(tv16, shape=[2048, 8192])\n    tv18 = fd.ops.neg(tv17)",
    )
    said = texts(diff(capture(definitions=(more,))))
    assert "broadcasts (base -> head): expand 1 -> 2" in said
    assert "op counts (base -> head): neg 0 -> 1" in said


def test_segments_scheduler_launch_registers_shared_memory() -> None:
    changed = kernel(scheduler="reduction", grid_str="[132, 1, 1]", registers=128,
                     shared_mem_str="[0, 0]", block_str="[128, 1, 1]")  # fmt: skip
    said = texts(diff(capture(kernels=[changed], segments=2)))
    assert said == [
        "segments 1 -> 2 (base -> head)",
        "kernel scheduler inner_outer_persistent -> reduction (base -> head)",
        "kernel launch grid [1, 264, 1] -> [132, 1, 1] (base -> head)",
        "kernel launch block [8, 32, 1] -> [128, 1, 1] (base -> head)",
        "kernel registers 96 -> 128 (base -> head)",
        "kernel shared memory [50176, 128] -> [0, 0] (base -> head)",
    ]


def test_kernel_count_and_numbered_kernels() -> None:
    said = texts(diff(capture(kernels=[kernel(), kernel(scheduler="pointwise")], segments=2)))
    assert "kernels 1 -> 2 (base -> head)" in said
    two = capture(kernels=[kernel(), kernel()], segments=2)
    assert "kernel 1 registers 96 -> 64 (base -> head)" in texts(
        diff(capture(kernels=[kernel(), kernel(registers=64)], segments=2), two)
    )


def test_missing_profile_is_said_and_not_material() -> None:
    found = diff(replace(capture(), profile=None))
    assert [f.kind for f in found] == ["kernels"]  # no "same program": kernels unseen
    assert found[0].text == "no nvFuser profile of head: kernels not compared"
    assert not found[0].material


def test_renamed_values_only_are_context() -> None:
    renamed = ROUND_TRIP.replace("tv16", "tv99")
    found = diff(capture(definitions=(renamed,)))
    assert [(f.kind, f.material) for f in found] == [("ops", False), ("same-program", False)]


def test_summarise_groups_identical_texts() -> None:
    found = [Finding("fusions", p, v, "no fusion") for p in ("a", "b") for v in ("x", "y")]
    found.append(Finding("saved", "a", "x", "saves more"))
    grouped = summarise(found)
    assert texts(grouped) == ["at 2 points (x, y): no fusion", "saves more"]
    assert grouped[0].point == "a, b"
    assert texts(summarise(found[:2])) == ["at a (x, y): no fusion"]


def test_an_unreadable_definition_is_said_not_raised() -> None:
    broken = capture(definitions=(fusion("tv0 = torch.zeros(3)"),))
    (found,) = diff(broken)
    assert found.text.startswith("head's definitions not compared (/x): line 2: not an nvFuser")
    assert not found.material


def test_a_variant_missing_at_one_side() -> None:
    found = compare_points(point(capture()), point(capture("thunder-func")))
    assert [(f.variant, f.text, f.material) for f in found] == [
        ("thunder-func", "base has no capture of this variant: nothing compared", False),
        ("thunder-prims", "head has no capture of this variant: nothing compared", False),
    ]
    (alone,) = against_handwritten(point(capture()))
    assert alone.text == "no hand-written fusion captured at this point: nothing compared"


def test_the_same_fusion_as_the_handwritten_one() -> None:
    (found,) = against_handwritten(point(capture("nvfuser", saved=()), capture()))
    assert found.kind == "same-program" and not found.material


def test_profiles_of_two_sources_are_not_compared() -> None:
    """nvFuser's own profiler (captures before issue 39) splits shared memory into dynamic and
    static; the measuring process's kernel records give one sum: never a finding between them."""
    old = capture()
    kineto = {**old.profile, "source": "torch.profiler kernel records"}  # type: ignore[dict-item]
    head = replace(capture(kernels=[kernel(shared_mem_str="[50304]")]), profile=kineto)
    found = diff(head, old)
    assert [f.kind for f in found if f.material] == []
    assert any("profiles of two sources" in t and "not compared" in t for t in texts(found))
    both = replace(head, profile={**kineto, "kernel_profiles": [kernel(registers=128)]})
    assert "registers" in " ".join(texts(diff(both, head)))

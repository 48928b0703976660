"""The definition parser and summary on small hand-made texts: each count the comparer diffs."""

from __future__ import annotations

import pytest

from bot.fusion.definition import DefinitionError, parse, short_dtype
from bot.fusion.summary import summarise

HEAD = "def nvfuser_fusion(fd : FusionDefinition) -> None :\n"
BF16_2D = "shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False"


def fusion(*lines: str) -> str:
    return HEAD + "".join(f"    {line}\n" for line in lines)


#: The shape of Thunder 0.2.6's backward: the saved bf16 [M, 1] cast up, sqrt, down, up.
ROUND_TRIP = fusion(
    "tv0 = fd.define_tensor(shape=[2048, 1], contiguity=[True, None], "
    "dtype=DataType.BFloat16, is_cpu=False)",
    "tv4 = fd.ops.cast(tv0, dtype=DataType.Float)",
    "tv5 = fd.ops.sqrt(tv4)",
    "tv8 = fd.ops.cast(tv5, dtype=DataType.BFloat16)",
    "tv11 = fd.ops.expand(tv8, shape=[2048, 8192])",
    "tv13 = fd.ops.cast(tv11, dtype=DataType.Float)",
    "tv15 = fd.ops.reciprocal(tv13)",
    "c1 = fd.ops.reciprocal(8192.00)",
    "tv16 = fd.ops.mul(tv15, c1)",
    "fd.add_output(tv16)",
)


def test_dtypes_follow_define_tensor_cast_and_the_wide_input() -> None:
    parsed = parse(
        fusion(
            f"tv0 = fd.define_tensor({BF16_2D})",
            "tv1 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], "
            "dtype=DataType.Float, is_cpu=False)",
            "tv2 = fd.ops.neg(tv0)",
            "tv3 = fd.ops.mul(tv0, tv1)",
            "tv4 = fd.ops.cast(tv3, dtype=DataType.Half)",
            "s0 = fd.define_scalar(2.0, dtype=DataType.Double)",
            "tv5 = fd.ops.mul(2.00000, tv4)",
            "fd.add_output(tv5)",
        )
    )
    assert [(i.name, i.dtype, i.shape) for i in parsed.inputs] == [
        ("tv0", "bf16", (-1, -1)),
        ("tv1", "fp32", (-1, 1)),
    ]
    assert {k: parsed.dtypes[k] for k in ("tv2", "tv3", "tv4", "s0", "tv5")} == {
        "tv2": "bf16", "tv3": "fp32", "tv4": "fp16", "s0": "fp64", "tv5": "fp16",
    }  # fmt: skip
    assert parsed.ops[-1].inputs == ("tv4",)  # the literal is not an input
    assert parsed.outputs == ("tv5",)


def test_casts_by_dtype_pair_count_tensors_only() -> None:
    summary = summarise((ROUND_TRIP,))
    assert summary.casts == {"bf16->fp32": 2, "fp32->bf16": 1}
    scalar = fusion(f"tv0 = fd.define_tensor({BF16_2D})", "c0 = fd.ops.size(tv0, dim=0)",
                    "c1 = fd.ops.cast(c0, dtype=DataType.Float)")  # fmt: skip
    assert summarise((scalar,)).casts == {}
    assert summarise((scalar,)).ops == {}


def test_round_trip_is_named_with_its_origin() -> None:
    (trip,) = summarise((ROUND_TRIP,)).round_trips
    assert trip.words == "bf16 -> fp32 -> bf16 -> fp32"
    assert trip.origin is not None and trip.origin.shape == (2048, 1)
    assert trip.narrowed == "sqrt" and trip.between == ("expand",)


def test_compute_in_fp32_and_store_in_bf16_is_no_round_trip() -> None:
    text = fusion(
        f"tv0 = fd.define_tensor({BF16_2D})",
        "tv1 = fd.ops.cast(tv0, dtype=DataType.Float)",
        "tv2 = fd.ops.exp(tv1)",
        "tv3 = fd.ops.cast(tv2, dtype=DataType.BFloat16)",
        "fd.add_output(tv3)",
    )
    assert summarise((text,)).round_trips == ()


def test_math_counts_tensor_pow_sqrt_reciprocal_div() -> None:
    summary = summarise((ROUND_TRIP,))
    assert summary.math == {"sqrt": 1, "reciprocal": 1}  # the scalar reciprocal is folded


def test_reductions_broadcasts_and_extents() -> None:
    text = fusion(
        "tv0 = fd.define_tensor(shape=[2048, 8192], contiguity=[True, True], "
        "dtype=DataType.Float, is_cpu=False)",
        "tv1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)",
        "tv2 = fd.ops.sum(tv0, dims=[1], dtype=DataType.Float)",
        "tv3 = fd.ops.max(tv0, dims=[0, 1])",
        "tv4 = fd.ops.broadcast(tv2, is_broadcast_dim=[False, True])",
        "tv5 = fd.ops.expand(tv4, shape=[2048, 8192])",
        "tv6 = fd.ops.expand(tv4, shape=[2048, 8192])",
    )
    summary = summarise((text,))
    assert summary.reductions == {"sum over [1]": 1, "max over [0, 1]": 1}
    assert summary.broadcasts == {"broadcast": 1, "expand": 2}
    assert summary.fixed_extents == (2048, 8192) and summary.symbolic_extents == 1


def test_fusions_are_counted() -> None:
    assert summarise(()).fusions == 0
    assert summarise((ROUND_TRIP, ROUND_TRIP)).fusions == 2
    assert summarise((ROUND_TRIP, ROUND_TRIP)).casts["bf16->fp32"] == 4


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("tv9 = torch.ops.mul(tv0, tv0)", "line 3: not an nvFuser definition line"),
        ("tv1 = fd.ops.mul(tv7, tv0)", "tv7 is used before it is defined"),
        ("tv1 = fd.ops.mul(tv0, [1, 2)", "unbalanced brackets"),
    ],
)
def test_unknown_lines_are_refused_with_the_line(line: str, says: str) -> None:
    with pytest.raises(DefinitionError, match=says):
        parse(fusion(f"tv0 = fd.define_tensor({BF16_2D})", line))


def test_short_dtype_names() -> None:
    assert short_dtype("DataType.BFloat16") == "bf16"
    assert short_dtype("thunder.dtypes.float32") == "fp32"
    assert short_dtype("DataType.Weird") == "Weird"


def test_a_round_trip_through_a_no_op_cast_and_a_broadcast() -> None:
    text = fusion(
        f"tv0 = fd.define_tensor({BF16_2D})",
        "tv1 = fd.ops.cast(tv0, dtype=DataType.Float)",
        "tv2 = fd.ops.sum(tv1, dims=[1], dtype=DataType.Float)",
        "tv3 = fd.ops.cast(tv2, dtype=DataType.BFloat16)",
        "tv4 = fd.ops.broadcast(tv3, is_broadcast_dim=[False, True])",
        "tv5 = fd.ops.cast(tv4, dtype=DataType.BFloat16)",
        "tv6 = fd.ops.cast(tv5, dtype=DataType.Float)",
    )
    (trip,) = summarise((text,)).round_trips
    assert (trip.words, trip.narrowed, trip.between) == ("fp32 -> bf16 -> fp32", "sum",
                                                         ("broadcast", "cast"))  # fmt: skip
    assert trip.origin is None  # a sum of the input, not the input itself


def test_literals_are_not_values_and_scalars_do_not_promote() -> None:
    parsed = parse(
        fusion(
            f"tv0 = fd.define_tensor({BF16_2D})",
            "s0 = fd.define_scalar(0.5, dtype=DataType.Double)",
            "tv1 = fd.ops.mul(tv0, s0)",
            "tv2 = fd.ops.reshape(tv1, [2048, 8192])",
            "tv3 = fd.ops.where(tv2, -inf, True)",
        )
    )
    assert parsed.dtypes["tv1"] == "bf16"
    assert [op.inputs for op in parsed.ops] == [("tv0", "s0"), ("tv1",), ("tv2",)]

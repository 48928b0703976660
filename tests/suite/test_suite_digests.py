"""What a record fingerprints (benchmarks/engine/digest.py), on the definitions the H200
printed: the canonical form is the same for two runs of identical code (which the printed text
is not: issue 38), differs between any two fusions, and changes with the math; the engine and
each fusion's Thunder side are digested apart, so a change says whose it is."""

from __future__ import annotations

from paths import DATA

from benchmarks.engine import digest
from benchmarks.fusions.catalog import FUSIONS

CAPTURES = DATA / "h200-catalog" / "captures"


def _definitions(side: str) -> dict[str, str]:
    """Every hand-written definition one recorded capture printed, by fusion and point."""
    root = CAPTURES / side
    found = {}
    for path in sorted(root.rglob("nvfuser/definition.py.txt")):
        found[path.parent.parent.relative_to(root).as_posix()] = path.read_text()
    return found


def test_identical_code_prints_differently_and_canonically_the_same() -> None:
    one, two = _definitions("stock-1"), _definitions("stock-2")
    assert one.keys() == two.keys() and len(one) == 17  # RMSNorm backward's 4 points + 13
    printed = [k for k in one if one[k] != two[k]]
    assert len(printed) >= 4, printed  # the printer's choice of tensor for a size op
    for key in one:
        assert digest.canonical_sha256(one[key]) == digest.canonical_sha256(two[key]), key


def test_the_canonical_form_tells_the_math_apart() -> None:
    one = _definitions("stock-1")
    by_fusion = {k: v for k, v in one.items() if "/" in k or k.startswith("bfloat16_2048")}
    shas = [digest.canonical_sha256(v) for v in by_fusion.values()]
    assert len(set(shas)) == len(shas)  # every fusion its own
    text = one["softmax_bwd/bfloat16_16384x4096"]
    for old, new in (("fd.ops.sub(", "fd.ops.add("), ("dims=[1]", "dims=[0]"), ("Float", "Half")):
        assert old in text
        changed = text.replace(old, new, 1)
        assert digest.canonical_sha256(changed) != digest.canonical_sha256(text), old


def test_renumbering_and_size_ops_alone_do_not_change_it() -> None:
    text = (
        "    tv4 = fd.define_tensor(shape=[-1, -1])\n    tv9 = fd.ops.mul(tv4, tv4)\n"
        "    c7 = fd.ops.size(tv9, dim=0)\n    fd.add_output(tv9)\n"
    )
    other = text.replace("tv4", "tv1").replace("tv9", "tv2").replace("size(tv2", "size(tv1")
    assert digest.canonical_sha256(text) == digest.canonical_sha256(other)
    assert digest.canonical_sha256(text) != digest.canonical_sha256(text.replace("dim=0", "dim=1"))


def test_the_engine_and_each_thunder_side_are_digested_apart() -> None:
    names = {p.relative_to(digest.ROOT).as_posix() for p in digest.engine_files()}
    assert "benchmarks/engine/timing.py" in names and "benchmarks/size_sets.toml" in names
    assert not any(n.startswith("benchmarks/fusions/") and n.endswith(("softmax.py", "gelu.py"))
                   for n in names)  # fmt: skip
    assert "benchmarks/fusions/rmsnorm.py" not in names  # RMSNorm's math is a fusion's
    thunder = {name: digest.thunder_digest(f) for name, f in FUSIONS.items()}
    assert len(set(thunder.values())) == len(thunder)
    gelu = digest.fusion_digests([FUSIONS["gelu_bwd"]])
    assert gelu == {"gelu_bwd": {"thunder": thunder["gelu_bwd"]}}
    assert len(digest.engine_digest()) == len(digest.suite_digest()) == 16

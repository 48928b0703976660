"""The hints beyond RMSNorm backward, on the catalog's real captures (data/h200-catalog/captures:
two captures of every fusion's `pr` points on the stock H200 stack): each fusion read from its
own folder, forward fusions told as forward, the dropout mask drawn again found by name, a
standing gap's clue under its level line, and a reproducer for every fusion."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from paths import DATA, run_bot

from bot.fusion.compare import against_handwritten, compare_points, summarise
from bot.fusion.read import has_fusion, read_side
from bot.fusion.repro import reproducer
from bot.fusion.repro_catalog import catalog_script
from bot.results.types import BadInput

CAPTURES = DATA / "h200-catalog" / "captures"
STOCK_1, STOCK_2 = CAPTURES / "stock-1", CAPTURES / "stock-2"
PAIR = DATA / "h200-catalog" / "pair"
POINT = "bfloat16 16384x4096"


def _against(fusion: str) -> list[str]:
    side = read_side(STOCK_2, fusion)
    return [f.text for f in summarise([f for p in side.values() for f in against_handwritten(p)])]


def test_each_fusion_is_read_from_its_own_folder() -> None:
    rmsnorm = read_side(STOCK_1)  # RMSNorm backward's points sit in the side's folder itself
    assert sorted(rmsnorm) == [
        "bfloat16 16384x8192", "bfloat16 2048x8192", "float32 16384x8192", "float32 2048x8192"
    ]  # fmt: skip
    softmax = read_side(STOCK_1, "softmax_fwd")
    assert list(softmax) == [POINT] and softmax[POINT].call == "forward"
    assert read_side(STOCK_1, "softmax_bwd")[POINT].call == "backward"
    assert set(softmax[POINT].variants) == {"nvfuser", "thunder-prims", "thunder-func"}
    assert has_fusion(STOCK_1, "gelu_bwd")


def test_a_side_without_a_fusion_has_none_and_a_stray_folder_is_bad(tmp_path: Path) -> None:
    side = tmp_path / "side"
    shutil.copytree(STOCK_1 / "gelu_fwd", side / "gelu_fwd")
    assert not has_fusion(side, "rmsnorm_bwd") and has_fusion(side, "gelu_fwd")
    assert not has_fusion(side, "softmax_bwd")  # a catalog fusion this side did not capture
    (side / "gelu_fwd" / "notes").mkdir()
    with pytest.raises(BadInput, match="not a point folder"):
        read_side(side, "gelu_fwd")


def test_the_same_stack_captured_twice_is_the_same_program() -> None:
    for fusion in ("softmax_bwd", "dropout_rmsnorm_bwd", "gelu_fwd"):
        base, head = read_side(STOCK_1, fusion)[POINT], read_side(STOCK_2, fusion)[POINT]
        found = compare_points(base, head)
        assert not any(f.material for f in found), fusion
        same = {f.variant for f in found if f.kind == "same-program"}
        assert same == set(head.variants), fusion


def test_a_forward_fusion_is_told_as_a_forward() -> None:
    point = read_side(STOCK_2, "gelu_fwd")[POINT]
    thunder = replace(point.variants["thunder-prims"], definitions=())
    head = replace(point, variants={**point.variants, "thunder-prims": thunder})
    texts = [f.text for f in compare_points(point, head)]
    assert "head's forward has no nvFuser fusion (base: 1)" in texts


def test_the_dropout_mask_drawn_again_is_named() -> None:
    """Fuser#4625's cause: Thunder's F.dropout backward draws the mask again (uniform); the
    rand_like form and the hand-written fusion read it back, and the forwards both draw it."""
    drawn = "Thunder draws random numbers in the backward (1 uniform), the hand-written fusion none"
    for fusion in ("dropout_rmsnorm_bwd", "dropout_layernorm_bwd"):
        side = read_side(STOCK_2, fusion)[POINT]
        func = [f.text for f in against_handwritten(side) if f.variant == "thunder-func"]
        prims = [f.text for f in against_handwritten(side) if f.variant == "thunder-prims"]
        assert any(t.startswith(drawn) for t in func), func
        assert not any("random" in t for t in prims)
    assert not any("random" in t for t in _against("dropout_rmsnorm_fwd"))


@pytest.fixture(scope="module")
def catalog_comment() -> str:
    done = run_bot(
        "report",
        *("--results", str(PAIR / "rep-1"), "--results", str(PAIR / "rep-2")),
        *("--base", "6a438ce9", "--head", "e0cdef8e"),
        *("--captures-base", str(STOCK_1), "--captures-head", str(STOCK_2)),
    )
    assert done.returncode == 1, done.stderr  # Bias+GELU backward regressed
    return done.stdout


def _clues(comment: str) -> dict[str, str]:
    """Each level line's fusion and the clue under it, if any."""
    lines = comment.splitlines()
    out = {}
    for line, after in zip(lines, [*lines[1:], ""], strict=True):
        match = re.match(r"- (.+?): ", line)
        if match and after.startswith("  - differs inside"):
            out[match[1].replace("\\", "")] = after
    return out


def test_a_standing_gap_gets_its_clue_under_its_level(catalog_comment: str) -> None:
    clues = _clues(catalog_comment)
    assert set(clues) == {
        "Dropout+RMSNorm backward",
        "Dropout+LayerNorm backward",
        "LayerNorm backward",
        "Softmax backward",
    }
    assert "(thunder-func): Thunder draws random numbers" in clues["Dropout+RMSNorm backward"]
    assert "(thunder-prims): Thunder reduces 3 x sum over" in clues["Softmax backward"]
    assert "a round trip" in clues["LayerNorm backward"]


def test_the_moved_fusion_has_its_hints_and_no_script_in_the_comment(
    catalog_comment: str,
) -> None:
    """Bias+GELU backward moved: its section has the hints (head and base run one program: the
    5% is a sleep kernel launched beside it, which the runs' kernel lists name first), none of
    the standing differences from the hand-written fusion is under it, and its script goes to
    the issue, not the comment."""
    assert "Bias+GELU backward: What changed inside the fusion" in catalog_comment
    section = catalog_comment[catalog_comment.index("Bias+GELU backward: What changed") :]
    section = section[: section.index("</details>")]
    first = section.split("\n- ", 1)[1]
    where = "at bfloat16 16384x4096 \\(thunder-func, thunder-prims\\)"
    assert first.startswith(f"{where}: head launches 1 more kernel in Thunder's timed call")
    assert "adds at::cuda::\\(anonymous namespace\\)::spin\\_kernel" in first.splitlines()[0]
    assert "the same compiled program at base and head" in section
    assert "the change is in the kernels the timed call launches beside it" in section
    assert "nothing new: the 6 differences from the hand-written fusion" in section
    assert "op counts" not in section  # standing: at base too
    assert "```python" not in catalog_comment


@pytest.mark.parametrize("variant", ["nvfuser", "thunder-prims", "thunder-func"])
@pytest.mark.parametrize("fusion", ["softmax_bwd", "gelu_fwd"])
def test_every_fusion_has_a_reproducer_that_parses(fusion: str, variant: str) -> None:
    what, script = reproducer(variant, "bfloat16", "16384x4096", None, "stock", fusion)
    compile(script, "repro.py", "exec")  # valid Python
    assert f"FUSIONS[{fusion!r}]" in script and "make_inputs(16384, 4096, 'bfloat16', 0)" in script
    if variant != "nvfuser":
        backward = fusion.endswith("_bwd")
        assert ("last_backward_traces" in script) == backward
        assert ("y.backward(" in script) == backward
        assert "thunder script" in what.lower()


def test_a_reproducer_takes_only_known_names() -> None:
    """The names come from the run's files: an unknown fusion never lands in a script."""
    with pytest.raises(ValueError, match="no reproducer"):
        catalog_script("x'); import os; os.system('id'); ('", "thunder-prims", "bfloat16", "8x8")
    with pytest.raises(ValueError, match="no reproducer"):
        catalog_script("softmax_bwd", "thunder-eager", "bfloat16", "8x8")


def test_a_run_captures_beside_its_results_only_what_it_was_asked_to() -> None:
    """run_gpu.sh --capture end to end on the H200 (data/h200-catalog, call 8): RMSNorm and
    Softmax backward measured, RMSNORM_BENCH_CAPTURE_FUSIONS=softmax_bwd: Softmax backward's
    captures beside the run's asv results, where the bot looks, and none of RMSNorm's."""
    machine = DATA / "h200-catalog" / "e2e-capture" / "results" / "nvidia-h200"
    (results,) = [p for p in machine.glob("*.json") if p.name != "machine.json"]
    (captures,) = machine.glob("*.captures")
    assert captures.name.startswith(results.name.split("-", 1)[0])  # the run's commit
    assert has_fusion(captures, "softmax_bwd") and not has_fusion(captures, "rmsnorm_bwd")
    (point,) = read_side(captures, "softmax_bwd").values()
    assert (point.dtype, point.shape, point.call) == ("bfloat16", "256x1024", "backward")
    assert all(not v.errors for v in point.variants.values())

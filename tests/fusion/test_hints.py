"""The root-cause hints end to end: attribution rules, the reproducer, and what the comment and
the issues say on the real regressed pair (data/h200 with its captures, data/h200-captures)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from paths import DATA, REPO_ROOT

from bot.fusion.attribute import FUSER, THUNDER, attribute
from bot.fusion.repro import reproducer, thunder_script
from bot.fusion.types import Finding
from bot.tell.hints import _fence

STOCK = DATA / "h200-captures" / "stock-0.2.6"
UNFUSED = DATA / "h200-captures" / "unfused-backward-0.2.6"
NIGHTLY = DATA / "h200-captures" / "stock-0.2.7.dev20260201"
RESULTS = DATA / "h200" / "results"


def finding(kind: str, variant: str = "thunder-prims", material: bool = True) -> Finding:
    return Finding(kind, "bfloat16 2048x8192", variant, f"a {kind} change", material)


def test_attribution_follows_the_evidence() -> None:
    same = {"thunder": "0.2.6", "nvfuser": "0.2.36"}
    # Thunder's program changed and Thunder's kernels moved: Thunder.
    a = attribute(["thunder", "ratio"], same, same, None, [finding("saved")])
    assert a.owner == THUNDER and a.repository == "Lightning-AI/lightning-thunder"
    # Same program, a new schedule, and the hand-written fusion slower: nvFuser.
    a = attribute(["nvfuser"], same, same, None, [finding("scheduler", "nvfuser")])
    assert a.owner == FUSER and a.repository == "NVIDIA/Fuser"
    # Only nvFuser's version changed: nvFuser, whatever moved.
    a = attribute(["ratio"], same, {**same, "nvfuser": "0.2.37"}, None, [])
    assert a.owner == FUSER and "0.2.36 -> 0.2.37" in a.reasons[0][1]
    # The package under test is the prime suspect.
    a = attribute(["thunder"], same, same, "thunder", [])
    assert a.owner == THUNDER
    # Context only (same program), nothing moved: no owner, no guess.
    a = attribute([], same, same, None, [finding("same-program", material=False)])
    assert a.owner is None and a.reasons == ()
    # A tie names no owner.
    a = attribute(["nvfuser"], same, {**same, "thunder": "0.2.7"}, None, [])
    assert a.owner is None


def test_the_thunder_reproducer_is_valid_python_and_follows_the_state() -> None:
    stock = thunder_script("thunder-func", "float16", "512x4096")
    unfused = thunder_script("thunder-func", "float16", "512x4096", "unfused-backward")
    for script in (stock, unfused):
        compile(script, "repro", "exec")
        assert "torch.nn.functional.rms_norm" in script and "512, 4096" in script
    assert "set_fuel" not in stock and "nvfuserex.set_fuel(1)" in unfused
    with pytest.raises(ValueError):
        thunder_script("eager", "bfloat16", "2048x8192")
    with pytest.raises(ValueError):
        thunder_script("thunder-prims", "bfloat16", "2048x8192; import os")
    with pytest.raises(ValueError, match="no captured nvFuser repro"):
        reproducer("nvfuser", "bfloat16", "2048x8192", None, "stock")


def test_a_captured_script_cannot_close_the_fence() -> None:
    code = "x = 1\n```\n<img src=x onerror=alert(1)>\n````"
    fenced = _fence(code)
    fence = fenced.splitlines()[0].removesuffix("python")
    assert len(fence) == 5 and fenced.rstrip().endswith("\n" + fence)
    assert fence not in code


def _report(*extra: str) -> subprocess.CompletedProcess[str]:
    args = ["--results", str(RESULTS), "--base", "06f650c8", "--head", "9dc51696", *extra]
    return subprocess.run(
        [sys.executable, "-m", "bot", "report", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        check=False,
    )


def test_the_regressed_pair_says_what_changed_and_who_owns_it() -> None:
    done = _report("--captures-base", str(STOCK), "--captures-head", str(UNFUSED))
    assert done.returncode == 1, done.stderr
    out = done.stdout
    section = out[out.index("What changed inside the fusion") :]
    assert "head's backward has no nvFuser fusion \\(base: 1\\)" in section
    assert "likely owner Lightning-AI/lightning-thunder" in section
    assert "**Reproducer** for thunder-prims bfloat16 16384x8192" in section
    assert "nvfuserex.set_fuel(1)" in section
    # Without captures the comment is what it was: no section.
    plain = _report()
    assert plain.returncode == 1 and "What changed inside the fusion" not in plain.stdout


def test_one_side_of_captures_or_a_missing_folder_is_bad_input() -> None:
    assert _report("--captures-base", str(STOCK)).returncode == 3
    done = _report("--captures-base", str(STOCK), "--captures-head", str(STOCK / "nope"))
    assert done.returncode == 3 and "no such captures folder" in done.stderr


def test_the_demo_files_the_ratio_issue_first_in_thunder_with_the_hints() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot", "demo"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "### What changed inside the fusion" in out  # open, in the issue bodies
    assert "Likely owner: Lightning-AI/lightning-thunder" in out
    first_ratio = next(line for line in out.splitlines() if line.startswith("issue (ratio)"))
    assert "in Lightning-AI/lightning-thunder" in first_ratio


def test_the_bot_finds_captures_where_run_gpu_sh_wrote_them() -> None:
    """data/h200-smoke-capture: `run_gpu.sh --capture` on the H200, results and captures as
    written; the bot's lookup beside the results finds and reads them."""
    from bot.commands.captures import _beside
    from bot.fusion.read import read_side
    from bot.results.locate import list_commits, load_commit

    results = DATA / "h200-smoke-capture" / "results"
    (commit,) = list_commits(results)
    run = load_commit(results, commit.commit)
    folder = _beside((run,))
    assert folder is not None and folder.name == f"{run.commit}.captures"
    (point,) = read_side(folder).values()
    assert sorted(point.variants) == ["nvfuser", "thunder-func", "thunder-prims"]
    assert all(not v.errors for v in point.variants.values())
    log = (DATA / "h200-smoke-capture" / "run.log").read_text(encoding="utf-8")
    assert "runner check before: ok" in log and "(asv status 0)" in log

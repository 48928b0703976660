"""A catalog on a machine no noise model covers: the machine's reason and the steps that make it
a judge are said once, and every fusion gets one line of figures as measured, largest change
first, with no verdict (found on real data: the whole catalog's A/A PR job on an H100,
data/h100-issue39/call7, whose comment said the same paragraph and fold 14 times in 19,252
characters, each fusion's four guard lines reading "no change" whatever they measured).

A break is no noise: a fusion whose points fail at head keeps its own part.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from machines_helpers import copy_machine
from paths import DATA, REPO_ROOT, run_bot

from bot.alert.decision import Unit
from bot.commands.cli import load
from bot.commands.inputs import Selection
from bot.exitcodes import ExitCode
from bot.tell.comment import render_report
from bot.tell.context import Context

H100_AA = DATA / "h100-issue39" / "call7" / "catalog-after"
PAIR = DATA / "h200-catalog" / "pair"  # Bias+GELU backward's Thunder made 5% slower at head
PAIR_BASE, PAIR_HEAD = "6a438ce9", "e0cdef8e"
REPEATS = ("rep-1", "rep-2")
REASON = "**Not judged: no noise model covers "
STEPS = "How to make this runner a judge"


def _report(results: list[Path], base: str, head: str) -> tuple[int, str]:
    folders = [x for r in results for x in ("--results", str(r))]
    done = run_bot("report", *folders, "--base", base, "--head", head, "--format", "markdown")
    return done.returncode, done.stdout


def _listed(out: str) -> list[str]:
    """The figure lines, in their order: after the list's lead, up to the first blank line."""
    lead = out.split("largest change first:\n\n", 1)[1]
    return lead.split("\n\n", 1)[0].splitlines()


def test_a_whole_catalog_not_judged_says_why_once_and_lists_its_figures() -> None:
    code, out = _report([H100_AA / "rep-1", H100_AA / "rep-2"], "fdf52696", "46256876")
    assert code == ExitCode.OK_NO_REGRESSION
    assert out.splitlines()[1] == (
        "### ⚪ 14 fusions: Not judged: no noise model covers nvidia-h100-80gb-hbm3"
    )
    assert out.count(REASON) == 1 and out.count(STEPS) == 1
    assert "⚪ 14 fusions not judged. As measured, head against base" in out
    lines = _listed(out)
    assert len(lines) == 14 and all(" · Thunder " in line for line in lines)
    rmsnorm = "- RMSNorm backward: Thunder/nvFuser +0.3% [-0.2%, +0.9%] · Thunder +0.3% [+0.2%"
    assert any(line.startswith(rmsnorm) for line in lines)
    assert "no change" not in out  # nothing here is judged, so no state is claimed
    assert "**RMSNorm backward**:" not in out  # no part of its own
    assert len(out) < 19_252 / 3  # each fusion with its own part took 19,252 (CHANGELOG)


def test_the_largest_change_comes_first_and_reads_as_measured(tmp_path: Path) -> None:
    """The recorded catalog pair as if run on an A100: Bias+GELU backward's +5% (a real slower
    state) leads the list with its figures; nothing is red."""
    results = [copy_machine(PAIR / r, tmp_path / r, "nvidia-a100").parent for r in REPEATS]
    code, out = _report(results, PAIR_BASE, PAIR_HEAD)
    assert code == ExitCode.OK_NO_REGRESSION and "🔴" not in out
    first = _listed(out)[0]
    assert first.startswith("- Bias\\+GELU backward: Thunder/nvFuser +5.2% [+2.2%, +8.3%]")


def test_beside_a_judged_machine_the_steps_name_the_machine_they_are_for(tmp_path: Path) -> None:
    """The same pair measured on the H200 (judged: Bias+GELU backward regressed, exit 1) and on
    an A100 nobody calibrated: the H200's part stands, the A100's reason and steps once."""
    results = []
    for r in REPEATS:
        copy_machine(PAIR / r, tmp_path / r, "nvidia-h200")
        results.append(copy_machine(PAIR / r, tmp_path / r, "nvidia-a100").parent)
    code, out = _report(results, PAIR_BASE, PAIR_HEAD)
    assert code == ExitCode.REGRESSION
    assert "**Bias\\+GELU backward on nvidia-h200**: 🔴" in out
    assert out.count(REASON) == 1 and f"<summary>nvidia-a100: {STEPS}</summary>" in out
    assert "- Bias\\+GELU backward on nvidia-a100: Thunder/nvFuser +5.2%" in out


def test_a_fusion_whose_points_fail_keeps_its_own_part(tmp_path: Path) -> None:
    """The pair as if on an A100, its Bias+GELU backward told that its points fail at head (its
    verdict's broken guard set so: no recorded catalog run breaks one fusion): that fusion keeps
    its own part, the 13 others are listed, the machine's reason is said once."""
    results = [copy_machine(PAIR / r, tmp_path / r, "nvidia-a100").parent for r in REPEATS]
    selection = Selection(tuple(results), PAIR_BASE, PAIR_HEAD, None, REPO_ROOT / "perfbot.toml")
    decision = load(selection, {}).decision

    def broken(unit: Unit) -> Unit:
        assert unit.verdict is not None
        guards = tuple(replace(g, state="broken") if g.kind == "broken" else g
                       for g in unit.verdict.guards)  # fmt: skip
        return replace(unit, verdict=replace(unit.verdict, guards=guards))

    units = tuple(broken(u) if u.fusion == "gelu_bwd" else u for u in decision.units)
    out = render_report(replace(decision, units=units), Context(repo="x/y", pr=1))
    assert "**Bias\\+GELU backward**: " in out and out.count(REASON) == 1
    assert "⚪ 13 fusions not judged. As measured" in out
    assert not any(line.startswith("- Bias\\+GELU backward:") for line in _listed(out))

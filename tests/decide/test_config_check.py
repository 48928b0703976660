"""Configuration that cannot fail silently, on the recorded H200 pair."""

from __future__ import annotations

from pathlib import Path

import pytest
from paths import DATA, REPO_ROOT

from bot.commands import cli
from bot.config import ConfigError, Threshold, VerdictSettings
from bot.decide.config_check import check_gating, unused_thresholds
from bot.exitcodes import ExitCode
from bot.results.locate import load_pair
from bot.tell.markdown import escape_md

RESULTS = DATA / "h200" / "results"
BASE, REGRESSED = "06f650c8", "9dc51696"


def _config(tmp_path: Path, verdict: str) -> Path:
    """A configuration with these [verdict] lines and the shipped H200 noise model (named by
    full path: the file lives elsewhere), so that the H200 results are judged."""
    path = tmp_path / "perfbot.toml"
    model = REPO_ROOT / "noise" / "nvidia-h200.json"
    path.write_text(f'[verdict]\nnoise_model = "{model}"\n{verdict}\n')
    return path


def _report(config: Path) -> list[str]:
    return [
        "report",
        "--results",
        str(RESULTS),
        "--base",
        BASE,
        "--head",
        REGRESSED,
        "--config",
        str(config),
    ]


def test_a_gating_pattern_with_a_typo_is_a_usage_error_not_a_quiet_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: 'thundr-*' made a 5-25x regression read "Inconclusive (no data)", exit 0."""
    config = _config(tmp_path, 'gating_variants = ["thundr-*"]')
    assert cli.main(_report(config), env={}) == ExitCode.USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "step 'check configuration against the results' failed" in captured.err
    assert (
        "pattern 'thundr-*' matches no variant in these results (variants there: eager, "
        "thunder-func, thunder-prims, torch-compile)"
    ) in captured.err


def test_one_good_gating_pattern_does_not_excuse_a_bad_one(tmp_path: Path) -> None:
    config = _config(tmp_path, 'gating_variants = ["thunder-prims", "thunder-fnuc"]')
    assert cli.main(_report(config), env={}) == ExitCode.USAGE


def test_an_unused_threshold_is_a_warning_in_the_comment_and_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(
        tmp_path,
        '[[verdict.thresholds]]\npattern = "thunder-prims/bf16/*"\neffect = 0.05\n'
        '[[verdict.thresholds]]\npattern = "thunder-prims/*"\neffect = 0.04\n'
        '[[verdict.thresholds]]\npattern = "thunder-prims/float32/*"\neffect = 0.06\n',
    )
    assert cli.main(_report(config), env={}) == ExitCode.REGRESSION  # the verdict still runs
    captured = capsys.readouterr()
    warning = "threshold pattern 'thunder-prims/bf16/*' (effect 5.0%) has no effect: it matches "
    assert f"warning: {warning}no point in these results" in captured.err
    # The comment says it in its Notes fold, a line a note.
    notes = captured.out.split("<summary>Notes (2)</summary>", 1)[1].split("</details>")[0]
    lines = notes.strip().split("\n\n")
    assert escape_md(warning + "no point in these results", 300) in lines
    shadowed = "threshold pattern 'thunder-prims/float32/*' (effect 6.0%) has no effect: it "
    assert escape_md(shadowed + "matches only points an earlier pattern sets") in lines


def test_the_shipped_configuration_uses_every_threshold_on_the_pr_set() -> None:
    """No threshold in perfbot.toml may be dead weight (it ships none now)."""
    from bot.config import Config

    settings = Config.from_env({}, REPO_ROOT / "perfbot.toml").verdict
    pair = load_pair(RESULTS, BASE, REGRESSED)
    check_gating(settings, pair)
    assert unused_thresholds(settings, pair) == []
    assert settings.thresholds == ()  # the noise model replaced the per-point thresholds


def test_checks_read_every_side() -> None:
    """A variant present only at head still counts (the head may add one)."""
    base, head = load_pair(RESULTS, BASE, REGRESSED)
    only_head = VerdictSettings(gating=("thunder-*",), thresholds=(Threshold("x/*", 0.1),))
    check_gating(only_head, (head,))
    with pytest.raises(ConfigError, match="matches no variant"):
        check_gating(VerdictSettings(gating=("nvfuser",)), (base, head))  # the reference
    assert len(unused_thresholds(only_head, (base, head))) == 1

"""A calling repository's perfbot.toml (post-results.yml's `config-path`, `pr --caller-config`):
merged over the bot's own, key by key, after the trust rules of bot/config.py refused what a
caller may not set, each with an error naming the key (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from data_helpers import SYNTHETIC_CONFIG, SyntheticResults, synthetic
from paths import REPO_ROOT

from bot.commands import cli
from bot.config import Config, ConfigError
from bot.config_caller import CALLER_BOUNDED, CALLER_REFUSED
from bot.exitcodes import ExitCode

__all__ = ["synthetic"]
OWN = REPO_ROOT / "perfbot.toml"
THUNDER = "Lightning-AI/lightning-thunder"


def _caller(tmp_path: Path, text: str, repo: str | None = THUNDER) -> Config:
    path = tmp_path / "caller.toml"
    path.write_text(text, encoding="utf-8")
    return Config.from_env({}, OWN, path, repo)


def test_a_caller_file_is_merged_key_by_key_over_the_bots_own(tmp_path: Path) -> None:
    own = Config.from_env({}, OWN)
    got = _caller(
        tmp_path,
        '[verdict]\neffect = 0.03\n[[verdict.thresholds]]\npattern = "thunder-*"\neffect = 0.05\n'
        '[alerts]\nopen_on = "push"\n[acknowledge]\nallow_author = true\n'
        '[issues]\nlabel = "perfbot-regression"\nrepos = ["Lightning-AI/lightning-thunder"]\n'
        '[site]\nbase_url = "https://example.org/asv/"\n[results]\nmax_machines = 2\n',
    )
    assert got.verdict.effect == 0.03 and got.verdict.threshold_for("thunder-func/x") == 0.05
    # What the caller did not set is the bot's own, its noise model (its own path) included.
    assert got.verdict.alpha == own.verdict.alpha
    assert got.verdict.noise_models == own.verdict.noise_models != ()
    assert got.alerts.open_on == "push" and got.alerts.allow_author
    assert got.alerts.ack_label == own.alerts.ack_label
    assert got.issue_label == "perfbot-regression" and got.issue_repos == (THUNDER,)
    assert got.site_url == "https://example.org/asv/" and got.max_machines == 2
    # The examples' files are callers' files that pass.
    for name in ("thunder", "fuser"):
        example = REPO_ROOT / "examples" / name / "perfbot.toml"
        assert Config.from_env({}, OWN, example, THUNDER).alerts.open_on == "merge"


REFUSED = {
    "github": '[github]\ncomment_login = "mallory"\n',
    "github.timeout": "[github]\ntimeout_s = 600.0\n",
    "noise_model": '[verdict]\nnoise_model = "/etc/passwd"\n',
    "judge": "[verdict]\njudge_without_noise_model = true\n",
    "docs_url": '[site]\ndocs_url = "https://evil.example/docs/"\n',
    "max_machines": "[results]\nmax_machines = 64\n",
    "repos": '[issues]\nrepos = ["NVIDIA/Fuser", "evil/tracker"]\n',
}
#: The key each error names.
NAMED = {
    "github": "[github]",
    "github.timeout": "[github]",
    "noise_model": "[verdict] noise_model",
    "judge": "[verdict] judge_without_noise_model",
    "docs_url": "[site] docs_url",
    "max_machines": "[results] max_machines = 64 is above the bound 4",
    "repos": "[issues] repos names evil/tracker",
}


@pytest.mark.parametrize("case", REFUSED, ids=REFUSED)
def test_what_a_caller_may_not_set_is_refused_naming_the_key(tmp_path: Path, case: str) -> None:
    with pytest.raises(ConfigError) as err:
        _caller(tmp_path, REFUSED[case])
    assert NAMED[case] in str(err.value) and "caller config" in str(err.value)


def test_the_trust_rules_are_listed_in_one_place_and_each_is_tested() -> None:
    assert set(CALLER_REFUSED) == {
        "github",
        "verdict.noise_model",
        "verdict.judge_without_noise_model",
        "site.docs_url",
    }
    assert set(CALLER_BOUNDED) == {"results.max_machines", "issues.repos"}
    named = " ".join(NAMED.values())
    for key in (*CALLER_REFUSED, *CALLER_BOUNDED):
        table, _, name = key.partition(".")
        assert f"[{table}]" + (f" {name}" if name else "") in named, key


def test_a_caller_may_narrow_what_it_may_not_widen(tmp_path: Path) -> None:
    assert _caller(tmp_path, "[results]\nmax_machines = 1\n").max_machines == 1
    assert _caller(tmp_path, "[results]\nmax_machines = 4\n").max_machines == 4
    # Its own repository, whichever it is, and the two packages' repositories.
    mine = '[issues]\nrepos = ["example-org/thunder-fork", "NVIDIA/Fuser"]\n'
    assert _caller(tmp_path, mine, "example-org/thunder-fork").issue_repos[0] == (
        "example-org/thunder-fork"
    )
    with pytest.raises(ConfigError, match="evil"):
        _caller(tmp_path, '[issues]\nrepos = ["evil/x"]\n', None)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[verdict]\neffekt = 0.03\n", "unknown key(s) in [verdict]: effekt"),
        ('[alerts]\nopen_on = "later"\n', "alerts.open_on"),
        ("[verdict]\neffect = 5\n", "verdict.effect must be between"),
        ("[verdict\n", "not valid TOML"),
        ('[issues]\nlabel = "a\\nb"\n', "issues.label must be"),
    ],
)
def test_a_caller_file_is_checked_by_the_bots_own_loader(
    tmp_path: Path, text: str, named: str
) -> None:
    with pytest.raises(ConfigError) as err:
        _caller(tmp_path, text)
    assert named in str(err.value) and str(tmp_path / "caller.toml") in str(err.value)


def test_pr_refuses_a_caller_file_before_anything_with_exit_2(
    synthetic: SyntheticResults, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "caller.toml"
    bad.write_text('[github]\nissues_login = "mallory"\n', encoding="utf-8")
    argv = [
        "pr",
        *("--results", str(synthetic.results_dir), "--base", synthetic.commits["base"]),
        *("--head", synthetic.commits["thunder_slower"], "--config", str(SYNTHETIC_CONFIG)),
        *("--repo", THUNDER, "--pr", "1", "--caller-config", str(bad)),
    ]
    assert cli.main(argv, env={}) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "[github] may not be set by a caller" in err
    good = tmp_path / "good.toml"
    good.write_text('[issues]\nlabel = "perfbot-regression"\n', encoding="utf-8")
    argv[-1] = str(good)
    assert cli.main([*argv, "--pr-state", "merged"], env={}) == ExitCode.REGRESSION
    assert "perfbot-regression" in capsys.readouterr().out

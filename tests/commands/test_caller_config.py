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
    trial = '[issues]\nrepos = ["self"]\n'
    assert _caller(tmp_path, trial + "[results]\nmax_machines = 1\n").max_machines == 1
    assert _caller(tmp_path, trial + "[results]\nmax_machines = 4\n").max_machines == 4
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
    good.write_text(
        '[issues]\nlabel = "perfbot-regression"\nrepos = ["self", "NVIDIA/Fuser"]\n',
        encoding="utf-8",
    )
    argv[-1] = str(good)
    assert cli.main([*argv, "--pr-state", "merged"], env={}) == ExitCode.REGRESSION
    assert "perfbot-regression" in capsys.readouterr().out
    # A file that names no repository files nowhere else than its own: the bot's default
    # (NVIDIA/Fuser beside the caller) is refused before anything, exit 2.
    good.write_text('[issues]\nlabel = "perfbot-regression"\n', encoding="utf-8")
    assert cli.main([*argv, "--pr-state", "merged"], env={}) == ExitCode.USAGE
    assert "would be filed in NVIDIA/Fuser, which this file does not name" in (
        capsys.readouterr().err
    )


# ----- a fork trial files in the fork, and nowhere else unless the caller's file says so -----

FORK = "example-org/lightning-thunder"
EXAMPLE = REPO_ROOT / "examples" / "thunder" / "perfbot.toml"


def test_the_examples_file_in_the_callers_own_repository_whatever_its_name() -> None:
    """ "self" is the calling repository: a fork's trial files in the fork, the upstream
    repository (copying the same file) in itself; nothing else in either case."""
    for example in ("thunder", "fuser"):
        path = REPO_ROOT / "examples" / example / "perfbot.toml"
        assert Config.from_env({}, OWN, path, FORK).issue_repos == (FORK,)
        assert Config.from_env({}, OWN, path, THUNDER).issue_repos == (THUNDER,)


def test_going_live_names_the_other_repository_in_the_callers_own_file(tmp_path: Path) -> None:
    live = '[issues]\nrepos = ["self", "NVIDIA/Fuser"]\n'
    assert _caller(tmp_path, live).issue_repos == (THUNDER, "NVIDIA/Fuser")
    # Naming the upstream repository by its name is a choice too: said, so allowed.
    upstream = f'[issues]\nrepos = ["{THUNDER}"]\n'
    assert _caller(tmp_path, upstream, FORK).issue_repos == (THUNDER,)


@pytest.mark.parametrize(
    "text",
    ['[alerts]\nopen_on = "merge"\n', '[issues]\nlabel = "x"\n'],
    ids=["no issues table", "no repos"],
)
def test_a_caller_that_names_no_repository_files_nowhere_but_is_told(
    tmp_path: Path, text: str
) -> None:
    """The pinned bot's own default (NVIDIA/Fuser and Lightning-AI/lightning-thunder) is never
    taken for a caller's choice: a fork would file its trial's alerts upstream."""
    with pytest.raises(ConfigError) as err:
        _caller(tmp_path, text, FORK)
    said = str(err.value)
    assert "would be filed in NVIDIA/Fuser, Lightning-AI/lightning-thunder" in said
    assert 'repos = ["self"]' in said and "caller config" in said
    # Upstream itself, with the same file: its own repository is allowed, the other is not.
    with pytest.raises(ConfigError, match="filed in NVIDIA/Fuser, which"):
        _caller(tmp_path, text, THUNDER)
    # With the issues off, nothing is filed anywhere: nothing to refuse.
    off = _caller(
        tmp_path,
        text + "\n[issues]\nenabled = false\n"
        if "[issues]" not in text
        else text + "enabled = false\n",
        FORK,
    )
    assert not off.file_issues


def test_self_needs_the_callers_repository(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match='names "self", but no repository is given'):
        _caller(tmp_path, '[issues]\nrepos = ["self"]\n', None)


def test_a_repository_outside_the_bound_is_refused_even_with_the_issues_off(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match="names evil/tracker"):
        _caller(tmp_path, '[issues]\nenabled = false\nrepos = ["evil/tracker"]\n', FORK)

"""Configuration: the documented file, the environment, validation, and secrets."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot.config import Config, ConfigError, Secret, Threshold, VerdictSettings

ROOT = Path(__file__).resolve().parents[1]


def _toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "perfbot.toml"
    path.write_text(text)
    return path


def test_documented_file_equals_the_built_in_defaults_but_for_the_calibration() -> None:
    shipped = Config.from_env({}, ROOT / "perfbot.toml")
    # the H200 calibration (tests/decide/test_noise.py), relative to the file's folder
    assert shipped.verdict.noise_model == ROOT / "noise" / "nvidia-h200.json"
    assert shipped.verdict.noise_models == (ROOT / "noise" / "nvidia-h200.json",)
    uncalibrated = replace(
        shipped, verdict=replace(shipped.verdict, noise_model=None, noise_models=())
    )
    assert uncalibrated == Config.from_env({}, None) == Config()


def test_environment() -> None:
    env = {
        "GITHUB_TOKEN": "ghs_comment",
        "GITHUB_API_URL": "https://ghe.example.com/api/v3",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "NVIDIA/Fuser",
        "GITHUB_RUN_ID": "123",
        "PERFBOT_SITE_URL": "https://nvidia.github.io/fusion-perfbot/",
        "PERFBOT_DOCS_URL": "https://github.com/o/fusion-perfbot/blob/HEAD/docs/",
    }
    c = Config.from_env(env, None)
    assert c.docs_url == "https://github.com/o/fusion-perfbot/blob/HEAD/docs/"
    assert c.comment_token is not None and c.comment_token.reveal() == "ghs_comment"
    assert c.issues_token is c.comment_token  # falls back
    assert c.api_url == "https://ghe.example.com/api/v3"
    assert c.run_url == "https://github.com/NVIDIA/Fuser/actions/runs/123"
    assert c.site_url == "https://nvidia.github.io/fusion-perfbot/"
    assert c.comment_login is None and c.issues_login is None


def test_separate_issues_token_and_actions_login() -> None:
    env = {"GITHUB_TOKEN": "a", "PERFBOT_ISSUES_TOKEN": "b", "GITHUB_ACTIONS": "true"}
    c = Config.from_env(env, None)
    assert c.issues_token is not None and c.issues_token.reveal() == "b"
    assert c.comment_login == "github-actions[bot]"
    assert c.issues_login is None  # a PAT or App token: ask GitHub who it is
    same = Config.from_env({"GITHUB_TOKEN": "a", "GITHUB_ACTIONS": "true"}, None)
    assert same.issues_login == "github-actions[bot]"


def test_no_token_means_dry() -> None:
    c = Config.from_env({"GITHUB_TOKEN": "  "}, None)
    assert c.comment_token is None and c.issues_token is None


def test_secrets_never_show() -> None:
    env = {"GITHUB_TOKEN": "ghp_supersecret", "PERFBOT_ISSUES_TOKEN": "ghp_other"}
    c = Config.from_env(env, None)
    for text in (repr(c), str(c), f"{c}", repr(c.comment_token), f"{c.issues_token}"):
        assert "supersecret" not in text and "ghp_other" not in text
    assert str(Secret("x")) == "'***'" and format(Secret("x"), ">10") == "***"


def test_file_values(tmp_path: Path) -> None:
    path = _toml(
        tmp_path,
        """
[verdict]
effect = 0.03
alpha = 0.05
gating_variants = ["thunder-prims"]
[[verdict.thresholds]]
pattern = "*/*/16x*"
effect = 0.1
[site]
base_url = "https://example.org/bench"
[issues]
repos = ["a/b"]
label = "perf"
[results]
machine = "h200-nvidia-h200"
""",
    )
    c = Config.from_env({}, path)
    assert c.verdict.effect == 0.03 and c.verdict.alpha == 0.05
    assert c.verdict.thresholds == (Threshold("*/*/16x*", 0.1),)
    assert c.site_url == "https://example.org/bench"
    assert c.issue_repos == ("a/b",) and c.issue_label == "perf"
    assert c.machine == "h200-nvidia-h200"
    env = Config.from_env({"PERFBOT_SITE_URL": "https://other.org/"}, path)
    assert env.site_url == "https://other.org/"


def test_threshold_patterns_first_match_wins() -> None:
    s = VerdictSettings(
        effect=0.02,
        thresholds=(Threshold("thunder-func/*/*", 0.05), Threshold("*/float32/*", 0.04)),
    )
    assert s.threshold_for("thunder-func/float32/2048x8192") == 0.05
    assert s.threshold_for("thunder-prims/float32/2048x8192") == 0.04
    assert s.threshold_for("thunder-prims/bfloat16/2048x8192") == 0.02
    assert s.is_gating("thunder-prims") and not s.is_gating("eager")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[verdict]\neffect = -0.1", "verdict.effect must be between"),
        ("[verdict]\neffect = 'big'", "verdict.effect must be a number"),
        ("[verdict]\neffect = nan", "verdict.effect must be a number"),
        ("[verdict]\nalpha = inf", "verdict.alpha must be a number"),
        ("[verdict]\nthresholds = [{pattern = 'x', effect = nan}]", "effect must be a number"),
        ("[github]\nmax_retry_wait_s = -inf", "github.max_retry_wait_s must be a number"),
        ("[verdict]\neffect = true", "verdict.effect must be a number"),
        ("[verdict]\nalpha = 0.5", "verdict.alpha must be between"),
        ("[verdict]\nmin_samples = 1", "verdict.min_samples must be an integer"),
        ("[verdict]\nefect = 0.1", r"unknown key\(s\) in \[verdict\]: efect"),
        ("[verdict]\nthresholds = [{effect = 0.1}]", "thresholds\\[0\\].pattern is required"),
        ("[verdict]\nthresholds = [{pattern = 'a b', effect = 0.1}]", "pattern must be a string"),
        ("[issues]\nrepos = ['not a repo']", "issues.repos must be a list"),
        ("[issues]\nrepos = []", "issues.repos is empty"),
        ("[issues]\nenabled = 'yes'", "issues.enabled must be true or false"),
        ("[site]\nbase_url = 'javascript:alert(1)'", "site.base_url must be a string"),
        ("[site]\nbase_url = 'https://x.org/a)b'", "site.base_url must be a string"),
        ("[github]\ntimeout_s = 0", "github.timeout_s must be between"),
        ("[github]\ncomment_login = 'a b'", "github.comment_login must be"),
        ("verdict = 3", r"\[verdict\] must be a table"),
        ("[verdict", "not valid TOML"),
    ],
)
def test_bad_values_are_usage_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Config.from_env({}, _toml(tmp_path, text))


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"GITHUB_API_URL": "ftp://x"}, "GITHUB_API_URL"),
        (
            {"GITHUB_REPOSITORY": "no-slash", "GITHUB_SERVER_URL": "https://github.com"},
            "GITHUB_REPOSITORY",
        ),
        ({"GITHUB_RUN_ID": "12; rm -rf /"}, "GITHUB_RUN_ID"),
        ({"GITHUB_TOKEN": "abc\ndef"}, "GITHUB_TOKEN contains whitespace"),
        ({"PERFBOT_COMMENT_LOGIN": "@everyone"}, "PERFBOT_COMMENT_LOGIN"),
    ],
)
def test_bad_environment(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Config.from_env(env, None)


def test_error_message_never_shows_a_token() -> None:
    with pytest.raises(ConfigError) as info:
        Config.from_env({"GITHUB_TOKEN": "ghp_secret value"}, None)
    assert "ghp_secret" not in str(info.value)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        Config.from_env({}, tmp_path / "missing.toml")

"""Configuration: a TOML file (perfbot.toml documents every key and its default) plus the
environment GitHub Actions provides. Everything is validated up front, so a typo is a usage
error before any result is read or anything is posted; tokens are wrapped so no log shows them.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bot.config_read import (
    LABEL_RE,
    LOGIN_RE,
    NAME_RE,
    PATH_RE,
    REPO_RE,
    URL_RE,
    ConfigError,
    Secret,
    Table,
    read_toml,
)

__all__ = ["Config", "ConfigError", "Secret", "Threshold", "VerdictSettings"]
DEFAULT_REPOS = ("NVIDIA/Fuser", "Lightning-AI/lightning-thunder")


@dataclass(frozen=True)
class Threshold:
    pattern: str  # fnmatch on "variant/dtype/shape"
    effect: float


@dataclass(frozen=True)
class VerdictSettings:
    """See bot/decide/verdict.py for how each is used and why these defaults."""

    effect: float = 0.02
    kernel_effect: float = 0.02
    broad_effect: float = 0.01
    thresholds: tuple[Threshold, ...] = ()
    alpha: float = 0.01
    gating: tuple[str, ...] = ("thunder-*",)
    min_samples: int = 10
    resamples: int = 4000
    seed: int = 20240611
    noise_model: Path | None = None  # the first of noise_models (flows that use one model)
    #: One per machine kind, resolved against the config file's folder; each machine's verdict
    #: uses the model measured on it (bot/commands/cli.py load).
    noise_models: tuple[Path, ...] = ()
    #: False: a machine the noise model does not cover is shown, not judged ("uncalibrated").
    judge_without_noise_model: bool = False

    def kernel_threshold_for(self, label: str) -> float:
        """Kernel-time series match patterns written ``kernel:variant/dtype/shape``."""
        for t in self.thresholds:
            if fnmatch.fnmatchcase(f"kernel:{label}", t.pattern):
                return t.effect
        return self.kernel_effect

    def threshold_for(self, label: str) -> float:
        """The first matching pattern wins; otherwise the default effect."""
        for t in self.thresholds:
            if fnmatch.fnmatchcase(label, t.pattern):
                return t.effect
        return self.effect

    def is_gating(self, variant: str) -> bool:
        return any(fnmatch.fnmatchcase(variant, p) for p in self.gating)


OpenOn = Literal["merge", "push"]
#: Which other repositories get an alert's linked issue (bot/alert/owners.py).
LinkPolicy = Literal["implicated", "always", "never"]


@dataclass(frozen=True)
class AlertSettings:
    """When a PR's alert opens, when it counts as clearly worse, who may acknowledge it
    (bot/alert/plan.py and bot/alert/ack.py state the rules)."""

    open_on: OpenOn = "merge"
    worse_factor: float = 1.5
    link: LinkPolicy = "implicated"
    ack_label: str = "perfbot-acknowledged"
    allow_author: bool = False


@dataclass(frozen=True)
class Config:
    verdict: VerdictSettings = field(default_factory=VerdictSettings)
    alerts: AlertSettings = field(default_factory=AlertSettings)
    machine: str | None = None
    #: The most machines one ``pr`` run may post for; more is refused before any write.
    max_machines: int = 4
    site_url: str | None = None
    docs_url: str | None = None  # fusion-perfbot's docs/ on the web: the comment links its method
    issue_repos: tuple[str, ...] = DEFAULT_REPOS
    issue_label: str = "perf-regression-bot"
    file_issues: bool = True
    api_url: str = "https://api.github.com"
    timeout_s: float = 15.0
    max_retry_wait_s: float = 60.0
    comment_token: Secret | None = None
    issues_token: Secret | None = None
    comment_login: str | None = None  # who the comment token posts as; None: ask GET /user
    issues_login: str | None = None
    run_url: str | None = None

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str],
        toml_path: Path | None,
        caller: Path | None = None,
        caller_repo: str | None = None,
    ) -> Config:
        """``caller``: a calling repository's perfbot.toml, merged over ``toml_path`` under
        the trust rules (bot/config_caller.py); ``caller_repo`` is that repository."""
        data = read_toml(toml_path) if toml_path is not None else {}
        if caller is None:
            return _build(env, data, toml_path)
        from bot.config_caller import with_caller  # it builds on this module's loader

        return with_caller(env, data, toml_path, caller, caller_repo)


def _thresholds(raw: Any, source: str) -> tuple[Threshold, ...]:
    if not isinstance(raw, list):
        raise ConfigError(f"{source}: verdict.thresholds must be an array of tables")
    out = []
    for i, item in enumerate(raw):
        t = Table(item, f"verdict.thresholds[{i}]", source, {"pattern", "effect"})
        pattern = t.text("pattern", None, NAME_RE)
        if pattern is None:
            raise ConfigError(f"{source}: verdict.thresholds[{i}].pattern is required")
        out.append(Threshold(pattern, t.number("effect", 0.02, 0.001, 1.0)))
    return tuple(out)


def _verdict(raw: Any, source: str, path: Path | None) -> VerdictSettings:
    keys = {
        "effect",
        "kernel_effect",
        "broad_effect",
        "thresholds",
        "alpha",
        "gating_variants",
        "min_samples",
        "resamples",
        "seed",
        "noise_model",
        "judge_without_noise_model",
    }
    t = Table(raw, "verdict", source, keys)
    d = VerdictSettings()
    raw = t.data.get("noise_model", "")
    names = [raw] if isinstance(raw, str) else raw
    if not isinstance(names, list) or not all(
        isinstance(n, str) and (n == "" or PATH_RE.fullmatch(n)) for n in names
    ):
        raise ConfigError(
            f"{source}: verdict.noise_model must be a path or a list of paths matching "
            f"{PATH_RE.pattern}"
        )
    models = []
    for name in (n for n in names if n):
        model_path = Path(name)
        if not model_path.is_absolute() and path is not None:
            model_path = path.parent / model_path
        models.append(model_path)
    return VerdictSettings(
        effect=t.number("effect", d.effect, 0.001, 1.0),
        kernel_effect=t.number("kernel_effect", d.kernel_effect, 0.001, 1.0),
        broad_effect=t.number("broad_effect", d.broad_effect, 0.001, 1.0),
        noise_model=models[0] if models else None,
        noise_models=tuple(models),
        thresholds=_thresholds(t.data.get("thresholds", []), source),
        alpha=t.number("alpha", d.alpha, 1e-6, 0.2),
        gating=t.strings("gating_variants", d.gating, NAME_RE),
        min_samples=t.integer("min_samples", d.min_samples, 3, 100_000),
        resamples=t.integer("resamples", d.resamples, 200, 100_000),
        seed=t.integer("seed", d.seed, 0, 2**32 - 1),
        judge_without_noise_model=t.flag("judge_without_noise_model", False),
    )


def _alerts(raw: Any, ack_raw: Any, source: str) -> AlertSettings:
    t = Table(raw, "alerts", source, {"open_on", "worse_factor", "link"})
    a = Table(ack_raw, "acknowledge", source, {"label", "allow_author"})
    d = AlertSettings()
    open_on = t.data.get("open_on", d.open_on)
    if open_on not in ("merge", "push"):
        raise ConfigError(f'{source}: alerts.open_on must be "merge" or "push"')
    link = t.data.get("link", d.link)
    if link not in ("implicated", "always", "never"):
        raise ConfigError(f'{source}: alerts.link must be "implicated", "always" or "never"')
    return AlertSettings(
        open_on=open_on,
        link=link,
        worse_factor=t.number("worse_factor", d.worse_factor, 1.0, 100.0),
        ack_label=a.text("label", d.ack_label, LABEL_RE) or d.ack_label,
        allow_author=a.flag("allow_author", d.allow_author),
    )


def _token(env: Mapping[str, str], name: str) -> Secret | None:
    value = env.get(name, "").strip()
    if not value:
        return None
    if any(c.isspace() or not c.isprintable() for c in value):
        raise ConfigError(f"environment: {name} contains whitespace or control characters")
    return Secret(value)


def _env_text(env: Mapping[str, str], name: str, pattern: re.Pattern[str]) -> str | None:
    value = env.get(name, "").strip()
    if value and not pattern.fullmatch(value):
        raise ConfigError(f"environment: {name}={value!r:.100} must match {pattern.pattern}")
    return value or None


def _run_url(env: Mapping[str, str]) -> str | None:
    server = _env_text(env, "GITHUB_SERVER_URL", URL_RE)
    repo = _env_text(env, "GITHUB_REPOSITORY", REPO_RE)
    run_id = _env_text(env, "GITHUB_RUN_ID", re.compile(r"[0-9]{1,20}"))
    if server and repo and run_id:
        return f"{server.rstrip('/')}/{repo}/actions/runs/{run_id}"
    return None


def _build(env: Mapping[str, str], data: dict[str, Any], path: Path | None) -> Config:
    source = f"config {path}" if path is not None else "config"
    tables = {"verdict", "site", "issues", "github", "results", "alerts", "acknowledge"}
    top = Table(data, "top level", source, tables)
    site = Table(top.data.get("site", {}), "site", source, {"base_url", "docs_url"})
    issues = Table(top.data.get("issues", {}), "issues", source, {"repos", "label", "enabled"})
    gh_keys = {"timeout_s", "max_retry_wait_s", "comment_login", "issues_login"}
    gh = Table(top.data.get("github", {}), "github", source, gh_keys)
    results = Table(top.data.get("results", {}), "results", source, {"machine", "max_machines"})
    enabled = issues.flag("enabled", True)
    repos = issues.strings("repos", DEFAULT_REPOS, REPO_RE)
    if not repos and enabled:
        raise ConfigError(f"{source}: issues.repos is empty but issues.enabled is true")
    comment_token = _token(env, "GITHUB_TOKEN")
    issues_token = _token(env, "PERFBOT_ISSUES_TOKEN")
    # Actions' GITHUB_TOKEN may not call GET /user, so its login is known instead.
    actions = "github-actions[bot]" if env.get("GITHUB_ACTIONS") == "true" else None
    comment_login = (
        _env_text(env, "PERFBOT_COMMENT_LOGIN", LOGIN_RE)
        or gh.text("comment_login", None, LOGIN_RE)
        or actions
    )
    issues_login = _env_text(env, "PERFBOT_ISSUES_LOGIN", LOGIN_RE) or gh.text(
        "issues_login", None, LOGIN_RE
    )
    return Config(
        verdict=_verdict(top.data.get("verdict", {}), source, path),
        alerts=_alerts(top.data.get("alerts", {}), top.data.get("acknowledge", {}), source),
        machine=results.text("machine", None, re.compile(r"[A-Za-z0-9_.-]{1,100}")),
        max_machines=results.integer("max_machines", 4, 1, 64),
        site_url=_env_text(env, "PERFBOT_SITE_URL", URL_RE) or site.text("base_url", None, URL_RE),
        docs_url=_env_text(env, "PERFBOT_DOCS_URL", URL_RE) or site.text("docs_url", None, URL_RE),
        issue_repos=repos,
        issue_label=issues.text("label", "perf-regression-bot", LABEL_RE) or "perf-regression-bot",
        file_issues=enabled,
        api_url=_env_text(env, "GITHUB_API_URL", URL_RE) or "https://api.github.com",
        timeout_s=gh.number("timeout_s", 15.0, 1.0, 600.0),
        max_retry_wait_s=gh.number("max_retry_wait_s", 60.0, 0.0, 3600.0),
        comment_token=comment_token,
        issues_token=issues_token or comment_token,
        comment_login=comment_login,
        issues_login=issues_login or (comment_login if issues_token is None else None),
        run_url=_run_url(env),
    )

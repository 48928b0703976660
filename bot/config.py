"""Configuration: a TOML file (perfbot.toml documents every key and its default) plus the
environment GitHub Actions provides. Everything is validated up front, so a typo is a usage
error before any result is read or anything is posted; tokens are wrapped so no log shows them.
"""

from __future__ import annotations

import fnmatch
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

REPO_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
# Characters that could end a markdown link destination or start markup are refused outright.
URL_RE = re.compile(r"https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~%/+-]*)?")
DEFAULT_REPOS = ("NVIDIA/Fuser", "Lightning-AI/lightning-thunder")


class ConfigError(Exception):
    """A bad setting; the message names the key and the source."""


class Secret:
    """A token: never shown by repr/str/format, only by :meth:`reveal`."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return "***"


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
    noise_model: Path | None = None  # resolved against the config file's folder

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


@dataclass(frozen=True)
class Config:
    verdict: VerdictSettings = field(default_factory=VerdictSettings)
    machine: str | None = None
    site_url: str | None = None
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
    def from_env(cls, env: Mapping[str, str], toml_path: Path | None) -> Config:
        return _build(env, _read_toml(toml_path) if toml_path is not None else {}, toml_path)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
        return data
    except OSError as exc:
        raise ConfigError(f"config {path}: cannot read: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config {path}: not valid TOML: {exc}") from None


class _Table:
    """Typed reads from one TOML table; refuses unknown keys so typos do not pass silently."""

    def __init__(self, data: Any, name: str, source: str, allowed: set[str]) -> None:
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: [{name}] must be a table")
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ConfigError(f"{source}: unknown key(s) in [{name}]: {', '.join(unknown)}")
        self.data, self.name, self.source = data, name, source

    def _bad(self, key: str, want: str) -> ConfigError:
        return ConfigError(f"{self.source}: {self.name}.{key} must be {want}")

    def number(self, key: str, default: float, lo: float, hi: float) -> float:
        v = self.data.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self._bad(key, "a number")
        if not lo <= v <= hi:
            raise self._bad(key, f"between {lo} and {hi}")
        return float(v)

    def integer(self, key: str, default: int, lo: int, hi: int) -> int:
        v = self.data.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise self._bad(key, f"an integer between {lo} and {hi}")
        return v

    def text(self, key: str, default: str | None, pattern: re.Pattern[str]) -> str | None:
        v = self.data.get(key, default)
        if v is None or v == "":
            return None
        if not isinstance(v, str) or not pattern.fullmatch(v):
            raise self._bad(key, f"a string matching {pattern.pattern}")
        return v

    def strings(
        self, key: str, default: tuple[str, ...], pattern: re.Pattern[str]
    ) -> tuple[str, ...]:
        v = self.data.get(key, list(default))
        if not isinstance(v, list) or not all(
            isinstance(s, str) and pattern.fullmatch(s) for s in v
        ):
            raise self._bad(key, f"a list of strings matching {pattern.pattern}")
        return tuple(v)


NAME_RE = re.compile(r"[A-Za-z0-9_.+*?\[\]/:-]{1,100}")
PATH_RE = re.compile(r"[A-Za-z0-9_./-]{1,200}")
LABEL_RE = re.compile(r"[A-Za-z0-9 _.:-]{1,50}")
LOGIN_RE = re.compile(r"[A-Za-z0-9-]{1,39}(?:\[bot\])?")


def _thresholds(raw: Any, source: str) -> tuple[Threshold, ...]:
    if not isinstance(raw, list):
        raise ConfigError(f"{source}: verdict.thresholds must be an array of tables")
    out = []
    for i, item in enumerate(raw):
        t = _Table(item, f"verdict.thresholds[{i}]", source, {"pattern", "effect"})
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
    }
    t = _Table(raw, "verdict", source, keys)
    d = VerdictSettings()
    model = t.text("noise_model", None, PATH_RE)
    model_path = None
    if model is not None:
        model_path = Path(model)
        if not model_path.is_absolute() and path is not None:
            model_path = path.parent / model_path
    return VerdictSettings(
        effect=t.number("effect", d.effect, 0.001, 1.0),
        kernel_effect=t.number("kernel_effect", d.kernel_effect, 0.001, 1.0),
        broad_effect=t.number("broad_effect", d.broad_effect, 0.001, 1.0),
        noise_model=model_path,
        thresholds=_thresholds(t.data.get("thresholds", []), source),
        alpha=t.number("alpha", d.alpha, 1e-6, 0.2),
        gating=t.strings("gating_variants", d.gating, NAME_RE),
        min_samples=t.integer("min_samples", d.min_samples, 3, 100_000),
        resamples=t.integer("resamples", d.resamples, 200, 100_000),
        seed=t.integer("seed", d.seed, 0, 2**32 - 1),
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
    top = _Table(data, "top level", source, {"verdict", "site", "issues", "github", "results"})
    site = _Table(top.data.get("site", {}), "site", source, {"base_url"})
    issues = _Table(top.data.get("issues", {}), "issues", source, {"repos", "label", "enabled"})
    gh_keys = {"timeout_s", "max_retry_wait_s", "comment_login", "issues_login"}
    gh = _Table(top.data.get("github", {}), "github", source, gh_keys)
    results = _Table(top.data.get("results", {}), "results", source, {"machine"})
    enabled = issues.data.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError(f"{source}: issues.enabled must be true or false")
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
        machine=results.text("machine", None, re.compile(r"[A-Za-z0-9_.-]{1,100}")),
        site_url=_env_text(env, "PERFBOT_SITE_URL", URL_RE) or site.text("base_url", None, URL_RE),
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

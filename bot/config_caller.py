"""A calling repository's perfbot.toml over the pinned perfbot's own (pure but the reading).

post-results.yml's input ``config-path`` names a file of the calling repository's default
branch; the privileged poster reads it as data and the bot merges it, key by key, over its own
configuration. What a caller may not set is listed here, once: refused outright, or bounded (it
may narrow, never widen). docs/WORKFLOWS.md says the same in words.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.config import DEFAULT_REPOS, Config, ConfigError, _build
from bot.config_read import read_toml

__all__ = ["CALLER_BOUNDED", "CALLER_REFUSED", "SELF", "with_caller"]

#: The trust rules of a caller's perfbot.toml (post-results.yml's input `config-path`: a file of
#: the calling repository's default branch, read as data by the privileged poster and merged
#: over the pinned perfbot's own configuration). Each key here is refused outright, with why:
CALLER_REFUSED: dict[str, str] = {
    "github": "the accounts whose comments are the bot's own, and how it waits on GitHub, are "
    "the poster's (tokens and logins never come from a file)",
    "verdict.noise_model": "the noise model is the pinned perfbot's calibration of its runners, "
    "and a path on the poster's machine",
    "verdict.judge_without_noise_model": "it would judge machines no noise model covers and "
    "file their false alarms in other organisations",
    "site.docs_url": "the comment links the method of the perfbot commit that ran (the poster "
    "sets it)",
}
#: ... and each of these is bounded: a caller may narrow it, never widen it.
CALLER_BOUNDED: dict[str, str] = {
    "results.max_machines": "at most the pinned perfbot's bound",
    "issues.repos": "only NVIDIA/Fuser, Lightning-AI/lightning-thunder and the caller's own "
    "repository; and only those the caller's file names itself (\"self\" is the caller's own)",
}
#: In a caller's ``[issues] repos``, the calling repository, whatever its name: the example files
#: say it, so that a fork's trial files its alerts in the fork and nowhere else.
SELF = "self"


def _refused(caller: dict[str, Any], source: str) -> None:
    for key, why in CALLER_REFUSED.items():
        table, _, name = key.partition(".")
        found = caller.get(table)
        if table in caller and (not name or (isinstance(found, dict) and name in found)):
            shown = f"[{table}]" + (f" {name}" if name else "")
            raise ConfigError(f"{source}: {shown} may not be set by a caller: {why}")


def with_caller(
    env: Mapping[str, str],
    own: dict[str, Any],
    own_path: Path | None,
    caller_path: Path,
    caller_repo: str | None,
) -> Config:
    """The pinned perfbot's configuration with a caller's file merged over it, key by key
    within each table (an array, as verdict.thresholds, is replaced whole). The caller's file
    is data: read as TOML, checked alone by this loader (unknown keys and bad values refused,
    naming the key), then against :data:`CALLER_REFUSED` and :data:`CALLER_BOUNDED`."""
    source = f"caller config {caller_path}"
    caller = _with_self(read_toml(caller_path), caller_repo, source)
    _refused(caller, source)
    try:
        _build({}, caller, None)  # the schema, alone: its errors name the caller's file
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("config:", f"{source}:", 1)) from None
    merged = {k: dict(v) if isinstance(v, dict) else v for k, v in own.items()}
    for table, values in caller.items():
        merged[table] = {**merged.get(table, {}), **values}
    bound = _build(env, own, own_path)
    config = _build(env, merged, own_path)
    if config.max_machines > bound.max_machines:
        raise ConfigError(
            f"{source}: [results] max_machines = {config.max_machines} is above the bound "
            f"{bound.max_machines}: a caller may lower it, not raise it"
        )
    _check_repos(config, caller.get("issues", {}).get("repos"), caller_repo, source)
    return config


def _with_self(caller: dict[str, Any], caller_repo: str | None, source: str) -> dict[str, Any]:
    """The caller's file with ``"self"`` in ``[issues] repos`` read as the calling repository."""
    issues = caller.get("issues")
    if not isinstance(issues, dict):
        return caller
    repos = issues.get("repos")
    if not isinstance(repos, list) or SELF not in repos:
        return caller
    if caller_repo is None:
        raise ConfigError(f'{source}: [issues] repos names "{SELF}", but no repository is given')
    named = [caller_repo if r == SELF else r for r in repos]
    return {**caller, "issues": {**issues, "repos": list(dict.fromkeys(named))}}


def _check_repos(
    config: Config, named: list[str] | None, caller_repo: str | None, source: str
) -> None:
    """Where a caller's alerts may be filed: its own repository, and the repositories of
    NVIDIA/Fuser and Lightning-AI/lightning-thunder that its own file names. The pinned
    perfbot's default (both of them) is never taken for a caller's choice: a fork that copied a
    config without ``[issues] repos`` would otherwise file its trial's alerts upstream."""
    own = {caller_repo.lower()} if caller_repo else set()
    allowed = own | {r.lower() for r in DEFAULT_REPOS}
    strange = [r for r in config.issue_repos if r.lower() not in allowed]
    if strange:
        listed = ", ".join(sorted({*DEFAULT_REPOS, *([caller_repo] if caller_repo else [])}))
        raise ConfigError(
            f"{source}: [issues] repos names {', '.join(strange)}: a caller files only in {listed}"
        )
    if not config.file_issues:
        return
    chosen = own | {r.lower() for r in (named or ())}
    unnamed = [r for r in config.issue_repos if r.lower() not in chosen]
    if unnamed:
        raise ConfigError(
            f"{source}: the alert's issues would be filed in {', '.join(unnamed)}, which this "
            f"file does not name: a caller files in another repository only where its own "
            f'[issues] repos says so. A trial: repos = ["{SELF}"] (this repository alone); '
            f"going live: name each repository, e.g. repos = "
            f'["{SELF}", "NVIDIA/Fuser"] (docs/ADOPT.md, "Going live")'
        )

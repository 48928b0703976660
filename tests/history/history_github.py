"""What the history tests that file issues share: the configuration, a night's run of
``history`` on a tiled history against the fake GitHub, and the keys (of an alert, and of an
issue filed before alerts) and writes they check."""

from __future__ import annotations

from pathlib import Path

from history_tiled import made_up, tiled_history
from paths import REPO_ROOT

from bot.commands import cli
from bot.decide.types import GuardKind
from bot.github.fake import BOT_TOKEN, LocalGitHub

CONFIG = ["--config", str(REPO_ROOT / "perfbot.toml")]


def link_config(tmp: Path, link: str) -> list[str]:
    """``--config`` of a copy of perfbot.toml whose ``[alerts] link`` is ``link`` (its noise
    model named by full path: the copy lives elsewhere); the rest as shipped."""
    text = (REPO_ROOT / "perfbot.toml").read_text(encoding="utf-8")
    changes = {
        'link = "implicated"': f'link = "{link}"',
        'noise_model = "noise/': f'noise_model = "{REPO_ROOT}/noise/',
    }
    for old, new in changes.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp / f"perfbot-link-{link}.toml"
    path.write_text(text, encoding="utf-8")
    return ["--config", str(path)]


def github_env(fake: LocalGitHub) -> dict[str, str]:
    return {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake.base_url}


def key_at(case: str, split: int) -> str:
    """The key of the alert a tiled history ``case`` has after commit ``split``, spelled out
    as docs/HISTORY.md gives it (family, machine, last good..first bad at 12 digits) rather
    than made by the code under test."""
    last_good, first_bad = made_up(case, split)[:12], made_up(case, split + 1)[:12]
    return f"rmsnorm-bwd|nvidia-h200|{last_good}..{first_bad}"


def legacy_key_at(case: str, split: int, guard: GuardKind = "thunder") -> str:
    """The key an issue filed before alerts has for that change and guard (one issue per
    range and guard): the alert's key, then ``|<guard>``."""
    last_good, first_bad = made_up(case, split)[:12], made_up(case, split + 1)[:12]
    return f"rmsnorm-bwd|nvidia-h200|{last_good}..{first_bad}|{guard}"


def night(fake: LocalGitHub, out: Path, case: str, levels: str, *more: str) -> int:
    """``history`` over the tiled history ``case`` (its commits at ``levels``), filing issues."""
    folder = tiled_history(out / case / "results", case, levels)
    return cli.main(["history", "--results", str(folder), *CONFIG, *more], env=github_env(fake))


def writes(fake: LocalGitHub) -> int:
    """The requests that changed something on the fake GitHub so far."""
    return len(fake.requests()) - len(fake.requests("GET"))

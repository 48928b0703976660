"""Shared fixtures: one running fake GitHub per test and PyGithub clients pointed at it.

Each test gets a fresh server (starting one takes milliseconds), so no state or injected
fault leaks between tests.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import github
import pytest

from bot.github.client import make_github
from bot.github.fake import BOT_TOKEN, HUMAN_TOKEN, LocalGitHub, start_server

PRIMARY = "NVIDIA/Fuser"
SECONDARY = "Lightning-AI/lightning-thunder"


@pytest.fixture
def fake_github() -> Iterator[LocalGitHub]:
    """The fake with both project repositories and no issues yet."""
    with start_server() as fake:
        fake.state.add_repo(PRIMARY)
        fake.state.add_repo(SECONDARY)
        yield fake


def _client(fake: LocalGitHub, token: str = BOT_TOKEN, **options: Any) -> github.Github:
    """A client configured as the bot configures it, with waits short enough for tests."""
    settings: dict[str, Any] = {"timeout": 5, "max_retry_wait": 5, "backoff_factor": 0}
    settings.update(options)
    return make_github(fake.base_url, token, **settings)


@pytest.fixture
def make_client(fake_github: LocalGitHub) -> Callable[..., github.Github]:
    """make_client(token=BOT_TOKEN, **make_github options) -> a client of the fake."""
    return functools.partial(_client, fake_github)


@pytest.fixture
def gh(fake_github: LocalGitHub) -> github.Github:
    """The bot's client (token "bot-token", login "fusion-perfbot[bot]")."""
    return _client(fake_github)


@pytest.fixture
def human_gh(fake_github: LocalGitHub) -> github.Github:
    """A maintainer's client (token "human-token", login "alice")."""
    return _client(fake_github, HUMAN_TOKEN)

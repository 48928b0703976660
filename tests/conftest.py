"""Shared fixtures: one running fake GitHub per test and PyGithub clients pointed at it; and a
home folder of the test process's own.

Each test gets a fresh server (starting one takes milliseconds), so no state or injected
fault leaks between tests.

HOME (and the XDG folders under it) point at a fresh temporary folder for the whole session,
in every pytest-xdist worker: what asv (``~/.asv-machine.json``), pip (its cache), git and npm
would write into a home goes there, never into the developer's, and no two workers share it.

PATH loses the folders that hold a Rust toolchain (rustup's ``~/.cargo/bin``): pip runs
``rustc --version`` for its user-agent string at every start, 0.15 s through rustup's proxy,
and the tests start pip about a hundred times; nothing they run compiles Rust.

Where PYTHONDONTWRITEBYTECODE is set (this project's CI machines set it), pytest rewrote and
compiled every test module again in every worker at every run: 4 s of a 2-core run. The
session keeps that bytecode under .pytest_cache/pycache instead (``sys.pycache_prefix``), so
nothing lands beside the sources, which is what the variable is there for.

Test files run longest first (tests/run_order.py), by the seconds each took in the last run
that ran it (pytest's cache, key ``perfbot/file-seconds``). With an empty cache the real-asv
tree of tests/data_helpers.py is built in a process of its own from the end of collection, and
the files that need it run last.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import github
import pytest
from data_helpers import synthetic_built, synthetic_cache_root
from run_order import file_order

from bot.github.client import make_github
from bot.github.fake import BOT_TOKEN, HUMAN_TOKEN, LocalGitHub, start_server

PRIMARY = "NVIDIA/Fuser"
SECONDARY = "Lightning-AI/lightning-thunder"
_HOME_VARIABLES = ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME")
_saved_home: dict[str, str | None] = {}


def pytest_configure(config: pytest.Config) -> None:
    """Give this process a home of its own, and a PATH without rustc, before any test runs."""
    if sys.flags.dont_write_bytecode and getattr(config, "cache", None) is not None:
        sys.pycache_prefix = str(config.cache.mkdir("pycache"))
        sys.dont_write_bytecode = False
    home = Path(tempfile.mkdtemp(prefix="perfbot-test-home-"))
    for name in _HOME_VARIABLES:
        _saved_home[name] = os.environ.get(name)
    os.environ["HOME"] = str(home)
    for name, sub in zip(_HOME_VARIABLES[1:], (".config", ".cache", ".local/share"), strict=True):
        os.environ[name] = str(home / sub)
    _saved_home["_made"] = str(home)
    _saved_home["PATH"] = os.environ.get("PATH")
    folders = os.environ.get("PATH", "").split(os.pathsep)
    os.environ["PATH"] = os.pathsep.join(f for f in folders if not (Path(f) / "rustc").exists())


#: Markers that put a test in the slow run (pytest -m slow) as well.
SLOW_KINDS = ("docs", "browser", "network")


#: pytest's cache key of the seconds each test file took when it last ran.
FILE_SECONDS = "perfbot/file-seconds"
_seconds_this_run: defaultdict[str, float] = defaultdict(float)
#: The background builds of the real-asv tree this process started (pytest_collection_finish).
_builders: list[subprocess.Popen[bytes]] = []


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A docs, browser or network test is a slow one: the default run leaves it out. Files
    run longest first (tests/run_order.py)."""
    for item in items:
        if any(item.get_closest_marker(kind) for kind in SLOW_KINDS):
            item.add_marker(pytest.mark.slow)
    cache = getattr(config, "cache", None)
    known = cache.get(FILE_SECONDS, {}) if cache is not None else {}
    seconds = {f: float(t) for f, t in known.items() if isinstance(t, (int, float))}
    root = synthetic_cache_root(config)
    waiting = set()
    if root is not None and not synthetic_built(root):  # built in the background meanwhile
        waiting = {_file_of(item.nodeid) for item in items if _uses_synthetic(item)}
    order = file_order([_file_of(item.nodeid) for item in items], seconds, waiting.__contains__)
    rank = {file: n for n, file in enumerate(order)}
    items.sort(key=lambda item: rank[_file_of(item.nodeid)])  # stable within a file


def _uses_synthetic(item: pytest.Item) -> bool:
    return "synthetic" in getattr(item, "fixturenames", ())


def pytest_collection_finish(session: pytest.Session) -> None:
    """An empty cache (a fresh clone, CI): build the real-asv tree of tests/data_helpers.py
    now, in a process of its own started with the session's environment, instead of in the
    first test that asks for it while the other worker waits on its lock (12 s of a cold run).
    A process, not a thread: tests change this process's environment and folder while they
    run. The fixture waits on the same lock; should this build fail, it builds again itself
    and fails in a test, loudly."""
    root = synthetic_cache_root(session.config)
    if root is None or synthetic_built(root) or not any(map(_uses_synthetic, session.items)):
        return
    here = Path(__file__).resolve().parent
    code = "import sys, pathlib, data_helpers as d; d.synthetic_results(pathlib.Path(sys.argv[1]))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(here.parent)])}
    _builders.append(
        subprocess.Popen(
            [sys.executable, "-c", code, str(root)],
            cwd=here.parent,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    )


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Seconds a file took, counted where the reports meet (the controller, or a serial run)."""
    _seconds_this_run[_file_of(report.nodeid)] += report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    cache = getattr(session.config, "cache", None)
    if cache is None or hasattr(session.config, "workerinput") or not _seconds_this_run:
        return
    known = cache.get(FILE_SECONDS, {})
    merged = dict(known) if isinstance(known, dict) else {}
    merged.update({file: round(taken, 2) for file, taken in _seconds_this_run.items()})
    cache.set(FILE_SECONDS, merged)
    _seconds_this_run.clear()


def pytest_unconfigure(config: pytest.Config) -> None:
    for builder in _builders:  # a build left running would leave its half-built folder
        builder.wait()
    _builders.clear()
    made = _saved_home.pop("_made", None)
    for name, value in _saved_home.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _saved_home.clear()
    if made:
        shutil.rmtree(made, ignore_errors=True)


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

"""The test session's own surroundings (tests/conftest.py): nothing a test or a tool it starts
writes lands in the developer's home (each process, each pytest-xdist worker included, makes
its own with mkdtemp)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

from paths import REPO_ROOT


def test_home_is_the_sessions_own_not_the_users() -> None:
    home = Path(os.environ["HOME"])
    assert home != Path(pwd.getpwuid(os.getuid()).pw_dir)
    assert home.name.startswith("perfbot-test-home-") and home.is_dir()
    assert Path.home() == home and Path(os.environ["XDG_CACHE_HOME"]).is_relative_to(home)


def test_a_child_process_sees_the_same_home() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import pathlib; print(pathlib.Path.home())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == os.environ["HOME"]


def test_no_rust_toolchain_on_the_path() -> None:
    assert shutil.which("rustc") is None  # pip would run it at every start


def test_bytecode_goes_to_pytests_cache_where_the_environment_forbids_it_beside_sources() -> None:
    if not sys.flags.dont_write_bytecode:
        return  # Python writes __pycache__ beside the sources, as it always does
    assert sys.pycache_prefix is not None
    assert Path(sys.pycache_prefix).is_relative_to(REPO_ROOT / ".pytest_cache")
    assert not sys.dont_write_bytecode

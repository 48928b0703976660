"""bot/commands/long_lived.py and what the watch's process loads: the runs read are frozen
out of the collector only while the command runs (an in-process caller gets its process back
as it was, an error before they were read freezes nothing), and a dry run never imports
PyGithub (a fifth of the watch's start-up)."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest
from paths import REPO_ROOT

from bot.commands.long_lived import long_lived


def test_what_is_read_is_frozen_until_the_block_ends() -> None:
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with long_lived() as keep:
        assert not gc.isenabled()  # paused while the runs are built
        kept = [[float(i)] for i in range(100)]
        keep()
        assert gc.isenabled() and gc.get_freeze_count() > len(kept)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_an_error_before_keep_freezes_nothing_and_restores_the_collector() -> None:
    with pytest.raises(RuntimeError), long_lived():
        raise RuntimeError("the results could not be read")
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_paused_collector_stays_paused() -> None:
    gc.disable()
    try:
        with long_lived() as keep:
            keep()
            assert not gc.isenabled()
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_the_watch_imports_no_github_client_until_it_calls_github() -> None:
    code = "import sys, bot.commands.cli, bot.commands.history; print('github' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"

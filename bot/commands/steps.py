"""How a command fails: as one named step, with the exit code of its class, leaving nothing
half-done.

Every flow is a short list of ``with step(...)`` blocks so that the one line a CI log shows
("step 'post comment on ...' failed: HTTP 502") says which step broke, and the exit code says
whose fault it is (bot/exitcodes.py): a bad flag or configuration, bad results, or GitHub.
Files are replaced whole, so a failure never leaves a half-written JSON for the next job.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from bot.config import ConfigError, VerdictSettings
from bot.decide.config_check import check_gating, unused_thresholds
from bot.exitcodes import ExitCode
from bot.results.types import BadInput, CommitResults


class StepFailed(Exception):
    def __init__(self, step: str, code: ExitCode, message: str) -> None:
        super().__init__(f"step '{step}' failed: {message}")
        self.code = code


@contextmanager
def step(name: str, default: ExitCode) -> Iterator[None]:
    """Run one step; known failures keep their class, anything else takes the step's."""
    try:
        yield
    except (StepFailed, BrokenPipeError):  # a closed stdout is the reader's doing, not the step's
        raise
    except ConfigError as exc:
        raise StepFailed(name, ExitCode.USAGE, str(exc)) from exc
    except BadInput as exc:
        raise StepFailed(name, ExitCode.BAD_INPUT, str(exc)) from exc
    except Exception as exc:
        if _github_failure(exc):
            raise StepFailed(name, ExitCode.GITHUB_FAILURE, str(exc)) from exc
        raise StepFailed(name, default, f"{type(exc).__name__}: {exc}") from exc


def _github_failure(exc: Exception) -> bool:
    """Whether ``exc`` is the GitHub client's failure, asked without importing PyGithub (0.2 s
    and 30 MB that a command which never talks to GitHub, such as report, does not need): a
    GitHubFailure can only have been raised once its module was loaded."""
    client = sys.modules.get("bot.github.client")
    return client is not None and isinstance(exc, client.GitHubFailure)


def _dumps(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


#: ``--json -``: the JSON goes to stdout, in place of the command's text output.
STDOUT = Path("-")


def emit_json(path: Path, data: object, out: IO[str]) -> bool:
    """Write `data` to `path`, or to `out` for ``-``; True when it went to `out`."""
    if path == STDOUT:
        out.write(_dumps(data))
        return True
    write_json_atomically(path, data)
    return False


def write_json_atomically(path: Path, data: object) -> None:
    write_text_atomically(path, _dumps(data))


def write_text_atomically(path: Path, text: str) -> None:
    """Write beside the target, then rename over it: readers see the old file or the new one."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def check_against_results(s: VerdictSettings, runs: Sequence[CommitResults]) -> list[str]:
    """The configuration checked against the runs it will judge, as a step of its own; its
    warnings (thresholds that no run uses) are printed to stderr and returned."""
    with step("check configuration against the results", ExitCode.USAGE):
        check_gating(s, runs)
        warnings = unused_thresholds(s, runs)
        for warning in warnings:
            print(f"fusion-perfbot: warning: {warning}", file=sys.stderr)
    return warnings

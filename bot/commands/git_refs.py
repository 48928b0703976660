"""``--base main --head HEAD``: commits named as git names them, resolved where they live.

A results folder is keyed by commit hash, and a person at a checkout thinks in branches and
``HEAD~1``. A value that is a hash (4-40 hex digits) stays as given and is matched against the
results, as it always was, because the results may come from another clone or a CI artifact;
anything else, and a hex-looking name that is in fact a ref (a branch called ``cafe``), is asked
of the repository in the current directory with ``git rev-parse --verify``. When git cannot
answer, the error says which value and why, so the usage error (exit 2) is actionable.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

__all__ = ["RefError", "Resolved", "resolve_commit"]

_HEX = re.compile(r"[0-9a-fA-F]{4,40}")
_FULL = re.compile(r"[0-9a-f]{40}")
#: What may be handed to git at all: printable, no leading dash (never read as an option).
_REF = re.compile(r"[^\s\x00-\x1f\x7f-][^\s\x00-\x1f\x7f]{0,255}")
GIT_TIMEOUT_S = 10


class RefError(ValueError):
    """A value that is neither a commit hash nor a ref git can resolve here; says why."""


class Resolved(str):
    """A full commit hash that git resolved from a ref, which it remembers: a message about
    the commit can then say which ref the person gave (``--head HEAD``), not only a hash."""

    ref: str

    def __new__(cls, sha: str, ref: str) -> Resolved:
        self = super().__new__(cls, sha)
        self.ref = ref
        return self

    def __getnewargs__(self) -> tuple[str, str]:  # type: ignore[override]  # pickle, copy
        return str(self), self.ref

    def __repr__(self) -> str:
        return f"Resolved({str(self)!r}, ref={self.ref!r})"


def resolve_commit(text: str, cwd: Path | None = None) -> str:
    """The commit `text` names: a hash as given (lower case), a ref as its full hash."""
    if _HEX.fullmatch(text):
        if _git(["rev-parse", "--verify", "--quiet", "--symbolic-full-name", text], cwd):
            return _resolve(text, cwd)  # a ref whose name looks like a hash
        return text.lower()
    if not _REF.fullmatch(text):
        raise RefError(f"{text[:60]!r} is neither a commit hash (4-40 hex digits) nor a git ref")
    return _resolve(text, cwd)


def _resolve(text: str, cwd: Path | None) -> str:
    where = cwd or Path.cwd()
    if shutil.which("git") is None:
        raise RefError(f"{text!r} is not a commit hash (4-40 hex digits), and git is not installed")
    if _git(["rev-parse", "--git-dir"], cwd) is None:
        raise RefError(
            f"{text!r} is not a commit hash (4-40 hex digits), and {where} is in no git "
            "repository to resolve it as a ref in: give a hash, or run from the checkout"
        )
    found = _git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{text}^{{commit}}"], cwd
    )
    if found is None or not _FULL.fullmatch(found):
        raise RefError(
            f"{text!r} is not a commit hash (4-40 hex digits), and the git repository at "
            f"{where} has no commit of that name (git rev-parse --verify {text}^{{commit}})"
        )
    return Resolved(found, text)


def _git(args: list[str], cwd: Path | None) -> str | None:
    """git's answer (stdout, stripped), or None when it fails, is missing or hangs."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None

"""The store as a git branch (``perf-results``): one commit a change, and a bounded history.

Thinning bounds the tree, but every blob a branch ever held stays reachable from its history,
and ``git clone`` fetches every branch: so the branch keeps only its newest ``keep`` commits.
Older ones are dropped by rebuilding the kept chain on a new root with the same trees,
messages, authors and dates (plumbing: ``commit-tree``), which the workflow then pushes with
``--force-with-lease`` (docs/STORE.md). The trees are untouched, so the work tree stays as it is.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from bot.store.index import StoreError

BRANCH = "perf-results"
IDENTITY = {
    "GIT_AUTHOR_NAME": "fusion-perfbot",
    "GIT_AUTHOR_EMAIL": "fusion-perfbot@users.noreply.github.com",
    "GIT_COMMITTER_NAME": "fusion-perfbot",
    "GIT_COMMITTER_EMAIL": "fusion-perfbot@users.noreply.github.com",
}


def git(
    store: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> str:
    full_env = {**os.environ, **IDENTITY, "GIT_CONFIG_NOSYSTEM": "1", **(env or {})}
    try:
        done = subprocess.run(
            ["git", "-c", "commit.gpgsign=false", "-C", str(store), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=full_env,
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise StoreError(f"git {args[0]} in {store}: {exc}") from None
    if done.returncode != 0:
        raise StoreError(f"git {args[0]} in {store} failed: {done.stderr.strip()[-400:]}")
    return done.stdout.strip()


def is_repo(store: Path) -> bool:
    """The store's own work tree (its top level), not a folder inside some other repository."""
    if not (store / ".git").exists():
        return False
    return Path(git(store, "rev-parse", "--show-toplevel")).resolve() == store.resolve()


def init_repo(store: Path, branch: str = BRANCH) -> None:
    store.mkdir(parents=True, exist_ok=True)
    git(store, "init", "-q", "-b", branch)


def require_clean(store: Path) -> None:
    """A change must be one commit of its own: refuse to start on top of uncommitted files."""
    if is_repo(store) and git(store, "status", "--porcelain", "--untracked-files=all"):
        raise StoreError(f"{store}: the store has uncommitted changes; commit or remove them first")


def commit_all(store: Path, message: str) -> str | None:
    """Commit everything the command changed; None when nothing did (an idempotent add)."""
    if not is_repo(store):
        return None
    git(store, "add", "-A", ".")
    if not git(store, "status", "--porcelain"):
        return None
    git(store, "commit", "-q", "-m", message)
    return git(store, "rev-parse", "HEAD")


def history_length(store: Path) -> int:
    return int(git(store, "rev-list", "--count", "--first-parent", "HEAD"))


def squash(store: Path, keep: int) -> int:
    """Keep the newest `keep` commits of the branch (first parents); returns how many went."""
    if keep < 1:
        raise StoreError(f"--keep-history must be at least 1, got {keep}")
    if not is_repo(store):
        return 0
    chain = git(store, "rev-list", "--first-parent", "HEAD").splitlines()
    if len(chain) <= keep:
        return 0
    parent: str | None = None
    for commit in reversed(chain[:keep]):
        fields = git(store, "log", "-1", "--format=%an%x00%ae%x00%aI%x00%cI%x00%T", commit)
        name, email, adate, cdate, tree = fields.split("\x00")
        message = git(store, "log", "-1", "--format=%B", commit) + "\n"
        env = {
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_AUTHOR_DATE": adate,
            "GIT_COMMITTER_DATE": cdate,
        }
        args = ["commit-tree", tree] + (["-p", parent] if parent else [])
        parent = git(store, *args, env=env, stdin=message)
    assert parent is not None
    git(store, "update-ref", "-m", "store: history squashed", "HEAD", parent, chain[0])
    return len(chain) - keep

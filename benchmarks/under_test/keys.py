"""The commit asv files each side under, in a git repository of keys that asv reads.

asv looks a results commit up in its repository (hash and date), so a key must be a real
commit there. A git spec's key is the package's own commit, fetched with its hash and date, so
the results and the history site point at the package's real history. A wheel or a version has
no commit: its key is made from what was installed (distribution, version, wheel hash) with a
fixed author and a date taken from a nightly's ``devYYYYMMDD``, so the same build always gets
the same key and another build never does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from datetime import date, datetime
from pathlib import Path

from benchmarks.under_test.install import Installed


class KeysError(RuntimeError):
    """The repository of keys could not be made or read (git missing, a commit not fetched)."""


_GIT = [
    "git",
    "-c",
    "user.name=perfbot",
    "-c",
    "user.email=perfbot@localhost",
    "-c",
    "init.defaultBranch=main",
]
_NIGHTLY = re.compile(r"dev(20\d{2})(\d{2})(\d{2})")
#: The date of a key whose build has none known (a release with no wheel, or an undated one):
#: before every nightly, and no day anyone may link commits from.
UNDATED = date(2000, 1, 1)


def _git(
    repo: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> str:
    done = subprocess.run(
        [*_GIT, "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise KeysError(f"git {args[0]} in {repo} failed: {done.stderr.strip()[-400:]}")
    return done.stdout.strip()


def init_keys(repo: Path) -> None:
    """A repository whose ``main`` holds one fixed empty commit: asv refuses to run without the
    branch its configuration names, though it never reads it for ``--set-commit-hash``."""
    repo.mkdir(parents=True, exist_ok=True)
    if (repo / ".git").exists():
        return
    _git(repo, "init", "-q")
    empty = _git(repo, "mktree", stdin="")
    root = _commit(
        repo, empty, "perfbot keys of the packages under test\n", "2000-01-01T00:00:00+00:00"
    )
    _git(repo, "update-ref", "refs/heads/main", root)


def _commit(repo: Path, tree: str, message: str, date: str) -> str:
    """A commit that depends on its content alone (fixed author, committer and dates)."""
    env = {
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(repo),
    }
    return _git(repo, "commit-tree", tree, stdin=message, env=env)


def nightly_date(version: str) -> date | None:
    """A nightly's build date (``devYYYYMMDD`` in its version); None for a release, or for
    digits that are no date (dev20261399: git refuses it, or rolls dev20260230 over)."""
    found = _NIGHTLY.search(version)
    if not found:
        return None
    try:
        return date(int(found[1]), int(found[2]), int(found[3]))
    except ValueError:
        return None


def build_date(version: str, built: datetime | None = None) -> str:
    """A build's date as a git date: a nightly's ``devYYYYMMDD``; else ``built``, the day its
    wheel was built (install.wheel_built), so a release falls between the nightlies around it;
    else 2000-01-01 (a release whose wheel is unknown or undated: before every nightly)."""
    day = nightly_date(version) or (built.date() if built is not None else None)
    return f"{(day or UNDATED).isoformat()}T00:00:00+00:00"


def key_for(repo: Path, installed: Installed) -> str:
    spec = installed.spec
    if spec.kind == "git":
        assert spec.url is not None and spec.commit is not None
        # Fetching one commit by its hash: GitHub and local repositories (protocol v2) allow it.
        _git(repo, "fetch", "-q", "--no-tags", "--depth=1", spec.url, spec.commit)
        _git(repo, "cat-file", "-e", f"{spec.commit}^{{commit}}")
        # As for a made key below: a fetched commit that no ref holds is garbage to git.
        _git(repo, "update-ref", f"refs/keys/{spec.commit}", spec.commit)
        return spec.commit
    content = {
        "package": spec.package,
        "distribution": installed.distribution,
        "version": installed.version,
        "sha256": installed.sha256,
    }
    blob = _git(
        repo, "hash-object", "-w", "--stdin", stdin=json.dumps(content, sort_keys=True) + "\n"
    )
    tree = _git(repo, "mktree", stdin=f"100644 blob {blob}\tunder-test.json\n")
    message = f"{installed.distribution} {installed.version}\n\nsha256 {installed.sha256}\n"
    commit = _commit(repo, tree, message, build_date(installed.version, installed.built))
    # A ref keeps the key from being garbage-collected, and lets `asv publish` list it.
    _git(repo, "update-ref", f"refs/keys/{commit}", commit)
    return commit


def commit_date(repo: Path, commit: str) -> str:
    return _git(repo, "log", "-1", "--format=%cI", commit)

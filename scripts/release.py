"""Cut a release of fusion-perfbot and move what callers copy to it: two commits on main.

    python scripts/release.py cut 0.2.0 [--date 2026-12-07]   # commit 1: the version, dated
    python scripts/release.py pin v0.2.0                       # commit 2: examples/, docs at it
    python scripts/release.py both 0.2.0                       # the two, one after the other
    python scripts/release.py check [COMMIT]                   # may callers pin it? (exit 0/1)

Why two commits: a caller pins a commit, and the examples cannot name the commit that contains
them. The first commit sets the version (pyproject.toml, bot/__init__.py) and dates the
changelog's entry, and is tagged vX.Y.Z (annotated); the second rewrites every pin of
``examples/`` and of docs/WORKFLOWS.md's snippets, ``examples/pin.env``, and names the commit in
the changelog's entry. ``pin`` refuses a commit that callers could not use: one that is not on
main (an ancestor of it), or whose reusable workflows lack an input or a secret that the
examples pass. ``--dry-run`` says what it would write and commits nothing. docs/RELEASE.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a file: its sibling module
from release_files import (
    PIN_FILE,
    PinError,
    callers_needs,
    dated_changelog,
    named_changelog,
    pin_files,
    read_pin,
    repin,
    unmet_needs,
    version_of,
    with_version,
)

#: Exit codes: 0 done (or the pin is fit), 1 refused (a pin callers could not use, a version not
#: above the last), 2 usage (a dirty tree, not on main, a bad version), 3 git failed.
OK, REFUSED, USAGE, GIT = 0, 1, 2, 3
VERSION_RE = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


class Stop(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)


def git(root: Path, *args: str) -> str:
    """Its output, stripped; a failure stops the release (exit 3)."""
    proc = _git(root, *args)
    if proc.returncode != 0:
        raise Stop(GIT, f"git {' '.join(args)}: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout.strip()


def git_or_none(root: Path, *args: str) -> str | None:
    """Its output, or None when git says no (a question, not a step)."""
    proc = _git(root, *args)
    return proc.stdout if proc.returncode == 0 else None


def _clean_main(root: Path, branch: str) -> None:
    if git(root, "status", "--porcelain", "--untracked-files=no"):
        raise Stop(USAGE, "the work tree has uncommitted changes: commit or stash them first")
    if git(root, "rev-parse", "--abbrev-ref", "HEAD") != branch:
        raise Stop(USAGE, f"not on {branch}: a release is cut on {branch}")


def _version(text: str) -> str:
    m = VERSION_RE.fullmatch(text)
    if m is None:
        raise Stop(USAGE, f"{text!r} is not a version MAJOR.MINOR.PATCH")
    return ".".join(m.groups())


def _commit(root: Path, files: dict[str, str], message: str, dry: bool) -> bool:
    """Write ``files`` and commit them as ``message``; dry, only say so. True when committed."""
    for name, text in files.items():
        if not dry:
            (root / name).write_text(text, encoding="utf-8")
        print(f"{'would write' if dry else 'wrote'} {name}")
    if dry:
        print(f"would commit {message!r}")
        return False
    git(root, "add", "--", *files)
    git(root, "commit", "-q", "-m", message)
    return True


def cut(root: Path, version: str, date: str, branch: str, dry: bool) -> str | None:
    """Commit 1: the version set and the changelog's Unreleased entry dated; tagged."""
    _clean_main(root, branch)
    tag = f"v{version}"
    if git(root, "tag", "--list", tag):
        raise Stop(USAGE, f"the tag {tag} exists: a tag is never moved (docs/RELEASE.md)")
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    try:
        files = {
            "CHANGELOG.md": dated_changelog(changelog, tag, date),
            **with_version(root, version),
        }
    except PinError as exc:
        raise Stop(REFUSED, str(exc)) from None
    if not _commit(root, files, f"Release {tag}", dry):
        print(f"would tag it {tag}")
        return None
    git(root, "tag", "-a", tag, "-m", f"fusion-perfbot {tag}")
    commit = git(root, "rev-parse", "HEAD")
    print(f"committed and tagged {tag}: {commit}")
    return commit


def check(root: Path, commit: str, branch: str) -> list[str]:
    """Why callers could not pin ``commit``: empty when they can."""
    found = git_or_none(root, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    if found is None:
        return [f"{commit} is not a commit of this repository"]
    full = found.strip()
    problems = []
    if git_or_none(root, "merge-base", "--is-ancestor", full, branch) is None:
        problems.append(f"{full} is not on {branch} (not an ancestor of it)")
    needs = callers_needs(root)
    return problems + unmet_needs(needs, lambda path: git_or_none(root, "show", f"{full}:{path}"))


def pin(root: Path, ref: str, branch: str, dry: bool) -> str | None:
    """Commit 2: every pin of examples/ and docs/WORKFLOWS.md, pin.env and the changelog moved
    to the release's commit, after :func:`check`."""
    _clean_main(root, branch)
    commit = git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    problems = check(root, commit, branch)
    if problems:
        raise Stop(REFUSED, f"refused to pin {ref}:\n  " + "\n  ".join(problems))
    version = version_of(git(root, "show", f"{commit}:pyproject.toml"))
    tag = f"v{version}"
    old = read_pin(root)
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    try:
        files = {name: repin(root / name, old, commit, tag) for name in pin_files(root)}
        files["CHANGELOG.md"] = named_changelog(changelog, tag, commit)
    except PinError as exc:
        raise Stop(REFUSED, str(exc)) from None
    if not _commit(root, files, f"Pin the examples and docs to {tag} ({commit})", dry):
        return None
    print(f"examples/, docs/WORKFLOWS.md and {PIN_FILE} pin {tag}: {commit}")
    return commit


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python scripts/release.py",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 done, 1 refused (said why), 2 usage, 3 git failed.",
    )
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--branch", default="main", help="the default branch (main)")
    parser.add_argument("--dry-run", action="store_true", help="say what; write nothing")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, says in (
        ("cut", "set the version and date the changelog; commit and tag it"),
        ("both", "cut, then pin the new commit: the release's two commits"),
    ):
        p = sub.add_parser(name, help=says)
        p.add_argument("version", help="MAJOR.MINOR.PATCH, above the last release")
        p.add_argument("--date", default=dt.date.today().isoformat(), help="YYYY-MM-DD")
    p = sub.add_parser("pin", help="move examples/, docs/WORKFLOWS.md and pin.env to a release")
    p.add_argument("ref", help="the release's tag (vX.Y.Z) or commit")
    p = sub.add_parser("check", help="may callers pin this commit? (default: pin.env's)")
    p.add_argument("ref", nargs="?", help="a commit or tag; default examples/pin.env's")
    args = parser.parse_args(argv)
    root: Path = args.root
    try:
        if args.command == "check":
            ref = args.ref or read_pin(root)["PERFBOT_REF"]
            problems = check(root, ref, args.branch)
            for line in problems or [f"{ref}: callers may pin it"]:
                print(line)
            return REFUSED if problems else OK
        if args.command == "pin":
            pin(root, args.ref, args.branch, args.dry_run)
            return OK
        version = _version(args.version)
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", args.date):
            raise Stop(USAGE, f"--date {args.date!r} is not YYYY-MM-DD")
        commit = cut(root, version, args.date, args.branch, args.dry_run)
        if args.command == "both":
            if commit is None:
                print(f"then: pin v{version}'s commit (python scripts/release.py pin v{version})")
            else:
                pin(root, commit, args.branch, args.dry_run)
        return OK
    except Stop as stop:
        print(f"release: {stop}", file=sys.stderr)
        return stop.code


if __name__ == "__main__":
    sys.exit(main())

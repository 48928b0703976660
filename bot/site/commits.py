"""What each commit of the site's history is, and the only links it may carry (pure).

asv links every point to ``show_commit_url + hash``, which is right only for commits of this
repository. The history also holds commits no repository has, so each is described by what its
provenance record says ran (docs/DATA.md), and a link goes only where that commit, tag or date
exists:

- **package under test, git spec** (``under_test.kind == "git"``): the key *is* the package's
  commit (benchmarks/under_test/keys.py): ``https://github.com/<repository>/commit/<sha>``,
  when the record's ``vcs_commit`` is the key and its repository a plain ``OWNER/NAME``;
- **package under test, wheel or version**: the key is a synthetic commit of the keys
  repository, in no repository of the package. A nightly (``devYYYYMMDD``) links to the
  package's branch as it was on that day (``commits/main?until=YYYY-MM-DD``); a release to its
  tag where the package's tag scheme is known (:data:`PACKAGES`), else nowhere;
- **this repository's commit** (on a configured branch): ``show_commit_url`` of asv.conf.json;
- **lab commit** (a throwaway commit of a lab copy of this repository: data/README.md): no
  link of its own; the Thunder it ran (``versions.thunder``) links as above, so the six
  measured nightlies of data/h200-thunder-nightlies read as Thunder nightlies;
- **tiled test input** (bot/results/tiled.py): no link, whatever its record says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any
from urllib.parse import quote

from bot.results.limits import FULL_SHA, REPOSITORY
from bot.results.tiled import TILED_LABEL, tiled_marker


@dataclass(frozen=True)
class Package:
    name: str  # as the site writes it
    repository: str  # OWNER/NAME on GitHub
    branch: str  # where its nightlies are built from
    release_tag: str | None  # tag of a release, "{version}" filled in; None: not known


#: Thunder tags each release by its bare version (0.2.5, 0.2.6 in Lightning-AI/lightning-thunder).
PACKAGES = {
    "thunder": Package("Thunder", "Lightning-AI/lightning-thunder", "main", "{version}"),
    "nvfuser": Package("nvFuser", "NVIDIA/Fuser", "main", None),
}

_NIGHTLY = re.compile(r"\.?dev(20\d{2})(\d{2})(\d{2})")  # as benchmarks/under_test/keys.py
_RELEASE = re.compile(r"[0-9]+(?:\.[0-9]+){1,3}")


@dataclass(frozen=True)
class Link:
    text: str
    url: str


@dataclass(frozen=True)
class CommitNote:
    commit: str
    date_ms: int
    kind: str  # "package-git", "package-nightly", "package-release", "package", "repository",
    # "lab", "tiled"
    label: str  # what ran, in a few words: "Thunder nightly 0.2.7.dev20260201"
    detail: str  # what the commit is, one sentence
    links: tuple[Link, ...]
    nightly: bool = False  # it ran a package's nightly build

    @property
    def day(self) -> str:
        return datetime.fromtimestamp(self.date_ms / 1000, timezone.utc).strftime("%Y-%m-%d")


def nightly_day(version: str) -> str | None:
    """``0.2.7.dev20260201`` -> ``2026-02-01``; None for a release or a malformed date."""
    found = _NIGHTLY.search(version)
    if not found:
        return None
    try:
        return date(int(found[1]), int(found[2]), int(found[3])).isoformat()
    except ValueError:
        return None


def version_link(package: Package, version: str) -> tuple[str, Link | None]:
    """The package's version as words, and where it can be seen in the package's repository."""
    base = f"https://github.com/{package.repository}"
    day = nightly_day(version)
    if day is not None:
        url = f"{base}/commits/{quote(package.branch)}?until={day}"
        link = Link(f"{package.repository} {package.branch} on {day}", url)
        return f"{package.name} nightly {version}", link
    if _RELEASE.fullmatch(version) and package.release_tag is not None:
        tag = package.release_tag.format(version=version)
        link = Link(f"{package.repository} tag {tag}", f"{base}/releases/tag/{quote(tag)}")
        return f"{package.name} {version}", link
    return f"{package.name} {version}", None


def _text(record: Mapping[str, Any] | None, *keys: str) -> str | None:
    value: Any = record
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return None if value is None or isinstance(value, (dict, list)) else str(value)[:200]


def _under_test(commit: str, date_ms: int, u: Mapping[str, Any]) -> CommitNote:
    name = _text(u, "package") or "package"
    package = PACKAGES.get(name)
    version = _text(u, "version") or "unknown version"
    shown = package.name if package else name
    kind, vcs, repo = _text(u, "kind"), _text(u, "vcs_commit"), _text(u, "repository")
    key = _text(u, "key")
    if key is not None and key != commit:
        what = f"package under test; its record names key {key[:12]}, not this commit: no link"
        return CommitNote(commit, date_ms, "package", f"{shown} {version}", what, ())
    if kind == "git":
        label = f"{shown} {version}" + (f" at {vcs[:12]}" if vcs else "")
        if vcs == commit and repo and REPOSITORY.fullmatch(repo) and FULL_SHA.fullmatch(commit):
            own = Link(f"{repo}@{commit[:12]}", f"https://github.com/{repo}/commit/{commit}")
            what = f"the package under test's own commit (git spec), in {repo}"
            return CommitNote(commit, date_ms, "package-git", label, what, (own,))
        what = "package under test from git; the record gives no GitHub commit to link"
        return CommitNote(commit, date_ms, "package", label, what, ())
    if package is None:
        what = f"package under test ({kind or 'unknown kind'}); its repository is not known"
        return CommitNote(commit, date_ms, "package", f"{shown} {version}", what, ())
    label, link = version_link(package, version)
    build = kind or "build"
    synthetic = f"a key made from the installed {build} (no commit of {package.repository})"
    if link is None:
        return CommitNote(commit, date_ms, "package", label, synthetic, ())
    nightly = nightly_day(version) is not None
    kind_name = "package-nightly" if nightly else "package-release"
    return CommitNote(commit, date_ms, kind_name, label, synthetic, (link,), nightly)


def describe(
    commit: str,
    date_ms: int,
    record: Mapping[str, Any] | None,
    *,
    on_branch: bool,
    show_commit_url: str,
    variant: str | None = None,
) -> CommitNote:
    """One commit of the history, from its provenance record (None: the run wrote none)."""
    if record is not None and tiled_marker(record) is not None:
        return CommitNote(commit, date_ms, "tiled", TILED_LABEL, "tiled by tests/perf/tile.py", ())
    under_test = record.get("under_test") if record is not None else None
    if isinstance(under_test, Mapping):
        return _under_test(commit, date_ms, under_test)
    thunder = _text(record, "versions", "thunder")
    label, thunder_link = version_link(PACKAGES["thunder"], thunder) if thunder else ("", None)
    nightly = thunder is not None and nightly_day(thunder) is not None
    if variant and variant != "stock":
        label = f"{label}, {variant}" if label else variant
    links = (thunder_link,) if thunder_link else ()
    if on_branch and show_commit_url.startswith("https://") and FULL_SHA.fullmatch(commit):
        own = Link(f"this repository@{commit[:12]}", show_commit_url + commit)
        what = "a commit of this repository"
        label = label or commit[:12]
        return CommitNote(commit, date_ms, "repository", label, what, (own, *links), nightly)
    what = "a throwaway lab commit of this suite (in no repository)"
    return CommitNote(commit, date_ms, "lab", label or "lab commit", what, links, nightly)

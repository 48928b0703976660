"""What a side asks for: a wheel file, a pinned requirement, or a git URL at a full commit.

Pure parsing, so that a typo is refused before anything is installed or measured. Only exact
pins are accepted: a side that resolves to a different build tomorrow is not a measurement of
anything one can name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: package under test -> (import name, what a distribution name of it looks like)
PACKAGES: dict[str, tuple[str, re.Pattern[str]]] = {
    "thunder": ("thunder", re.compile(r"lightning[-_.]thunder", re.I)),
    # nvFuser's wheels are named per CUDA and torch build: nvfuser-cu130-torch210, ...
    "nvfuser": ("nvfuser_direct", re.compile(r"nvfuser([-_.][a-z0-9]+)*", re.I)),
}

_REQUIREMENT = re.compile(
    r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*(?P<version>[A-Za-z0-9.+!_-]+)"
)
_GIT = re.compile(
    r"git\+(?P<url>(?:https://|file://|ssh://)[^\s@#]+(?:@[^\s@#/]+/[^\s@#]+)?)@(?P<sha>[0-9a-f]{40})"
    r"(?:#subdirectory=(?P<subdir>[A-Za-z0-9._/-]+))?"
)
_WHEEL = re.compile(
    r"(?P<name>[A-Za-z0-9_.]+)-(?P<version>[A-Za-z0-9_.+!]+)(-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl"
)
_GITHUB = re.compile(r"https://github\.com/(?P<repo>[A-Za-z0-9-]+/[A-Za-z0-9._-]+?)(?:\.git)?/?")


class SpecError(ValueError):
    """A spec that names no exact build of the package under test."""


@dataclass(frozen=True)
class Spec:
    package: str  # "thunder" or "nvfuser"
    kind: str  # "wheel", "requirement" or "git"
    text: str  # as given
    pip_target: str  # what pip is asked to install
    distribution: str | None = None  # known before installing (wheel, requirement)
    version: str | None = None
    commit: str | None = None  # git
    url: str | None = None  # git
    repository: str | None = None  # OWNER/NAME when the git URL is GitHub's

    @property
    def module(self) -> str:
        return PACKAGES[self.package][0]

    def shown(self) -> str:
        """The spec as a comment may show it: a wheel by its file name, a local git repository
        by its folder's name, never a local path nor a URL's user or token."""
        if self.kind == "wheel":
            return Path(self.text).name
        if self.kind == "git" and self.url is not None:
            scheme, rest = self.url.split("://", 1)
            if scheme == "file":
                rest = ".../" + Path(rest).name
            else:
                host, _, path = rest.partition("/")
                rest = host.rsplit("@", 1)[-1] + "/" + path
            _, mark, fragment = self.text.partition("#")
            return f"git+{scheme}://{rest}@{self.commit}{mark}{fragment}"
        return self.text


def parse_spec(text: str, package: str) -> Spec:
    if package not in PACKAGES:
        raise SpecError(f"package {package!r}: choose one of {', '.join(PACKAGES)}")
    text = text.strip()
    name_ok = PACKAGES[package][1]
    if text.endswith(".whl"):
        match = _WHEEL.fullmatch(Path(text).name)
        if not match:
            raise SpecError(f"{text!r} is not a wheel file name (NAME-VERSION-PY-ABI-PLATFORM.whl)")
        name = match["name"].replace("_", "-")
        if not name_ok.fullmatch(name):
            raise SpecError(f"wheel {Path(text).name!r} is not a build of {package}")
        return Spec(package, "wheel", text, str(Path(text).resolve()), name, match["version"])
    if text.startswith("git+"):
        match = _GIT.fullmatch(text)
        if not match:
            raise SpecError(
                f"{text!r}: a git spec is git+https://HOST/OWNER/NAME@<40-hex commit> "
                "(optionally #subdirectory=DIR); branch and tag names are not pinned"
            )
        url = match["url"]
        github = _GITHUB.fullmatch(url)
        return Spec(
            package,
            "git",
            text,
            text,
            commit=match["sha"],
            url=url,
            repository=github["repo"] if github else None,
        )
    match = _REQUIREMENT.fullmatch(text)
    if match:
        if not name_ok.fullmatch(match["name"]):
            raise SpecError(f"{match['name']!r} is not a distribution of {package}")
        return Spec(package, "requirement", text, text, match["name"], match["version"])
    raise SpecError(
        f"{text!r}: give a wheel file, NAME==VERSION, or git+URL@<40-hex commit> for {package}"
    )

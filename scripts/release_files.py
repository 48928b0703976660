"""What a release rewrites and what a pin must offer (pure, but the reading of this tree).

scripts/release.py does the git; this module says, from file texts, what the version, the
changelog and the pins become, and what the examples need of the reusable workflows at a
commit. tests/workflows/test_example_caller.py holds the committed pin to the same rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

PIN_FILE = "examples/pin.env"
PIN_KEYS = ("PERFBOT_REPOSITORY", "PERFBOT_REF", "PERFBOT_VERSION")
#: A call of one of this repository's reusable workflows: `uses: OWNER/NAME/.github/workflows/F@R`.
CALL_RE = re.compile(r"uses:\s*(?P<repo>[^/\s]+/[^/\s]+)/\.github/workflows/(?P<file>[\w.-]+)@")
TAG_RE = re.compile(r"v(\d+)\.(\d+)\.(\d+)")
UNRELEASED = "## Unreleased\n"


class PinError(Exception):
    """A release step that cannot be done as asked; the message says why."""


def read_pin(root: Path) -> dict[str, str]:
    lines = (root / PIN_FILE).read_text(encoding="utf-8").splitlines()
    values = dict(line.split("=", 1) for line in lines if "=" in line)
    if set(values) != set(PIN_KEYS):
        raise PinError(f"{PIN_FILE} must hold exactly {', '.join(PIN_KEYS)}")
    return values


def _numbers(tag: str) -> tuple[int, ...]:
    m = TAG_RE.fullmatch(tag)
    if m is None:
        raise PinError(f"{tag!r} is not vMAJOR.MINOR.PATCH")
    return tuple(int(n) for n in m.groups())


def released(changelog: str) -> list[str]:
    """The changelog's released versions, newest first (its `## vX.Y.Z ...` headings)."""
    return re.findall(r"^## (v\d+\.\d+\.\d+)\b", changelog, re.M)


def dated_changelog(changelog: str, tag: str, date: str) -> str:
    """The Unreleased entry becomes ``## vX.Y.Z (date)``, under a new, empty Unreleased. The
    version must be above every released one, and the entry must say something."""
    if changelog.count(UNRELEASED) != 1:
        raise PinError("CHANGELOG.md has no single '## Unreleased' heading")
    before, after = changelog.split(UNRELEASED)
    body = re.split(r"^## ", after, maxsplit=1, flags=re.M)[0]
    if not body.strip():
        raise PinError("CHANGELOG.md's Unreleased entry is empty: say what changed first")
    newest = released(changelog)
    if newest and _numbers(tag) <= max(_numbers(v) for v in newest):
        raise PinError(f"{tag} is not above the newest release, {max(newest, key=_numbers)}")
    return f"{before}{UNRELEASED}\n## {tag} ({date})\n{after}"


def named_changelog(changelog: str, tag: str, commit: str) -> str:
    """The release's entry names its commit, first thing under its heading."""
    m = re.search(rf"^## {re.escape(tag)}\b[^\n]*\n", changelog, re.M)
    if m is None:
        raise PinError(f"CHANGELOG.md has no entry for {tag}: cut it first")
    line = f"\nCommit `{commit}`: what callers pin (docs/RELEASE.md).\n"
    entry = changelog[m.end() :].split("\n## ", 1)[0]
    if commit in entry:
        return changelog
    return changelog[: m.end()] + line + changelog[m.end() :]


def version_of(pyproject: str) -> str:
    m = re.search(r'^version = "(\d+\.\d+\.\d+)"$', pyproject, re.M)
    if m is None:
        raise PinError('pyproject.toml has no version = "X.Y.Z" line')
    return m.group(1)


def with_version(root: Path, version: str) -> dict[str, str]:
    """pyproject.toml and bot/__init__.py with the new version (tests/test_readme.py holds the
    two and the changelog's newest entry equal)."""
    out = {}
    for name, pattern, line in (
        ("pyproject.toml", r'^version = "[^"]*"$', f'version = "{version}"'),
        ("bot/__init__.py", r'^__version__ = "[^"]*"$', f'__version__ = "{version}"'),
    ):
        text = (root / name).read_text(encoding="utf-8")
        new, n = re.subn(pattern, line, text, count=1, flags=re.M)
        if n != 1:
            raise PinError(f"{name} has no version line")
        out[name] = new
    return out


def pin_files(root: Path) -> list[str]:
    """Every file whose pins a release moves: the examples' callers, docs/WORKFLOWS.md's
    snippets, and pin.env."""
    callers = sorted(
        p.relative_to(root).as_posix()
        for p in root.glob("examples/*/.github/workflows/*.yml")
        if CALL_RE.search(p.read_text(encoding="utf-8"))
    )
    return [*callers, "docs/WORKFLOWS.md", PIN_FILE]


def repin(path: Path, old: dict[str, str], commit: str, tag: str) -> str:
    """The file with the old pin's commit replaced by ``commit`` and, on those lines, the old
    version comment by ``tag``; pin.env rewritten whole."""
    if path.name == "pin.env":
        values = {**old, "PERFBOT_REF": commit, "PERFBOT_VERSION": tag}
        return "".join(f"{key}={values[key]}\n" for key in PIN_KEYS)
    text = path.read_text(encoding="utf-8")
    if old["PERFBOT_REF"] not in text:
        raise PinError(f"{path.name} does not name the current pin {old['PERFBOT_REF']}")
    lines = []
    for line in text.splitlines(keepends=True):
        if old["PERFBOT_REF"] in line:
            line = line.replace(old["PERFBOT_REF"], commit)
            line = re.sub(r"# v\d+\.\d+\.\d+\b", f"# {tag}", line)
        lines.append(line)
    return "".join(lines)


def _load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


Needs = dict[str, tuple[set[str], set[str]]]


def callers_needs(root: Path) -> Needs:
    """For each reusable workflow the examples call: the inputs and secrets they pass."""
    needs: Needs = {}
    for path in root.glob("examples/*/.github/workflows/*.yml"):
        for job in (_load(path.read_text(encoding="utf-8")).get("jobs") or {}).values():
            m = CALL_RE.match(f"uses: {job.get('uses', '')}")
            if m is None:
                continue
            inputs, secrets = needs.setdefault(m["file"], (set(), set()))
            inputs |= set(job.get("with") or {})
            secrets |= set(job.get("secrets") or {})
    return needs


def unmet_needs(needs: Needs, shown: Callable[[str], str | None]) -> list[str]:
    """What the workflows at a commit (``shown(path)``: the file's text there, None when
    absent) lack of what the examples pass, and what they require that the examples do not."""
    problems = []
    for name, (inputs, secrets) in sorted(needs.items()):
        text = shown(f".github/workflows/{name}")
        if text is None:
            problems.append(f"{name} does not exist at that commit")
            continue
        wf = _load(text)
        call = ((wf.get("on") or {}).get("workflow_call")) or {}
        declared, offered = call.get("inputs") or {}, call.get("secrets") or {}
        lacks = sorted(inputs - set(declared))
        if lacks:
            problems.append(
                f"{name} there lacks the input(s) the examples pass: {', '.join(lacks)}"
            )
        lacks = sorted(secrets - set(offered))
        if lacks:
            problems.append(
                f"{name} there lacks the secret(s) the examples pass: {', '.join(lacks)}"
            )
        required = sorted(k for k, v in declared.items() if (v or {}).get("required"))
        unmet = [k for k in required if k not in inputs]
        if unmet:
            problems.append(f"{name} there requires input(s) the examples omit: {', '.join(unmet)}")
    return problems

"""Limits on a bench artifact before a single byte of it is unpacked (pure).

The artifact was written on a machine where the PR's code ran, so its zip is hostile input
until shown otherwise: a zip bomb (tiny download, huge output), thousands of entries, a name
that escapes the destination (``../``, ``/etc``, ``a\\b`` on another reader), a symbolic link
that a later write follows out of the folder, or a name built to be a workflow command when a
log prints it (``::error::``). Each rule below is checked on the listing GitHub gives and on
the zip's central directory, before extraction; a violation names its rule, and the offending
name only as an escaped literal (bot/tell/log.py `quoted`), never at the start of a line.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass

from bot.tell.log import quoted

#: Characters an entry name may hold: enough for asv results and bench-meta.json, nothing a
#: shell, a log or another operating system could read differently.
ENTRY_NAME = re.compile(r"[A-Za-z0-9._/-]+")
#: `<prefix>-<plain-name>`: a runner label, as the bench names its per-machine artifacts.
PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MAX_NAME = 255


@dataclass(frozen=True)
class Limits:
    max_bytes: int  # per artifact: its listed size, its download, and its unpacked total
    max_files: int  # entries in one artifact's zip
    #: Artifacts of the run that carry the prefix; None: the configured [results] max_machines
    #: (fetch-artifact fills it in before it lists anything).
    max_artifacts: int | None = None


@dataclass(frozen=True)
class Listed:
    """One artifact of GET actions/runs/{id}/artifacts."""

    id: int
    name: str
    size_in_bytes: int
    expired: bool


@dataclass(frozen=True)
class Entry:
    """One member of the zip's central directory (zipfile.ZipInfo's fields that matter)."""

    name: str
    file_size: int
    external_attr: int
    create_system: int
    flag_bits: int = 0  # bit 0: encrypted (APPNOTE 4.4.4)


#: The general-purpose flag bit of an encrypted zip entry (APPNOTE 4.4.4, bit 0).
ENCRYPTED = 0x1


class Violation(Exception):
    """An artifact broke a rule; the message names the rule and is safe to print."""


def name_ok(name: str, prefix: str) -> bool:
    """`prefix` alone, or `prefix-<plain-name>`."""
    if name == prefix:
        return True
    return (
        name.startswith(prefix + "-") and PLAIN_NAME.fullmatch(name[len(prefix) + 1 :]) is not None
    )


def select(listed: Sequence[Listed], prefix: str, limits: Limits) -> list[Listed]:
    """The artifacts to fetch: those whose name starts with `prefix`. Any of those that is
    misnamed, expired or over the size limit fails the whole run, so that a forged extra
    artifact cannot be quietly dropped while the rest is posted."""
    ours = [a for a in listed if a.name.startswith(prefix)]
    if not ours:
        raise Violation(f"no artifact named {quoted(prefix)} or {quoted(prefix + '-NAME')}")
    if limits.max_artifacts is None:
        raise ValueError("Limits.max_artifacts must be set before select()")
    if len(ours) > limits.max_artifacts:
        raise Violation(
            f"too many artifacts: {len(ours)}, more than the bound of {limits.max_artifacts} "
            "(--max-artifacts; by default perfbot.toml [results] max_machines, one per runner "
            "kind): nothing was unpacked"
        )
    names = [a.name for a in ours]
    for a in ours:
        if not name_ok(a.name, prefix):
            raise Violation(f"artifact name rule: {quoted(a.name)} is not PREFIX or PREFIX-NAME")
        if names.count(a.name) > 1:
            raise Violation(f"artifact name rule: {quoted(a.name)} appears twice")
        if a.expired:
            raise Violation(f"artifact {quoted(a.name)} has expired")
        if not 0 <= a.size_in_bytes <= limits.max_bytes:
            raise Violation(
                f"size rule: artifact {quoted(a.name)} is {a.size_in_bytes} bytes "
                f"(at most {limits.max_bytes})"
            )
    if prefix in names and len(names) > 1:
        raise Violation("artifact name rule: PREFIX and PREFIX-NAME artifacts together")
    return sorted(ours, key=lambda a: a.name)


def entry_kind(entry: Entry) -> str:
    """ "file", "dir", "symlink" or "special", from the name and the Unix mode bits."""
    mode = (entry.external_attr >> 16) & 0xFFFF
    kind = stat.S_IFMT(mode) if entry.create_system == 3 else 0
    if kind == stat.S_IFLNK:
        return "symlink"
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "special"
    if entry.name.endswith("/") or kind == stat.S_IFDIR:
        return "dir"
    return "file"


def name_problem(name: str) -> str | None:
    """Why an entry name is refused, or None: relative, plain characters, no `..`."""
    if not name or len(name) > MAX_NAME:
        return "empty or too long"
    if "\\" in name:
        return "holds a backslash"
    if name.startswith("/"):
        return "is absolute"
    if not ENTRY_NAME.fullmatch(name):
        return "holds a character outside [A-Za-z0-9._/-]"
    parts = name.rstrip("/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "has an empty, '.' or '..' component"
    return None


def check_entries(entries: Sequence[Entry], limits: Limits) -> None:
    """Every rule on the zip's members, before extraction; raises the first Violation."""
    if len(entries) > limits.max_files:
        raise Violation(f"file count rule: {len(entries)} entries (at most {limits.max_files})")
    total, seen = 0, set()
    for entry in entries:
        problem = name_problem(entry.name)
        if problem is not None:
            raise Violation(f"entry name rule: {quoted(entry.name, 80)} {problem}")
        if entry.flag_bits & ENCRYPTED:
            raise Violation(f"zip rule: {quoted(entry.name, 80)} is encrypted")
        kind = entry_kind(entry)
        if kind in ("symlink", "special"):
            raise Violation(f"entry type rule: {quoted(entry.name, 80)} is a {kind}, not a file")
        key = entry.name.rstrip("/")
        if key in seen:
            raise Violation(f"entry name rule: {quoted(entry.name, 80)} appears twice")
        seen.add(key)
        total += entry.file_size
        if total > limits.max_bytes:
            raise Violation(f"unpacked size rule: more than {limits.max_bytes} bytes once unpacked")
    files = {e.name for e in entries if entry_kind(e) == "file"}
    for name in files:  # a file that is also some entry's folder cannot be both on disk
        parent = name.rsplit("/", 1)[0] if "/" in name else None
        while parent:
            if parent in files:
                raise Violation(f"entry name rule: {quoted(parent, 80)} is a file and a folder")
            parent = parent.rsplit("/", 1)[0] if "/" in parent else None

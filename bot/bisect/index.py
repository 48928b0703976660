"""The candidate builds between two versions, listed from a package index's answer (pure).

A networked runner asks the index (``pip index versions --pre NAME``, which honours the
runner's pip configuration, or PyPI's JSON API saved to a file); what comes back is parsed
here, so the listing can be tested on a recorded answer without a network. Order is the
index's own: pip lists versions newest first in PEP 440 order, PyPI's JSON dates each
release by its files' upload times; no version arithmetic is redone here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from benchmarks.under_test.keys import nightly_date
from bot.results.types import BadInput

_AVAILABLE = re.compile(r"^Available versions:\s*(?P<list>.+)$", re.MULTILINE)
_VERSION = re.compile(r"[A-Za-z0-9.+!_-]{1,100}")
#: A pip or JSON answer larger than this is not an index listing of one distribution.
MAX_ANSWER_BYTES = 32 * 1024 * 1024


class ListingError(BadInput):
    """The index's answer cannot be read as a listing of versions."""


@dataclass(frozen=True)
class Release:
    version: str
    day: date | None  # the nightly's devYYYYMMDD, else the upload date where the index says


def from_pip(answer: str) -> list[Release]:
    """``pip index versions`` output, oldest first (pip lists them newest first)."""
    found = _AVAILABLE.search(answer)
    if not found:
        raise ListingError("no 'Available versions:' line in the pip index answer")
    versions = [v.strip() for v in found["list"].split(",") if v.strip()]
    bad = [v for v in versions if not _VERSION.fullmatch(v)]
    if bad:
        raise ListingError(f"the pip index answer lists {bad[0]!r}, which is no version")
    return [Release(v, nightly_date(v)) for v in reversed(versions)]


def _uploaded(files: Any, version: str) -> datetime | None:
    if not isinstance(files, list):
        raise ListingError(f"PyPI JSON: release {version!r} is not a list of files")
    times = []
    for f in files:
        if not isinstance(f, Mapping) or f.get("yanked") is True:
            continue
        stamp = f.get("upload_time_iso_8601") or f.get("upload_time")
        if isinstance(stamp, str):
            try:
                times.append(datetime.fromisoformat(stamp.replace("Z", "+00:00")))
            except ValueError:
                raise ListingError(f"PyPI JSON: {version!r} has upload time {stamp!r}") from None
    return min(times) if times else None


def from_pypi_json(data: Any) -> list[Release]:
    """PyPI's ``/pypi/NAME/json``: every release with a file that is not yanked, oldest
    upload first (a release without files, or only yanked ones, cannot be installed)."""
    releases = data.get("releases") if isinstance(data, Mapping) else None
    if not isinstance(releases, Mapping):
        raise ListingError("PyPI JSON: no 'releases' object")
    dated = []
    for version, files in releases.items():
        if not isinstance(version, str) or not _VERSION.fullmatch(version):
            raise ListingError(f"PyPI JSON: release {str(version)[:60]!r} is no version")
        when = _uploaded(files, version)
        if when is not None:
            dated.append((when, version))
    return [Release(v, nightly_date(v) or when.date()) for when, v in sorted(dated)]


def read_answer(text: str) -> list[Release]:
    """A saved answer of either kind: JSON (PyPI's API) or pip's text."""
    if text.lstrip().startswith("{"):
        try:
            return from_pypi_json(json.loads(text))
        except json.JSONDecodeError as exc:
            raise ListingError(f"PyPI JSON answer: {exc}") from None
    return from_pip(text)


def between(
    listing: Sequence[Release],
    good: str,
    bad: str,
    *,
    since: date | None = None,
    until: date | None = None,
    nightlies_only: bool = False,
) -> list[str]:
    """The versions strictly between ``good`` and ``bad`` in the index's order; with
    ``since``/``until``, only those dated in that range (inclusive); ``nightlies_only`` leaves
    out releases (a release is often the same code as the nightly before it)."""
    order = [r.version for r in listing]
    for which, version in (("good", good), ("bad", bad)):
        if version not in order:
            raise ValueError(f"the {which} version {version} is not in the index's answer")
    lo, hi = order.index(good), order.index(bad)
    if hi <= lo:
        raise ValueError(f"the index lists {bad} before {good}: the bad build must be newer")
    out = []
    for r in listing[lo + 1 : hi]:
        if nightlies_only and nightly_date(r.version) is None:
            continue
        if since is not None and (r.day is None or r.day < since):
            continue
        if until is not None and (r.day is None or r.day > until):
            continue
        out.append(r.version)
    return out


def ask_pip(distribution: str, pip_args: Sequence[str] = (), timeout: float = 120.0) -> str:
    """``pip index versions --pre NAME`` on this runner (its index, proxies and pins apply)."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,100}", distribution):
        raise ListingError(f"{distribution!r} is not a distribution name")
    cmd = [sys.executable, "-m", "pip", "index", "versions", "--pre", *pip_args, distribution]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise ListingError(
            f"pip index versions {distribution}: no answer in {timeout:.0f} s"
        ) from None
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1][:300]
        raise ListingError(f"pip index versions {distribution} failed: {why}")
    return done.stdout[:MAX_ANSWER_BYTES]

"""The vendor lockfile (site_assets/vendor.lock.json) and the offline checks against it.

Pure reading and checking: what each vendored file is (npm package, version, path, hashes, the
CDN URL it replaces) and whether bytes on disk are exactly that. Fetching from npm is
vendor.py's; asv's page and the URLs in it are refs.py's.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
ASSETS = REPO_ROOT / "site_assets"
LOCKFILE = ASSETS / "vendor.lock.json"
LOCK_SCHEMA = "fusion-perfbot-vendor-lock/1"
#: Where vendored files live, both under site_assets/ and in the built site.
VENDOR_DIR = "vendor"


class VendorError(Exception):
    """A vendored file, the lockfile or the page that refers to them is not as recorded."""


@dataclass(frozen=True)
class Entry:
    """One vendored file."""

    package: str  # npm package name
    version: str  # exact npm version
    path: str  # path inside the tarball, e.g. "package/dist/jquery.min.js"
    tarball_integrity: str  # npm's dist.integrity of the whole tarball
    sha256: str  # hex digest of the file's bytes
    integrity: str  # SRI value the site's HTML carries for it ("" for files not in a tag)
    replaces: str | None  # the CDN URL in asv's index.html, None for support files
    upstream_integrity: str | None  # asv's SRI value for that URL
    byte_identical: bool  # the npm bytes match upstream_integrity
    inert_urls: tuple[str, ...]  # URLs in the file's text (license banners), never fetched
    note: str = ""

    @property
    def local_path(self) -> str:
        """Site-relative path: vendor/<package>-<version>/<path minus 'package/'>."""
        inner = self.path.removeprefix("package/")
        return f"{VENDOR_DIR}/{self.package}-{self.version}/{inner}"


@dataclass(frozen=True)
class Lock:
    asv_version: str
    entries: tuple[Entry, ...]

    def by_url(self) -> dict[str, Entry]:
        return {e.replaces: e for e in self.entries if e.replaces}


def sri(data: bytes, algorithm: str = "sha384") -> str:
    """A Subresource Integrity value (``sha256-...``, ``sha384-...`` or ``sha512-...``)."""
    if algorithm not in ("sha256", "sha384", "sha512"):
        raise VendorError(f"unsupported SRI algorithm {algorithm!r}")
    return f"{algorithm}-{base64.b64encode(hashlib.new(algorithm, data).digest()).decode()}"


def sri_matches(data: bytes, value: str) -> bool:
    algorithm, _, _ = value.partition("-")
    return algorithm in ("sha256", "sha384", "sha512") and sri(data, algorithm) == value


_URL = re.compile(r"""(?i)(?:https?:)?//[a-z0-9][-a-z0-9.]*\.[a-z]{2,}[^\s"'<>()\\]*""")


def urls_in(text: str) -> list[str]:
    """Absolute and protocol-relative URLs in a text, in order."""
    return _URL.findall(text)


def _entry(raw: Mapping[str, Any]) -> Entry:
    try:
        return Entry(
            package=str(raw["package"]),
            version=str(raw["version"]),
            path=str(raw["path"]),
            tarball_integrity=str(raw["tarball_integrity"]),
            sha256=str(raw["sha256"]),
            integrity=str(raw["integrity"]),
            replaces=raw.get("replaces"),
            upstream_integrity=raw.get("upstream_integrity"),
            byte_identical=bool(raw["byte_identical"]),
            inert_urls=tuple(raw.get("inert_urls", ())),
            note=str(raw.get("note", "")),
        )
    except KeyError as exc:
        raise VendorError(f"lockfile entry {raw.get('path')!r} lacks {exc}") from None


def load_lock(path: Path = LOCKFILE) -> Lock:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise VendorError(f"{path}: cannot read the vendor lockfile: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != LOCK_SCHEMA:
        raise VendorError(f"{path}: not a {LOCK_SCHEMA} file")
    return Lock(str(data["asv_version"]), tuple(_entry(e) for e in data["files"]))


def check_bytes(entry: Entry, data: bytes) -> None:
    """The file is exactly the one recorded (and, where claimed, the CDN's bytes)."""
    where = entry.local_path
    if hashlib.sha256(data).hexdigest() != entry.sha256:
        raise VendorError(f"{where}: sha256 differs from the lockfile")
    if entry.integrity and not sri_matches(data, entry.integrity):
        raise VendorError(f"{where}: bytes do not match integrity {entry.integrity}")
    if entry.byte_identical != bool(
        entry.upstream_integrity and sri_matches(data, entry.upstream_integrity)
    ):
        raise VendorError(f"{where}: byte_identical={entry.byte_identical} is not true of it")
    found = tuple(dict.fromkeys(urls_in(data.decode("utf-8", "replace"))))
    if found != entry.inert_urls:
        raise VendorError(f"{where}: URLs in the text {found} differ from the lockfile's")


def verify_dir(root: Path, lock: Lock) -> None:
    """Every vendored file under ``root`` (site_assets/ or a built site) is as recorded."""
    for entry in lock.entries:
        path = root / entry.local_path
        if not path.is_file():
            raise VendorError(f"{path}: vendored file missing")
        check_bytes(entry, path.read_bytes())


def write_lock(lock: Lock, path: Path = LOCKFILE) -> None:
    files = []
    for e in lock.entries:
        raw = asdict(e)
        raw["inert_urls"] = list(e.inert_urls)
        files.append(raw)
    data = {"schema": LOCK_SCHEMA, "asv_version": lock.asv_version, "files": files}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

"""Vendored copies of the JavaScript/CSS that asv's page loads from CDNs, and their lockfile.

asv 0.6.6's ``index.html`` pulls jQuery, flot, bootstrap and three small plugins from three
CDNs; offline (or behind a firewall) the page shows only asv's error page. The site serves
local copies instead, taken from npm packages at pinned versions. ``site_assets/vendor.lock.json``
records, per file, the npm package and version, the path inside its tarball, the tarball's own
integrity (what npm signs), the CDN URL it replaces, and the SRI hash the page carries.

Where the npm bytes equal the CDN's (asv's own ``integrity`` attribute proves it), that hash is
kept; where npm has no identical file (flot's CDN copies are cdnjs's minifications; stupidtable
1.0.1 is not on npm at all) the closest npm file is used and the hash recomputed, and the
lockfile says so (``byte_identical: false`` and a ``note``).

``python -m bot.site.vendor`` checks the committed copies against the lockfile (offline);
``--refetch`` also downloads every tarball with ``npm pack`` and compares it byte for byte;
``--write`` re-vendors from the lockfile's pins (package, version, path, replaced URL): it
fetches, rewrites the copies and recomputes every other recorded field.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
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


def npm_pack(package: str, version: str, workdir: Path) -> bytes:
    """The package's tarball, as npm serves it (npm checks it against the registry's hash)."""
    done = subprocess.run(
        ["npm", "pack", "--json", "--silent", f"{package}@{version}"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise VendorError(f"npm pack {package}@{version} failed: {done.stderr.strip()[-500:]}")
    (info,) = json.loads(done.stdout)
    return (workdir / str(info["filename"])).read_bytes()


def member(tarball: bytes, path: str) -> bytes:
    """One regular file of a tarball, read in memory (nothing is extracted to disk)."""
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
        try:
            info = tar.getmember(path)
        except KeyError:
            raise VendorError(f"tarball has no {path}") from None
        handle = tar.extractfile(info) if info.isfile() else None
        if handle is None:
            raise VendorError(f"{path} in the tarball is not a regular file")
        data: bytes = handle.read()
        return data


def fetch_tarballs(lock: Lock, workdir: Path) -> dict[tuple[str, str], bytes]:
    tarballs: dict[tuple[str, str], bytes] = {}
    for entry in lock.entries:
        key = (entry.package, entry.version)
        if key not in tarballs:
            tarballs[key] = npm_pack(entry.package, entry.version, workdir)
    return tarballs


def fetch(lock: Lock, workdir: Path) -> dict[str, bytes]:
    """Every entry's bytes from npm, each tarball checked against the lockfile first."""
    tarballs = fetch_tarballs(lock, workdir)
    out = {}
    for entry in lock.entries:
        tarball = tarballs[(entry.package, entry.version)]
        if not sri_matches(tarball, entry.tarball_integrity):
            raise VendorError(f"{entry.package}@{entry.version}: tarball integrity differs")
        out[entry.local_path] = member(tarball, entry.path)
    return out


def cdn_integrity(page: str) -> dict[str, str]:
    """asv's page: CDN URL -> the ``integrity`` value asv gives it."""
    out = {}
    for tag in _TAG.finditer(page):
        attrs = {m.group(1).lower(): m.group(3) for m in _ATTR.finditer(tag.group(0))}
        url = attrs.get("src") or attrs.get("href")
        if url and _REMOTE.match(url) and "integrity" in attrs:
            out[url] = attrs["integrity"]
    return out


def derive(entry: Entry, tarball: bytes, upstream: Mapping[str, str]) -> Entry:
    """An entry's recorded facts, recomputed from its pins (package, version, path, replaces)
    and the bytes npm served: keeps asv's integrity where the bytes are the CDN's."""
    data = member(tarball, entry.path)
    up = upstream.get(entry.replaces) if entry.replaces else None
    if entry.replaces and up is None:
        raise VendorError(f"asv's page does not load {entry.replaces}")
    identical = bool(up and sri_matches(data, up))
    return replace(
        entry,
        tarball_integrity=sri(tarball, "sha512"),
        sha256=hashlib.sha256(data).hexdigest(),
        integrity=(up if identical and up else sri(data, "sha384")) if entry.replaces else "",
        upstream_integrity=up,
        byte_identical=identical,
        inert_urls=tuple(dict.fromkeys(urls_in(data.decode("utf-8", "replace")))),
    )


def write_lock(lock: Lock, path: Path = LOCKFILE) -> None:
    files = []
    for e in lock.entries:
        raw = asdict(e)
        raw["inert_urls"] = list(e.inert_urls)
        files.append(raw)
    data = {"schema": LOCK_SCHEMA, "asv_version": lock.asv_version, "files": files}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


# --- the page: asv's CDN tags pointed at the local copies -------------------------------------

_TAG = re.compile(r"<(script|link)\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r"""\b(src|href|integrity)\s*=\s*(["'])(.*?)\2""", re.IGNORECASE)
_REMOTE = re.compile(r"(?i)^(?:[a-z][a-z0-9+.-]*:|//)")


def rewrite_page(html: str, lock: Lock) -> str:
    """Point every CDN ``<script src>`` / ``<link href>`` at its vendored copy.

    The ``integrity`` attribute becomes the lockfile's (unchanged where the bytes are the
    CDN's). A remote URL the lockfile does not know is an error: a newer asv that adds a CDN
    script must fail the build, not ship a page that phones out.
    """
    known = lock.by_url()

    def fix(tag: re.Match[str]) -> str:
        text = tag.group(0)
        attrs = {m.group(1).lower(): m.group(3) for m in _ATTR.finditer(text)}
        url = attrs.get("src") or attrs.get("href")
        if url is None or not _REMOTE.match(url):
            return text
        entry = known.get(url)
        if entry is None:
            raise VendorError(f"page loads {url}, which the vendor lockfile does not cover")
        if attrs.get("integrity") != entry.upstream_integrity:
            raise VendorError(f"page's integrity for {url} is not the lockfile's upstream one")

        def attr(m: re.Match[str]) -> str:
            name = m.group(1).lower()
            value = entry.local_path if name in ("src", "href") else entry.integrity
            return f"{m.group(1)}={m.group(2)}{value}{m.group(2)}"

        return _ATTR.sub(attr, text)

    return _TAG.sub(fix, html)


def resource_refs(html: str) -> list[str]:
    """URLs an HTML page makes the browser fetch by itself (not ``<a href>`` navigation)."""
    refs = []
    for tag in re.finditer(r"<(script|link|img|iframe|source|embed|object)\b[^>]*>", html, re.I):
        for m in re.finditer(r"""\b(src|href|data|srcset)\s*=\s*(["'])(.*?)\2""", tag.group(0)):
            refs.append(m.group(3))
    refs += re.findall(r"""url\(\s*["']?([^"')]+)""", html)
    return refs


def css_refs(css: str) -> list[str]:
    """``url(...)`` and ``@import`` targets of a stylesheet."""
    refs = re.findall(r"""url\(\s*["']?([^"')]+)""", css)
    refs += re.findall(r"""@import\s+["']([^"']+)""", css)
    return refs


def is_remote(ref: str) -> bool:
    return bool(_REMOTE.match(ref)) and not ref.lower().startswith("data:")


# --- command line -----------------------------------------------------------------------------


def _write(lock: Lock) -> Lock:
    """Re-vendor from the lockfile's pins: fetch, recompute every recorded fact, write."""
    import asv

    page = (Path(asv.__file__).parent / "www" / "index.html").read_text(encoding="utf-8")
    upstream = cdn_integrity(page)
    with tempfile.TemporaryDirectory() as tmp:
        tarballs = fetch_tarballs(lock, Path(tmp))
    entries = tuple(derive(e, tarballs[(e.package, e.version)], upstream) for e in lock.entries)
    for entry in entries:
        dest = ASSETS / entry.local_path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(member(tarballs[(entry.package, entry.version)], entry.path))
    new = Lock(str(asv.__version__), entries)
    write_lock(new)
    return new


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot.site.vendor", description=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--refetch", action="store_true", help="compare with npm's bytes too")
    mode.add_argument("--write", action="store_true", help="re-vendor from the lockfile's pins")
    args = parser.parse_args(argv)
    try:
        lock = load_lock()
        if args.write:
            lock = _write(lock)
        elif args.refetch:
            with tempfile.TemporaryDirectory() as tmp:
                fetched = fetch(lock, Path(tmp))
            for entry in lock.entries:
                check_bytes(entry, fetched[entry.local_path])
        verify_dir(ASSETS, lock)
    except VendorError as exc:
        print(f"vendor: {exc}", file=sys.stderr)
        return 3
    print(f"vendor: {len(lock.entries)} files match {LOCKFILE.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

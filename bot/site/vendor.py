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
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from bot.site.lockfile import (
    ASSETS,
    LOCKFILE,
    REPO_ROOT,
    Entry,
    Lock,
    VendorError,
    check_bytes,
    load_lock,
    sri,
    sri_matches,
    urls_in,
    verify_dir,
    write_lock,
)
from bot.site.refs import cdn_integrity


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

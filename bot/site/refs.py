"""asv's page and the URLs in it: its CDN tags pointed at the vendored copies, and the
references a page or stylesheet makes the browser fetch (what the site check forbids)."""

from __future__ import annotations

import re

from bot.site.lockfile import Lock, VendorError

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


def cdn_integrity(page: str) -> dict[str, str]:
    """asv's page: CDN URL -> the ``integrity`` value asv gives it."""
    out = {}
    for tag in _TAG.finditer(page):
        attrs = {m.group(1).lower(): m.group(3) for m in _ATTR.finditer(tag.group(0))}
        url = attrs.get("src") or attrs.get("href")
        if url and _REMOTE.match(url) and "integrity" in attrs:
            out[url] = attrs["integrity"]
    return out

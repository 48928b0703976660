"""The built site's offline audit: nothing in it makes a browser reach another host.

A URL may appear in a served file only where no browser fetches it by itself:

- as a hyperlink (``<a href>`` in HTML; ``href=`` in the Atom feed, escaped or not) or an XML
  namespace name;
- in index.json's ``project_url`` / ``show_commit_url`` (asv renders them as hyperlinks);
- in a vendored file, exactly the URLs its lockfile entry lists (license banners, the SVG
  font's DTD and namespace), which also pins those files' bytes.

Every reference a browser does fetch by itself (``src``, stylesheet ``href``, CSS ``url()``
and ``@import``) must be relative and name a file that exists in the site.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from bot.site.lockfile import Lock, urls_in, verify_dir
from bot.site.refs import css_refs, is_remote, resource_refs

_ANCHOR_HREF = re.compile(r"""<a\b[^>]*?\bhref\s*=\s*(["'])(.*?)\1""", re.IGNORECASE)
_XML_LINK = re.compile(r"""\b(?:href|xmlns(?::\w+)?)=(?:"|'|&quot;)([^"'&<>\s]+)""")
TEXT_SUFFIXES = {".html", ".js", ".css", ".json", ".xml", ".svg", ".txt", ""}


def _local_target(site: Path, page: Path, ref: str) -> Path | None:
    """The file a relative reference names, or None for in-page/data references."""
    parts = urlsplit(ref)
    if not parts.path or ref.startswith(("#", "data:")):
        return None
    base = site if parts.path.startswith("/") else page.parent
    return (base / unquote(parts.path).lstrip("/")).resolve()


def _allowed_urls(path: Path, text: str, inert: dict[str, tuple[str, ...]], rel: str) -> set[str]:
    if rel in inert:
        return set(inert[rel])
    if path.suffix == ".html":
        return {m.group(2) for m in _ANCHOR_HREF.finditer(text)}
    if path.suffix == ".xml":
        return set(_XML_LINK.findall(text))
    if path.name == "index.json" and path.parent.name != "graphs":
        data = json.loads(text)
        return {str(data.get(k)) for k in ("project_url", "show_commit_url") if data.get(k)}
    return set()


def audit(site: Path, lock: Lock) -> list[str]:
    """Every problem found, as ``file: what`` lines (empty: the site is self-contained)."""
    site = site.resolve()
    problems: list[str] = []
    try:
        verify_dir(site, lock)
    except Exception as exc:  # VendorError or an unreadable file: report, keep auditing
        problems.append(str(exc))
    inert = {e.local_path: e.inert_urls for e in lock.entries}
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        rel = path.relative_to(site).as_posix()
        if path.suffix.lower() not in TEXT_SUFFIXES:
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        allowed = _allowed_urls(path, text, inert, rel)
        for url in urls_in(text):
            if url not in allowed and not any(a.startswith(url) for a in allowed):
                problems.append(f"{rel}: URL {url} where a browser could fetch it")
        refs = []
        if path.suffix == ".html":
            refs = resource_refs(text)
        elif path.suffix == ".css":
            refs = css_refs(text)
        for ref in refs:
            if is_remote(ref):
                problems.append(f"{rel}: loads remote {ref}")
                continue
            target = _local_target(site, path, ref)
            if target is not None and not (target.is_relative_to(site) and target.is_file()):
                problems.append(f"{rel}: refers to {ref}, which the site does not have")
    return problems

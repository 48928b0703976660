"""asv's ``index.html``, made to work offline and to open on the ratio (pure).

Edits of asv 0.6.6's template, each anchored on text that must occur exactly once (another asv
fails the build here rather than shipping a half-patched page):

- the CDN ``<script>``/``<link>`` tags point at the vendored copies (bot/site/refs.py);
- a Content-Security-Policy allows this site's own origin only, so even a reference that
  slipped through would be blocked by the browser, not fetched, also on GitHub Pages;
- the landing view (site_assets/landing.html, filled in by bot/site/landing.py) and the
  commits page (bot/site/commits_page.py) become asv pages, ``#overview`` and ``#commits``,
  registered by site_assets/perfbot.js through asv's ``register_page``, each with its entry in
  the navigation bar. The bare site root is re-addressed to ``#overview`` in place
  (``history.replaceState``: no navigation, nothing reloaded or aborted). Every asv route
  (``#/``, ``#regressions``, ``#<benchmark>?...``, the form that bot/tell/comment.py's graph
  links use) still opens asv's own view;
- site_assets/perfbot-reference.js, a flot plugin, draws the reference lines that
  ``#perfbot-config`` lists (the ratio's line at 1) on asv's graphs; asv's and flot's files
  are not edited.
"""

from __future__ import annotations

import html as html_lib
import json
from collections.abc import Mapping, Sequence

from bot.site.commits_page import ROUTE as COMMITS
from bot.site.lockfile import Lock, VendorError
from bot.site.refs import rewrite_page

ROUTE = "overview"
#: asv's page needs inline scripts (its js_load_failure hook) and inline styles (its layout).
CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'none'"
)

_HEAD = '<meta http-equiv="Content-Type" content="text/html; charset=utf-8">'
_HEAD_ADDITION = f"""
    <meta http-equiv="Content-Security-Policy" content="{CSP}">
    <script type="text/javascript">
      /* fusion-perfbot: the bare site root shows the landing view (an asv page). */
      if (!window.location.hash || window.location.hash === "#") {{
        window.history.replaceState(null, "", "#{ROUTE}");
      }}
    </script>"""
_HEAD_END = "  </head>"
#: Our own scripts, after asv's and flot's (the plugin must be registered before asv plots).
SCRIPTS = ("perfbot-reference.js", "perfbot.js")
_HEAD_END_ADDITION = '    <link href="perfbot.css" rel="stylesheet" type="text/css"/>\n' + "".join(
    f'    <script language="javascript" type="text/javascript" src="{name}"></script>\n'
    for name in SCRIPTS
)
_NAV = '<li id="nav-li-" class="active"><a href="#/">Benchmark grid</a></li>'
_NAV_ADDITION = (
    f'<li id="nav-li-{ROUTE}"><a href="#{ROUTE}">Thunder vs nvFuser</a></li>\n\t'
    f'<li id="nav-li-{COMMITS}"><a href="#{COMMITS}">Commits</a></li>\n\t'
)
_BODY = "    </nav>\n"


def _insert(text: str, anchor: str, addition: str, *, before: bool = False) -> str:
    if text.count(anchor) != 1:
        raise VendorError(f"asv's index.html has {text.count(anchor)} copies of {anchor!r}")
    return text.replace(anchor, addition + anchor if before else anchor + addition)


#: benchmark -> its reference line's y value, label, and the band (a fraction of y) its
#: graphs' y axis always holds around it (0: none).
ReferenceLines = Mapping[str, tuple[float, str, float]]


def config_element(
    reference_lines: ReferenceLines,
    changes: Mapping[str, Sequence[Mapping[str, str]]] | None = None,
) -> str:
    """What perfbot-reference.js reads: benchmark -> its reference line's y value, label and
    band; and benchmark -> the watch's changes to mark on its graphs (bot/site/watch.py)."""
    lines = {
        name: {"value": v, "label": text, "band": band}
        for name, (v, text, band) in reference_lines.items()
    }
    data = html_lib.escape(json.dumps(lines, sort_keys=True))
    marks = html_lib.escape(json.dumps(dict(changes or {}), sort_keys=True))
    return (
        f'<div id="perfbot-config" hidden data-reference-lines="{data}" '
        f'data-changes="{marks}"></div>'
    )


def patch_index(
    html: str,
    lock: Lock,
    landing: str,
    commits: str = "",
    reference_lines: ReferenceLines | None = None,
    changes: Mapping[str, Sequence[Mapping[str, str]]] | None = None,
) -> str:
    """asv's page with local scripts, the CSP, the landing view and the commits page (HTML)."""
    out = rewrite_page(html, lock)
    out = _insert(out, _HEAD, _HEAD_ADDITION)
    out = _insert(out, _HEAD_END, _HEAD_END_ADDITION, before=True)
    out = _insert(out, _NAV, _NAV_ADDITION, before=True)
    config = config_element(reference_lines or {}, changes)
    pages = [config, landing.rstrip("\n"), commits.rstrip("\n")]
    return _insert(out, _BODY, "\n".join(p for p in pages if p) + "\n")

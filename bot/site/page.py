"""asv's ``index.html``, made to work offline and to open on the ratio (pure).

Edits of asv 0.6.6's template, each anchored on text that must occur exactly once (another asv
fails the build here rather than shipping a half-patched page):

- the CDN ``<script>``/``<link>`` tags point at the vendored copies (bot/site/vendor.py);
- a Content-Security-Policy allows this site's own origin only, so even a reference that
  slipped through would be blocked by the browser, not fetched, also on GitHub Pages;
- the landing view (site_assets/landing.html, filled in by bot/site/overview.py) becomes an asv
  page, ``#overview``, registered by site_assets/perfbot.js through asv's ``register_page``,
  with its own entry in the navigation bar. The bare site root is re-addressed to
  ``#overview`` in place (``history.replaceState``: no navigation, nothing reloaded or
  aborted). Every asv route (``#/``, ``#regressions``, ``#<benchmark>?...``, the form that
  bot/tell/comment.py's graph links use) still opens asv's own view.
"""

from __future__ import annotations

from bot.site.vendor import Lock, VendorError, rewrite_page

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
_HEAD_END_ADDITION = """    <link href="perfbot.css" rel="stylesheet" type="text/css"/>
    <script language="javascript" type="text/javascript" src="perfbot.js"></script>
"""
_NAV = '<li id="nav-li-" class="active"><a href="#/">Benchmark grid</a></li>'
_NAV_ADDITION = f'<li id="nav-li-{ROUTE}"><a href="#{ROUTE}">Thunder vs nvFuser</a></li>\n\t'
_BODY = "    </nav>\n"


def _insert(text: str, anchor: str, addition: str, *, before: bool = False) -> str:
    if text.count(anchor) != 1:
        raise VendorError(f"asv's index.html has {text.count(anchor)} copies of {anchor!r}")
    return text.replace(anchor, addition + anchor if before else anchor + addition)


def patch_index(html: str, lock: Lock, landing: str) -> str:
    """asv's page with local scripts, the CSP and the landing view ``landing`` (HTML)."""
    out = rewrite_page(html, lock)
    out = _insert(out, _HEAD, _HEAD_ADDITION)
    out = _insert(out, _HEAD_END, _HEAD_END_ADDITION, before=True)
    out = _insert(out, _NAV, _NAV_ADDITION, before=True)
    return _insert(out, _BODY, landing.rstrip("\n") + "\n")

"""The history website: ``asv publish`` of the results, vendored for offline use, with the
thunder/nvFuser ratio as its landing view. See docs/SITE.md.

Entry points for the command line: :func:`build_site`, :func:`serve_site`,
:func:`serve_results`; :func:`graph_url` links to one graph of a published site. They are
loaded on first use, so that ``python -m bot.site.vendor`` and asv (which imports the
``bot.site.asv_history`` plugin) do not import the whole package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.site.build import SiteBuildError, SiteReport, build_site
    from bot.site.links import graph_href, graph_url
    from bot.site.serve import serve_results, serve_site, start_server

_WHERE = {
    "SiteBuildError": "bot.site.build",
    "SiteReport": "bot.site.build",
    "build_site": "bot.site.build",
    "graph_href": "bot.site.links",
    "graph_url": "bot.site.links",
    "serve_results": "bot.site.serve",
    "serve_site": "bot.site.serve",
    "start_server": "bot.site.serve",
}
__all__ = [
    "SiteBuildError",
    "SiteReport",
    "build_site",
    "graph_href",
    "graph_url",
    "serve_results",
    "serve_site",
    "start_server",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'bot.site' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)

"""Links into asv's single-page site (pure).

asv's page routes on the URL fragment: ``#<benchmark>?p-<param>=<value>&machine=<name>``,
each part encoded with JavaScript's ``encodeURIComponent`` (asv.js ``format_hash_string``).
Parameter values are the Python reprs asv stores (``'bfloat16'``, quotes included).
The PR comment's graph links (bot/tell/comment.py) are built with this same function, so
they cannot drift from the site's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote


def _enc(text: str) -> str:
    return quote(text, safe="-_.!~*'")  # encodeURIComponent, but ( and ) escaped too


def graph_href(benchmark: str, params: Mapping[str, str], machine: str | None = None) -> str:
    """The fragment (``#...``) that opens ``benchmark``'s graph at one parameter combination.

    ``params`` maps parameter names to their plain values (``{"dtype": "bfloat16"}``).
    """
    parts = [f"{_enc('p-' + k)}={_enc(repr(v))}" for k, v in params.items()]
    if machine:
        parts.append(f"machine={_enc(machine)}")
    query = "&".join(parts)
    return f"#{_enc(benchmark)}" + (f"?{query}" if query else "")


def graph_url(
    base_url: str, benchmark: str, params: Mapping[str, str], machine: str | None = None
) -> str:
    """An absolute link to a graph of the site published at ``base_url``."""
    return f"{base_url.rstrip('/')}/{graph_href(benchmark, params, machine)}"

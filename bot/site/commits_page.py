"""The site's commits page (#commits, an asv page like the landing view), and the route asv's
own views link commits to.

asv builds its commit links as ``show_commit_url + hash`` (graph clicks, the regressions page
and feed, the benchmark list). The build publishes with ``show_commit_url`` set to
:data:`COMMIT_ROUTE`, so each of those links opens this page at that commit, and the page gives
only the links bot/site/commits.py allows. perfbot.js marks the asked-for row.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from bot.site.commits import CommitNote

ROUTE = "commits"
#: What asv's views put in front of a hash. ``index.html``, so that the Atom feed's links
#: resolve to the site too; asv passes short hashes, the feed full ones: rows match by prefix.
COMMIT_ROUTE = f"index.html#{ROUTE}?commit="
e = html.escape


def _row(number: int, note: CommitNote) -> str:
    links = "<br>".join(f'<a href="{e(link.url)}">{e(link.text)}</a>' for link in note.links)
    links = links or '<span class="nodata">none</span>'
    nightly = ' <span class="tag">nightly</span>' if note.nightly else ""
    return (
        f'<tr data-commit="{e(note.commit)}" data-kind="{e(note.kind)}">'
        f"<td>{number}</td><td>{note.day}</td><td><code>{e(note.commit[:12])}</code></td>"
        f"<td>{e(note.label)}{nightly}</td><td>{e(note.detail)}</td>"
        f'<td class="links">{links}</td></tr>'
    )


def commits_page(notes: Sequence[CommitNote]) -> str:
    """``notes`` oldest first, as the history orders them; the page lists them newest first."""
    rows = "\n".join(_row(i, n) for i, n in reversed(list(enumerate(notes, 1))))
    return f"""<div id="perfbot-commits" class="perfbot-page">
  <h1>Commits of the history</h1>
  <p class="lead">Every commit the graphs draw, newest first: what ran at it, what the commit
    is, and a link only where that commit, tag or day exists. A package under test is keyed by
    its own commit (a git spec) or by a key made from the installed build (a wheel or a
    version), which no repository has: a nightly then links to the package's history up to its
    build day. Lab runs were made at throwaway commits of this suite, which no repository has
    either: they link to the Thunder they ran.</p>
  <table class="commits">
    <thead><tr><th>#</th><th>date (UTC)</th><th>commit</th><th>what ran</th>
      <th>what the commit is</th><th>links</th></tr></thead>
    <tbody>
{rows}
    </tbody>
  </table>
</div>"""

"""The main-branch watch's changes on the landing view: the story the site tells is the watch's.

`python -m bot history --json FILE` says which changes the watch confirmed and which are
pending, per machine, with the breaks and the alerts filed for them (docs/HISTORY.md). `site
build --history-json FILE` lists them at the top of the landing view: guard, what happened
(an nvFuser slowdown's ratio never reads as Thunder's gain), last good and first bad commit
(each a link to the site's commits page), size with its interval, and for a confirmed one its
alert's issue (a search of the primary repository for the alert's title, the one link that
holds without a GitHub request at build time). asv's own step detection is off (docs/SITE.md),
so this is the one list of changes the site shows.

The file is read as untrusted input: the schema must be ``perfbot-history/1``, every field
used has its type checked, and every text is HTML-escaped; a malformed file is BadInput.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bot.fusion.names import unit_words
from bot.results.limits import MAX_PROVENANCE_BYTES, read_capped
from bot.results.types import BENCH_KERNEL, BENCH_RATIO, BadInput
from bot.site.commits_page import COMMIT_ROUTE
from bot.tell.markdown import pct

SCHEMA = "perfbot-history/1"
GUARDS = {
    "ratio": "Thunder/nvFuser kernel-time ratio",
    "thunder": "Thunder's own kernel time",
    "nvfuser": "nvFuser's hand-written fusion",
    "broken": "every point still runs",
}
DIRECTIONS = {
    "regressed": "slower",
    "improved": "faster",
    "not a gain": "lower only because nvFuser's fusion got slower: not a gain",
}
e = html.escape


@dataclass(frozen=True)
class Row:
    machine: str
    kind: str  # the guard's kind as history --json names it (ratio, thunder, nvfuser, broken)
    guard: str  # its title
    what: str
    status: str  # confirmed or pending
    last_good: str
    first_bad: str
    size: str
    issue: str | None  # the alert's issue search URL, for a confirmed change with an alert


def _text(node: Mapping[str, Any], key: str, where: str) -> str:
    value = node.get(key)
    if not isinstance(value, str):
        raise BadInput(f"{where}: {key} is not text")
    return value


def _size(change: Mapping[str, Any]) -> str:
    size = change.get("size")
    if not isinstance(size, Mapping):
        return ""
    parts = [size.get(k) for k in ("estimate", "low", "high")]
    if not all(isinstance(x, (int, float)) for x in parts) or not isinstance(size.get("what"), str):
        return ""
    est, low, high = (pct(float(x)) for x in parts)  # type: ignore[arg-type]
    return f"{size['what']} {est} [{low}, {high}]"


def _issue_search(
    alerts: Sequence[Mapping[str, Any]], last_good: str, first_bad: str, unit: str
) -> str | None:
    """The search for the alert of this range on this unit (a machine, or ``machine:fusion``:
    two fusions may break at one range, each its own alert; a file from before the catalog
    names machines only)."""
    for a in alerts:
        mine = a.get("unit", a.get("machine", unit)) == unit
        if mine and a.get("last_good") == last_good and a.get("first_bad") == first_bad:
            repo, title = a.get("primary"), a.get("title")
            if isinstance(repo, str) and isinstance(title, str) and repo.count("/") == 1:
                query = f'is:issue in:title "since {first_bad[:12]}"'
                return f"https://github.com/{quote(repo)}/issues?q={quote(query)}"
    return None


def read_rows(path: Path) -> list[Row]:
    """Every change and break of the file, per machine, confirmed ones first."""
    raw = read_capped(path, MAX_PROVENANCE_BYTES, "history JSON")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BadInput(f"{path}: not JSON") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise BadInput(f"{path}: not a {SCHEMA} file (python -m bot history --json)")
    alerts = [a for a in data.get("alerts") or [] if isinstance(a, Mapping)]
    rows: list[Row] = []
    for m in data.get("machines") or []:
        if not isinstance(m, Mapping):
            raise BadInput(f"{path}: a machine entry is not an object")
        machine = _text(m, "machine", str(path))
        named = m.get("unit")
        unit = named if isinstance(named, str) else machine
        shown = unit_words(unit)  # "Softmax backward on nvidia-h200"; a machine alone stays
        for c in m.get("changes") or []:
            where = f"{path}: machine {machine!r}, a change"
            guard, what = _text(c, "guard", where), _text(c, "direction", where)
            status, good, bad = (_text(c, k, where) for k in ("status", "last_good", "first_bad"))
            issue = _issue_search(alerts, good, bad, unit) if status == "confirmed" else None
            rows.append(
                Row(
                    shown,
                    guard,
                    GUARDS.get(guard, guard),
                    DIRECTIONS.get(what, what),
                    status,
                    good,
                    bad,
                    _size(c),
                    issue,
                )
            )
        for b in m.get("breaks") or []:
            where = f"{path}: machine {machine!r}, a break"
            status, good, bad = (_text(b, k, where) for k in ("status", "last_good", "first_bad"))
            points = b.get("points") if isinstance(b.get("points"), list) else []
            issue = _issue_search(alerts, good, bad, unit) if status == "confirmed" else None
            size = f"{len(points)} point(s) that ran stop running"
            row = Row(shown, "broken", GUARDS["broken"], "broken", status, good, bad, size, issue)
            rows.append(row)
    return sorted(rows, key=lambda r: (r.machine, r.status != "confirmed"))


#: Which graphs a guard's change is marked on: the ratio's for the ratio and for a break (its
#: points stop drawing there), the kernel times' for either side's own kernel time.
MARKED_ON = {
    "ratio": BENCH_RATIO,
    "broken": BENCH_RATIO,
    "thunder": BENCH_KERNEL,
    "nvfuser": BENCH_KERNEL,
}


def markers(rows: Sequence[Row]) -> dict[str, list[dict[str, str]]]:
    """benchmark -> the changes perfbot-reference.js marks on its graphs: a vertical line
    between the last good and the first bad commit, labelled."""
    out: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        bench = MARKED_ON.get(r.kind)
        if bench is not None:
            mark = {
                "last_good": r.last_good,
                "first_bad": r.first_bad,
                "label": f"{r.status}: {r.guard}, {r.what}",
                "status": r.status,
            }
            out.setdefault(bench, []).append(mark)
    return out


def _commit(sha: str) -> str:
    return f'<a href="{e(COMMIT_ROUTE + sha)}"><code>{e(sha[:8])}</code></a>'


def changes_block(rows: Sequence[Row]) -> str:
    """The landing view's first section: the watch's changes, or that it found none."""
    head = (
        '<section id="perfbot-watch"><h2>Changes the main-branch watch found</h2>'
        '<p class="lead">From <code>python -m bot history</code> (docs/HISTORY.md): each change '
        "is decided with the PR mode's guards on the commits either side of it; confirmed once "
        "two commits follow it, pending before that (never filed).</p>"
    )
    if not rows:
        return head + "<p>None: no guard moved along this history.</p></section>"
    body = []
    for r in rows:
        issue = f'<a href="{e(r.issue)}">its issue</a>' if r.issue else ""
        body.append(
            f"<tr><td>{e(r.machine)}</td><td>{e(r.guard)}</td><td>{e(r.what)}</td>"
            f"<td>{e(r.status)}</td><td>{_commit(r.last_good)}</td><td>{_commit(r.first_bad)}</td>"
            f"<td>{e(r.size)}</td><td>{issue}</td></tr>"
        )
    table = (
        "<table><thead><tr><th>machine</th><th>guard</th><th>what</th><th>status</th>"
        "<th>last good</th><th>first bad</th><th>size (95% interval)</th><th>alert</th>"
        "</tr></thead><tbody>" + "".join(body) + "</tbody></table>"
    )
    return head + table + "</section>"

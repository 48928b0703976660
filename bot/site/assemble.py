"""Everything asv's own output lacks, added to the staged site: the vendored files, our scripts
and styles, the landing view, the commits page, the reference line of the ratio graphs; then
the audit (bot/site/check.py). Nothing here runs asv or touches ``out_dir``.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from bot.results.types import BENCH_RATIO, bench_names
from bot.site.check import audit
from bot.site.commits import CommitNote, describe
from bot.site.commits_page import commits_page
from bot.site.history import History
from bot.site.inputs import Inputs
from bot.site.landing import legend, machine_block, render
from bot.site.lockfile import ASSETS, load_lock
from bot.site.overview import MachineSummary, Settings, fusions_published, summaries
from bot.site.page import SCRIPTS, patch_index

#: Written into every built site; ``out_dir`` is replaced only if it is empty or has this.
MARKER = ".fusion-perfbot-site"
#: benchmark -> (y, label) of the line its graphs draw: the ratio's parity with the fusion.
REFERENCE_LINES = {
    BENCH_RATIO: (1.0, "ratio 1: as fast as the hand-written fusion; above: Thunder slower"),
}


class AuditError(Exception):
    """The staged site is not self-contained; the message lists why."""


def commit_notes(hist: History, inputs: Inputs, show_commit_url: str) -> list[CommitNote]:
    """Each commit of the history, oldest first, as bot/site/commits.py describes it."""
    variants = {i.commit: i.thunder_variant for i in inputs.infos}
    return [
        describe(
            sha,
            date,
            inputs.records.get(sha),
            on_branch=sha in hist.on_branch,
            show_commit_url=show_commit_url,
            variant=variants.get(sha),
        )
        for sha, date in hist.commits
    ]


def commit_kinds(notes: Sequence[CommitNote], inputs: Inputs) -> dict[str, object]:
    """What makes two commits like each other for the landing view's comparison: the kind
    of commit (a lab run, a package's nightly or release, ...) and the size set it measured."""
    out: dict[str, object] = {}
    for n in notes:
        record = inputs.records.get(n.commit)
        size_set = record.get("size_set") if isinstance(record, Mapping) else None
        out[n.commit] = (n.kind, n.nightly, size_set)
    return out


def finish(
    html: Path,
    notes: Sequence[CommitNote],
    settings: Settings,
    colours: tuple[float, float],
    changes: str = "",
    marks: Mapping[str, Sequence[Mapping[str, str]]] | None = None,
    kinds: Mapping[str, object] | None = None,
) -> list[MachineSummary]:
    """Fill the staged site in ``html``; returns the landing view's summaries. ``changes``:
    the watch's changes' section of the landing view (bot/site/watch.py)."""
    lock = load_lock()
    for entry in lock.entries:
        dest = html / entry.local_path
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ASSETS / entry.local_path, dest)
    for name in ("perfbot.css", *SCRIPTS):
        shutil.copyfile(ASSETS / name, html / name)
    index, found = summaries(html, settings, kinds)
    # Every fusion's ratio graphs draw the line of parity, RMSNorm backward's as before, with
    # the ratio's colour band (the bot's smallest change) kept on the axis: a level flat within
    # noise then reads flat, not as a cliff between ticks that all say 1.00.
    parity = (*REFERENCE_LINES[BENCH_RATIO], colours[0])
    lines = {
        BENCH_RATIO: parity,
        **{bench_names(f).ratio: parity for f in fusions_published(index)},
    }
    drawn = set(index.get("revision_to_hash", {}).values())
    by_hash: Mapping[str, CommitNote] = {n.commit: n for n in notes}
    key = legend(*colours)
    blocks = [machine_block(s, by_hash, key) for s in found]
    template = (ASSETS / "landing.html").read_text(encoding="utf-8")
    landing = render(template, str(index.get("project", "")), blocks, changes)
    page = commits_page([n for n in notes if n.commit in drawn])
    path = html / "index.html"
    text = patch_index(path.read_text(encoding="utf-8"), lock, landing, page, lines, marks)
    path.write_text(text, encoding="utf-8")
    (html / MARKER).write_text("built by python -m bot site build\n", encoding="utf-8")
    problems = audit(html, lock)
    if problems:
        raise AuditError("the built site is not self-contained:\n" + "\n".join(problems))
    return found

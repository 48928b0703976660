"""A history: each commit's runs, in commit order (pure; bot/history/load.py reads them).

Why an order must be chosen and not assumed: asv stores the commit's date in every results
file (``date``, milliseconds), which is the order of a main branch; the keys the
package-under-test command makes (benchmarks/under_test/keys.py) are dated by the build's
``devYYYYMMDD`` for the same reason. Where dates tie (two commits made in one second) the hash
decides, so the order never depends on the file system. ``--order FILE`` overrides it with the
branch's own order (``git rev-list --reverse main``).

Which runs are comparable: on the H200 the 15-us kernels ran 5-7% slower in processes that did
not interleave the context baselines (data/README.md, h200-repeats), so runs of another
sampling (calls per sample) or another set of measured variants would read as a change. Only
the runs of the most common such signature are kept; the others are named in the notes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bot.fusion.names import unit_key
from bot.results.types import DEFAULT_FUSION, BadInput, CommitResults, fusions_of

_HASH = re.compile(r"[0-9a-f]{7,40}")


@dataclass(frozen=True)
class Commit:
    """One commit of the history and every comparable run of it (replicates)."""

    sha: str
    date: int
    runs: tuple[CommitResults, ...]


@dataclass(frozen=True)
class History:
    """One fusion's commits on one machine, oldest first, and what was left out of them, in
    words. ``machine`` is the real machine (results, re-measurements, bisects and the noise
    model are found by it); ``unit`` names the fusion on it wherever two could collide."""

    machine: str
    commits: tuple[Commit, ...]
    notes: tuple[str, ...] = ()
    #: Every run, whatever its sampling or variants, by commit in the same order: the broken
    #: guard reads these (a run of three variants where Thunder fails is a break, not "another
    #: set of variants"); empty: the same as `commits`.
    every: tuple[Commit, ...] = ()
    #: The fusion of the catalog whose points the runs hold: each is judged on its own.
    fusion: str = DEFAULT_FUSION

    @property
    def runs(self) -> tuple[CommitResults, ...]:
        return tuple(r for c in self.commits for r in c.runs)

    def commit(self, sha: str) -> Commit | None:
        """The commit with runs of this full hash: among the comparable commits, else among
        every run's (a break can start at a commit whose runs measured other variants)."""
        return next((c for c in (*self.commits, *self.every) if c.sha == sha and c.runs), None)

    def position(self, sha: str) -> int:
        """Where a commit is on the branch, among every run's commits (a break's range can
        start at a commit whose runs measured other variants); past the end where it is in
        none."""
        order = [c.sha for c in (self.every or self.commits)]
        return order.index(sha) if sha in order else len(order)

    @property
    def unit(self) -> str:
        """The machine for RMSNorm backward, else ``machine:fusion`` (alert keys, sections)."""
        return unit_key(self.machine, self.fusion)


def signature(run: CommitResults) -> tuple[str, str]:
    """What must agree for runs to be compared: calls per sample, and the variants measured."""
    prov = run.provenance
    calls = (prov.text("calls_per_sample") if prov else None) or "unknown"
    measured = prov.record.get("variants") if prov else None
    variants = ",".join(map(str, measured)) if isinstance(measured, list) else "unknown"
    return calls, variants


def comparable(runs: Sequence[CommitResults]) -> tuple[list[CommitResults], list[str]]:
    """The runs of the most common signature (a tie: the newest run's), and a note on the rest."""
    if not runs:
        return [], []
    counts = Counter(signature(r) for r in runs)
    newest = max(runs, key=lambda r: (r.date or 0, r.commit))
    top = max(counts.items(), key=lambda kv: (kv[1], kv[0] == signature(newest)))[0]
    kept = [r for r in runs if signature(r) == top]
    left = [r for r in runs if signature(r) != top]
    notes = []
    if left:
        names = ", ".join(sorted({f"{r.commit[:8]} ({r.folder})" for r in left}))
        notes.append(
            f"{len(left)} run(s) of another sampling or set of variants left out (kept: "
            f"{top[0]} call(s) a sample, variants {top[1]}): {names}"
        )
    return kept, notes


def by_commit(runs: Sequence[CommitResults], dated: bool = True) -> list[Commit]:
    """Runs grouped by commit, in asv's date order, ties by hash; ``dated``: a run without a
    date is bad input (no order given instead)."""
    grouped: dict[str, list[CommitResults]] = {}
    for r in runs:
        grouped.setdefault(r.commit, []).append(r)
    commits = []
    for sha, mine in grouped.items():
        dates = {r.date for r in mine}
        if None in dates and dated:
            raise BadInput(
                f"{mine[0].path}: no commit date in the results file; give the order with --order"
            )
        commits.append(
            Commit(sha, min((d for d in dates if d is not None), default=0), tuple(mine))
        )
    return sorted(commits, key=lambda c: (c.date, c.sha))


def parse_order(text: str, where: str) -> list[str]:
    """An order file: one commit hash a line (7-40 hex digits), oldest first; blank lines and
    ``#`` comments are skipped. A hash listed twice is bad input: the order would be two."""
    out: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip().lower()
        if not line:
            continue
        if not _HASH.fullmatch(line):
            raise BadInput(f"{where} line {number}: {raw.strip()!r:.60} is not a commit hash")
        if line in out:
            raise BadInput(f"{where} line {number}: commit {line} is listed twice")
        out.append(line)
    if not out:
        raise BadInput(f"{where}: lists no commit")
    return out


def in_order(commits: Sequence[Commit], order: Sequence[str]) -> tuple[list[Commit], list[str]]:
    """The commits in the order a list gives (abbreviated hashes allowed, each naming one
    commit), and notes on the commits it leaves out and the hashes that have no results."""
    picked: list[Commit] = []
    absent = 0
    for prefix in order:
        hits = [c for c in commits if c.sha.startswith(prefix)]
        if len(hits) > 1:
            names = ", ".join(c.sha[:12] for c in hits)
            raise BadInput(f"order: commit prefix {prefix} is ambiguous: {names}")
        if not hits:
            absent += 1
            continue
        if hits[0] in picked:
            raise BadInput(f"order: {prefix} and another line name the same commit {hits[0].sha}")
        picked.append(hits[0])
    notes = []
    unlisted = [c for c in commits if c not in picked]
    if unlisted:
        names = ", ".join(c.sha[:8] for c in unlisted)
        notes.append(
            f"{len(unlisted)} commit(s) with results are not in the order, left out: {names}"
        )
    if absent:
        notes.append(f"{absent} commit(s) of the order have no results here (not measured)")
    return picked, notes


def history(
    machine: str,
    runs: Sequence[CommitResults],
    order: Sequence[str] | None = None,
    fusion: str = DEFAULT_FUSION,
) -> History:
    """One machine's history of ``fusion`` from its runs (each holding that fusion's points
    only): the commits of the order (when given), their comparable runs only, in commit
    order."""
    notes: list[str] = []
    rank: dict[str, int] = {}
    if order is not None:
        picked, notes = in_order(by_commit(runs, dated=False), order)
        rank = {c.sha: i for i, c in enumerate(picked)}
        runs = [r for c in picked for r in c.runs]
    kept, more = comparable(runs)
    commits = by_commit(kept, dated=order is None)
    every = by_commit(runs, dated=order is None)
    if order is not None:
        commits.sort(key=lambda c: rank[c.sha])
        every.sort(key=lambda c: rank[c.sha])
    return History(machine, tuple(commits), (*notes, *more), tuple(every), fusion)


def of_fusion(run: CommitResults, fusion: str) -> CommitResults:
    """The run with ``fusion``'s points only. A run that holds no other fusion is returned as
    it is: RMSNorm backward's runs from before the catalog stay the same objects, and a run
    the cache keeps packed (bot/results/packed.py) stays packed."""
    if all(k.fusion == fusion for k in run.points):
        return run
    return run.of_fusion(fusion)


def fusion_histories(
    machine: str, runs: Sequence[CommitResults], order: Sequence[str] | None = None
) -> tuple[History, ...]:
    """One history per fusion the runs hold, RMSNorm backward first: a change of one fusion is
    judged in its own family, as the PR mode judges each fusion on its own. A fusion's history
    holds the runs that measured it (a run from before the catalog is in RMSNorm backward's
    alone)."""
    out = []
    for fusion in fusions_of(runs):
        mine = [of_fusion(r, fusion) for r in runs]
        measured = [m for r, m in zip(runs, mine, strict=True) if m.points or not r.points]
        out.append(history(machine, measured, order, fusion))
    return tuple(out)

"""The broken guard along a history (pure): points that ran and then stopped running.

As in the PR mode (bot/decide/families.py), a gating Thunder point is read from its ratio and
nvFuser's from its kernel time; a point fails at a commit when every run of that commit that
measured it failed (compile or executor error, a wrong result, a crash), and a point not
measured by choice (asv's "skipped", or absent) is no evidence either way. Every run counts
here, whatever its sampling or set of variants (History.every): the timing guards compare like
with like, but a point that fails fails in any run, and a variant a run did not measure is
simply not measured there.

A break is a commit where a point fails after a commit where it ran. It is confirmed when the
point failed at ``min_after`` measured commits in a row from there (the persistence the timing
guards ask for: one failed run can be a crash of that process), pending when the history ends
first, and a transient (said, not filed) when the point ran again before that. Breaks at the
same pair of commits are one change. A break is recovered when every point of it ran at
``min_after`` measured commits in a row after its failures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from bot.config import VerdictSettings
from bot.decide.types import PointVerdict
from bot.history.series import Commit, History
from bot.results.packed import Samples, sample_count
from bot.results.types import REFERENCE, PointKey

Status = Literal["ok", "failed", "absent"]
Follow = Literal["regressed", "recovered", "hold"]


@dataclass(frozen=True)
class Break:
    """Points that stopped running between two commits, and where each ran again."""

    split: int  # index of the last commit where they ran
    last_good: str
    first_bad: str
    confirmed: bool
    points: tuple[PointVerdict, ...]  # state "broken", the error at the first failure
    back_at: tuple[str | None, ...]  # per point: the commit from which it runs again
    follow: Follow  # what the linked issue should do


def status(commit: Commit, key: PointKey) -> tuple[Status, str | None]:
    """ok when a run of the commit has data; failed when a run failed and none has data."""
    which: Samples = "kernel_s" if key.variant == REFERENCE else "ratio"
    error = None
    failed = False
    for run in commit.runs:
        if sample_count(run.points, key, which):
            return "ok", None
        point = run.points.get(key)
        if point is not None and (point.no_data or "failed") == "failed":
            failed = True
            if error is None and run.provenance:
                error = run.provenance.point_error(key)
    return ("failed", error) if failed else ("absent", None)


def _runs_again(measured: Sequence[tuple[int, Status]], start: int, min_after: int) -> int | None:
    """The index (into ``measured``) of the first of ``min_after`` oks in a row from ``start``."""
    streak = 0
    for j in range(start, len(measured)):
        streak = streak + 1 if measured[j][1] == "ok" else 0
        if streak == min_after:
            return j - min_after + 1
    return None


#: One point's status at each commit, in order: (index, status, error).
Seen = Sequence[tuple[int, Status, str | None]]


def statuses(commits: Sequence[Commit], key: PointKey) -> Seen:
    return [(i, *status(c, key)) for i, c in enumerate(commits)]


def _one_point(
    seen: Seen, min_after: int
) -> tuple[list[tuple[int, int, bool, str | None, int | None, bool]], list[tuple[int, int]]]:
    """(last ok, first failed, confirmed, error, back at, failing at the newest) per break,
    and (first failed, failed commits) per transient."""
    measured = [(i, s) for i, s, _ in seen if s != "absent"]
    errors = {i: e for i, s, e in seen if s == "failed"}
    out, notes = [], []
    j = 1
    while j < len(measured):
        (prev, ps), (here, hs) = measured[j - 1], measured[j]
        if not (ps == "ok" and hs == "failed"):
            j += 1
            continue
        run = 0
        while j + run < len(measured) and measured[j + run][1] == "failed":
            run += 1
        if run < min_after and j + run < len(measured):
            notes.append((here, run))
            j += run
            continue
        back = _runs_again(measured, j + run, min_after)
        back_at = measured[back][0] if back is not None else None
        newest_failed = measured[-1][1] == "failed"
        out.append((prev, here, run >= min_after, errors.get(here), back_at, newest_failed))
        j = back + min_after if back is not None else len(measured)
    return out, notes


def _split_of(h: History, last_good: str) -> int:
    """The break's split in the timing guards' commits (what its alert lines up with): the
    last good commit's index there, or that of the newest comparable commit before it."""
    order = [c.sha for c in (h.every or h.commits)]
    index = {c.sha: i for i, c in enumerate(h.commits)}
    upto = order[: order.index(last_good) + 1]
    return max((index[sha] for sha in upto if sha in index), default=0)


def find_breaks(
    h: History, s: VerdictSettings, min_after: int, keys: Sequence[PointKey]
) -> tuple[tuple[Break, ...], tuple[str, ...]]:
    """Every break of the history (confirmed and pending), and notes on transients; ``keys``:
    the gating contenders and nvFuser's points."""
    groups: dict[tuple[int, int, bool], list[tuple[PointKey, str | None, int | None, bool]]] = {}
    transients: dict[tuple[int, int], int] = {}
    commits = h.every or h.commits
    gating = {k for c in commits for r in c.runs for k in r.points}
    gating = {k for k in gating if k.variant == REFERENCE or s.is_gating(k.variant)}
    # Each point's statuses once: the breaks read ``keys``', the never-ran notes every one's.
    seen = {k: statuses(commits, k) for k in sorted(gating | set(keys))}
    for key in keys:
        found, said = _one_point(seen[key], min_after)
        for t in said:
            transients[t] = transients.get(t, 0) + 1
        for prev, here, confirmed, error, back, failing in found:
            groups.setdefault((prev, here, confirmed), []).append((key, error, back, failing))
    breaks = []
    for (prev, here, confirmed), members in sorted(groups.items()):
        rows = tuple(
            PointVerdict(
                key,
                True,
                s.threshold_for(key.label),
                "broken",
                no_data=f"failed at {commits[here].sha[:12]}",
                kind="kernel" if key.variant == REFERENCE else "ratio",
                error=error,
            )
            for key, error, _, _ in members
        )
        back_at = tuple(commits[b].sha if b is not None else None for _, _, b, _ in members)
        if all(b is not None for b in back_at):
            follow: Follow = "recovered"
        elif any(failing for *_, failing in members):
            follow = "regressed"
        else:
            follow = "hold"  # running again, not yet for min_after commits in a row
        split = _split_of(h, commits[prev].sha)
        breaks.append(
            Break(split, commits[prev].sha, commits[here].sha, confirmed, rows, back_at, follow)
        )
    notes = tuple(
        f"{count} point(s) failed at {commits[here].sha[:8]} and ran again after {run} "
        "commit(s): a transient, not a break"
        for (here, run), count in sorted(transients.items())
    )
    return tuple(breaks), (*notes, *never_ran_notes(commits, seen))


def never_ran_notes(commits: Sequence[Commit], seen: Mapping[PointKey, Seen]) -> tuple[str, ...]:
    """Points no guard can see, said: those that failed at every commit that measured them
    (a variant broken on this stack all along: no break, no timing), and those that failed
    from the oldest commit until one where they first ran (where the history opens for them,
    e.g. the first nightly whose executor imports this nvFuser). One line a kind and commit,
    naming the variants, and "every point" where that is what failed: the catalog's fusions
    then say the same words and fold into one line of the report (bot/history/summary.py)."""
    total: dict[str, int] = {}
    never: dict[str, int] = {}
    opened: dict[int, dict[str, int]] = {}
    for key, points in seen.items():
        total[key.variant] = total.get(key.variant, 0) + 1
        measured = [(i, st) for i, st, _ in points if st != "absent"]
        if not measured or measured[0][1] != "failed":
            continue
        first_ok = next((i for i, st in measured if st == "ok"), None)
        by = never if first_ok is None else opened.setdefault(first_ok, {})
        by[key.variant] = by.get(key.variant, 0) + 1

    def who(by: dict[str, int]) -> str:
        names = " and ".join(sorted(by))
        if all(n == total[v] for v, n in by.items()):
            return f"{names} (every point)"
        counts = ", ".join(f"{v}: {n} of {total[v]}" for v, n in sorted(by.items()))
        return f"{names} ({counts} points)"

    said = []
    if never:
        said.append(f"{who(never)} failed at every commit that measured them: no guard sees them")
    for i, by in sorted(opened.items()):
        said.append(
            f"{who(by)} failed from the oldest commit on and first ran at "
            f"{commits[i].sha[:8]}: the history opens for them there"
        )
    return tuple(said)

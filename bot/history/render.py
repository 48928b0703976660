"""What ``history`` prints (pure): a readable report per history (a fusion on a machine:
the machine alone for RMSNorm backward), and the same as JSON.

Every change says its guard, the last good and the first bad commit, its size with its 95%
interval (the strongest evidence: a variant's geometric mean or a point) and what its alert
does; a pending change says how many more commits would let it speak, or, far beyond noise,
which commit to measure again (bot/history/remeasure.py; in the JSON, its ``remeasure``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from bot.decide.stats import Interval
from bot.decide.types import GUARD_TITLES
from bot.decide.wording import interval_words
from bot.exitcodes import ExitCode
from bot.fusion.names import unit_words
from bot.history.changepoint import Change
from bot.history.follow import FollowUp
from bot.history.method import Method
from bot.history.remeasure import Remeasure, bound_words
from bot.history.series import Commit
from bot.history.watch import Watch
from bot.history.window import evidence
from bot.tell.words import nvfuser_slower

__all__ = ["evidence", "report_text", "to_json", "worst"]

SCHEMA = "perfbot-history/1"
#: Commits listed in the text (the first and last half of it); --json lists every one.
LISTED = 20
#: What a confirmed change's section does to its alert (bot/history/alerts.py): the alert
#: stands while any of its sections does, and closes when every one is back.
ISSUE_WORDS = {
    "regressed": "still regressed at the newest commits: its alert opens or stays open",
    "recovered": "back: its alert closes once every section of it is back",
    "hold": "neither clearly regressed nor back at the newest commits: an open alert gets a note",
}
#: The same for a confirmed break: its points fail, they are not "regressed".
BREAK_WORDS = {
    "regressed": "its points still fail at the newest commit: its alert opens or stays open",
    "recovered": "every point runs again: its alert closes once every section of it is back",
    "hold": "some points run again, not yet for long enough: an open alert gets a note",
}
#: A pending break is never filed (as a pending change): what would make it speak.
PENDING_BREAK = "pending: nothing is filed until it fails at {n} measured commits in a row"


def day(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).date().isoformat()


#: The packages whose versions a commit's line may name, in this order: Thunder always, the
#: others where they differ between the history's commits (two nvFuser builds under one
#: Thunder must not read like the rest).
PACKAGES = ("thunder", "nvfuser", "torch", "python")


def varying_packages(commits: Sequence[Commit]) -> tuple[str, ...]:
    """Thunder, and every other package whose version is not the same at every commit."""

    def version(c: Commit, package: str) -> str | None:
        prov = c.runs[0].provenance if c.runs else None
        return prov.text("versions", package) if prov is not None else None

    seen = {p: {version(c, p) for c in commits} for p in PACKAGES}
    return tuple(p for p in PACKAGES if p == "thunder" or len(seen[p]) > 1)


def build_record(c: Commit) -> dict[str, Any] | None:
    """The packages a commit's first run measured, as its provenance record says them:
    versions, the package-under-test record, and any deliberately slower variant."""
    prov = c.runs[0].provenance if c.runs else None
    if prov is None:
        return None
    record = prov.record

    def mapping(key: str) -> dict[str, Any] | None:
        value = record.get(key)
        return dict(value) if isinstance(value, Mapping) else None

    return {
        "versions": mapping("versions") or {},
        "under_test": mapping("under_test"),
        "thunder_variant": prov.text("thunder_variant"),
        "slowdown": mapping("slowdown"),
    }


def commit_label(c: Commit, packages: Sequence[str] = ("thunder",)) -> str:
    """What ran: the versions of `packages` (varying_packages), a deliberately slower variant,
    a package under test."""
    prov = c.runs[0].provenance if c.runs else None
    if prov is None:
        return "no provenance record"
    parts = [f"{p} {prov.text('versions', p) or '?'}" for p in packages]
    variant = prov.text("thunder_variant")
    if variant and variant != "stock":
        parts.append(variant)
    side = prov.text("slowdown", "side")
    if side:
        parts.append(f"{side} slower by {prov.text('slowdown', 'fraction')}")
    package = prov.text("under_test", "package")
    if package:
        parts.append(f"{package} under test {prov.text('under_test', 'version')}")
    runs = f", {len(c.runs)} runs" if len(c.runs) > 1 else ""
    return ", ".join(parts) + runs


#: How a change's direction reads: a ratio that fell because nvFuser's own fusion got slower
#: is nvFuser's regression, never Thunder's gain (the PR mode's rule, bot/tell/words.py).
NOT_A_GAIN = "not a gain"


def shown_direction(c: Change) -> str:
    """regressed, improved, or NOT_A_GAIN for a ratio that fell while nvFuser got slower."""
    if c.guard == "ratio" and c.direction == "improved" and nvfuser_slower(c.verdict):
        return NOT_A_GAIN
    return c.direction


def _direction_words(c: Change) -> str:
    shown = shown_direction(c)
    return "lower: nvFuser's fusion got slower, not a gain" if shown == NOT_A_GAIN else shown


def pending_words(c: Change, m: Method) -> str:
    """What a pending change waits for: more commits (the rule), or, far beyond noise, a
    re-measurement of its first bad commit (bot/history/remeasure.py)."""
    more = f"needs {m.min_after - c.span.after} more commit(s) to be confirmed or dropped"
    r = c.remeasure
    if r is None:
        return more
    why = f"far beyond noise ({r.far.what}: {bound_words(r.far)})"
    if r.agreed is None:
        return f"pending: {why}: re-measure commit {r.commit[:8]} to confirm"
    return (
        f"{why}, but the re-measurement did not agree (not every one of the {r.runs} runs of "
        f"{r.commit[:8]}, alone, is): {more}"
    )


def _confirmed_words(c: Change) -> str | None:
    r = c.remeasure
    if not c.confirmed or r is None:
        return None
    return (
        f"confirmed by re-measuring {r.commit[:8]}: each of its {r.runs} runs, alone, far beyond "
        f"noise ({bound_words(r.far)})"
    )


def _change_lines(c: Change, follow: FollowUp | None) -> list[str]:
    g = c.verdict.guard(c.guard)
    assert g is not None
    ev = evidence(g, c.direction)
    size = f"{ev[0]} {interval_words(ev[1])}" if ev else "no single figure"
    lines = [
        f"  [{_direction_words(c)}] {GUARD_TITLES[c.guard]}: last good {c.last_good[:8]}, "
        f"first bad {c.first_bad[:8]} ({c.span.before} commit(s) before, "
        f"{c.span.after} after)",
        f"      size: {size}",
        f"      {g.summary}",
    ]
    said = _confirmed_words(c)
    if said:
        lines.append(f"      {said}")
    if follow is not None:
        lines.append(f"      issue: {follow.reason or ISSUE_WORDS[follow.state]}")
    return lines


def report_text(w: Watch) -> str:
    h, sc, m = w.history, w.scan, w.method
    commits = h.commits
    lines = [
        f"Main-branch history on {unit_words(h.unit)}: {len(commits)} commit(s)"
        + (f", {day(commits[0].date)} to {day(commits[-1].date)}" if commits else ""),
        f"Method: windows of at most {m.window} commits a side; a change is confirmed with "
        f"{m.min_after} commits after it; {sc.tested} split(s) tested in {sc.windows} window(s) "
        f"at alpha {w.scan.alpha:.3g} each, {sc.decided} decided in full (docs/HISTORY.md)",
        f"Noise: {w.model}",
        "",
        "Commits, oldest first:",
    ]
    packages = varying_packages(commits)
    shown = list(enumerate(commits))
    if len(shown) > LISTED:
        shown = [*shown[: LISTED // 2], (-1, commits[0]), *shown[-LISTED // 2 :]]
    for i, commit in shown:
        if i < 0:
            lines.append(f"  ... {len(commits) - LISTED} more (--json lists every commit)")
            continue
        label = commit_label(commit, packages)
        lines.append(f"  {i + 1:>4}  {commit.sha[:8]}  {day(commit.date)}  {label}")
    follow = {id(f.change): f for f in w.follow}
    lines += ["", f"Confirmed changes: {len(sc.changes)}"]
    for c in sc.changes:
        lines += _change_lines(c, follow.get(id(c)))
    if sc.pending:
        lines += ["", f"Pending (fewer than {m.min_after} commits after them; never filed):"]
        for c in sc.pending:
            lines += _change_lines(c, None)
            lines.append(f"      {pending_words(c, m)}")
    if w.breaks:
        lines += ["", "Points that stopped running:"]
        for b in w.breaks:
            back = sum(x is not None for x in b.back_at)
            status = "confirmed" if b.confirmed else "pending"
            issue = BREAK_WORDS[b.follow] if b.confirmed else PENDING_BREAK.format(n=m.min_after)
            lines.append(
                f"  [{status}] {len(b.points)} point(s): last ran {b.last_good[:8]}, failing "
                f"from {b.first_bad[:8]}; {back} run again; issue: {issue}"
            )
            first = b.points[0]
            lines.append(f"      {first.key.label}: {first.error or 'no error text recorded'}")
    if w.notes:
        lines += ["", "Notes:", *(f"  - {n}" for n in w.notes)]
    code = w.code
    said = {
        ExitCode.BROKEN: f"{len(w.broken)} confirmed break(s) still failing",
        ExitCode.REGRESSION: f"{len(w.standing)} confirmed regression(s) still standing",
        ExitCode.OK_NO_REGRESSION: "no confirmed regression stands at the newest commits",
    }[code]
    lines += ["", f"Result: {code.name} (exit {int(code)}): {said}"]
    return "\n".join(lines)


def _interval(i: Interval) -> dict[str, float]:
    return {"estimate": i.estimate, "low": i.low, "high": i.high}


def _change_json(c: Change, follow: FollowUp | None, min_after: int) -> dict[str, Any]:
    g = c.verdict.guard(c.guard)
    assert g is not None
    ev = evidence(g, c.direction)
    return {
        "guard": c.guard,
        # "not a gain": the ratio fell because nvFuser's fusion got slower (never "improved").
        "direction": shown_direction(c),
        "status": "confirmed" if c.confirmed else "pending",
        "needs_more_commits": 0 if c.confirmed else min_after - c.span.after,
        # "commits" (min_after commits after it) or "remeasure" (every run of a re-measured
        # first bad commit far beyond noise); null while pending.
        "confirmed_by": c.confirmed_by,
        # Far beyond noise at the newest commits (docs/HISTORY.md): the commit to measure again
        # and what its runs said; null for every other change.
        "remeasure": _remeasure_json(c.remeasure),
        "last_good": c.last_good,
        "first_bad": c.first_bad,
        "commits_before": c.span.before,
        "commits_after": c.span.after,
        "runs": list(c.verdict.runs),
        "strength_t": c.strength if math.isfinite(c.strength) else None,
        "size": None
        if ev is None
        else {"what": ev[0], **_interval(ev[1]), "t": ev[2] if math.isfinite(ev[2]) else None},
        "summary": g.summary,
        "points": [
            {"point": p.key.label, **_interval(p.cmp.change)}
            for p in sorted(g.points, key=lambda p: -abs(p.cmp.log_change) if p.cmp else 0.0)
            if p.state == c.direction and p.corroborated and p.cmp
        ],
        "issue": None if follow is None else follow.state,
        "back_at": None if follow is None else follow.back_at,
        "reason": None if follow is None else follow.reason,
    }


def _remeasure_json(r: Remeasure | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {
        "commit": r.commit,
        "runs": r.runs,
        # null: not re-measured yet (measure "commit" again); true: confirmed; false: the
        # re-measurement did not agree (pending under the commits rule).
        "agreed": r.agreed,
        "what": r.far.what,
        **_interval(r.far.interval),
        "threshold": r.far.threshold,
        "bar": r.far.bar,
    }


def to_remeasure(w: Watch) -> list[str]:
    """The commits the watch asks to measure again (full hashes, oldest first): the first bad
    commit of each pending change far beyond noise that has one run."""
    marks = [c.remeasure for c in w.scan.pending if c.remeasure is not None]
    return list(dict.fromkeys(r.commit for r in marks if r.agreed is None))


def to_json(watches: Sequence[Watch]) -> dict[str, Any]:
    machines = []
    for w in watches:
        follow = {id(f.change): f for f in w.follow}
        packages = varying_packages(w.history.commits)
        machines.append(
            {
                "machine": w.history.machine,
                # One entry a history: a fusion on the machine (its unit: the machine alone
                # for RMSNorm backward, else machine:fusion, as the alerts' keys name it).
                "fusion": w.history.fusion,
                "unit": w.history.unit,
                "commits": [
                    {
                        "sha": c.sha,
                        "date": c.date,
                        "runs": len(c.runs),
                        "what": commit_label(c, packages),
                        # What a bisect needs to name the builds (bot/bisect/watch_plan.py).
                        "build": build_record(c),
                    }
                    for c in w.history.commits
                ],
                "method": {
                    "window": w.method.window,
                    "min_before": w.method.min_before,
                    "min_after": w.method.min_after,
                },
                "splits_tested": w.scan.tested,
                "windows_tested": w.scan.windows,
                "alpha_per_window": w.scan.alpha,
                "decided_in_full": w.scan.decided,
                "noise": w.model,
                "changes": [
                    _change_json(c, follow.get(id(c)), w.method.min_after)
                    for c in (*w.scan.changes, *w.scan.pending)
                ],
                "breaks": [
                    {
                        "last_good": b.last_good,
                        "first_bad": b.first_bad,
                        "status": "confirmed" if b.confirmed else "pending",
                        "issue": b.follow if b.confirmed else None,
                        "points": [
                            {"point": p.key.label, "error": p.error, "back_at": back}
                            for p, back in zip(b.points, b.back_at, strict=True)
                        ],
                    }
                    for b in w.breaks
                ],
                "notes": list(w.notes),
                # What nightly.yml's remeasure jobs measure again (docs/HISTORY.md).
                "remeasure": to_remeasure(w),
                "exit_code": int(w.code),
            }
        )
    return {"schema": SCHEMA, "exit_code": int(worst(watches)), "machines": machines}


def worst(watches: Sequence[Watch]) -> ExitCode:
    order = (ExitCode.BROKEN, ExitCode.REGRESSION, ExitCode.OK_NO_REGRESSION)
    codes = {w.code for w in watches}
    return next((c for c in order if c in codes), ExitCode.OK_NO_REGRESSION)

"""One alert per break on main (pure): every confirmed regression and break the watch finds at
the same commit range (last good .. first bad) of one machine is a section of one alert, as
every guard that moved in a PR is a section of that PR's alert (bot/alert/model.py).

Why one alert: a Thunder slowdown moves Thunder's kernel time and the ratio at the same split;
one issue per guard and repository made four issues of one cause. The alert is one issue in
the repository that owns it and a short linked one in the other (bot/history/issues.py).

The key, ``rmsnorm-bwd|<machine>|<last good>..<first bad>`` (12 hex digits each), names the
range alone, so a guard confirmed at that range a night later joins the same alert. Issues
filed before alerts carry ``|<guard>`` after it (:func:`legacy_key`); bot/history/stranded.py
still follows them.

The state: regressed while any section stands (the alert files); recovered only when every
section is back (closes as completed); otherwise hold (an open issue gets a note). The owner is
the PR side's rule (bot/alert/model.py ``guard_owner``): all sections pointing one way, that
repository; both ways or neither, the repository whose main branch this is (``--repo``) when
it is a configured one, else the configured order. Every section counts, standing or back, so
the owner does not flip as sections recover.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.alert.model import FAMILY, Owner, Section, guard_owner, guard_size, rank_repos
from bot.decide.types import GUARD_TITLES, Guard, GuardKind
from bot.history.broken import Break
from bot.history.follow import FollowUp
from bot.history.watch import Watch
from bot.results.types import REFERENCE
from bot.tell.issue import SyncState

#: The order of an alert's sections (the order docs/HISTORY.md lists the guards in).
ORDER: tuple[GuardKind, ...] = tuple(GUARD_TITLES)


def alert_key(machine: str, last_good: str, first_bad: str) -> str:
    return f"{FAMILY}|{machine}|{last_good[:12]}..{first_bad[:12]}"


def legacy_key(machine: str, last_good: str, first_bad: str, guard: GuardKind) -> str:
    """The key of an issue filed before alerts: one issue per range and guard."""
    return f"{alert_key(machine, last_good, first_bad)}|{guard}"


@dataclass(frozen=True)
class Part:
    """One section of a main-branch alert: a guard that moved at the alert's range, and what
    its own follow-up says now (bot/history/follow.py; for a break, bot/history/broken.py)."""

    section: Section  # machine, guard, size, owner, summary (the PR side's section)
    follow: SyncState
    change: FollowUp | None  # a timing guard's change and follow-up
    broken: Break | None  # the break, for the broken guard

    @property
    def guard(self) -> GuardKind:
        return self.section.guard

    @property
    def range(self) -> tuple[str, str]:
        """Last good and first bad, full hashes."""
        if self.change is not None:
            return self.change.change.last_good, self.change.change.first_bad
        assert self.broken is not None
        return self.broken.last_good, self.broken.first_bad


@dataclass(frozen=True)
class MainAlert:
    key: str
    machine: str
    last_good: str  # full hashes
    first_bad: str
    state: SyncState
    parts: tuple[Part, ...]  # in ORDER
    repos: tuple[str, ...]  # the owner first, then the repositories with a linked issue
    owner_why: str

    @property
    def sizes(self) -> dict[str, float]:
        return {p.section.name: p.section.size for p in self.parts}

    @property
    def owner(self) -> str:
        return self.repos[0]


def combined(states: Iterable[SyncState]) -> SyncState:
    """Regressed while any section stands; recovered only when every one is back."""
    seen = list(states)
    if "regressed" in seen:
        return "regressed"
    return "recovered" if seen and all(s == "recovered" for s in seen) else "hold"


def owner_repos(
    parts: Sequence[Part], configured: tuple[str, ...], repo: str | None
) -> tuple[tuple[str, ...], str]:
    """The owner first (see the module docstring), and why, in words."""
    owners = [p.section.owner for p in parts]
    return rank_repos(owners, configured, repo, "the repository of this branch")


def _timing_part(machine: str, f: FollowUp) -> Part:
    c = f.change
    g = c.verdict.guard(c.guard)
    assert g is not None
    owner = guard_owner(g, c.verdict)
    return Part(
        Section(machine, c.guard, g.state, guard_size(g), owner, g.summary), f.state, f, None
    )


def broken_guard(b: Break) -> Guard:
    return Guard("broken", "broken", f"{len(b.points)} point(s) stopped running", b.points)


def broken_part(machine: str, b: Break) -> Part:
    """A break's section; its owner as ``guard_owner`` reads a broken guard (nvFuser's when
    one of its own points broke, else Thunder's), without the verdict a break has none of."""
    g = broken_guard(b)
    owner: Owner = "fuser" if any(p.key.variant == REFERENCE for p in b.points) else "thunder"
    section = Section(machine, "broken", "broken", guard_size(g), owner, g.summary)
    return Part(section, b.follow, None, b)


def timing_part(machine: str, f: FollowUp) -> Part:
    """A confirmed regression's section: its size and owner read from the change's own
    verdict (fixed once its windows are full), its state from the follow-up."""
    c = f.change
    g = c.verdict.guard(c.guard)
    assert g is not None
    section = Section(
        machine, c.guard, g.state, guard_size(g), guard_owner(g, c.verdict), g.summary
    )
    return Part(section, f.state, f, None)


def alerts_of(
    w: Watch, parts: Sequence[Part], configured: tuple[str, ...], repo: str | None
) -> tuple[MainAlert, ...]:
    """The parts of one machine's history grouped by range, in commit order."""
    machine = w.history.machine
    index = {c.sha: i for i, c in enumerate(w.history.commits)}
    ranges: dict[tuple[str, str], list[Part]] = {}
    for p in parts:
        ranges.setdefault(p.range, []).append(p)
    out = []
    for (good, bad), found in sorted(ranges.items(), key=lambda kv: index[kv[0][0]]):
        found.sort(key=lambda p: ORDER.index(p.guard))
        repos, why = owner_repos(found, configured, repo)
        state = combined(p.follow for p in found)
        key = alert_key(machine, good, bad)
        out.append(MainAlert(key, machine, good, bad, state, tuple(found), repos, why))
    return tuple(out)

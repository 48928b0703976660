"""One alert per break on main (pure): every confirmed regression and break the watch finds at
the same commit range (last good .. first bad) of one history (a fusion on a machine) is a
section of one alert, as every guard that moved in a PR is a section of that PR's alert
(bot/alert/model.py).

Why one alert: a Thunder slowdown moves Thunder's kernel time and the ratio at the same split;
one issue per guard and repository made four issues of one cause. The alert is one issue in
the repository that owns it and a short linked one in the other (bot/history/issues.py).

The key, ``rmsnorm-bwd|<unit>|<last good>..<first bad>`` (12 hex digits each), names the
range alone, so a guard confirmed at that range a night later joins the same alert. The unit
is the machine for RMSNorm backward (the keys from before the catalog, so its open issues keep
matching) and ``machine:fusion`` for any other fusion (bot/fusion/names.py ``unit_key``), so
two fusions that moved at one range of one machine are two alerts, as each is its own history.
Issues filed before alerts carry ``|<guard>`` after it (:func:`legacy_key`);
bot/history/stranded.py still follows them.

The state: regressed while any section stands (the alert files); recovered only when every
section is back (closes as completed); otherwise hold (an open issue gets a note).

The owner is the PR side's rule (bot/alert/owners.py), on what differs between the two commits
of the range (their provenance records, bot/alert/builds.py): a section is a side's only when a
build it depends on changed on that side between last good and first bad; without records on
either commit, the rule before records (bot/alert/model.py ``guard_owner``). All sections
pointing one way, that repository; both ways or neither, the repository whose main branch this
is (``--repo``) when it is a configured one, else the configured order. Every section counts,
standing or back, so the owner does not flip as sections recover. The other repository gets
the linked issue only where ``[alerts] link`` says so (``told``); a range whose sections no
side owns (only this suite's own definition or the stack changed between the two commits) is
nobody's upstream: nothing is filed (``repos`` empty, ``upstream_none`` says why).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from bot.alert.builds import UNKNOWN, Builds, compare_builds
from bot.alert.model import FAMILY, Owner, Section, guard_owner, guard_size
from bot.alert.owners import Told, address, section_owner, suite_words
from bot.config import LinkPolicy
from bot.decide.types import GUARD_TITLES, Guard, GuardKind
from bot.fusion.names import unit_key
from bot.history.between import between_builds
from bot.history.broken import Break
from bot.history.follow import FollowUp
from bot.history.series import History
from bot.history.watch import Watch
from bot.results.types import DEFAULT_FUSION, REFERENCE
from bot.tell.issue import SyncState

#: What changed inside a history's fusion between two of its commits (last good, first bad),
#: as bullet texts: bot/commands/history_inside.py reads the captures.
Inside = Callable[[History, str, str], tuple[str, ...]]
#: The order of an alert's sections (the order docs/HISTORY.md lists the guards in).
ORDER: tuple[GuardKind, ...] = tuple(GUARD_TITLES)


def alert_key(unit: str, last_good: str, first_bad: str) -> str:
    """``unit``: a history's (the machine for RMSNorm backward, else ``machine:fusion``)."""
    return f"{FAMILY}|{unit}|{last_good[:12]}..{first_bad[:12]}"


def legacy_key(unit: str, last_good: str, first_bad: str, guard: GuardKind) -> str:
    """The key of an issue filed before alerts: one issue per range and guard."""
    return f"{alert_key(unit, last_good, first_bad)}|{guard}"


@dataclass(frozen=True)
class Part:
    """One section of a main-branch alert: a guard that moved at the alert's range, and what
    its own follow-up says now (bot/history/follow.py; for a break, bot/history/broken.py)."""

    section: Section  # unit, guard, size, owner, summary (the PR side's section)
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
    #: The owner first, then the repositories told (a linked issue); empty: nobody's upstream.
    repos: tuple[str, ...]
    owner_why: str
    #: Every configured repository, the owner first (whoever is told).
    ranked: tuple[str, ...] = ()
    #: Each configured repository after the owner: whether it is told, and why.
    told: tuple[Told, ...] = ()
    #: Why nothing is filed upstream although sections stand (the suite's or the stack's own
    #: change between the two commits), or "".
    upstream_none: str = ""
    #: The fusion whose history moved (``machine`` is the real machine).
    fusion: str = DEFAULT_FUSION
    #: What changed inside the fusion between the two commits' captures, as bullet texts
    #: (bot/history/inside.py); empty where either commit captured nothing.
    inside: tuple[str, ...] = ()
    #: The two builds and the upstream commits between them, in markdown, where the history
    #: is of a package under test (bot/history/between.py); None otherwise.
    between: str | None = None

    @property
    def unit(self) -> str:
        """The machine for RMSNorm backward, else ``machine:fusion``: the key's and sections'."""
        return unit_key(self.machine, self.fusion)

    @property
    def sizes(self) -> dict[str, float]:
        return {p.section.name: p.section.size for p in self.parts}

    @property
    def owner(self) -> str:
        """The primary issue's repository; "" when nothing is filed upstream."""
        return self.repos[0] if self.repos else ""

    @property
    def everywhere(self) -> tuple[str, ...]:
        """Where its issues may be: every configured repository, the owner first (an issue
        filed before this rule, or under another ``link``, in a repository not told now)."""
        return self.ranked or self.repos


def combined(states: Iterable[SyncState]) -> SyncState:
    """Regressed while any section stands; recovered only when every one is back."""
    seen = list(states)
    if "regressed" in seen:
        return "regressed"
    return "recovered" if seen and all(s == "recovered" for s in seen) else "hold"


def range_builds(h: History, last_good: str, first_bad: str) -> Builds:
    """What differs between the two commits of a range: their (first) runs' provenance
    records compared (bot/alert/builds.py); unknown when either commit or record is missing."""
    good, bad = h.commit(last_good), h.commit(first_bad)
    if good is None or bad is None:
        return UNKNOWN
    return compare_builds(good.runs[0].provenance, bad.runs[0].provenance, h.fusion)


def part_guard(p: Part) -> Guard:
    """The guard a part's section is of: the change's own verdict's, or the break's."""
    if p.change is not None:
        c = p.change.change
        g = c.verdict.guard(c.guard)
        assert g is not None
        return g
    assert p.broken is not None
    return broken_guard(p.broken)


def legacy_owner(p: Part) -> Owner | None:
    """The owner without records (bot/alert/model.py ``guard_owner``): for a break, nvFuser's
    when one of its own points broke, else Thunder's (a break has no verdict)."""
    if p.change is not None:
        c = p.change.change
        return guard_owner(part_guard(p), c.verdict)
    assert p.broken is not None
    return "fuser" if any(q.key.variant == REFERENCE for q in p.broken.points) else "thunder"


def owned(p: Part, builds: Builds) -> Part:
    """The part with its section's owner read from what changed between its range's commits
    (bot/alert/owners.py ``section_owner``; unknown builds: :func:`legacy_owner`)."""
    owner = section_owner(part_guard(p), builds, legacy_owner(p))
    return replace(p, section=replace(p.section, owner=owner))


def broken_guard(b: Break) -> Guard:
    return Guard("broken", "broken", f"{len(b.points)} point(s) stopped running", b.points)


def broken_part(unit: str, b: Break, builds: Builds = UNKNOWN) -> Part:
    """A break's section; its owner from what changed between the break's two commits
    (``builds``), else as ``guard_owner`` reads a broken guard (nvFuser's when one of its own
    points broke, else Thunder's), without the verdict a break has none of."""
    g = broken_guard(b)
    section = Section(unit, "broken", "broken", guard_size(g), None, g.summary)
    return owned(Part(section, b.follow, None, b), builds)


def timing_part(unit: str, f: FollowUp, builds: Builds = UNKNOWN) -> Part:
    """A confirmed regression's section: its size and owner read from the change's own
    verdict (fixed once its windows are full) and what changed between its range's commits
    (``builds``), its state from the follow-up."""
    c = f.change
    g = c.verdict.guard(c.guard)
    assert g is not None
    section = Section(unit, c.guard, g.state, guard_size(g), None, g.summary)
    return owned(Part(section, f.state, f, None), builds)


def _alert(
    h: History,
    found: Sequence[Part],
    builds: Builds,
    configured: tuple[str, ...],
    repo: str | None,
    link: LinkPolicy,
    inside: Inside | None,
) -> MainAlert:
    """One range's alert (``found``: its parts, owned and in ORDER): the owner, who is told
    and why, as bot/alert/model.py ``build_alert`` decides on a PR's base and head, here on
    the range's two commits, with what changed inside the fusion between their captures."""
    good, bad = found[0].range
    where = address(
        [(p.section.owner, GUARD_TITLES[p.guard]) for p in found],
        [suite_words(part_guard(p), builds) for p in found if builds.changed_of(p.guard)],
        (),
        [builds] if builds.known else [],
        configured=configured,
        home=repo,
        home_is="the repository of this branch",
        link=link,
    )
    return MainAlert(
        alert_key(h.unit, good, bad), h.machine, good, bad, combined(p.follow for p in found),
        tuple(found), where.repos, where.why, where.ranked, where.told, where.upstream_none,
        h.fusion, inside(h, good, bad) if inside is not None else (), between_builds(h, good, bad),
    )  # fmt: skip


def alerts_of(
    w: Watch,
    parts: Sequence[Part],
    configured: tuple[str, ...],
    repo: str | None,
    link: LinkPolicy = "implicated",
    inside: Inside | None = None,
) -> tuple[MainAlert, ...]:
    """The parts of one history (a fusion on a machine) grouped by range, in commit order;
    each part owned by what changed between its range's two commits, and the other repository
    told as ``link`` says (``[alerts] link``, bot/alert/owners.py); ``inside``: what changed
    inside the fusion between two commits (the captures, read at the edge)."""
    ranges: dict[tuple[str, str], list[Part]] = {}
    for p in parts:
        ranges.setdefault(p.range, []).append(p)
    out = []
    # In branch order: a break's range can start at a commit of other variants (issue 38).
    for (good, bad), found in sorted(ranges.items(), key=lambda kv: w.history.position(kv[0][0])):
        builds = range_builds(w.history, good, bad)
        mine = sorted((owned(p, builds) for p in found), key=lambda p: ORDER.index(p.guard))
        out.append(_alert(w.history, mine, builds, configured, repo, link, inside))
    return tuple(out)

"""The alert of a pull request (pure): its sections, its owner, its key and its sizes.

A section is one guard that moved on one machine that judges (bot/tell/machines.py: compared,
its runner check passed, a noise model covers it). The alert's state is what its linked issues
should do: ``regressed`` while any section stands; ``recovered`` only on evidence that every
guard of every machine is back (:func:`is_back`, the rule each guard had on its own);
``hold`` when the evidence is not enough either way (unsure, no data, a machine not judged).

The owner is the repository the sections point at. Where both sides' provenance records say
what changed between base and head (bot/alert/builds.py), a section is a side's only when a
build it depends on changed on that side, and the linked issue goes only to a side that is
implicated (bot/alert/owners.py); a section that only the suite's own definition or the stack
explains is nobody's upstream, and nothing is filed. Without records, the rule of
:func:`guard_owner`: nvFuser's for its fusion's slowdown or a broken nvFuser point, Thunder's
for Thunder's kernels or broken Thunder points, for the ratio the owner the fusion hints name
(bot/fusion/attribute.py), else the side whose own kernel time moved. Sections that point both
ways, or nowhere, leave it to the repository of the PR (when it is one of the configured
repositories), else the first configured one.

The key names the PR alone, not its base commit or a guard: pushes, rebases and new guards
update the same alert.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from bot.alert.builds import UNKNOWN, Builds
from bot.alert.decision import Decision
from bot.alert.owners import (
    WORDS,
    Owner,
    Told,
    address,
    guard_owner,
    owns,
    rank_repos,
    section_owner,
    suite_words,
)
from bot.config import LinkPolicy
from bot.decide.level import level_of
from bot.decide.types import GUARD_TITLES, Guard, GuardKind, Verdict

__all__ = ["WORDS", "Alert", "Owner", "Section", "build_alert", "guard_owner", "owns", "rank_repos"]

FAMILY = "rmsnorm-bwd"
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
AlertState = Literal["regressed", "recovered", "hold"]


@dataclass(frozen=True)
class Section:
    """One guard that moved on one machine."""

    machine: str
    guard: GuardKind
    state: str  # the guard's state: regressed or broken
    size: float  # broken: points broken; else the worst regressed change (1.103 is +10.3%)
    owner: Owner | None
    summary: str  # the guard's own words
    #: A ratio section's level, base and head, of the variant farthest from parity at head:
    #: what "ratio 1.02x → 1.08x" says; None for the other guards, or where unknown.
    level: tuple[float, float] | None = None

    @property
    def name(self) -> str:
        return f"{self.machine}/{self.guard}"


@dataclass(frozen=True)
class Alert:
    key: str
    state: AlertState
    sections: tuple[Section, ...]
    repos: tuple[str, ...]  # the owner first, then the repositories that get a linked issue
    owner_why: str
    judged: tuple[str, ...]  # the machines whose verdicts made this alert
    #: Every configured repository, the owner first: where an issue filed earlier may be
    #: closed, whoever is told now. Empty: the same as ``repos``.
    ranked: tuple[str, ...] = ()
    #: Each configured repository after the owner: whether it is told, and why.
    told: tuple[Told, ...] = ()
    #: Why nothing is filed upstream although sections stand (the suite's or the stack's own
    #: change), or "".
    upstream_none: str = ""

    @property
    def sizes(self) -> dict[str, float]:
        return {s.name: s.size for s in self.sections}

    @property
    def owner(self) -> str:
        return self.repos[0] if self.repos else ""

    @property
    def everywhere(self) -> tuple[str, ...]:
        """Where its issues may be: every configured repository, the owner first."""
        return self.ranked or self.repos

    @property
    def broken(self) -> bool:
        return any(s.guard == "broken" for s in self.sections)

    @property
    def worst(self) -> Section | None:
        return worst_section(self.sections)


def worst_section(sections: Sequence[Section]) -> Section | None:
    """The section a title or a status names: the first broken one, else the largest change."""
    if not sections:
        return None
    broken = [s for s in sections if s.guard == "broken"]
    return broken[0] if broken else max(sections, key=lambda s: s.size)


def is_back(g: Guard, v: Verdict) -> bool:
    """Evidence that what the guard tracks is fine: every one of its points measured at both
    sides, none regressed or unsure (even set aside as uncorroborated). A point that stopped
    running, or was not measured, is no such evidence; nor is a ratio that is back only
    because nvFuser's fusion got slower."""
    if g.alarming or g.state not in ("no change", "improved"):
        return False
    if g.kind != "broken" and any(
        p.cmp is None or p.state in ("regressed", "unsure") for p in g.points
    ):
        return False
    nv = v.guard("nvfuser")
    return not (g.kind == "ratio" and nv is not None and nv.state not in ("no change", "improved"))


def pr_key(repo: str, pr: int) -> str:
    if not _REPO.fullmatch(repo) or pr < 1:
        raise ValueError(f"not a repository and PR number: {repo!r} #{pr}")
    return f"{FAMILY}|pr|{repo}#{pr}"


def guard_size(g: Guard) -> float:
    """How big the guard's move is: points broken; else its largest regressed geometric mean
    (a variant's points moving together), else its worst regressed point. A mean, not the
    worst point, where there is one: a +2% Thunder moved its small points by 4-5%, its mean by
    2.6% (data/h200-states), and the worst point of two such runs says little of which is
    worse."""
    if g.kind == "broken":
        return float(sum(p.state == "broken" for p in g.points))
    means = [a.geomean.estimate for a in g.aggregates if a.state == "regressed"]
    if means:
        return max(means)
    changes = [p.cmp.change.estimate for p in g.points if p.state == "regressed" and p.cmp]
    return max(changes, default=1.0)


def build_alert(
    verdicts: Mapping[str, Verdict],
    hinted: Mapping[str, str | None],
    not_judged: Sequence[str],
    *,
    key: str,
    configured: tuple[str, ...],
    pr_repo: str,
    previous: Mapping[str, float] | None = None,
    builds: Mapping[str, Builds] | None = None,
    link: LinkPolicy = "implicated",
) -> Alert:
    """The alert of the judged machines' verdicts (machine -> verdict); ``hinted``: the owner
    the fusion hints name per machine; ``not_judged``: machines shown but not judged (one side
    only, a failed runner check, no noise model, a drifted runner); ``previous``: the sections
    the last run showed (its sizes), None when unknown; ``builds``: what differs between each
    machine's base and head (bot/alert/builds.py; unknown where absent); ``link``: which other
    repositories get the linked issue (bot/alert/owners.py).

    With no section standing, the alert is back when every section it had is back: its
    machine judged now and its guard back (:func:`is_back`); a guard that never moved (an
    unsure point elsewhere) does not hold it open. Without ``previous``, every guard of every
    machine must be back, and every machine judged."""
    known = builds or {}
    sections, nobody = [], []
    for m, v in verdicts.items():
        b = known.get(m, UNKNOWN)
        for g in (g for g in v.guards if g.alarming):
            owner = section_owner(g, b, guard_owner(g, v, hinted.get(m)))
            level = ratio_move(v) if g.kind == "ratio" else None
            sections.append(Section(m, g.kind, g.state, guard_size(g), owner, g.summary, level))
            if owner is None and b.changed_of(g.kind):
                nobody.append(suite_words(g, b))
    back = {f"{m}/{g.kind}" for m, v in verdicts.items() for g in v.guards if is_back(g, v)}
    everything = {f"{m}/{g.kind}" for m, v in verdicts.items() for g in v.guards}
    state: AlertState = "hold"
    if sections:
        state = "regressed"
    elif previous:
        state = "recovered" if set(previous) <= back else "hold"
    elif verdicts and not not_judged and back == everything:
        state = "recovered"
    where = address(
        [(s.owner, GUARD_TITLES[s.guard]) for s in sections],
        nobody,
        [hinted.get(m) for m in {s.machine for s in sections}],
        [known[m] for m in verdicts if m in known],
        configured=configured,
        home=pr_repo,
        home_is="the PR's repository",
        link=link,
    )
    return Alert(
        key, state, tuple(sections), where.repos, where.why, tuple(verdicts), where.ranked,
        where.told, where.upstream_none,
    )  # fmt: skip


def alert_of(
    d: Decision,
    *,
    key: str,
    configured: tuple[str, ...],
    pr_repo: str,
    previous: Mapping[str, float] | None = None,
    link: LinkPolicy = "implicated",
) -> Alert:
    """The alert of a run's decision: its judged units' verdicts, each unit's hinted owner and
    builds, the units not judged (bot/alert/decision.py decided which is which)."""
    return build_alert(
        {u.unit: u.verdict for u in d.judged if u.verdict is not None},
        {u.unit: (u.hints.attribution.owner if u.hints else None) for u in d.units},
        [u.unit for u in d.units if not u.gates],
        key=key,
        configured=configured,
        pr_repo=pr_repo,
        previous=previous,
        builds={u.unit: u.builds for u in d.units},
        link=link,
    )


#: Who got slower, and against what: "Thunder's kernels" + " 11.4x slower" + "".
_SUBJECT: dict[GuardKind, tuple[str, str]] = {
    "ratio": ("Thunder", " relative to nvFuser"),
    "nvfuser": ("nvFuser's hand-written fusion", ""),
    "thunder": ("Thunder's kernels", ""),
}


def ratio_move(v: Verdict) -> tuple[float, float] | None:
    """The ratio's level at base and head of the variant farthest from parity at head."""
    variants = level_of(v).variants
    if not variants:
        return None
    worst = max(variants, key=lambda x: x.head.estimate)
    return worst.base.estimate, worst.head.estimate


def _guard_phrase(s: Section) -> str:
    """Another guard of the same fusion, in a few words: "ratio 1.02x → 1.08x"."""
    if s.guard == "ratio" and s.level is not None:
        return f"ratio {s.level[0]:.2f}x → {s.level[1]:.2f}x"
    if s.guard == "broken":
        return f"{s.size:.0f} point(s) fail"
    return {"ratio": "ratio", "thunder": "Thunder's kernels", "nvfuser": "nvFuser's fusion"}[
        s.guard
    ] + f" {change_words(s.name, s.size)}"


def what_else(sections: Sequence[Section], title: Callable[[str], str]) -> str:
    """What else an alert holds besides its worst section, for a title or a status: the other
    guards of the worst section's fusion and machine by what they say (", ratio 1.02x →
    1.08x"), then the other fusions by name ("; also Softmax backward"), never "and 1 more".
    ``title`` names a section's unit (its fusion, and its machine where several)."""
    worst = worst_section(sections)
    if worst is None:
        return ""
    same = [_guard_phrase(x) for x in sections if x.machine == worst.machine and x is not worst]
    others = list(dict.fromkeys(title(x.machine) for x in sections if x.machine != worst.machine))
    return (f", {', '.join(same)}" if same else "") + (
        f"; also {', '.join(others)}" if others else ""
    )


def moved_words(guard: GuardKind, size: float) -> str:
    """What moved, by how much, as one phrase: "Thunder's kernels 11.4x slower", "Thunder 2.1%
    slower relative to nvFuser", "3 point(s) that ran at base fail at head"."""
    if guard == "broken":
        return f"{size:.0f} point(s) that ran at base fail at head"
    subject, against = _SUBJECT[guard]
    amount = f"{size:.1f}x" if size >= 2 else f"{100 * (size - 1):.1f}%"
    return f"{subject} {amount} slower{against}"


def change_words(section_name: str, size: float) -> str:
    """A size in words: "3 point(s)" for a break, "+10.3%" or "25.0x slower" for a change."""
    if section_name.endswith("/broken"):
        return f"{size:.0f} point(s)"
    if size >= 2:
        return f"{size:.1f}x slower"
    return f"{100 * (size - 1):+.1f}%"


def clearly_worse(
    then: Mapping[str, float], now: Mapping[str, float], factor: float
) -> list[tuple[str, float | None, float]]:
    """The sections of ``now`` that are clearly worse than ``then``: a section ``then`` did not
    have, or one whose excess (size - 1; for a break, its count of points) grew by more than
    ``factor``. Each as (section, size then or None, size now)."""
    out: list[tuple[str, float | None, float]] = []
    for name, size in sorted(now.items()):
        old = then.get(name)
        if old is None or not math.isfinite(old):
            out.append((name, None, size))
            continue
        base = 0.0 if name.endswith("/broken") else 1.0
        if size - base > factor * (old - base) and size > old:
            out.append((name, old, size))
    return out

"""Who an alert is news for (pure): each section's owner from what changed between base and
head, and which repositories are told.

A side owns a section only when something its guard depends on changed on that side
(bot/alert/builds.py): nvFuser's hand-written fusion moving while the nvFuser build is the
same at base and head is not nvFuser's news. A section whose changes are the suite's own (its
definition of a side, an injected slowdown) or the stack's is nobody's upstream: nothing is
filed in either repository, and the comment says why.

The linked issue goes only where that side is implicated (``[alerts] link = "implicated"``, the
default): by a section it owns, or by the fusion hints (the fusion Thunder hands to nvFuser is
the same program and got slower: nvFuser's scheduler). ``"always"`` tells every configured
repository (the rule before this one), ``"never"`` the owner's alone. Where the records say
nothing (no provenance on a side), the rule of bot/alert/model.py ``guard_owner`` stands.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from bot.alert.builds import PARTY_OF, Builds, Part, depends_of
from bot.config import LinkPolicy
from bot.decide.types import Guard, Verdict
from bot.results.types import REFERENCE

Owner = Literal["fuser", "thunder"]
WORDS: dict[Owner, str] = {"fuser": "nvFuser", "thunder": "Thunder"}
#: What a side's build is: nvFuser's package; Thunder's package and what the suite runs of it.
SIDE_PARTS: dict[Owner, tuple[Part, ...]] = {
    "fuser": ("nvfuser",),
    "thunder": ("thunder", "thunder_code"),
}


def owns(repo: str, owner: Owner) -> bool:
    return owner in repo.lower()


def guard_owner(g: Guard, v: Verdict, hinted: str | None = None) -> Owner | None:
    """Which side a guard's move points at, or None when it cannot say."""
    if g.kind == "nvfuser":
        return "fuser"
    if g.kind == "thunder":
        return "thunder"
    if g.kind == "broken":
        broken = [p for p in g.points if p.state == "broken"]
        if any(p.key.variant == REFERENCE for p in broken):
            return "fuser"
        return "thunder" if broken else None
    if hinted in ("fuser", "thunder"):
        return "fuser" if hinted == "fuser" else "thunder"
    thunder, nvfuser = v.guard("thunder"), v.guard("nvfuser")
    if thunder and nvfuser and thunder.alarming != nvfuser.alarming:
        return "thunder" if thunder.alarming else "fuser"
    return None


def rank_repos(
    owners: Collection[Owner | None], configured: tuple[str, ...], home: str | None, home_is: str
) -> tuple[tuple[str, ...], str]:
    """The configured repositories, the owner first, and why, in words: when every section
    points one way, that side's repository; else ``home`` (the PR's repository, or the one
    whose main branch broke: ``home_is`` names it) when it is a configured one, else the
    configured order. The PR mode and the history's alerts both rank so."""
    found = set(owners)
    if len(found) == 1 and None not in found:
        (owner,) = found
        assert owner is not None
        ranked = tuple(sorted(configured, key=lambda r: not owns(r, owner)))
        if owns(ranked[0], owner):
            return ranked, f"what moved points at {WORDS[owner]}"
    if home is not None and home in configured:
        first, why = home, f"the sections point at both sides or neither: {home_is}"
    else:
        first, why = configured[0], "the sections point at both sides or neither"
    return (first, *(r for r in configured if r != first)), why


def changed_owners(g: Guard, builds: Builds) -> tuple[Owner, ...]:
    """The packages whose build changed among what the guard depends on."""
    found: list[Owner] = []
    for part in depends_of(g):
        party = PARTY_OF[part]
        if builds.changed(part) and party in ("fuser", "thunder"):
            found.append("fuser" if party == "fuser" else "thunder")
    return tuple(dict.fromkeys(found))


def section_owner(g: Guard, builds: Builds, legacy: Owner | None) -> Owner | None:
    """The side a section is news for: the one package among its changed inputs; where both
    changed, ``legacy`` (the hints, else the side whose own kernels moved) when it is one of
    them; none when only the suite or the stack changed. Unknown builds: ``legacy``."""
    if not builds.known:
        return legacy
    changed = changed_owners(g, builds)
    if len(changed) == 1:
        return changed[0]
    return legacy if legacy in changed else None


#: What a move that only this suite's own change explains is said to be, first to last.
SUITE_CHANGED = "the suite itself changed"


def suite_words(g: Guard, builds: Builds) -> str:
    """Why a section with no package owner is nobody's upstream, in plain words."""
    parts = [p for p in depends_of(g) if builds.changed(p)]
    what = "; ".join(builds.words(p) for p in parts)
    if any(PARTY_OF[p] == "suite" for p in parts):
        return f"{SUITE_CHANGED} ({what})"
    return f"the stack under both sides changed ({what})"


@dataclass(frozen=True)
class Told:
    """Whether a configured repository other than the owner's gets the linked issue, and why
    (plain words, escaped by the caller)."""

    repo: str
    told: bool
    why: str


def implicated(owners: Iterable[Owner | None], hinted: Iterable[str | None]) -> frozenset[Owner]:
    found: set[Owner] = {o for o in owners if o is not None}
    found |= {"fuser" if h == "fuser" else "thunder" for h in hinted if h in ("fuser", "thunder")}
    return frozenset(found)


def _why_not(side: Owner, builds: Sequence[Builds]) -> str:
    name, part = WORDS[side], SIDE_PARTS[side][0]
    hints = "and the fusion hints do not point at it"
    if builds and all(b.known and not any(map(b.changed, SIDE_PARTS[side])) for b in builds):
        version = "; ".join(dict.fromkeys(b.versions.get(part, "") for b in builds)).strip("; ")
        build = f"{name} {version}" if version else f"{name}'s build"
        return f"{build} is the same at base and head {hints}"
    return f"no section of this alert is {name}'s {hints}"


def _why(
    side: Owner, builds: Sequence[Builds], sections: Sequence[tuple[Owner | None, str]]
) -> str:
    name = WORDS[side]
    own = [title for owner, title in sections if owner == side]
    parts = SIDE_PARTS[side]
    changed = "; ".join(dict.fromkeys(w for b in builds for p in parts if (w := b.words(p))))
    if own:
        build = f" ({changed})" if changed else ""
        return f"{name}'s build changed{build} and {', '.join(dict.fromkeys(own))} moved"
    if side == "fuser":
        return "the fusion hints point at nvFuser's scheduler"
    return "the fusion hints point at Thunder"


def side_of(repo: str) -> Owner | None:
    if owns(repo, "fuser"):
        return "fuser"
    return "thunder" if owns(repo, "thunder") else None


def told(
    ranked: Sequence[str],
    owner: Owner | None,
    sides: frozenset[Owner],
    policy: LinkPolicy,
    builds: Sequence[Builds],
    sections: Sequence[tuple[Owner | None, str]],
) -> tuple[Told, ...]:
    """For every configured repository after the primary: told or not, and why. ``sections``:
    each section's owner and its guard's name, for the words."""
    out = []
    for repo in ranked[1:]:
        side = side_of(repo)
        if policy == "always":
            out.append(Told(repo, True, '[alerts] link = "always"'))
        elif policy == "never":
            out.append(Told(repo, False, '[alerts] link = "never"'))
        elif side is not None and side in sides and side != owner:
            out.append(Told(repo, True, _why(side, builds, sections)))
        elif side is not None:
            out.append(Told(repo, False, _why_not(side, builds)))
        else:
            out.append(Told(repo, False, "it is neither nvFuser's nor Thunder's repository"))
    return tuple(out)


def told_repos(primary: Sequence[str], decisions: Sequence[Told]) -> tuple[str, ...]:
    return (*primary, *(t.repo for t in decisions if t.told))


@dataclass(frozen=True)
class Addressed:
    """Where an alert goes: every configured repository ranked (the owner first), why, the
    repositories told (empty: nobody's upstream), each other repository's decision, and why
    nothing is filed upstream ("" when something is)."""

    ranked: tuple[str, ...]
    why: str
    repos: tuple[str, ...]
    told: tuple[Told, ...]
    upstream_none: str


def address(
    sections: Sequence[tuple[Owner | None, str]],
    nobody: Sequence[str],
    hinted: Iterable[str | None],
    builds: Sequence[Builds],
    *,
    configured: tuple[str, ...],
    home: str | None,
    home_is: str,
    link: LinkPolicy,
) -> Addressed:
    """The PR mode's and the watch's one rule. ``sections``: each section's owner and its
    guard's title; ``nobody``: why sections no side owns are nobody's (:func:`suite_words`);
    ``builds``: what changed on each machine judged (a PR) or in the range (the watch).

    With records everywhere, a section no side owns does not pull the owner towards ``home``
    (the sides that own sections decide), and when no side owns any, nothing is filed. Without
    records nothing can be told apart: the rule before records (every repository told)."""
    owners = [o for o, _ in sections]
    records = bool(builds) and all(b.known for b in builds)
    sided = [o for o in owners if o is not None] if records else owners
    ranked, why = rank_repos(sided or owners, configured, home, home_is)
    if sections and records and not sided:  # the suite's or the stack's own change
        words = "; ".join(dict.fromkeys(nobody)) or "no build of either side changed"
        return Addressed(ranked, words, (), (), words)
    if not records and link == "implicated":
        link = "always"
    decisions = told(ranked, side_of(ranked[0]), implicated(owners, hinted), link, builds, sections)
    return Addressed(ranked, why, told_repos(ranked[:1], decisions), decisions, "")

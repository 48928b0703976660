"""Which confirmed break of the main-branch watch a bisect can follow up, between which two
builds, at which points (pure: it reads ``history --json``).

An alert is followed up when it stands (``regressed``) and, between its last good and first
bad commit, exactly one package changed (Thunder's or nvFuser's version, or the package under
test's build): then the bisect is over that package's builds between the two. A change with
no package step (this repository's own code, the machine), with both packages changed, or
where a commit's build is not a build (a deliberately slower variant, a lab run whose record
names no index version) is said, not guessed at. The newest alert that can be followed goes
first: one bisect at a time is what the GPU runners' budget holds. An alert of a catalog fusion
(its own history, ``machine:fusion``) is bisected at that fusion's points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.bisect.points import fusion_of, one_fusion, parse_points, point_of_label
from bot.fusion.names import unit_key
from bot.results.types import DEFAULT_FUSION

PACKAGES = ("thunder", "nvfuser")
#: The index's distribution of each package, where its provenance names only a version.
DISTRIBUTIONS = {"thunder": "lightning-thunder"}


@dataclass(frozen=True)
class Target:
    key: str  # the alert's issue key
    repo: str | None  # the repository its primary issue is in
    machine: str
    package: str
    good: str  # the build at the alert's last good commit (a spec)
    bad: str  # at its first bad commit
    points: tuple[str, ...]
    last_good: str  # the history's commits
    first_bad: str

    @property
    def fusion(self) -> str:
        """The fusion the (checked) points are of: the alert's."""
        return one_fusion(self.points)


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        data = data.get(key) if isinstance(data, Mapping) else None
    return data


def build_spec(record: Any, package: str) -> str | None:
    """The spec a bisect installs for the build a commit measured, or None where its record
    does not name one."""
    under = _get(record, "under_test")
    if isinstance(under, Mapping) and under.get("package") == package:
        repo, sha = under.get("repository"), under.get("vcs_commit")
        if under.get("kind") == "git" and isinstance(repo, str) and isinstance(sha, str):
            return f"git+https://github.com/{repo}@{sha}"
        dist, version = under.get("distribution"), under.get("version")
        if isinstance(dist, str) and isinstance(version, str):
            return f"{dist}=={version}"
    version = _get(record, "versions", package)
    dist = DISTRIBUTIONS.get(package)
    if isinstance(version, str) and dist and "+" not in version:
        return f"{dist}=={version}"
    return None


def _variant(record: Any) -> str | None:
    """A deliberately slower state of the code, which no index or commit holds."""
    variant = _get(record, "thunder_variant")
    if isinstance(variant, str) and variant != "stock":
        return f"Thunder's {variant} variant"
    if isinstance(_get(record, "slowdown"), Mapping):
        side, fraction = _get(record, "slowdown", "side"), _get(record, "slowdown", "fraction")
        return f"a {side} side made slower by {fraction}"
    return None


def _identity(record: Any, package: str) -> Any:
    under = _get(record, "under_test")
    if isinstance(under, Mapping) and under.get("package") == package:
        return (under.get("spec"), under.get("version"), under.get("vcs_commit"))
    return _get(record, "versions", package)


def _points(machine: Mapping[str, Any], good: str, bad: str, fusion: str) -> tuple[str, ...]:
    """The points of ``fusion`` the alert's changes and breaks moved at, as the suite's keys
    (dtype/MxN; fusion/dtype/MxN in a catalog fusion's history, whose labels name it)."""
    found: list[str] = []
    for item in [*(_get(machine, "changes") or []), *(_get(machine, "breaks") or [])]:
        if _get(item, "last_good") != good or _get(item, "first_bad") != bad:
            continue
        for p in _get(item, "points") or []:
            label = _get(p, "point")
            key = point_of_label(label) if isinstance(label, str) else None
            if key is not None and fusion_of(key) == fusion:
                found.append(key)
    return parse_points(",".join(found)) if found else ()


def _target(
    alert: Mapping[str, Any], machine: Mapping[str, Any], builds_of: Mapping[str, str]
) -> Target | str:
    good, bad = str(alert.get("last_good")), str(alert.get("first_bad"))
    commits = {str(_get(c, "sha")): c for c in _get(machine, "commits") or []}
    records = [_get(commits.get(sha), "build") for sha in (good, bad)]
    if any(r is None for r in records) and not (good in builds_of and bad in builds_of):
        return "a commit of it has no provenance record: its builds are not known"
    for sha, record in zip((good, bad), records, strict=True):
        if sha not in builds_of and (why := _variant(record)):
            return f"{sha[:12]} measured {why}, not a build a bisect can install"
    moved = [p for p in PACKAGES if _identity(records[0], p) != _identity(records[1], p)]
    if len(moved) == 0 and not builds_of.keys() & {good, bad}:
        return "neither Thunder nor nvFuser changed there: the change is not a package's"
    if len(moved) > 1:
        return "Thunder and nvFuser both changed there: bisect each by hand, one at a time"
    package = moved[0] if moved else _package_of(builds_of.get(bad, ""))
    pairs = zip((good, bad), records, strict=True)
    specs = [builds_of.get(sha) or build_spec(r, package) for sha, r in pairs]
    if None in specs:
        return f"the {package} builds there are not named by their records (give --build-of)"
    points = _points(machine, good, bad, fusion_of_alert(alert))
    if not points:
        return "its changes name no point to measure"
    key, repo = str(alert.get("key")), alert.get("primary")
    return Target(
        key, repo if isinstance(repo, str) else None, str(machine.get("machine")), package,
        str(specs[0]), str(specs[1]), points, good, bad,
    )  # fmt: skip


def fusion_of_alert(alert: Mapping[str, Any]) -> str:
    """The fusion an alert is of; one from before the catalog names none (RMSNorm backward)."""
    return str(_get(alert, "fusion") or DEFAULT_FUSION)


def _package_of(spec: str) -> str:
    return "nvfuser" if "nvfuser" in spec.lower() else "thunder"


def targets(
    history: Mapping[str, Any], builds_of: Mapping[str, str] | None = None
) -> tuple[tuple[Target, ...], tuple[str, ...]]:
    """The alerts a bisect can follow, newest first, and a line for each that it cannot."""
    given = dict(builds_of or {})
    # Keyed by unit (a machine, or ``machine:fusion``: each fusion is its own history); a file
    # from before the catalog names machines only.
    machines = {
        str(_get(m, "unit") or _get(m, "machine")): m for m in _get(history, "machines") or []
    }
    order = {
        name: [str(_get(c, "sha")) for c in _get(m, "commits") or []]
        for name, m in machines.items()
    }
    found: list[Target] = []
    skipped: list[str] = []
    for alert in _get(history, "alerts") or []:
        if _get(alert, "state") != "regressed":
            continue
        machine = machines.get(str(_get(alert, "unit") or _get(alert, "machine")))
        if machine is None:
            skipped.append(f"{_get(alert, 'key')}: its machine is not in the history")
            continue
        got = _target(alert, machine, given)
        if isinstance(got, Target):
            found.append(got)
        else:
            skipped.append(f"{_get(alert, 'key')}: {got}")

    def newest(t: Target) -> int:
        line = order.get(unit_key(t.machine, t.fusion), [])
        return -line.index(t.first_bad) if t.first_bad in line else 0

    return tuple(sorted(found, key=newest)), tuple(skipped)


def read_builds_of(lines: Sequence[str]) -> dict[str, str]:
    """``COMMIT=SPEC`` pairs: the build a history commit measured, where its record does not
    name one (a lab run; a recorded run standing for a build in the tests)."""
    out = {}
    for line in lines:
        commit, sep, spec = line.partition("=")
        if not sep or not commit.strip() or not spec.strip():
            raise ValueError(f"{line!r} is not COMMIT=SPEC")
        out[commit.strip()] = spec.strip()
    return out

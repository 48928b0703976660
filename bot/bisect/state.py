"""The state file: every run a bisect measured, so that it spans several GPU calls.

A GPU call lasts at most 10 minutes and a build takes about a minute to measure, so a bisect
over a year of nightlies is resumed from this file: each run is recorded as soon as it is
measured (written whole, then renamed over the old file), and a build already measured is
never measured again. The verdicts are recomputed from the runs' results on every call (the
decision is pure and takes milliseconds); the file also holds the latest of them for a
reader (``report``), which is never read back.

The file is bound to what makes its runs comparable: the package, the known-good build (the
reference), the fusion, the points and the variants. Another known-bad build or another list
of builds may reuse it: a run of a build is a run of that build whatever list it was in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from bot.bisect.points import PointsError, canonical, one_fusion
from bot.commands.steps import write_json_atomically
from bot.results import names
from bot.results.limits import full_sha
from bot.results.strict_json import read_document
from bot.results.types import DEFAULT_FUSION, BadInput

SCHEMA = "perfbot-bisect-state/1"
MAX_STATE_BYTES = 16 * 1024 * 1024


class StateMismatch(ValueError):
    """The state file belongs to another bisect (another reference, points or variants)."""


@dataclass(frozen=True)
class Run:
    build: str
    attempt: int  # 1 for the first run of the build
    results: str  # the asv results folder, relative to the state file's folder
    commit: str  # the key asv filed the run under
    machine: str
    wall_s: float | None  # how long the measurement took, where the measurer knows
    measured_at: str
    #: Every other distribution the build's process saw (the real measurer says), so that a
    #: build measured beside another stack is not compared with the reference.
    stack: Mapping[str, str] | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "build": self.build,
            "attempt": self.attempt,
            "results": self.results,
            "commit": self.commit,
            "machine": self.machine,
            "wall_s": self.wall_s,
            "measured_at": self.measured_at,
            "stack": None if self.stack is None else dict(self.stack),
        }


@dataclass(frozen=True)
class State:
    package: str
    good: str
    points: tuple[str, ...]
    variants: tuple[str, ...]
    runs: tuple[Run, ...] = ()
    report: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def fusion(self) -> str:
        """The fusion the (checked) points are of: one bisect, one fusion."""
        return one_fusion(self.points)

    def runs_of(self, build: str) -> tuple[Run, ...]:
        return tuple(r for r in self.runs if r.build == build)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.runs:
            out[r.build] = out.get(r.build, 0) + 1
        return out

    def check_same(self, other: State) -> None:
        """Refuse to resume a state file of another bisect: its runs were decided against
        another reference, or at other points."""
        for what in ("package", "good", "fusion", "points", "variants"):
            mine, theirs = getattr(self, what), getattr(other, what)
            if mine != theirs:
                raise StateMismatch(
                    f"the state file is for another bisect: its {what} is {_shown(mine)}, "
                    f"not {_shown(theirs)} (give another --state, or the same {what})"
                )


def _shown(value: object) -> str:
    return ",".join(value) if isinstance(value, tuple) else str(value)


def to_json(state: State) -> dict[str, object]:
    # RMSNorm backward's file is as it was before the catalog: no fusion written.
    fusion = {} if state.fusion == DEFAULT_FUSION else {"fusion": state.fusion}
    return {
        "schema": SCHEMA,
        "package": state.package,
        "good": state.good,
        **fusion,
        "points": list(state.points),
        "variants": list(state.variants),
        "runs": [r.to_json() for r in state.runs],
        "report": dict(state.report),
    }


def write_state(path: Path, state: State) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomically(path, to_json(state))


def _text(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value or len(value) > 2000:
        raise BadInput(f"{where}: {key} must be a non-empty text")
    return value


def _texts(data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise BadInput(f"{where}: {key} must be a list of texts")
    return tuple(value)


def _relative(text: str, where: str) -> str:
    """A results folder inside the state file's folder: never absolute, never ``..``."""
    p = PurePosixPath(text)
    if p.is_absolute() or ".." in p.parts or "\\" in text or not p.parts:
        raise BadInput(f"{where}: results {text[:80]!r} must be a folder under the state's")
    return text


def _run(item: Any, where: str) -> Run:
    if not isinstance(item, Mapping):
        raise BadInput(f"{where}: not an object")
    attempt, wall = item.get("attempt"), item.get("wall_s")
    if isinstance(attempt, bool) or not isinstance(attempt, int) or not 1 <= attempt <= 100:
        raise BadInput(f"{where}: attempt must be an integer from 1 to 100")
    if wall is not None and (isinstance(wall, bool) or not isinstance(wall, (int, float))):
        raise BadInput(f"{where}: wall_s must be a number or null")
    stack = item.get("stack")
    if stack is not None and not (
        isinstance(stack, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in stack.items())
    ):
        raise BadInput(f"{where}: stack must be an object of texts or null")
    machine = names.machine(_text(item, "machine", where), where)
    return Run(
        _text(item, "build", where),
        attempt,
        _relative(_text(item, "results", where), where),
        full_sha(item.get("commit"), where, "commit"),
        machine,
        None if wall is None else float(wall),
        _text(item, "measured_at", where),
        None if stack is None else dict(stack),
    )


def read_state(path: Path) -> State:
    data = read_document(path, MAX_STATE_BYTES, "bisect state file")
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
        raise BadInput(f"{path}: not a bisect state file (schema is not {SCHEMA})")
    runs = data.get("runs")
    if not isinstance(runs, list):
        raise BadInput(f"{path}: runs must be a list")
    parsed = tuple(_run(r, f"{path} run {i + 1}") for i, r in enumerate(runs))
    seen = set()
    for r in parsed:
        if (r.build, r.attempt) in seen:
            raise BadInput(f"{path}: run {r.attempt} of {r.build} is recorded twice")
        seen.add((r.build, r.attempt))
    state = State(
        _text(data, "package", str(path)),
        _text(data, "good", str(path)),
        _points(data, str(path)),
        _texts(data, "variants", str(path)),
        parsed,
    )
    # The fusion a file names (RMSNorm backward's, from before the catalog, name none) is
    # its points' own: written for the reader, checked here.
    named = _text(data, "fusion", str(path)) if "fusion" in data else DEFAULT_FUSION
    if named != state.fusion:
        raise BadInput(f"{path}: the file names the fusion {named!r}, its points {state.fusion}")
    return state


def _points(data: Mapping[str, Any], where: str) -> tuple[str, ...]:
    """The points, each a point key of one fusion (bot/bisect/points.py)."""
    points = _texts(data, "points", where)
    bad = [p for p in points if canonical(p) != p]
    if bad:
        raise BadInput(f"{where}: {bad[0][:60]!r} is not a point")
    try:
        one_fusion(points)
    except PointsError as exc:
        raise BadInput(f"{where}: {exc}") from None
    return points

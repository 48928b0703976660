"""The builds a bisect walks, in order: known-good first, known-bad last (pure).

A build is a package-under-test spec exactly as ``benchmarks.under_test`` parses it (a wheel
file, ``NAME==VERSION``, ``git+URL@<40-hex>``), so what the bisect measures is what a PR job
would install. A build is known by its spec as a comment may show it (``Spec.shown()``: a
wheel by its file name), which is also how the state file names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from itertools import pairwise

from benchmarks.under_test.keys import nightly_date
from benchmarks.under_test.spec import Spec, SpecError, parse_spec

#: More builds than this is not a bisect over nightlies (Thunder has about 100 in two years).
MAX_BUILDS = 2_000


class TimelineError(ValueError):
    """The builds given cannot be bisected (a bad spec, a build twice, good after bad)."""


@dataclass(frozen=True)
class Build:
    spec: Spec
    #: When the build was made where its version does not say (a release: its key's date,
    #: the day its wheel was built; benchmarks/under_test/keys.py ``build_date``).
    built: date | None = None

    @property
    def name(self) -> str:
        """How the bisect, its state file and its comment name this build."""
        return self.spec.shown()

    @property
    def day(self) -> date | None:
        """The nightly's build date (``devYYYYMMDD`` in its version), else ``built``; None for
        a release or a git commit whose date nobody gave."""
        return self.named_day or self.built

    @property
    def named_day(self) -> date | None:
        """The day a nightly's version names (``devYYYYMMDD``)."""
        return None if self.spec.version is None else nightly_date(self.spec.version)


@dataclass(frozen=True)
class Timeline:
    package: str
    builds: tuple[Build, ...]  # known-good first, known-bad last

    @property
    def good(self) -> Build:
        return self.builds[0]

    @property
    def bad(self) -> Build:
        return self.builds[-1]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.builds)

    def build(self, name: str) -> Build:
        return next(b for b in self.builds if b.name == name)


def read_builds(text: str) -> list[str]:
    """One spec a line, in order; blank lines and lines starting with ``#`` are skipped (a
    ``#`` later in a line is the spec's own: ``git+URL@SHA#subdirectory=python``)."""
    stripped = (line.strip() for line in text.splitlines())
    return [line for line in stripped if line and not line.startswith("#")]


def make_timeline(package: str, good: str, bad: str, candidates: Sequence[str]) -> Timeline:
    """The timeline ``good, *candidates, bad``. A list that starts with the good build or ends
    with the bad one (what an index listing of a closed range gives) is taken as meant."""
    try:
        specs = [parse_spec(t, package) for t in (good, *candidates, bad)]
    except SpecError as exc:
        raise TimelineError(str(exc)) from None
    builds = [Build(s) for s in specs]
    if len(builds) > 2 and builds[1].name == builds[0].name:
        builds.pop(1)
    if len(builds) > 2 and builds[-2].name == builds[-1].name:
        builds.pop(-2)
    if len(builds) > MAX_BUILDS:
        raise TimelineError(f"{len(builds)} builds: at most {MAX_BUILDS} can be bisected")
    seen: dict[str, int] = {}
    for i, b in enumerate(builds):
        if b.name in seen:
            raise TimelineError(
                f"build {b.name!r} is listed twice (positions {seen[b.name]} and {i}): "
                "a timeline names each build once"
            )
        seen[b.name] = i
    dated = [(b.day, b.name) for b in builds if b.day is not None]
    for (d1, n1), (d2, n2) in pairwise(dated):
        if d2 < d1:
            raise TimelineError(
                f"{n2!r} ({d2}) comes after {n1!r} ({d1}): list the builds oldest first"
            )
    return Timeline(package, tuple(builds))

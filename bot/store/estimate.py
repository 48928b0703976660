"""How big the store gets: one real run's files, scaled to a size set, over a simulated year.

The figures docs/STORE.md quotes come from here (``python -m bot store estimate``), measured on
committed runs in data/, never typed in: bytes a (dtype, shape) point of the asv file and of
the provenance record (whole, and stripped of per-call samples), times the size set's points;
then :func:`simulate` adds one such run a night and thins by the policy every night, as the
nightly workflow does. zlib's size of the same files (git stores objects zlib-compressed, before
its delta compression) is given beside the raw one.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bot.results.folders import commit_files
from bot.results.locate import load_run
from bot.results.types import BadInput
from bot.store.files import stripped_text
from bot.store.policy import MB, Action, Policy, Row, plan

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


@dataclass(frozen=True)
class Sizes:
    """Bytes of one run's files (raw, or zlib-compressed); the runner checks are a few lines a
    measuring process, not a point, so scaling to more points leaves them as they are."""

    asv: int
    provenance: int
    stripped_provenance: int
    hygiene: int = 0

    @property
    def whole(self) -> int:
        return self.asv + self.provenance + self.hygiene

    @property
    def stripped(self) -> int:
        return self.asv + self.stripped_provenance + self.hygiene

    def scaled(self, factor: float) -> Sizes:
        asv, prov, stripped = (
            round(v * factor) for v in (self.asv, self.provenance, self.stripped_provenance)
        )
        return Sizes(asv, prov, stripped, self.hygiene)


@dataclass(frozen=True)
class Sample:
    machine: str
    commit: str
    points: int
    raw: Sizes
    packed: Sizes


def _packed(data: bytes) -> int:
    return len(zlib.compress(data))


def measure(results: Path, commit: str, machine: str | None = None) -> Sample:
    """The sizes of one stored-shape run (an asv file and its provenance record)."""
    found = commit_files(results, commit)
    if machine is not None:
        found = {m: f for m, f in found.items() if m == machine}
    if len(found) != 1:
        raise BadInput(f"{results}: want one machine with commit {commit}, found {sorted(found)}")
    ((mach, (full, path)),) = found.items()
    prov = path.parent / f"{full}.provenance.jsonl"
    if not prov.is_file():
        raise BadInput(f"{prov}: missing: the estimate needs the provenance record")
    asv_bytes, prov_bytes = path.read_bytes(), prov.read_bytes()
    stripped = stripped_text(prov).encode()
    hygiene = path.parent / f"{full}.hygiene.jsonl"
    checks = hygiene.read_bytes() if hygiene.is_file() else b""

    points = {f"{k.dtype}/{k.shape}" for k in load_run(path, mach, full, 1).points}
    return Sample(
        mach,
        full,
        len(points),
        Sizes(len(asv_bytes), len(prov_bytes), len(stripped), len(checks)),
        Sizes(_packed(asv_bytes), _packed(prov_bytes), _packed(stripped), _packed(checks)),
    )


def size_set_points(size_sets: Path, name: str) -> int:
    """dtype x shape points of a named set of benchmarks/size_sets.toml."""
    try:
        doc = tomllib.loads(size_sets.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BadInput(f"{size_sets}: cannot read the size sets: {exc}") from None
    sets = doc.get("sets", {})
    if name not in sets:
        raise BadInput(f"{size_sets}: no size set {name!r} (there: {', '.join(sorted(sets))})")
    entry = sets[name]
    dtypes = entry.get("dtypes", doc.get("dtypes", []))
    shapes = len(entry["shapes"]) if "shapes" in entry else len(entry["m"]) * len(entry["n"])
    return len(dtypes) * shapes


@dataclass(frozen=True)
class Simulation:
    days: int
    kept_whole: int
    kept_stripped: int
    retired: int
    size: int
    peak: int


def simulate(
    night: Sizes,
    days: int,
    policy: Policy,
    pins: frozenset[str] = frozenset(),
    start: datetime = datetime(2026, 1, 1, tzinfo=timezone.utc),
) -> Simulation:
    """One run a night for `days` nights, thinned after every night as the workflow does."""
    rows: list[Row] = []
    retired: list[Row] = []
    peak = 0
    for day in range(days):
        rows.append(
            Row("sim", f"{day:040x}", start + timedelta(days=day), night.whole, night.stripped)
        )
        thinning = plan(rows, rows[-1].date, policy, pins, retired)
        kept = []
        for r in rows:
            action = thinning.actions[r.key]
            if action is Action.RETIRE:
                retired.append(r)
            elif action is Action.STRIP:
                kept.append(
                    Row(r.machine, r.commit, r.date, r.stripped_size, r.stripped_size, True)
                )
            else:
                kept.append(r)
        rows = kept
        peak = max(peak, sum(r.size for r in rows))
    whole = sum(1 for r in rows if not r.stripped)
    total = sum(r.size for r in rows)
    return Simulation(days, whole, len(rows) - whole, len(retired), total, peak)


def report(sample: Sample, size_set: str, points: int, days: int, policy: Policy) -> list[str]:
    factor = points / sample.points
    raw, packed = sample.raw.scaled(factor), sample.packed.scaled(factor)
    sim = simulate(raw, days, policy)
    zipped = sim.kept_whole * packed.whole + sim.kept_stripped * packed.stripped
    return [
        f"sample: {sample.machine} {sample.commit[:12]}, {sample.points} points: asv "
        f"{sample.raw.asv:,} B, provenance {sample.raw.provenance:,} B "
        f"({sample.raw.stripped_provenance:,} B without per-call samples), runner checks "
        f"{sample.raw.hygiene:,} B",
        f"one '{size_set}' run ({points} points, x{factor:g}): asv {raw.asv / MB:.2f} MB + "
        f"provenance {raw.provenance / MB:.2f} MB = {raw.whole / MB:.2f} MB whole, "
        f"{raw.stripped / MB:.2f} MB stripped",
        *(f"policy: {line}" for line in policy.lines()),
        f"after {days} nightly runs: {sim.kept_whole + sim.kept_stripped} kept "
        f"({sim.kept_whole} whole, {sim.kept_stripped} stripped), {sim.retired} retired; "
        f"store {sim.size / MB:.1f} MB (peak {sim.peak / MB:.1f} MB); zlib-compressed "
        f"{zipped / MB:.1f} MB",
    ]

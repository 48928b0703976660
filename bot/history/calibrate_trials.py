"""The calibration's trials (pure): histories drawn from recorded runs, and what ``history``
reports on each (bot/history/calibrate.py plans them and names the records)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import replace
from itertools import permutations

import numpy as np

from bot.config import VerdictSettings
from bot.decide.noise_model import NoiseModel, fit
from bot.history.calibrate_types import AA_SIZE, HISTORIES, STEP_AT, Pool, Quiet, Rate, Step
from bot.history.method import Method
from bot.history.render import evidence
from bot.history.series import Commit, History
from bot.history.table import build
from bot.history.watch import Watch, analyse
from bot.results.types import REFERENCE, CommitResults

Trial = tuple[History, NoiseModel]


def commits_of(runs: Sequence[CommitResults]) -> tuple[Commit, ...]:
    """One commit a run, in the given order (the runs' own dates are not the order here)."""
    return tuple(Commit(r.commit, i, (r,)) for i, r in enumerate(runs))


def fitted(runs: Sequence[CommitResults], s: VerdictSettings) -> NoiseModel:
    """The model ``noise`` fits: the gating variants and nvFuser."""
    return fit(list(runs), keep=lambda v: s.is_gating(v) or v == REFERENCE)


def rng_for(s: VerdictSettings, scenario: str) -> np.random.Generator:
    """Each scenario its own seeded draws, so that adding one changes no other's figures."""
    return np.random.default_rng([s.seed, zlib.crc32(scenario.encode())])


def _order(rng: np.random.Generator, n: int) -> list[int]:
    return [int(i) for i in rng.permutation(n)]


def _history(runs: Sequence[CommitResults]) -> History:
    return History(runs[0].machine, commits_of(runs))


def flagged_series(w: Watch) -> int:
    """Series (points and geometric means) that are evidence of a confirmed change."""
    out: set[tuple[str, str]] = set()
    for c in w.scan.changes:
        g = c.verdict.guard(c.guard)
        assert g is not None
        out |= {
            (c.guard, p.key.label) for p in g.points if p.state == c.direction and p.corroborated
        }
        out |= {(c.guard, a.variant) for a in g.aggregates if a.state == c.direction}
    return len(out)


def series_count(h: History, s: VerdictSettings) -> int:
    """The timing guards' series: every point of the three families and every geometric mean."""
    return sum(len(t.keys) + len(t.aggregates) for t in build(h, s, None).families.values())


def quiet(name: str, words: str, trials: Sequence[Trial], s: VerdictSettings, m: Method) -> Quiet:
    """What was reported over histories where nothing changed."""
    confirmed = pending = flagged = 0
    for h, model in trials:
        w = analyse(h, s, model, m, follow=False)
        confirmed += bool(w.scan.changes or any(b.confirmed for b in w.breaks))
        pending += bool(w.scan.pending)
        flagged += flagged_series(w)
    n = len(trials)
    per = series_count(trials[0][0], s) if trials else 0
    commits = len(trials[0][0].commits) if trials else 0
    return Quiet(name, words, commits, Rate(confirmed, n), Rate(pending, n), Rate(flagged, n * per))


def aa_out_of_sample(pool: Pool, s: VerdictSettings) -> list[Trial]:
    """AA_SIZE stock runs in a random order, the model fitted on the others."""
    rng, stock = rng_for(s, "a/a out of sample"), pool.stock
    out = []
    for _ in range(HISTORIES):
        picked = _order(rng, len(stock))
        runs = [stock[i] for i in picked[:AA_SIZE]]
        out.append((_history(runs), fitted([stock[i] for i in picked[AA_SIZE:]], s)))
    return out


def aa_recorded(pool: Pool, s: VerdictSettings) -> list[Trial]:
    """Every stock run in its recorded (date) order, the model fitted on them all."""
    ordered = sorted(pool.stock, key=lambda r: (r.date or 0, r.commit))
    return [(_history(ordered), fitted(pool.stock, s))]


def aa_in_sample(pool: Pool, s: VerdictSettings) -> list[Trial]:
    """Every stock run in a random order, the model fitted on them all."""
    rng, stock, every = rng_for(s, "a/a in sample"), pool.stock, fitted(pool.stock, s)
    return [
        (_history([stock[i] for i in _order(rng, len(stock))]), every) for _ in range(HISTORIES)
    ]


def nightly_orders(pool: Pool, shipped: NoiseModel) -> list[Trial]:
    """Every ordering of the nightlies, with the shipped model."""
    return [(_history(list(o)), shipped) for o in permutations(pool.nightlies)]


def one_off(pool: Pool, s: VerdictSettings, m: Method) -> list[Trial]:
    """The unfused backward at one commit, between stock ones, at a random place."""
    rng, stock = rng_for(s, "one-off"), pool.stock
    out = []
    for _ in range(HISTORIES):
        picked = _order(rng, len(stock))
        inside = [stock[i] for i in picked[:AA_SIZE]]
        at = int(rng.integers(m.min_before, AA_SIZE - m.min_after + 1))
        runs = [*inside[:at], pool.unfused[0], *inside[at:]]
        out.append((_history(runs), fitted([stock[i] for i in picked[AA_SIZE:]], s)))
    return out


def _found(w: Watch, guard: str, split: int, confirmed: bool) -> list[float] | None:
    """The headline size(s) when ``guard`` changed at ``split`` (a break: no size), else None."""
    if guard == "broken":
        hit = any(b.split == split and b.confirmed == confirmed for b in w.breaks)
        return [] if hit else None
    changes = w.scan.changes if confirmed else w.scan.pending
    right = [
        c for c in changes if (c.guard, c.direction, c.span.split) == (guard, "regressed", split)
    ]
    if not right:
        return None
    g = right[0].verdict.guard(right[0].guard)
    ev = evidence(g, "regressed") if g else None
    return [ev[1].estimate] if ev else []


def step(name: str, guard: str, pool: Pool, s: VerdictSettings, m: Method) -> Step:
    """``k`` stock runs then ``min_after`` runs of the state, for each k of STEP_AT."""
    rng, stock, slow = rng_for(s, f"{name} {guard}"), pool.stock, pool.states[name]
    found = elsewhere = pending = trials = 0
    sizes: list[float] = []
    for k in STEP_AT:
        for _ in range(HISTORIES // len(STEP_AT)):
            picked = _order(rng, len(stock))
            model = fitted([stock[i] for i in picked[k:]], s)
            after = [slow[i] for i in _order(rng, len(slow))][: m.min_after]
            h = _history([*(stock[i] for i in picked[:k]), *after])
            w = analyse(h, s, model, m, follow=False)
            trials += 1
            got = _found(w, guard, k - 1, True)
            if got is not None:
                found += 1
                sizes += got
            elsewhere += any(c.span.split != k - 1 for c in w.scan.changes) or any(
                b.confirmed and b.split != k - 1 for b in w.breaks
            )
            first = analyse(replace(h, commits=h.commits[: k + 1]), s, model, m, follow=False)
            pending += _found(first, guard, k - 1, False) is not None
    return Step(
        name,
        guard,
        len(slow),
        Rate(found, trials),
        Rate(elsewhere, trials),
        Rate(pending, trials),
        (min(sizes), max(sizes)) if sizes else (float("nan"), float("nan")),
    )

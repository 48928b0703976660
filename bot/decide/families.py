"""One family of series decided together (pure): every point's comparison, its Holm-adjusted
p-values, its state, and the variant's geometric means; bot/decide/verdict.py assembles the
families into guards.

A side of a point is the runs of one commit that have data for it (replicates); a side with no
such run says why: "failed" (the suite recorded an error: compile, executor, correctness,
crash), "skipped" (not measured by choice) or "missing" (not in the results at all).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.config import VerdictSettings
from bot.decide.noise_model import Kind, NoiseModel, samples_of
from bot.decide.others import PriorSums, SideSums
from bot.decide.rules import aggregate_state, is_corroborated, point_state
from bot.decide.stats import Between, Comparison, RunStat, aggregate, compare, holm, run_stat
from bot.decide.types import PointVerdict, State, VariantSummary
from bot.results.types import CommitResults, PointKey

Runs = Sequence[CommitResults]


@dataclass(frozen=True)
class _Side:
    per_run: tuple[RunStat | None, ...]  # in the runs' order (repeat k), None: no data
    status: str  # "ok", "failed", "skipped", "missing"
    error: str | None = None
    failed_runs: int = 0  # runs of this side in which the point failed (a flaky failure)

    @functools.cached_property
    def stats(self) -> tuple[RunStat, ...]:
        """The runs with data."""
        return tuple(s for s in self.per_run if s is not None)

    @property
    def runs(self) -> int:
        return len(self.per_run)


def _side(kind: Kind, runs: Runs, key: PointKey) -> _Side:
    statuses, error = [], None
    per_run: list[RunStat | None] = []
    for r in runs:
        samples = samples_of(kind, r, key)
        per_run.append(run_stat(samples) if samples else None)
        if samples:
            continue
        point = r.points.get(key)
        statuses.append("missing" if point is None else (point.no_data or "failed"))
        if statuses[-1] == "failed" and error is None and r.provenance:
            error = r.provenance.point_error(key)
    failed = statuses.count("failed")
    if any(s is not None for s in per_run):
        status = "ok"
    else:
        status = "failed" if failed else (statuses[0] if statuses else "missing")
    return _Side(tuple(per_run), status, error, failed)


def _compare(b: _Side, h: _Side, model: Between) -> Comparison:
    """Paired by repeat when both sides have the same repeats (the job alternated them) and
    at least two repeats have data on both; otherwise each side's runs as a group."""
    pairs = [(x, y) for x, y in zip(b.per_run, h.per_run, strict=False) if x and y]
    if len(b.per_run) == len(h.per_run) and len(pairs) >= 2:
        return compare([x for x, _ in pairs], [y for _, y in pairs], model, paired=True)
    return compare(b.stats, h.stats, model)


def _flaky(b: _Side, h: _Side) -> str | None:
    """Said on a row decided on the runs that worked, when a side's other runs failed."""
    parts = [
        f"failed in {side.failed_runs} of {side.runs} runs at {name}"
        + (f" ({side.error})" if side.error else "")
        for name, side in (("base", b), ("head", h))
        if side.failed_runs
    ]
    return "; ".join(parts) or None


def _model_between(model: NoiseModel | None, kind: Kind, key: PointKey) -> Between:
    return model.between(kind, key) if model else Between()


@dataclass(frozen=True)
class Family:
    """One family of series (one kind, some variants) compared and Holm-adjusted together."""

    rows: tuple[PointVerdict, ...]
    aggregates: tuple[VariantSummary, ...]


def decide_family(
    kind: Kind,
    keys: Sequence[PointKey],
    base: Runs,
    head: Runs,
    s: VerdictSettings,
    model: NoiseModel | None,
    gating: bool,
) -> Family:
    sides = {k: (_side(kind, base, k), _side(kind, head, k)) for k in keys}
    cmps: dict[PointKey, Comparison] = {}
    for k, (b, h) in sides.items():
        if b.status == "ok" and h.status == "ok":
            cmps[k] = _compare(b, h, _model_between(model, kind, k))
    ordered = list(cmps)
    up, down = holm([cmps[k].p_up for k in ordered]), holm([cmps[k].p_down for k in ordered])
    adj = {k: (u, d) for k, u, d in zip(ordered, up, down, strict=True)}
    aggregates, others = _aggregates(kind, ordered, sides, base, head, s, model)
    rows = []
    for k in keys:
        b, h = sides[k]
        t = s.threshold_for(k.label) if kind == "ratio" else s.kernel_threshold_for(k.label)
        if k not in cmps:
            rows.append(_no_data_row(k, kind, gating, t, b, h))
            continue
        c, (pu, pd) = cmps[k], adj[k]
        state = point_state(c, pu, pd, t, s.alpha)
        if h.failed_runs and not b.failed_runs:
            state = "broken"  # ran in every base run, failed in one of head's: a real failure
        settle = c.runs_to_settle(t, s.alpha / len(ordered)) if state == "unsure" else None
        rows.append(
            PointVerdict(
                k,
                gating,
                t,
                state,
                c,
                pu,
                pd,
                is_corroborated(state, c, t, functools.partial(others, k), alone=kind == "ratio"),
                kind=kind,
                settle=settle,
                error=_flaky(b, h),
            )
        )
    return Family(tuple(rows), aggregates)


def _no_data_row(
    k: PointKey, kind: Kind, gating: bool, t: float, b: _Side, h: _Side
) -> PointVerdict:
    state: State = "no data"
    if b.status == "ok" and h.status == "failed":
        state = "broken"
    elif b.status == "failed" and h.status == "failed":
        state = "still failing"
    where = "head" if b.status == "ok" else "base"
    why = (h if where == "head" else b).status
    reason = f"{'not measured' if why in ('missing', 'skipped') else why} at {where}"
    err = h.error if where == "head" else b.error
    if state == "no data" and err:
        reason += f" ({err})"
    return PointVerdict(k, gating, t, state, no_data=reason, kind=kind, error=h.error)


def _aggregates(
    kind: Kind,
    keys: Sequence[PointKey],
    sides: dict[PointKey, tuple[_Side, _Side]],
    base: Runs,
    head: Runs,
    s: VerdictSettings,
    model: NoiseModel | None,
) -> tuple[tuple[VariantSummary, ...], Callable[[PointKey], Comparison | None]]:
    """Per variant, the geometric mean over its points (where every run has data), and per
    point, on demand, the geometric mean of its variant's OTHER points (for corroboration:
    bot/decide/others.py)."""
    summaries, cmps = [], []
    loo: dict[PointKey, tuple[int, SideSums, SideSums, PriorSums]] = {}
    complete: dict[str, list[PointKey]] = {}  # per variant, its points with every run's data
    for k in keys:
        if len(sides[k][0].stats) == len(base) and len(sides[k][1].stats) == len(head):
            complete.setdefault(k.variant, []).append(k)
    for variant in sorted({k.variant for k in keys}):
        members = complete.get(variant, [])
        if not members:
            continue
        b = aggregate([sides[k][0].stats for k in members])
        h = aggregate([sides[k][1].stats for k in members])
        prior = model.between_aggregate(kind, variant, members) if model else Between()
        cmps.append((variant, len(members), compare(b, h, prior, paired=len(b) == len(h) > 1)))
        if len(members) > 1:
            sums = (
                SideSums([sides[k][0].stats for k in members]),
                SideSums([sides[k][1].stats for k in members]),
                PriorSums(model, kind, variant, members),
            )
            loo.update({k: (i, *sums) for i, k in enumerate(members)})
    up = holm([c.p_up for _, _, c in cmps])
    down = holm([c.p_down for _, _, c in cmps])
    for (variant, n, c), pu, pd in zip(cmps, up, down, strict=True):
        effect = s.effect if kind == "ratio" else s.kernel_effect
        state = aggregate_state(c, n, pu, pd, s.broad_effect, effect, s.alpha)
        summaries.append(VariantSummary(variant, n, c.change, kind, c, pu, state))

    def others(k: PointKey) -> Comparison | None:
        if k not in loo:
            return None
        i, b_sums, h_sums, priors = loo[k]
        b, h = b_sums.without(i), h_sums.without(i)
        return compare(b, h, priors.without(i), paired=len(b) == len(h) > 1)

    return tuple(summaries), others

"""From base and head results to a verdict (pure).

Rules, and why (defaults in bot/config.py and perfbot.toml):

* Point regressed: the ratio change is at least ``1 + effect`` (default effect 2%), AND it is
  significant: the one-sided Mann-Whitney p, Holm-adjusted across the gating points, is below
  ``alpha`` (default 0.01, family-wise), AND the 95% CI of the change is above 1 (see
  bot/decide/stats.py for why both). Improved: the mirror image (``1 / (1 + effect)``, the
  other tail).
  The effect is per point by fnmatch pattern on ``variant/dtype/shape`` (first match wins).
* Why 2%: the target is to catch a 3% change with >= 95% power. A threshold at 3% would catch
  a true 3% change only half the time (the estimate falls below it as often as above); with
  the ~0.3% standard error of a 25-round change (docs: bootstrap CI of about +/-0.5% per side),
  2% leaves room for three standard errors. Below ~1-2%, run-to-run drift that the rounds of
  one run cannot see (a different clock state, another process) would decide instead of code.
  bot/decide/calibrate.py measures both on real data.
* Gating: only variants matching ``gating_variants`` (default ``thunder-*``) decide the verdict;
  eager and torch.compile are shown for context and tested as their own Holm family.
* One noisy point must not decide alone: the overall verdict is "regressed" when a gating
  variant's geometric-mean change over at least 3 of its points is at least ``1 + effect`` with
  its CI above 1 (a broad regression), or when a point regressed AND is corroborated: its own CI
  lies entirely above ``1 + effect``, or the geometric mean of the variant's OTHER points is
  significantly above 1 (CI above 1). Other variants at the same size do not corroborate: they
  share its nvFuser rounds. "improved" mirrors this and only applies when nothing regressed.
  No gating point with data on both sides: "inconclusive (no data)".
* Which side moved (explanation only): a side's kernel time, base to head, moved when its CI
  excludes 1 and it changed by at least half the ratio's change and half the threshold (half:
  a ratio change can be split between the two sides; absolute times also drift together
  between runs, which the ratio cancels, so smaller moves are not attributed).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.config import VerdictSettings
from bot.decide.rules import is_corroborated, overall_verdict, point_state, side_moved
from bot.decide.stats import Comparison, compare, geometric_mean, holm, point_seed
from bot.decide.types import PointVerdict, State, VariantSummary, Verdict
from bot.results.types import REFERENCE, CommitResults, PointKey, compared_keys


def _no_data_reason(key: PointKey, base: CommitResults, head: CommitResults) -> str | None:
    for side, res in (("base", base), ("head", head)):
        point = res.points.get(key)
        if point is None:
            return f"not measured at {side}"
        if point.ratio is None:
            why = res.provenance.point_error(key) if res.provenance else None
            return f"{point.no_data or 'no data'} at {side}" + (f" ({why})" if why else "")
    return None


def _kernel(
    key: PointKey, base: CommitResults, head: CommitResults, s: VerdictSettings
) -> Comparison | None:
    b, h = base.points.get(key), head.points.get(key)
    if b is None or h is None or b.kernel_s is None or h.kernel_s is None:
        return None
    seed = point_seed(s.seed, "kernel:" + key.label)
    return compare(b.kernel_s, h.kernel_s, resamples=s.resamples, seed=seed)


def _states(
    keys: Sequence[PointKey], cmps: dict[PointKey, Comparison], s: VerdictSettings
) -> dict[PointKey, tuple[State, float, float]]:
    """Holm-adjust one family and apply the point rule."""
    up = holm([cmps[k].p_up for k in keys])
    down = holm([cmps[k].p_down for k in keys])
    return {
        k: (point_state(cmps[k].change, pu, pd, s.threshold_for(k.label), s.alpha), pu, pd)
        for k, pu, pd in zip(keys, up, down, strict=True)
    }


def decide(
    base: CommitResults, head: CommitResults, s: VerdictSettings, *, explain: bool = True
) -> Verdict:
    """The verdict for head against base. ``explain=False`` skips the which-side analysis."""
    keys = compared_keys(base, head)
    no_data = {k: _no_data_reason(k, base, head) for k in keys}
    cmps: dict[PointKey, Comparison] = {}
    for k in keys:
        if no_data[k] is None:
            b, h = base.points[k].ratio, head.points[k].ratio
            assert b is not None and h is not None
            cmps[k] = compare(b, h, resamples=s.resamples, seed=point_seed(s.seed, k.label))
    states: dict[PointKey, tuple[State, float, float]] = {}
    for gating in (True, False):
        family = [k for k in cmps if s.is_gating(k.variant) == gating]
        states.update(_states(family, cmps, s))
    summaries = _summaries(cmps, s)
    nv_cache: dict[tuple[str, str], Comparison | None] = {}
    points = []
    for k in keys:
        gating, t = s.is_gating(k.variant), s.threshold_for(k.label)
        bw = tuple(p.bandwidth_pct if (p := r.points.get(k)) else None for r in (base, head))
        if k not in cmps:
            points.append(PointVerdict(k, gating, t, "no data", no_data=no_data[k]))
            continue
        state, pu, pd = states[k]
        contender = nvfuser = None
        if explain:
            contender = _kernel(k, base, head, s)
            ref = (k.dtype, k.shape)
            if ref not in nv_cache:
                nv_cache[ref] = _kernel(PointKey(REFERENCE, *ref), base, head, s)
            nvfuser = nv_cache[ref]
        points.append(
            PointVerdict(
                k,
                gating,
                t,
                state,
                cmps[k],
                pu,
                pd,
                is_corroborated(k, state, cmps, t),
                side_moved(contender, nvfuser, cmps[k], t) if explain else "unknown",
                contender,
                nvfuser,
                (bw[0], bw[1]),
            )
        )
    gating_points = [p for p in points if p.gating and p.ratio is not None]
    worst = max(
        gating_points, key=lambda p: p.ratio.change.estimate if p.ratio else 0.0, default=None
    )
    overall, reason = overall_verdict(gating_points, summaries, s.effect)
    notes = _notes(base, head, points)
    return Verdict(
        overall,
        reason,
        head.machine,
        base.commit,
        head.commit,
        tuple(points),
        summaries,
        worst,
        s,
        notes,
    )


def _summaries(cmps: dict[PointKey, Comparison], s: VerdictSettings) -> tuple[VariantSummary, ...]:
    variants = sorted({k.variant for k in cmps if s.is_gating(k.variant)})
    out = []
    for v in variants:
        group = [cmps[k] for k in cmps if k.variant == v]
        out.append(VariantSummary(v, len(group), geometric_mean(group)))
    return tuple(out)


def _notes(
    base: CommitResults, head: CommitResults, points: Sequence[PointVerdict]
) -> tuple[str, ...]:
    notes = []
    missing = [p for p in points if p.state == "no data"]
    if missing:
        notes.append(f"{len(missing)} point(s) without data at base or head")
    if base.provenance and head.provenance:
        for keys, what in (
            (("gpu", "name"), "GPU"),
            (("gpu", "driver"), "driver"),
            (("gpu", "cuda"), "CUDA"),
            (("size_set",), "size set"),
        ):
            b, h = base.provenance.text(*keys), head.provenance.text(*keys)
            if b != h:
                notes.append(f"base and head differ in {what}: {b} vs {h}")
    return tuple(notes)

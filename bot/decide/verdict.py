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

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.config import VerdictSettings
from bot.decide.stats import Comparison, Interval, compare, geometric_mean, holm, point_seed
from bot.results.types import REFERENCE, CommitResults, PointKey, compared_keys

#: A variant-wide geometric mean decides on its own only over this many points: with fewer, it is
#: one or two points again and must pass the point rule instead.
MIN_BROAD_POINTS = 3
Overall = Literal["regressed", "improved", "no change", "inconclusive (no data)"]
State = Literal["regressed", "improved", "no change", "no data"]
Moved = Literal["thunder", "nvfuser", "both", "neither", "unknown"]


@dataclass(frozen=True)
class PointVerdict:
    key: PointKey
    gating: bool
    threshold: float
    state: State
    ratio: Comparison | None = None
    p_up_adj: float | None = None
    p_down_adj: float | None = None
    corroborated: bool = False
    moved: Moved = "unknown"
    contender_kernel: Comparison | None = None
    nvfuser_kernel: Comparison | None = None
    bandwidth_pct: tuple[float | None, float | None] = (None, None)  # base, head
    no_data: str | None = None


@dataclass(frozen=True)
class VariantSummary:
    variant: str
    points: int
    geomean: Interval


@dataclass(frozen=True)
class Verdict:
    overall: Overall
    reason: str
    machine: str
    base: str
    head: str
    points: tuple[PointVerdict, ...]
    summaries: tuple[VariantSummary, ...]
    worst: PointVerdict | None
    settings: VerdictSettings
    notes: tuple[str, ...] = ()

    @property
    def regressed(self) -> bool:
        return self.overall == "regressed"


def _no_data_reason(key: PointKey, base: CommitResults, head: CommitResults) -> str | None:
    for side, res in (("base", base), ("head", head)):
        point = res.points.get(key)
        if point is None:
            return f"not measured at {side}"
        if point.ratio is None:
            why = res.provenance.point_error(key) if res.provenance else None
            return f"{point.no_data or 'no data'} at {side}" + (f" ({why})" if why else "")
    return None


def _moved(
    contender: Comparison | None, nvfuser: Comparison | None, ratio: Comparison, threshold: float
) -> Moved:
    """A side moved when its kernel time changed significantly (CI excluding 1) by at least
    half the ratio's change and at least half the threshold: enough to carry the ratio's move,
    while the common drift of absolute times between runs (clocks) does not count."""
    if contender is None or nvfuser is None:
        return "unknown"
    bar = max(math.log1p(threshold / 2), abs(math.log(ratio.change.estimate)) / 2)

    def moved(c: Comparison) -> bool:
        return abs(math.log(c.change.estimate)) >= bar and c.change.excludes_one() != 0

    table: dict[tuple[bool, bool], Moved] = {
        (True, True): "both",
        (True, False): "thunder",
        (False, True): "nvfuser",
        (False, False): "neither",
    }
    return table[moved(contender), moved(nvfuser)]


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
    out: dict[PointKey, tuple[State, float, float]] = {}
    for k, pu, pd in zip(keys, up, down, strict=True):
        c, t = cmps[k].change, s.threshold_for(k.label)
        state: State = "no change"
        if c.estimate >= 1 + t and pu < s.alpha and c.excludes_one() > 0:
            state = "regressed"
        elif c.estimate <= 1 / (1 + t) and pd < s.alpha and c.excludes_one() < 0:
            state = "improved"
        out[k] = (state, pu, pd)
    return out


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
        corroborated = _corroborated(k, state, cmps, t)
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
                corroborated,
                _moved(contender, nvfuser, cmps[k], t) if explain else "unknown",
                contender,
                nvfuser,
                (bw[0], bw[1]),
            )
        )
    return _overall(base, head, s, tuple(points), summaries)


def _corroborated(k: PointKey, state: State, cmps: dict[PointKey, Comparison], t: float) -> bool:
    """A flagged point is not alone: its CI clears the threshold by itself, or the variant's
    OTHER points (other sizes, so independent rounds) moved the same way as a group.

    Other variants at the same size do not count: they share the nvFuser measurement, so one
    noisy nvFuser round set would "corroborate" itself.
    """
    c = cmps[k].change
    if state == "no change" or (c.low >= 1 + t if state == "regressed" else c.high <= 1 / (1 + t)):
        return state != "no change"
    others = [cmps[o] for o in cmps if o.variant == k.variant and o != k]
    if not others:
        return False
    group = geometric_mean(others)
    return group.low > 1 if state == "regressed" else group.high < 1


def _summaries(cmps: dict[PointKey, Comparison], s: VerdictSettings) -> tuple[VariantSummary, ...]:
    variants = sorted({k.variant for k in cmps if s.is_gating(k.variant)})
    out = []
    for v in variants:
        group = [cmps[k] for k in cmps if k.variant == v]
        out.append(VariantSummary(v, len(group), geometric_mean(group)))
    return tuple(out)


def _overall(
    base: CommitResults,
    head: CommitResults,
    s: VerdictSettings,
    points: tuple[PointVerdict, ...],
    summaries: tuple[VariantSummary, ...],
) -> Verdict:
    gating = [p for p in points if p.gating and p.ratio is not None]
    worst = max(gating, key=lambda p: p.ratio.change.estimate if p.ratio else 0.0, default=None)
    broad = [v for v in summaries if v.points >= MIN_BROAD_POINTS]
    broad_up = [v for v in broad if v.geomean.estimate >= 1 + s.effect and v.geomean.low > 1]
    broad_down = [
        v for v in broad if v.geomean.estimate <= 1 / (1 + s.effect) and v.geomean.high < 1
    ]
    ups = [p for p in gating if p.state == "regressed" and p.corroborated]
    downs = [p for p in gating if p.state == "improved" and p.corroborated]
    lone = [p for p in gating if p.state in ("regressed", "improved") and not p.corroborated]
    overall: Overall
    if not gating:
        overall, reason = "inconclusive (no data)", "no gating point has data at both commits"
    elif ups or broad_up:
        overall, reason = "regressed", _why(ups, broad_up, "slower")
    elif downs or broad_down:
        overall, reason = "improved", _why(downs, broad_down, "faster")
    else:
        overall = "no change"
        reason = f"no gating point moved by its threshold ({len(gating)} points compared)"
        if lone:
            reason += f"; {len(lone)} uncorroborated point(s) set aside as noise"
    notes = _notes(base, head, points)
    return Verdict(
        overall, reason, head.machine, base.commit, head.commit, points, summaries, worst, s, notes
    )


def _why(points: list[PointVerdict], broad: list[VariantSummary], word: str) -> str:
    parts = [f"{len(points)} point(s) significantly {word} relative to nvFuser"] if points else []
    parts += [f"{v.variant} geometric mean {v.geomean.estimate:.3f}x" for v in broad]
    return "; ".join(parts)


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


def _interval_json(iv: Interval) -> dict[str, float]:
    return {"estimate": iv.estimate, "low": iv.low, "high": iv.high}


def _comparison_json(c: Comparison | None) -> dict[str, object] | None:
    if c is None:
        return None
    return {
        "base": _interval_json(c.base),
        "head": _interval_json(c.head),
        "change": _interval_json(c.change),
        "p_up": c.p_up,
        "p_down": c.p_down,
    }


def to_json(v: Verdict) -> dict[str, object]:
    """Everything the comment shows and more, as plain JSON (``report --json``)."""
    s = v.settings
    return {
        "schema": "fusion-perfbot-verdict/1",
        "overall": v.overall,
        "reason": v.reason,
        "machine": v.machine,
        "base": v.base,
        "head": v.head,
        "notes": list(v.notes),
        "settings": {
            "effect": s.effect,
            "thresholds": [{"pattern": t.pattern, "effect": t.effect} for t in s.thresholds],
            "alpha": s.alpha,
            "gating_variants": list(s.gating),
            "min_samples": s.min_samples,
            "resamples": s.resamples,
            "seed": s.seed,
        },
        "summaries": [
            {"variant": x.variant, "points": x.points, "geomean": _interval_json(x.geomean)}
            for x in v.summaries
        ],
        "worst": v.worst.key.label if v.worst else None,
        "points": [
            {
                "variant": p.key.variant,
                "dtype": p.key.dtype,
                "shape": p.key.shape,
                "gating": p.gating,
                "threshold": p.threshold,
                "state": p.state,
                "corroborated": p.corroborated,
                "no_data": p.no_data,
                "ratio": _comparison_json(p.ratio),
                "p_up_holm": p.p_up_adj,
                "p_down_holm": p.p_down_adj,
                "moved": p.moved,
                "contender_kernel_s": _comparison_json(p.contender_kernel),
                "nvfuser_kernel_s": _comparison_json(p.nvfuser_kernel),
                "bandwidth_pct": {"base": p.bandwidth_pct[0], "head": p.bandwidth_pct[1]},
            }
            for p in v.points
        ],
    }

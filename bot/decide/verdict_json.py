"""The verdict as plain JSON (``report --json``): everything the comment shows, and more."""

from __future__ import annotations

from bot.decide.stats import Comparison, Interval
from bot.decide.types import Verdict


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

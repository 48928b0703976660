"""The verdict as plain JSON (``report --json``): everything the comment shows, and more.

Schema 2 (this bot's guards): ``guards`` (broken, nvfuser, thunder, ratio, each with its
state, summary and geometric means), ``kernels`` (kernel-time rows) beside ``points`` (ratio
rows), ``runs`` (processes per side) and ``noise_model``; every comparison carries its
standard error, degrees of freedom and the between-run variance it used. ``levels``: the
thunder/nvFuser ratio's level at base and at head per gating variant, with its 95% interval
and worst point, and whether the posts tell the variants as one (bot/decide/level.py).
"""

from __future__ import annotations

from bot.decide.level import RatioLevel, VariantLevel, level_of
from bot.decide.stats import Comparison, Interval
from bot.decide.types import PointVerdict, VariantSummary, Verdict

SCHEMA = "fusion-perfbot-verdict/2"


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
        "se_log": c.se,
        "df": c.df,
        "between_run_var_log": c.tau2,
        "runs": {"base": c.runs[0], "head": c.runs[1]},
    }


def _row(p: PointVerdict) -> dict[str, object]:
    return {
        "variant": p.key.variant,
        "dtype": p.key.dtype,
        "shape": p.key.shape,
        "series": p.kind,
        "gating": p.gating,
        "threshold": p.threshold,
        "state": p.state,
        "corroborated": p.corroborated,
        "runs_a_side_to_settle": p.settle,
        "no_data": p.no_data,
        "error": p.error,
        "change": _comparison_json(p.cmp),
        "p_up_holm": p.p_up_adj,
        "p_down_holm": p.p_down_adj,
        "moved": p.moved,
        "contender_kernel_s": _comparison_json(p.contender_kernel),
        "nvfuser_kernel_s": _comparison_json(p.nvfuser_kernel),
        "bandwidth_pct": {"base": p.bandwidth_pct[0], "head": p.bandwidth_pct[1]},
    }


def _summary(x: VariantSummary) -> dict[str, object]:
    return {
        "variant": x.variant,
        "series": x.kind,
        "points": x.points,
        "state": x.state,
        "geomean": _interval_json(x.geomean),
        "p_up_holm": x.p_up_adj,
    }


def _level(x: VariantLevel) -> dict[str, object]:
    return {
        "variant": x.variant,
        "points": x.points,
        "base": _interval_json(x.base),
        "head": _interval_json(x.head),
        "worst_at_head": (
            {"point": x.worst.key.label, "ratio": _interval_json(x.worst.head)}
            if x.worst is not None
            else None
        ),
        "between_run_noise": x.between_runs,
    }


def _levels(lv: RatioLevel) -> dict[str, object]:
    return {
        "alike": lv.alike,
        "effect": lv.effect,
        "variants": [_level(x) for x in lv.variants],
        "together": _level(lv.together) if lv.together is not None else None,
    }


def to_json(v: Verdict) -> dict[str, object]:
    """Everything the comment shows and more, as plain JSON (``report --json``)."""
    s = v.settings
    return {
        "schema": SCHEMA,
        "overall": v.overall,
        "reason": v.reason,
        "machine": v.machine,
        "base": v.base,
        "head": v.head,
        "runs": {"base": v.runs[0], "head": v.runs[1]},
        "noise_model": v.model,
        "notes": list(v.notes),
        "settings": {
            "effect": s.effect,
            "kernel_effect": s.kernel_effect,
            "thresholds": [{"pattern": t.pattern, "effect": t.effect} for t in s.thresholds],
            "alpha": s.alpha,
            "gating_variants": list(s.gating),
            "min_samples": s.min_samples,
            "noise_model": str(s.noise_model) if s.noise_model else None,
        },
        "guards": [
            {
                "guard": g.kind,
                "title": g.title,
                "state": g.state,
                "summary": g.summary,
                "geomeans": [_summary(a) for a in g.aggregates],
            }
            for g in v.guards
        ],
        "summaries": [_summary(x) for x in v.summaries],
        "worst": v.worst.key.label if v.worst else None,
        "levels": _levels(level_of(v)),
        "points": [_row(p) for p in v.points],
        "kernels": [_row(p) for p in v.kernels],
    }

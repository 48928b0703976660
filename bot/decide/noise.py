"""The ``noise`` report (pure): per gating series, how far its log median moves between runs of
the same code, against what the within-run noise explains; the model is
bot/decide/noise_model.py, which this prints and the command can write.

Why it is shown and not only stored: the between-run part decides how small a change the bot
can see at each point (docs/CALIBRATION.md), and it is the first thing to read when a point
is flagged on code that did not change.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

from bot.config import VerdictSettings
from bot.decide.noise_model import NoiseModel, label_parts
from bot.decide.stack import describe
from bot.results.types import REFERENCE, CommitResults


def _pct_sd(var: float) -> str:
    return f"{100 * math.sqrt(max(var, 0.0)):7.2f}%"


def report_text(runs: Sequence[CommitResults], model: NoiseModel, s: VerdictSettings) -> str:
    started = [r.started_at for r in runs]
    lines = [
        f"Between-run noise over {len(runs)} runs of the same code on {model.machine} "
        f"({model.calls_per_sample or 'unknown'} call(s) per sample)",
        *textwrap.wrap(
            "runs: "
            + ", ".join(
                f"{r.commit[:8]} ({t or 'no start'})" for r, t in zip(runs, started, strict=True)
            ),
            width=100,
            subsequent_indent="  ",
            break_on_hyphens=False,
        ),
        "",
        "SD of a run's log median: within (what the rounds of one run see), between (raw,",
        f"and shrunk toward the variant's pool with {model.prior_df:g} runs' weight: what the "
        "verdict uses)",
        "",
        f"{'series':<44}{'spread':>8}{'within':>8}{'raw':>8}{'used':>8}{'df':>5}",
    ]

    def shown(label: str) -> bool:
        variant = label_parts(label)[2]
        return s.is_gating(variant) or variant == REFERENCE

    gating = {label: n for label, n in model.series.items() if shown(label)}
    for label, n in sorted(gating.items(), key=lambda kv: (-kv[1].tau2, kv[0])):
        lines.append(
            f"{label:<44}{100 * n.spread:7.2f}%{_pct_sd(n.within)}{_pct_sd(n.raw_tau2)}"
            f"{_pct_sd(n.tau2)}{n.df:5.0f}"
        )
    lines += ["", "Pools (mean raw between-run variance of a variant's points, as an SD):"]
    lines += [f"  {k:<30}{_pct_sd(v)}" for k, v in sorted(model.pool.items()) if shown(k + "/")]
    lines += ["", "Geometric means over a variant's points (their own series: points share a run):"]
    lines += [
        f"  {label:<30}{_pct_sd(a.tau2)}  df {a.df:g}, {len(a.points)} points"
        for label, a in sorted(model.aggregates.items())
        if shown(label)
    ]
    if model.stack is not None:  # what the model records: a run of another stack is told so
        lines += ["", *_wrapped("Stack of these runs: " + describe(model.stack))]
    return "\n".join(lines)


def _wrapped(text: str) -> list[str]:
    return textwrap.wrap(text, width=100, subsequent_indent="  ", break_on_hyphens=False)

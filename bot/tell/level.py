"""The ratio's level in one line (pure): where Thunder stands against the hand-written fusion,
for the first screen of the comment, the alert's issues and ``report`` (issue 30):

    Thunder/nvFuser kernel time: 1.04x at head (1.04x at base); worst 1.12x thunder-prims
    float32 2048x8192

(one line, folded here). The figure is Thunder's kernel time over nvFuser's hand-written
fusion's, the geometric mean over the points (bot/decide/level.py); the worst point is the one
with the largest ratio at head. When the gating variants are not alike (the rule:
bot/decide/level.py ``RatioLevel.alike``) each has its own figure, in the same line:

    Thunder/nvFuser kernel time: thunder-func 8.57x at head (1.03x at base), thunder-prims
    11.9x (1.05x); worst 25.0x thunder-prims float16 16384x8192

One line, not one a variant: the regressed comment's budget (tests/tell/test_budgets.py, 8,000
characters) had about 150 characters left for it, two lines take 200. The head figure carries
its 95% interval as a half-width ("1.05x ±0.3%": the geometric mean of the interval's two
relative distances from the estimate, exact for the symmetric-in-log intervals the level has);
a level whose interval sees within-run noise only (no noise model, one run a side) says so
("±0.1% within-run"), since that one is far too narrow for a level. The bounds themselves are
in the verdict JSON (``levels``).

A figure whose whole 95% interval is below 1.00x means Thunder is the faster one, and the line
says so in words ("0.71x (Thunder faster) at head"): on a head figure, and on a base figure when
its head figure does not say it; a 0.99x whose interval reaches 1 is parity and says nothing.
Where the dtypes are not alike (bot/decide/level.py ``RatioLevel.dtypes``), the figures are a
dtype each ("bfloat16 1.01x ..., float32 1.11x ..."), so a float32 gap is not averaged away.
Every name from the results is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from bot.decide.level import RatioLevel, VariantLevel, WorstPoint, level_of
from bot.decide.stats import Interval
from bot.decide.types import Verdict
from bot.tell.markdown import escape_md

__all__ = ["FASTER", "PREFIX", "level_line", "level_text", "levels_text"]

PREFIX = "Thunder/nvFuser kernel time"
#: A dtype's level is named as people write it: "bf16 1.01x ..., fp32 1.11x ...".
SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
FASTER = "Thunder faster"


def ratio(x: float) -> str:
    """A ratio as a reader compares it: "1.04x", from 10x on "11.4x"."""
    return f"{x:.1f}x" if x >= 9.995 else f"{x:.2f}x"


def _faster(level: Interval) -> bool:
    """Thunder is the faster one: the whole 95% interval below 1, and the figure as printed too
    (0.996 reads "1.00x"); a 0.99x whose interval reaches 1 is parity, not faster."""
    return float(ratio(level.estimate)[:-1]) < 1 and level.low < level.high < 1


def half_width(x: VariantLevel) -> str:
    """The head level's 95% interval as "±0.3%" (see the module docstring)."""
    i = x.head
    if not (0 < i.low <= i.estimate <= i.high) or i.low == i.high:  # none computed
        return ""
    pm = 100 * (math.sqrt(i.high / i.low) - 1)
    return f" ±{pm:.1f}%" + ("" if x.between_runs else " within-run")


def _figures(x: VariantLevel, *, words: bool) -> str:
    """A variant's figures, "1.05x ±0.3% at head (1.04x at base)"; "1.05x ±0.3% (1.04x)" when
    not ``words`` (a later variant of the line: the first one said which is which)."""
    head_faster = _faster(x.head)
    head = ratio(x.head.estimate) + half_width(x) + (f" ({FASTER})" if head_faster else "")
    base = ratio(x.base.estimate) + (" at base" if words else "")
    if _faster(x.base) and not head_faster:
        base += f", {FASTER}"
    return f"{head}{' at head' if words else ''} ({base})"


def _worst(w: WorstPoint | None) -> str:
    if w is None:
        return ""
    where = escape_md(f"{w.key.variant} {w.key.dtype} {w.key.shape}", 80)
    return f"; worst {ratio(w.head.estimate)} {where}"


def level_line(level: RatioLevel | None) -> str:
    """The level in one line of markdown; "" when no variant has one."""
    if level is None or level.together is None:
        return ""
    if len(level.shown) == 1:
        figures = _figures(level.shown[0], words=True)
    else:
        figures = ", ".join(
            f"{escape_md(SHORT.get(x.variant, x.variant), 40)} {_figures(x, words=i == 0)}"
            for i, x in enumerate(level.shown)
        )
    return f"{PREFIX}: {figures}{_worst(level.together.worst)}"


def level_text(v: Verdict | None) -> str:
    """A verdict's level line ("" without a verdict or a level)."""
    return level_line(level_of(v)) if v is not None else ""


def levels_text(machines: Sequence[tuple[str, Verdict]], *, names: bool) -> str:
    """Several machines' level lines, a paragraph each, each named when ``names`` ("gpu-b ·
    Thunder/nvFuser kernel time: ...", as the comment names them)."""
    out = []
    for name, v in machines:
        text = level_text(v)
        if text:
            out.append(f"{escape_md(name, 100)} · {text}" if names else text)
    return "\n\n".join(out)

"""The calibration as text and JSON (pure): each figure with its count, its rate and its
one-sided 95% Clopper-Pearson bound (upper for false alarms, lower for detections)."""

from __future__ import annotations

import math
import textwrap
from typing import Any

from bot.decide.types import GUARD_TITLES
from bot.history.calibrate import AA_SIZE, HISTORIES, STEP_AT, Calibration, Rate

SCHEMA = "perfbot-history-calibration/1"


def _rate(r: Rate, bound: str) -> str:
    value = r.upper95 if bound == "upper" else r.lower95
    sign = "<=" if bound == "upper" else ">="
    return f"{r.hits}/{r.trials} {sign} {100 * value:.3g}%"


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, width=100, break_on_hyphens=False)


def _table(header: list[str], rows: list[list[str]], left: set[int]) -> list[str]:
    """Columns as wide as their widest cell; those in ``left`` left-aligned, the rest right."""
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        out = [
            c.ljust(w) if i in left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return ("  " + "  ".join(out)).rstrip()

    return [line(header), *(line(r) for r in rows)]


def report_text(c: Calibration) -> str:
    m = c.method
    lines = [
        *_wrap(
            f"History calibration on {c.machine}: windows of at most {m.window} commits a side, "
            f"confirmed with {m.min_after} commits after a change, seed {c.seed}. Every history "
            "is recorded runs in a drawn order. A rate's bound is one-sided 95% "
            "(Clopper-Pearson): upper for what should not happen, lower for what should."
        ),
        *_wrap(f"A/A runs ({len(c.stock)}): {', '.join(c.stock)}."),
        *_wrap(
            "Slower states: "
            + "; ".join(f"{name} ({', '.join(runs)})" for name, runs in c.states.items())
            + "."
        ),
        "",
        *_wrap(
            "Where nothing changed (anything confirmed is a false alarm): histories with a "
            "confirmed change, histories with a pending one, and (history, series) pairs that "
            "were evidence of a confirmed change (points and geometric means of the three "
            "timing guards)."
        ),
        *_table(
            [
                "history",
                "commits",
                "noise model",
                "confirmed",
                "pending",
                "series flagged",
            ],
            [
                [
                    q.name,
                    str(q.commits),
                    q.model,
                    _rate(q.confirmed, "upper"),
                    _rate(q.pending, "upper"),
                    _rate(q.series, "upper"),
                ]
                for q in c.quiet
            ],
            {0, 2},
        ),
        "",
        *_wrap(
            f"A real step: {'/'.join(map(str, STEP_AT))} stock commits (random, "
            f"{HISTORIES // len(STEP_AT)} histories each), then {m.min_after} runs of the slower "
            "state in a random order, the noise model fitted on the stock runs not in the "
            "history. Found: the guard confirmed regressed at that split; pending: so said "
            "with the first slower commit alone; elsewhere: a confirmed change at another split."
        ),
        *_table(
            ["state", "runs", "guard", "found", "pending at 1", "elsewhere", "size found"],
            [
                [
                    st.name,
                    str(st.runs),
                    GUARD_TITLES[st.guard],  # type: ignore[index]
                    _rate(st.found, "lower"),
                    _rate(st.pending, "lower"),
                    _rate(st.elsewhere, "upper"),
                    _sizes(st.sizes),
                ]
                for st in c.steps
            ],
            {0, 2, 6},
        ),
    ]
    return "\n".join(lines)


def _sizes(sizes: tuple[float, float]) -> str:
    lo, hi = sizes
    return "" if math.isnan(lo) else f"{100 * (lo - 1):+.1f}% to {100 * (hi - 1):+.1f}%"


def _rate_json(r: Rate) -> dict[str, Any]:
    return {"hits": r.hits, "trials": r.trials, "upper95": r.upper95, "lower95": r.lower95}


def to_json(c: Calibration) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "machine": c.machine,
        "method": {"window": c.method.window, "min_after": c.method.min_after},
        "seed": c.seed,
        "aa_size": AA_SIZE,
        "stock": list(c.stock),
        "states": {k: list(v) for k, v in c.states.items()},
        "quiet": [
            {
                "history": q.name,
                "model": q.model,
                "commits": q.commits,
                "confirmed": _rate_json(q.confirmed),
                "pending": _rate_json(q.pending),
                "series": _rate_json(q.series),
            }
            for q in c.quiet
        ],
        "steps": [
            {
                "state": st.name,
                "guard": st.guard,
                "runs": st.runs,
                "found": _rate_json(st.found),
                "pending": _rate_json(st.pending),
                "elsewhere": _rate_json(st.elsewhere),
                "sizes": None if math.isnan(st.sizes[0]) else list(st.sizes),
            }
            for st in c.steps
        ],
    }

"""The calibration as text and JSON (pure): rates with their one-sided 95% bounds beside the
targets docs/CALIBRATION.md holds the verdict to."""

from __future__ import annotations

import textwrap
from typing import Any

from bot.decide.calibrate import BROAD, GRID, LARGE_SHAPE, LONE, MIN_MODEL_RUNS, RELIABLE, Rate
from bot.decide.calibration import (
    SCHEMA,
    TARGETS,
    Calibration,
    FusionSide,
    Side,
    met,
    missed,
    provisional,
)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _row(label: str, r: Rate, goal: float | None, at_most: bool) -> str:
    """A row with its target met or MISSED by its 95% bound (bot/decide/calibration.py's
    :func:`met`, the rule the acceptance of a model checks too)."""
    bound = f"<= {_pct(r.upper95)}" if at_most else f">= {_pct(r.lower95)}"
    target, word = "", ""
    if goal is not None:
        target = f"{'<=' if at_most else '>='} {100 * goal:g}%"
        word = "met" if met(r, goal, at_most) else "MISSED"
    return (
        f"  {label:<46}{f'{r.hits}/{r.trials}':>9}{_pct(r.rate):>8}{bound:>11}"
        f"{f'{r.real_hits}/{r.real_trials}':>9}  {target:<7}{word}".rstrip()
    )


def _side_text(side: Side) -> list[str]:
    runs = "run" if side.a_side == 1 else "runs"
    choice = "ordered pairs of runs" if side.a_side == 1 else "choices of disjoint runs"
    lines = [
        f"{side.a_side} {runs} a side: {side.choices} {choice} x (recorded + {side.copies} "
        f"copies) = {side.choices * (1 + side.copies)} trials; models from {side.model_runs} runs",
        f"  {'':<46}{'trials':>9}{'rate':>8}{'95% bound':>11}{'recorded':>9}  target",
        _row(
            "A/A: false alarm (regressed or broken)", side.false_alarm, TARGETS["false_alarm"], True
        ),
        _row("A/A: unsure", side.unsure, None, True),
        _row('A/A: anything but "no change"', side.not_quiet, None, True),
        _row(f"+{100 * BROAD:g}% Thunder kernels at every point", side.thunder, RELIABLE, False),
        _row(f"+{100 * BROAD:g}% nvFuser fusion at every point", side.nvfuser, RELIABLE, False),
        _row('  ... of which read as "improved"', side.nvfuser_improved, 0.0, True),
    ]
    lines += [_row(f"lone +{100 * LONE:g}% at {k.label}", r, RELIABLE, False) for k, r in side.lone]
    if not side.searched:
        return lines
    grid = ", ".join(f"+{100 * g:g}%" for g in GRID)
    lines += [
        "",
        f"  Smallest lone change caught >= {100 * RELIABLE:g}% of the time (that point's Thunder "
        "kernel and ratio alone),",
        f"  tried {grid} in turn, each counted until out of reach:",
        f"    {'point':<36}{'threshold':>10}{'smallest':>10}{'caught':>9}  smaller changes",
    ]
    for key, threshold, o in side.searched:
        *below, (_, last) = o.tried
        smaller = ", ".join(f"+{100 * x:g}%: {r.hits}/{r.trials}" for x, r in below)
        best = f"+{100 * o.smallest:g}%" if o.smallest is not None else "none"
        lines.append(
            f"    {key.label:<36}{_pct(threshold):>10}{best:>10}"
            f"{f'{last.hits}/{last.trials}':>9}  {smaller}".rstrip()
        )
    return lines


def _fusions_text(fusions: tuple[FusionSide, ...]) -> list[str]:
    """Each fusion's own rates, and whether its verdicts are provisional (issue 39)."""
    runs = "run" if fusions[0].a_side == 1 else "runs"
    broad = f"+{100 * BROAD:g}%"
    intro = (
        f"Each fusion on its own, {fusions[0].a_side} {runs} a side: its points alone, its model "
        "fitted out of sample (false alarms with their upper 95% bound, changes caught with "
        "their lower one):"
    )
    lines = [
        *textwrap.wrap(intro, 100),
        f"  {'fusion':<24}{'A/A false alarms':>22}{f'{broad} Thunder caught':>24}"
        f"{f'{broad} nvFuser caught':>24}  judged",
    ]
    for f in fusions:
        cells = [
            f"{r.hits}/{r.trials} {'<=' if most else '>='} {_pct(r.upper95 if most else r.lower95)}"
            for r, most in ((f.false_alarm, True), (f.thunder, False), (f.nvfuser, False))
        ]
        judged = "provisional" if f.shortfalls() else "calibrated"
        lines.append(f"  {f.fusion:<24}{cells[0]:>22}{cells[1]:>24}{cells[2]:>24}  {judged}")
    others = {f.power_goal for f in fusions if f.power_goal != RELIABLE}
    rest = f", the others {'/'.join(f'{100 * g:g}%' for g in sorted(others))}" if others else ""
    lines += textwrap.wrap(
        f"  calibrated: false alarms <= {100 * TARGETS['false_alarm']:g}% and both changes "
        f"caught >= the fusion's goal (RMSNorm backward {100 * RELIABLE:g}%{rest}), all by "
        "their bounds; otherwise provisional.",
        100,
        subsequent_indent="  ",
    )
    return lines


def report_text(c: Calibration) -> str:
    calls = f", {c.calls_per_sample} calls per sample" if c.calls_per_sample else ""
    intro = (
        f"Out-of-sample calibration on {c.machine}{calls}, over {len(c.runs)} A/A runs "
        f"({', '.join(c.runs)}). Each trial's noise model is fitted on the runs that are neither "
        "its base nor its head; each choice of runs is judged as recorded and in bootstrap "
        "copies (rounds redrawn). 'recorded' counts the recorded runs alone: the copies of a "
        "choice share its between-run noise, so the bound over all trials is optimistic. The "
        "bound of a false-alarm rate is its upper one, of a detection rate its lower one "
        "(one-sided 95%, Clopper-Pearson); met or MISSED compares that bound with the target."
    )
    lines = textwrap.wrap(intro, 100)
    if c.left_out:
        lines += [
            "",
            *textwrap.wrap(
                "Left out, run on another stack, sampling or set of variants (a repeat without "
                f"the context baselines is one): {', '.join(c.left_out)}.",
                width=100,
                break_on_hyphens=False,
            ),
        ]
    for side in c.sides:
        lines += ["", *_side_text(side)]
    if c.skipped:
        need = "; ".join(f"{k} a side needs {2 * k + MIN_MODEL_RUNS} runs" for k in c.skipped)
        lines += ["", f"Not measured, too few runs: {need}."]
    if c.fusions:
        lines += ["", *_fusions_text(c.fusions)]
    return "\n".join(lines)


def _rate(r: Rate) -> dict[str, Any]:
    keys = ("hits", "trials", "rate", "upper95", "lower95", "real_hits", "real_trials", "stopped")
    return {k: getattr(r, k) for k in keys}


def to_json(c: Calibration) -> dict[str, Any]:
    def side(x: Side) -> dict[str, Any]:
        return {
            "runs_a_side": x.a_side,
            "choices": x.choices,
            "bootstrap_copies": x.copies,
            "model_runs": x.model_runs,
            "a_a": {
                "false_alarm": _rate(x.false_alarm),
                "unsure": _rate(x.unsure),
                "not_no_change": _rate(x.not_quiet),
            },
            "thunder_all_points": _rate(x.thunder),
            "nvfuser_all_points": _rate(x.nvfuser),
            "nvfuser_all_points_read_as_improved": _rate(x.nvfuser_improved),
            "lone_large_point": [{"point": k.label, **_rate(r)} for k, r in x.lone],
            "smallest_lone": [
                {
                    "point": k.label,
                    "threshold": threshold,
                    "smallest": o.smallest,
                    "tried": [{"shift": shift, **_rate(r)} for shift, r in o.tried],
                }
                for k, threshold, o in x.searched
            ],
        }

    return {
        "schema": SCHEMA,
        "machine": c.machine,
        "calls_per_sample": c.calls_per_sample,
        "runs": list(c.runs),
        "changes": {"all_points": BROAD, "lone_large_point": LONE, "grid": list(GRID)},
        "large_shape": LARGE_SHAPE,
        "targets": TARGETS,
        "sides": [side(x) for x in c.sides],
        "not_measured_runs_a_side": list(c.skipped),
        "left_out": list(c.left_out),
        # What keeps a model from being accepted (empty: every target met at every size).
        "missed": list(missed(c)),
        # Each fusion on its own (issue 39), and those whose verdicts are provisional, with why.
        "fusions": [
            {
                "fusion": f.fusion,
                "runs_a_side": f.a_side,
                "false_alarm": _rate(f.false_alarm),
                "thunder_all_points": _rate(f.thunder),
                "nvfuser_all_points": _rate(f.nvfuser),
                "power_goal": f.power_goal,
            }
            for f in c.fusions
        ],
        "provisional": {k: list(v) for k, v in provisional(c).items()},
    }

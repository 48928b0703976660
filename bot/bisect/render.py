"""A bisect's outcome as data: the JSON of ``--json``, and what the text and the issue section
are made from (pure).

Every build of the timeline is listed, measured or not, with its runs (results folder, key,
how long the measurement took) and, once decided, its class and its figures: each variant's
geometric-mean change against the known-good build in the ratio and kernel-time guards.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.bisect.classify import Figure
from bot.bisect.compare import Changes, changes
from bot.bisect.driver import Outcome, Plan, Row, measured_bracket
from bot.bisect.search import Found, Measure, Stuck, most_measurements
from bot.results.types import DEFAULT_FUSION

SCHEMA = "perfbot-bisect/1"


@dataclass(frozen=True)
class Bracket:
    """The last good and first bad builds the measurements show (the answer once adjacent)."""

    last_good: str | None
    first_bad: str | None


def bracket(outcome: Outcome) -> Bracket:
    step = outcome.step
    if isinstance(step, Found):
        return Bracket(step.last_good, step.first_bad)
    if isinstance(step, Stuck):  # a contradiction or a bad build that is not: no bracket
        return Bracket(step.last_good, step.first_bad)
    return Bracket(*measured_bracket(outcome.rows))


def what_changed(outcome: Outcome, plan: Plan) -> Changes | None:
    b = bracket(outcome)
    if b.last_good is None or b.first_bad is None:
        return None
    t = plan.timeline
    return changes(t.package, t.build(b.last_good), t.build(b.first_bad))


def reason(outcome: Outcome) -> str | None:
    step = outcome.step
    if isinstance(step, Stuck):
        return step.why
    if isinstance(step, Measure):
        return f"stopped before measuring {step.build}: {outcome.stopped}"
    return None


def gpu_seconds(outcome: Outcome) -> float:
    return sum(run.wall_s or 0.0 for row in outcome.rows for run in row.runs)


def _figure(f: Figure) -> dict[str, object]:
    return {
        "guard": f.guard,
        "variant": f.variant,
        "points": f.points,
        "state": f.state,
        "geomean": {"estimate": f.estimate, "low": f.low, "high": f.high},
    }


def _row(row: Row, plan: Plan) -> dict[str, object]:
    j = row.judged
    day = plan.timeline.builds[row.index].day
    return {
        "index": row.index,
        "build": row.name,
        "date": day.isoformat() if day else None,
        "class": "reference" if row.is_reference else row.cls,  # the words: "label"
        "label": row.label,
        "overall": j.overall if j else None,
        "alarming": list(j.alarming) if j else [],
        "why": j.why if j else None,
        "broken_points": j.broken_points if j else 0,
        "runs_a_side_to_settle": j.settle if j else None,
        "figures": [_figure(f) for f in j.figures] if j else [],
        "runs": [
            {
                "attempt": r.attempt,
                "results": r.results,
                "commit": r.commit,
                "machine": r.machine,
                "wall_s": r.wall_s,
                "measured_at": r.measured_at,
            }
            for r in row.runs
        ],
    }


def to_json(outcome: Outcome, plan: Plan, exit_code: int) -> dict[str, object]:
    b, step, change = bracket(outcome), outcome.step, what_changed(outcome, plan)
    return {
        "schema": SCHEMA,
        "status": outcome.status,
        "exit_code": exit_code,
        "package": plan.timeline.package,
        # A catalog fusion's answer names it; RMSNorm backward's is as before the catalog.
        **({} if plan.fusion == DEFAULT_FUSION else {"fusion": plan.fusion}),
        "good": plan.timeline.good.name,
        "bad": plan.timeline.bad.name,
        # Set only when the bisect named them; "bracket" is where the measurements stand.
        "first_bad": b.first_bad if outcome.status == "found" else None,
        "last_good": b.last_good if outcome.status == "found" else None,
        "bracket": {"last_good": b.last_good, "first_bad": b.first_bad},
        "reason": reason(outcome),
        "next": {"build": step.build, "why": step.why} if isinstance(step, Measure) else None,
        "changes": {"url": change.url, "text": change.text} if change else None,
        "points": list(plan.points),
        "variants": list(plan.variants),
        "machine": outcome.machine,
        "measurements": outcome.measurements,
        "measured_now": outcome.measured_now,
        "builds": len(outcome.rows),
        "most_measurements": most_measurements(len(outcome.rows)),
        "gpu_s": round(gpu_seconds(outcome), 1),
        "timeline": [_row(r, plan) for r in outcome.rows],
    }
